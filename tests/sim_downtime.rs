//! Task downtime (`Report::task_downtime_ms`) on the availability benchmark's scenarios, on both
//! protocols.

use kstreams_assignor::sim::{self, AVAILABILITY_SCENARIOS, EventKind, SimConfig, StreamsConfig};

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
    // The benchmark's cold start with its three instances started at once: 6 tasks of 5,500,000
    // records restore at 20,000 − 100 records/s, 276.382 s each (rounded up to the ms), all at
    // once; nothing is unowned on either protocol.
    let mut scenario = sim::builtin("availability-cold-start", 0).unwrap();
    for event in std::mem::take(&mut scenario.events) {
        let EventKind::Join(member) = event.kind else { panic!("the cold start's events are joins") };
        scenario.initial_members.push(member);
    }
    assert_eq!(scenario.initial_members.len(), 3);
    let cmp = sim::compare_protocols(&[scenario], &SimConfig::default(), &StreamsConfig::default()).unwrap();
    for run in &cmp.rows[0].runs {
        assert_eq!(run.restored_ms, 276_382, "{}", run.run);
        assert_eq!(run.task_downtime_ms, 6 * 276_382, "{}", run.run);
    }
}
