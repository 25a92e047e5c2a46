//! The simulated world: the members and the state on their disks, the changelogs, restores, and
//! the state-directory cleaner.

use std::collections::{BTreeMap, BTreeSet};

use super::config::SimConfig;
use super::report::{Report, SimError};
use super::scenario::{EventKind, MemberSpec, Scenario};
use crate::engine::{Assignment, AssignmentInput, ClientInput, PreviousRebalance};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId};

/// A member of the group, up or down, and the state on its disk.
#[derive(Debug, Clone)]
pub(super) struct Member {
    pub(super) spec: MemberSpec,
    pub(super) up: bool,
    joined_seq: u64,
    /// When its current process started (the state-directory cleaner's schedule starts there).
    started_ms: i64,
    /// Locally restored changelog offset (checkpoint) per stateful task with local state.
    pub(super) offsets: BTreeMap<TaskId, i64>,
    /// For the tasks in `offsets` it no longer owns: when it stopped owning them (the task
    /// directory's last modification).
    unowned_since: BTreeMap<TaskId, i64>,
    /// Active tasks assigned to it, running or restoring.
    pub(super) active: BTreeSet<TaskId>,
    /// Standby tasks assigned to it.
    pub(super) standby: BTreeSet<TaskId>,
    /// Active tasks still restoring.
    pub(super) restoring: BTreeSet<TaskId>,
}

impl Member {
    pub(super) fn new(spec: MemberSpec, joined_seq: u64, now: i64) -> Self {
        Self {
            spec,
            up: true,
            joined_seq,
            started_ms: now,
            offsets: BTreeMap::new(),
            unowned_since: BTreeMap::new(),
            active: BTreeSet::new(),
            standby: BTreeSet::new(),
            restoring: BTreeSet::new(),
        }
    }

    /// Offset sums as a Java member reports them: `-2` for running (caught-up) active tasks,
    /// the checkpointed offset for every other task it has state for.
    fn reported_offset_sums(&self) -> BTreeMap<TaskId, i64> {
        self.offsets
            .iter()
            .map(|(t, &o)| (t.clone(), if self.active.contains(t) && !self.restoring.contains(t) { LATEST_OFFSET } else { o }))
            .collect()
    }

    /// Records that it stops owning every task in `released` at `now`.
    fn release(&mut self, released: impl IntoIterator<Item = TaskId>, now: i64) {
        for t in released {
            if self.offsets.contains_key(&t) && !self.active.contains(&t) && !self.standby.contains(&t) {
                self.unowned_since.entry(t).or_insert(now);
            }
        }
    }

    /// The state-directory cleaner between `from` (exclusive) and `to` (inclusive): it runs at
    /// `started_ms + k · delay` (k ≥ 1) and deletes the state of every task not owned whose
    /// directory was last modified before the run's time minus `delay`. Ownership does not change
    /// between rebalances, so each such state goes at the first run after it expires. Returns
    /// the copy-ms from those deletions to `to`, which the copies held over the interval
    /// over-count.
    fn clean_state(&mut self, from: i64, to: i64, delay: i64) -> i64 {
        if delay <= 0 || to <= self.started_ms {
            return 0;
        }
        let started = self.started_ms;
        // The first run strictly after `t`.
        let run_after = |t: i64| started + ((t - started).max(0) / delay + 1) * delay;
        let deleted: Vec<(TaskId, i64)> = self
            .unowned_since
            .iter()
            .map(|(t, &since)| (t.clone(), run_after(from.max(since.saturating_add(delay)))))
            .filter(|&(_, at)| at <= to)
            .collect();
        let mut over = 0i64;
        for (t, at) in deleted {
            self.unowned_since.remove(&t);
            self.offsets.remove(&t);
            over = over.saturating_add(to - at);
        }
        over
    }
}

