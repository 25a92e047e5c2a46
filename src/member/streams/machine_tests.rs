//! The streams-protocol member's state machine without TCP: the coordinator's answers and the
//! time fed in by hand, for every reconciliation case and every error code of the heartbeat.

use crate::client::streams::{
    HeartbeatSubtopology, HeartbeatTopology, Status, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
};
use crate::member::config::MemberConfig;
use crate::member::streams::events::{StreamsEvent, StreamsMemberError};
use crate::member::streams::events::MemberState;
use crate::member::streams::machine::{Declaration, Request, Response, StreamsMachine};
use crate::member::tasks::recording::Recorder;
use crate::wire::{ProcessId, TaskId};

const T0: i64 = 1_000_000;

fn topology() -> HeartbeatTopology {
    let sub = |id: &str, topic: &str| HeartbeatSubtopology {
        subtopology_id: id.into(),
        source_topics: vec![topic.into()],
        ..HeartbeatSubtopology::default()
    };
    HeartbeatTopology { epoch: 0, subtopologies: vec![sub("0", "lines"), sub("1", "wc-counts-repartition")] }
}

fn config() -> MemberConfig {
    let mut c = MemberConfig::new("127.0.0.1:9092", "wc");
    c.rack_id = Some("rack-a".into());
    c.client_tags.insert("zone".into(), "eu-1".into());
    c
}

fn machine_with(config: MemberConfig) -> (StreamsMachine, Recorder) {
    let recorder = Recorder::default();
    let declaration = Declaration { topology: topology(), process_id: ProcessId::random(), endpoint: None };
    (StreamsMachine::new(config, declaration, Box::new(recorder.clone())), recorder)
}

fn events(m: &mut StreamsMachine) -> Vec<StreamsEvent> {
    std::iter::from_fn(|| m.poll_event()).collect()
}

fn heartbeat(request: Option<Request>) -> StreamsGroupHeartbeatRequest {
    match request {
        Some(Request::Heartbeat(r)) => *r,
        other => panic!("not a heartbeat: {other:?}"),
    }
}

fn tasks(list: &[(i32, &[i32])]) -> Vec<TaskIds> {
    list.iter().map(|(s, p)| TaskIds { subtopology_id: s.to_string(), partitions: p.to_vec() }).collect()
}

fn ok(epoch: i32) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: 5_000,
        task_offset_interval_ms: 60_000,
        acceptable_recovery_lag: 10_000,
        ..StreamsGroupHeartbeatResponse::default()
    }
}

fn assigned(epoch: i32, active: &[(i32, &[i32])], standby: &[(i32, &[i32])], warmup: &[(i32, &[i32])]) -> StreamsGroupHeartbeatResponse {
    let mut r = ok(epoch);
    r.active_tasks = Some(tasks(active));
    r.standby_tasks = Some(tasks(standby));
    r.warmup_tasks = Some(tasks(warmup));
    r
}

fn error(code: i16, message: &str) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        error_code: code,
        error_message: Some(message.into()),
        member_epoch: -1,
        ..StreamsGroupHeartbeatResponse::default()
    }
}

fn answer(m: &mut StreamsMachine, r: StreamsGroupHeartbeatResponse, now: i64) {
    m.handle_response(Response::Heartbeat(Box::new(r)), now);
}

/// Connected, joined at epoch 1 with active 0_0 0_1 and standby 1_0, acknowledged: stable.
fn stable() -> (StreamsMachine, Recorder) {
    let (mut m, rec) = machine_with(config());
    assert_eq!(m.poll_request(T0), Some(Request::FindCoordinator));
    m.handle_response(Response::CoordinatorFound("b:9092".into()), T0);
    heartbeat(m.poll_request(T0));
    answer(&mut m, assigned(1, &[(0, &[0, 1])], &[(1, &[0])], &[]), T0);
    let ack = heartbeat(m.poll_request(T0));
    assert_eq!(ack.active_tasks, Some(tasks(&[(0, &[0, 1])])));
    answer(&mut m, ok(1), T0 + 5);
    assert_eq!(m.state(), MemberState::Stable);
    events(&mut m);
    rec.take();
    (m, rec)
}

