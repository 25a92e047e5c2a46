//! The streams rebalance protocol's (KIP-1071) broker-side assignor: Kafka 4.4.0's
//! `StickyTaskAssignor` of `kafka-group-coordinator`, deciding exactly as the Java class does,
//! and the target assignment its coordinator keeps.
//!
//! | step | Kafka | file |
//! |---|---|---|
//! | the group and topology given | `GroupSpec`, `TopologyDescriber`, `AssignmentConfigs` | `input.rs` |
//! | working state, previous owners, quotas | `StickyTaskAssignor.initialize`, `LocalState` | `state.rs` |
//! | a process and its members' heap | `ProcessState` | `process.rs` |
//! | active tasks | `assignActive` | `active.rs` |
//! | standby tasks | `assignStandby` | `standby.rs` |
//! | the target assignment | `assign`, `TargetAssignmentBuilder.build`, `AssignmentRefiner` | `sticky.rs`, `output.rs` |
//!
//! Beside it, [`assign_optimized`] runs this crate's `optimized` assignor on the same input (a
//! client per process; `optimized.rs`) and deals each process's tasks over its members
//! (`members.rs`): not a parity assignor.
//!
//! Ties are Java's: members iterate in the order of the coordinator's `HashMap` of member ids,
//! processes in that of the assignor's `HashMap` of process ids, each process's members in that of
//! its own map, all replayed by the crate's JDK 17 `HashMap`; the queues of processes (by load)
//! and of a process's members (by task count) are `java.util.PriorityQueue` heaps step for step;
//! ids compare as Java `String`s. Since 4.4 a task's previous standby owners rank first, then
//! every member that reported an offset sum for it, highest first, in member order on ties.
//!
//! Warm-ups: 4.4.0's coordinator refines the target with `group.streams.num.warmup.replicas`
//! and `group.streams.acceptable.recovery.lag` only when warm-ups are enabled, and its refinement
//! returns the target as it is, so the target never carries warm-up tasks.

mod active;
mod balance;
mod counts;
mod extra;
mod input;
mod members;
mod moves;
mod optimized;
mod output;
mod process;
mod standby;
mod state;
mod sticky;
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;

pub use extra::ExtraCopies;
pub use input::{
    MAX_STREAMS_TASKS, StreamsAssignError, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology,
    StreamsTopology, TaskValues, Tasks,
};
pub use optimized::{OPTIMIZED_ASSIGNOR_NAME, PROBE_TAG, StreamsMemory, assign_optimized, is_prober, moves_waiting};
pub use output::{StreamsGroupAssignment, StreamsMemberAssignment};
pub use sticky::{STICKY_ASSIGNOR_NAME, assign_sticky};
