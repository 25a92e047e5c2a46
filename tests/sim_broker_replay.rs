//! The real-broker run of `compat/e2e/streams-assignor.sh`, replayed in the simulator: a CountApp
//! group (4 stateless tasks of sub-topology 0, 4 stateful ones of sub-topology 1, one standby, one
//! thread per instance) starts on one instance and scales out to three, one instance at a time,
//! under the broker's `sticky`, under `optimized`, and under `optimized` with a prober; the
//! broker's `group.streams.acceptable.recovery.lag` is 100. The simulator must make the moves
//! the broker made and restore, within 10 %, the records it restored (docs/plugin.md, "On a real
//! broker").
//!
//! The replay has the run's input as it was: 3,000 records before the first instance starts and
//! 3,000 as each instance joins, and each changelog partition's share of them as Kafka's default
//! partitioner gives it. CountApp re-keys record `i` by the word `w<(i·7919) mod 60>`, so every
//! one of the 60 words takes the same number of records, and partition `p` of the counts'
//! changelog gets the words whose murmur2 hash is `p` modulo 4.

use kstreams_assignor::sim::{self, EventKind, MemberSpec, SimConfig, StreamsAssignor, StreamsConfig, Subtopology};

/// The batch the run produces before the start and with each join.
const BATCH: i64 = 3_000;

/// Kafka's murmur2 (the default partitioner's hash) of `data`.
fn murmur2(data: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let mut h: u32 = 0x9747_b28c ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]).wrapping_mul(M);
        k ^= k >> 24;
        h = h.wrapping_mul(M) ^ k.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if tail.len() == 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// How many of CountApp's 60 words each of the 4 partitions of its repartition topic (and so of
/// its changelog) takes: `(murmur2(word) & 0x7fffffff) % 4`.
fn words_per_partition() -> Vec<u32> {
    let mut words = vec![0u32; 4];
    for w in 0..60 {
        words[((murmur2(format!("w{w}").as_bytes()) & 0x7fff_ffff) % 4) as usize] += 1;
    }
    words
}

/// The process ids of the broker run's `optimized` group (docs/plugin.md). Where no member has
/// reported a task's size (a running active task is never reported on this protocol), the
/// engine breaks ties between equal tasks by its clients' order, which is the process ids'.
const A: &str = "9717b811-97ea-4aee-9d35-77d5d419a33e";
const B: &str = "dc40394a-1008-4313-9307-3fc64d0fce1b";
const C: &str = "8a87011b-158b-4a65-87b8-651364fa6644";

/// Instance `name` with one thread and process id `id`.
fn member(name: &str, id: &str) -> MemberSpec {
    let mut m = MemberSpec::new(name, 1);
    m.process_id = kstreams_assignor::wire::ProcessId(uuid::Uuid::parse_str(id).unwrap());
    m
}

/// The scenario: b joins 10 s after the start, c 10 s later, as on the broker. With a prober, the run waits until the second instance's tasks are balanced
/// before it starts the third (`settle` in compat/e2e/streams_assignor.py), which here is after
/// its first probe: the third joins at 60 s.
fn broker_run(probed: bool) -> sim::Scenario {
    let mut s = sim::builtin("scale-out", 0).unwrap();
    s.name = "broker-scale-out".into();
    s.configs = s.configs.clone().with_num_standby_replicas(1);
    s.subtopologies = vec![Subtopology::new(0, 4, None), Subtopology::new(1, 4, Some(BATCH / 4))];
    s.subtopologies[1].partition_weights = words_per_partition();
    s.initial_members = vec![member("a", A)];
    let c_joins = if probed { 60_000 } else { 20_000 };
    let at = |at_ms, kind| sim::Event { at_ms, kind };
    s.events = vec![
        at(10_000, EventKind::Produce(BATCH)),
        at(10_000, EventKind::Join(member("b", B))),
        at(c_joins, EventKind::Produce(BATCH)),
        at(c_joins, EventKind::Join(member("c", C))),
    ];
    s
}

fn run(assignor: StreamsAssignor, probe_interval_ms: i64) -> sim::StreamsReport {
    let mut config = SimConfig::default();
    config.produce_records_per_sec = 0;
    let mut streams = StreamsConfig::default();
    streams.acceptable_recovery_lag = 100;
    streams.probe_interval_ms = probe_interval_ms;
    // The prober's group sends task offsets every 15 s, the others every 60 s (the default).
    if probe_interval_ms > 0 {
        streams.task_offset_interval_ms = 15_000;
    }
    sim::run_streams(assignor, &broker_run(probe_interval_ms > 0), &config, &streams).unwrap()
}

/// Active-task moves, of them stateful, and records restored into active tasks.
fn figures(r: &sim::StreamsReport) -> (usize, usize, i64) {
    let stateful = r.report.rounds.iter().map(|x| x.stateful_tasks_moved).sum();
    (r.report.total_tasks_moved, stateful, r.report.total_restoring_lag)
}

#[test]
fn murmur2_is_kafkas() {
    // Values from Kafka's own tests of `Utils.murmur2`, as signed 32-bit integers.
    for (text, hash) in [("21", -973_932_308), ("foobar", -790_332_482), ("a-little-bit-long-string", -985_981_536)] {
        assert_eq!(murmur2(text.as_bytes()) as i32, hash, "{text}");
    }
    assert_eq!(words_per_partition(), [12, 14, 11, 23]);
}

#[test]
fn the_simulator_moves_and_restores_what_the_broker_did() {
    // The broker's figures (docs/plugin.md): sticky 6 moves, 4 stateful, 8,950 records restored;
    // optimized 6, 3, 5,500; optimized with a prober 6, 3, nothing restored, 2 probes.
    let within = |got: i64, broker: i64| (got - broker).abs() * 10 <= broker;
    let sticky = figures(&run(StreamsAssignor::Sticky, 0));
    let optimized = figures(&run(StreamsAssignor::Optimized, 0));
    let probed = run(StreamsAssignor::Optimized, 15_000);
    assert_eq!((sticky.0, sticky.1), (6, 4), "{sticky:?}");
    assert!(within(sticky.2, 8_950), "{sticky:?}");
    assert_eq!((optimized.0, optimized.1), (6, 3), "{optimized:?}");
    assert!(within(optimized.2, 5_500), "{optimized:?}");
    assert_eq!(figures(&probed), (6, 3, 0), "{probed:?}");
    assert_eq!(probed.probes, 2);
}
