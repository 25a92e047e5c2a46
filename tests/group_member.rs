//! The group member and its connection against a scripted broker: a `TcpListener` in this
//! process that decodes the member's requests and answers with `kafka-protocol` responses.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Message, StrBytes, decode_request_header_from_buffer};
use kstreams_assignor::client::net::client_config::Security;
use kstreams_assignor::client::connection::{Connection, ConnectionError, read_frame};
use kstreams_assignor::member::{GroupMember, MemberConfig, MemberEvent, PartitionAssignorHook, StreamsMember};
use kstreams_assignor::leader::{self, ChangelogEndOffsets, ClusterMetadata, JoinMember, LeaderInput, Tasks, Topology};
mod support;

use support::{api_versions, frame, group_apis, metadata_topic};

/// Every API the member uses, CreateTopics included.
fn all_versions() -> ApiVersionsResponse {
    let mut keys = group_apis();
    keys.push((ApiKey::CreateTopics, CreateTopicsRequest::VERSIONS));
    api_versions(&keys)
}
use kstreams_assignor::wire::{AssignmentEnvelope, AssignmentInfo, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TopicPartition};

const APP: &str = "wc";

fn topology() -> Topology {
    Topology::from_describe(&std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap(), APP).unwrap()
}

fn pid(n: u128) -> ProcessId {
    ProcessId(uuid::Uuid::from_u128(n))
}

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_owned())
}

