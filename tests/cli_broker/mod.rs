//! A scripted broker for the command-line tests: a `TcpListener` thread that decodes requests
//! and answers with `kafka-protocol` responses, as a script says.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes, decode_request_header_from_buffer};
use kstreams_assignor::client::connection::read_frame;

use crate::support::{api_versions, group_apis, metadata_topic};

pub(crate) fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_owned())
}

pub(crate) use crate::support::frame;

/// What the script does with one request.
pub(crate) enum Reply {
    /// Send this frame.
    Frame(Vec<u8>),
    /// Never answer (the connection stays open until the client closes it).
    Hold,
}

/// What the broker saw, and what it answers.
#[derive(Default)]
pub(crate) struct Seen {
    /// Every request's API key, in order.
    pub(crate) requests: Vec<ApiKey>,
    /// The member ids of the LeaveGroup requests.
    pub(crate) leaves: Vec<String>,
}

pub(crate) type Script = dyn Fn(&mut Seen, ApiKey, i16, i32, &mut Bytes) -> Reply + Send + Sync;

/// A running scripted broker.
pub(crate) struct Broker {
    pub(crate) port: u16,
    pub(crate) seen: Arc<Mutex<Seen>>,
}

impl Broker {
    pub(crate) fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn count(&self, key: ApiKey) -> usize {
        self.seen.lock().unwrap().requests.iter().filter(|k| **k == key).count()
    }

    pub(crate) fn leaves(&self) -> Vec<String> {
        self.seen.lock().unwrap().leaves.clone()
    }
}

