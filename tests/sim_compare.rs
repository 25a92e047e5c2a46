//! The optimized assignor against Kafka's high-availability assignor in the simulator: the
//! issue's targets on the built-in scenarios and random churn.
//!
//! The suite is the README's (`simulate --compare`): the built-in scenarios and random-churn
//! seeds 1 to 100, with the simulator's defaults (Kafka's `state.cleanup.delay.ms`); it runs in
//! well under a second even in a debug build. Every target is asserted per scenario, except
//! restored lag, which does not hold in the scenarios `MORE_RESTORED_LAG` names (see
//! `restored_lag` and the README). There the optimized assignor's new owners restore from the
//! freshest copy any member has, and its spare replicas cover the tasks of the client whose crash
//! would cost most, but a crash still costs what the crashed member happened to hold: Kafka's
//! assignor keeps moving tasks and warming them up for much longer while it converges, and the
//! copies this leaves behind sometimes shorten the restores after a later crash or departure.
//! Over the suite the optimized assignor restores less.

use std::sync::OnceLock;

use kstreams_assignor::engine::{
    AssignError, Assignment, AssignmentConfigs, AssignmentInput, AssignorKind, OptimizedTaskAssignor, TaskAssignor,
};
use kstreams_assignor::sim::{self, Comparison, SimConfig};

const SEEDS: u64 = 100;

fn suite() -> &'static Comparison {
    static SUITE: OnceLock<Comparison> = OnceLock::new();
    SUITE.get_or_init(|| {
        sim::compare_suite(AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor(), SEEDS, &SimConfig::default())
            .unwrap()
    })
}

fn totals(f: impl Fn(&sim::Summary) -> f64) -> (f64, f64) {
    suite().rows.iter().fold((0.0, 0.0), |(a, b), r| (a + f(&r.baseline), b + f(&r.candidate)))
}

#[test]
fn at_least_30_percent_fewer_movements() {
    let (a, b) = totals(|s| s.tasks_moved as f64);
    assert!(b <= 0.7 * a, "moved {a} → {b}\n{}", suite().table());
}

#[test]
fn at_least_30_percent_fewer_probing_rebalances_and_less_time() {
    let (a, b) = totals(|s| s.probing_rebalances as f64);
    assert!(b <= 0.7 * a, "probing {a} → {b}");
    let (a, b) = totals(|s| s.time_to_converge_ms as f64);
    assert!(b <= 0.7 * a, "time to converge {a} → {b} ms");
}

#[test]
fn converges_and_is_never_less_balanced() {
    for r in &suite().rows {
        assert!(r.candidate.converged, "{}", r.scenario);
        assert!(r.candidate.final_spread <= r.baseline.final_spread + 1e-9, "{}: spread {:?} vs {:?}", r.scenario, r.candidate, r.baseline);
        assert!(r.candidate.final_stateful_spread <= r.baseline.final_stateful_spread + 1e-9, "{}", r.scenario);
    }
}

#[test]
fn rolling_bounce_moves_nothing() {
    let row = suite().rows.iter().find(|r| r.scenario == "rolling-bounce").unwrap();
    assert_eq!(row.candidate.tasks_moved, 0);
    assert_eq!(row.candidate.probing_rebalances, 0);
}

#[test]
fn movements_stay_within_10_percent_of_the_lower_bound_in_every_scenario() {
    for r in &suite().rows {
        let bound = r.candidate.lower_bound.unwrap_or_else(|| panic!("{}: every scenario settles between events", r.scenario));
        assert!(r.candidate.bounded_tasks_moved as f64 <= 1.1 * bound as f64, "{}: {:?}", r.scenario, r.candidate);
    }
    let bound: usize = suite().rows.iter().filter_map(|r| r.candidate.lower_bound).sum();
    assert!(bound > 0);
}

#[test]
fn the_lower_bound_is_a_lower_bound_for_both_assignors() {
    for r in &suite().rows {
        for s in [&r.baseline, &r.candidate] {
            if let Some(bound) = s.lower_bound {
                assert!(s.bounded_tasks_moved >= bound, "{}: {s:?}", r.scenario);
            }
        }
    }
}

