//! `optimized` on a streams group moves no active task the balance does not need: a process
//! keeps its tasks up to its members' share, as under Kafka's `sticky`, and no process gains a
//! task of a kind (stateful, stateless) while it loses one of its own of that kind.

use std::collections::BTreeMap;

use kstreams_assignor::engine::streams::testdata::{CaseSize, random_case};
use kstreams_assignor::engine::streams::{
    StreamsGroupAssignment, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory, StreamsSubtopology, StreamsTopology, assign_optimized,
    assign_sticky,
};

const NOW: i64 = 1_700_000_000_000;

/// Each active task's process under `a`, the members' processes as `spec` names them.
fn owners(spec: &StreamsGroupSpec, a: &StreamsGroupAssignment) -> BTreeMap<(String, i32), String> {
    let process: BTreeMap<&str, &str> = spec.members.iter().map(|m| (m.member_id.as_str(), m.process_id.as_str())).collect();
    let mut out = BTreeMap::new();
    for (member, assignment) in &a.members {
        for (sub, parts) in &assignment.active_tasks {
            for &p in parts {
                out.insert((sub.clone(), p), process[member.as_str()].to_owned());
            }
        }
    }
    out
}

#[test]
fn stateless_tasks_stay_on_a_process_within_its_members_share() {
    // p1's two members run a stateless task each; p2's two members join. Every member is within
    // one task of every other already, as `sticky` keeps it: nothing moves.
    let topology = StreamsTopology::new([StreamsSubtopology::new("0", 2, false)]);
    let spec = StreamsGroupSpec::new([
        StreamsMemberSpec::new("a1", "p1").with_active_task("0", 0, 1),
        StreamsMemberSpec::new("a2", "p1").with_active_task("0", 1, 1),
        StreamsMemberSpec::new("b1", "p2"),
        StreamsMemberSpec::new("b2", "p2"),
    ]);
    let ours = assign_optimized(&spec, &topology, &mut StreamsMemory::new(), NOW).unwrap();
    let sticky = assign_sticky(&spec, &topology).unwrap();
    assert_eq!(ours.members["a1"].task_counts().0, 1, "{ours:?}");
    assert_eq!(ours.members["a2"].task_counts().0, 1, "{ours:?}");
    assert_eq!(owners(&spec, &ours), owners(&spec, &sticky));
}

#[test]
fn no_process_gains_a_task_of_a_kind_and_loses_one_of_its_own() {
    let (mut checked, mut swapped) = (0, Vec::new());
    for i in 0..600 {
        let case = random_case(71, i, CaseSize::Full);
        let stateful: BTreeMap<&str, bool> = case.topology.subtopologies.iter().map(|s| (s.id.as_str(), s.stateful)).collect();
        // The previous owners, where every task had at most one process.
        let mut before: BTreeMap<(String, i32), String> = BTreeMap::new();
        let mut ambiguous = false;
        for m in &case.spec.members {
            for (sub, parts) in &m.active_tasks {
                for &p in parts.keys() {
                    let old = before.insert((sub.clone(), p), m.process_id.clone());
                    ambiguous |= old.is_some_and(|o| o != m.process_id);
                }
            }
        }
        let Ok(ours) = assign_optimized(&case.spec, &case.topology, &mut StreamsMemory::new(), NOW) else { continue };
        if ambiguous {
            continue;
        }
        checked += 1;
        // Per (process, stateful): whether it gains a task, whether it loses one of its own.
        let mut flows: BTreeMap<(String, bool), (bool, bool)> = BTreeMap::new();
        for (task, to) in owners(&case.spec, &ours) {
            let kind = stateful[task.0.as_str()];
            match before.get(&task) {
                Some(from) if *from == to => {}
                from => {
                    flows.entry((to, kind)).or_default().0 = true;
                    if let Some(from) = from {
                        flows.entry((from.clone(), kind)).or_default().1 = true;
                    }
                }
            }
        }
        if let Some(((process, kind), _)) = flows.iter().find(|&(_, &(gains, loses))| gains && loses) {
            swapped.push(format!("{}: {process} (stateful {kind})", case.id));
        }
    }
    assert!(checked > 250, "{checked}");
    assert!(swapped.is_empty(), "of {checked}, {} with swaps: {swapped:?}", swapped.len());
}
