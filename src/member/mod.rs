//! The member side of the consumer group: the assignor hook a Kafka Streams member plugs into its
//! consumer ([`hook`]), the member's protocol as a sans-IO state machine (`machine`), the blocking
//! member over a [`client`](crate::client) connection that drives it ([`driver`]), its
//! configuration ([`config`], [`config_keys`]) and what it reports ([`events`]); the member of a
//! streams group ([`streams`]); and the task callbacks both call ([`tasks`]).

pub mod config;
pub mod config_keys;
pub mod driver;
pub mod events;
pub mod hook;
mod machine;
pub mod streams;
pub mod tasks;
#[cfg(test)]
mod machine_tests;

pub use config::MemberConfig;
pub use driver::GroupMember;
pub use events::{GenerationRecord, MemberError, MemberEvent, MemberRecord};
pub use streams::{StreamsEvent, StreamsGroupMember, StreamsMemberError, TopologySource};
pub use tasks::{MemberTasks, NoCallbacks, TaskCallbacks, TaskOffsetSums};
pub use hook::{Followup, OnAssignmentError, PartitionAssignorHook, ReceivedAssignment, StreamsMember};
