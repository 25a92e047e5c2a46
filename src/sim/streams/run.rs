//! The streams protocol's driver: events change the membership, a membership change bumps the
//! group epoch and the coordinator computes a new target, and the members reconcile towards it
//! heartbeat by heartbeat while state restores.

use std::collections::{BTreeMap, BTreeSet};

use super::group::{Group, GroupMember, TaskSets};
use super::same_inputs::StickyOnSameInputs;
use super::{StreamsAssignor, StreamsConfig, StreamsReport};
use crate::engine::streams::{
    PROBE_TAG, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory, StreamsSubtopology, StreamsTopology,
    assign_optimized, assign_sticky, moves_waiting,
};
use crate::engine::{Assignment, ClientAssignment, Followup};
use crate::sim::config::SimConfig;
use crate::sim::report::{Report, Round, SimError};
use crate::sim::run::earliest;
use crate::sim::scenario::{Event, EventKind, Scenario};
use crate::sim::world::World;
use crate::wire::{ProcessId, TaskId};

/// A task as the streams protocol names it: subtopology id and partition.
fn task_of(subtopology: &str, partition: i32) -> Option<TaskId> {
    subtopology.parse().ok().map(|s| TaskId::new(s, partition))
}

fn tasks_of(tasks: &crate::engine::streams::Tasks) -> BTreeSet<TaskId> {
    tasks.iter().flat_map(|(s, ps)| ps.iter().filter_map(move |&p| task_of(s, p))).collect()
}

/// The run in progress: the world, the coordinator's group, the assignor's memory.
struct StreamsRun<'a> {
    world: World<'a>,
    group: Group,
    topology: StreamsTopology,
    assignor: StreamsAssignor,
    streams: StreamsConfig,
    memory: StreamsMemory,
    rounds: Vec<Round>,
    heartbeats: usize,
    most_doubly_owned: usize,
    /// The prober's next look, while one is in the group and the assignor waits for warm-ups.
    next_probe_ms: Option<i64>,
    probes: usize,
    probe_checks: usize,
    /// `sticky`'s answers on the targets' inputs, for an `optimized` run.
    same_inputs: Option<StickyOnSameInputs>,
}

/// The prober's member id, as the coordinator sees it.
const PROBER: &str = "prober-1";

impl<'a> StreamsRun<'a> {
    fn new(assignor: StreamsAssignor, scenario: &'a Scenario, config: &SimConfig, streams: &StreamsConfig) -> Self {
        let topology = StreamsTopology::new(
            scenario
                .subtopologies
                .iter()
                .map(|s| StreamsSubtopology::new(s.id.to_string(), s.partitions.max(0) as u32, s.changelog_records.is_some())),
        );
        Self {
            world: World::new(scenario, config),
            group: Group::default(),
            topology,
            assignor,
            streams: *streams,
            memory: StreamsMemory::new(),
            rounds: Vec::new(),
            heartbeats: 0,
            most_doubly_owned: 0,
            next_probe_ms: None,
            probes: 0,
            probe_checks: 0,
            same_inputs: matches!(assignor, StreamsAssignor::Optimized).then(StickyOnSameInputs::default),
        }
    }

    /// Whether a prober is in the group: under `optimized`, with `probe.interval.ms` set.
    fn probing(&self) -> bool {
        self.assignor == StreamsAssignor::Optimized && self.streams.probe_interval_ms > 0
    }

    /// Adds a member per stream thread of every process up that has none, removes those of
    /// processes down. Returns whether the membership changed.
    fn sync_membership(&mut self, h: i64) -> bool {
        let up: BTreeMap<ProcessId, (String, u32)> =
            self.world.members.iter().filter(|m| m.up).map(|m| (m.spec.process_id, (m.spec.name.clone(), m.spec.threads))).collect();
        let before = self.group.members.len();
        self.group.members.retain(|m| up.contains_key(&m.process_id));
        let mut changed = self.group.members.len() != before;
        for (process, (name, threads)) in &up {
            if self.group.members.iter().any(|m| m.process_id == *process) {
                continue;
            }
            for k in 1..=(*threads).max(1) {
                let mut member = GroupMember::new(format!("{name}-{k}"), *process);
                // The members there at the start joined at moments of their own before it; a
                // member that joins later heartbeats at once and then every interval.
                member.next_heartbeat_ms = if self.world.now == 0 { fnv(&member.member_id) % h } else { self.world.now };
                self.group.members.push(member);
            }
            changed = true;
        }
        changed
    }

