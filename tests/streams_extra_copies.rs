//! The copies of stateful tasks `optimized` hands out on the streams protocol beyond
//! `num.standby.replicas` (warm-ups, kept copies, spares; all standbys on the wire) stay within
//! `group.streams.num.warmup.replicas`, 0 turns them off, and the count the memory reports (the
//! plugin's log line) is the number of copies beyond the standbys asked for.

use std::collections::{BTreeMap, BTreeSet};

use kstreams_assignor::engine::streams::testdata::{CaseSize, large_case, random_case};
use kstreams_assignor::engine::streams::{
    ExtraCopies, StreamsGroupAssignment, StreamsGroupSpec, StreamsMemory, StreamsTopology, assign_optimized,
};

const NOW: i64 = 1_700_000_000_000;

/// Copies of stateful tasks (standbys and warm-ups), and the standbys asked for: per stateful
/// task `num.standby.replicas`, or one per other process where there are fewer processes.
fn copies(spec: &StreamsGroupSpec, topology: &StreamsTopology, a: &StreamsGroupAssignment) -> (usize, usize) {
    let processes: BTreeSet<&str> = spec.members.iter().map(|m| m.process_id.as_str()).collect();
    let stateful: usize = topology.subtopologies.iter().filter(|s| s.stateful).map(|s| s.partitions as usize).sum();
    let asked = stateful * (spec.configs.num_standby_replicas as usize).min(processes.len().saturating_sub(1));
    let held: usize = a.members.values().map(|m| m.task_counts().1 + m.task_counts().2).sum();
    (held, asked)
}

/// Assigns `spec` with `group.streams.num.warmup.replicas` = `bound`; the answer and the count.
fn assign_within(spec: &StreamsGroupSpec, topology: &StreamsTopology, bound: u32) -> Option<(StreamsGroupAssignment, ExtraCopies)> {
    let mut spec = spec.clone();
    spec.configs = spec.configs.clone().with_num_warmup_replicas(bound);
    let mut memory = StreamsMemory::new();
    let a = assign_optimized(&spec, topology, &mut memory, NOW).ok()?;
    Some((a, memory.extra_copies()))
}

#[test]
fn the_extra_copies_stay_within_the_bound_and_are_counted_on_random_groups() {
    let (mut checked, mut with_extras, mut cut) = (0, 0, 0);
    for i in 0..400 {
        let case = random_case(56, i, CaseSize::Full);
        for bound in [0, 1, 2, 5] {
            let Some((a, extra)) = assign_within(&case.spec, &case.topology, bound) else { continue };
            let (held, asked) = copies(&case.spec, &case.topology, &a);
            assert!(extra.total() <= bound as usize, "{}: {extra:?} past {bound}", case.id);
            assert_eq!(held, asked + extra.total(), "{}, bound {bound}: {held} copies, {asked} asked for, {extra:?}", case.id);
            assert_eq!(extra.bound, bound as usize);
            if bound == 0 {
                let warmups: usize = a.members.values().map(|m| m.task_counts().2).sum();
                assert_eq!((warmups, extra.total()), (0, 0), "{}", case.id);
            }
            checked += 1;
            with_extras += usize::from(extra.total() > 0);
            cut += usize::from(extra.left_out > 0);
        }
    }
    assert!(checked > 1_000 && with_extras > 50 && cut > 20, "{checked} checked, {with_extras} with extra copies, {cut} cut");
}

#[test]
fn zero_turns_the_extra_copies_off_on_a_large_group() {
    // 200 one-member processes over 2,000 stateful tasks, a tenth of them new, offsets reported.
    let case = large_case(200, 1, 2_000, 1);
    let (a, extra) = assign_within(&case.spec, &case.topology, 2).unwrap();
    let (held, asked) = copies(&case.spec, &case.topology, &a);
    assert!(extra.total() <= 2 && extra.left_out > 0, "{extra:?}");
    assert_eq!(held, asked + extra.total());
    let (a, extra) = assign_within(&case.spec, &case.topology, 0).unwrap();
    let (held, asked) = copies(&case.spec, &case.topology, &a);
    assert_eq!((held, extra.total()), (asked, 0), "{extra:?}");
    // Every stateful task keeps its standby: only copies beyond them go.
    let mut per_task: BTreeMap<(&str, i32), usize> = BTreeMap::new();
    for m in a.members.values() {
        for (sub, parts) in &m.standby_tasks {
            parts.iter().for_each(|&p| *per_task.entry((sub.as_str(), p)).or_default() += 1);
        }
    }
    assert_eq!((per_task.len(), per_task.values().max().copied()), (2_000, Some(1)));
}
