//! Decode and encode throughput on realistic large inputs: the Java-written fixtures
//! `subscription/v11/large.bin` (2,000 task offset sums, 3 client tags) and
//! `assignment/v11/large.bin` (~1,000 active and ~1,000 standby tasks, host maps for 100 hosts).
//! Decode includes building the maps a leader, `describe` or member reads (Java's decode builds
//! them all: its `AssignmentInfo` eagerly, its `SubscriptionInfo` on the first accessor call).
//! `compat/bench-wire.sh` runs this and the Java harness's benchmark in one go.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kstreams_assignor::wire::{AssignmentInfo, SubscriptionInfo};

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire").join(path)).expect(path)
}

fn subscription(c: &mut Criterion) {
    let bytes = fixture("subscription/v11/large.bin");
    let info = SubscriptionInfo::decode(&bytes).unwrap();
    let mut g = c.benchmark_group("subscription_v11_large");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    // What the leader reads (`leader::aggregate`): the sorted offset sums, tags, endpoint.
    g.bench_function("decode", |b| {
        b.iter(|| {
            let info = SubscriptionInfo::decode(black_box(&bytes)).unwrap();
            (info.offset_sums(), info.client_tags_map().unwrap(), info.user_end_point())
        })
    });
    // The offset sums as a `BTreeMap` (`task_offset_sums`), for a caller that wants one;
    // `describe` and `watch` read the sorted view as the leader does.
    g.bench_function("decode_btree_map", |b| {
        b.iter(|| {
            let info = SubscriptionInfo::decode(black_box(&bytes)).unwrap();
            (info.task_offset_sums(), info.client_tags_map().unwrap(), info.user_end_point())
        })
    });
    g.bench_function("decode_wire_only", |b| b.iter(|| SubscriptionInfo::decode(black_box(&bytes)).unwrap()));
    g.bench_function("encode", |b| b.iter(|| black_box(&info).encode().unwrap()));
    g.finish();
}

fn assignment(c: &mut Criterion) {
    let bytes = fixture("assignment/v11/large.bin");
    let info = AssignmentInfo::decode(&bytes).unwrap();
    let mut g = c.benchmark_group("assignment_v11_large");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    // Every map Java's decode builds (what a member reads in `on_assignment`).
    g.bench_function("decode", |b| {
        b.iter(|| {
            let info = AssignmentInfo::decode(black_box(&bytes)).unwrap();
            (info.standby_tasks_map(), info.partitions_by_host(), info.standby_partitions_by_host())
        })
    });
    // What a member's `on_assignment` reads: the standby map and the hosts (its own endpoint
    // checked against them), not the host maps' partitions.
    g.bench_function("decode_member", |b| {
        b.iter(|| {
            let info = AssignmentInfo::decode(black_box(&bytes)).unwrap();
            (info.standby_tasks_map(), info.hosts())
        })
    });
    // What `describe` and `watch` read: the active task list and the standby task ids.
    g.bench_function("decode_standby_ids", |b| {
        b.iter(|| {
            let info = AssignmentInfo::decode(black_box(&bytes)).unwrap();
            let standby = info.standby_task_ids();
            (info, standby)
        })
    });
    // The standby tasks with their partitions as a map (a member's `on_assignment`).
    g.bench_function("decode_standby_map", |b| {
        b.iter(|| {
            let info = AssignmentInfo::decode(black_box(&bytes)).unwrap();
            let standby = info.standby_tasks_map();
            (info, standby)
        })
    });
    g.bench_function("decode_wire_only", |b| b.iter(|| AssignmentInfo::decode(black_box(&bytes)).unwrap()));
    g.bench_function("encode", |b| b.iter(|| black_box(&info).encode().unwrap()));
    g.finish();
}

criterion_group!(benches, subscription, assignment);
criterion_main!(benches);
