//! Errors of the flow solvers.

/// Why a flow problem was refused or could not be solved.
///
/// Input errors ([`NodeOutOfRange`](Self::NodeOutOfRange) and the like) are reported before
/// anything changes. [`Infeasible`](Self::Infeasible) is reported after solving: the solver
/// documents what it left behind.
///
/// ```
/// use kstreams_assignor::flow::{FlowError, Graph};
///
/// let mut graph = Graph::new(2);
/// let err = graph.add_edge(0, 2, 1, 0).unwrap_err();
/// assert_eq!(err, FlowError::NodeOutOfRange { node: 2, node_count: 2 });
/// assert_eq!(err.to_string(), "node 2 is out of range for a graph of 2 node(s)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// A node id is not below the graph's node count.
    #[error("node {node} is out of range for a graph of {node_count} node(s)")]
    NodeOutOfRange {
        /// The id given.
        node: usize,
        /// The graph's node count.
        node_count: usize,
    },
    /// An edge id belongs to no edge of this graph.
    #[error("edge {edge} is out of range for a graph of {edge_count} edge(s)")]
    EdgeOutOfRange {
        /// The id given.
        edge: usize,
        /// The graph's edge count.
        edge_count: usize,
    },
    /// An edge capacity was negative.
    #[error("capacity {capacity} is negative")]
    NegativeCapacity {
        /// The capacity given.
        capacity: i64,
    },
    /// A cost was outside `-MAX_COST..=MAX_COST`.
    #[error("cost {cost} is outside ±{limit}")]
    CostOutOfRange {
        /// The cost given.
        cost: i64,
        /// The limit, [`MAX_COST`](super::MAX_COST).
        limit: i64,
    },
    /// A flow given for an edge was negative or above its capacity.
    #[error("flow {flow} on edge {edge} is outside 0..={capacity}")]
    FlowOutOfRange {
        /// The edge.
        edge: usize,
        /// The flow given.
        flow: i64,
        /// The edge's capacity.
        capacity: i64,
    },
    /// A required flow amount was negative.
    #[error("required flow {required} is negative")]
    NegativeRequirement {
        /// The amount given.
        required: i64,
    },
    /// Source and sink are the same node.
    #[error("source and sink are the same node {node}")]
    SourceIsSink {
        /// The node.
        node: usize,
    },
    /// The network cannot carry the required amount of flow.
    #[error("{required} unit(s) of flow required, but at most {max_flow} can be sent")]
    Infeasible {
        /// The amount asked for (for assignments: the number of tasks).
        required: i64,
        /// The most that can be sent (for assignments: the clients' total capacity).
        max_flow: i64,
    },
    /// A cost matrix's length is not its task count times its client count.
    #[error("cost matrix of {len} entries is not {tasks} task(s) × {clients} client(s)")]
    MatrixShape {
        /// Entries given.
        len: usize,
        /// Tasks (rows) declared.
        tasks: usize,
        /// Clients (columns) declared.
        clients: usize,
    },
    /// A per-client list (capacities) does not have one entry per client.
    #[error("{len} capacities given for {clients} client(s)")]
    CapacityCount {
        /// Entries given.
        len: usize,
        /// Clients in the cost matrix.
        clients: usize,
    },
    /// A per-task list (the current assignment) does not have one entry per task.
    #[error("{len} current clients given for {tasks} task(s)")]
    AssignmentLength {
        /// Entries given.
        len: usize,
        /// Tasks in the cost matrix.
        tasks: usize,
    },
    /// A task is assigned to a client index that does not exist.
    #[error("task {task} is on client {client}, but there are {clients} client(s)")]
    ClientOutOfRange {
        /// The task.
        task: usize,
        /// The client index given.
        client: usize,
        /// Clients in the cost matrix.
        clients: usize,
    },
    /// A task of a [`SparseCosts`](super::SparseCosts) was given a different number of class
    /// costs than there are classes.
    #[error("task {task} has {len} class cost(s), but there are {classes} class(es)")]
    ClassCostCount {
        /// The task.
        task: usize,
        /// Class costs given.
        len: usize,
        /// Classes declared.
        classes: usize,
    },
    /// A client's class is not below the number of classes.
    #[error("client {client} is in class {class}, but there are {classes} class(es)")]
    ClassOutOfRange {
        /// The client.
        client: usize,
        /// The class given.
        class: usize,
        /// Classes declared.
        classes: usize,
    },
    /// A task's candidate clients are not in increasing order, repeat one, or name a client that
    /// does not exist.
    #[error("task {task}: candidate client {client} is out of order or out of range ({clients} client(s))")]
    CandidateOrder {
        /// The task.
        task: usize,
        /// The offending client index.
        client: usize,
        /// Clients declared.
        clients: usize,
    },
    /// A candidate costs more than its class cost: the sparse solvers need every listed client
    /// to be at most as dear as an unlisted client of its class.
    #[error("task {task} costs {cost} on candidate client {client}, more than its class cost {class_cost}")]
    CandidateAboveClassCost {
        /// The task.
        task: usize,
        /// The candidate client.
        client: usize,
        /// The candidate's cost.
        cost: i32,
        /// The cost of the task on an unlisted client of that class.
        class_cost: i32,
    },
    /// An amount of flow, a node's imbalance or a total cost does not fit in an `i64`.
    #[error("a flow amount or cost does not fit in an i64")]
    Overflow,
}
