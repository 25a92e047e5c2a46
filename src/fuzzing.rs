//! Entry points for the fuzz targets in `fuzz/` (and the smoke test that runs them on every
//! `cargo test`). Each decodes arbitrary bytes; whatever decodes must re-encode, byte for byte
//! where the decoder reported no normalising lenience, and otherwise to bytes that decode to the
//! same value.

use crate::wire::{JavaString, Lenience};
use crate::wire::inspect;
use crate::wire::message::{Kind, Message};

/// Decodes `data` as `kind`; whatever decodes has a view (or a semantic error) and re-encodes.
fn round_trip(kind: Kind, data: &[u8]) {
    let Ok((message, lenience)) = Message::decode_reporting(kind, data) else { return };
    let _ = message.view(serde_json::Value::Null);
    let bytes = message.encode().expect("decoded values re-encode");
    if lenience.iter().all(Lenience::round_trips) {
        assert_eq!(bytes, data, "decode → encode changed the bytes");
    } else {
        assert_eq!(Message::decode(kind, &bytes).expect("re-decodes"), message, "canonical re-encoding decodes differently");
    }
}

/// `SubscriptionInfo` round trip and view.
pub fn subscription(data: &[u8]) {
    round_trip(Kind::Subscription, data);
}

/// `AssignmentInfo` round trip and view.
pub fn assignment(data: &[u8]) {
    round_trip(Kind::Assignment, data);
}

/// `ConsumerProtocolSubscription` round trip and view.
pub fn subscription_envelope(data: &[u8]) {
    round_trip(Kind::SubscriptionEnvelope, data);
}

/// `ConsumerProtocolAssignment` round trip and view.
pub fn assignment_envelope(data: &[u8]) {
    round_trip(Kind::AssignmentEnvelope, data);
}

/// Kind recognition and text parsing, as `kstreams-assignor decode` runs them.
pub fn inspect(data: &[u8]) {
    let _ = inspect::decode(data, None);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = inspect::parse_text(text);
    }
}

/// Modified UTF-8: what decodes re-encodes to the same units.
pub fn java_string(data: &[u8]) {
    if let Ok(s) = JavaString::from_modified_utf8(data) {
        let units = s.to_utf16();
        assert_eq!(JavaString::from_utf16(&units).to_utf16(), units);
        if s.is_canonical() {
            assert_eq!(JavaString::from_utf16(&units).as_bytes(), data);
        }
    }
}