/// The scenarios where the optimized assignor restores more than Kafka's: none of them has
/// standbys.
const MORE_RESTORED_LAG: &[&str] = &[
    "random-churn-9",
    "random-churn-13",
    "random-churn-20",
    "random-churn-24",
    "random-churn-29",
    "random-churn-45",
    "random-churn-58",
    "random-churn-59",
    "random-churn-65",
    "random-churn-77",
    "random-churn-85",
    "random-churn-88",
    "random-churn-96",
];

#[test]
fn restored_lag() {
    // No more than Kafka's in every other scenario, and the list is exact.
    let more: Vec<&str> =
        suite().rows.iter().filter(|r| r.candidate.restoring_lag > r.baseline.restoring_lag).map(|r| r.scenario.as_str()).collect();
    assert_eq!(more, MORE_RESTORED_LAG);
    // All are random churn without standbys.
    for name in MORE_RESTORED_LAG {
        let scenario = sim::builtin("random-churn", name.rsplit('-').next().unwrap().parse().unwrap()).unwrap();
        assert_eq!(scenario.configs.num_standby_replicas, 0, "{name}");
    }
    // The scale-out that KIP-441 is about restores nothing on active tasks.
    let r = suite().rows.iter().find(|r| r.scenario == "scale-out").unwrap();
    assert_eq!(r.candidate.restoring_lag, 0);
    // Over the suite, less than Kafka's, also on average over which member departs.
    let (a, b) = totals(|s| s.restoring_lag as f64);
    assert!(b < a, "restored {a} → {b}");
    let (a, b) = totals(|s| s.expected_departure_restore as f64);
    assert!(b < a, "expected departure restore {a} → {b}");
}

#[test]
fn where_kafkas_assignor_restores_less_its_copies_cost_more() {
    // Kafka's assignor restores less where its longer churn left copies behind. Those copies are
    // not free: in each of those scenarios its runs fetch more changelog records than the
    // optimized assignor's, and all but two keep more copy-hours of state beyond the actives
    // (both runs counted up to the later one's last rebalance).
    let rows: Vec<_> = suite().rows.iter().filter(|r| MORE_RESTORED_LAG.contains(&r.scenario.as_str())).collect();
    assert_eq!(rows.len(), MORE_RESTORED_LAG.len());
    for r in &rows {
        assert!(r.candidate.changelog_records_read < r.baseline.changelog_records_read, "{}: {:?} vs {:?}", r.scenario, r.candidate, r.baseline);
    }
    let more_copies: Vec<&str> =
        rows.iter().filter(|r| r.candidate.local_copy_ms >= r.baseline.local_copy_ms).map(|r| r.scenario.as_str()).collect();
    assert_eq!(more_copies, ["random-churn-29", "random-churn-65"]);
    // Over the suite, the optimized assignor's copies fetch at least 15 % fewer records and are
    // held for fewer hours; only it keeps spares once stable.
    let (a, b) = totals(|s| s.changelog_records_read as f64);
    assert!(b < 0.85 * a, "changelog records read {a} → {b}");
    let (a, b) = totals(|s| s.local_copy_ms as f64);
    assert!(b < a, "copy-ms {a} → {b}");
    let (a, b) = totals(|s| s.final_spares as f64);
    assert!(a == 0.0 && b > 0.0, "final spares {a} → {b}");
}

