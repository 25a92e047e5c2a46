//! The broker's streams sticky assignor (`engine::streams::assign_sticky`): the recorded answers
//! of kafka-group-coordinator 4.4.0 replayed without Java, and its behaviour case by case.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kstreams_assignor::engine::streams::testdata::{CaseSize, random_case};
use kstreams_assignor::engine::streams::{
    MAX_STREAMS_TASKS, StreamsAssignError, StreamsAssignmentConfigs, StreamsGroupAssignment, StreamsGroupSpec, StreamsMemberSpec,
    StreamsSubtopology, StreamsTopology, assign_sticky,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    #[serde(default)]
    result: Option<StreamsGroupAssignment>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    spec: StreamsGroupSpec,
    topology: StreamsTopology,
    expected: Expected,
}

#[test]
fn recorded_cases_match_kafka_4_4() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/streams-sticky");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    let (mut count, mut refused, mut failures) = (0, 0, Vec::new());
    for path in &files {
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let case: Case = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            count += 1;
            match (assign_sticky(&case.spec, &case.topology), &case.expected) {
                (Ok(actual), Expected { result: Some(expected), .. }) if &actual == expected => {}
                (Err(StreamsAssignError::NoMembers(task)), Expected { error: Some(message), .. })
                    if *message == format!("No process available to assign active task {task}.") =>
                {
                    refused += 1;
                }
                (actual, _) => failures.push(format!("{}: engine {actual:?}", case.id)),
            }
        }
    }
    assert!(count >= 300, "only {count} recorded cases in {}", dir.display());
    assert!(refused >= 1, "no recorded refusal");
    assert!(failures.is_empty(), "{} of {count} cases differ from Kafka:\n{}", failures.len(), failures.join("\n"));
}

/// Tasks as (subtopology, partition).
type TaskList = Vec<(String, i32)>;

/// A member's active and standby tasks.
fn tasks(target: &StreamsGroupAssignment, member: &str) -> (TaskList, TaskList) {
    let flat = |t: &BTreeMap<String, BTreeSet<i32>>| t.iter().flat_map(|(s, p)| p.iter().map(|&p| (s.clone(), p))).collect();
    let m = &target.members[member];
    (flat(&m.active_tasks), flat(&m.standby_tasks))
}

fn one_stateful(partitions: u32) -> StreamsTopology {
    StreamsTopology::new([StreamsSubtopology::new("0", partitions, true)])
}

#[test]
fn a_previous_active_owner_keeps_its_tasks() {
    let spec = StreamsGroupSpec::new([
        StreamsMemberSpec::new("a", "p1").with_active_task("0", 2, 5).with_active_task("0", 3, 5),
        StreamsMemberSpec::new("b", "p2").with_active_task("0", 0, 5).with_active_task("0", 1, 5),
    ]);
    let target = assign_sticky(&spec, &one_stateful(4)).unwrap();
    assert_eq!(tasks(&target, "a").0, [("0".into(), 2), ("0".into(), 3)]);
    assert_eq!(tasks(&target, "b").0, [("0".into(), 0), ("0".into(), 1)]);
}

#[test]
fn a_standby_goes_to_the_previous_standby_then_to_the_most_caught_up_reporter() {
    // Task 0_0 is active on a. Members iterate a, b, c (Java's HashMap of one-letter ids), so
    // without the ranking b would come first both times.
    let group = |b: StreamsMemberSpec, c: StreamsMemberSpec| {
        StreamsGroupSpec::new([StreamsMemberSpec::new("a", "p1").with_active_task("0", 0, 1), b, c])
            .with_configs(StreamsAssignmentConfigs::default().with_num_standby_replicas(1))
    };
    let previous_standby = group(
        StreamsMemberSpec::new("b", "p2").with_task_offset("0", 0, 900),
        StreamsMemberSpec::new("c", "p3").with_standby_task("0", 0).with_task_offset("0", 0, 10),
    );
    let target = assign_sticky(&previous_standby, &one_stateful(1)).unwrap();
    assert_eq!(tasks(&target, "c").1, [("0".into(), 0)]);
    let reporters = group(
        StreamsMemberSpec::new("b", "p2").with_task_offset("0", 0, 10),
        StreamsMemberSpec::new("c", "p3").with_task_offset("0", 0, 900),
    );
    let target = assign_sticky(&reporters, &one_stateful(1)).unwrap();
    assert_eq!(tasks(&target, "c").1, [("0".into(), 0)]);
}

