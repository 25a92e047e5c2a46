//! The sans-IO codec for Kafka Streams' rebalance metadata.
//!
//! | message | direction | versions | module |
//! |---|---|---|---|
//! | [`SubscriptionInfo`] | member → leader, JoinGroup `userData` | 1–11 | [`subscription_info`] |
//! | [`AssignmentInfo`] | leader → member, SyncGroup `userData` | 1–11 | [`assignment_info`] |
//! | [`SubscriptionEnvelope`] | `ConsumerProtocolSubscription` | 0–3 (+ higher read as 3) | [`envelope`] |
//! | [`AssignmentEnvelope`] | `ConsumerProtocolAssignment` | 0–3 (+ higher read as 3) | [`envelope`] |
//!
//! Decoders take untrusted bytes: they never panic, never allocate more than the remaining input
//! can justify, and fail with a [`DecodeError`] naming the field and byte offset. Where Java's
//! reader is lenient they accept the same input and report a [`Lenience`]
//! (`decode_reporting`). Decoded values keep wire order, duplicates and raw string bytes, so
//! re-encoding reproduces the input. Encoders refuse ([`EncodeError`]) what the chosen version
//! cannot carry instead of dropping it.
//!
//! [`Message`] holds any of the four, named by its [`Kind`]: one decode (with the lenience
//! report), encode and JSON view ([`json`]) for callers that take whichever kind they are given.

mod assignment_maps;
mod assignment_names;
mod assignment_parts;
pub(crate) mod codec;
mod error;
mod java_string;
pub mod offset_sums;
mod subscription_parts;
pub mod inspect;
pub mod json;
pub mod message;
mod types;

pub mod assignment_info;
pub mod envelope;
pub mod subscription_info;

pub use assignment_info::{AssignmentInfo, SharedHostMaps};
pub use message::{Kind, Message};
pub use assignment_parts::{HostMaps, PartitionsByHost};
pub use envelope::{
    AssignmentEnvelope, HIGHEST_ENVELOPE_VERSION, PROTOCOL_NAME, PROTOCOL_TYPE, SubscriptionEnvelope, TopicPartitions,
};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};
pub use java_string::{JavaString, MAX_MODIFIED_UTF8_LEN, MalformedModifiedUtf8};
pub use offset_sums::OffsetSums;
pub use subscription_info::{SubscriptionInfo, TaskStates};
pub use types::{
    AssignorError, EndpointError, HostInfo, LATEST_OFFSET, NextRebalance, ParseTaskIdError, ParseTopicPartitionError,
    ProcessId, TaskId, TopicPartition, UNKNOWN_END_OFFSET_SUM, UNKNOWN_OFFSET_SUM, end_offset_sum,
};

/// The newest `SubscriptionInfo`/`AssignmentInfo` version (Kafka 3.2 through 4.4).
pub const LATEST_SUPPORTED_VERSION: i32 = 11;
/// The oldest version a member can answer version probing with.
pub const EARLIEST_PROBEABLE_VERSION: i32 = 3;
/// The first version that carries named-topology task ids.
pub const MIN_NAMED_TOPOLOGY_VERSION: i32 = 10;
