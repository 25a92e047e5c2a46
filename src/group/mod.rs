//! The member side of the consumer group: the assignor hook a Kafka Streams member plugs into its
//! consumer, the member's reading of the assignment it receives, and a blocking group member
//! over TCP that uses the hook.

pub mod admin;
pub mod config_keys;
pub mod connection;
pub mod describe;
pub mod hook;
pub mod layout;
mod machine;
#[cfg(test)]
mod machine_tests;
pub mod member;
pub mod member_config;
pub mod member_events;
pub mod net;
pub mod streams_group;
pub mod watch;

pub use hook::{Followup, OnAssignmentError, PartitionAssignorHook, ReceivedAssignment, StreamsMember};
pub use member::GroupMember;
pub use member_config::MemberConfig;
pub use member_events::{GenerationRecord, MemberError, MemberEvent, MemberRecord};
