//! What the tests that script a broker share: response frames, request headers and the
//! `ApiVersions` answer a scripted broker gives. Each test binary that declares `mod support;`
//! compiles its own copy and uses part of it.
#![allow(dead_code)]

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::metadata_response::{MetadataResponsePartition, MetadataResponseTopic};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, HeaderVersion, Message, StrBytes, VersionRange, decode_request_header_from_buffer};

/// A response frame: size, header, body.
pub(crate) fn frame<R: Encodable + HeaderVersion>(response: &R, version: i16, correlation_id: i32) -> Vec<u8> {
    let mut buf = BytesMut::new();
    ResponseHeader::default().with_correlation_id(correlation_id).encode(&mut buf, R::header_version(version)).unwrap();
    response.encode(&mut buf, version).unwrap();
    let mut out = i32::try_from(buf.len()).unwrap().to_be_bytes().to_vec();
    out.extend_from_slice(&buf);
    out
}

/// A request frame's API key, version and correlation id.
pub(crate) fn request_header(body: Vec<u8>) -> (i16, i16, i32) {
    let mut buf = Bytes::from(body);
    let h = decode_request_header_from_buffer(&mut buf).unwrap();
    (h.request_api_key, h.request_api_version, h.correlation_id)
}

/// An `ApiVersions` answer offering each API at every version the `kafka-protocol` crate knows.
pub(crate) fn api_versions(keys: &[(ApiKey, VersionRange)]) -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_api_keys(
        keys.iter().map(|(k, v)| ApiVersion::default().with_api_key(*k as i16).with_min_version(v.min).with_max_version(v.max)).collect(),
    )
}

/// The APIs a group member and `describe` use (not CreateTopics: a broker without it makes the
/// leader check that the internal topics exist instead of creating them).
pub(crate) fn group_apis() -> Vec<(ApiKey, VersionRange)> {
    vec![
        (ApiKey::ApiVersions, ApiVersionsRequest::VERSIONS),
        (ApiKey::FindCoordinator, FindCoordinatorRequest::VERSIONS),
        (ApiKey::JoinGroup, JoinGroupRequest::VERSIONS),
        (ApiKey::SyncGroup, SyncGroupRequest::VERSIONS),
        (ApiKey::Heartbeat, HeartbeatRequest::VERSIONS),
        (ApiKey::LeaveGroup, LeaveGroupRequest::VERSIONS),
        (ApiKey::Metadata, MetadataRequest::VERSIONS),
        (ApiKey::ListOffsets, ListOffsetsRequest::VERSIONS),
        (ApiKey::DescribeGroups, DescribeGroupsRequest::VERSIONS),
    ]
}

/// A Metadata answer's topic: `partitions` partitions led by broker 0, or, without a count,
/// UNKNOWN_TOPIC_OR_PARTITION.
pub(crate) fn metadata_topic(name: &str, partitions: Option<i32>) -> MetadataResponseTopic {
    let topic = MetadataResponseTopic::default().with_name(Some(TopicName(StrBytes::from_string(name.to_owned()))));
    match partitions {
        Some(n) => topic.with_partitions(
            (0..n)
                .map(|p| MetadataResponsePartition::default().with_partition_index(p).with_leader_id(BrokerId(0)).with_replica_nodes(vec![BrokerId(0)]))
                .collect(),
        ),
        None => topic.with_error_code(3),
    }
}
