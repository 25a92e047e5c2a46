//! The edges of a [`Graph`](super::Graph).

/// Names an edge of a [`Graph`](super::Graph): the value [`Graph::add_edge`](super::Graph::add_edge) returned. Edges are numbered from 0
/// in the order they were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeId(usize);

impl EdgeId {
    pub(crate) fn new(index: usize) -> Self {
        Self(index)
    }

    /// The edge's position in insertion order (0 for the first edge added).
    pub fn index(self) -> usize {
        self.0
    }
}

/// One edge of a [`Graph`](super::Graph) and the flow it currently carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Edge {
    /// Tail node.
    pub from: usize,
    /// Head node.
    pub to: usize,
    /// Most flow the edge can carry (≥ 0).
    pub capacity: i64,
    /// Cost per unit of flow (may be negative).
    pub cost: i64,
    /// Flow on the edge, `0..=capacity`.
    pub flow: i64,
}
