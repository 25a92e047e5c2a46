//! What a rebalance costs and how even it leaves the load: the restores it starts, what a
//! departure would cost, and the spreads of active tasks per thread.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::world::{Member, World};
use crate::engine::Assignment;
use crate::engine::TaskLag;

/// A sub-topology: its named topology, if any, and its id.
type SubtopologyKey = (Option<Arc<str>>, i32);

/// The restores an assignment starts ([`World::restores_started`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Restores {
    /// Records the active tasks restore before they can process.
    pub(super) records: i64,
    /// Active tasks that restore.
    pub(super) tasks: usize,
    /// Of `records`, those of tasks whose new owner is not caught up on them.
    pub(super) not_caught_up: i64,
}

/// Max − min active tasks per thread over the members an assignment names (the spreads of a
/// [`Round`](super::Round)).
#[derive(Debug, Clone, Copy)]
pub(super) struct Spreads {
    /// All active tasks.
    pub(super) load: f64,
    /// Stateful active tasks.
    pub(super) stateful_load: f64,
    /// The largest over the sub-topologies of one sub-topology's spread.
    pub(super) subtopology: f64,
}

impl World<'_> {
    /// What `out` would have its active tasks restore: a stateful task restores from its new
    /// owner's local copy unless that owner runs it already, and a restore still under way on
    /// the same member was counted when it started.
    pub(super) fn restores_started(&self, out: &Assignment) -> Restores {
        let acceptable = self.scenario.configs.acceptable_recovery_lag;
        let mut started = Restores::default();
        for assigned in &out.clients {
            let Some(m) = self.members.iter().find(|m| m.spec.process_id == assigned.process_id) else { continue };
            for t in &assigned.active_tasks {
                let Some(&end) = self.end_offsets.get(t) else { continue };
                let local = m.offsets.get(t).copied().unwrap_or(0);
                if !m.active.contains(t) && local < end {
                    started.records += end - local;
                    started.tasks += 1;
                    if !TaskLag::compute(Some(local), end).is_caught_up(acceptable) {
                        started.not_caught_up += end - local;
                    }
                }
            }
        }
        started
    }

    /// The mean, over the members up, of what their active stateful tasks would restore if the
    /// member went now: per task, its end offset less the freshest copy another member up has.
    pub(super) fn departure_exposure(&self) -> i64 {
        let up: Vec<&Member> = self.members.iter().filter(|m| m.up).collect();
        if up.is_empty() {
            return 0;
        }
        let total: i64 = up
            .iter()
            .map(|m| {
                m.active
                    .iter()
                    .filter_map(|t| self.end_offsets.get(t).map(|&end| (t, end)))
                    .map(|(t, end)| {
                        let best = up.iter().filter(|o| o.spec.process_id != m.spec.process_id).filter_map(|o| o.offsets.get(t)).max();
                        end - best.copied().unwrap_or(0).min(end)
                    })
                    .sum::<i64>()
            })
            .sum();
        total / up.len() as i64
    }

    /// The spreads of the active tasks the members `out` names hold, once they have taken it.
    pub(super) fn spreads(&self, out: &Assignment) -> Spreads {
        let mut per_thread: Vec<(f64, f64)> = Vec::new();
        // Per member: its threads and its active tasks per sub-topology.
        let mut per_subtopology: Vec<(f64, BTreeMap<SubtopologyKey, usize>)> = Vec::new();
        for assigned in &out.clients {
            let Some(m) = self.members.iter().find(|m| m.spec.process_id == assigned.process_id) else { continue };
            let threads = f64::from(m.spec.threads.max(1));
            let stateful = m.active.iter().filter(|t| self.end_offsets.contains_key(*t)).count();
            per_thread.push((m.active.len() as f64 / threads, stateful as f64 / threads));
            let mut counts: BTreeMap<SubtopologyKey, usize> = BTreeMap::new();
            for t in &m.active {
                *counts.entry((t.topology.clone(), t.subtopology)).or_default() += 1;
            }
            per_subtopology.push((threads, counts));
        }
        // Per sub-topology (every one has its tasks on some member): the fewest and most of its
        // active tasks per thread on one member.
        let groups: BTreeSet<&SubtopologyKey> = per_subtopology.iter().flat_map(|(_, c)| c.keys()).collect();
        let subtopology = groups
            .into_iter()
            .map(|key| {
                let loads = per_subtopology.iter().map(|(threads, c)| c.get(key).copied().unwrap_or(0) as f64 / threads);
                loads.clone().fold(f64::NEG_INFINITY, f64::max) - loads.fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max);
        let spread = |f: fn(&(f64, f64)) -> f64| {
            let hi = per_thread.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
            let lo = per_thread.iter().map(f).fold(f64::INFINITY, f64::min);
            if hi >= lo { hi - lo } else { 0.0 }
        };
        Spreads { load: spread(|p| p.0), stateful_load: spread(|p| p.1), subtopology }
    }
}
