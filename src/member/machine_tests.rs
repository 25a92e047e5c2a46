//! The member's state machine without TCP: answers and times fed in by hand.

use std::collections::BTreeMap;

use kafka_protocol::messages::ApiKey;

use crate::client::connection::{ConnectionError, ErrorCode, check};
use crate::member::hook::StreamsMember;
use crate::member::machine::{MemberMachine, Request, Response};
use crate::member::config::MemberConfig;
use crate::member::events::{GenerationRecord, MemberError, MemberEvent};
use crate::leader::{ChangelogEndOffsets, ClusterMetadata, JoinMember, Tasks, Topology};
use crate::wire::ProcessId;

const APP: &str = "wc";
const T0: i64 = 1_000_000;

fn topology() -> Topology {
    let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
    Topology::from_describe(&text, APP).unwrap()
}

fn config() -> MemberConfig {
    let mut config = MemberConfig::new("127.0.0.1:9092", APP);
    config.heartbeat_interval_ms = 3_000;
    config
}

fn machine(config: MemberConfig) -> MemberMachine<StreamsMember> {
    MemberMachine::new(config, topology(), StreamsMember::new(ProcessId::random()))
}

fn broker_error(api: ApiKey, code: ErrorCode) -> MemberError {
    let e: ConnectionError = check("b:9092", api, code.0, None).unwrap_err();
    MemberError::Connection(e)
}

fn events(m: &mut MemberMachine<StreamsMember>) -> Vec<MemberEvent> {
    std::iter::from_fn(|| m.poll_event()).collect()
}

/// Finds the coordinator and returns the JoinGroup the machine then sends.
fn connect(m: &mut MemberMachine<StreamsMember>, now: i64) -> Request {
    assert_eq!(m.poll_request(now), Some(Request::FindCoordinator));
    m.handle_response(Response::CoordinatorFound, now);
    m.poll_request(now).expect("a JoinGroup")
}

fn metadata_of(request: &Request) -> Vec<u8> {
    match request {
        Request::JoinGroup { metadata, .. } => metadata.clone(),
        other => panic!("not a JoinGroup: {other:?}"),
    }
}

fn joined(member_id: &str, leader_id: &str, generation_id: i32, members: Vec<JoinMember>) -> Response {
    Response::Joined {
        member_id: member_id.into(),
        generation_id,
        leader_id: leader_id.into(),
        protocol_name: Some("stream".into()),
        skip_assignment: false,
        members,
    }
}

/// The assignment bytes of `member` from a leader over the same group.
fn assignment_for(member: &str, subscription: Vec<u8>) -> Vec<u8> {
    let mut leader = machine(config());
    let members = vec![JoinMember::new(member, subscription)];
    let (bytes, _) = leader.assign(&members, &cluster(), &ends(), BTreeMap::new(), T0).unwrap();
    bytes[member].clone()
}

fn cluster() -> ClusterMetadata {
    ClusterMetadata::new().with_topic("text-lines", 4)
}

fn ends() -> ChangelogEndOffsets {
    let tasks = Tasks::build(&topology(), &cluster()).unwrap();
    ChangelogEndOffsets::Available(tasks.changelog_partitions_for_task.values().flatten().map(|p| (p.clone(), 0)).collect())
}

/// A follower through join and sync at `T0`.
fn stable_follower(config: MemberConfig) -> MemberMachine<StreamsMember> {
    let mut m = machine(config);
    let join = connect(&mut m, T0);
    let subscription = metadata_of(&join);
    m.handle_response(joined("m-1", "other", 1, Vec::new()), T0);
    assert!(matches!(m.poll_request(T0), Some(Request::SyncGroup { generation_id: 1, .. })));
    m.handle_response(Response::Synced { assignment: assignment_for("m-1", subscription) }, T0);
    m
}

#[test]
fn a_member_joins_syncs_then_heartbeats_every_interval() {
    let mut m = stable_follower(config());
    let seen = events(&mut m);
    assert!(matches!(seen[0], MemberEvent::Joined { generation_id: 1, .. }), "{seen:?}");
    assert!(matches!(seen[1], MemberEvent::Received { generation_id: 1, .. }), "{seen:?}");
    // The first poll after the sync starts the wait: one interval.
    assert_eq!(m.poll_request(T0), None);
    assert_eq!(m.poll_timeout(), Some(T0 + 3_000));
    assert_eq!(m.poll_request(T0 + 2_999), None);
    assert_eq!(m.poll_request(T0 + 3_000), Some(Request::Heartbeat { generation_id: 1, member_id: "m-1".into() }));
    assert_eq!(m.poll_timeout(), None, "the heartbeat's answer is awaited");
    m.handle_response(Response::HeartbeatOk, T0 + 3_010);
    assert_eq!(m.poll_request(T0 + 3_010), None);
    assert_eq!(m.poll_timeout(), Some(T0 + 6_010));
}