#[test]
fn the_join_declares_everything_and_owns_nothing() {
    let mut c = config();
    c.group_instance_id = Some("rust-1".into());
    c.rebalance_timeout_ms = 120_000;
    let (mut m, rec) = machine_with(c);
    rec.sums.lock().unwrap().offsets.insert(TaskId::new(1, 0), 40);
    assert_eq!(m.poll_timeout(), Some(0));
    assert_eq!(m.poll_request(T0), Some(Request::FindCoordinator));
    assert_eq!(m.poll_request(T0), None, "one request at a time");
    m.handle_response(Response::CoordinatorFound("b:9092".into()), T0);
    let join = heartbeat(m.poll_request(T0));
    assert_eq!((join.member_epoch, join.member_id.as_str()), (0, m.member_id()));
    assert_eq!(join.topology, Some(topology()));
    assert_eq!(join.instance_id.as_deref(), Some("rust-1"));
    assert_eq!(join.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(join.rebalance_timeout_ms, 120_000);
    assert_eq!(join.client_tags.as_ref().unwrap()[0].key, "zone");
    assert!(join.process_id.is_some());
    assert_eq!((join.active_tasks.as_deref(), join.standby_tasks.as_deref()), (Some(&[][..]), Some(&[][..])));
    assert_eq!(join.task_offsets.as_ref().unwrap()[0].offset, 40);
    assert_eq!(join.endpoint_information_epoch, -1);
}

#[test]
fn an_assignment_is_taken_then_acknowledged_at_once_then_heartbeats_carry_only_changes() {
    let (mut m, rec) = machine_with(config());
    m.poll_request(T0);
    m.handle_response(Response::CoordinatorFound("b:9092".into()), T0);
    heartbeat(m.poll_request(T0));
    let mut r = assigned(3, &[(0, &[0, 1])], &[(1, &[0])], &[(1, &[1])]);
    r.endpoint_information_epoch = 2;
    answer(&mut m, r, T0 + 10);
    assert_eq!(rec.take(), ["assigned active [0_0 0_1] standby [1_0] warm-up [1_1]"]);
    let seen = events(&mut m);
    assert!(matches!(&seen[0], StreamsEvent::CoordinatorFound { .. }), "{seen:?}");
    assert!(matches!(&seen[1], StreamsEvent::Joined { epoch: 3, .. }), "{seen:?}");
    assert!(matches!(&seen[2], StreamsEvent::Reconciled { epoch: 3, .. }), "{seen:?}");
    assert!(matches!(&seen[3], StreamsEvent::Epoch { epoch: 3, group_ready: true, .. }), "{seen:?}");
    assert_eq!(m.state(), MemberState::Acknowledging);
    // The acknowledgement goes at once, with the tasks now held.
    assert_eq!(m.poll_timeout(), Some(0));
    let ack = heartbeat(m.poll_request(T0 + 10));
    assert_eq!(ack.member_epoch, 3);
    assert_eq!(ack.endpoint_information_epoch, 2);
    assert_eq!(ack.active_tasks, Some(tasks(&[(0, &[0, 1])])));
    assert_eq!(ack.standby_tasks, Some(tasks(&[(1, &[0])])));
    assert_eq!(ack.warmup_tasks, Some(tasks(&[(1, &[1])])));
    assert!(ack.topology.is_none() && ack.process_id.is_none());
    assert_eq!(m.state(), MemberState::Stable);
    answer(&mut m, ok(3), T0 + 20);
    // Then every HeartbeatIntervalMs, with null (unchanged) tasks.
    assert_eq!(m.poll_timeout(), Some(T0 + 5_020));
    assert_eq!(m.poll_request(T0 + 5_019), None);
    let next = heartbeat(m.poll_request(T0 + 5_020));
    assert!(next.active_tasks.is_none() && next.standby_tasks.is_none() && next.warmup_tasks.is_none());
    assert_eq!(m.poll_timeout(), None, "its answer is awaited");
}

#[test]
fn a_lost_active_task_is_revoked_before_the_acknowledgement_and_a_new_one_comes_only_when_given() {
    let (mut m, rec) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    // The coordinator takes 0_0 away; 0_2 is not given yet (its owner has not let go).
    answer(&mut m, assigned(2, &[(0, &[1])], &[(1, &[0])], &[]), T0 + 5_010);
    assert_eq!(rec.take(), ["revoked 0_0", "assigned active [0_1] standby [1_0] warm-up []"]);
    let ack = heartbeat(m.poll_request(T0 + 5_010));
    assert_eq!(ack.active_tasks, Some(tasks(&[(0, &[1])])), "0_0 is given up in the acknowledgement");
    answer(&mut m, ok(2), T0 + 5_020);
    // Next epoch: 0_2 is free and given.
    heartbeat(m.poll_request(T0 + 10_020));
    answer(&mut m, assigned(3, &[(0, &[1, 2])], &[(1, &[0])], &[]), T0 + 10_030);
    assert_eq!(rec.take(), ["assigned active [0_1 0_2] standby [1_0] warm-up []"]);
    assert_eq!(m.owned().active.len(), 2);
}

#[test]
fn null_task_lists_change_nothing_and_the_same_target_is_not_reconciled_again() {
    let (mut m, rec) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    answer(&mut m, ok(1), T0 + 5_010);
    heartbeat(m.poll_request(T0 + 10_010));
    answer(&mut m, assigned(1, &[(0, &[0, 1])], &[(1, &[0])], &[]), T0 + 10_020);
    assert!(rec.take().is_empty());
    assert_eq!(m.state(), MemberState::Stable);
    assert!(events(&mut m).is_empty());
}

#[test]
fn some_task_lists_without_the_others_are_refused() {
    let (mut m, rec) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    let mut r = ok(2);
    r.active_tasks = Some(Vec::new());
    answer(&mut m, r, T0 + 5_010);
    assert_eq!(rec.take(), ["lost"]);
    assert!(matches!(m.take_outcome(), Some(Err(StreamsMemberError::Protocol(_)))));
    assert!(m.done());
}

#[test]
fn tasks_of_a_subtopology_the_member_does_not_have_are_fatal_in_words() {
    let (mut m, _) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    answer(&mut m, assigned(2, &[(7, &[0])], &[], &[]), T0 + 5_010);
    let err = m.take_outcome().unwrap().unwrap_err();
    assert!(matches!(err, StreamsMemberError::UnknownSubtopology { .. }));
    assert!(err.to_string().contains("subtopology \"7\", which this member's topology does not have"), "{err}");
}

#[test]
fn fenced_or_unknown_the_member_loses_everything_and_joins_again_with_its_id() {
    for code in [110, 25] {
        let (mut m, rec) = stable();
        let id = m.member_id().to_owned();
        heartbeat(m.poll_request(T0 + 5_005));
        answer(&mut m, error(code, "fenced"), T0 + 5_010);
        assert_eq!(rec.take(), ["lost"], "code {code}");
        assert!(matches!(&events(&mut m)[..], [StreamsEvent::Fenced { epoch: 1, .. }]));
        assert_eq!((m.state(), m.epoch()), (MemberState::Joining, 0));
        let join = heartbeat(m.poll_request(T0 + 5_010));
        assert_eq!((join.member_epoch, join.member_id), (0, id));
        assert!(join.topology.is_some(), "code {code}: the join declares the topology again");
    }
}

#[test]
fn a_moved_or_unavailable_coordinator_is_found_again_after_a_growing_backoff() {
    for code in [16, 15] {
        let (mut m, rec) = stable();
        heartbeat(m.poll_request(T0 + 5_005));
        answer(&mut m, error(code, "moved"), T0 + 5_010);
        assert!(rec.take().is_empty(), "the tasks are kept");
        assert!(matches!(&events(&mut m)[..], [StreamsEvent::Retrying { backoff_ms: 100, .. }]));
        assert_eq!(m.poll_request(T0 + 5_109), None);
        assert_eq!(m.poll_request(T0 + 5_110), Some(Request::FindCoordinator));
        m.handle_error("connection refused".into(), true, T0 + 5_110);
        assert!(matches!(&events(&mut m)[..], [StreamsEvent::Retrying { backoff_ms: 200, .. }]));
        assert_eq!(m.poll_request(T0 + 5_310), Some(Request::FindCoordinator));
        m.handle_response(Response::CoordinatorFound("b2:9092".into()), T0 + 5_310);
        // After an error the heartbeat carries everything again.
        let hb = heartbeat(m.poll_request(T0 + 10_010));
        assert_eq!(hb.active_tasks, Some(tasks(&[(0, &[0, 1])])));
    }
}

#[test]
fn a_loading_coordinator_is_asked_again_a_topic_it_may_not_read_is_retried() {
    for code in [14, 29] {
        let (mut m, _) = stable();
        heartbeat(m.poll_request(T0 + 5_005));
        answer(&mut m, error(code, "wait"), T0 + 5_010);
        assert_eq!(m.poll_request(T0 + 5_109), None, "code {code}: the backoff");
        assert!(matches!(m.poll_request(T0 + 5_110), Some(Request::Heartbeat(_))), "code {code}: the same coordinator, again");
        assert!(!m.done());
    }
}

#[test]
fn every_other_error_code_ends_the_member_with_its_name_and_message() {
    let cases = [
        (30, "may not join the group (GROUP_AUTHORIZATION_FAILED)"),
        (35, "does not support the streams group protocol"),
        (42, "INVALID_REQUEST"),
        (81, "GROUP_MAX_SIZE_REACHED"),
        (82, "same group.instance.id (FENCED_INSTANCE_ID)"),
        (111, "UNRELEASED_INSTANCE_ID"),
        (130, "STREAMS_INVALID_TOPOLOGY"),
        (131, "STREAMS_INVALID_TOPOLOGY_EPOCH"),
        (132, "STREAMS_TOPOLOGY_FENCED"),
        (-1, "UNKNOWN_SERVER_ERROR"),
    ];
    for (code, words) in cases {
        let (mut m, rec) = stable();
        heartbeat(m.poll_request(T0 + 5_005));
        answer(&mut m, error(code, "Topology updates are not supported yet."), T0 + 5_010);
        assert_eq!(rec.take(), ["lost"], "code {code}");
        let err = m.take_outcome().unwrap().unwrap_err().to_string();
        assert!(err.contains(words) && err.contains(": Topology updates are not supported yet."), "code {code}: {err}");
        // The coordinator's refusal of another topology says what the member can do about it.
        assert_eq!(err.contains("set it in the topology JSON given with --topology"), code == 42, "code {code}: {err}");
        assert_eq!(m.poll_request(T0 + 5_010), None);
    }
}

/// Joined at epoch 1 with active 0_3, acknowledged, with `instance` as its group.instance.id.
fn stable_with_0_3(instance: Option<&str>) -> (StreamsMachine, Recorder) {
    let mut c = config();
    c.group_instance_id = instance.map(String::from);
    let (mut m, rec) = machine_with(c);
    m.poll_request(T0);
    m.handle_response(Response::CoordinatorFound("b:9092".into()), T0);
    heartbeat(m.poll_request(T0));
    answer(&mut m, assigned(1, &[(0, &[3])], &[], &[]), T0);
    heartbeat(m.poll_request(T0));
    answer(&mut m, ok(1), T0);
    rec.take();
    (m, rec)
}

#[test]
fn close_revokes_then_leaves_with_epoch_minus_one_or_minus_two_when_static() {
    for (instance, epoch) in [(None, -1), (Some("rust-1"), -2)] {
        let (mut m, rec) = stable_with_0_3(instance);
        m.close();
        assert_eq!(rec.take(), ["revoked 0_3"]);
        let leave = heartbeat(m.poll_request(T0 + 1));
        assert_eq!(leave.member_epoch, epoch);
        assert_eq!(leave.instance_id.as_deref(), instance);
        assert!(leave.topology.is_none() && leave.active_tasks.is_none());
        answer(&mut m, ok(epoch), T0 + 2);
        assert!(matches!(m.take_outcome(), Some(Ok(()))));
        assert_eq!(m.state(), MemberState::Unsubscribed);
    }
}

#[test]
fn close_before_joining_sends_nothing_and_a_leave_that_fails_still_ends() {
    let (mut m, _) = machine_with(config());
    m.close();
    assert_eq!(m.poll_request(T0), None);
    assert!(matches!(m.take_outcome(), Some(Ok(()))));
    let (mut m, _) = stable();
    m.close();
    heartbeat(m.poll_request(T0 + 10));
    m.handle_error("the broker closed the connection".into(), true, T0 + 20);
    assert!(matches!(m.take_outcome(), Some(Ok(()))));
    assert!(matches!(events(&mut m).last(), Some(StreamsEvent::Left(why)) if why.contains("session timeout")));
}

#[test]
fn without_an_answer_for_the_session_timeout_the_tasks_are_dropped_before_anyone_else_gets_them() {
    let (mut m, rec) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    m.handle_error("timed out".into(), true, T0 + 35_005);
    assert!(rec.take().is_empty(), "still within the session");
    // The coordinator cannot be found; 45 s after its last answer the member gives its tasks up.
    let mut now = T0 + 35_005;
    while now < T0 + 45_004 {
        now = m.poll_timeout().unwrap().max(now + 1).min(T0 + 45_004);
        if let Some(Request::FindCoordinator) = m.poll_request(now) {
            m.handle_error("connection refused".into(), true, now);
        }
    }
    assert!(rec.take().is_empty());
    m.poll_request(T0 + 45_005);
    assert_eq!(rec.take(), ["lost"]);
    assert_eq!((m.state(), m.epoch()), (MemberState::Joining, 0));
    assert!(m.owned().is_empty());
}

#[test]
fn a_static_member_that_dropped_its_tasks_waits_for_a_restarted_coordinator_to_release_its_instance_id() {
    // Joined as a static member, then 45 s without an answer (the coordinator restarted): the
    // member drops its tasks and joins again; the reloaded coordinator still holds its
    // group.instance.id and refuses the join until that membership expires.
    let start = |instance: Option<&str>| {
        let (mut m, rec) = stable_with_0_3(instance);
        heartbeat(m.poll_request(T0 + 5_000));
        m.handle_error("timed out".into(), true, T0 + 35_000);
        let mut now = T0 + 45_001;
        let mut request = m.poll_request(now);
        assert_eq!(rec.take(), ["lost"]);
        events(&mut m);
        let join = loop {
            match request.take().or_else(|| m.poll_request(now)) {
                Some(Request::FindCoordinator) => m.handle_response(Response::CoordinatorFound("b:9092".into()), now),
                Some(Request::Heartbeat(r)) => break *r,
                None => now = m.poll_timeout().unwrap().max(now + 1),
            }
        };
        assert_eq!((join.member_epoch, join.instance_id.as_deref()), (0, instance));
        (m, now)
    };
    let unreleased = || error(111, "Static member m with instance id rust-1 cannot join the group because the instance id is owned by m member.");

    // Refused for a while, then let in.
    let (mut m, mut now) = start(Some("rust-1"));
    for _ in 0..5 {
        answer(&mut m, unreleased(), now);
        assert!(m.take_outcome().is_none());
        assert!(matches!(events(&mut m).last(), Some(StreamsEvent::Retrying { error, .. }) if error.contains("(UNRELEASED_INSTANCE_ID")));
        now = m.poll_timeout().unwrap();
        assert_eq!(heartbeat(m.poll_request(now)).member_epoch, 0);
    }
    answer(&mut m, assigned(3, &[(0, &[3])], &[], &[]), now);
    assert_eq!((m.state(), m.epoch()), (MemberState::Acknowledging, 3));

    // Still refused twice the session timeout after the first refusal: the member stops.
    let (mut m, mut now) = start(Some("rust-1"));
    let first = now;
    while m.take_outcome().is_none() {
        answer(&mut m, unreleased(), now);
        if let Some(at) = m.poll_timeout() {
            now = at;
            heartbeat(m.poll_request(now));
        }
    }
    assert!(now >= first + 90_000 && now < first + 90_000 + 60_000, "stopped at {}", now - first);

    // A dynamic member has no instance id to wait for (the error cannot come): still fatal.
    let (mut m, now) = start(None);
    answer(&mut m, unreleased(), now);
    assert!(matches!(m.take_outcome(), Some(Err(_))));
}

#[test]
fn offsets_go_out_on_the_interval_when_changed_and_at_once_for_a_warm_up_that_caught_up() {
    let (mut m, rec) = stable();
    let warm = TaskId::new(1, 1);
    rec.sums.lock().unwrap().offsets.insert(warm.clone(), 10);
    rec.sums.lock().unwrap().end_offsets.insert(warm.clone(), 50_000);
    // Before the interval: unchanged offsets are not sent.
    let hb = heartbeat(m.poll_request(T0 + 5_005));
    assert!(hb.task_offsets.is_none());
    answer(&mut m, ok(1), T0 + 5_010);
    // The interval passed (60 s after the join): the changed sums go out.
    let hb = heartbeat(m.poll_request(T0 + 60_000));
    assert_eq!(hb.task_offsets.as_ref().map(Vec::len), Some(1));
    assert_eq!(hb.task_end_offsets.as_ref().map(Vec::len), Some(1));
    answer(&mut m, assigned(2, &[(0, &[0, 1])], &[(1, &[0])], &[(1, &[1])]), T0 + 60_010);
    heartbeat(m.poll_request(T0 + 60_010));
    answer(&mut m, ok(2), T0 + 60_020);
    // The warm-up is within acceptable.recovery.lag (10,000): its offsets go at the next beat.
    rec.sums.lock().unwrap().offsets.insert(warm.clone(), 45_000);
    let hb = heartbeat(m.poll_request(T0 + 65_020));
    assert_eq!(hb.task_offsets.as_ref().unwrap()[0].offset, 45_000);
}

#[test]
fn a_group_that_is_not_ready_is_reported_with_its_statuses() {
    let (mut m, _) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    let mut r = ok(1);
    r.status = Some(vec![Status { status_code: 1, status_detail: "Source topics lines are missing.".into() }]);
    answer(&mut m, r, T0 + 5_010);
    let seen = events(&mut m);
    assert!(matches!(&seen[0], StreamsEvent::Status(s) if s.len() == 1), "{seen:?}");
    assert!(matches!(&seen[1], StreamsEvent::Epoch { group_ready: false, .. }), "{seen:?}");
}

#[test]
fn a_network_error_refinds_the_coordinator_and_a_fatal_one_ends_the_member() {
    let (mut m, _) = stable();
    heartbeat(m.poll_request(T0 + 5_005));
    m.handle_error("the broker closed the connection".into(), true, T0 + 5_010);
    assert_eq!(m.poll_request(T0 + 5_110), Some(Request::FindCoordinator));
    m.handle_error("TLS: certificate not trusted".into(), false, T0 + 5_110);
    assert!(matches!(m.take_outcome(), Some(Err(StreamsMemberError::Connection(_)))));
}

#[test]
fn tasks_given_later_at_the_same_epoch_are_reported_as_they_come() {
    let (mut m, rec) = machine_with(config());
    m.poll_request(T0);
    m.handle_response(Response::CoordinatorFound("b:9092".into()), T0);
    heartbeat(m.poll_request(T0));
    // The join is answered with the epoch and no task yet: their owners have not let go.
    answer(&mut m, assigned(5, &[], &[], &[]), T0);
    let seen = events(&mut m);
    assert!(matches!(seen.last(), Some(StreamsEvent::Epoch { epoch: 5, tasks, .. }) if tasks.is_empty()), "{seen:?}");
    heartbeat(m.poll_request(T0 + 5_000));
    answer(&mut m, assigned(5, &[(1, &[2, 3])], &[], &[]), T0 + 5_010);
    assert_eq!(rec.take(), ["assigned active [1_2 1_3] standby [] warm-up []"]);
    let seen = events(&mut m);
    assert!(matches!(seen.last(), Some(StreamsEvent::Epoch { epoch: 5, tasks, .. }) if tasks.active.len() == 2), "{seen:?}");
}

#[test]
fn new_client_tags_go_out_at_once_then_not_again_until_an_error_clears_what_was_sent() {
    let (mut m, _rec) = stable();
    let now = T0 + 100;
    assert_eq!(m.poll_request(now), None, "nothing due before the interval");
    let mut tags = m.client_tags().clone();
    m.set_client_tags(tags.clone());
    assert_eq!(m.poll_request(now), None, "the same tags are no change");
    tags.insert("kstreams-assignor.probe".into(), "1".into());
    m.set_client_tags(tags.clone());
    assert_eq!(m.poll_timeout(), Some(0));
    let r = heartbeat(m.poll_request(now));
    let sent: Vec<(String, String)> = r.client_tags.unwrap().into_iter().map(|kv| (kv.key, kv.value)).collect();
    assert_eq!(sent, [("kstreams-assignor.probe".to_owned(), "1".to_owned()), ("zone".to_owned(), "eu-1".to_owned())]);
    assert!(r.topology.is_none() && r.active_tasks.is_none(), "only what changed");
    answer(&mut m, ok(2), now + 5);
    let next = heartbeat(m.poll_request(now + 5_005));
    assert!(next.client_tags.is_none(), "unchanged tags are null");
    // An error answer clears what was sent: the next heartbeat carries the tags again.
    answer(&mut m, error(14, "loading"), now + 5_010);
    let again = heartbeat(m.poll_request(now + 60_000));
    assert_eq!(again.client_tags.map(|t| t.len()), Some(2));
}
