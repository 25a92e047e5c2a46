//! Criterion benchmarks of the task assignors on steady-state groups (a fifth of the clients are
//! new, so movements and warm-ups are planned). `compat/java/parity.sh --bench` times Kafka's
//! Java assignor on the same inputs (`engine::testdata::steady_state`, same seeds).

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{AssignmentInput, AssignorKind, ClientInput, assign, streams, testdata};
use kstreams_assignor::wire::{LATEST_OFFSET, ProcessId, TaskId};

/// The benchmarked shapes: (clients, threads per client, stateful tasks, standbys). Keep in
/// step with `BENCH_SHAPES` in tests/engine_differential.rs.
const SHAPES: [(usize, u32, usize, i32); 2] = [(100, 4, 2_000, 1), (1_000, 4, 10_000, 1)];

fn high_availability(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    for (clients, threads, tasks, standbys) in SHAPES {
        let s = testdata::steady_state(1, clients, threads, tasks, standbys);
        group.bench_function(format!("ha/{clients}x{threads}/{tasks}-tasks/{standbys}-standby"), |b| {
            b.iter(|| assign(AssignorKind::HighAvailability, std::hint::black_box(&s.input)).unwrap())
        });
    }
    group.finish();
}

/// The optimized assignor on both shapes.
fn optimized(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    for (clients, threads, tasks, standbys) in SHAPES {
        let s = testdata::steady_state(1, clients, threads, tasks, standbys);
        group.bench_function(format!("optimized/{clients}x{threads}/{tasks}-tasks/{standbys}-standby"), |b| {
            b.iter(|| assign(AssignorKind::Optimized, std::hint::black_box(&s.input)).unwrap())
        });
    }
    group.finish();
}

/// The optimized assignor where the tasks spread over many sub-topologies (its sub-topology
/// mix pass works per sub-topology): 200 clients of 4 threads, 100 sub-topologies of 20
/// partitions, a fifth of the clients new.
fn optimized_many_subtopologies(c: &mut Criterion) {
    let (clients, subtopologies, partitions) = (200usize, 100i32, 20i32);
    let old = clients - clients / 5;
    let tasks: Vec<TaskId> = (0..subtopologies).flat_map(|s| (0..partitions).map(move |p| TaskId::new(s, p))).collect();
    let mut sums: Vec<Vec<(TaskId, i64)>> = vec![Vec::new(); clients];
    for (i, t) in tasks.iter().enumerate() {
        sums[(i * 7) % old].push((t.clone(), LATEST_OFFSET));
    }
    let mut input = AssignmentInput::new();
    for (i, sums) in sums.into_iter().enumerate() {
        let id: ProcessId = format!("00000000-0000-0000-0000-{:012}", i + 1).parse().unwrap();
        input = input.with_client(ClientInput::new(id, 4).with_task_offset_sums(sums));
    }
    let input = input.with_stateful_tasks(tasks.iter().enumerate().map(|(i, t)| (t.clone(), 1_000 + (i as i64 % 97) * 50_000)));
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.bench_function(format!("optimized/{clients}x4/{subtopologies}x{partitions}-tasks/0-standby"), |b| {
        b.iter(|| assign(AssignorKind::Optimized, std::hint::black_box(&input)).unwrap())
    });
    group.finish();
}

/// The broker's streams sticky assignor (kafka-group-coordinator 4.4.0) on a group of 1,000
/// members in 250 processes over 10,000 stateful tasks with one standby each, after a tenth of
/// the members joined.
fn streams_sticky(c: &mut Criterion) {
    let case = streams::testdata::large_case(1000, 4, 10_000, 1);
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.bench_function("streams-sticky/1000x4/10000-tasks/1-standby", |b| {
        b.iter(|| streams::assign_sticky(std::hint::black_box(&case.spec), std::hint::black_box(&case.topology)).unwrap())
    });
    group.finish();
}

/// This crate's `optimized` on the same streams group (a fresh memory each time: no restore rates).
fn streams_optimized(c: &mut Criterion) {
    let case = streams::testdata::large_case(1000, 4, 10_000, 1);
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.bench_function("streams-optimized/1000x4/10000-tasks/1-standby", |b| {
        b.iter(|| {
            let mut memory = streams::StreamsMemory::new();
            streams::assign_optimized(std::hint::black_box(&case.spec), &case.topology, &mut memory, 1_700_000_000_000).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, high_availability, optimized, optimized_many_subtopologies, streams_sticky, streams_optimized);
criterion_main!(benches);
