//! The member side of the consumer group: the assignor hook a Kafka Streams member plugs into its
//! consumer, the member's reading of the assignment it receives, and a blocking group member
//! over TCP that uses the hook.

pub mod admin;
pub mod connection;
pub mod describe;
pub mod hook;
pub mod layout;
pub mod member;

pub use hook::{Followup, OnAssignmentError, PartitionAssignorHook, ReceivedAssignment, StreamsMember};
pub use member::{GenerationRecord, GroupMember, MemberConfig, MemberError, MemberEvent, MemberRecord};
