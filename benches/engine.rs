//! Criterion benchmarks of the task assignors on steady-state groups (a fifth of the clients are
//! new, so movements and warm-ups are planned). `compat/java/parity.sh --bench` times Kafka's
//! Java assignor on the same inputs (`engine::scenario::steady_state`, same seeds).

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{AssignorKind, assign, scenario};

/// The benchmarked shapes: (clients, threads per client, stateful tasks, standbys). Keep in
/// step with `BENCH_SHAPES` in tests/engine_differential.rs.
const SHAPES: [(usize, u32, usize, i32); 2] = [(100, 4, 2_000, 1), (1_000, 4, 10_000, 1)];

fn high_availability(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    for (clients, threads, tasks, standbys) in SHAPES {
        let s = scenario::steady_state(1, clients, threads, tasks, standbys);
        group.bench_function(format!("ha/{clients}x{threads}/{tasks}-tasks/{standbys}-standby"), |b| {
            b.iter(|| assign(AssignorKind::HighAvailability, std::hint::black_box(&s.input)).unwrap())
        });
    }
    group.finish();
}

/// The optimized assignor on the smaller shape (on 1,000 clients × 10,000 tasks its standby flow
/// takes seconds and over a gigabyte: it has one edge per task and client).
fn optimized(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    let (clients, threads, tasks, standbys) = SHAPES[0];
    let s = scenario::steady_state(1, clients, threads, tasks, standbys);
    group.bench_function(format!("optimized/{clients}x{threads}/{tasks}-tasks/{standbys}-standby"), |b| {
        b.iter(|| assign(AssignorKind::Optimized, std::hint::black_box(&s.input)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, high_availability, optimized);
criterion_main!(benches);
