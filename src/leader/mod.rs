//! The group leader's work between the wire and the task assignors, as Kafka Streams'
//! `StreamsPartitionAssignor` (kafka-streams 4.4.0) does it. Pure functions, no I/O.
//!
//! | step | Kafka | here | module |
//! |---|---|---|---|
//! | the topology the leader reasons about | `InternalTopologyBuilder.subtopologyToTopicsInfo`, `copartitionGroups` | [`Topology`] (JSON, builders) | [`topology`] |
//! | … read from `Topology#describe()` text | `TopologyDescription` | [`Topology::from_describe`] | [`topology_text`] |
//! | repartition topic counts, copartitioning, tasks, changelogs | `RepartitionTopics`, `CopartitionedTopicsEnforcer`, `PartitionGrouper`, `ChangelogTopics` | [`Tasks::build`] | [`tasks`] |
//! | one client's tasks over its threads | `assignTasksToThreads` | [`assign_tasks_to_threads`] | [`threads`] |
//! | each consumer's partitions, task list, held-back tasks, follow-up | `addClientAssignments` | [`build_member_assignments`] | [`threads`] |
//! | the topology checked against the members' subscriptions | (none: Kafka's leader has the application's own) | [`check_topology`] | [`topology_check`] |
//! | the whole leader step: subscriptions in, assignments out | `assign` | [`assign()`] | [`assign`](mod@assign) |
//!
//! Between [`Tasks::build`] and [`assign_tasks_to_threads`] sits the task assignor
//! ([`engine`](crate::engine)), which decides the tasks of each client.
//!
//! Only unnamed topologies are modelled (no named topologies, no pattern subscriptions).
//!
//! ```
//! use kstreams_assignor::leader::{assign_tasks_to_threads, ClientTasks, ClusterMetadata, Tasks, Topology};
//!
//! let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
//! let topology = Topology::from_describe(&text, "wc").unwrap();
//! let tasks = Tasks::build(&topology, &ClusterMetadata::new().with_topic("text-lines", 4)).unwrap();
//! assert_eq!(tasks.repartition_topic_partitions["wc-words-repartition"], 4);
//! assert_eq!(tasks.stateful_tasks().count(), 4);
//!
//! // One client with two threads that got every task.
//! let lags = tasks.stateful_tasks().map(|t| (t.clone(), 0));
//! let client = ClientTasks::new(["t-1", "t-2"]).with_active(tasks.partitions_for_task.keys().cloned()).with_lags(lags);
//! let threads = assign_tasks_to_threads(&client).unwrap();
//! assert!(threads.0.values().all(|t| t.active.len() == 4));
//! ```

mod aggregate;
pub mod assign;
pub mod config_keys;
mod encode;
mod engine_input;
pub mod input;
mod in_turn;
mod java_order;
pub mod output;
pub mod replica_kinds;
pub mod tasks;
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;
pub mod threads;
pub mod topology;
pub mod topology_check;
pub mod topology_text;

pub use aggregate::FUTURE_PROCESS_ID;
pub use assign::assign;
pub use encode::error_info;
pub use output::{AssignmentReport, GroupAssignment, LeaderError};
pub use input::{ChangelogEndOffsets, JoinMember, LeaderConfig, LeaderInput, RebalanceSnapshot};
pub use topology_text::TopologyTextError;
pub use replica_kinds::ReplicaKinds;
pub use tasks::{ClusterMetadata, TaskError, Tasks};
pub use threads::{
    ClientHistory, ClientTasks, MemberAssignment, ThreadAssignment, ThreadError, ThreadTasks, assign_tasks_to_threads,
    build_member_assignments,
};
pub use topology::{RepartitionTopic, StateStore, Subtopology, Topology, TopologyError};
pub use topology_check::{TopologyMismatch, check_topology};
