//! The Rust half of the live differential against the broker's `StickyTaskAssignor`
//! (kafka-group-coordinator 4.4.0). Driven by `compat/java/streams-parity.sh`; the tests are
//! ignored in a plain `cargo test`.
//!
//! * `generate`: writes `$STREAMS_DIR/groups.jsonl`: `$STREAMS_GROUPS` groups of seed
//!   `$STREAMS_SEED` (`engine::streams::testdata::random_case`, small ones with
//!   `STREAMS_SMALL=1`).
//! * `compare`: runs each group through `assign_sticky`, compares with Java's answer in
//!   `$STREAMS_DIR/java.jsonl`, prints the counts, writes differing groups to
//!   `$STREAMS_DIR/diffs/<id>.json`, and fails on any difference. With `$STREAMS_RECORD` set it
//!   also writes the groups with Java's answers to that file (the recorded cases).

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use kstreams_assignor::engine::streams::testdata::{CaseSize, StreamsCase, random_case};
use kstreams_assignor::engine::streams::{StreamsAssignError, StreamsGroupAssignment, assign_sticky};
use serde::Deserialize;
use serde_json::json;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn dir() -> PathBuf {
    PathBuf::from(env("STREAMS_DIR").expect("STREAMS_DIR is set by compat/java/streams-parity.sh"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JavaAnswer {
    id: String,
    #[serde(default)]
    result: Option<StreamsGroupAssignment>,
    #[serde(default)]
    error: Option<String>,
}

/// Kafka's `TaskAssignorException` message for what the engine refused, if it is one Kafka has.
fn java_message(e: &StreamsAssignError) -> Option<String> {
    match e {
        StreamsAssignError::NoMembers(task) => Some(format!("No process available to assign active task {task}.")),
        _ => None,
    }
}

#[test]
#[ignore = "driven by compat/java/streams-parity.sh"]
fn generate() {
    let seed: u64 = env("STREAMS_SEED").map_or(1, |s| s.parse().unwrap());
    let count: u64 = env("STREAMS_GROUPS").map_or(2000, |s| s.parse().unwrap());
    let size = if env("STREAMS_SMALL").is_some() { CaseSize::Small } else { CaseSize::Full };
    let dir = dir();
    fs::create_dir_all(&dir).unwrap();
    let mut out = std::io::BufWriter::new(fs::File::create(dir.join("groups.jsonl")).unwrap());
    for index in 0..count {
        writeln!(out, "{}", serde_json::to_string(&random_case(seed, index, size)).unwrap()).unwrap();
    }
}

#[test]
#[ignore = "driven by compat/java/streams-parity.sh"]
fn compare() {
    let dir = dir();
    let groups = fs::read_to_string(dir.join("groups.jsonl")).unwrap();
    let answers = fs::read_to_string(dir.join("java.jsonl")).unwrap();
    let groups: Vec<StreamsCase> = groups.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let answers: Vec<JavaAnswer> = answers.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(groups.len(), answers.len(), "Java answered {} of {} groups", answers.len(), groups.len());
    let _ = fs::remove_dir_all(dir.join("diffs"));
    let (mut equal, mut refused, mut standbys, mut members) = (0, 0, 0, 0);
    let mut different = Vec::new();
    let mut record = env("STREAMS_RECORD").map(|p| std::io::BufWriter::new(fs::File::create(p).unwrap()));
    let start = std::time::Instant::now();
    for (case, java) in groups.iter().zip(&answers) {
        assert_eq!(case.id, java.id);
        let rust = assign_sticky(&case.spec, &case.topology);
        let same = match (&rust, &java.result, &java.error) {
            (Ok(r), Some(j), None) => r == j,
            (Err(e), None, Some(j)) => java_message(e).as_deref() == Some(j.as_str()),
            _ => false,
        };
        if same {
            equal += 1;
            refused += usize::from(rust.is_err());
            members += case.spec.members.len();
            standbys += usize::from(case.spec.configs.num_standby_replicas > 0);
            if let Some(out) = record.as_mut() {
                let expected = match &java.result {
                    Some(r) => json!({"result": r}),
                    None => json!({"error": java.error}),
                };
                let line = json!({"id": case.id, "spec": case.spec, "topology": case.topology, "expected": expected});
                writeln!(out, "{line}").unwrap();
            }
        } else {
            fs::create_dir_all(dir.join("diffs")).unwrap();
            let rust = match &rust {
                Ok(r) => json!({"result": r}),
                Err(e) => json!({"error": e.to_string()}),
            };
            let diff = json!({"case": case, "rust": rust, "java": {"result": java.result, "error": java.error}});
            fs::write(dir.join("diffs").join(format!("{}.json", case.id)), serde_json::to_string_pretty(&diff).unwrap()).unwrap();
            different.push(case.id.clone());
        }
    }
    println!(
        "StickyTaskAssignor (kafka-group-coordinator 4.4.0): {} groups, {equal} equal, {} different \
         ({members} members in the equal ones, {standbys} with standbys, {refused} refused by both; rust {:.1?})",
        groups.len(),
        different.len(),
        start.elapsed()
    );
    assert!(different.is_empty(), "groups that differ from Java (see {}/diffs): {}", dir.display(), different.join(", "));
}