    /// What the coordinator hands its assignor: every member's current tasks and the offsets
    /// it last sent ([`StreamsConfig::task_offset_interval_ms`]).
    fn spec(&self) -> StreamsGroupSpec {
        let configs = StreamsAssignmentConfigs::default()
            .with_num_standby_replicas(self.world.scenario.configs.num_standby_replicas.max(0) as u32)
            .with_num_warmup_replicas(self.streams.num_warmup_replicas)
            .with_acceptable_recovery_lag(self.streams.acceptable_recovery_lag);
        let members = self.group.members.iter().map(|gm| {
            let mut spec = StreamsMemberSpec::new(gm.member_id.clone(), gm.process_id.to_string());
            for (t, &epoch) in &gm.active {
                spec = spec.with_active_task(t.subtopology.to_string(), t.partition, epoch);
            }
            for t in &gm.standby {
                spec = spec.with_standby_task(t.subtopology.to_string(), t.partition);
            }
            for t in &gm.warmup {
                spec = spec.with_warmup_task(t.subtopology.to_string(), t.partition);
            }
            if let Some(sent) = &gm.sent {
                for (t, &offset) in &sent.offsets {
                    spec = spec.with_task_offset(t.subtopology.to_string(), t.partition, offset);
                }
                for (t, &end) in &sent.end_offsets {
                    spec = spec.with_task_end_offset(t.subtopology.to_string(), t.partition, end);
                }
            }
            spec
        });
        let prober = self.probing().then(|| StreamsMemberSpec::new(PROBER, "prober").with_client_tag(PROBE_TAG, self.probes.to_string()));
        StreamsGroupSpec::new(members.chain(prober)).with_configs(configs)
    }

    /// The prober's look: if the group is reconciled and an assignment now would move an active
    /// task to another process, it makes the coordinator assign again (its tag's next value).
    fn probe(&mut self) -> Result<(), SimError> {
        let interval = self.streams.probe_interval_ms;
        self.probe_checks += 1;
        self.next_probe_ms = Some(self.world.now + interval);
        let owner: BTreeMap<TaskId, String> = self
            .group
            .members
            .iter()
            .filter_map(|m| self.group.target.get(&m.member_id).map(|t| (m, t)))
            .flat_map(|(m, t)| t.active.iter().map(move |task| (task.clone(), m.process_id.to_string())))
            .collect();
        let spec = self.spec();
        let waiting = moves_waiting(&spec, &self.topology, &self.memory, self.world.now, |sub, p| {
            task_of(sub, p).and_then(|t| owner.get(&t).cloned())
        })
        .map_err(|e| SimError::Scenario { scenario: self.world.scenario.name.clone(), problem: format!("the prober: {e}") })?;
        if waiting {
            self.probes += 1;
            self.new_target("probe".into())?;
            if let Some(r) = self.rounds.last_mut() {
                r.probing_rebalance = true;
            }
        }
        Ok(())
    }

    /// Whether the assignor's last assignment waits for warm-ups (and so the prober looks).
    fn warmups_pending(&self) -> bool {
        self.memory.followup().is_some_and(|f| f.probing_rebalance_needed)
    }

