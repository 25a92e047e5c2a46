//! The `StreamsGroupHeartbeat` codec against the bytes Kafka 4.4's generated message classes write
//! (`fixtures/streams-heartbeat/`, made by `compat/java/streams-heartbeat-fixtures.sh`): each decodes to
//! the JSON Kafka's `JsonConverter` writes, re-encodes to the same bytes, and refuses every truncation.

use std::path::Path;

use kstreams_assignor::client::streams::{StatusCode, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};
use serde_json::Value;

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/streams-heartbeat"))
}

struct Fixture {
    file: String,
    message: String,
    version: i16,
    case: String,
    bytes: Vec<u8>,
    expected: Value,
}

fn fixtures() -> Vec<Fixture> {
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir().join("manifest.json")).unwrap()).unwrap();
    manifest["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap().to_owned();
            Fixture {
                bytes: std::fs::read(dir().join(&file)).unwrap(),
                file,
                message: f["message"].as_str().unwrap().to_owned(),
                version: f["version"].as_i64().unwrap() as i16,
                case: f["case"].as_str().unwrap().to_owned(),
                expected: f["expected"].clone(),
            }
        })
        .collect()
}

/// Decodes as the fixture's message; the JSON and the re-encoded bytes.
fn decode(message: &str, bytes: &[u8], version: i16) -> Result<(Value, Vec<u8>), String> {
    match message {
        "request" => StreamsGroupHeartbeatRequest::decode(bytes, version)
            .map(|r| (r.to_json(version), r.encode(version).unwrap()))
            .map_err(|e| e.to_string()),
        "response" => StreamsGroupHeartbeatResponse::decode(bytes, version)
            .map(|r| (r.to_json(version), r.encode(version).unwrap()))
            .map_err(|e| e.to_string()),
        other => panic!("unknown message {other}"),
    }
}

#[test]
fn can_decode_every_java_fixture_to_kafkas_json_and_round_trip_it() {
    let all = fixtures();
    assert_eq!(all.len(), 16, "2 versions × (4 requests + 4 responses)");
    for f in &all {
        let (json, again) = decode(&f.message, &f.bytes, f.version).unwrap_or_else(|e| panic!("{}: {e}", f.file));
        assert_eq!(json, f.expected, "{}", f.file);
        if f.case == "unknown-tagged-fields" {
            // Unknown tagged fields are skipped: the value is the same, the bytes shorter.
            assert!(again.len() < f.bytes.len(), "{}", f.file);
            assert_eq!(decode(&f.message, &again, f.version).unwrap().0, f.expected, "{}", f.file);
        } else {
            assert_eq!(again, f.bytes, "{}: re-encoded bytes", f.file);
        }
    }
}

#[test]
fn refuses_every_truncation_and_a_trailing_byte_of_every_fixture() {
    for f in fixtures() {
        for n in 0..f.bytes.len() {
            assert!(decode(&f.message, &f.bytes[..n], f.version).is_err(), "{} cut to {n} bytes", f.file);
        }
        let mut longer = f.bytes.clone();
        longer.push(0);
        let err = decode(&f.message, &longer, f.version).unwrap_err();
        assert!(err.contains("1 byte(s) after the end of the message"), "{}: {err}", f.file);
    }
}

#[test]
fn reads_the_settings_and_statuses_at_each_version() {
    let at = |v: i16| {
        let f = fixtures().into_iter().find(|f| f.file == format!("response/v{v}/assignment.bin")).unwrap();
        StreamsGroupHeartbeatResponse::decode(&f.bytes, v).unwrap()
    };
    // v0 carries the lag as the legacy int32, v1 as an int64 above i32::MAX.
    assert_eq!(at(0).recovery_lag(), Some(10_000));
    assert_eq!(at(1).recovery_lag(), Some(5_000_000_000));
    let r = at(1);
    assert!(r.topology_description_required);
    assert!(!r.group_ready(), "missing internal topics: the group is not ready");
    assert_eq!(StatusCode::from_code(r.status.as_ref().unwrap()[0].status_code), StatusCode::MissingInternalTopics);
    let err = r.encode(0).unwrap_err().to_string();
    assert_eq!(err, "StreamsGroupHeartbeatResponse field `TopologyDescriptionRequired` is not carried by version 0 (since v1)");
    assert!(r.encode(2).is_err());
    let err = StreamsGroupHeartbeatResponse::decode(&[0; 40], 2).unwrap_err();
    assert_eq!(err.to_string(), "cannot decode StreamsGroupHeartbeatResponse: field `version` at byte 0: unsupported version 2: expected 0..=1");
}

#[test]
fn reads_the_join_a_java_member_sends() {
    let f = fixtures().into_iter().find(|f| f.file == "request/v1/join.bin").unwrap();
    let r = StreamsGroupHeartbeatRequest::decode(&f.bytes, 1).unwrap();
    let topology = r.topology.as_ref().unwrap();
    assert_eq!(topology.subtopologies[0].copartition_groups[0].source_topics, [0, 1]);
    assert_eq!(topology.subtopologies[1].source_topic_regex, ["audit-.*"]);
    assert_eq!(r.user_endpoint.as_ref().unwrap().port, 65535);
    assert_eq!(r.task_offsets.as_ref().unwrap()[1].offset, i64::MAX);
    assert_eq!(r.active_tasks.as_deref(), Some(&[][..]));
}
