//! The simulator on the streams rebalance protocol: the coordinator's reconciliation never gives
//! an active task to two members at once, a scale-out converges in the epochs and heartbeats the
//! protocol allows, 4.4.0's coordinator promotes no warm-up without a membership change, and the
//! classic protocol's output is what it was before the streams protocol existed.

use std::process::Command;

use kstreams_assignor::sim::{self, SimConfig, StreamsAssignor, StreamsConfig};

const ASSIGNORS: [StreamsAssignor; 2] = [StreamsAssignor::Sticky, StreamsAssignor::Optimized];

fn suite() -> Vec<sim::Scenario> {
    sim::suite_scenarios(30)
}

#[test]
fn no_active_task_is_ever_owned_by_two_members_and_every_run_reconciles() {
    for scenario in suite() {
        for assignor in ASSIGNORS {
            let run = sim::run_streams(assignor, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
            assert_eq!(run.most_doubly_owned, 0, "{} with {}", scenario.name, assignor.name());
            assert!(run.report.converged, "{} with {}:\n{}", scenario.name, assignor.name(), run.table());
            // One target per membership change: rounds are group epochs after the start.
            assert_eq!(run.report.rounds.len() as i32 + 1, run.group_epochs, "{}", scenario.name);
            assert_eq!(run.report.probing_rebalances, 0);
        }
    }
}

#[test]
fn a_sticky_scale_out_converges_in_one_epoch_and_one_heartbeat_interval() {
    // S4 joins at 1 min: the group epoch goes to 2 and the target gives S4 its share. S4 asks at
    // once and waits (the tasks are still owned); each owner revokes at its next heartbeat,
    // within one interval; S4 gets them at its own next heartbeat, one interval after it joined.
    let scenario = sim::builtin("scale-out", 0).unwrap();
    for h in [5_000, 2_000, 12_000] {
        let mut streams = StreamsConfig::default();
        streams.set("group.streams.heartbeat.interval.ms", &h.to_string()).unwrap();
        let run = sim::run_streams(StreamsAssignor::Sticky, &scenario, &SimConfig::default(), &streams).unwrap();
        assert_eq!(run.group_epochs, 2);
        assert_eq!(run.report.rounds.len(), 1);
        assert_eq!(run.report.time_to_converge_ms, h, "{}", run.table());
        // 24 tasks over 8 threads: S4's two threads take 6, 4 of them stateful, restored from
        // nothing (sticky places no warm-ups), and they went unowned between their revocation
        // and S4's heartbeat.
        assert_eq!(run.report.total_tasks_moved, 6);
        assert_eq!(run.report.rounds[0].stateful_tasks_moved, 4);
        assert!(run.report.total_restoring_lag >= 4 * 2_000_000, "{}", run.table());
        assert_eq!(run.report.total_warmups, 0);
        assert!(run.unowned_task_ms > 0 && run.unowned_task_ms < 6 * h, "{}", run.unowned_task_ms);
        assert_eq!(run.report.final_stateful_load_spread, 0.0);
    }
}

#[test]
fn a_static_restart_makes_no_new_epoch_and_moves_nothing() {
    let scenario = sim::builtin("rolling-bounce", 0).unwrap();
    for assignor in ASSIGNORS {
        let run = sim::run_streams(assignor, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
        assert_eq!((run.group_epochs, run.report.total_tasks_moved, run.heartbeats), (1, 0, 0), "{}", run.table());
    }
}

#[test]
fn no_warm_up_waits_for_a_rebalance_that_does_not_come_on_the_streams_protocol() {
    // In 4.4.0 task offsets alone make no new target, so the optimized assignor applies the
    // target it plans in the one assignment: S4 takes its share of the stateful tasks at once and
    // the group ends even, with nothing left waiting.
    let scenario = sim::builtin("scale-out", 0).unwrap();
    let run = sim::run_streams(StreamsAssignor::Optimized, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
    assert_eq!(run.warmups_waiting, 0, "{}", run.table());
    assert_eq!(run.report.final_stateful_load_spread, 0.0, "{}", run.table());
    assert!(run.report.total_tasks_moved > 0);
    // The broker's sticky assignor places none, whatever group.streams.num.warmup.replicas says.
    let mut more = StreamsConfig::default();
    more.set("group.streams.num.warmup.replicas", "8").unwrap();
    let sticky = sim::run_streams(StreamsAssignor::Sticky, &scenario, &SimConfig::default(), &more).unwrap();
    assert_eq!((sticky.warmups_waiting, sticky.report.total_warmups), (0, 0));
}

#[test]
fn the_cross_protocol_table_covers_every_scenario_and_run() {
    let scenarios = suite();
    let cmp = sim::compare_protocols(&scenarios, &SimConfig::default(), &StreamsConfig::default()).unwrap();
    assert_eq!(cmp.rows.len(), scenarios.len());
    for row in &cmp.rows {
        let names: Vec<&str> = row.runs.iter().map(|r| r.run.as_str()).collect();
        assert_eq!(names, sim::PROTOCOL_RUNS);
    }
    let table = cmp.table();
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), scenarios.len() + 2, "{table}");
    for verdict in ["converges fastest", "moves least", "restores least", "runs every active soonest", "ends most even"] {
        assert!(table.contains(verdict), "{verdict}");
    }
    assert!(table.contains("streams/sticky against classic/HighAvailabilityTaskAssignor: converges faster on"));
}

fn cli(args: &[&str]) -> (String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_kstreams-assignor")).args(args).output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.success())
}

#[test]
fn the_classic_output_is_unchanged() {
    // Captured from the binary before the streams protocol was added; since then only the task
    // downtime columns and their line were added (docs/simulator.md, Task downtime).
    assert_eq!(cli(&["simulate"]).0, include_str!("../fixtures/sim/simulate.txt"));
    let compare = include_str!("../fixtures/sim/simulate-compare.txt");
    assert_eq!(cli(&["simulate", "--compare"]).0, compare);
    assert_eq!(cli(&["simulate", "--protocol", "classic", "--compare"]).0, compare);
}

#[test]
fn the_cli_runs_the_streams_protocol_and_refuses_what_does_not_apply() {
    let (table, ok) = cli(&["simulate", "--protocol", "streams", "--config", "group.streams.heartbeat.interval.ms=3000"]);
    assert!(ok && table.contains("streams/sticky") && table.contains("3.000s from the last event"), "{table}");
    let (table, ok) = cli(&["simulate", "--compare", "--protocol", "both", "--seeds", "2"]);
    assert!(ok && table.contains("S-sticky = streams/sticky"), "{table}");
    for bad in [
        &["simulate", "--protocol", "both"][..],
        &["simulate", "--protocol", "streams", "--compare"],
        &["simulate", "--protocol", "streams", "--assignor", "optimized"],
        &["simulate", "--streams-assignor", "sticky"],
        &["simulate", "--protocol", "streams", "--config", "group.streams.heartbeat.interval.ms=-1"],
    ] {
        assert!(!cli(bad).1, "{bad:?}");
    }
}

#[test]
fn with_a_prober_optimized_moves_stateful_tasks_only_to_caught_up_copies_and_ends_as_balanced() {
    let mut probed = StreamsConfig::default();
    probed.set("probe.interval.ms", "60000").unwrap();
    let (mut restored_alone, mut restored_probed) = (0, 0);
    for scenario in suite() {
        let alone = sim::run_streams(StreamsAssignor::Optimized, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
        let run = sim::run_streams(StreamsAssignor::Optimized, &scenario, &SimConfig::default(), &probed).unwrap();
        assert_eq!(run.most_doubly_owned, 0, "{}", scenario.name);
        assert!(run.report.converged, "{}:\n{}", scenario.name, run.table());
        assert_eq!(run.warmups_waiting, 0, "{}", scenario.name);
        // Every target after the start is a membership change or a probe.
        assert_eq!(run.report.rounds.len() as i32 + 1, run.group_epochs, "{}", scenario.name);
        assert_eq!(run.report.rounds.iter().filter(|r| r.trigger == "probe").count(), run.probes, "{}", scenario.name);
        assert!(
            run.report.final_stateful_load_spread <= alone.report.final_stateful_load_spread + 1e-9,
            "{}: {} against {}",
            scenario.name,
            run.report.final_stateful_load_spread,
            alone.report.final_stateful_load_spread
        );
        restored_alone += alone.report.total_restoring_lag;
        restored_probed += run.report.total_restoring_lag;
    }
    // Over the suite's 36 scenarios the warm-ups spare most of the restoring.
    assert!(restored_probed * 2 < restored_alone, "{restored_probed} against {restored_alone}");
    // The scale-out: the joiner warms up its share and takes it over with nothing to restore.
    let scale_out = sim::builtin("scale-out", 0).unwrap();
    let run = sim::run_streams(StreamsAssignor::Optimized, &scale_out, &SimConfig::default(), &probed).unwrap();
    assert_eq!(run.report.total_restoring_lag, 0, "{}", run.table());
    assert!(run.probes > 0);
}

#[test]
fn on_its_own_inputs_optimized_moves_more_than_sticky_only_for_a_narrower_stateful_spread() {
    // Each target of an `optimized` run (no prober) is also given to `sticky` on the same group
    // spec: where it moves more active tasks, `sticky`'s answer leaves a wider spread of
    // stateful tasks per member. A `sticky` run asks nothing.
    let mut same = sim::StickyOnSameInputs::default();
    for scenario in suite() {
        let run = sim::run_streams(StreamsAssignor::Optimized, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
        let s = run.sticky_on_same_inputs.expect("an optimized run compares");
        // The start's target and one per group epoch after it.
        assert_eq!(s.targets as i32, run.group_epochs, "{}", scenario.name);
        assert_eq!(s.more_moves, s.more_moves_narrower, "{}: {s:?}", scenario.name);
        same.merge(&s);
        let sticky = sim::run_streams(StreamsAssignor::Sticky, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
        assert!(sticky.sticky_on_same_inputs.is_none());
        // Until their first different target the two runs are one run: a run that moves more in
        // all, with no wider final spread left by sticky, parted from it at a tie (as many
        // moves) or where it left a narrower spread, never at a target that moved more for
        // nothing.
        let (ours, theirs) = (&run.report, &sticky.report);
        if ours.total_tasks_moved > theirs.total_tasks_moved && theirs.final_stateful_load_spread <= ours.final_stateful_load_spread {
            let first = s.first_difference.map(|f| f.1);
            assert!(
                matches!(first, Some(sim::FirstDifference::AsManyMoves | sim::FirstDifference::MoreMovesNarrower)),
                "{}: {first:?}",
                scenario.name
            );
        }
    }
    assert!(same.more_moves > 0 && same.sticky_moves > 0, "the suite exercises the comparison: {same:?}");
}