    /// A new group epoch: the coordinator computes the target with the assignor.
    fn new_target(&mut self, trigger: String) -> Result<(), SimError> {
        self.group.group_epoch += 1;
        let round = self.rounds.len() + 1;
        let failed = |e: crate::engine::streams::StreamsAssignError| SimError::Scenario {
            scenario: self.world.scenario.name.clone(),
            problem: format!("group epoch {}: the {} assignor failed: {e}", self.group.group_epoch, self.assignor.name()),
        };
        let spec = self.spec();
        let target = match self.assignor {
            StreamsAssignor::Sticky => assign_sticky(&spec, &self.topology),
            StreamsAssignor::Optimized => assign_optimized(&spec, &self.topology, &mut self.memory, self.world.now),
        }
        .map_err(&failed)?;
        if let Some(same) = &mut self.same_inputs {
            same.add(&spec, &self.topology, &target).map_err(&failed)?;
        }
        self.group.target = target
            .members
            .iter()
            .filter(|(id, _)| id.as_str() != PROBER)
            .map(|(id, a)| {
                let sets =
                    TaskSets { active: tasks_of(&a.active_tasks), standby: tasks_of(&a.standby_tasks), warmup: tasks_of(&a.warmup_tasks) };
                (id.clone(), sets)
            })
            .collect();
        self.group.target_epoch = self.group.group_epoch;
        if self.probing() {
            self.next_probe_ms = self.warmups_pending().then(|| self.world.now + self.streams.probe_interval_ms);
        }
        let warmups = self.group.target.values().map(|s| s.warmup.len()).sum();
        let members = self.world.members.iter().filter(|m| m.up).count();
        self.rounds.push(Round {
            round,
            time_ms: self.world.now,
            trigger,
            members,
            tasks_moved: 0,
            stateful_tasks_moved: 0,
            warmups,
            spares: 0,
            load_spread: 0.0,
            stateful_load_spread: 0.0,
            subtopology_spread: 0.0,
            restoring_lag: 0,
            restoring_tasks: 0,
            probing_rebalance: false,
            movement_lower_bound: None,
            restoring_lag_not_caught_up: 0,
            shadow_restoring_lag: None,
            shadow_restoring_lag_not_caught_up: None,
        });
        Ok(())
    }

    /// A heartbeat of member `i`, and at once the acknowledgement of anything it revoked.
    fn heartbeat(&mut self, i: usize) {
        // Those of a reconciled group only send task offsets.
        if !self.group.reconciled() {
            self.heartbeats += 1;
        }
        self.send_offsets(i);
        self.group.heartbeat(i);
        if self.group.members[i].state == super::group::MemberState::UnrevokedTasks {
            self.group.heartbeat(i);
        }
        self.most_doubly_owned = self.most_doubly_owned.max(self.group.doubly_owned().len());
    }

    /// The task offsets member `i` puts in the heartbeat it sends now, as Kafka 4.4.0's client
    /// does (`StreamsGroupHeartbeatRequestManager`): all with its first heartbeat; later, where
    /// its tasks changed since it last reported them, the interval has passed since it last sent
    /// offsets or one of its warm-ups is within `acceptable.recovery.lag`, those that changed.
    /// Its offsets are its process's local state but for the tasks the process runs (Kafka's
    /// `TaskManager.maybeUpdateTaskOffsetSumSnapshot`), its end offsets the changelog ends of the
    /// tasks it restores (the state updater's).
    fn send_offsets(&mut self, i: usize) {
        let now = self.world.now;
        let gm = &self.group.members[i];
        let owned = TaskSets { active: gm.active.keys().cloned().collect(), standby: gm.standby.clone(), warmup: gm.warmup.clone() };
        let interval = self.streams.task_offset_interval_ms;
        // Nothing is due (no change, no warm-up, the interval not passed): no snapshot to take.
        if gm.sent.as_ref().is_some_and(|sent| sent.owned == owned && owned.warmup.is_empty() && sent.at_ms.saturating_add(interval) > now) {
            return;
        }
        let Some(process) = self.world.members.iter().find(|m| m.spec.process_id == gm.process_id) else { return };
        let running = |t: &TaskId| process.active.contains(t) && !process.restoring.contains(t);
        let offsets: BTreeMap<TaskId, i64> = process.offsets.iter().filter(|(t, _)| !running(t)).map(|(t, &o)| (t.clone(), o)).collect();
        let restoring = owned.active.iter().filter(|t| process.restoring.contains(*t)).chain(&owned.standby).chain(&owned.warmup);
        let end_offsets: BTreeMap<TaskId, i64> =
            restoring.filter_map(|t| self.world.end_offsets.get(t).map(|&e| (t.clone(), e))).collect();
        let lag = self.streams.acceptable_recovery_lag;
        let hot = owned.warmup.iter().any(|t| {
            offsets.get(t).zip(end_offsets.get(t)).is_some_and(|(&o, &e)| e.saturating_sub(o) <= lag)
        });
        let Some(sent) = &mut self.group.members[i].sent else {
            self.group.members[i].sent = Some(super::group::Sent { offsets, end_offsets, at_ms: now, checked_ms: now, owned });
            return;
        };
        let changed = sent.owned != owned;
        sent.owned = owned;
        if changed || hot || sent.at_ms.saturating_add(interval) <= now {
            sent.checked_ms = now;
            if sent.offsets != offsets {
                sent.offsets = offsets;
                sent.at_ms = now;
            }
            if sent.end_offsets != end_offsets {
                sent.end_offsets = end_offsets;
                sent.at_ms = now;
            }
        }
    }