/// What the scripted broker saw.
#[derive(Default)]
struct Script {
    port: i32,
    /// (member id sent, process id in the subscription, generation in the envelope)
    joins: Vec<(String, ProcessId, i32)>,
    find_coordinator: usize,
    heartbeats: usize,
    syncs: Vec<(i32, BTreeMap<String, Vec<u8>>)>,
    created: Vec<(String, i32, BTreeMap<String, String>)>,
    leaves: Vec<String>,
    /// The members of the last successful join, as the leader got them.
    members: Vec<JoinMember>,
    generation: i32,
    internal_topics_exist: bool,
    done: Arc<AtomicBool>,
    /// The probing script instead of the error script.
    probing: bool,
    /// When each JoinGroup and SyncGroup arrived.
    times: Vec<(&'static str, Instant)>,
    /// As follower: the assignment the (Java) leader sent this member.
    follower_assignment: Vec<u8>,
}

fn java_member() -> JoinMember {
    java_member_with("java-1", pid(7), &[])
}

fn java_member_with(id: &str, process: ProcessId, sums: &[(kstreams_assignor::wire::TaskId, i64)]) -> JoinMember {
    let info = SubscriptionInfo::new(11, process)
        .with_user_end_point(&format!("{id}:8080"))
        .with_task_offset_sums(sums.iter().cloned())
        .encode()
        .unwrap();
    let env = SubscriptionEnvelope::new(vec!["text-lines".into(), "wc-words-repartition".into()], Some(info));
    JoinMember::new(id, env.encode().unwrap())
}

/// One Java client has every changelog caught up, two have no state: warm-ups, and a probing
/// rebalance.
fn probing_members() -> Vec<JoinMember> {
    let tasks = Tasks::build(&topology(), &ClusterMetadata::new().with_topic("text-lines", 4)).unwrap();
    let sums: Vec<_> = tasks.stateful_tasks().map(|t| (t.clone(), 1_000_000)).collect();
    vec![java_member_with("java-1", pid(7), &sums), java_member_with("java-2", pid(8), &[]), java_member_with("java-3", pid(9), &[])]
}

const TOPICS: [(&str, i32); 3] = [("text-lines", 4), ("wc-words-repartition", 4), ("wc-word-counts-changelog", 4)];

fn handle(script: &Mutex<Script>, key: ApiKey, v: i16, id: i32, buf: &mut Bytes) -> Vec<u8> {
    let mut sc = script.lock().unwrap();
    match key {
        ApiKey::ApiVersions => frame(&all_versions(), v, id),
        ApiKey::FindCoordinator => {
            let _ = FindCoordinatorRequest::decode(buf, v).unwrap();
            sc.find_coordinator += 1;
            let c = Coordinator::default().with_key(s(APP)).with_node_id(BrokerId(0)).with_host(s("127.0.0.1")).with_port(sc.port);
            let r = if v >= 4 {
                FindCoordinatorResponse::default().with_coordinators(vec![c])
            } else {
                FindCoordinatorResponse::default().with_host(s("127.0.0.1")).with_port(sc.port)
            };
            frame(&r, v, id)
        }
        ApiKey::JoinGroup => {
            let req = JoinGroupRequest::decode(buf, v).unwrap();
            assert_eq!(req.protocol_type.as_str(), "consumer");
            assert_eq!(req.protocols.len(), 1);
            assert_eq!(req.protocols[0].name.as_str(), "stream");
            let env = SubscriptionEnvelope::decode(&req.protocols[0].metadata).unwrap();
            let info = SubscriptionInfo::decode(env.user_data.as_deref().unwrap()).unwrap();
            assert_eq!(env.topics, ["text-lines", "wc-words-repartition"]);
            sc.joins.push((req.member_id.to_string(), info.process_id, env.generation_id));
            let n = sc.joins.len();
            sc.times.push(("join", Instant::now()));
            let err = |code: i16, member: &str| JoinGroupResponse::default().with_error_code(code).with_member_id(s(member));
            let n = if sc.probing && n > 1 { 5 } else { n };
            let r = match (n, req.member_id.as_str()) {
                (1, "") if sc.probing => err(79, "m-2"),
                // 1: no member id yet; 2: REBALANCE_IN_PROGRESS; 3: UNKNOWN_MEMBER_ID (forget the id);
                // 4: a new id; then the join succeeds.
                (1, "") => err(79, "m-1"),
                (2, "m-1") => err(27, "m-1"),
                (3, "m-1") => err(25, ""),
                (4, "") => err(79, "m-2"),
                (_, "m-2") => {
                    sc.generation += 1;
                    let ours = JoinMember::new("m-2", req.protocols[0].metadata.to_vec());
                    sc.members = vec![ours];
                    if sc.probing {
                        sc.members.extend(probing_members());
                    } else {
                        sc.members.push(java_member());
                    }
                    JoinGroupResponse::default()
                        .with_generation_id(sc.generation)
                        .with_protocol_type(Some(s("consumer")))
                        .with_protocol_name(Some(s("stream")))
                        .with_leader(s("m-2"))
                        .with_member_id(s("m-2"))
                        .with_members(
                            sc.members
                                .iter()
                                .map(|m| {
                                    JoinGroupResponseMember::default()
                                        .with_member_id(s(&m.member_id))
                                        .with_metadata(Bytes::from(m.subscription.clone()))
                                })
                                .collect(),
                        )
                }
                other => panic!("unexpected join {other:?}"),
            };
            frame(&r, v, id)
        }
        ApiKey::SyncGroup => {
            let req = SyncGroupRequest::decode(buf, v).unwrap();
            assert_eq!(req.generation_id, sc.generation);
            let assignments: BTreeMap<String, Vec<u8>> =
                req.assignments.iter().map(|a| (a.member_id.to_string(), a.assignment.to_vec())).collect();
            let mine = assignments.get(req.member_id.as_str()).cloned().unwrap_or_default();
            sc.syncs.push((req.generation_id, assignments));
            sc.times.push(("sync", Instant::now()));
            if sc.probing && sc.generation == 2 {
                sc.done.store(true, Ordering::SeqCst);
            }
            frame(&SyncGroupResponse::default().with_assignment(Bytes::from(mine)), v, id)
        }
        ApiKey::Heartbeat => {
            let req = HeartbeatRequest::decode(buf, v).unwrap();
            assert_eq!(req.member_id.as_str(), "m-2");
            sc.heartbeats += 1;
            // After generation 1: NOT_COORDINATOR, then REBALANCE_IN_PROGRESS; after generation 2:
            // ILLEGAL_GENERATION; after generation 3: done.
            let code = match (sc.generation, sc.heartbeats) {
                _ if sc.probing => 0,
                (1, 1) => 16,
                (1, _) => 27,
                (2, _) => 22,
                _ => {
                    sc.done.store(true, Ordering::SeqCst);
                    0
                }
            };
            frame(&HeartbeatResponse::default().with_error_code(code), v, id)
        }
        ApiKey::LeaveGroup => {
            let req = LeaveGroupRequest::decode(buf, v).unwrap();
            let member = if v >= 3 { req.members[0].member_id.to_string() } else { req.member_id.to_string() };
            sc.leaves.push(member);
            frame(&LeaveGroupResponse::default(), v, id)
        }
        ApiKey::Metadata => {
            let req = MetadataRequest::decode(buf, v).unwrap();
            let topics = req
                .topics
                .unwrap_or_default()
                .into_iter()
                .map(|t| {
                    let name = t.name.unwrap().0.to_string();
                    let count = TOPICS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
                    let exists = name == "text-lines" || sc.internal_topics_exist;
                    metadata_topic(&name, count.filter(|_| exists))
                })
                .collect();
            let broker = MetadataResponseBroker::default().with_node_id(BrokerId(0)).with_host(s("127.0.0.1")).with_port(sc.port);
            frame(&MetadataResponse::default().with_brokers(vec![broker]).with_topics(topics), v, id)
        }
        ApiKey::CreateTopics => {
            let req = CreateTopicsRequest::decode(buf, v).unwrap();
            let mut results = Vec::new();
            for t in req.topics {
                let configs = t.configs.iter().map(|c| (c.name.to_string(), c.value.as_ref().unwrap().to_string())).collect();
                sc.created.push((t.name.0.to_string(), t.num_partitions, configs));
                results.push(CreatableTopicResult::default().with_name(t.name));
            }
            sc.internal_topics_exist = true;
            frame(&CreateTopicsResponse::default().with_topics(results), v, id)
        }
        ApiKey::ListOffsets => {
            let req = ListOffsetsRequest::decode(buf, v).unwrap();
            let topics = req
                .topics
                .into_iter()
                .map(|t| {
                    let parts = t
                        .partitions
                        .iter()
                        .map(|p| {
                            assert_eq!(p.timestamp, -1, "latest");
                            ListOffsetsPartitionResponse::default().with_partition_index(p.partition_index).with_offset(1_000_000)
                        })
                        .collect();
                    ListOffsetsTopicResponse::default().with_name(t.name).with_partitions(parts)
                })
                .collect();
            frame(&ListOffsetsResponse::default().with_topics(topics), v, id)
        }
        other => panic!("unexpected request {other:?}"),
    }
}

type Handler = fn(&Mutex<Script>, ApiKey, i16, i32, &mut Bytes) -> Vec<u8>;

fn serve(listener: TcpListener, script: Arc<Mutex<Script>>) {
    serve_with(listener, script, handle);
}

fn serve_with(listener: TcpListener, script: Arc<Mutex<Script>>, handle: Handler) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { return };
        let script = script.clone();
        std::thread::spawn(move || {
            while let Ok(body) = read_frame(&mut stream) {
                let mut buf = Bytes::from(body);
                let header = decode_request_header_from_buffer(&mut buf).unwrap();
                let key = ApiKey::try_from(header.request_api_key).unwrap();
                let out = handle(&script, key, header.request_api_version, header.correlation_id, &mut buf);
                if stream.write_all(&out).is_err() {
                    return;
                }
            }
        });
    }
}

