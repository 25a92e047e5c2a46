//! The driver: the scenario's events in time order, a rebalance after each and after every
//! probing rebalance the assignor asks for, until the assignment is stable.

use super::config::SimConfig;
use super::lower_bound::{Holdings, bounded_stretches};
use super::report::{Report, Round, SimError};
use super::scenario::{Event, EventKind, Scenario};
use super::world::World;
use crate::engine::{PreviousRebalance, TaskAssignor};

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
pub(super) fn run_world<'a>(
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
        world.rebalance(assignor, None, 0, "start".into())?;
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
    // Who held what before the last event, until its stretch settles.
    let mut stretch_start: Option<Holdings> = None;
    while rounds.len() < config.max_rounds {
        let event_time = events.get(next_event).map(|e| e.at_ms);
        let probe_time = world.probe_at.map(|(t, _)| t);
        let Some(at) = earliest(event_time, probe_time) else { break };
        world.advance(at);
        let mut triggers = Vec::new();
        while events.get(next_event).is_some_and(|e| e.at_ms == at) {
            let kind = &events[next_event].kind;
            if matches!(kind, EventKind::Crash(_) | EventKind::Leave(_) | EventKind::LeaderCrash) {
                expected_departure_restore += world.departure_exposure();
            }
            let text = world.apply(kind)?;
            // Input that arrives is no reason to rebalance.
            if !matches!(kind, EventKind::Produce(_)) {
                triggers.push(text);
            }
            next_event += 1;
        }
        let event = !triggers.is_empty();
        if triggers.is_empty() {
            if probe_time != Some(at) {
                continue;
            }
            triggers.push("probing rebalance".into());
        } else {
            last_event_round = rounds.len();
            last_event_time = at;
        }
        if world.members.iter().all(|m| !m.up) {
            continue;
        }
        if event {
            stretch_start = Some(world.holdings());
        }
        let round = world.rebalance(assignor, shadow, rounds.len() + 1, triggers.join(", "))?;
        let settled = !round.probing_rebalance;
        rounds.push(round);
        if settled {
            if let Some(start) = stretch_start.take() {
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
        task_downtime_ms: world.task_downtime_ms(),
        rounds,
    };
    world.observe_until(config.observe_until_ms, &mut report);
    Ok((report, world))
}

impl World<'_> {
    /// Rebalance number `round`: asks `assignor` (and `shadow`, for comparison, on the same
    /// input) what to assign, hands the members their tasks and schedules the probing rebalance
    /// the assignor asks for.
    fn rebalance(
        &mut self,
        assignor: &dyn TaskAssignor,
        shadow: Option<&dyn TaskAssignor>,
        round: usize,
        trigger: String,
    ) -> Result<Round, SimError> {
        let input = self.input();
        let failed = |source| SimError::Assign { round, source };
        let out = assignor.assign(&input).map_err(failed)?;
        let previous = PreviousRebalance {
            elapsed_ms: 0,
            changelog_end_offset_sums: input.changelog_end_offset_sums.clone().unwrap_or_default(),
            task_offset_sums: input.clients.iter().map(|c| (c.process_id, c.task_offset_sums.clone())).collect(),
        };
        self.previous = Some((self.now, previous));
        let started = self.restores_started(&out);
        let theirs = shadow.map(|shadow| shadow.assign(&input).map(|o| self.restores_started(&o))).transpose().map_err(failed)?;
        let members = self.members.iter().filter(|m| m.up).count();
        let (tasks_moved, stateful_tasks_moved) = self.take_assignment(&out);
        let spreads = self.spreads(&out);
        self.probe_at = if out.followup.probing_rebalance_needed {
            self.leader().map(|leader| (self.now + out.followup.probing_rebalance_interval_ms, leader))
        } else {
            None
        };
        Ok(Round {
            round,
            time_ms: self.now,
            trigger,
            members,
            tasks_moved,
            stateful_tasks_moved,
            warmups: out.followup.watch_list.len(),
            spares: out.clients.iter().map(|c| c.spare_tasks.len()).sum(),
            load_spread: spreads.load,
            stateful_load_spread: spreads.stateful_load,
            subtopology_spread: spreads.subtopology,
            restoring_lag: started.records,
            restoring_tasks: started.tasks,
            restoring_lag_not_caught_up: started.not_caught_up,
            probing_rebalance: out.followup.probing_rebalance_needed,
            movement_lower_bound: None,
            shadow_restoring_lag: theirs.map(|r| r.records),
            shadow_restoring_lag_not_caught_up: theirs.map(|r| r.not_caught_up),
        })
    }
}

/// The earlier of two times a run waits for, either of which may not come.
pub(super) fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    a.into_iter().chain(b).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AssignmentConfigs, AssignorKind};
    use crate::sim::scenario::{MemberSpec, Subtopology};

    #[test]
    fn copies_cost_the_records_they_fetch_and_the_time_they_are_held() {
        // Two running members, two tasks, one standby each: every task has its standby on the
        // other member. Ten minutes pass before S1 restarts (static membership, nothing moves).
        let (s1, s2) = (MemberSpec::new("S1", 1), MemberSpec::new("S2", 1));
        let scenario = Scenario {
            name: "standbys".into(),
            description: String::new(),
            configs: AssignmentConfigs { num_standby_replicas: 1, ..AssignmentConfigs::default() },
            subtopologies: vec![Subtopology::new(0, 2, Some(1_000_000))],
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
    fn a_cold_move_is_down_for_its_restore_and_a_warm_move_not_at_all() {
        // Nothing produced: a task of 2,000,000 records restores in 100 s at 20,000 records/s.
        let config = SimConfig { produce_records_per_sec: 0, ..SimConfig::default() };
        let ha = AssignorKind::HighAvailability.assignor();
        // The crashed member's task moves within the rebalance: down only while it restores.
        let cold = run(ha, &crate::sim::scenario::crash_of_one_of_two(0), &config).unwrap();
        assert_eq!((cold.total_tasks_moved, cold.total_restoring_lag), (1, 2_000_000), "{}", cold.table());
        assert_eq!(cold.task_downtime_ms, 100_000, "{}", cold.table());
        // Onto a caught-up standby: it runs at once.
        let warm = run(ha, &crate::sim::scenario::crash_of_one_of_two(1), &config).unwrap();
        assert_eq!((warm.total_tasks_moved, warm.total_restoring_lag), (1, 0), "{}", warm.table());
        assert_eq!(warm.task_downtime_ms, 0, "{}", warm.table());
    }
}
