//! Task downtime (`Report::task_downtime_ms`) on the availability benchmark's scenarios, on both
//! protocols.

use kstreams_assignor::sim::{self, AVAILABILITY_SCENARIOS, SimConfig, StreamsConfig};

#[test]
fn every_availability_scenario_converges_on_every_run() {
    let scenarios = sim::availability_scenarios();
    assert_eq!(scenarios.len(), AVAILABILITY_SCENARIOS.len());
    let cmp = sim::compare_protocols(&scenarios, &SimConfig::default(), &StreamsConfig::default()).unwrap();
    for row in &cmp.rows {
        for run in &row.runs {
            assert!(run.converged, "{} {}", row.scenario, run.run);
        }
    }
    assert!(sim::builtin("availability-crash", 0).is_some() && sim::suite_scenarios(0).iter().all(|s| !s.name.starts_with("availability")));
}

#[test]
fn a_cold_start_is_down_for_every_tasks_restore_on_both_protocols() {
    // 8 tasks of 1,000,000 records restore at 20,000 − 100 records/s: 50.252 s each (rounded
    // up to the ms), all at once; nothing is unowned on either protocol.
    let scenarios = vec![sim::builtin("availability-cold-start", 0).unwrap()];
    let cmp = sim::compare_protocols(&scenarios, &SimConfig::default(), &StreamsConfig::default()).unwrap();
    for run in &cmp.rows[0].runs {
        assert_eq!(run.restored_ms, 50_252, "{}", run.run);
        assert_eq!(run.task_downtime_ms, 8 * 50_252, "{}", run.run);
    }
}
