//! `describe` of a streams group (KIP-1071) against a scripted broker: the group's kind from
//! `ListGroups`, `StreamsGroupDescribe` (API key 89, encoded with the crate's own codec), the
//! text in 100 columns and the JSON with Kafka's field names; and each refusal with its message
//! and exit code: a group that does not exist, a consumer group, a broker without API key 89,
//! an unauthorized describe.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::Arc;

mod support;

use support::frame;

use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::describe_groups_response::DescribedGroup as ClassicGroup;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Message, StrBytes};
use kstreams_assignor::client::connection::read_frame;
use kstreams_assignor::client::streams::{
    Assignment, DescribedGroup, Endpoint, KeyValue, Member, StreamsGroupDescribeResponse, Subtopology, TaskIds, TaskOffset,
    TopicInfo, Topology,
};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_kstreams-assignor");

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_owned())
}

/// What the scripted coordinator answers.
#[derive(Clone, Default)]
struct Script {
    /// The group's `GroupType` in ListGroups v5 (`None`: not listed).
    listed_type: Option<&'static str>,
    /// Whether ApiVersions lists ListGroups and StreamsGroupDescribe.
    with_list_groups: bool,
    /// API key 89's range, if listed.
    streams_versions: Option<(i16, i16)>,
    /// The StreamsGroupDescribe answer's group.
    streams_group: Option<DescribedGroup>,
    /// The DescribeGroups answer's state.
    classic_state: &'static str,
}

fn answer(script: &Script, port: u16, key: i16, v: i16, id: i32) -> Vec<u8> {
    match key {
        18 => {
            let mut keys = vec![
                (ApiKey::FindCoordinator as i16, FindCoordinatorRequest::VERSIONS.min, FindCoordinatorRequest::VERSIONS.max),
                (ApiKey::DescribeGroups as i16, DescribeGroupsRequest::VERSIONS.min, DescribeGroupsRequest::VERSIONS.max),
            ];
            if script.with_list_groups {
                keys.push((ApiKey::ListGroups as i16, 0, 5));
            }
            if let Some((min, max)) = script.streams_versions {
                keys.push((89, min, max));
            }
            let r = ApiVersionsResponse::default().with_api_keys(
                keys.into_iter().map(|(k, a, b)| ApiVersion::default().with_api_key(k).with_min_version(a).with_max_version(b)).collect(),
            );
            frame(&r, v, id)
        }
        10 => {
            let c = Coordinator::default().with_node_id(BrokerId(0)).with_host(s("127.0.0.1")).with_port(port.into());
            frame(&FindCoordinatorResponse::default().with_coordinators(vec![c]), v, id)
        }
        16 => {
            let groups = script
                .listed_type
                .map(|t| ListedGroup::default().with_group_id(GroupId(s("wc"))).with_group_state(s("Stable")).with_group_type(s(t)));
            frame(&ListGroupsResponse::default().with_groups(groups.into_iter().collect()), v, id)
        }
        15 => {
            let g = ClassicGroup::default().with_group_id(GroupId(s("wc"))).with_group_state(s(script.classic_state));
            frame(&DescribeGroupsResponse::default().with_groups(vec![g]), v, id)
        }
        89 => {
            let mut r = StreamsGroupDescribeResponse::default();
            r.groups = script.streams_group.clone().into_iter().collect();
            let mut out = id.to_be_bytes().to_vec();
            out.push(0); // response header v1: no tagged fields
            out.extend(r.encode(v).unwrap());
            let mut framed = i32::try_from(out.len()).unwrap().to_be_bytes().to_vec();
            framed.extend(out);
            framed
        }
        other => panic!("unexpected API key {other}"),
    }
}

