//! The built-in scenarios under Kafka's high-availability assignor: every one converges, and the
//! simulator's records agree with what the scenario must show.

use kstreams_assignor::engine::AssignorKind;
use kstreams_assignor::sim::{self, BUILTIN_SCENARIOS, Report, SimConfig};

fn run(name: &str, seed: u64) -> Report {
    let scenario = sim::builtin(name, seed).unwrap();
    sim::run(AssignorKind::HighAvailability.assignor(), &scenario, &SimConfig::default()).unwrap()
}

#[test]
fn every_builtin_scenario_converges() {
    for (name, _) in BUILTIN_SCENARIOS {
        let report = run(name, 7);
        assert!(report.converged, "{name} did not converge:\n{}", report.table());
        assert_eq!(report.rounds.last().map(|r| r.probing_rebalance), Some(false), "{name}");
    }
}

#[test]
fn scale_out_warms_up_before_moving_state() {
    let report = run("scale-out", 0);
    assert!(report.rounds.len() > 1, "{}", report.table());
    assert!(report.rounds[0].warmups > 0 && report.rounds[0].probing_rebalance);
    // High availability: no active task ever has to restore from scratch.
    assert_eq!(report.total_restoring_lag, 0, "{}", report.table());
    assert!(report.rounds.iter().all(|r| r.warmups <= 2), "max.warmup.replicas is 2");
    // Probing rebalances come every probing.rebalance.interval.ms (10 minutes).
    for pair in report.rounds.windows(2) {
        assert_eq!(pair[1].time_ms - pair[0].time_ms, 600_000);
    }
}

#[test]
fn rolling_bounce_with_static_membership_moves_nothing() {
    let report = run("rolling-bounce", 0);
    assert_eq!(report.total_tasks_moved, 0, "{}", report.table());
    assert_eq!(report.rounds.len(), 4);
}

#[test]
fn scale_up_from_empty_assigns_everything_at_once() {
    let report = run("scale-up-from-empty", 0);
    assert_eq!(report.rounds_to_converge, 1, "{}", report.table());
    assert_eq!(report.total_warmups, 0);
}

#[test]
fn a_leaving_member_without_standbys_costs_a_restore() {
    let report = run("host-swap", 0);
    let last = report.rounds.last().unwrap();
    assert!(last.trigger.contains("leaves"));
    assert!(last.restoring_lag > 0, "{}", report.table());
}

#[test]
fn leader_crash_drops_its_members_tasks_and_recovers() {
    let report = run("leader-crash", 0);
    assert!(report.rounds.iter().any(|r| r.trigger.starts_with("leader") && r.trigger.contains("crashes")));
    assert!(report.converged);
}

#[test]
fn random_churn_is_reproducible_and_converges() {
    for seed in 0..20 {
        let a = run("random-churn", seed);
        assert_eq!(a, run("random-churn", seed));
        assert!(a.converged, "seed {seed}:\n{}", a.table());
    }
}

#[test]
fn svg_plot_is_well_formed() {
    let report = run("scale-out", 0);
    let svg = sim::render_svg(&[&report]);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<polyline").count(), 3);
}

#[test]
fn the_optimized_assignor_probes_when_warm_ups_are_predicted_done() {
    let scenario = sim::builtin("scale-out", 0).unwrap();
    let report = sim::run(AssignorKind::Optimized.assignor(), &scenario, &SimConfig::default()).unwrap();
    assert!(report.converged, "{}", report.table());
    assert_eq!(report.total_restoring_lag, 0, "{}", report.table());
    // The first probe comes after the first-look interval (no restore rate known yet), the
    // next ones sooner than Kafka's 10 minutes: the simulator honours the assignor's interval.
    assert_eq!(report.rounds[1].time_ms - report.rounds[0].time_ms, 60_000, "{}", report.table());
    assert!(report.rounds.windows(2).skip(1).all(|w| w[1].time_ms - w[0].time_ms < 600_000), "{}", report.table());
    assert!(report.rounds.iter().all(|r| r.warmups <= 2));
}

#[test]
fn the_expected_departure_restore_averages_over_who_could_have_gone() {
    // No departure, or standbys caught up on everything: nothing.
    assert_eq!(run("rolling-bounce", 0).expected_departure_restore, 0);
    assert_eq!(run("scale-down", 0).expected_departure_restore, 0);
    // `leader-crash`, just before the crash at 90 s: changelogs at 2,009,000 records; S1 runs five
    // stateful tasks, S2 five, S3 six, S4 and S5 none. No task has a copy elsewhere but S1's 0_1
    // (warming up on S3) and S3's 0_0 (on S5), 600,000 records restored in 30 s. The mean over
    // the five members: (14 · 2,009,000 + 2 · 1,409,000) / 5.
    let report = run("leader-crash", 0);
    assert_eq!(report.expected_departure_restore, (14 * 2_009_000 + 2 * 1_409_000) / 5, "{}", report.table());
    // The crash itself cost S1's five tasks, 0_1 from its warm-up.
    assert_eq!(report.total_restoring_lag, 4 * 2_009_000 + 1_409_000);
}

#[test]
fn a_shadow_asked_on_the_same_inputs_counts_restoring_as_the_run_does() {
    // Both assignors are deterministic: asked again on each rebalance's input, an assignor's
    // answer restores exactly what the run itself restored, and the run is unchanged.
    let config = SimConfig::default();
    let mut restored = 0;
    for kind in [AssignorKind::HighAvailability, AssignorKind::Optimized] {
        for seed in 1..=25 {
            let scenario = sim::builtin("random-churn", seed).unwrap();
            let plain = sim::run(kind.assignor(), &scenario, &config).unwrap();
            let shadowed = sim::run_with_shadow(kind.assignor(), Some(kind.assignor()), &scenario, &config).unwrap();
            assert_eq!(plain.rounds.len(), shadowed.rounds.len(), "{kind:?} {seed}");
            for (p, s) in plain.rounds.iter().zip(&shadowed.rounds) {
                assert_eq!(p.shadow_restoring_lag, None);
                assert_eq!(s.shadow_restoring_lag, Some(p.restoring_lag), "{kind:?} {seed} round {}", p.round);
                assert_eq!((p.restoring_lag, p.tasks_moved, p.warmups), (s.restoring_lag, s.tasks_moved, s.warmups));
                restored += p.restoring_lag;
            }
        }
    }
    assert!(restored > 0);
    // Another assignor on the same inputs answers differently somewhere.
    let scenario = sim::builtin("random-churn", 13).unwrap();
    let report =
        sim::run_with_shadow(AssignorKind::HighAvailability.assignor(), Some(AssignorKind::Optimized.assignor()), &scenario, &config)
            .unwrap();
    assert!(report.rounds.iter().any(|r| r.shadow_restoring_lag != Some(r.restoring_lag)));
}

#[test]
fn the_subtopology_spread_is_the_widest_per_thread_spread_of_one_subtopology() {
    // Kafka's assignor on the scale-out ends with every sub-topology spread evenly (2 of each of
    // the 3 sub-topologies on each of the 4 two-thread members).
    let report = run("scale-out", 0);
    assert_eq!(report.final_subtopology_spread, 0.0);
    // On the scale-down, one sub-topology ends with 3 tasks on one two-thread member and 2 on
    // another: 1.5 − 1.0 per thread.
    let report = run("scale-down", 0);
    assert_eq!(report.final_subtopology_spread, 0.5);
    assert!(report.rounds.iter().all(|r| r.subtopology_spread >= 0.0 && r.subtopology_spread <= 24.0));
}