#[test]
fn rebalance_in_progress_on_heartbeat_rejoins_with_the_same_member_id() {
    let mut m = stable_follower(config());
    events(&mut m);
    m.poll_request(T0);
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::Heartbeat { .. })));
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::REBALANCE_IN_PROGRESS), T0 + 3_000);
    assert!(matches!(&events(&mut m)[..], [MemberEvent::Rejoining(_)]));
    match m.poll_request(T0 + 3_000) {
        Some(Request::JoinGroup { member_id, .. }) => assert_eq!(member_id, "m-1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.generation_id(), 1);
}

#[test]
fn unknown_member_id_forgets_the_member_id_and_generation() {
    let mut m = stable_follower(config());
    m.poll_request(T0);
    m.poll_request(T0 + 3_000);
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::UNKNOWN_MEMBER_ID), T0 + 3_000);
    match m.poll_request(T0 + 3_000) {
        Some(Request::JoinGroup { member_id, .. }) => assert_eq!(member_id, ""),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.generation_id(), -1);
}

#[test]
fn illegal_generation_forgets_the_generation_but_keeps_the_member_id() {
    let mut m = stable_follower(config());
    m.poll_request(T0);
    m.poll_request(T0 + 3_000);
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::ILLEGAL_GENERATION), T0 + 3_000);
    match m.poll_request(T0 + 3_000) {
        Some(Request::JoinGroup { member_id, .. }) => assert_eq!(member_id, "m-1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.generation_id(), -1);
}

#[test]
fn member_id_required_joins_again_with_the_given_id_and_the_same_metadata() {
    let mut m = machine(config());
    let first = connect(&mut m, T0);
    m.handle_response(Response::MemberIdRequired { member_id: "m-9".into() }, T0);
    let second = m.poll_request(T0).unwrap();
    assert_eq!(metadata_of(&first), metadata_of(&second));
    assert!(matches!(second, Request::JoinGroup { ref member_id, .. } if member_id == "m-9"));
}

#[test]
fn the_leader_computes_the_assignment_and_syncs_every_members_bytes() {
    let mut m = machine(config().with_leader_only(true));
    let own = metadata_of(&connect(&mut m, T0));
    let other = metadata_of(&connect(&mut machine(config()), T0));
    let members = vec![JoinMember::new("m-1", own), JoinMember::new("m-2", other)];
    m.handle_response(joined("m-1", "m-1", 1, members.clone()), T0);
    let asked = m.poll_request(T0);
    assert_eq!(asked, Some(Request::Lead { members: members.clone() }));
    let (assignments, record) = m.assign(&members, &cluster(), &ends(), BTreeMap::new(), T0).unwrap();
    let excluded: Vec<bool> = record.members.iter().map(|r| r.excluded).collect();
    assert_eq!(excluded, [true, false], "the leader-only member gets no tasks");
    assert!(record.members.iter().all(|r| r.process_id != ProcessId::NIL), "{record:?}");
    m.handle_response(Response::Led { assignments: assignments.clone(), record }, T0);
    match m.poll_request(T0) {
        Some(Request::SyncGroup { generation_id: 1, assignments: sent, .. }) => assert_eq!(sent, assignments),
        other => panic!("{other:?}"),
    }
    assert!(events(&mut m).iter().any(|e| matches!(e, MemberEvent::Assigned(_))));
}

#[test]
fn a_leader_only_member_rejoins_at_its_probing_deadline() {
    let mut config = config().with_leader_only(true);
    config.heartbeat_interval_ms = 60_000;
    let mut m = machine(config);
    let own = metadata_of(&connect(&mut m, T0));
    let members = vec![JoinMember::new("m-1", own.clone())];
    m.handle_response(joined("m-1", "m-1", 1, members.clone()), T0);
    m.poll_request(T0);
    let (assignments, record) = m.assign(&members, &cluster(), &ends(), BTreeMap::new(), T0).unwrap();
    let deadline = T0 + 5_000;
    let record = GenerationRecord { probing_rebalance_at_ms: Some(deadline), ..record };
    m.handle_response(Response::Led { assignments: assignments.clone(), record }, T0);
    m.poll_request(T0);
    m.handle_response(Response::Synced { assignment: assignments["m-1"].clone() }, T0);
    assert_eq!(m.poll_request(T0), None);
    assert_eq!(m.poll_timeout(), Some(deadline));
    assert_eq!(m.poll_request(deadline - 1), None);
    match m.poll_request(deadline) {
        Some(Request::JoinGroup { reason, .. }) => assert_eq!(reason, format!("probing rebalance due at {deadline}")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_coordinator_error_backs_off_doubling_then_finds_the_coordinator_again() {
    let mut m = stable_follower(config());
    events(&mut m);
    m.poll_request(T0);
    m.poll_request(T0 + 3_000);
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::NOT_COORDINATOR), T0 + 3_000);
    assert!(matches!(&events(&mut m)[..], [MemberEvent::Retrying { backoff_ms: 100, .. }]));
    assert_eq!(m.poll_request(T0 + 3_099), None);
    assert_eq!(m.poll_timeout(), Some(T0 + 3_100));
    assert_eq!(m.poll_request(T0 + 3_100), Some(Request::FindCoordinator));
    m.handle_error(MemberError::NoCoordinator { group: APP.into(), last: "down".into() }, T0 + 3_100);
    assert!(matches!(&events(&mut m)[..], [MemberEvent::Retrying { backoff_ms: 200, .. }]));
    assert_eq!(m.poll_timeout(), Some(T0 + 3_300));
}

#[test]
fn the_session_is_kept_by_heartbeats_only_no_local_deadline_runs_while_a_request_is_out() {
    // The coordinator enforces session.timeout.ms; the member has no timer of its own while a
    // JoinGroup or SyncGroup is out (the driver's request timeout covers it).
    let mut m = machine(config());
    connect(&mut m, T0);
    assert_eq!(m.poll_timeout(), None);
    assert_eq!(m.poll_request(T0 + 1_000_000), None, "nothing is sent while the JoinGroup is out");
}

#[test]
fn a_stop_leaves_the_group_then_ends_well() {
    let mut m = stable_follower(config());
    events(&mut m);
    m.poll_request(T0);
    assert!(m.stoppable());
    m.close();
    assert_eq!(m.poll_request(T0 + 10), Some(Request::LeaveGroup { member_id: "m-1".into() }));
    assert!(m.take_outcome().is_none(), "not before the leave is answered");
    m.handle_response(Response::Left { outcome: Ok(()), sent: true }, T0 + 20);
    assert!(matches!(&events(&mut m)[..], [MemberEvent::Left(s)] if s == "m-1 left"));
    assert_eq!(m.poll_request(T0 + 20), None);
    assert!(matches!(m.take_outcome(), Some(Ok(()))));
    assert_eq!(m.member_id(), "");
}

#[test]
fn a_static_member_does_not_leave_on_stop() {
    let mut m = stable_follower(config().with_group_instance_id("i-1"));
    m.poll_request(T0);
    m.close();
    assert_eq!(m.poll_request(T0 + 10), None);
    assert!(matches!(m.take_outcome(), Some(Ok(()))));
}

#[test]
fn a_fatal_error_leaves_then_ends_with_the_error() {
    let mut m = stable_follower(config());
    m.poll_request(T0);
    m.poll_request(T0 + 3_000);
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::FENCED_INSTANCE_ID), T0 + 3_000);
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::LeaveGroup { .. })));
    m.handle_response(Response::Left { outcome: Ok(()), sent: true }, T0 + 3_000);
    m.poll_request(T0 + 3_000);
    assert!(matches!(m.take_outcome(), Some(Err(MemberError::Connection(_)))));
}