#[test]
fn the_member_rejoins_through_rebalance_errors_and_leads_with_the_leaders_bytes() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let done = Arc::new(AtomicBool::new(false));
    let script = Arc::new(Mutex::new(Script { port: port.into(), done: done.clone(), ..Script::default() }));
    {
        let script = script.clone();
        std::thread::spawn(move || serve(listener, script));
    }

    let me = pid(1);
    let mut config = MemberConfig::new(format!("127.0.0.1:{port}"), APP).with_leader_only(true);
    config.heartbeat_interval_ms = 20;
    config.retry_backoff_ms = 10;
    config.retry_backoff_max_ms = 20;
    config.request_timeout_ms = 5_000;
    let mut member = GroupMember::new(config, topology(), StreamsMember::new(me));
    let started = Instant::now();
    let mut events = Vec::new();
    let mut stop = || done.load(Ordering::SeqCst) || started.elapsed() > Duration::from_secs(20);
    member.run(&mut stop, &mut |e| events.push(e)).unwrap();
    assert!(done.load(Ordering::SeqCst), "the script ran to its end");

    let sc = script.lock().unwrap();
    // The joins: no id, m-1 (rebalance in progress), m-1 (unknown member id), no id, m-2 (gen 1),
    // m-2 (gen 2, after NOT_COORDINATOR and REBALANCE_IN_PROGRESS), m-2 (gen 3, after ILLEGAL_GENERATION).
    let ids: Vec<&str> = sc.joins.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(ids, ["", "m-1", "m-1", "", "m-2", "m-2", "m-2"]);
    assert!(sc.joins.iter().all(|j| j.1 == me), "the process id stays");
    assert!(sc.find_coordinator >= 2, "NOT_COORDINATOR makes the member find the coordinator again");
    assert_eq!(sc.leaves, ["m-2"]);
    assert_eq!(sc.syncs.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);

    // The internal topics were created once, with Kafka Streams' configs.
    let created: Vec<&str> = sc.created.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(created, ["wc-words-repartition", "wc-word-counts-changelog"]);
    assert!(sc.created.iter().all(|c| c.1 == 4));
    assert_eq!(sc.created[0].2["cleanup.policy"], "delete");
    assert_eq!(sc.created[0].2["segment.bytes"], "52428800");
    assert_eq!(sc.created[1].2["cleanup.policy"], "compact");

    // The last SyncGroup carries exactly what the leader computes from the same input.
    let topology = topology();
    let metadata = ClusterMetadata::new().with_topic("text-lines", 4);
    let tasks = Tasks::build(&topology, &metadata).unwrap();
    let ends = tasks.changelog_partitions_for_task.values().flatten().map(|p| (p.clone(), 1_000_000)).collect();
    let excluded = vec!["m-2".to_owned()];
    let ends = ChangelogEndOffsets::Available(ends);
    let input = LeaderInput::new(&sc.members, &topology, &metadata, &ends, me)
        .with_excluded_members(&excluded);
    let expected = leader::assign(&input).unwrap();
    let (_, sent) = sc.syncs.last().unwrap();
    assert_eq!(sent, &expected.members);
    let java = AssignmentEnvelope::decode(&sent["java-1"]).unwrap();
    assert_eq!(java.partitions().len(), 8);
    let ours = AssignmentEnvelope::decode(&sent["m-2"]).unwrap();
    assert!(ours.partitions().is_empty());
    assert!(AssignmentInfo::decode(ours.user_data.as_deref().unwrap()).unwrap().active_tasks.is_empty());
    assert!(java.partitions().contains(&TopicPartition::new("wc-words-repartition", 3)));

    // One record per generation, and the member saw the errors it recovered from.
    let records: Vec<i32> =
        events.iter().filter_map(|e| if let MemberEvent::Assigned(r) = e { Some(r.generation_id) } else { None }).collect();
    assert_eq!(records, [1, 2, 3]);
    let text: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
    for code in ["REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR", "ILLEGAL_GENERATION"] {
        assert!(text.iter().any(|t| t.contains(code)), "{code} in {text:#?}");
    }
}

