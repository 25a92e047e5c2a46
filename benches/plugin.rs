//! The crossing of the JVM plugin, Rust side, at 1,000 clients × 10,000 stateful tasks (4 threads
//! each, 1 standby; `engine::testdata::steady_state`): decoding the binary request, building the
//! engine input, encoding the response, against the engine's own time, and against parsing the
//! same input as `assign --input` JSON (the other crossing format considered). The Java side of
//! the crossing is timed by `compat/plugin/differential.sh --boundary`.

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{AssignmentInput, testdata};
use kstreams_assignor::plugin::{ClientRecord, Request, Session, TaskRecord};
use kstreams_assignor::wire::{LATEST_OFFSET, UNKNOWN_OFFSET_SUM};

/// The request a JVM host sends for an engine input: KIP-924's lags and previous tasks.
fn request_of(input: &AssignmentInput) -> Request {
    let ends = input.changelog_end_offset_sums.as_ref().expect("end offsets");
    let reporters = |t| input.clients.iter().filter(|c| c.task_offset_sums.contains_key(t)).count();
    let mut tasks: Vec<TaskRecord> = ends
        .iter()
        .map(|(t, &end)| {
            let task = TaskRecord::new(t.clone(), true);
            if reporters(t) < input.clients.len() { task.with_unreported_lag(end) } else { task }
        })
        .collect();
    tasks.extend(input.stateless_tasks.iter().map(|t| TaskRecord::new(t.clone(), false)));
    let clients = input
        .clients
        .iter()
        .map(|c| {
            let mut r = ClientRecord::new(c.process_id, c.capacity as i32);
            let active = |s: i64| s == LATEST_OFFSET;
            r.previous_active = c.task_offset_sums.iter().filter(|(_, s)| active(**s)).map(|(t, _)| t.clone()).collect();
            r.previous_standby = c.task_offset_sums.iter().filter(|(_, s)| !active(**s)).map(|(t, _)| t.clone()).collect();
            let lag = |t, end: i64| match c.task_offset_sums.get(t).copied().unwrap_or(0) {
                s @ (LATEST_OFFSET | UNKNOWN_OFFSET_SUM) => s,
                s => (end - s).max(0),
            };
            r.lags = Some(c.task_offset_sums.keys().map(|t| (t.clone(), lag(t, ends[t]))).collect());
            r
        })
        .collect();
    Request { application_id: "bench".into(), now_ms: 1_000_000, dump: false, configs: vec![("num.standby.replicas".into(), "1".into())], tasks, clients }
}

fn crossing(c: &mut Criterion) {
    let s = testdata::steady_state(1, 1_000, 4, 10_000, 1);
    let request = request_of(&s.input);
    let bytes = request.encode();
    let session = Session::new();
    let prepared = session.prepare(&request).unwrap();
    let json = serde_json::to_string(&prepared.input).unwrap();
    let assignment = prepared.run().unwrap();
    println!("request {} bytes, assign --input JSON {} bytes", bytes.len(), json.len());
    let mut group = c.benchmark_group("plugin");
    group.sample_size(10);
    let shape = "1000x4/10000-tasks/1-standby";
    group.bench_function(format!("decode-request/{shape}"), |b| b.iter(|| Request::decode(std::hint::black_box(&bytes)).unwrap()));
    group.bench_function(format!("prepare-input/{shape}"), |b| b.iter(|| Session::new().prepare(std::hint::black_box(&request)).unwrap()));
    group.bench_function(format!("parse-json-input/{shape}"), |b| {
        b.iter(|| serde_json::from_str::<AssignmentInput>(std::hint::black_box(&json)).unwrap())
    });
    group.bench_function(format!("finish-and-encode-response/{shape}"), |b| {
        b.iter(|| {
            let prepared = Session::new().prepare(&request).unwrap();
            let mut session = Session::new();
            session.finish(prepared, std::hint::black_box(&assignment), 0).unwrap().encode()
        })
    });
    group.bench_function(format!("engine/{shape}"), |b| b.iter(|| prepared.run().unwrap()));
    group.finish();
}

criterion_group!(benches, crossing);
criterion_main!(benches);
