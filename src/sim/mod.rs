//! A convergence simulator: successive rebalances of a Kafka Streams group over simulated time.
//!
//! Members join, leave, crash and come back; the leader changes; changelogs grow; state restores
//! at a configurable rate, so warm-ups catch up and probing rebalances fire when the assignor asks
//! for them. Any [`TaskAssignor`] runs in it until the assignment is stable, and every rebalance
//! is recorded: tasks moved, warm-ups, load spread, and lag still to restore on active tasks
//! (the unavailability KIP-441 set out to avoid).
//!
//! The simulator is sans-IO and deterministic: time is simulated milliseconds, randomness comes
//! from the scenario's seed.
//!
//! ```
//! use kstreams_assignor::engine::AssignorKind;
//! use kstreams_assignor::sim::{self, SimConfig};
//!
//! let scenario = sim::builtin("scale-out", 0).unwrap();
//! let report = sim::run(AssignorKind::HighAvailability.assignor(), &scenario, &SimConfig::default()).unwrap();
//! assert!(report.converged);
//! assert!(report.rounds.iter().any(|r| r.warmups > 0));
//! ```

mod compare;
mod scenario;
mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;

use crate::engine::{AssignError, Assignment, AssignmentInput, ClientInput, PreviousRebalance, TaskAssignor};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId, TaskLag};

pub use compare::{Comparison, ComparisonRow, SameInputs, Summary, Target, churn_scenarios, compare, compare_suite, suite_scenarios};
pub use scenario::{BUILTIN_SCENARIOS, Event, EventKind, MemberSpec, Scenario, builtin};
pub use svg::render_svg;

/// How the simulated world behaves between rebalances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SimConfig {
    /// Records per second one task restores from its changelog (actives and standbys alike).
    pub restore_records_per_sec: i64,
    /// Records per second appended to each task's changelog while the app runs.
    pub produce_records_per_sec: i64,
    /// Stop after this many rebalances even if not converged.
    pub max_rounds: usize,
    /// Kafka Streams' `state.cleanup.delay.ms` (default 600000): each member's state-directory
    /// cleaner runs every this many ms from the start of its process, and deletes the local
    /// state of every task the member neither runs nor keeps as a standby whose directory was
    /// last modified more than this long ago (`StateDirectory#cleanRemovedTasks`). The directory
    /// of a task counts as modified up to the moment the member last owned it. `0` or less: the
    /// state of unowned tasks is never deleted (not a Kafka setting).
    pub state_cleanup_delay_ms: i64,
    /// Simulated time up to which the costs of the copies
    /// ([`Report::changelog_records_read`], [`Report::local_copy_ms`]) are counted: a run that
    /// is stable earlier goes on without rebalancing until then (caught-up standbys and spares
    /// keep fetching, left-behind state waits for the cleaner), so that two runs that settle at
    /// different times pay for the same stretch of time. `0`: until the last rebalance.
    pub observe_until_ms: i64,
}

/// Kafka Streams' default `state.cleanup.delay.ms`.
pub const STATE_CLEANUP_DELAY_MS: i64 = 600_000;

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            restore_records_per_sec: 20_000,
            produce_records_per_sec: 100,
            max_rounds: 200,
            state_cleanup_delay_ms: STATE_CLEANUP_DELAY_MS,
            observe_until_ms: 0,
        }
    }
}