/// The group and its changelogs at one moment of simulated time.
pub(super) struct World<'a> {
    pub(super) scenario: &'a Scenario,
    config: SimConfig,
    pub(super) now: i64,
    pub(super) members: Vec<Member>,
    seq: u64,
    /// Changelog end offset per stateful task.
    pub(super) end_offsets: BTreeMap<TaskId, i64>,
    /// The member each active task was last assigned to.
    pub(super) owner: BTreeMap<TaskId, ProcessId>,
    /// The probing rebalance asked for: when, and the leader that triggers it (none once it
    /// leaves or crashes).
    pub(super) probe_at: Option<(i64, ProcessId)>,
    /// Time, end offsets and reported offset sums of the previous rebalance.
    pub(super) previous: Option<(i64, PreviousRebalance)>,
    /// Changelog records fetched so far by copies that do not run as actives.
    pub(super) changelog_records_read: i64,
    /// Copies held so far beyond the active tasks, integrated over time (copies × ms).
    pub(super) local_copy_ms: i64,
    /// When the last restore of an active task so far finished.
    last_restore_done_ms: i64,
    /// Active tasks of the app, stateful and stateless.
    tasks: usize,
    /// Active tasks no member up held (revoked or orphaned and not yet given), once the app has
    /// run, integrated over time so far (tasks × ms).
    pub(super) unowned_task_ms: i64,
    /// Active tasks whose owner restored them before they could process, integrated over time
    /// so far (tasks × ms).
    restoring_task_ms: i64,
}

impl<'a> World<'a> {
    /// The world before the scenario's first member joins.
    pub(super) fn new(scenario: &'a Scenario, config: &SimConfig) -> Self {
        World {
            scenario,
            config: *config,
            now: 0,
            members: Vec::new(),
            seq: 0,
            end_offsets: scenario.stateful_tasks(),
            owner: BTreeMap::new(),
            probe_at: None,
            previous: None,
            changelog_records_read: 0,
            local_copy_ms: 0,
            last_restore_done_ms: 0,
            tasks: scenario.stateful_tasks().len() + scenario.stateless_tasks().len(),
            unowned_task_ms: 0,
            restoring_task_ms: 0,
        }
    }

    /// The net rate at which a restoring task catches up, records/s (at least 1).
    fn catch_up_rate(&self) -> i64 {
        (self.config.restore_records_per_sec - self.config.produce_records_per_sec).max(1)
    }