#[test]
fn both_runs_pay_for_their_copies_up_to_the_same_moment() {
    // On the scale-out the optimized assignor is stable minutes after the join, Kafka's an hour
    // later. The comparison counts the optimized run's copies on to Kafka's last rebalance: the
    // same rebalances, and the standbys' fetching and holding for that hour on top.
    let scenario = sim::builtin("scale-out", 0).unwrap();
    let (a, b) = (AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor());
    let config = SimConfig::default();
    let cmp = sim::compare(a, b, std::slice::from_ref(&scenario), &config).unwrap();
    let (alone_a, alone_b) = (sim::run(a, &scenario, &config).unwrap(), sim::run(b, &scenario, &config).unwrap());
    let end = |r: &sim::Report| r.rounds.last().unwrap().time_ms;
    assert!(end(&alone_b) + 3_000_000 < end(&alone_a), "{} vs {}", end(&alone_b), end(&alone_a));
    let mut until = config;
    until.observe_until_ms = end(&alone_a);
    let b_until = sim::run(b, &scenario, &until).unwrap();
    assert_eq!(b_until.rounds, alone_b.rounds);
    assert!(b_until.local_copy_ms > alone_b.local_copy_ms && b_until.changelog_records_read > alone_b.changelog_records_read);
    let row = &cmp.rows[0];
    assert_eq!((row.baseline.local_copy_ms, row.baseline.changelog_records_read), (alone_a.local_copy_ms, alone_a.changelog_records_read));
    assert_eq!((row.candidate.local_copy_ms, row.candidate.changelog_records_read), (b_until.local_copy_ms, b_until.changelog_records_read));
}

#[test]
fn with_events_further_apart_the_rest_is_the_draw_of_who_departs() {
    // Random churn's events come 1 to 30 minutes apart, so a crash often finds the copies that
    // Kafka's assignor's longer churn left behind (kept `state.cleanup.delay.ms`, 10 minutes, after
    // they stop being used). With the same events 10 to 300 minutes apart, Kafka's assignor has
    // converged and those copies are gone before the next event. The optimized assignor then
    // restores more in four scenarios, and in each of them it would restore less on average over
    // which member departs: what it loses there is the draw of who goes, not the copies it keeps.
    let mut scenarios = sim::suite_scenarios(SEEDS);
    for s in scenarios.iter_mut().filter(|s| s.name.starts_with("random-churn-")) {
        for e in &mut s.events {
            e.at_ms *= 10;
        }
    }
    let c = sim::compare(AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor(), &scenarios, &SimConfig::default())
        .unwrap();
    let more: Vec<_> = c.rows.iter().filter(|r| r.candidate.restoring_lag > r.baseline.restoring_lag).collect();
    let names: Vec<&str> = more.iter().map(|r| r.scenario.as_str()).collect();
    assert_eq!(names, ["random-churn-38", "random-churn-45", "random-churn-77", "random-churn-88"]);
    for r in more {
        assert!(
            r.candidate.expected_departure_restore < r.baseline.expected_departure_restore,
            "{}: whoever departs {} vs {}",
            r.scenario,
            r.candidate.expected_departure_restore,
            r.baseline.expected_departure_restore
        );
    }
    let restored = |f: fn(&sim::Summary) -> i64| c.rows.iter().fold((0, 0), |(a, b), r| (a + f(&r.baseline), b + f(&r.candidate)));
    let (a, b) = restored(|s| s.restoring_lag);
    assert!(b * 100 < a * 90, "restored {a} → {b}");
}

#[test]
fn on_the_same_inputs_the_optimized_assignor_restores_more_only_within_the_acceptable_recovery_lag() {
    // Both assignors asked at every rebalance of both runs. Where the optimized assignor's
    // answer restores more, it moves a task onto a copy within `acceptable.recovery.lag` (a
    // member back after a short crash) that Kafka's leaves for a later rebalance.
    let same = suite().same_inputs();
    assert!(same.rebalances > 2000, "{same:?}");
    assert!(same.candidate_restoring_lag < same.baseline_restoring_lag, "{same:?}");
    let acceptable = sim::builtin("random-churn", 13).unwrap().configs.acceptable_recovery_lag;
    assert!(same.candidate_most_extra <= acceptable, "{same:?}");
    // Never more on clients that are not caught up.
    assert_eq!(same.candidate_restores_more_not_caught_up, 0, "{same:?}");
    let more: Vec<&str> =
        suite().rows.iter().filter(|r| r.same_inputs.candidate_restores_more > 0).map(|r| r.scenario.as_str()).collect();
    assert_eq!(more, ["random-churn-13", "random-churn-74"]);
    assert_eq!(same.candidate_restores_more, 3);
    // On the scenarios where the runs' totals favour Kafka's assignor, its answers on the same
    // inputs restore no less.
    for r in suite().rows.iter().filter(|r| MORE_RESTORED_LAG.contains(&r.scenario.as_str())) {
        let s = &r.same_inputs;
        assert!(
            s.candidate_restoring_lag <= s.baseline_restoring_lag + s.candidate_most_extra * s.candidate_restores_more as i64,
            "{}: {s:?}",
            r.scenario
        );
    }
}