/// A topology as `lead` and `assign` read it — the text `Topology#describe()` prints, or the
/// crate's JSON — then its tasks over small partition counts: parsing, validation and task
/// building fail with errors, never a panic. The first byte picks the partition counts.
pub fn topology(data: &[u8]) {
    use crate::leader::{ClusterMetadata, Tasks, Topology};
    let Some((&seed, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let json = serde_json::from_slice::<Topology>(rest).ok().filter(|t| t.validate().is_ok());
    for topology in [Topology::from_describe(&text, "app").ok(), json].into_iter().flatten() {
        let mut metadata = ClusterMetadata::new();
        let sources = topology.subtopologies.iter().flat_map(|s| &s.source_topics);
        for (i, topic) in sources.filter(|t| !topology.is_repartition_topic(t)).enumerate() {
            metadata = metadata.with_topic(topic.clone(), 1 + (usize::from(seed) + i) as i32 % 8);
        }
        let _ = Tasks::build(&topology, &metadata);
    }
}

/// A broker's response as [`Connection`](crate::client::connection::Connection) reads it: the
/// first byte picks the message (in [`RESPONSE_DECODERS`](crate::client::connection::RESPONSE_DECODERS)
/// order), the second its version, the rest is the frame body (header included). Whatever the
/// bytes, the layout check and the decoder fail with errors, never a panic, and nothing is
/// reserved from a count the frame cannot hold (libFuzzer's `-malloc_limit_mb` turns such a
/// reservation into a crash).
#[cfg(feature = "net")]
pub fn response(data: &[u8]) {
    use crate::client::connection::RESPONSE_DECODERS;
    let [which, version, body @ ..] = data else { return };
    let (_, decode) = RESPONSE_DECODERS[usize::from(*which) % RESPONSE_DECODERS.len()];
    let _ = decode(body.to_vec(), i16::from(version % 16));
}

/// A request from the JVM plugin (`plugin::Request`): whatever decodes re-encodes to bytes that
/// decode to the same request, and the session turns it into an assignment or an error, never a
/// panic.
pub fn plugin_request(data: &[u8]) {
    use crate::plugin::{Request, Session};
    let Ok(request) = Request::decode(data) else { return };
    assert_eq!(Request::decode(&request.encode()).expect("re-decodes"), request, "re-encoding decodes differently");
    let mut session = Session::new();
    if let Ok(response) = session.assign(&request) {
        let _ = response.encode();
    }
}

/// A request of the broker's streams assignor (`plugin::streams::StreamsRequest`): whatever
/// decodes re-encodes to bytes that decode to the same request, and the sessions turn it into an
/// assignment or an error, never a panic (topologies above 10,000 tasks are only decoded, to
/// keep each run short).
pub fn streams_request(data: &[u8]) {
    use crate::plugin::streams::{StreamsRequest, StreamsSessions};
    let Ok(request) = StreamsRequest::decode(data) else { return };
    assert_eq!(StreamsRequest::decode(&request.encode()).expect("re-decodes"), request, "re-encoding decodes differently");
    let tasks: u64 = request.topology.subtopologies.iter().map(|s| u64::from(s.partitions)).sum();
    if tasks <= 10_000 {
        if let Ok(response) = StreamsSessions::new().assign(&request) {
            let _ = response.encode();
        }
    }
}

/// A `StreamsGroupDescribe` body: the first byte picks the message (even: response, odd:
/// request) and its version (`byte / 2 % 2`), the rest is the body. Whatever decodes re-encodes
/// at that version to bytes that decode to the same value (unknown tagged fields are skipped and
/// any non-zero `bool` byte is true, so the bytes themselves may differ). The one refusal allowed
/// is a string whose invalid UTF-8, replaced as Java does, no longer fits the length limit.
#[cfg(feature = "net")]
pub fn streams_group_describe(data: &[u8]) {
    use crate::client::streams::{StreamsGroupDescribeRequest, StreamsGroupDescribeResponse};
    let Some((&which, body)) = data.split_first() else { return };
    let version = i16::from(which / 2 % 2);
    if which % 2 == 1 {
        let Ok(request) = StreamsGroupDescribeRequest::decode(body, version) else { return };
        let bytes = request.encode(version).expect("a decoded request re-encodes");
        assert_eq!(StreamsGroupDescribeRequest::decode(&bytes, version).expect("re-decodes"), request);
        return;
    }
    let Ok((response, lenience)) = StreamsGroupDescribeResponse::decode_reporting(body, version) else { return };
    let _ = response.to_json(version);
    match response.encode(version) {
        Ok(bytes) => assert_eq!(StreamsGroupDescribeResponse::decode(&bytes, version).expect("re-decodes"), response),
        Err(crate::wire::EncodeError::StringTooLong { .. }) if !lenience.is_empty() => {}
        Err(e) => panic!("a decoded response does not re-encode: {e}"),
    }
}

/// A `StreamsGroupHeartbeat` body, with the selector byte of [`streams_group_describe`]: the
/// same checks, over the heartbeat request and response.
#[cfg(feature = "net")]
pub fn streams_group_heartbeat(data: &[u8]) {
    use crate::client::streams::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};
    let Some((&which, body)) = data.split_first() else { return };
    let version = i16::from(which / 2 % 2);
    if which % 2 == 1 {
        let Ok(request) = StreamsGroupHeartbeatRequest::decode(body, version) else { return };
        let _ = request.to_json(version);
        match request.encode(version) {
            Ok(bytes) => assert_eq!(StreamsGroupHeartbeatRequest::decode(&bytes, version).expect("re-decodes"), request),
            Err(crate::wire::EncodeError::StringTooLong { .. }) => {}
            Err(e) => panic!("a decoded request does not re-encode: {e}"),
        }
        return;
    }
    let Ok((response, lenience)) = StreamsGroupHeartbeatResponse::decode_reporting(body, version) else { return };
    let _ = (response.to_json(version), response.recovery_lag(), response.group_ready());
    match response.encode(version) {
        Ok(bytes) => assert_eq!(StreamsGroupHeartbeatResponse::decode(&bytes, version).expect("re-decodes"), response),
        Err(crate::wire::EncodeError::StringTooLong { .. }) if !lenience.is_empty() => {}
        Err(e) => panic!("a decoded response does not re-encode: {e}"),
    }
}
