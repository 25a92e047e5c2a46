//! Replays the scenarios of `fixtures/parity/` through the engine and checks that it decides
//! exactly what Kafka Streams 4.4.0's Java assignors decided (recorded by
//! `compat/java/parity.sh --fixtures N`; no Java needed here).
//!
//! Each line of `fixtures/parity/<Assignor>.jsonl` is
//! `{"id", "assignor", "input", "expected"}`: the configured assignor, the engine input, and the
//! assignment Java computed (by the assignor the leader picks, named in `expected.assignor`).

use std::path::Path;

use kstreams_assignor::engine::{Assignment, AssignmentInput, AssignorKind, assign};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    assignor: AssignorKind,
    input: AssignmentInput,
    expected: Assignment,
}

fn replay(assignor: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parity").join(format!("{assignor}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Case = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let actual = assign(case.assignor, &case.input);
        count += 1;
        match actual {
            Ok(actual) if actual == case.expected => {}
            Ok(actual) => failures.push(format!("{}: engine {actual:?}\n  java {:?}", case.id, case.expected)),
            Err(e) => failures.push(format!("{}: engine refused: {e}", case.id)),
        }
        assert_eq!(case.expected.assignor, assignor, "{}: filed under the wrong assignor", case.id);
    }
    assert!(count >= 50, "{}: only {count} cases", path.display());
    assert!(failures.is_empty(), "{} of {count} cases differ from Java:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn high_availability_matches_java() {
    replay("HighAvailabilityTaskAssignor");
}

#[test]
fn legacy_sticky_matches_java() {
    replay("LegacyStickyTaskAssignor");
}

#[test]
fn fallback_prior_matches_java() {
    replay("FallbackPriorTaskAssignor");
}