/// Starts a broker on `listener` that answers ApiVersions itself and everything else with
/// `script`.
pub(crate) fn start_on(listener: TcpListener, script: Arc<Script>) -> Broker {
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let shared = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (seen, script) = (shared.clone(), script.clone());
            std::thread::spawn(move || {
                while let Ok(body) = read_frame(&mut stream) {
                    let mut buf = Bytes::from(body);
                    let header = decode_request_header_from_buffer(&mut buf).unwrap();
                    let key = ApiKey::try_from(header.request_api_key).unwrap();
                    let (v, id) = (header.request_api_version, header.correlation_id);
                    let reply = if key == ApiKey::ApiVersions {
                        Reply::Frame(frame(&api_versions(&group_apis()), v, id))
                    } else {
                        let mut seen = seen.lock().unwrap();
                        seen.requests.push(key);
                        if key == ApiKey::LeaveGroup {
                            let req = LeaveGroupRequest::decode(&mut buf.clone(), v).unwrap();
                            let member = if v >= 3 { req.members[0].member_id.to_string() } else { req.member_id.to_string() };
                            seen.leaves.push(member);
                        }
                        script(&mut seen, key, v, id, &mut buf)
                    };
                    if let Reply::Frame(out) = reply {
                        if stream.write_all(&out).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    Broker { port, seen }
}

/// FindCoordinator naming this broker (`port`), or the error `code`.
pub(crate) fn find_coordinator(port: u16, v: i16, id: i32, code: i16) -> Vec<u8> {
    let c = Coordinator::default().with_node_id(BrokerId(0)).with_host(s("127.0.0.1")).with_port(port.into()).with_error_code(code);
    let r = if v >= 4 {
        FindCoordinatorResponse::default().with_coordinators(vec![c])
    } else {
        FindCoordinatorResponse::default().with_host(s("127.0.0.1")).with_port(port.into()).with_error_code(code)
    };
    frame(&r, v, id)
}

/// Metadata: the requested topics that `topics` lists (partition counts, leader broker 0 =
/// this broker), UNKNOWN_TOPIC_OR_PARTITION for the others.
pub(crate) fn metadata(port: u16, topics: &BTreeMap<String, i32>, v: i16, id: i32, buf: &mut Bytes) -> Vec<u8> {
    let req = MetadataRequest::decode(buf, v).unwrap();
    let answer = req
        .topics
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            let name = t.name.unwrap().0.to_string();
            metadata_topic(&name, topics.get(&name).copied())
        })
        .collect();
    let broker = MetadataResponseBroker::default().with_node_id(BrokerId(0)).with_host(s("127.0.0.1")).with_port(port.into());
    frame(&MetadataResponse::default().with_brokers(vec![broker]).with_topics(answer), v, id)
}

/// ListOffsets: every partition at `end`.
pub(crate) fn list_offsets(end: i64, v: i16, id: i32, buf: &mut Bytes) -> Vec<u8> {
    let req = ListOffsetsRequest::decode(buf, v).unwrap();
    let topics = req
        .topics
        .into_iter()
        .map(|t| {
            let parts = t
                .partitions
                .iter()
                .map(|p| ListOffsetsPartitionResponse::default().with_partition_index(p.partition_index).with_offset(end))
                .collect();
            ListOffsetsTopicResponse::default().with_name(t.name).with_partitions(parts)
        })
        .collect();
    frame(&ListOffsetsResponse::default().with_topics(topics), v, id)
}

/// One member of a DescribeGroups answer.
pub(crate) fn described_member(id: &str, metadata: Vec<u8>, assignment: Vec<u8>) -> DescribedGroupMember {
    DescribedGroupMember::default()
        .with_member_id(s(id))
        .with_client_id(s("wc-client"))
        .with_client_host(s("/10.0.0.7"))
        .with_member_metadata(Bytes::from(metadata))
        .with_member_assignment(Bytes::from(assignment))
}

/// DescribeGroups: `group` in `state` with `members`, or the error `code`.
pub(crate) fn describe_groups(group: &str, state: &str, members: Vec<DescribedGroupMember>, code: i16, v: i16, id: i32) -> Vec<u8> {
    let g = DescribedGroup::default()
        .with_error_code(code)
        .with_group_id(GroupId(s(group)))
        .with_group_state(s(state))
        .with_protocol_type(s("consumer"))
        .with_protocol_data(s("stream"))
        .with_members(members);
    frame(&DescribeGroupsResponse::default().with_groups(vec![g]), v, id)
}

/// How the group script of [`group`] behaves.
#[derive(Clone, Default)]
pub(crate) struct GroupScript {
    /// Topics and partition counts the broker has.
    pub(crate) topics: BTreeMap<String, i32>,
    /// Never answer the JoinGroup that carries a member id (the coordinator holds it).
    pub(crate) hold_join: bool,
    /// Other members of the generation (member id, subscription), after the leader.
    pub(crate) others: Vec<(String, Vec<u8>)>,
}

/// A coordinator for one member, `m-1`: MEMBER_ID_REQUIRED, then generation 1 with the member
/// as leader (and the script's other members); SyncGroup hands back what the leader sent it;
/// heartbeats succeed.
pub(crate) fn group(port: Arc<Mutex<u16>>, script: GroupScript) -> Arc<Script> {
    Arc::new(move |_seen: &mut Seen, key: ApiKey, v: i16, id: i32, buf: &mut Bytes| {
        let port = *port.lock().unwrap();
        match key {
            ApiKey::FindCoordinator => Reply::Frame(find_coordinator(port, v, id, 0)),
            ApiKey::JoinGroup => {
                let req = JoinGroupRequest::decode(buf, v).unwrap();
                if req.member_id.is_empty() {
                    return Reply::Frame(frame(&JoinGroupResponse::default().with_error_code(79).with_member_id(s("m-1")), v, id));
                }
                if script.hold_join {
                    return Reply::Hold;
                }
                let member = JoinGroupResponseMember::default().with_member_id(s("m-1")).with_metadata(req.protocols[0].metadata.clone());
                let others = script.others.iter().map(|(id, sub)| {
                    JoinGroupResponseMember::default().with_member_id(s(id)).with_metadata(Bytes::from(sub.clone()))
                });
                let r = JoinGroupResponse::default()
                    .with_generation_id(1)
                    .with_protocol_type(Some(s("consumer")))
                    .with_protocol_name(Some(s("stream")))
                    .with_leader(s("m-1"))
                    .with_member_id(s("m-1"))
                    .with_members(std::iter::once(member).chain(others).collect());
                Reply::Frame(frame(&r, v, id))
            }
            ApiKey::SyncGroup => {
                let req = SyncGroupRequest::decode(buf, v).unwrap();
                let mine = req.assignments.iter().find(|a| a.member_id == req.member_id).map(|a| a.assignment.clone()).unwrap_or_default();
                Reply::Frame(frame(&SyncGroupResponse::default().with_assignment(mine), v, id))
            }
            ApiKey::Heartbeat => Reply::Frame(frame(&HeartbeatResponse::default(), v, id)),
            ApiKey::LeaveGroup => Reply::Frame(frame(&LeaveGroupResponse::default(), v, id)),
            ApiKey::Metadata => Reply::Frame(metadata(port, &script.topics, v, id, buf)),
            ApiKey::ListOffsets => Reply::Frame(list_offsets(0, v, id, buf)),
            other => panic!("unexpected request {other:?}"),
        }
    })
}

/// A group broker on a fresh port.
pub(crate) fn start_group(script: GroupScript) -> Broker {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = Arc::new(Mutex::new(listener.local_addr().unwrap().port()));
    start_on(listener, group(port, script))
}
