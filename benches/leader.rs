//! The whole leader step (`leader::assign`: subscriptions in, every member's assignment bytes
//! out) on a large group: 1,000 members as 250 processes of 4 threads, 10,000 partitions (5,000
//! of `text-lines` and their repartition topic, so 10,000 tasks), one standby, a tenth of the
//! processes new. `compat/bench-leader.sh` times Kafka's `StreamsPartitionAssignor.assign` on the
//! same group. The leader encodes the members' assignments on every core (two here); the
//! `1-thread` line is the same work on one.

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::leader::testdata::large_group;
use kstreams_assignor::leader::{LeaderInput, assign};

fn leader(c: &mut Criterion) {
    let group = large_group(250, 4, 5_000, 1);
    let mut bench = c.benchmark_group("leader");
    bench.sample_size(10);
    let input = || {
        LeaderInput::new(&group.members, &group.topology, &group.metadata, &group.end_offsets, group.leader)
            .with_config(&group.config)
            .with_now_ms(1_700_000_000_000)
    };
    bench.bench_function("assign/250x4/10000-partitions/1-standby", |b| {
        b.iter(|| assign(std::hint::black_box(&input())).unwrap())
    });
    bench.bench_function("assign/250x4/10000-partitions/1-standby/1-thread", |b| {
        b.iter(|| assign(std::hint::black_box(&input().with_threads(1))).unwrap())
    });
    bench.finish();
}

criterion_group!(benches, leader);
criterion_main!(benches);
