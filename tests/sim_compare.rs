//! The optimized assignor against Kafka's high-availability assignor in the simulator: the
//! issue's targets on the built-in scenarios and random churn.
//!
//! The suite is the README's (`simulate --compare`): the built-in scenarios and random-churn
//! seeds 1 to 100; it runs in well under a second even in a debug build. What holds is asserted
//! below; two targets do not hold in every scenario and are asserted where they do. Restored
//! lag (see `restored_lag`): with no standbys, Kafka's assignor keeps moving tasks while it converges,
//! and the stale copies those moves leave behind shorten later restores after a crash or a
//! departure, which an assignor that moves less does not get. The movement bound (see
//! `movements_stay_close_to_the_lower_bound`): a few random-churn seeds exceed it by 10 % or
//! more, by one to four tasks.

use std::sync::OnceLock;

use kstreams_assignor::engine::AssignorKind;
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
fn movements_stay_close_to_the_lower_bound() {
    // Every built-in scenario: within 10 %.
    for r in suite().rows.iter().filter(|r| !r.scenario.starts_with("random-churn")) {
        let bound = r.candidate.lower_bound.expect("every built-in scenario settles between events");
        assert!(r.candidate.bounded_tasks_moved as f64 <= 1.1 * bound as f64, "{}: {:?}", r.scenario, r.candidate);
    }
    // Random churn: within 10 % over the suite (single seeds can exceed it by a task or two).
    let bound: usize = suite().rows.iter().filter_map(|r| r.candidate.lower_bound).sum();
    let moved: usize = suite().rows.iter().filter(|r| r.candidate.lower_bound.is_some()).map(|r| r.candidate.bounded_tasks_moved).sum();
    assert!(moved as f64 <= 1.1 * bound as f64, "moved {moved} against a bound of {bound}");
    assert!(bound > 0);
}

#[test]
fn restored_lag() {
    // Where every task has a standby (or the state is never lost), no more than Kafka's in the
    // built-in scenarios.
    for name in ["scale-out", "scale-up-from-empty", "scale-down", "host-swap", "rolling-bounce"] {
        let r = suite().rows.iter().find(|r| r.scenario == name).unwrap();
        assert!(r.candidate.restoring_lag <= r.baseline.restoring_lag, "{name}: {:?} vs {:?}", r.candidate, r.baseline);
    }
    // The scale-out that KIP-441 is about restores nothing on active tasks.
    let r = suite().rows.iter().find(|r| r.scenario == "scale-out").unwrap();
    assert_eq!(r.candidate.restoring_lag, 0);
}

#[test]
fn the_comparison_reports_its_targets() {
    let targets = suite().targets();
    assert_eq!(targets.len(), 7);
    let holds = |prefix: &str| targets.iter().find(|t| t.name.starts_with(prefix)).unwrap().holds;
    assert!(holds("≥ 30% fewer task movements"));
    assert!(holds("zero movements on the rolling bounce"));
    assert!(holds("never a worse final spread"));
    let table = suite().table();
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 1 + suite().rows.len() + 1, "header, rows, total");
}