/// What one rebalance did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Round {
    /// 1-based rebalance number.
    pub round: usize,
    /// Simulated time, ms since the scenario started.
    pub time_ms: i64,
    /// What triggered it (an event, or a probing rebalance).
    pub trigger: String,
    /// Members (processes) in the group.
    pub members: usize,
    /// Active tasks that changed owner.
    pub tasks_moved: usize,
    /// Stateful active tasks that changed owner.
    pub stateful_tasks_moved: usize,
    /// Warm-up replicas assigned.
    pub warmups: usize,
    /// Spare copies assigned (standbys beyond `num.standby.replicas` that the optimized assignor
    /// keeps so that a crash restores less; they stay until the next rebalance).
    pub spares: usize,
    /// Max − min active tasks per thread over the members.
    pub load_spread: f64,
    /// Max − min stateful active tasks per thread (stateful tasks carry the load that matters).
    pub stateful_load_spread: f64,
    /// The largest, over the sub-topologies, max − min of one sub-topology's active tasks per
    /// thread (the partitions of a sub-topology carry similar load, different sub-topologies
    /// need not).
    pub subtopology_spread: f64,
    /// Records active tasks must restore before they can process: the unavailability. Each
    /// restore counts once, in the rebalance that starts it (one still under way at a later
    /// rebalance, on the same member, is not counted again).
    pub restoring_lag: i64,
    /// Active tasks that start restoring.
    pub restoring_tasks: usize,
    /// Whether the assignor asked for a probing rebalance.
    pub probing_rebalance: bool,
    /// For a rebalance triggered by an event whose stretch (up to the next event) ends
    /// converged: a lower bound on the active tasks that had to change owner to get from the
    /// assignment before the event to the per-member counts the stretch ends with (see
    /// [`Report::lower_bound`]).
    pub movement_lower_bound: Option<usize>,
    /// Of `restoring_lag`, the records restored by tasks whose new owner was not caught up on
    /// them (its lag above `acceptable.recovery.lag`): the restores KIP-441's rule allows only
    /// where no client is caught up.
    pub restoring_lag_not_caught_up: i64,
    /// With a shadow assignor ([`run_with_shadow`]): the records its assignment would have had
    /// active tasks restore, on this rebalance's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow_restoring_lag: Option<i64>,
    /// With a shadow assignor: of `shadow_restoring_lag`, the records restored by tasks whose new
    /// owner was not caught up on them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow_restoring_lag_not_caught_up: Option<i64>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Assignor name.
    pub assignor: String,
    /// Every rebalance after the scenario's starting point.
    pub rounds: Vec<Round>,
    /// Whether the assignment ended stable (no probing rebalance wanted, no event left).
    pub converged: bool,
    /// Rebalances after the last event until stable.
    pub rounds_to_converge: usize,
    /// Simulated time from the last event to the stable assignment.
    pub time_to_converge_ms: i64,
    /// Sum of tasks moved over all rounds.
    pub total_tasks_moved: usize,
    /// Sum of warm-ups over all rounds.
    pub total_warmups: usize,
    /// Sum of probing rebalances asked for.
    pub probing_rebalances: usize,
    /// Sum of restoring lag over all rounds.
    pub total_restoring_lag: i64,
    /// Load spread of the final assignment.
    pub final_load_spread: f64,
    /// Stateful load spread of the final assignment.
    pub final_stateful_load_spread: f64,
    /// Sub-topology spread of the final assignment ([`Round::subtopology_spread`]).
    pub final_subtopology_spread: f64,
    /// The movement lower bound summed over the stretches where it applies: from an event's
    /// rebalance up to the next event, when that stretch ends converged. The target is the
    /// assignment the stretch converges to, by its per-member counts of stateful and of
    /// stateless active tasks. A task's type never changes, so a member gives up at least what
    /// it held above each of its two end counts, and every task whose owner is gone moves. Per
    /// stretch: `orphansₛ + orphansₗ + Σ max(0, heldₛ − targetₛ) + Σ max(0, heldₗ − targetₗ) +
    /// unplaced`, where `held` counts the active tasks a member owned before the event, `target`
    /// those it owns at the end, `ₛ` restricts to stateful tasks and `ₗ` to stateless ones. By
    /// KIP-441's rule that an active task only moves to a caught-up client while one exists,
    /// and where none is, to the most caught-up client rather than a staler one (Kafka's
    /// `TaskMovement`), a stateful orphan with caught-up copies lands on one of their holders
    /// first, and one without but with a copy fresher than some member's on a holder of its
    /// freshest copy; `unplaced` is how many such orphans a maximum matching cannot place on
    /// such a holder with room below its stateful target (each costs one more move: one more
    /// task leaves that holder, or the orphan moves twice). `None` if it applies nowhere. It measures the moves made on the way
    /// to the end counts, not the choice of those counts (the final spread is compared apart).
    pub lower_bound: Option<usize>,
    /// Tasks moved in the stretches where the lower bound applies.
    pub bounded_tasks_moved: usize,
    /// What departures cost on average, whoever departs: at each crash or departure, before it
    /// happens, the mean over the members up of the records their active stateful tasks would
    /// restore if that member went (each from the freshest copy any other member has), summed
    /// over those events. `restoring_lag` counts what the member that actually went cost; this
    /// takes the luck of which member that was out.
    pub expected_departure_restore: i64,
    /// What the copies cost the brokers: the changelog records fetched by copies that do not run
    /// as actives (restoring actives, warm-ups, standbys and spares; a caught-up standby keeps
    /// fetching what is produced), over the whole run and on to
    /// [`SimConfig::observe_until_ms`].
    pub changelog_records_read: i64,
    /// What the copies cost the members' disks: task state the members up hold beyond their
    /// active tasks (standbys, warm-ups, spares, and state left behind until the
    /// `state.cleanup.delay.ms` cleaner deletes it), in copies × ms over the whole run and on to
    /// [`SimConfig::observe_until_ms`].
    pub local_copy_ms: i64,
}