#[test]
fn a_stop_waits_while_the_coordinator_is_found_and_the_join_is_under_way() {
    let mut m = machine(config());
    assert!(m.stoppable(), "between steps");
    assert_eq!(m.poll_request(T0), Some(Request::FindCoordinator));
    assert!(!m.stoppable(), "while the coordinator is looked for");
    m.handle_response(Response::CoordinatorFound, T0);
    assert!(!m.stoppable(), "the step goes on with the JoinGroup");
    m.close();
    assert!(matches!(m.poll_request(T0), Some(Request::JoinGroup { .. })));
}

#[test]
fn the_task_callbacks_hear_the_assignment_then_the_loss_then_the_revocation_on_close() {
    use crate::member::tasks::recording::Recorder;
    let recorder = Recorder::default();
    let mut m = machine(config());
    m.set_callbacks(Box::new(recorder.clone()));
    let join = connect(&mut m, T0);
    m.handle_response(joined("m-1", "other", 1, Vec::new()), T0);
    m.poll_request(T0);
    m.handle_response(Response::Synced { assignment: assignment_for("m-1", metadata_of(&join)) }, T0);
    let calls = recorder.take();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].starts_with("assigned active [0_0 0_1 0_2 0_3 1_0"), "{calls:?}");
    // Out of the generation: every task is lost, then the member joins again.
    m.poll_request(T0);
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::Heartbeat { .. })));
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::UNKNOWN_MEMBER_ID), T0 + 3_000);
    assert_eq!(recorder.take(), ["lost"]);
    // Assigned again, then closed: the active tasks are revoked before the leave.
    let join = m.poll_request(T0 + 3_000).expect("a JoinGroup");
    m.handle_response(joined("m-2", "other", 2, Vec::new()), T0 + 3_000);
    m.poll_request(T0 + 3_000);
    m.handle_response(Response::Synced { assignment: assignment_for("m-2", metadata_of(&join)) }, T0 + 3_000);
    recorder.take();
    m.poll_request(T0 + 3_000);
    m.close();
    let calls = recorder.take();
    assert!(calls[0].starts_with("revoked 0_0 0_1"), "{calls:?}");
    assert_eq!(calls[1], "assigned active [] standby [] warm-up []");
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::LeaveGroup { .. })));
}

