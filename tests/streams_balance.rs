//! `optimized` on a streams group keeps the balance Kafka's `sticky` keeps: no member above the
//! cap of ceil(active tasks / members), and never a wider per-member spread of active tasks than
//! `sticky`'s on the same group. The streams protocol has no probing rebalance, so a target that
//! is unbalanced now stays so until the group changes.

use kstreams_assignor::engine::streams::testdata::{CaseSize, random_case};
use kstreams_assignor::engine::streams::{
    StreamsAssignmentConfigs, StreamsGroupAssignment, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory, StreamsSubtopology,
    StreamsTopology, assign_optimized, assign_sticky,
};

const NOW: i64 = 1_700_000_000_000;

/// The fewest and the most active tasks of a member.
fn spread(a: &StreamsGroupAssignment) -> (usize, usize) {
    let counts: Vec<usize> = a.members.values().map(|m| m.task_counts().0).collect();
    (counts.iter().copied().min().unwrap_or(0), counts.iter().copied().max().unwrap_or(0))
}

#[test]
fn a_caught_up_process_does_not_take_every_task_of_a_new_group() {
    // Three one-member processes, one stateful sub-topology of 2 partitions, no owners; m6
    // reports offsets of 20,000 for both tasks.
    let topology = StreamsTopology::new([StreamsSubtopology::new("0", 2, true)]);
    let m6 = StreamsMemberSpec::new("m6", "p6").with_task_offset("0", 0, 20_000).with_task_offset("0", 1, 20_000);
    let configs = StreamsAssignmentConfigs::default().with_num_warmup_replicas(2).with_acceptable_recovery_lag(10_000);
    let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("m4", "p4"), StreamsMemberSpec::new("m5", "p5"), m6]).with_configs(configs);
    let sticky = assign_sticky(&spec, &topology).unwrap();
    let ours = assign_optimized(&spec, &topology, &mut StreamsMemory::new(), NOW).unwrap();
    assert_eq!(spread(&sticky), (0, 1));
    assert_eq!(spread(&ours), (0, 1), "{ours:?}");
    assert_eq!(ours.members["m6"].task_counts().0, 1, "the caught-up process keeps one of them: {ours:?}");
}

#[test]
fn no_generated_group_is_less_balanced_than_under_sticky() {
    let (mut checked, mut above_cap, mut wider) = (0, Vec::new(), Vec::new());
    for i in 0..600 {
        let case = random_case(39, i, CaseSize::Full);
        let (Ok(sticky), Ok(ours)) =
            (assign_sticky(&case.spec, &case.topology), assign_optimized(&case.spec, &case.topology, &mut StreamsMemory::new(), NOW))
        else {
            continue;
        };
        checked += 1;
        let tasks: usize = ours.members.values().map(|m| m.task_counts().0).sum();
        let cap = tasks.div_ceil(ours.members.len().max(1));
        let ((smin, smax), (omin, omax)) = (spread(&sticky), spread(&ours));
        if omax > cap.max(smax) {
            above_cap.push(format!("{}: {omax} > cap {cap}", case.id));
        }
        if omax - omin > smax - smin {
            wider.push(format!("{}: {omin}..{omax} against sticky's {smin}..{smax}", case.id));
        }
    }
    assert!(checked > 500, "{checked}");
    assert!(above_cap.is_empty() && wider.is_empty(), "of {checked}: above the cap {above_cap:?}; wider {wider:?}");
}