/// A hook whose leader runs with its clock `shift_ms` behind: the probing deadline it sets comes
/// `probing.rebalance.interval.ms - shift_ms` after the real time.
struct ShiftedLeader {
    inner: StreamsMember,
    shift_ms: i64,
}

impl PartitionAssignorHook for ShiftedLeader {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn process_id(&self) -> ProcessId {
        PartitionAssignorHook::process_id(&self.inner)
    }
    fn subscription_user_data(&mut self) -> Result<Vec<u8>, kstreams_assignor::wire::EncodeError> {
        self.inner.subscription_user_data()
    }
    fn assign(&mut self, input: &LeaderInput<'_>) -> Result<leader::GroupAssignment, leader::LeaderError> {
        let mut shifted = input.clone();
        shifted.now_ms -= self.shift_ms;
        self.inner.assign(&shifted)
    }
    fn on_assignment(
        &mut self,
        assignment: &AssignmentEnvelope,
    ) -> Result<kstreams_assignor::member::ReceivedAssignment, kstreams_assignor::member::OnAssignmentError> {
        self.inner.on_assignment(assignment)
    }
}

#[test]
fn a_leader_only_member_rejoins_at_its_probing_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let done = Arc::new(AtomicBool::new(false));
    let script = Arc::new(Mutex::new(Script { port: port.into(), done: done.clone(), probing: true, ..Script::default() }));
    {
        let script = script.clone();
        std::thread::spawn(move || serve(listener, script));
    }
    let mut config = MemberConfig::new(format!("127.0.0.1:{port}"), APP).with_leader_only(true);
    config.heartbeat_interval_ms = 50;
    let interval = config.leader.assignment.probing_rebalance_interval_ms;
    // The deadline falls 800 ms after the assignment.
    let hook = ShiftedLeader { inner: StreamsMember::new(pid(1)), shift_ms: interval - 800 };
    let mut member = GroupMember::new(config, topology(), hook);
    let started = Instant::now();
    let mut events = Vec::new();
    let mut stop = || done.load(Ordering::SeqCst) || started.elapsed() > Duration::from_secs(20);
    member.run(&mut stop, &mut |e| events.push(e)).unwrap();
    assert!(done.load(Ordering::SeqCst), "a second generation came");

    let sc = script.lock().unwrap();
    // Generation 1: warm-ups, and the deadline on the leader's own (empty) assignment only.
    let (_, first) = &sc.syncs[0];
    let info = |id: &str| {
        let env = AssignmentEnvelope::decode(&first[id]).unwrap();
        AssignmentInfo::decode(env.user_data.as_deref().unwrap()).unwrap()
    };
    let deadline = info("m-2").next_rebalance.deadline().expect("the leader holds the deadline");
    for java in ["java-1", "java-2", "java-3"] {
        assert!(info(java).next_rebalance.is_none(), "{java}");
    }
    let record = events.iter().find_map(|e| if let MemberEvent::Assigned(r) = e { Some(r.clone()) } else { None }).unwrap();
    assert!(record.members.iter().any(|m| !m.warmup_tasks.is_empty()), "{record:?}");
    // The member rejoined by itself at the deadline: no heartbeat error asked it to.
    let syncs: Vec<Instant> = sc.times.iter().filter(|t| t.0 == "sync").map(|t| t.1).collect();
    let joins: Vec<Instant> = sc.times.iter().filter(|t| t.0 == "join").map(|t| t.1).collect();
    assert_eq!(joins.len(), 3, "MEMBER_ID_REQUIRED, generation 1, generation 2");
    let waited = joins[2].duration_since(syncs[0]);
    assert!(waited >= Duration::from_millis(700) && waited < Duration::from_secs(5), "{waited:?}");
    let now = kstreams_assignor::client::now_ms();
    assert!((deadline - now).abs() < 10_000, "deadline {deadline} is near now {now}");
    let reasons: Vec<String> =
        events.iter().filter_map(|e| if let MemberEvent::Rejoining(r) = e { Some(r.clone()) } else { None }).collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].starts_with("probing rebalance due at"), "{reasons:?}");
}