/// The simulation could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The assignor rejected its input or failed.
    #[error("round {round}: {source}")]
    Assign {
        /// The rebalance that failed.
        round: usize,
        /// Why.
        source: AssignError,
    },
    /// The scenario refers to a member that does not exist, or is malformed.
    #[error("scenario `{scenario}`: {problem}")]
    Scenario {
        /// Scenario name.
        scenario: String,
        /// What is wrong.
        problem: String,
    },
}

/// A sub-topology: its named topology, if any, and its id.
type SubtopologyKey = (Option<Arc<str>>, i32);

#[derive(Debug, Clone)]
struct Member {
    spec: MemberSpec,
    up: bool,
    joined_seq: u64,
    /// When its current process started (the state-directory cleaner's schedule starts there).
    started_ms: i64,
    /// Locally restored changelog offset (checkpoint) per stateful task with local state.
    offsets: BTreeMap<TaskId, i64>,
    /// For the tasks in `offsets` it no longer owns: when it stopped owning them (the task
    /// directory's last modification).
    unowned_since: BTreeMap<TaskId, i64>,
    active: BTreeSet<TaskId>,
    standby: BTreeSet<TaskId>,
    /// Active tasks still restoring.
    restoring: BTreeSet<TaskId>,
}

impl Member {
    fn new(spec: MemberSpec, joined_seq: u64, now: i64) -> Self {
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

struct World<'a> {
    scenario: &'a Scenario,
    config: SimConfig,
    now: i64,
    members: Vec<Member>,
    seq: u64,
    end_offsets: BTreeMap<TaskId, i64>,
    owner: BTreeMap<TaskId, ProcessId>,
    probe_at: Option<(i64, ProcessId)>,
    /// Time, end offsets and reported offset sums of the previous rebalance.
    previous: Option<(i64, PreviousRebalance)>,
    /// Holdings before the last event.
    stretch_start: Option<Holdings>,
    /// Changelog records fetched so far by copies that do not run as actives.
    changelog_records_read: i64,
    /// Copies held so far beyond the active tasks, integrated over time (copies × ms).
    local_copy_ms: i64,
}

/// The restores an assignment starts ([`World::restores_started`]).
#[derive(Debug, Clone, Copy, Default)]
struct Restores {
    records: i64,
    tasks: usize,
    /// Of `records`, those of tasks whose new owner is not caught up on them.
    not_caught_up: i64,
}

/// Active task owners before an event, for the movement lower bound.
#[derive(Debug, Clone, Default)]
struct Holdings {
    stateful: BTreeMap<ProcessId, usize>,
    total: BTreeMap<ProcessId, usize>,
    orphans_stateful: usize,
    orphans_stateless: usize,
    /// Stateful orphans that must land on certain members first: those caught up on them, or
    /// where none is, those with the freshest copy (when some member's copy is staler).
    fresh_orphans: BTreeMap<TaskId, BTreeSet<ProcessId>>,
}

impl<'a> World<'a> {
    /// The world before the scenario's first member joins.
    fn new(scenario: &'a Scenario, config: &SimConfig) -> Self {
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
            stretch_start: None,
            changelog_records_read: 0,
            local_copy_ms: 0,
        }
    }

    /// Lets a run that has ended go on without rebalancing up to `to` (if later), and updates
    /// `report`'s copy costs to what they then are.
    fn observe_until(&mut self, to: i64, report: &mut Report) {
        if to > self.now {
            self.advance(to);
        }
        report.changelog_records_read = self.changelog_records_read;
        report.local_copy_ms = self.local_copy_ms;
    }

