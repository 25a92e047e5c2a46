//! The prober's verdict on described groups.

use std::collections::BTreeMap;

use super::{Verdict, assignment_configs, judge, target_fingerprint};
use crate::client::streams::{
    Assignment, DescribedGroup, KeyValue, Member, Subtopology, TaskIds, TaskOffset, TopicInfo, Topology,
};
use crate::engine::streams::PROBE_TAG;

fn tasks(partitions: &[i32]) -> Vec<TaskIds> {
    if partitions.is_empty() {
        return Vec::new();
    }
    vec![TaskIds { subtopology_id: "0".into(), partitions: partitions.to_vec() }]
}

fn offsets(list: &[(i32, i64)]) -> Vec<TaskOffset> {
    list.iter().map(|&(partition, offset)| TaskOffset { subtopology_id: "0".into(), partition, offset }).collect()
}

fn member(id: &str, process: &str, active: &[i32], standby: &[i32], reported: &[(i32, i64)]) -> Member {
    let assignment = Assignment { active_tasks: tasks(active), standby_tasks: tasks(standby), warmup_tasks: Vec::new() };
    Member {
        member_id: id.into(),
        member_epoch: 7,
        process_id: process.into(),
        task_offsets: offsets(reported),
        target_assignment: assignment.clone(),
        assignment,
        ..Member::default()
    }
}

fn prober() -> Member {
    let mut m = member("probe", "prober", &[], &[], &[]);
    m.client_tags = vec![KeyValue { key: PROBE_TAG.into(), value: "0".into() }];
    m
}

/// p1 runs both tasks of a stateful subtopology at offset 1,000; p2 holds a copy of 0_0 that
/// has restored to `copy`.
fn group(copy: i64) -> DescribedGroup {
    let mut a = member("a", "p1", &[0, 1], &[], &[(0, 1_000), (1, 1_000)]);
    a.task_end_offsets = offsets(&[(0, 1_000), (1, 1_000)]);
    let changelog = TopicInfo { name: "app-store-changelog".into(), ..TopicInfo::default() };
    let subtopology = Subtopology {
        subtopology_id: "0".into(),
        source_topics: vec!["in".into()],
        state_changelog_topics: vec![changelog],
        ..Subtopology::default()
    };
    DescribedGroup {
        error_code: 0,
        error_message: None,
        group_id: "app".into(),
        group_state: "Stable".into(),
        group_epoch: 7,
        assignment_epoch: 7,
        topology: Some(Topology { epoch: 0, subtopologies: Some(vec![subtopology]) }),
        members: vec![a, member("b", "p2", &[], &[0], &[(0, copy)]), prober()],
        authorized_operations: 0,
        topology_description: None,
        topology_description_status: 0,
        assignor_name: Some("optimized".into()),
    }
}

fn partitions() -> BTreeMap<String, i32> {
    BTreeMap::from([("in".to_owned(), 2)])
}

fn configs() -> crate::engine::streams::StreamsAssignmentConfigs {
    let described = BTreeMap::from([("streams.acceptable.recovery.lag".to_owned(), "10".to_owned())]);
    assignment_configs(&described)
}

#[test]
fn a_copy_far_behind_waits_and_one_caught_up_asks_for_an_assignment() {
    let behind = judge(&group(0), &partitions(), &configs(), 0).unwrap();
    assert_eq!(behind.verdict, Verdict::NothingWaiting);
    assert_eq!((behind.members, behind.standby_tasks), (2, 1), "the prober is not counted");
    let caught_up = judge(&group(995), &partitions(), &configs(), 60_000).unwrap();
    assert_eq!(caught_up.verdict, Verdict::MovesWaiting);
}

#[test]
fn a_group_that_is_still_reconciling_is_not_asked() {
    let mut g = group(995);
    g.group_epoch = 8;
    assert_eq!(judge(&g, &partitions(), &configs(), 0).unwrap().verdict, Verdict::Reconciling);
    let mut g = group(995);
    g.members[1].target_assignment.active_tasks = tasks(&[0]);
    assert_eq!(judge(&g, &partitions(), &configs(), 0).unwrap().verdict, Verdict::Reconciling);
}

#[test]
fn source_topics_without_partitions_are_an_error_in_words() {
    let err = judge(&group(995), &BTreeMap::new(), &configs(), 0).unwrap_err();
    assert!(err.contains("subtopology 0 has no partitions yet"), "{err}");
}

#[test]
fn missing_or_bad_configs_take_the_coordinators_defaults() {
    let c = assignment_configs(&BTreeMap::from([("streams.num.standby.replicas".to_owned(), "x".to_owned())]));
    assert_eq!((c.num_standby_replicas, c.num_warmup_replicas, c.acceptable_recovery_lag), (0, 2, 10_000));
    let c = assignment_configs(&BTreeMap::from([
        ("streams.num.standby.replicas".to_owned(), "1".to_owned()),
        ("streams.rack.aware.assignment.tags".to_owned(), "zone, rack".to_owned()),
    ]));
    assert_eq!(c.num_standby_replicas, 1);
    assert_eq!(c.rack_aware_assignment_tags, ["zone", "rack"]);
}

#[test]
fn the_fingerprint_follows_the_target_not_the_member_order_or_the_current_tasks() {
    let g = group(0);
    let mut reordered = g.clone();
    reordered.members.reverse();
    assert_eq!(target_fingerprint(&g), target_fingerprint(&reordered));
    let mut current = g.clone();
    current.members[1].assignment.standby_tasks = Vec::new();
    assert_eq!(target_fingerprint(&g), target_fingerprint(&current), "only the target counts");
    let mut moved = g.clone();
    moved.members[0].target_assignment.active_tasks = tasks(&[1]);
    moved.members[1].target_assignment.active_tasks = tasks(&[0]);
    assert_ne!(target_fingerprint(&g), target_fingerprint(&moved));
    let mut standby_to_active = g;
    let b = &mut standby_to_active.members[1].target_assignment;
    b.active_tasks = std::mem::take(&mut b.standby_tasks);
    assert_ne!(target_fingerprint(&standby_to_active), target_fingerprint(&moved));
}