/// A server that answers ApiVersions, then the next request with `reply(correlation_id)`.
fn raw_server(reply: impl Fn(i32) -> Vec<u8> + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut n = 0;
        while let Ok(body) = read_frame(&mut stream) {
            let mut buf = Bytes::from(body);
            let header = decode_request_header_from_buffer(&mut buf).unwrap();
            n += 1;
            if n == 1 {
                let _ = stream.write_all(&frame(&all_versions(), header.request_api_version, header.correlation_id));
            } else {
                let _ = stream.write_all(&reply(header.correlation_id));
                return; // closes the connection
            }
        }
    });
    addr
}

fn heartbeat_once(addr: &str) -> Result<HeartbeatResponse, ConnectionError> {
    let mut conn = Connection::connect(addr, "t", &Security::plaintext(), Duration::from_secs(5))?;
    conn.call(&HeartbeatRequest::default())
}

#[test]
fn the_connection_refuses_what_the_broker_gets_wrong() {
    let v = HeartbeatRequest::VERSIONS.max;
    let ok = raw_server(move |id| frame(&HeartbeatResponse::default().with_error_code(27), v, id));
    assert_eq!(heartbeat_once(&ok).unwrap().error_code, 27);

    let wrong_id = raw_server(move |id| frame(&HeartbeatResponse::default(), v, id + 1));
    assert!(matches!(heartbeat_once(&wrong_id), Err(ConnectionError::Correlation { .. })));

    let huge = raw_server(|_| (-5i32).to_be_bytes().to_vec());
    assert!(matches!(heartbeat_once(&huge), Err(ConnectionError::FrameSize { size: -5, .. })));

    // A frame whose body is cut short: the header decodes, the body does not.
    let short = raw_server(move |id| {
        let mut f = frame(&HeartbeatResponse::default(), v, id);
        f.truncate(f.len() - 3);
        let size = i32::try_from(f.len() - 4).unwrap();
        f[..4].copy_from_slice(&size.to_be_bytes());
        f
    });
    assert!(matches!(heartbeat_once(&short), Err(ConnectionError::Decode { .. })));

    // The broker closes the connection mid-frame.
    let closed = raw_server(|_| vec![0, 0, 0, 50, 1, 2]);
    let err = heartbeat_once(&closed);
    assert!(matches!(err, Err(ConnectionError::Closed { .. })), "{err:?}");
}

