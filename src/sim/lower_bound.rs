//! The movement lower bound ([`Report::lower_bound`](super::Report::lower_bound)): who held
//! which active tasks before an event, and the fewest moves from there to the counts the group
//! settles on.

use std::collections::{BTreeMap, BTreeSet};

use super::report::Round;
use super::world::World;
use crate::engine::TaskLag;
use crate::wire::{ProcessId, TaskId};

/// Active task owners before an event, for the movement lower bound.
#[derive(Debug, Clone, Default)]
pub(super) struct Holdings {
    stateful: BTreeMap<ProcessId, usize>,
    total: BTreeMap<ProcessId, usize>,
    orphans_stateful: usize,
    orphans_stateless: usize,
    /// Stateful orphans that must land on certain members first: those caught up on them, or
    /// where none is, those with the freshest copy (when some member's copy is staler).
    fresh_orphans: BTreeMap<TaskId, BTreeSet<ProcessId>>,
}

impl World<'_> {
    /// Who holds how many active tasks, among the members up now.
    pub(super) fn holdings(&self) -> Holdings {
        let mut h = Holdings::default();
        for (t, owner) in &self.owner {
            let stateful = self.end_offsets.contains_key(t);
            if self.members.iter().any(|m| m.up && m.spec.process_id == *owner) {
                *h.total.entry(*owner).or_default() += 1;
                if stateful {
                    *h.stateful.entry(*owner).or_default() += 1;
                }
            } else if stateful {
                h.orphans_stateful += 1;
                let end = self.end_offsets[t];
                let acceptable = self.scenario.configs.acceptable_recovery_lag;
                let up: Vec<(ProcessId, i64)> =
                    self.members.iter().filter(|m| m.up).map(|m| (m.spec.process_id, m.offsets.get(t).copied().unwrap_or(0).min(end))).collect();
                let caught_up: BTreeSet<ProcessId> =
                    up.iter().filter(|&&(_, o)| TaskLag::compute(Some(o), end).is_caught_up(acceptable)).map(|&(p, _)| p).collect();
                // KIP-441 as shipped (`TaskMovement`): with no caught-up client, an active goes
                // to the most caught-up client where its target's copy is staler.
                let freshest = up.iter().map(|&(_, o)| o).max().unwrap_or(0);
                let first = if caught_up.is_empty() {
                    up.iter().filter(|&&(_, o)| o == freshest).map(|&(p, _)| p).collect()
                } else {
                    caught_up
                };
                if first.len() < up.len() {
                    h.fresh_orphans.insert(t.clone(), first);
                }
            } else {
                h.orphans_stateless += 1;
            }
        }
        h
    }
}

/// Sums the lower bound and the moves over the stretches (an event's rebalance up to the next
/// event's) where it applies.
pub(super) fn bounded_stretches(rounds: &[Round]) -> (Option<usize>, usize) {
    let starts: Vec<usize> = (0..rounds.len()).filter(|&i| !rounds[i].trigger.starts_with("probing")).collect();
    let (mut bound, mut moved) = (None, 0);
    for (k, &start) in starts.iter().enumerate() {
        let Some(lb) = rounds[start].movement_lower_bound else { continue };
        let end = starts.get(k + 1).copied().unwrap_or(rounds.len());
        *bound.get_or_insert(0) += lb;
        moved += rounds[start..end].iter().map(|r| r.tasks_moved).sum::<usize>();
    }
    (bound, moved)
}

impl Holdings {
    /// A lower bound on the active tasks that must change owner to get from `self` to `end`:
    /// a task's type never changes, so each member gives up at least what it held above its
    /// end count of stateful tasks plus what it held above its end count of stateless tasks;
    /// every task whose owner is gone moves; and (KIP-441) a stateful orphan with caught-up
    /// copies lands on one of those members first, one without on a member with its freshest
    /// copy (where some member's is staler). An orphan that cannot be matched to such a
    /// member with room below its end count costs one more move: either it lands on a holder
    /// already at its count (one task more must leave it) or it ends elsewhere (it moved twice).
    /// The matching is maximal, so this never counts more than needed.
    pub(super) fn moves_to(&self, end: &Self) -> usize {
        let stateless = |h: &Self| -> BTreeMap<ProcessId, usize> {
            h.total.iter().map(|(p, &n)| (*p, n - h.stateful.get(p).copied().unwrap_or(0))).collect()
        };
        let excess = |from: &BTreeMap<ProcessId, usize>, to: &BTreeMap<ProcessId, usize>| -> usize {
            from.iter().map(|(p, &n)| n.saturating_sub(to.get(p).copied().unwrap_or(0))).sum()
        };
        let room: BTreeMap<ProcessId, usize> = end
            .stateful
            .iter()
            .map(|(p, &n)| (*p, n.saturating_sub(self.stateful.get(p).copied().unwrap_or(0))))
            .collect();
        let orphans: Vec<&BTreeSet<ProcessId>> = self.fresh_orphans.values().collect();
        let unmatched = orphans.len() - max_matching(&orphans, &room);
        self.orphans_stateful
            + self.orphans_stateless
            + unmatched
            + excess(&self.stateful, &end.stateful)
            + excess(&stateless(self), &stateless(end))
    }
}