    fn member(&mut self, id: ProcessId) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.spec.process_id == id)
    }

    fn leader(&self) -> Option<ProcessId> {
        self.members.iter().filter(|m| m.up).min_by_key(|m| m.joined_seq).map(|m| m.spec.process_id)
    }

    /// Lets `dt` ms pass: changelogs grow, state restores, restoring actives become running.
    fn advance(&mut self, to: i64) {
        let dt = (to - self.now).max(0);
        let from = self.now;
        self.now = to;
        let produced = self.config.produce_records_per_sec.saturating_mul(dt) / 1000;
        let restored = self.config.restore_records_per_sec.saturating_mul(dt) / 1000;
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

    fn apply(&mut self, event: &EventKind) -> Result<String, SimError> {
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

    fn input(&self) -> AssignmentInput {
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

    /// The mean, over the members up, of what their active stateful tasks would restore if the
    /// member went now: per task, its end offset less the freshest copy another member up has.
    fn departure_exposure(&self) -> i64 {
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

    /// Who holds how many active tasks, among the members up now.
    fn holdings(&self) -> Holdings {
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

    fn rebalance(
        &mut self,
        assignor: &dyn TaskAssignor,
        shadow: Option<&dyn TaskAssignor>,
        round: usize,
        trigger: String,
        event: bool,
    ) -> Result<Round, SimError> {
        let input = self.input();
        let out = assignor.assign(&input).map_err(|source| SimError::Assign { round, source })?;
        if event {
            self.stretch_start = Some(self.holdings());
        }
        let previous = PreviousRebalance {
            elapsed_ms: 0,
            changelog_end_offset_sums: input.changelog_end_offset_sums.clone().unwrap_or_default(),
            task_offset_sums: input.clients.iter().map(|c| (c.process_id, c.task_offset_sums.clone())).collect(),
        };
        self.previous = Some((self.now, previous));
        let mut round_out = Round {
            round,
            time_ms: self.now,
            trigger,
            members: self.members.iter().filter(|m| m.up).count(),
            tasks_moved: 0,
            stateful_tasks_moved: 0,
            warmups: out.followup.watch_list.len(),
            spares: out.clients.iter().map(|c| c.spare_tasks.len()).sum(),
            load_spread: 0.0,
            stateful_load_spread: 0.0,
            subtopology_spread: 0.0,
            restoring_lag: 0,
            restoring_tasks: 0,
            restoring_lag_not_caught_up: 0,
            probing_rebalance: out.followup.probing_rebalance_needed,
            movement_lower_bound: None,
            shadow_restoring_lag: None,
            shadow_restoring_lag_not_caught_up: None,
        };
        let started = self.restores_started(&out);
        round_out.restoring_lag = started.records;
        round_out.restoring_tasks = started.tasks;
        round_out.restoring_lag_not_caught_up = started.not_caught_up;
        if let Some(shadow) = shadow {
            let theirs = self.restores_started(&shadow.assign(&input).map_err(|source| SimError::Assign { round, source })?);
            round_out.shadow_restoring_lag = Some(theirs.records);
            round_out.shadow_restoring_lag_not_caught_up = Some(theirs.not_caught_up);
        }
        let mut per_thread: Vec<(f64, f64)> = Vec::new();
        // Per member: its threads and its active tasks per sub-topology.
        let mut per_subtopology: Vec<(f64, BTreeMap<SubtopologyKey, usize>)> = Vec::new();
        for assigned in &out.clients {
            let Some(m) = self.members.iter_mut().find(|m| m.spec.process_id == assigned.process_id) else { continue };
            let active: BTreeSet<TaskId> = assigned.active_tasks.iter().cloned().collect();
            for t in &active {
                let previous = self.owner.insert(t.clone(), m.spec.process_id);
                let moved = previous.is_some_and(|p| p != m.spec.process_id);
                let stateful = self.end_offsets.contains_key(t);
                round_out.tasks_moved += usize::from(moved);
                round_out.stateful_tasks_moved += usize::from(moved && stateful);
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
        round_out.subtopology_spread = groups
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
        round_out.load_spread = spread(|p| p.0);
        round_out.stateful_load_spread = spread(|p| p.1);
        self.probe_at = if out.followup.probing_rebalance_needed {
            self.leader().map(|leader| (self.now + out.followup.probing_rebalance_interval_ms, leader))
        } else {
            None
        };
        Ok(round_out)
    }

    /// What `out` would have its active tasks restore: a stateful task restores from its new
    /// owner's local copy unless that owner runs it already, and a restore still under way on
    /// the same member was counted when it started.
    fn restores_started(&self, out: &Assignment) -> Restores {
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

    /// Starts the app as already running: every task caught up on its first owner.
    fn settle(&mut self) {
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

/// Runs `scenario` with `assignor` until the assignment is stable (or `config.max_rounds`).
///
/// # Errors
/// [`SimError`] when the scenario is malformed or the assignor fails.
pub fn run(assignor: &dyn TaskAssignor, scenario: &Scenario, config: &SimConfig) -> Result<Report, SimError> {
    run_with_shadow(assignor, None, scenario, config)
}

/// [`run`], and at every rebalance after the start also asks `shadow` on the same input what it
/// would assign: [`Round::shadow_restoring_lag`] is the restoring its answer would have started.
/// The run follows `assignor` only.
///
/// # Errors
/// [`SimError`] when the scenario is malformed or either assignor fails.
pub fn run_with_shadow(
    assignor: &dyn TaskAssignor,
    shadow: Option<&dyn TaskAssignor>,
    scenario: &Scenario,
    config: &SimConfig,
) -> Result<Report, SimError> {
    run_world(assignor, shadow, scenario, config).map(|(report, _)| report)
}

/// [`run_with_shadow`], and the world as the run left it, to observe further
/// ([`World::observe_until`]).
fn run_world<'a>(
    assignor: &dyn TaskAssignor,
    shadow: Option<&dyn TaskAssignor>,
    scenario: &'a Scenario,
    config: &SimConfig,
) -> Result<(Report, World<'a>), SimError> {
    let mut world = World::new(scenario, config);
    for spec in &scenario.initial_members {
        world.apply(&EventKind::Join(spec.clone()))?;
    }
    if !world.members.is_empty() {
        world.rebalance(assignor, None, 0, "start".into(), false)?;
        if scenario.running {
            world.settle();
        }
    }
    let mut events: Vec<&Event> = scenario.events.iter().collect();
    events.sort_by_key(|e| e.at_ms);
    let mut next_event = 0;
    let mut rounds: Vec<Round> = Vec::new();
    let mut last_event_round = 0;
    let mut last_event_time = 0;
    let mut expected_departure_restore = 0i64;
    while rounds.len() < config.max_rounds {
        let event_time = events.get(next_event).map(|e| e.at_ms);
        let probe_time = world.probe_at.map(|(t, _)| t);
        let at = match (event_time, probe_time) {
            (None, None) => break,
            (Some(e), Some(p)) => e.min(p),
            (Some(e), None) => e,
            (None, Some(p)) => p,
        };
        world.advance(at);
        let mut triggers = Vec::new();
        let event = events.get(next_event).is_some_and(|e| e.at_ms == at);
        while events.get(next_event).is_some_and(|e| e.at_ms == at) {
            if matches!(events[next_event].kind, EventKind::Crash(_) | EventKind::Leave(_) | EventKind::LeaderCrash) {
                expected_departure_restore += world.departure_exposure();
            }
            triggers.push(world.apply(&events[next_event].kind)?);
            next_event += 1;
        }
        if triggers.is_empty() {
            triggers.push("probing rebalance".into());
        } else {
            last_event_round = rounds.len();
            last_event_time = at;
        }
        if world.members.iter().all(|m| !m.up) {
            continue;
        }
        let round = world.rebalance(assignor, shadow, rounds.len() + 1, triggers.join(", "), event)?;
        let settled = !round.probing_rebalance;
        rounds.push(round);
        if settled {
            if let Some(start) = world.stretch_start.take() {
                rounds[last_event_round].movement_lower_bound = Some(start.moves_to(&world.holdings()));
            }
        }
    }
    let converged = next_event >= events.len() && world.probe_at.is_none();
    let (lower_bound, bounded_tasks_moved) = bounded_stretches(&rounds);
    let last = rounds.last();
    let mut report = Report {
        scenario: scenario.name.clone(),
        assignor: assignor.name().to_owned(),
        converged,
        rounds_to_converge: rounds.len() - last_event_round,
        time_to_converge_ms: last.map_or(0, |r| r.time_ms - last_event_time),
        total_tasks_moved: rounds.iter().map(|r| r.tasks_moved).sum(),
        total_warmups: rounds.iter().map(|r| r.warmups).sum(),
        probing_rebalances: rounds.iter().filter(|r| r.probing_rebalance).count(),
        total_restoring_lag: rounds.iter().map(|r| r.restoring_lag).sum(),
        final_load_spread: last.map_or(0.0, |r| r.load_spread),
        final_stateful_load_spread: last.map_or(0.0, |r| r.stateful_load_spread),
        final_subtopology_spread: last.map_or(0.0, |r| r.subtopology_spread),
        lower_bound,
        bounded_tasks_moved,
        expected_departure_restore,
        changelog_records_read: world.changelog_records_read,
        local_copy_ms: world.local_copy_ms,
        rounds,
    };
    world.observe_until(config.observe_until_ms, &mut report);
    Ok((report, world))
}

/// Sums the lower bound and the moves over the stretches (an event's rebalance up to the next
/// event's) where it applies.
fn bounded_stretches(rounds: &[Round]) -> (Option<usize>, usize) {
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
    fn moves_to(&self, end: &Self) -> usize {
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

impl Report {
    /// The round-by-round table the command line prints.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "scenario {} · assignor {}", self.scenario, self.assignor);
        let _ = writeln!(
            out,
            "{:>5} {:>9} {:>7} {:>6} {:>7} {:>7} {:>8} {:>12} {:>13} {:>6}  trigger",
            "round", "time", "members", "moved", "warmups", "spread", "stateful", "sub-topology", "restoring lag", "probe"
        );
        for r in &self.rounds {
            let _ = writeln!(
                out,
                "{:>5} {:>9} {:>7} {:>6} {:>7} {:>7.2} {:>8.2} {:>12.2} {:>13} {:>6}  {}",
                r.round,
                format_ms(r.time_ms),
                r.members,
                r.tasks_moved,
                r.warmups,
                r.load_spread,
                r.stateful_load_spread,
                r.subtopology_spread,
                r.restoring_lag,
                if r.probing_rebalance { "yes" } else { "no" },
                r.trigger
            );
        }
        let _ = writeln!(
            out,
            "{} after {} rebalance(s) and {} from the last event; moved {}, warm-ups {}, probing rebalances {}, restoring lag {}, final spread {:.2}; changelog records read {}, copy-hours beyond the actives {:.1}",
            if self.converged { "converged" } else { "NOT converged" },
            self.rounds_to_converge,
            format_ms(self.time_to_converge_ms),
            self.total_tasks_moved,
            self.total_warmups,
            self.probing_rebalances,
            self.total_restoring_lag,
            self.final_load_spread,
            self.changelog_records_read,
            self.local_copy_ms as f64 / 3_600_000.0
        );
        out
    }
}

fn format_ms(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s % 3600 / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}.{:03}s", ms % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AssignmentConfigs, AssignorKind};
    use crate::sim::scenario::Subtopology;

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

    #[test]
    fn copies_cost_the_records_they_fetch_and_the_time_they_are_held() {
        // Two running members, two tasks, one standby each: every task has its standby on the
        // other member. Ten minutes pass before S1 restarts (static membership, nothing moves).
        let (s1, s2) = (MemberSpec::new("S1", 1), MemberSpec::new("S2", 1));
        let scenario = Scenario {
            name: "standbys".into(),
            description: String::new(),
            configs: AssignmentConfigs { num_standby_replicas: 1, ..AssignmentConfigs::default() },
            subtopologies: vec![Subtopology { id: 0, partitions: 2, changelog_records: Some(1_000_000) }],
            initial_members: vec![s1.clone(), s2],
            running: true,
            events: vec![Event { at_ms: 600_000, kind: EventKind::Restart(s1.process_id) }],
        };
        let report = run(AssignorKind::HighAvailability.assignor(), &scenario, &SimConfig::default()).unwrap();
        assert_eq!(report.total_restoring_lag, 0, "{}", report.table());
        // Each standby fetched the 100 records a second produced on its changelog, for 600 s.
        assert_eq!(report.changelog_records_read, 2 * 100 * 600);
        // Two copies beyond the actives, held for 600 s.
        assert_eq!(report.local_copy_ms, 2 * 600_000);
    }

    #[test]
    fn an_orphan_lands_first_on_a_caught_up_copy_else_on_its_freshest_copy() {
        let specs: Vec<MemberSpec> = (1..=4).map(|i| MemberSpec::new(&format!("S{i}"), 1)).collect();
        let p: Vec<ProcessId> = specs.iter().map(|s| s.process_id).collect();
        let scenario = Scenario {
            name: "orphans".into(),
            description: String::new(),
            configs: AssignmentConfigs::default(),
            subtopologies: vec![Subtopology { id: 0, partitions: 4, changelog_records: Some(1_000_000) }],
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