#[test]
fn a_leader_refuses_a_member_of_another_topology_that_joins_later_then_leaves_and_stops() {
    use crate::leader::LeaderError;
    use crate::wire::{SubscriptionEnvelope, SubscriptionInfo};
    let mut m = machine(config().with_leader_only(true));
    let own = metadata_of(&connect(&mut m, T0));
    // Generation 1: the leader alone; its topology is its own.
    let members = vec![JoinMember::new("m-1", own.clone())];
    m.handle_response(joined("m-1", "m-1", 1, members.clone()), T0);
    m.poll_request(T0);
    let (assignments, record) = m.assign(&members, &cluster(), &ends(), BTreeMap::new(), T0).unwrap();
    m.handle_response(Response::Led { assignments: assignments.clone(), record }, T0);
    m.poll_request(T0);
    m.handle_response(Response::Synced { assignment: assignments["m-1"].clone() }, T0);
    events(&mut m);
    m.poll_request(T0);
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::Heartbeat { .. })));
    m.handle_error(broker_error(ApiKey::Heartbeat, ErrorCode::REBALANCE_IN_PROGRESS), T0 + 3_000);
    // Generation 2: a member whose topology has one more sub-topology joins.
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::JoinGroup { .. })));
    let topics = ["text-lines", "wc-lengths-repartition", "wc-words-repartition"].map(String::from).to_vec();
    let info = SubscriptionInfo::new(11, ProcessId::random()).encode().unwrap();
    let java = SubscriptionEnvelope::new(topics, Some(info)).encode().unwrap();
    let members = vec![JoinMember::new("m-1", own), JoinMember::new("java-1", java)];
    m.handle_response(joined("m-1", "m-1", 2, members.clone()), T0 + 3_000);
    assert!(matches!(m.poll_request(T0 + 3_000), Some(Request::Lead { .. })));
    let err = m.assign(&members, &cluster(), &ends(), BTreeMap::new(), T0 + 3_000).unwrap_err();
    assert!(matches!(&err, MemberError::Leader(LeaderError::TopologyMismatch(e)) if e.unread.contains_key("wc-lengths-repartition")));
    // No SyncGroup: the member leaves and ends with the refusal.
    m.handle_error(err, T0 + 3_000);
    assert_eq!(m.poll_request(T0 + 3_000), Some(Request::LeaveGroup { member_id: "m-1".into() }));
    m.handle_response(Response::Left { outcome: Ok(()), sent: true }, T0 + 3_000);
    match m.take_outcome() {
        Some(Err(e)) => assert!(e.to_string().starts_with("the topology file is not the application's: "), "{e}"),
        other => panic!("{other:?}"),
    }
}