/// The most orphans (each with the members it may land on) that can be placed on members with
/// `room` (each takes at most its room): augmenting paths, O(orphans² · members).
fn max_matching(orphans: &[&BTreeSet<ProcessId>], room: &BTreeMap<ProcessId, usize>) -> usize {
    fn augment(
        k: usize,
        orphans: &[&BTreeSet<ProcessId>],
        room: &BTreeMap<ProcessId, usize>,
        placed: &mut BTreeMap<ProcessId, Vec<usize>>,
        seen: &mut BTreeSet<ProcessId>,
    ) -> bool {
        for p in orphans[k] {
            if !seen.insert(*p) {
                continue;
            }
            let cap = room.get(p).copied().unwrap_or(0);
            let here = placed.get(p).cloned().unwrap_or_default();
            if here.len() < cap {
                placed.entry(*p).or_default().push(k);
                return true;
            }
            for (i, &other) in here.iter().enumerate() {
                if augment(other, orphans, room, placed, seen) {
                    if let Some(v) = placed.get_mut(p) {
                        v[i] = k;
                    }
                    return true;
                }
            }
        }
        false
    }
    let mut placed: BTreeMap<ProcessId, Vec<usize>> = BTreeMap::new();
    (0..orphans.len()).filter(|&k| augment(k, orphans, room, &mut placed, &mut BTreeSet::new())).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::AssignmentConfigs;
    use crate::sim::config::SimConfig;
    use crate::sim::scenario::{MemberSpec, Scenario, Subtopology};
    use crate::sim::world::Member;

    #[test]
    fn an_orphan_lands_first_on_a_caught_up_copy_else_on_its_freshest_copy() {
        let specs: Vec<MemberSpec> = (1..=4).map(|i| MemberSpec::new(&format!("S{i}"), 1)).collect();
        let p: Vec<ProcessId> = specs.iter().map(|s| s.process_id).collect();
        let scenario = Scenario {
            name: "orphans".into(),
            description: String::new(),
            configs: AssignmentConfigs::default(),
            subtopologies: vec![Subtopology::new(0, 4, Some(1_000_000))],
            initial_members: Vec::new(),
            running: true,
            events: Vec::new(),
        };
        let mut world = World::new(&scenario, &SimConfig::default());
        world.members = specs.iter().map(|s| Member::new(s.clone(), 0, 0)).collect();
        let t = |k: i32| TaskId::new(0, k);
        // S4 owned all four tasks and is gone. 0_0: S1 caught up, S2 stale. 0_1: S2 and S3
        // stale alike, S1 staler. 0_2: everyone equally stale. 0_3: no copy anywhere.
        world.members[3].up = false;
        world.owner = (0..4).map(|k| (t(k), p[3])).collect();
        let copies = [(0, 0, 995_000), (1, 0, 400_000), (1, 1, 700_000), (2, 1, 700_000), (0, 1, 100_000), (0, 2, 5), (1, 2, 5), (2, 2, 5)];
        for (m, k, offset) in copies {
            world.members[m].offsets.insert(t(k), offset);
        }
        let h = world.holdings();
        assert_eq!(h.orphans_stateful, 4);
        let expected: BTreeMap<TaskId, BTreeSet<ProcessId>> = [(t(0), [p[0]].into()), (t(1), [p[1], p[2]].into())].into();
        assert_eq!(h.fresh_orphans, expected);
    }

    #[test]
    fn the_lower_bound_counts_each_task_type_and_orphans_without_room_on_a_caught_up_holder() {
        let p: Vec<ProcessId> = (1..=3).map(|i| MemberSpec::new(&format!("S{i}"), 1).process_id).collect();
        let map = |v: &[(usize, usize)]| v.iter().map(|&(i, n)| (p[i], n)).collect::<BTreeMap<_, _>>();
        // S1 trades a stateless task for a stateful one, S2 the reverse: two moves although the
        // totals do not change.
        let start = Holdings { stateful: map(&[(0, 2), (1, 3)]), total: map(&[(0, 3), (1, 4)]), ..Holdings::default() };
        let end = Holdings { stateful: map(&[(0, 3), (1, 2)]), total: map(&[(0, 3), (1, 4)]), ..Holdings::default() };
        assert_eq!(start.moves_to(&end), 2);
        // Two orphans caught up on S1 and S2 only; S1 has room for one, S2 for none, S3 for
        // one: one lands on S1, the other costs a second move.
        let holders: BTreeSet<ProcessId> = [p[0], p[1]].into();
        let start = Holdings {
            stateful: map(&[(0, 2), (1, 2)]),
            total: map(&[(0, 2), (1, 2)]),
            orphans_stateful: 2,
            fresh_orphans: [(TaskId::new(0, 0), holders.clone()), (TaskId::new(0, 1), holders)].into(),
            ..Holdings::default()
        };
        let end = Holdings { stateful: map(&[(0, 3), (1, 2), (2, 1)]), total: map(&[(0, 3), (1, 2), (2, 1)]), ..Holdings::default() };
        assert_eq!(start.moves_to(&end), 3);
        let end = Holdings { stateful: map(&[(0, 3), (1, 3)]), total: map(&[(0, 3), (1, 3)]), ..Holdings::default() };
        assert_eq!(start.moves_to(&end), 2);
    }
}
