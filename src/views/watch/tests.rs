//! The sans-IO core on hand-made looks: each cause, the watcher's generations, warm-up progress.

use crate::views::watch::*;
use crate::engine::AssignmentConfigs;


fn look(at_ms: i64, epoch: i32, members: &[observe::MemberSketch<'_>]) -> Observation {
    observe::streams_look(at_ms, epoch, members)
}

/// The moves from `prev` to `cur` with their causes, as `task from -> to (cause)` texts.
fn explained(prev: &Observation, cur: &Observation) -> Vec<(String, Cause)> {
    diff::moves(prev, cur)
        .into_iter()
        .map(|m| {
            let side = |r: &Option<Replica>| r.as_ref().map_or("-".to_owned(), |r| format!("{} {}", r.process_id, r.role.name()));
            let cause = cause::name(&m, prev, cur);
            (format!("{} {} -> {}", m.task, side(&m.from), side(&m.to)), cause)
        })
        .collect()
}

fn pairs(v: &[(&str, Cause)]) -> Vec<(String, Cause)> {
    v.iter().map(|(t, c)| ((*t).to_owned(), *c)).collect()
}

#[test]
fn a_process_that_joins_takes_tasks_and_warm_ups_for_member_joined() {
    let prev = look(0, 4, &[("m1", "p1", &["0_0", "1_0"], &[], &[])]);
    let cur = look(1_000, 5, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["1_0"], &[], &["0_0"])]);
    assert_eq!(
        explained(&prev, &cur),
        pairs(&[("0_0 - -> p2 warm-up", Cause::MemberJoined), ("1_0 p1 active -> p2 active", Cause::MemberJoined)])
    );
    let (joined, left) = diff::membership(&prev, &cur);
    assert_eq!(joined, [MemberChange { member_id: "m2".into(), process_id: "p2".into() }]);
    assert!(left.is_empty());
}

#[test]
fn tasks_of_a_process_that_left_move_for_member_left_even_to_a_standby() {
    let prev = look(0, 7, &[("m1", "p1", &["0_0"], &["0_1"], &[]), ("m2", "p2", &["0_1"], &["0_0"], &[])]);
    let cur = look(1_000, 8, &[("m1", "p1", &["0_0", "0_1"], &[], &[])]);
    assert_eq!(
        explained(&prev, &cur),
        pairs(&[
            ("0_0 p2 standby -> -", Cause::MemberLeft),
            ("0_1 p2 active -> p1 active", Cause::MemberLeft),
            ("0_1 p1 standby -> -", Cause::MemberLeft),
        ])
    );
}

#[test]
fn a_warm_up_that_becomes_active_is_promoted_and_the_old_active_keeps_a_standby() {
    let prev = look(0, 9, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &["0_0"])]);
    let cur = look(1_000, 10, &[("m1", "p1", &[], &["0_0"], &[]), ("m2", "p2", &["0_0", "0_1"], &[], &[])]);
    assert_eq!(
        explained(&prev, &cur),
        pairs(&[("0_0 p1 active -> p2 active", Cause::WarmupPromoted), ("0_0 p2 warm-up -> p1 standby", Cause::WarmupPromoted)])
    );
}

#[test]
fn a_standby_promoted_at_a_probing_rebalance_is_a_warm_up_and_other_moves_are_the_probing_rebalance() {
    let mut prev = look(0, 3, &[("m1", "p1", &["0_0", "0_1"], &[], &[]), ("m2", "p2", &[], &["0_0"], &[]), ("m3", "p3", &[], &["0_1"], &[])]);
    prev.members[0].next_rebalance_ms = Some(600_000);
    let cur = look(600_500, 4, &[("m1", "p1", &["0_1"], &[], &[]), ("m2", "p2", &["0_0"], &["0_1"], &[]), ("m3", "p3", &[], &[], &[])]);
    assert!(cause::probing_due(&prev, &cur));
    assert_eq!(
        explained(&prev, &cur),
        pairs(&[
            ("0_0 p1 active -> p2 active", Cause::WarmupPromoted),
            ("0_0 p2 standby -> -", Cause::WarmupPromoted),
            ("0_1 p3 standby -> p2 standby", Cause::ProbingRebalance),
        ])
    );
    // Long before the deadline the same moves are the assignor's balancing.
    let early = Observation { at_ms: 10_000, ..cur.clone() };
    assert!(explained(&prev, &early).iter().all(|(_, c)| *c == Cause::LoadBalance), "{:?}", explained(&prev, &early));
}