/// A coordinator on a fresh port that answers as `script` says.
fn start(script: Script) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = Arc::new(script);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let script = script.clone();
            std::thread::spawn(move || {
                while let Ok(body) = read_frame(&mut stream) {
                    let key = i16::from_be_bytes([body[0], body[1]]);
                    let v = i16::from_be_bytes([body[2], body[3]]);
                    let id = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                    if stream.write_all(&answer(&script, port, key, v, id)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("127.0.0.1:{port}")
}

fn describe(address: &str, extra: &[&str]) -> Output {
    Command::new(BIN).args(["describe", "--bootstrap", address, "--group", "wc"]).args(extra).output().unwrap()
}

fn tasks(sub: &str, partitions: &[i32]) -> TaskIds {
    let mut t = TaskIds::default();
    t.subtopology_id = sub.into();
    t.partitions = partitions.to_vec();
    t
}

fn offset(sub: &str, partition: i32, offset: i64) -> TaskOffset {
    let mut t = TaskOffset::default();
    t.subtopology_id = sub.into();
    t.partition = partition;
    t.offset = offset;
    t
}

/// A group of two members: `m-a` runs its target, `m-b` still warms up 1_1 for its target.
fn streams_group() -> DescribedGroup {
    let mut a = Member::default();
    a.member_id = "m-a".into();
    a.member_epoch = 12;
    a.process_id = "6c3a5f2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b".into();
    a.instance_id = Some("wc-1".into());
    a.rack_id = Some("rack-a".into());
    a.client_host = "/10.0.0.7".into();
    let mut endpoint = Endpoint::default();
    endpoint.host = "wc-1.example".into();
    endpoint.port = 8080;
    a.user_endpoint = Some(endpoint);
    let mut tag = KeyValue::default();
    tag.key = "zone".into();
    tag.value = "eu-1a".into();
    a.client_tags = vec![tag];
    let mut current = Assignment::default();
    current.active_tasks = vec![tasks("0", &[0, 1]), tasks("1", &[0])];
    a.assignment = current.clone();
    a.target_assignment = current;
    let mut b = Member::default();
    b.member_id = "m-b".into();
    b.member_epoch = 11;
    b.process_id = "p-b".into();
    b.client_host = "/10.0.0.8".into();
    b.assignment.warmup_tasks = vec![tasks("1", &[1])];
    b.target_assignment.active_tasks = vec![tasks("0", &[2])];
    b.target_assignment.warmup_tasks = vec![tasks("1", &[1])];
    b.task_offsets = vec![offset("1", 1, 400)];
    b.task_end_offsets = vec![offset("1", 1, 1000)];
    let mut changelog = TopicInfo::default();
    changelog.name = "wc-counts-changelog".into();
    let mut repartition = TopicInfo::default();
    repartition.name = "wc-counts-repartition".into();
    repartition.partitions = 4;
    let mut s0 = Subtopology::default();
    s0.subtopology_id = "0".into();
    s0.source_topics = vec!["words".into()];
    s0.repartition_sink_topics = vec!["wc-counts-repartition".into()];
    let mut s1 = Subtopology::default();
    s1.subtopology_id = "1".into();
    s1.source_topics = vec!["wc-counts-repartition".into()];
    s1.repartition_source_topics = vec![repartition];
    s1.state_changelog_topics = vec![changelog];
    let mut topology = Topology::default();
    topology.epoch = 0;
    topology.subtopologies = Some(vec![s0, s1]);
    let mut g = DescribedGroup::default();
    g.group_id = "wc".into();
    g.group_state = "Reconciling".into();
    g.group_epoch = 12;
    g.assignment_epoch = 12;
    g.topology = Some(topology);
    g.members = vec![b, a];
    g.assignor_name = Some("sticky".into());
    g
}

fn error_group(code: i16, message: &str) -> DescribedGroup {
    let mut g = DescribedGroup::default();
    g.group_id = "wc".into();
    g.error_code = code;
    g.error_message = Some(message.into());
    g
}

#[test]
fn describe_shows_a_streams_group_with_current_and_target_assignments_in_100_columns() {
    let address = start(Script {
        listed_type: Some("streams"),
        with_list_groups: true,
        streams_versions: Some((0, 1)),
        streams_group: Some(streams_group()),
        ..Script::default()
    });
    let out = describe(&address, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{} columns: {line}", line.chars().count());
    }
    let expected = [
        "streams group wc: state Reconciling, 2 member(s)",
        "group epoch 12, target assignment epoch 12, assignor sticky",
        &format!("StreamsGroupDescribe v1 from {address}"),
        "1 member(s) below the target assignment epoch 12: still moving to their target assignment",
        "MEMBER                                PROCESS   EPOCH  ACTIVE  STANDBY  WARM-UP  CLIENT HOST",
        "m-a                                   6c3a5f2…     12       3        0        0  /10.0.0.7",
        "m-b                                   p-b          11       0        0        1  /10.0.0.8",
        "member m-a",
        "  process                     6c3a5f2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b",
        "  instance, rack              wc-1, rack-a",
        "  endpoint                    wc-1.example:8080",
        "  client tags                 zone=eu-1a",
        "  epochs                      member 12, target assignment 12, topology 0",
        "  active (3)                  0_0 0_1 1_0",
        "  warm-up (0)                 -",
        "  target assignment           the same",
        "  lag, records                none reported",
        "  warm-up (1)                 1_1",
        "  target active (1)           0_2",
        "  target warm-up (1)          1_1",
        "  lag (reported), records     1_1 600",
        "topology epoch 0, 2 subtopology(ies)",
        "subtopology 1",
        "  repartition source topics   wc-counts-repartition (4 partitions)",
        "  changelog topics            wc-counts-changelog",
    ];
    for line in expected {
        assert!(text.lines().any(|l| l == line), "missing line `{line}` in\n{text}");
    }
    // Members sorted by id.
    assert!(text.find("member m-a").unwrap() < text.find("member m-b").unwrap());
}

#[test]
fn describe_json_of_a_streams_group_uses_kafkas_field_names() {
    let address = start(Script {
        listed_type: Some("streams"),
        with_list_groups: true,
        streams_versions: Some((0, 0)),
        streams_group: Some(streams_group()).map(|mut g| {
            g.assignor_name = None;
            g
        }),
        ..Script::default()
    });
    let out = describe(&address, &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["groupType"], "streams");
    assert_eq!(v["groupId"], "wc");
    assert_eq!(v["assignmentEpoch"], 12);
    // v0 has no assignorName; Kafka's JSON leaves it out.
    assert!(v.get("assignorName").is_none(), "{v}");
    let b = &v["members"][1];
    assert_eq!(b["memberId"], "m-b");
    assert_eq!(b["targetAssignment"]["warmupTasks"][0]["partitions"][0], 1);
    assert_eq!(b["taskEndOffsets"][0]["offset"], 1000);
    assert_eq!(b["taskLags"]["1_1"], 600);
    assert_eq!(v["members"][0]["userEndpoint"]["port"], 8080);
    assert_eq!(v["topology"]["subtopologies"][1]["stateChangelogTopics"][0]["name"], "wc-counts-changelog");
}

/// `m-b` also reports 1_2 with an end offset sum of Long.MAX_VALUE, as Kafka Streams does while it
/// does not know the changelog's end offset yet.
fn group_with_an_unknown_end_offset() -> DescribedGroup {
    let mut g = streams_group();
    let b = g.members.iter_mut().find(|m| m.member_id == "m-b").unwrap();
    b.task_offsets.push(offset("1", 2, 96));
    b.task_end_offsets.push(offset("1", 2, i64::MAX));
    g.assignor_name = None;
    g
}

#[test]
fn describe_shows_a_lag_from_an_unknown_end_offset_as_unknown_never_as_a_number() {
    let script = || Script {
        listed_type: Some("streams"),
        with_list_groups: true,
        streams_versions: Some((0, 0)),
        streams_group: Some(group_with_an_unknown_end_offset()),
        ..Script::default()
    };
    let out = describe(&start(script()), &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("1_1 600, 1_2 unknown"), "{text}");
    assert!(!text.contains("9223372036854775"), "{text}");

    let out = describe(&start(script()), &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &v["members"][1];
    assert_eq!(b["taskLags"]["1_1"], 600);
    assert_eq!(b["taskLags"]["1_2"], Value::Null, "{b}");
    assert!(b["taskLagsUnknown"]["1_2"].as_str().unwrap().contains("does not know the changelog end offset"), "{b}");
    assert!(v["members"][0].get("taskLagsUnknown").is_none(), "only where a lag is unknown");
}

#[test]
fn describe_says_a_group_that_does_not_exist_does_not_exist() {
    let address = start(Script {
        with_list_groups: true,
        streams_versions: Some((0, 1)),
        streams_group: Some(error_group(69, "Group wc not found.")),
        classic_state: "Dead",
        ..Script::default()
    });
    let out = describe(&address, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), format!("error: group `wc` does not exist on {address}\n"));
    assert!(out.stdout.is_empty());
}

#[test]
fn describe_refuses_a_consumer_group_as_not_a_streams_group() {
    let address = start(Script { listed_type: Some("consumer"), with_list_groups: true, streams_versions: Some((0, 1)), ..Script::default() });
    let out = describe(&address, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: group `wc` is a consumer group (the consumer rebalance protocol of KIP-848, group.protocol=consumer), not a Kafka Streams group\n"
    );
}

#[test]
fn describe_says_when_the_broker_has_no_streams_group_describe() {
    let address = start(Script { listed_type: Some("streams"), with_list_groups: true, ..Script::default() });
    let out = describe(&address, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!(
            "error: group `wc` is a streams group, but {address} does not support StreamsGroupDescribe (API key 89, versions none; \
             this client 0..=1): Kafka 4.1 or later with the streams rebalance protocol enabled is needed\n"
        )
    );
    // An older broker without ListGroups v5 or key 89: only classic groups are looked for.
    let address = start(Script { classic_state: "Dead", ..Script::default() });
    let out = describe(&address, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: group `wc` does not exist on {address} (the broker has no StreamsGroupDescribe, so only classic groups were looked for)\n"
        )
    );
}

#[test]
fn describe_says_an_unauthorized_describe_is_unauthorized() {
    // ListGroups leaves out the groups the principal may not describe.
    let address = start(Script {
        with_list_groups: true,
        streams_versions: Some((0, 1)),
        streams_group: Some(error_group(30, "Not authorized.")),
        ..Script::default()
    });
    let out = describe(&address, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: not authorized to describe group `wc` on {address} (GROUP_AUTHORIZATION_FAILED): the principal needs DESCRIBE \
             on the group; the broker says: Not authorized.\n"
        )
    );
}