#[test]
fn api_versions_falls_back_to_the_version_the_broker_names() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            while let Ok(body) = read_frame(&mut stream) {
                let mut buf = Bytes::from(body);
                let header = decode_request_header_from_buffer(&mut buf).unwrap();
                let v = header.request_api_version;
                seen.lock().unwrap().push(v);
                let out = if v > 2 {
                    // As Kafka: UNSUPPORTED_VERSION in v0 form, naming the supported ApiVersions range.
                    let r = ApiVersionsResponse::default().with_error_code(35).with_api_keys(vec![
                        ApiVersion::default().with_api_key(ApiKey::ApiVersions as i16).with_min_version(0).with_max_version(2),
                    ]);
                    frame(&r, 0, header.correlation_id)
                } else {
                    frame(&all_versions(), v, header.correlation_id)
                };
                let _ = stream.write_all(&out);
            }
        });
    }
    let conn = Connection::connect(&addr, "t", &Security::plaintext(), Duration::from_secs(5)).unwrap();
    assert_eq!(*seen.lock().unwrap(), [ApiVersionsRequest::VERSIONS.max, 2]);
    assert_eq!(conn.version::<JoinGroupRequest>().unwrap(), JoinGroupRequest::VERSIONS.max);
    assert!(matches!(conn.version::<OffsetFetchRequest>(), Err(ConnectionError::UnsupportedApi { .. })));
}

