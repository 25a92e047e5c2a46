//! The member side of the consumer group: the assignor hook a Kafka Streams member plugs into its
//! consumer ([`hook`]), the member's protocol as a sans-IO state machine (`machine`), the blocking
//! member over a [`client`](crate::client) connection that drives it ([`driver`]), its
//! configuration ([`config`], [`config_keys`]) and what it reports ([`events`]).

pub mod config;
pub mod config_keys;
pub mod driver;
pub mod events;
pub mod hook;
mod machine;
#[cfg(test)]
mod machine_tests;

pub use config::MemberConfig;
pub use driver::GroupMember;
pub use events::{GenerationRecord, MemberError, MemberEvent, MemberRecord};
pub use hook::{Followup, OnAssignmentError, PartitionAssignorHook, ReceivedAssignment, StreamsMember};