#[test]
fn moves_between_the_same_processes_without_a_probing_rebalance_are_load_balance() {
    let prev = look(0, 1, &[("m1", "p1", &["0_0", "0_1"], &[], &[]), ("m2", "p2", &[], &[], &[])]);
    let cur = look(1_000, 2, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &[])]);
    assert_eq!(explained(&prev, &cur), pairs(&[("0_1 p1 active -> p2 active", Cause::LoadBalance)]));
}

#[test]
fn a_new_topology_epoch_or_a_new_task_is_a_topology_change() {
    let prev = look(0, 1, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &[])]);
    let mut cur = look(1_000, 2, &[("m1", "p1", &["0_1"], &[], &[]), ("m2", "p2", &["0_0"], &[], &[])]);
    cur.topology_epoch = Some(1);
    assert!(explained(&prev, &cur).iter().all(|(_, c)| *c == Cause::TopologyChange));
    let grown = look(1_000, 2, &[("m1", "p1", &["0_0", "1_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &[])]);
    assert_eq!(explained(&prev, &grown), pairs(&[("1_0 - -> p1 active", Cause::TopologyChange)]));
}

#[test]
fn the_watcher_tells_each_new_epoch_once_and_waits_in_between() {
    let mut w = Watcher::new(AssignmentConfigs::default());
    let a = look(0, 1, &[("m1", "p1", &["0_0", "0_1"], &[], &[])]);
    let Event::Generation(first) = w.observe(a.clone()) else { panic!("a first generation") };
    assert!(first.first && first.moves.is_empty());
    assert!(matches!(w.observe(Observation { at_ms: 500, ..a.clone() }), Event::Waiting(ref x) if !x.rebalancing));
    let busy = Observation { settled: false, state: "Assigning".into(), at_ms: 700, ..a.clone() };
    assert!(matches!(w.observe(busy), Event::Waiting(ref x) if x.rebalancing && x.epoch == Some(1)));
    let b = look(1_000, 2, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &[])]);
    let Event::Generation(second) = w.observe(b) else { panic!("a second generation") };
    assert_eq!(second.epoch, Some(2));
    assert_eq!(second.moves.len(), 1);
    assert_eq!(second.moves[0].cause, Cause::MemberJoined);
    let s = w.summary();
    assert_eq!((s.looks, s.generations), (4, 2));
    assert_eq!(s.moves_by_cause.get(&Cause::MemberJoined), Some(&1));
    let line = second.line();
    assert!(line.contains("epoch 2: 2 process(es), 2 member(s); joined p2 (m2); 1 move(s): 0_1 p1 active -> p2 active (member joined)"), "{line}");
    assert!(s.line().contains("1 move(s): member joined 1"), "{}", s.line());
}

#[test]
fn a_classic_look_with_new_bytes_in_the_same_generation_is_new() {
    let mut w = Watcher::new(AssignmentConfigs::default());
    let mut a = look(0, 1, &[("m1", "p1", &["0_0"], &[], &[])]);
    a.protocol = Protocol::Classic;
    w.observe(a.clone());
    let b = Observation { fingerprint: a.fingerprint ^ 1, at_ms: 1_000, ..a };
    assert!(matches!(w.observe(b), Event::Generation(_)));
}

#[test]
fn warm_up_progress_nets_out_what_the_changelog_grew() {
    let configs = AssignmentConfigs::default().with_acceptable_recovery_lag(100);
    let mut before = look(0, 5, &[("m2", "p2", &[], &[], &["0_0"])]);
    before.members[0].offset_sums.insert("0_0".into(), 1_000);
    before.members[0].end_offset_sums.insert("0_0".into(), 11_000);
    let mut now = before.clone();
    now.at_ms = 2_000;
    now.members[0].offset_sums.insert("0_0".into(), 5_000);
    now.members[0].end_offset_sums.insert("0_0".into(), 12_000);
    let p = &warmup::progress(&now, Some(&before), &configs)[0];
    assert_eq!(p.lag, Some(7_000));
    assert_eq!(p.restore_rate, Some(1_500.0), "4,000 restored less 1,000 produced over 2 s");
    assert_eq!(p.eta_ms, Some(4_600));
    assert!(!p.caught_up);
    // Without a second look: the lag, no rate, no time.
    let alone = &warmup::progress(&now, None, &configs)[0];
    assert_eq!((alone.lag, alone.restore_rate, alone.eta_ms), (Some(7_000), None, None));
    // Falling behind: no time is predicted.
    now.members[0].end_offset_sums.insert("0_0".into(), 30_000);
    assert_eq!(warmup::progress(&now, Some(&before), &configs)[0].eta_ms, None);
}

#[test]
fn a_classic_standby_shows_only_when_it_lags_and_a_running_task_has_no_lag() {
    let configs = AssignmentConfigs::default().with_acceptable_recovery_lag(10);
    let mut o = look(0, 1, &[("m1", "p1", &["0_0"], &["0_1"], &[]), ("m2", "p2", &["0_1"], &["0_0"], &[])]);
    o.protocol = Protocol::Classic;
    o.end_offset_sums = [("0_0".to_owned(), 500), ("0_1".to_owned(), 500)].into();
    o.members[0].offset_sums = [("0_0".to_owned(), -2), ("0_1".to_owned(), 495)].into();
    o.members[1].offset_sums = [("0_1".to_owned(), -2), ("0_0".to_owned(), 100)].into();
    let p = warmup::progress(&o, None, &configs);
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].task.as_str(), p[0].process_id.as_str(), p[0].role, p[0].lag), ("0_0", "p2", Role::Standby, Some(400)));
    // Unknown offsets give no lag, and a standby without one is not shown.
    o.members[1].offset_sums.insert("0_0".into(), crate::wire::UNKNOWN_OFFSET_SUM);
    assert!(warmup::progress(&o, None, &configs).is_empty());
}