    /// A group that has been running: every member's last task offsets are those of the state
    /// it has now, sent at a moment of its own within the last interval.
    fn resend_offsets(&mut self) {
        let interval = self.streams.task_offset_interval_ms.max(1);
        for i in 0..self.group.members.len() {
            self.group.members[i].sent = None;
            self.send_offsets(i);
            let at = -(fnv(&self.group.members[i].member_id) % interval);
            if let Some(sent) = &mut self.group.members[i].sent {
                (sent.at_ms, sent.checked_ms) = (at, at);
            }
        }
    }

    /// Hands the world what the members own now, and books the moves and restores on the
    /// current round.
    fn sync_world(&mut self) {
        let mut clients: BTreeMap<ProcessId, ClientAssignment> = BTreeMap::new();
        for m in self.world.members.iter().filter(|m| m.up) {
            let empty = ClientAssignment {
                process_id: m.spec.process_id,
                active_tasks: Vec::new(),
                standby_tasks: Vec::new(),
                warmup_tasks: Vec::new(),
                spare_tasks: Vec::new(),
            };
            clients.insert(m.spec.process_id, empty);
        }
        for gm in &self.group.members {
            let Some(c) = clients.get_mut(&gm.process_id) else { continue };
            c.active_tasks.extend(gm.active.keys().cloned());
            c.standby_tasks.extend(gm.standby.iter().chain(&gm.warmup).cloned());
            c.warmup_tasks.extend(gm.warmup.iter().cloned());
        }
        let followup = Followup { probing_rebalance_needed: false, probing_rebalance_interval_ms: 0, watch_list: Vec::new() };
        let out = Assignment { assignor: self.assignor.name().to_owned(), clients: clients.into_values().collect(), followup };
        let started = self.world.restores_started(&out);
        let (moved, stateful_moved) = self.world.take_assignment(&out);
        let spreads = self.world.spreads(&out);
        if let Some(r) = self.rounds.last_mut() {
            r.tasks_moved += moved;
            r.stateful_tasks_moved += stateful_moved;
            r.restoring_lag += started.records;
            r.restoring_tasks += started.tasks;
            r.restoring_lag_not_caught_up += started.not_caught_up;
            r.load_spread = spreads.load;
            r.stateful_load_spread = spreads.stateful_load;
            r.subtopology_spread = spreads.subtopology;
        }
    }

    /// The members whose heartbeat is due at `now` heartbeat, in the coordinator's order, and
    /// the world takes what they own.
    fn heartbeats_due(&mut self, h: i64) {
        let now = self.world.now;
        for i in 0..self.group.members.len() {
            if self.group.members[i].next_heartbeat_ms <= now {
                self.heartbeat(i);
                self.group.members[i].next_heartbeat_ms = next_after(now, self.group.members[i].next_heartbeat_ms, h);
            }
        }
        self.sync_world();
    }

    /// When the next member heartbeats with task offsets to send: at its next heartbeat while
    /// it holds warm-ups, else at its first once the interval has passed since it last sent
    /// them or last found nothing to send.
    fn next_offsets_sent(&self, h: i64) -> Option<i64> {
        let interval = self.streams.task_offset_interval_ms;
        self.group
            .members
            .iter()
            .map(|m| match &m.sent {
                Some(sent) if m.warmup.is_empty() => {
                    let due = sent.at_ms.max(sent.checked_ms).saturating_add(interval);
                    if m.next_heartbeat_ms >= due { m.next_heartbeat_ms } else { next_after(due - 1, m.next_heartbeat_ms, h) }
                }
                _ => m.next_heartbeat_ms,
            })
            .min()
    }