#[test]
fn the_optimized_assignor_spreads_each_sub_topology_at_least_as_well_over_the_suite() {
    // Not one of the targets, and not in every scenario (a departed member's tasks go to the
    // caught-up copies first), but over the suite B's final sub-topology spread is smaller.
    let (a, b) = totals(|s| s.final_subtopology_spread);
    assert!(b < 0.8 * a, "sub-topology spread {a} → {b}");
    let smaller = suite().rows.iter().filter(|r| r.candidate.final_subtopology_spread < r.baseline.final_subtopology_spread - 1e-9).count();
    let larger = suite().rows.iter().filter(|r| r.candidate.final_subtopology_spread > r.baseline.final_subtopology_spread + 1e-9).count();
    assert!(smaller > 2 * larger, "smaller in {smaller}, larger in {larger}");
    // The scale-out KIP-441 is about ends with every sub-topology spread evenly, as Kafka's.
    let r = suite().rows.iter().find(|r| r.scenario == "scale-out").unwrap();
    assert_eq!((r.baseline.final_subtopology_spread, r.candidate.final_subtopology_spread), (0.0, 0.0));
}

#[test]
fn the_comparison_reports_its_targets() {
    let targets = suite().targets();
    assert_eq!(targets.len(), 8);
    for t in &targets {
        assert_eq!(t.holds, !t.name.starts_with("never more restoring lag"), "{}: {}", t.name, t.detail);
    }
    // The restoring target in the form that does not depend on each run's history.
    let same = targets.iter().find(|t| t.name.starts_with("less restoring lag on actives (suite)")).unwrap();
    assert!(same.detail.ends_with("more on a client not caught up in 0 of 2321 rebalances"), "{}", same.detail);
    let table = suite().table();
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 1 + suite().rows.len() + 1, "header, rows, total");
}

#[test]
fn deleting_stale_state_makes_both_assignors_restore_more() {
    // `state.cleanup.delay.ms` (Kafka's default) against a member keeping every copy forever
    // (0): stale copies shorten restores, for both assignors.
    assert_eq!(SimConfig::default().state_cleanup_delay_ms, 600_000);
    let mut forever = SimConfig::default();
    forever.state_cleanup_delay_ms = 0;
    let kept = sim::compare_suite(AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor(), SEEDS, &forever)
        .unwrap();
    let lag = |c: &Comparison| c.rows.iter().fold((0, 0), |(a, b), r| (a + r.baseline.restoring_lag, b + r.candidate.restoring_lag));
    let ((kept_a, kept_b), (a, b)) = (lag(&kept), lag(suite()));
    assert!(kept_a < a && kept_b < b, "kept forever {kept_a}/{kept_b}, cleaned {a}/{b}");
}

/// The optimized assignor with one of its own keys set.
struct Tuned(fn(AssignmentConfigs) -> AssignmentConfigs);

impl TaskAssignor for Tuned {
    fn name(&self) -> &'static str {
        OptimizedTaskAssignor::NAME
    }

    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError> {
        let mut input = input.clone();
        input.configs = (self.0)(input.configs.clone());
        OptimizedTaskAssignor.assign(&input)
    }
}

