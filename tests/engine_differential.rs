//! The Rust half of the live differential test against Kafka's Java assignors. Driven by
//! `compat/java/parity.sh`; both tests are ignored in a plain `cargo test`.
//!
//! * `generate`: writes `$PARITY_DIR/scenarios.jsonl` (`$PARITY_SCENARIOS` scenarios of seed
//!   `$PARITY_SEED`, see `engine::testdata::random`) and the engine's answers to
//!   `$PARITY_DIR/rust.jsonl`.
//! * `compare`: reads those and `$PARITY_DIR/java.jsonl`, prints equal/different counts per
//!   assignor, writes every differing scenario to `$PARITY_DIR/diffs/<id>.json`, optionally
//!   writes `$PARITY_FIXTURES` scenarios with Java's answers to `fixtures/parity/`, and fails on
//!   any difference.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use kstreams_assignor::engine::testdata::{self, Scenario};
use kstreams_assignor::engine::{Assignment, assign, effective_assignor};
use serde_json::{Value, json};

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn dir() -> PathBuf {
    PathBuf::from(env("PARITY_DIR").expect("PARITY_DIR is set by compat/java/parity.sh"))
}

fn read_lines(path: &Path) -> Vec<Value> {
    let file = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    BufReader::new(file).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect()
}

/// The engine's answer in the runner's line format.
fn rust_line(s: &Scenario) -> Value {
    match assign(s.assignor, &s.input) {
        Ok(a) => json!({"id": s.id, "assignment": a}),
        Err(e) => json!({"id": s.id, "error": e.to_string()}),
    }
}

#[test]
#[ignore = "driven by compat/java/parity.sh"]
fn generate() {
    let seed: u64 = env("PARITY_SEED").map_or(1, |s| s.parse().unwrap());
    let count: u64 = env("PARITY_SCENARIOS").map_or(2000, |s| s.parse().unwrap());
    let dir = dir();
    fs::create_dir_all(&dir).unwrap();
    let mut scenarios = fs::File::create(dir.join("scenarios.jsonl")).unwrap();
    let mut answers = fs::File::create(dir.join("rust.jsonl")).unwrap();
    let start = std::time::Instant::now();
    for index in 0..count {
        let s = testdata::random(seed, index);
        writeln!(scenarios, "{}", serde_json::to_string(&s).unwrap()).unwrap();
        writeln!(answers, "{}", rust_line(&s)).unwrap();
    }
    eprintln!("rust: {count} scenarios of seed {seed} in {:.1?}", start.elapsed());
}