    /// When the next member heartbeats.
    fn next_heartbeat(&self) -> Option<i64> {
        self.group.members.iter().map(|m| m.next_heartbeat_ms).min()
    }

    /// Moves every member's next heartbeat past `now` on its own schedule (after a stretch
    /// without reconciling, the times kept fell behind).
    fn catch_up_heartbeats(&mut self, h: i64) {
        let now = self.world.now;
        for m in &mut self.group.members {
            if m.next_heartbeat_ms <= now {
                m.next_heartbeat_ms = next_after(now, m.next_heartbeat_ms, h);
            }
        }
    }
}

/// The first time after `now` on the schedule of a member that heartbeats every `h` ms at `at`.
fn next_after(now: i64, at: i64, h: i64) -> i64 {
    if at > now { at } else { at + ((now - at) / h + 1) * h }
}

/// FNV-1a of `text`, as a non-negative number.
fn fnv(text: &str) -> i64 {
    let mut x: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        x = (x ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (x >> 1) as i64
}

/// Runs `scenario` on the streams protocol with `assignor` as the coordinator's assignor.
pub(super) fn run(
    assignor: StreamsAssignor,
    scenario: &Scenario,
    config: &SimConfig,
    streams: &StreamsConfig,
) -> Result<StreamsReport, SimError> {
    let h = streams.heartbeat_interval_ms.max(1);
    let mut run = StreamsRun::new(assignor, scenario, config, streams);
    for spec in &scenario.initial_members {
        run.world.apply(&EventKind::Join(spec.clone()))?;
    }
    if run.sync_membership(h) {
        // The starting assignment: reconciled before the scenario's clock starts.
        run.new_target("start".into())?;
        while !run.group.reconciled() && run.heartbeats < 10_000 {
            for i in 0..run.group.members.len() {
                run.heartbeat(i);
            }
        }
        run.sync_world();
        run.rounds.clear();
        run.heartbeats = 0;
        if scenario.running {
            run.world.settle();
            run.resend_offsets();
        }
    }
    let mut events: Vec<&Event> = scenario.events.iter().collect();
    events.sort_by_key(|e| e.at_ms);
    let mut next_event = 0;
    let (mut last_event_round, mut last_event_time, mut reconciled_at) = (0, 0i64, 0i64);
    let mut expected_departure_restore = 0i64;
    // A reconciliation that never ends would step forever: a run gives up after this many.
    let max_heartbeats = config.max_rounds.saturating_mul(1000);
    while run.rounds.len() < config.max_rounds && run.heartbeats < max_heartbeats {
        let event_time = events.get(next_event).map(|e| e.at_ms);
        // A reconciled group heartbeats to no effect, but for the task offsets its members
        // send, which matter while anything is left to read them.
        let step_time = if !run.group.reconciled() {
            run.next_heartbeat()
        } else if event_time.is_some() || run.next_probe_ms.is_some() {
            run.next_offsets_sent(h)
        } else {
            None
        };
        // The prober looks only at a reconciled group, and gives up after as many looks as the
        // run has heartbeats.
        let probe_time = run.next_probe_ms.filter(|_| run.group.reconciled() && run.probe_checks < max_heartbeats);
        let Some(at) = earliest(earliest(event_time, step_time), probe_time) else { break };
        run.world.advance(at);
        let mut triggers = Vec::new();
        if event_time == Some(at) {
            while events.get(next_event).is_some_and(|e| e.at_ms == at) {
                if matches!(events[next_event].kind, EventKind::Crash(_) | EventKind::Leave(_) | EventKind::LeaderCrash) {
                    expected_departure_restore += run.world.departure_exposure();
                }
                let kind = &events[next_event].kind;
                let text = run.world.apply(kind)?;
                next_event += 1;
                // Input that arrives is no change to the group.
                if matches!(kind, EventKind::Produce(_)) {
                    continue;
                }
                // The streams protocol has no group leader: the event is that member's crash.
                triggers.push(match text.strip_prefix("leader ") {
                    Some(crash) => format!("{crash} (the classic protocol's leader)"),
                    None => text,
                });
            }
        }
        if !triggers.is_empty() {
            run.catch_up_heartbeats(h);
            // A restart under static membership keeps the member's identity: no new epoch.
            if run.sync_membership(h) && !run.group.members.is_empty() {
                run.new_target(triggers.join(", "))?;
                last_event_round = run.rounds.len() - 1;
            }
            last_event_time = at;
        } else if probe_time == Some(at) {
            run.catch_up_heartbeats(h);
            run.probe()?;
        }
        // The members that just joined heartbeat now; the others when their interval is up.
        run.heartbeats_due(h);
        if run.group.reconciled() {
            reconciled_at = at;
        }
    }
    let converged = next_event >= events.len() && run.group.reconciled() && !(run.probing() && run.warmups_pending());
    let rounds = std::mem::take(&mut run.rounds);
    let last = rounds.last();
    let warmups_waiting = run.group.target.values().map(|s| s.warmup.len()).sum();
    let mut report = Report {
        scenario: scenario.name.clone(),
        assignor: format!("streams/{}", assignor.name()),
        converged,
        rounds_to_converge: rounds.len().saturating_sub(last_event_round),
        time_to_converge_ms: (reconciled_at - last_event_time).max(0),
        total_tasks_moved: rounds.iter().map(|r| r.tasks_moved).sum(),
        total_warmups: rounds.iter().map(|r| r.warmups).sum(),
        probing_rebalances: run.probes,
        total_restoring_lag: rounds.iter().map(|r| r.restoring_lag).sum(),
        final_load_spread: last.map_or(0.0, |r| r.load_spread),
        final_stateful_load_spread: last.map_or(0.0, |r| r.stateful_load_spread),
        final_subtopology_spread: last.map_or(0.0, |r| r.subtopology_spread),
        lower_bound: None,
        bounded_tasks_moved: 0,
        expected_departure_restore,
        changelog_records_read: 0,
        local_copy_ms: 0,
        task_downtime_ms: 0,
        rounds,
    };
    let restored_ms = (run.world.all_restored_at() - last_event_time).max(0);
    let unowned_task_ms = run.world.unowned_task_ms;
    run.world.observe_until(config.observe_until_ms, &mut report);
    Ok(StreamsReport {
        report,
        group_epochs: run.group.group_epoch,
        heartbeats: run.heartbeats,
        unowned_task_ms,
        warmups_waiting,
        probes: run.probes,
        most_doubly_owned: run.most_doubly_owned,
        sticky_on_same_inputs: run.same_inputs,
        restored_ms,
        end_ms: run.world.now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scenario::crash_of_one_of_two;

    #[test]
    fn a_moved_task_is_down_while_unowned_and_while_it_restores() {
        // Nothing produced: a task of 2,000,000 records restores in 100 s at 20,000 records/s.
        let config = SimConfig { produce_records_per_sec: 0, ..SimConfig::default() };
        let streams = StreamsConfig::default();
        for assignor in [StreamsAssignor::Sticky, StreamsAssignor::Optimized] {
            // The crashed member's task waits for the survivor's next heartbeat, then restores.
            let cold = run(assignor, &crash_of_one_of_two(0), &config, &streams).unwrap();
            let gap = cold.unowned_task_ms;
            assert!(gap > 0 && gap <= streams.heartbeat_interval_ms, "{}", cold.table());
            assert_eq!((cold.report.total_tasks_moved, cold.report.total_restoring_lag), (1, 2_000_000), "{}", cold.table());
            assert_eq!(cold.report.task_downtime_ms, gap + 100_000, "{}", cold.table());
            // Onto a caught-up standby: down only for the gap.
            let warm = run(assignor, &crash_of_one_of_two(1), &config, &streams).unwrap();
            assert_eq!((warm.report.total_tasks_moved, warm.report.total_restoring_lag), (1, 0), "{}", warm.table());
            assert!(warm.unowned_task_ms > 0, "{}", warm.table());
            assert_eq!(warm.report.task_downtime_ms, warm.unowned_task_ms, "{}", warm.table());
        }
    }
}