#[test]
fn an_imbalance_percentage_trades_balance_for_fewer_moves() {
    // The seed KIP's balance factor, opt-in: at 30 % the optimized assignor moves less, warms up
    // less, probes less and converges sooner over the suite than at its default (0), and it
    // gives up the target of a final spread no worse than Kafka's.
    let tolerant = sim::compare_suite(AssignorKind::HighAvailability.assignor(), &Tuned(|c| c.with_stream_imbalance_percentage(30)), SEEDS, &SimConfig::default()).unwrap();
    // Per comparison: moves, warm-ups, probing rebalances and time to converge, summed.
    let sums = |c: &Comparison| {
        c.rows.iter().fold([0u64; 4], |[m, w, p, t], r| {
            let s = &r.candidate;
            [m + s.tasks_moved as u64, w + s.warmups as u64, p + s.probing_rebalances as u64, t + s.time_to_converge_ms as u64]
        })
    };
    let (strict, loose) = (sums(suite()), sums(&tolerant));
    for (i, what) in ["moves", "warm-ups", "probing rebalances", "time to converge (ms)"].iter().enumerate() {
        assert!(loose[i] < strict[i], "{what}: {} at 0 %, {} at 30 %", strict[i], loose[i]);
    }
    assert!(tolerant.rows.iter().all(|r| r.candidate.converged));
    assert!(tolerant.rows.iter().any(|r| r.candidate.final_spread > r.baseline.final_spread + 1e-9));
    let spread = tolerant.targets().into_iter().find(|t| t.name.starts_with("never a worse final spread")).unwrap();
    assert!(!spread.holds);
}

#[test]
fn five_more_spare_replicas_make_every_target_hold_on_the_suite_for_more_copy_hours() {
    // `max.spare.replicas` = 5 (this crate's key): the optimized assignor may keep five spare
    // copies beyond its idle warm-up budget. Then it restores no more than Kafka's assignor in
    // any scenario of the suite (not on the held-out seeds: see the README), and its runs still
    // fetch fewer changelog records, but they hold more copy-hours of state than Kafka's.
    let spares = sim::compare_suite(AssignorKind::HighAvailability.assignor(), &Tuned(|c| c.with_max_spare_replicas(5)), SEEDS, &SimConfig::default()).unwrap();
    for t in spares.targets() {
        assert!(t.holds, "{}: {}", t.name, t.detail);
    }
    let (reads_a, reads_b) = spares.rows.iter().fold((0, 0), |(a, b), r| (a + r.baseline.changelog_records_read, b + r.candidate.changelog_records_read));
    let (copies_a, copies_b) = spares.rows.iter().fold((0, 0), |(a, b), r| (a + r.baseline.local_copy_ms, b + r.candidate.local_copy_ms));
    assert!(reads_b < reads_a && copies_b > copies_a, "reads {reads_a} → {reads_b}, copy-ms {copies_a} → {copies_b}");
    // At the default (0), restored lag is the one target that fails (see `restored_lag`).
    assert!(suite().targets().iter().any(|t| !t.holds));
}

/// Random-churn seeds 101 to 400, which no choice in the optimized assignor was measured on:
/// every target but restored lag holds on them as on the suite, and restored lag holds over
/// them summed (not in every scenario: see `MORE_RESTORED_LAG`) and, on the same inputs, on
/// every client that is not caught up.
#[test]
fn the_targets_hold_on_300_held_out_seeds() {
    let scenarios = sim::churn_scenarios(101..=400);
    assert_eq!(scenarios.len(), 300);
    let cmp = sim::compare(AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor(), &scenarios, &SimConfig::default())
        .unwrap();
    let targets = cmp.targets();
    assert_eq!(targets.len(), 8);
    for target in targets.iter().filter(|t| !t.name.starts_with("never more restoring lag")) {
        assert!(target.holds, "{}: {}", target.name, target.detail);
    }
    let sum = |f: fn(&sim::Summary) -> i64| cmp.rows.iter().fold((0, 0), |(a, b), r| (a + f(&r.baseline), b + f(&r.candidate)));
    let (a, b) = sum(|s| s.restoring_lag);
    assert!(b < a, "restored lag {a} → {b}");
    let (a, b) = sum(|s| s.expected_departure_restore);
    assert!(b < a, "expected departure restore {a} → {b}");
    // On the same inputs, B's answers restore more than A's only from caught-up copies (within
    // `acceptable.recovery.lag`), never on a client that is not caught up.
    let same = cmp.same_inputs();
    assert!(same.rebalances > 6000 && same.candidate_restores_more > 0, "{same:?}");
    assert_eq!(same.candidate_restores_more_not_caught_up, 0, "{same:?}");
}
