//! Min-cost flow, for rack-aware task assignment (KIP-925).
//!
//! Kafka Streams places tasks on clients by solving a min-cost flow problem: source → task
//! (capacity 1), task → client (capacity 1, cost = cross-rack traffic plus a cost for moving the
//! task), client → sink (capacity = the client's task count). It starts from the current
//! assignment, a feasible flow, and cancels negative cycles found with Bellman–Ford, which takes
//! seconds to minutes on large groups. This module reaches the same optimal cost, with the same
//! per-client counts, by successive shortest paths:
//!
//! | solver | problem | use |
//! |---|---|---|
//! | [`Graph::min_cost_flow`] | send *k* units source → sink at least cost | general networks |
//! | [`Graph::min_cost_max_flow`] | the cheapest maximum flow | `balance_subtopology`'s graph |
//! | [`Graph::min_cost_circulation`] | optimise a given flow, every node's net flow kept | `min_traffic` from the current assignment |
//! | [`assign`] | tasks → clients with capacities, from scratch | the assignment graph, fast |
//! | [`reassign`] | tasks → clients keeping each client's count | `min_traffic`, fast |
//! | [`assign_sparse`] | [`assign`] where most of a task's costs are one per client class | the optimized assignor's target |
//!
//! [`assign`] and [`reassign`] solve exactly the assignment graph above, working on the clients
//! only; on 10,000 tasks × 100 clients (a million task → client edges) they take milliseconds.
//! [`Graph`] takes any network, with negative costs and cycles.
//!
//! Every solver is deterministic: ties are broken by lowest id, as each one documents.
//!
//! ```
//! use kstreams_assignor::flow::{CostMatrix, reassign};
//!
//! // Cost: 10 per input partition with no replica on the client's rack, plus 1 to move the task.
//! let rack_of_client = ["a", "b"];
//! let replica_racks = [["b"], ["a"], ["b"]]; // one input partition per task
//! let current = [0, 1, 1];
//! let costs = CostMatrix::from_fn(3, 2, |t, c| {
//!     let traffic = if replica_racks[t].contains(&rack_of_client[c]) { 0 } else { 10 };
//!     traffic + if current[t] == c { 0 } else { 1 }
//! })?;
//! let best = reassign(&costs, &current)?;
//! assert_eq!(best.clients, [1, 0, 1]); // tasks 0 and 1 swap; counts stay 1 and 2
//! assert_eq!(best.cost, 2);
//! # Ok::<(), kstreams_assignor::flow::FlowError>(())
//! ```

mod matching;
mod edge;
mod error;
mod graph;
mod residual;
mod sparse;

pub use edge::{Edge, EdgeId};
pub use error::FlowError;
pub use graph::{Graph, Solution};
pub(crate) use graph::Network;
pub use matching::{CostMatrix, MAX_TASKS, Matching, assign, reassign};
pub use sparse::{SparseCosts, assign_sparse};

/// Largest cost magnitude accepted per unit of flow: 2⁴⁰. Keeping costs this small keeps every
/// path length and potential the solvers compute well inside `i64`.
pub const MAX_COST: i64 = 1 << 40;