#[test]
fn the_record_names_the_epoch_as_kafka_and_keeps_whole_process_ids() {
    let mut w = Watcher::new(AssignmentConfigs::default());
    let Event::Generation(g) = w.observe(look(0, 3, &[("m1", "0123456789abcdef", &["0_0"], &[], &[])])) else { panic!() };
    let r = g.record();
    assert_eq!(r["groupEpoch"], 3);
    assert!(r.get("epoch").is_none());
    assert_eq!(r["input"], serde_json::Value::Null);
    assert!(g.line().contains("1 process(es)"));
    let mut c = look(0, 3, &[("m1", "p1", &["0_0"], &[], &[])]);
    c.protocol = Protocol::Classic;
    let Event::Generation(g) = Watcher::new(AssignmentConfigs::default()).observe(c) else { panic!() };
    assert_eq!(g.record()["generationId"], 3);
}

#[test]
fn the_waiting_line_says_whether_the_group_rebalances_is_empty_or_waits_for_a_probing_rebalance() {
    let mut w = Watcher::new(AssignmentConfigs::default());
    let mut a = look(0, 4, &[("m1", "p1", &["0_0"], &[], &[])]);
    a.protocol = Protocol::Classic;
    a.members[0].next_rebalance_ms = Some(60_000);
    w.observe(a.clone());
    let Event::Waiting(x) = w.observe(Observation { at_ms: 15_000, ..a.clone() }) else { panic!() };
    assert_eq!(x.line(Protocol::Classic), "generation 4, state Stable, 1 member(s); probing rebalance in 45 s");
    let busy = Observation { settled: false, state: "PreparingRebalance".into(), at_ms: 61_000, ..a.clone() };
    let Event::Waiting(x) = w.observe(busy) else { panic!() };
    assert_eq!(x.line(Protocol::Classic), "rebalancing (state PreparingRebalance), 1 member(s); probing rebalance due 1 s ago");
    let empty = Observation { settled: false, state: "Empty".into(), members: Vec::new(), at_ms: 62_000, ..a };
    let Event::Waiting(x) = w.observe(empty) else { panic!() };
    assert!(x.line(Protocol::Classic).starts_with("no members (state Empty)"), "{}", x.line(Protocol::Classic));
}

#[test]
fn a_streams_look_drops_the_end_offsets_a_member_does_not_know_yet() {
    use crate::client::streams::{DescribedGroup, Member, TaskOffset};
    use crate::views::streams::describe::StreamsGroupDescription;
    let offset = |p: i32, offset: i64| TaskOffset { subtopology_id: "0".into(), partition: p, offset };
    let member = |id: &str, end: i64| Member {
        member_id: id.into(),
        process_id: format!("p-{id}"),
        task_offsets: vec![offset(0, 40)],
        task_end_offsets: vec![offset(0, end), offset(1, i64::MAX)],
        ..Member::default()
    };
    let group = DescribedGroup { members: vec![member("a", 100), member("b", i64::MAX)], ..DescribedGroup::default() };
    let look = observe::streams(&StreamsGroupDescription { version: 0, coordinator: "b:9092".into(), group }, 0);
    assert_eq!(look.members[0].end_offset_sums, [("0_0".to_owned(), 100)].into(), "1_0's Long.MAX_VALUE is no end");
    assert!(look.members[1].end_offset_sums.is_empty());
    // The group's end is the largest known one, not the sentinel.
    assert_eq!(look.end_offset_sums, [("0_0".to_owned(), 100)].into());
}
