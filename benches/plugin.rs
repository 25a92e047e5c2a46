//! The crossing of the JVM plugin, Rust side, at 1,000 clients × 10,000 stateful tasks (4 threads
//! each, 1 standby; `engine::testdata::steady_state`): decoding the binary request, building the
//! engine input, encoding the response, against the engine's own time, and against parsing the
//! same input as `assign --input` JSON (the other crossing format considered). The Java side of
//! the crossing is timed by `compat/plugin/differential.sh --boundary`.

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{AssignmentInput, testdata};
use kstreams_assignor::plugin::testdata::request_for;
use kstreams_assignor::plugin::{Request, Session};

fn crossing(c: &mut Criterion) {
    let s = testdata::steady_state(1, 1_000, 4, 10_000, 1);
    let request = Request { application_id: "bench".into(), now_ms: 1_000_000, configs: vec![("num.standby.replicas".into(), "1".into())], ..request_for(&s.input, 1_000_000) };
    let bytes = request.encode();
    let mut session = Session::new();
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
            session.finish(prepared, std::hint::black_box(assignment.clone()), 0).unwrap().encode()
        })
    });
    group.bench_function(format!("engine/{shape}"), |b| b.iter(|| prepared.run().unwrap()));
    group.finish();
}

criterion_group!(benches, crossing);
criterion_main!(benches);