#[test]
#[ignore = "driven by compat/java/parity.sh"]
fn compare() {
    let dir = dir();
    let scenarios: Vec<Scenario> = read_lines(&dir.join("scenarios.jsonl"))
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let rust = read_lines(&dir.join("rust.jsonl"));
    let java = read_lines(&dir.join("java.jsonl"));
    assert_eq!((scenarios.len(), rust.len()), (java.len(), java.len()), "one answer per scenario on each side");

    let diffs = dir.join("diffs");
    let _ = fs::remove_dir_all(&diffs);
    // per assignor: (equal, different, both refused)
    let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut fixtures: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for ((s, r), j) in scenarios.iter().zip(&rust).zip(&java) {
        assert_eq!((&r["id"], &j["id"]), (&json!(s.id), &json!(s.id)));
        let name = effective_assignor(s.assignor, &s.input).name().to_owned();
        let entry = counts.entry(name.clone()).or_default();
        let same = match (r.get("assignment"), j.get("assignment")) {
            (Some(ra), Some(ja)) => {
                let ra: Assignment = serde_json::from_value(ra.clone()).unwrap();
                let ja: Assignment = serde_json::from_value(ja.clone()).expect("Java's output parses as an Assignment");
                ra == ja
            }
            (None, None) => {
                entry.2 += 1;
                true
            }
            _ => false,
        };
        if same {
            entry.0 += 1;
            if let Some(expected) = j.get("assignment") {
                let case = json!({"id": s.id, "assignor": s.assignor, "input": s.input, "expected": expected});
                fixtures.entry(name).or_default().push(case);
            }
        } else {
            entry.1 += 1;
            fs::create_dir_all(&diffs).unwrap();
            let doc = json!({"scenario": s, "rust": r, "java": j});
            fs::write(diffs.join(format!("{}.json", s.id)), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        }
    }

    println!("{:<32} {:>8} {:>10} {:>14}", "assignor", "equal", "different", "(both refused)");
    let (mut equal, mut different) = (0, 0);
    for (name, (e, d, refused)) in &counts {
        println!("{name:<32} {e:>8} {d:>10} {refused:>14}");
        equal += e;
        different += d;
    }
    println!("{:<32} {equal:>8} {different:>10}", "total");
    if different > 0 {
        println!("differing scenarios written to {}", diffs.display());
    }

    if let Some(per_assignor) = env("PARITY_FIXTURES").map(|n| n.parse::<usize>().unwrap()) {
        write_fixtures(&fixtures, per_assignor);
    }
    assert_eq!(different, 0, "Rust and Java disagree on {different} scenario(s); see {}", diffs.display());
}

/// Keeps the `per_assignor` smallest agreeing scenarios of each assignor (by JSON size, so the
/// repository stays small) in `fixtures/parity/<assignor>.jsonl`.
fn write_fixtures(fixtures: &BTreeMap<String, Vec<Value>>, per_assignor: usize) {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parity");
    fs::create_dir_all(&out).unwrap();
    for (name, cases) in fixtures {
        let mut lines: Vec<(usize, String, String)> = cases
            .iter()
            .map(|c| {
                let line = serde_json::to_string(c).unwrap();
                (line.len(), c["id"].as_str().unwrap().to_owned(), line)
            })
            .collect();
        lines.sort();
        // Take evenly from the size order so that larger cases are represented too.
        let step = (lines.len() as f64 / per_assignor as f64).max(1.0);
        let budget = per_assignor.min(lines.len());
        let mut picked: Vec<&(usize, String, String)> =
            (0..budget).map(|i| &lines[((i as f64 * step * 0.6) as usize).min(lines.len() - 1)]).collect();
        picked.sort_by(|a, b| a.1.cmp(&b.1));
        picked.dedup_by(|a, b| a.1 == b.1);
        let text: String = picked.iter().map(|(_, _, l)| format!("{l}\n")).collect();
        fs::write(out.join(format!("{name}.jsonl")), text).unwrap();
        println!("fixtures/parity/{name}.jsonl: {} cases", picked.len());
    }
}

/// The shapes of benches/engine.rs: (clients, threads per client, stateful tasks, standbys).
const BENCH_SHAPES: [(usize, u32, usize, i32); 2] = [(100, 4, 2_000, 1), (1_000, 4, 10_000, 1)];

/// Writes the benchmark inputs to `$PARITY_DIR/bench.jsonl` for the Java runner, and prints a
/// quick Rust timing of each.
#[test]
#[ignore = "driven by compat/java/parity.sh --bench"]
fn bench_inputs() {
    let dir = dir();
    fs::create_dir_all(&dir).unwrap();
    let mut out = fs::File::create(dir.join("bench.jsonl")).unwrap();
    for (clients, threads, tasks, standbys) in BENCH_SHAPES {
        let s = testdata::steady_state(1, clients, threads, tasks, standbys);
        writeln!(out, "{}", serde_json::to_string(&s).unwrap()).unwrap();
        let runs = 5;
        let start = std::time::Instant::now();
        for _ in 0..runs {
            std::hint::black_box(assign(s.assignor, &s.input).unwrap());
        }
        eprintln!("rust (quick): {} {:.1} ms per assign", s.id, start.elapsed().as_secs_f64() * 1e3 / f64::from(runs));
    }
}
