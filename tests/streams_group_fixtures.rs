//! The `StreamsGroupDescribe` codec against the bytes Kafka 4.4's generated message classes write
//! (`fixtures/streams-group/`, made by `compat/java/streams-group-fixtures.sh`) and against what
//! a real broker answered (`fixtures/streams-group/broker/`): each decodes to the JSON Kafka's
//! `JsonConverter` writes, re-encodes to the same bytes, and refuses every truncation.

use std::path::Path;

use kstreams_assignor::client::streams::{StreamsGroupDescribeRequest, StreamsGroupDescribeResponse};
use serde_json::Value;

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/streams-group"))
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
        "request" => StreamsGroupDescribeRequest::decode(bytes, version)
            .map(|r| (r.to_json(version), r.encode(version).unwrap()))
            .map_err(|e| e.to_string()),
        "response" => StreamsGroupDescribeResponse::decode(bytes, version)
            .map(|r| (r.to_json(version), r.encode(version).unwrap()))
            .map_err(|e| e.to_string()),
        other => panic!("unknown message {other}"),
    }
}

#[test]
fn can_decode_every_java_fixture_to_kafkas_json_and_round_trip_it() {
    let all = fixtures();
    assert_eq!(all.len(), 12, "2 versions × (2 requests + 4 responses)");
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
fn refuses_a_v1_field_at_v0_and_versions_out_of_range() {
    let f = fixtures().into_iter().find(|f| f.file == "response/v1/rich.bin").unwrap();
    let r = StreamsGroupDescribeResponse::decode(&f.bytes, 1).unwrap();
    assert_eq!(r.groups[0].assignor_name.as_deref(), Some("sticky"));
    let err = r.encode(0).unwrap_err().to_string();
    assert_eq!(err, "StreamsGroupDescribeResponse field `TopologyDescription` is not carried by version 0 (since v1)");
    assert!(r.encode(2).is_err());
    let err = StreamsGroupDescribeResponse::decode(&f.bytes, 2).unwrap_err();
    assert_eq!(err.to_string(), "cannot decode StreamsGroupDescribeResponse: field `version` at byte 0: unsupported version 2: expected 0..=1");
}

/// What a Kafka 4.4 broker answered for a group that does not exist, captured by
/// `tests/real_broker.rs` (`streams_group_describe_of_a_missing_group_on_a_real_broker`).
#[test]
fn decodes_the_real_brokers_group_id_not_found() {
    let bytes = std::fs::read(dir().join("broker/v1/group-id-not-found.bin")).unwrap();
    let r = StreamsGroupDescribeResponse::decode(&bytes, 1).unwrap();
    assert_eq!(r.groups.len(), 1);
    let g = &r.groups[0];
    assert_eq!((g.group_id.as_str(), g.error_code), ("kstreams-assignor-no-such-group", 69));
    assert!(g.topology.is_none() && g.members.is_empty());
    assert_eq!(r.encode(1).unwrap(), bytes);
}

/// What a Kafka 4.4 broker answered for the word count of `compat/e2e/java` with three instances
/// on `group.protocol=streams`, captured by `compat/e2e/streams-describe.sh`
/// (`tests/streams_group_capture.rs`).
#[test]
fn decodes_the_real_brokers_answer_for_a_running_streams_group() {
    let bytes = std::fs::read(dir().join("broker/v1/word-count-3-members.bin")).unwrap();
    let r = StreamsGroupDescribeResponse::decode(&bytes, 1).unwrap();
    assert_eq!(r.encode(1).unwrap(), bytes);
    let g = &r.groups[0];
    assert_eq!((g.error_code, g.group_state.as_str(), g.members.len()), (0, "Stable", 3));
    assert_eq!(g.assignor_name.as_deref(), Some("sticky"));
    let mut active: Vec<(String, i32)> = g
        .members
        .iter()
        .flat_map(|m| m.assignment.active_tasks.iter().flat_map(|t| t.partitions.iter().map(|&p| (t.subtopology_id.clone(), p))))
        .collect();
    active.sort();
    let expected: Vec<(String, i32)> = ["0", "1"].iter().flat_map(|s| (0..4).map(|p| (s.to_string(), p))).collect();
    assert_eq!(active, expected, "each of the 8 tasks active once");
    assert!(g.members.iter().all(|m| m.member_epoch == g.assignment_epoch && m.assignment == m.target_assignment));
    let subs = g.topology.as_ref().unwrap().subtopologies.as_ref().unwrap();
    assert!(subs[1].state_changelog_topics[0].name.ends_with("-counts-changelog"));
    assert_eq!(r.to_json(1)["groups"][0]["members"].as_array().unwrap().len(), 3);
}
