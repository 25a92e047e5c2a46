//! The real-broker run of `compat/e2e/streams-assignor.sh`, replayed in the simulator: a CountApp
//! group (4 stateless tasks of sub-topology 0, 4 stateful ones of sub-topology 1, one standby, one
//! thread per instance) starts on one instance and scales out to three, one instance at a time,
//! under the broker's `sticky`, under `optimized`, and under `optimized` with a prober; the
//! broker's `group.streams.acceptable.recovery.lag` is 100. The simulator must make the moves
//! the broker made (docs/plugin.md, "On a real broker").

use kstreams_assignor::sim::{self, EventKind, MemberSpec, SimConfig, StreamsAssignor, StreamsConfig};

/// The scenario: 3,000 records before the start, 3,000 more with each join (about 75 records a
/// second into each stateful task's changelog over the run's 40 s).
fn broker_run() -> sim::Scenario {
    let mut s = sim::builtin("scale-out", 0).unwrap();
    s.name = "broker-scale-out".into();
    s.configs = s.configs.clone().with_num_standby_replicas(1);
    s.subtopologies.truncate(2);
    for (id, sub) in s.subtopologies.iter_mut().enumerate() {
        sub.id = id as i32;
        sub.partitions = 4;
        sub.changelog_records = (id == 1).then_some(750);
    }
    s.initial_members = vec![MemberSpec::new("a", 1)];
    s.events = vec![
        sim::Event { at_ms: 10_000, kind: EventKind::Join(MemberSpec::new("b", 1)) },
        sim::Event { at_ms: 25_000, kind: EventKind::Join(MemberSpec::new("c", 1)) },
    ];
    s
}

fn run(assignor: StreamsAssignor, probe_interval_ms: i64) -> sim::StreamsReport {
    let mut config = SimConfig::default();
    config.produce_records_per_sec = 75;
    let mut streams = StreamsConfig::default();
    streams.acceptable_recovery_lag = 100;
    streams.probe_interval_ms = probe_interval_ms;
    sim::run_streams(assignor, &broker_run(), &config, &streams).unwrap()
}

/// Active-task moves, of them stateful, and records restored into active tasks.
fn figures(r: &sim::StreamsReport) -> (usize, usize, i64) {
    let stateful = r.report.rounds.iter().map(|x| x.stateful_tasks_moved).sum();
    (r.report.total_tasks_moved, stateful, r.report.total_restoring_lag)
}

#[test]
fn the_simulator_moves_the_tasks_the_broker_moved() {
    // The broker's figures (docs/plugin.md): sticky 6 moves, 4 stateful, 8,950 records restored;
    // optimized 6, 3, 5,500; optimized with a prober 6, 3, nothing restored.
    let sticky = figures(&run(StreamsAssignor::Sticky, 0));
    let optimized = figures(&run(StreamsAssignor::Optimized, 0));
    let probed = run(StreamsAssignor::Optimized, 15_000);
    assert_eq!((sticky.0, sticky.1), (6, 4), "{sticky:?}");
    assert_eq!((optimized.0, optimized.1), (6, 3), "{optimized:?}");
    // Uniform changelogs (the simulator's) restore within 10 % of what the broker's sticky group
    // restored; optimized picks the smallest of real, uneven partitions, so it restores more here
    // than on the broker.
    assert!((sticky.2 - 8_950).abs() * 10 <= 8_950, "{sticky:?}");
    assert!(optimized.2 < sticky.2, "{optimized:?} {sticky:?}");
    // With the prober every stateful task moves to a caught-up copy, on the broker and here.
    assert_eq!(figures(&probed).2, 0, "{probed:?}");
    assert!(probed.probes >= 1);
}
