//! The messages of Kafka's streams groups (KIP-1071, `group.protocol=streams`) that the
//! `kafka-protocol` crate does not have: `StreamsGroupHeartbeat` (API key 88) and
//! `StreamsGroupDescribe` (API key 89), written from Kafka's message definitions
//! (`StreamsGroupHeartbeatRequest.json`, `StreamsGroupDescribeResponse.json`, …). The member
//! over the heartbeat is [`member::streams`](crate::member::streams). The `describe` of a streams group over them is
//! [`views::streams`](crate::views::streams).
//!
//! | message | versions | module |
//! |---|---|---|
//! | [`StreamsGroupHeartbeatRequest`] | 0–1 | [`heartbeat_request`] |
//! | [`StreamsGroupHeartbeatResponse`] | 0–1 | [`heartbeat_response`] |
//! | [`StreamsGroupDescribeRequest`] | 0–1 | [`describe_request`] |
//! | [`StreamsGroupDescribeResponse`] | 0–1 | [`describe_response`] |
//!
//! Both are flexible from v0 (compact strings and arrays, tagged fields). The codec has the
//! guarantees of [`wire`](crate::wire): decoders take untrusted bytes, never panic, refuse a
//! count the bytes left cannot hold before reserving anything, and fail with a
//! [`DecodeError`] naming the field and its byte offset; a response
//! must use every byte. Encoders refuse a field the version cannot carry. Unknown tagged fields
//! are skipped (none is defined at v0–v1).
//!
//! The two messages have their own version ranges on a broker: [`API_KEY`] and
//! [`HEARTBEAT_API_KEY`].

pub(crate) mod compact;
pub mod describe_request;
pub mod describe_response;
pub mod heartbeat_request;
pub mod heartbeat_response;
pub mod topology_description;

pub use describe_request::StreamsGroupDescribeRequest;
pub use describe_response::{
    Assignment, DescribedGroup, Endpoint, KeyValue, Member, StreamsGroupDescribeResponse, Subtopology, TaskIds, TaskOffset,
    TopicInfo, Topology,
};
pub use heartbeat_request::{CopartitionGroup, HeartbeatSubtopology, HeartbeatTopology, StreamsGroupHeartbeatRequest};
pub use heartbeat_response::{EndpointToPartitions, Status, StatusCode, StreamsGroupHeartbeatResponse, TopicPartitions};
pub use topology_description::{
    TopologyDescription, TopologyDescriptionGlobalStore, TopologyDescriptionNode, TopologyDescriptionSubtopology,
};

use crate::wire::codec::Reader;
use crate::wire::{DecodeError, DecodeErrorKind};

/// `StreamsGroupDescribe`'s API key.
pub const API_KEY: i16 = 89;
/// `StreamsGroupHeartbeat`'s API key (its versions, headers and guarantees are those of
/// `StreamsGroupDescribe`: 0–1, flexible).
pub const HEARTBEAT_API_KEY: i16 = 88;
/// The oldest version this codec reads and writes.
pub const MIN_VERSION: i16 = 0;
/// The newest version this codec reads and writes (Kafka 4.4).
pub const MAX_VERSION: i16 = 1;
/// The request header version (flexible: v2) at every version.
pub const REQUEST_HEADER_VERSION: i16 = 2;
/// The response header version (flexible: v1) at every version.
pub const RESPONSE_HEADER_VERSION: i16 = 1;

/// `Err((min, max))` when `version` is outside [`MIN_VERSION`]`..=`[`MAX_VERSION`].
fn check_version(version: i16) -> Result<(), (i32, i32)> {
    if (MIN_VERSION..=MAX_VERSION).contains(&version) {
        return Ok(());
    }
    Err((MIN_VERSION.into(), MAX_VERSION.into()))
}

/// Refuses bytes left after the message.
fn refuse_trailing(r: &Reader<'_>) -> Result<(), DecodeError> {
    match r.remaining() {
        0 => Ok(()),
        len => Err(r.error_at(r.position(), "end", DecodeErrorKind::TrailingBytes { len })),
    }
}
