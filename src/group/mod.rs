//! The member side of the consumer group: the assignor hook a Kafka Streams member plugs into its
//! consumer, and the member's reading of the assignment it receives.

pub mod hook;

pub use hook::{Followup, OnAssignmentError, PartitionAssignorHook, ReceivedAssignment, StreamsMember};