#[test]
fn warm_up_settings_leave_the_target_as_it_is() {
    for seed in 0..50 {
        let case = random_case(7, seed, CaseSize::Full);
        let plain = assign_sticky(&case.spec, &case.topology);
        let mut warm = case.spec.clone();
        warm.configs = warm.configs.clone().with_num_warmup_replicas(3).with_acceptable_recovery_lag(0);
        assert_eq!(assign_sticky(&warm, &case.topology), plain, "{}", case.id);
        if let Ok(target) = plain {
            assert!(target.members.values().all(|m| m.warmup_tasks.is_empty()), "{}", case.id);
        }
    }
}

#[test]
fn every_task_is_active_once_and_no_process_holds_a_task_twice() {
    for seed in 0..300 {
        let case = random_case(11, seed, CaseSize::Full);
        let Ok(target) = assign_sticky(&case.spec, &case.topology) else {
            assert!(case.spec.members.is_empty(), "{}: refused", case.id);
            continue;
        };
        assert_eq!(target.members.len(), case.spec.members.len(), "{}", case.id);
        let process: BTreeMap<_, _> = case.spec.members.iter().map(|m| (m.member_id.clone(), m.process_id.clone())).collect();
        let mut active = BTreeMap::new();
        let mut held = BTreeSet::new();
        for (id, m) in &target.members {
            let (a, s) = tasks(&target, id);
            for t in &a {
                assert!(active.insert(t.clone(), id.clone()).is_none(), "{}: {t:?} active twice", case.id);
            }
            for t in a.into_iter().chain(s) {
                assert!(held.insert((process[id].clone(), t.clone())), "{}: {t:?} twice on {}", case.id, process[id]);
            }
            assert!(m.warmup_tasks.is_empty());
        }
        let total: u32 = case.topology.subtopologies.iter().map(|s| s.partitions).sum();
        assert_eq!(active.len(), total as usize, "{}", case.id);
    }
}

#[test]
fn assigning_twice_gives_the_same_target() {
    let case = random_case(3, 5, CaseSize::Full);
    assert_eq!(assign_sticky(&case.spec, &case.topology), assign_sticky(&case.spec, &case.topology));
}

#[test]
fn refuses_duplicate_members_and_subtopologies() {
    let topology = one_stateful(2);
    let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("a", "p1"), StreamsMemberSpec::new("a", "p2")]);
    assert_eq!(assign_sticky(&spec, &topology), Err(StreamsAssignError::DuplicateMember("a".into())));
    let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("a", "p1")]);
    let twice = StreamsTopology::new([StreamsSubtopology::new("0", 1, false), StreamsSubtopology::new("0", 2, true)]);
    assert_eq!(assign_sticky(&spec, &twice), Err(StreamsAssignError::DuplicateSubtopology("0".into())));
}

#[test]
fn refuses_subtopologies_without_tasks_and_topologies_beyond_the_task_bound() {
    let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("a", "p1")]);
    let empty = StreamsTopology::new([StreamsSubtopology::new("x", 0, false)]);
    assert_eq!(assign_sticky(&spec, &empty), Err(StreamsAssignError::NoPartitions("x".into())));
    let huge = StreamsTopology::new([StreamsSubtopology::new("x", u32::MAX, false)]);
    assert!(matches!(assign_sticky(&spec, &huge), Err(StreamsAssignError::TooManyPartitions { .. })));
    let spec = spec.with_configs(StreamsAssignmentConfigs::default().with_num_standby_replicas(u32::MAX));
    let err = assign_sticky(&spec, &one_stateful(2)).unwrap_err();
    assert!(matches!(err, StreamsAssignError::TooManyTasks { max: MAX_STREAMS_TASKS, .. }), "{err}");
}

#[test]
fn refuses_tasks_without_members_as_kafka_does() {
    let err = assign_sticky(&StreamsGroupSpec::new([]), &one_stateful(3)).unwrap_err();
    assert_eq!(err.to_string(), "no process available to assign active task 0_0");
    assert_eq!(assign_sticky(&StreamsGroupSpec::new([]), &StreamsTopology::new([])), Ok(StreamsGroupAssignment::default()));
}