/// A broker where a Java member leads: the member joins as a follower and the SyncGroup answer is
/// `follower_assignment` (the envelope bytes the Java leader sent it).
fn handle_follower(script: &Mutex<Script>, key: ApiKey, v: i16, id: i32, buf: &mut Bytes) -> Vec<u8> {
    let mut sc = script.lock().unwrap();
    match key {
        ApiKey::JoinGroup => {
            let req = JoinGroupRequest::decode(buf, v).unwrap();
            let env = SubscriptionEnvelope::decode(&req.protocols[0].metadata).unwrap();
            let info = SubscriptionInfo::decode(env.user_data.as_deref().unwrap()).unwrap();
            sc.joins.push((req.member_id.to_string(), info.process_id, env.generation_id));
            sc.generation = 7;
            let r = JoinGroupResponse::default()
                .with_generation_id(7)
                .with_protocol_type(Some(s("consumer")))
                .with_protocol_name(Some(s("stream")))
                .with_leader(s("java-leader"))
                .with_member_id(s("m-9"));
            frame(&r, v, id)
        }
        ApiKey::SyncGroup => {
            let req = SyncGroupRequest::decode(buf, v).unwrap();
            assert!(req.assignments.is_empty(), "a follower sends no assignments");
            sc.syncs.push((req.generation_id, BTreeMap::new()));
            frame(&SyncGroupResponse::default().with_assignment(Bytes::from(sc.follower_assignment.clone())), v, id)
        }
        ApiKey::Heartbeat => {
            sc.heartbeats += 1;
            if sc.heartbeats >= 3 {
                sc.done.store(true, Ordering::SeqCst);
            }
            frame(&HeartbeatResponse::default(), v, id)
        }
        _ => {
            drop(sc);
            handle(script, key, v, id, buf)
        }
    }
}

fn run_follower(assignment: AssignmentEnvelope) -> (Result<(), kstreams_assignor::member::MemberError>, Arc<Mutex<Script>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let done = Arc::new(AtomicBool::new(false));
    let script = Arc::new(Mutex::new(Script {
        port: port.into(),
        done: done.clone(),
        follower_assignment: assignment.encode().unwrap(),
        ..Script::default()
    }));
    {
        let script = script.clone();
        std::thread::spawn(move || serve_with(listener, script, handle_follower));
    }
    let mut config = MemberConfig::new(format!("127.0.0.1:{port}"), APP).with_leader_only(true);
    config.heartbeat_interval_ms = 20;
    config.request_timeout_ms = 5_000;
    let mut member = GroupMember::new(config, topology(), StreamsMember::new(pid(1)));
    let started = Instant::now();
    let mut stop = || done.load(Ordering::SeqCst) || started.elapsed() > Duration::from_secs(20);
    let result = member.run(&mut stop, &mut |_| {});
    (result, script)
}

#[test]
fn a_leader_only_member_given_tasks_by_another_leader_leaves() {
    let standby: BTreeMap<_, _> =
        [(kstreams_assignor::wire::TaskId::new(1, 3), [TopicPartition::new("wc-words-repartition", 3)].into())].into();
    let info = AssignmentInfo::new(11).with_standby_tasks(standby).encode().unwrap();
    let (result, script) = run_follower(AssignmentEnvelope::new(&[], Some(info)));
    let err = result.expect_err("a leader-only member does not keep tasks");
    assert!(matches!(err, kstreams_assignor::member::MemberError::NotLeading { ref leader_id, ref tasks }
        if leader_id == "java-leader" && tasks.len() == 1), "{err}");
    assert_eq!(err.to_string(), "member `java-leader` leads the group and gave this leader-only member tasks 1_3; left the group");
    let sc = script.lock().unwrap();
    assert_eq!(sc.leaves, ["m-9"], "it left the group");
    assert_eq!(sc.heartbeats, 0);
}

#[test]
fn a_leader_only_member_given_nothing_by_another_leader_stays() {
    let info = AssignmentInfo::new(11).encode().unwrap();
    let (result, script) = run_follower(AssignmentEnvelope::new(&[], Some(info)));
    result.unwrap();
    let sc = script.lock().unwrap();
    assert!(sc.heartbeats >= 3, "it stays in the group and heartbeats");
    assert_eq!(sc.joins.len(), 1);
}