    /// How long each restore under way still takes at its rate, ms.
    fn restores_left(&self) -> impl Iterator<Item = i64> + '_ {
        let rate = self.catch_up_rate();
        self.members.iter().filter(|m| m.up).flat_map(|m| m.restoring.iter().map(move |t| (m, t))).map(move |(m, t)| {
            let behind = self.end_offsets.get(t).copied().unwrap_or(0) - m.offsets.get(t).copied().unwrap_or(0);
            (behind.max(0).saturating_mul(1000) + rate - 1) / rate
        })
    }

    /// When every active task of the members up runs (none restores): the end of the last
    /// restore so far, or of those still under way at their rate.
    pub(super) fn all_restored_at(&self) -> i64 {
        let pending = self.restores_left().max().map(|left| self.now + left);
        pending.map_or(self.last_restore_done_ms, |p| p.max(self.last_restore_done_ms))
    }

    /// Task downtime: the time active tasks did not process since the start, tasks × ms. A task
    /// is down while no member up holds it (unowned: [`World::unowned_task_ms`]) and while its
    /// owner restores it, to the end of the restores still under way at their rate.
    pub(super) fn task_downtime_ms(&self) -> i64 {
        let left: i64 = self.restores_left().sum();
        self.unowned_task_ms.saturating_add(self.restoring_task_ms).saturating_add(left)
    }

    /// Lets a run that has ended go on without rebalancing up to `to` (if later), and updates
    /// `report`'s copy costs to what they then are.
    pub(super) fn observe_until(&mut self, to: i64, report: &mut Report) {
        if to > self.now {
            self.advance(to);
        }
        report.changelog_records_read = self.changelog_records_read;
        report.local_copy_ms = self.local_copy_ms;
        report.task_downtime_ms = self.task_downtime_ms();
    }

    fn member(&mut self, id: ProcessId) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.spec.process_id == id)
    }

    pub(super) fn leader(&self) -> Option<ProcessId> {
        self.members.iter().filter(|m| m.up).min_by_key(|m| m.joined_seq).map(|m| m.spec.process_id)
    }

    /// Lets `dt` ms pass: changelogs grow, state restores, restoring actives become running.
    pub(super) fn advance(&mut self, to: i64) {
        let dt = (to - self.now).max(0);
        let from = self.now;
        self.now = to;
        let produced = self.config.produce_records_per_sec.saturating_mul(dt) / 1000;
        let restored = self.config.restore_records_per_sec.saturating_mul(dt) / 1000;
        let rate = self.catch_up_rate();
        // The restores that finish in this interval, and when; until then their tasks are down.
        for m in self.members.iter().filter(|m| m.up) {
            for t in &m.restoring {
                let behind = self.end_offsets.get(t).copied().unwrap_or(0) - m.offsets.get(t).copied().unwrap_or(0);
                let done = from + (behind.max(0).saturating_mul(1000) + rate - 1) / rate;
                if done <= to {
                    self.last_restore_done_ms = self.last_restore_done_ms.max(done);
                }
                self.restoring_task_ms = self.restoring_task_ms.saturating_add(done.min(to) - from);
            }
        }
        // Once the app has run, a task no member up holds is down too.
        if !self.owner.is_empty() {
            let owned: BTreeSet<&TaskId> = self.members.iter().filter(|m| m.up).flat_map(|m| &m.active).collect();
            let unowned = self.tasks.saturating_sub(owned.len()) as i64;
            self.unowned_task_ms = self.unowned_task_ms.saturating_add(unowned.saturating_mul(dt));
        }
        for end in self.end_offsets.values_mut() {
            *end = end.saturating_add(produced);
        }
        for m in self.members.iter_mut().filter(|m| m.up) {
            let copies = m.offsets.keys().filter(|t| !m.active.contains(*t)).count() as i64;
            self.local_copy_ms = self.local_copy_ms.saturating_add(copies.saturating_mul(dt));
            for t in m.active.iter().chain(&m.standby) {
                let Some(&end) = self.end_offsets.get(t) else { continue };
                let running = m.active.contains(t) && !m.restoring.contains(t);
                let o = m.offsets.entry(t.clone()).or_insert(0);
                let before = *o;
                *o = if running { end } else { (*o).saturating_add(restored).min(end) };
                if !running {
                    self.changelog_records_read = self.changelog_records_read.saturating_add(*o - before);
                }
            }
            let caught_up: Vec<TaskId> = m
                .restoring
                .iter()
                .filter(|t| m.offsets.get(*t).zip(self.end_offsets.get(*t)).is_none_or(|(o, e)| o >= e))
                .cloned()
                .collect();
            for t in caught_up {
                m.restoring.remove(&t);
            }
            // State the cleaner deleted was not held after its run.
            let over = m.clean_state(from, to, self.config.state_cleanup_delay_ms);
            self.local_copy_ms = self.local_copy_ms.saturating_sub(over);
        }
    }

    pub(super) fn apply(&mut self, event: &EventKind) -> Result<String, SimError> {
        let missing = |id: &ProcessId| SimError::Scenario {
            scenario: self.scenario.name.clone(),
            problem: format!("no member {id}"),
        };
        Ok(match event {
            EventKind::Join(spec) => {
                self.seq += 1;
                let (seq, now) = (self.seq, self.now);
                match self.members.iter_mut().find(|m| m.spec.process_id == spec.process_id) {
                    Some(m) => {
                        // A member that crashed comes back with the state left on its disk.
                        m.up = true;
                        m.joined_seq = seq;
                        m.started_ms = now;
                    }
                    None => self.members.push(Member::new(spec.clone(), seq, now)),
                }
                format!("{} joins", spec.name)
            }
            EventKind::Leave(id) | EventKind::Crash(id) => {
                let crashed = matches!(event, EventKind::Crash(_));
                let now = self.now;
                let m = self.member(*id).ok_or_else(|| missing(id))?;
                m.up = false;
                let owned: Vec<TaskId> = m.active.iter().chain(&m.standby).cloned().collect();
                m.active.clear();
                m.standby.clear();
                m.restoring.clear();
                if crashed {
                    // Its state stays on disk, last modified now.
                    m.release(owned, now);
                } else {
                    // A member leaving for good takes its disk with it.
                    m.offsets.clear();
                    m.unowned_since.clear();
                }
                let name = m.spec.name.clone();
                if self.probe_at.is_some_and(|(_, leader)| leader == *id) {
                    self.probe_at = None;
                }
                format!("{name} {}", if crashed { "crashes" } else { "leaves" })
            }
            EventKind::Restart(id) => {
                // Static membership: the member restarts within the session timeout and rejoins
                // under the same identity; its tasks restore from local state.
                let stateful: BTreeSet<TaskId> = self.end_offsets.keys().cloned().collect();
                let now = self.now;
                let m = self.member(*id).ok_or_else(|| missing(id))?;
                m.restoring = m.active.intersection(&stateful).cloned().collect();
                // A new process: the cleaner's schedule starts again.
                m.started_ms = now;
                let name = m.spec.name.clone();
                format!("{name} restarts")
            }
            EventKind::Produce(records) => {
                for sub in self.scenario.subtopologies.iter().filter(|s| s.changelog_records.is_some()) {
                    for (p, part) in sub.split(*records).into_iter().enumerate() {
                        if let Some(end) = self.end_offsets.get_mut(&TaskId::new(sub.id, p as i32)) {
                            *end = end.saturating_add(part);
                        }
                    }
                }
                format!("{records} records arrive")
            }
            EventKind::LeaderCrash => {
                let leader = self.leader().ok_or_else(|| SimError::Scenario {
                    scenario: self.scenario.name.clone(),
                    problem: "no leader to crash".into(),
                })?;
                let text = self.apply(&EventKind::Crash(leader))?;
                format!("leader {text}")
            }
        })
    }

    pub(super) fn input(&self) -> AssignmentInput {
        let mut input = AssignmentInput::new().with_configs(self.scenario.configs.clone());
        input = input.with_stateful_tasks(self.end_offsets.clone()).with_stateless_tasks(self.scenario.stateless_tasks());
        for m in self.members.iter().filter(|m| m.up) {
            let mut client = ClientInput::new(m.spec.process_id, m.spec.threads)
                .with_task_offset_sums(m.reported_offset_sums())
                .with_owned_active_tasks(m.active.iter().cloned())
                .with_client_tags(m.spec.client_tags.clone());
            if let Some(rack) = &m.spec.rack {
                client = client.with_rack_id(rack.clone());
            }
            input = input.with_client(client);
        }
        if let Some((at, previous)) = &self.previous {
            let mut previous = previous.clone();
            previous.elapsed_ms = self.now - at;
            input = input.with_previous_rebalance(previous);
        }
        input
    }

    /// Hands the members `out` names their tasks: an active task a member does not run yet
    /// restores from its local copy unless that is caught up, a new standby starts from its
    /// local copy (or from nothing), and the state of what a member gives up stays on its disk.
    /// Returns the active tasks that changed owner, and of those the stateful ones.
    pub(super) fn take_assignment(&mut self, out: &Assignment) -> (usize, usize) {
        let (mut moved, mut stateful_moved) = (0, 0);
        for assigned in &out.clients {
            let Some(m) = self.members.iter_mut().find(|m| m.spec.process_id == assigned.process_id) else { continue };
            let active: BTreeSet<TaskId> = assigned.active_tasks.iter().cloned().collect();
            for t in &active {
                let previous = self.owner.insert(t.clone(), m.spec.process_id);
                let moved_here = previous.is_some_and(|p| p != m.spec.process_id);
                let stateful = self.end_offsets.contains_key(t);
                moved += usize::from(moved_here);
                stateful_moved += usize::from(moved_here && stateful);
                if stateful {
                    let was_running = m.active.contains(t) && !m.restoring.contains(t);
                    let end = self.end_offsets[t];
                    let local = *m.offsets.entry(t.clone()).or_insert(0);
                    if !was_running && local < end {
                        m.restoring.insert(t.clone());
                    } else if !was_running {
                        m.restoring.remove(t);
                    }
                }
            }
            m.restoring.retain(|t| active.contains(t));
            let before: Vec<TaskId> = m.active.iter().chain(&m.standby).cloned().collect();
            m.active = active;
            m.standby = assigned.standby_tasks.iter().cloned().collect();
            for t in m.standby.iter().filter(|t| self.end_offsets.contains_key(*t)) {
                m.offsets.entry(t.clone()).or_insert(0);
            }
            let owned: Vec<TaskId> = m.active.iter().chain(&m.standby).cloned().collect();
            for t in &owned {
                m.unowned_since.remove(t);
            }
            m.release(before, self.now);
        }
        (moved, stateful_moved)
    }

    /// Starts the app as already running: every task caught up on its first owner.
    pub(super) fn settle(&mut self) {
        for m in self.members.iter_mut().filter(|m| m.up) {
            m.restoring.clear();
            for t in m.active.iter().chain(&m.standby) {
                if let Some(&end) = self.end_offsets.get(t) {
                    m.offsets.insert(t.clone(), end);
                }
            }
        }
        self.probe_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_cleaner_deletes_unowned_state_older_than_the_delay_on_its_schedule() {
        let (a, b) = (TaskId::new(0, 0), TaskId::new(0, 1));
        let mut m = Member::new(MemberSpec::new("S1", 1), 1, 0);
        m.offsets.insert(a.clone(), 10);
        m.offsets.insert(b.clone(), 20);
        m.active.insert(b.clone());
        m.release([a.clone(), b.clone()], 100_000);
        // `b` is still owned: never deleted, never marked.
        assert_eq!(m.unowned_since.keys().collect::<Vec<_>>(), [&a]);
        // The run at 600 s: `a` was modified 500 s before, within the delay.
        m.clean_state(0, 1_199_999, 600_000);
        assert!(m.offsets.contains_key(&a));
        // The run at 1200 s deletes it; nothing happens between runs.
        assert_eq!(m.clean_state(1_199_999, 1_200_000, 600_000), 0);
        assert!(!m.offsets.contains_key(&a) && m.offsets.contains_key(&b));
        // A restarted process starts a new schedule; a zero delay keeps everything.
        m.active.clear();
        m.release([b.clone()], 1_200_000);
        m.started_ms = 1_500_000;
        m.clean_state(1_200_000, 2_099_999, 600_000);
        assert!(m.offsets.contains_key(&b));
        m.clean_state(2_099_999, 9_000_000, 0);
        assert!(m.offsets.contains_key(&b));
        m.clean_state(2_099_999, 2_100_000, 600_000);
        assert!(m.offsets.is_empty() && m.unowned_since.is_empty());
    }

    #[test]
    fn over_a_long_interval_the_cleaner_deletes_at_its_first_run_after_expiry() {
        // Released at 100 s, expired from 700 s: the run at 1200 s deletes it, though the
        // interval runs on to 10 h; the copy was not held for the 10 h − 1200 s after.
        let (a, b) = (TaskId::new(0, 0), TaskId::new(0, 1));
        let mut m = Member::new(MemberSpec::new("S1", 1), 1, 0);
        m.offsets.insert(a.clone(), 10);
        m.release([a.clone()], 100_000);
        assert_eq!(m.clean_state(0, 36_000_000, 600_000), 36_000_000 - 1_200_000);
        assert!(m.offsets.is_empty());
        // Released at 1250 s: the run at 1800 s is within the delay, the one at 2400 s is not.
        m.offsets.insert(b.clone(), 10);
        m.release([b.clone()], 1_250_000);
        assert_eq!(m.clean_state(1_250_000, 3_000_000, 600_000), 3_000_000 - 2_400_000);
    }
}
