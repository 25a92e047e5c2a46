//! How the assignors scale: a grid of clients × stateful tasks on steady-state groups
//! (`engine::testdata::steady_state`, seed 1: 4 threads per client, 1 standby, a fifth of the
//! clients new), for `optimized` and the port of Kafka's high-availability assignor.
//!
//! The default grid (10 to 1,000 clients, 1,000 and 10,000 tasks) runs once per size in a few
//! seconds with `cargo bench --bench scale -- --test`. `SCALE_FULL=1` adds the large sizes (up to
//! 10,000 clients and 1,000,000 tasks; the port only up to 10⁸ clients × tasks, where one assign
//! takes about 20 s).
//! `cargo run --release --example scale_chart -- docs/scale.svg` draws the chart of the same grid.

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{AssignorKind, assign, testdata};

/// (clients, stateful tasks) of the default grid.
const GRID: [(usize, usize); 5] = [(10, 1_000), (100, 1_000), (1_000, 1_000), (100, 10_000), (1_000, 10_000)];

/// The sizes `SCALE_FULL=1` adds.
const FULL: [(usize, usize); 6] =
    [(10, 100_000), (1_000, 100_000), (10_000, 10_000), (10_000, 100_000), (1_000, 1_000_000), (10_000, 1_000_000)];

/// The port's largest size (clients × tasks): beyond it one assign takes minutes.
const PORT_MAX_WORK: usize = 100_000_000;

fn scale(c: &mut Criterion) {
    let full = std::env::var_os("SCALE_FULL").is_some_and(|v| !v.is_empty() && v != "0");
    let sizes = GRID.iter().chain(if full { &FULL[..] } else { &[] });
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    for &(clients, tasks) in sizes {
        let s = testdata::steady_state(1, clients, 4, tasks, 1);
        for (name, kind) in [("optimized", AssignorKind::Optimized), ("ha", AssignorKind::HighAvailability)] {
            if kind == AssignorKind::HighAvailability && clients * tasks > PORT_MAX_WORK {
                continue;
            }
            group.bench_function(format!("{name}/{clients}-clients/{tasks}-tasks"), |b| {
                b.iter(|| assign(kind, std::hint::black_box(&s.input)).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
