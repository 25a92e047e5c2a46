//! The fuzz targets' checks, run on every `cargo test` over the golden fixtures, every
//! single-byte mutation of the small ones, and random bytes. Long runs use `cargo fuzz` (see
//! `fuzz/`).

use std::path::Path;

use kstreams_assignor::fuzzing;
use kstreams_assignor::leader::Topology;
use proptest::prelude::*;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 12] = [
    ("subscription", fuzzing::subscription),
    ("assignment", fuzzing::assignment),
    ("subscription-envelope", fuzzing::subscription_envelope),
    ("assignment-envelope", fuzzing::assignment_envelope),
    ("inspect", fuzzing::inspect),
    ("java_string", fuzzing::java_string),
    ("topology", fuzzing::topology),
    ("response", fuzzing::response),
    ("plugin_request", fuzzing::plugin_request),
    ("streams_request", fuzzing::streams_request),
    ("streams_group_describe", fuzzing::streams_group_describe),
    ("streams_group_heartbeat", fuzzing::streams_group_heartbeat),
];

fn fixture_files() -> Vec<Vec<u8>> {
    fn walk(dir: &Path, out: &mut Vec<Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "bin") {
                out.push(std::fs::read(path).unwrap());
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire"), &mut out);
    out
}

#[test]
fn fuzz_checks_hold_on_fixtures_and_their_mutations() {
    let files = fixture_files();
    assert!(files.len() > 100);
    for data in &files {
        for (_, target) in TARGETS {
            target(data);
        }
        if data.len() > 512 {
            continue;
        }
        for i in 0..data.len() {
            for v in [0x00, 0x7f, 0x80, 0xff, data[i] ^ 0x01] {
                let mut m = data.clone();
                m[i] = v;
                for (_, target) in TARGETS {
                    target(&m);
                }
            }
        }
    }
}

/// The topology texts and JSON of `fixtures/leader/`, whole and with every line dropped, doubled or
/// cut short, under a few partition-count seeds.
#[test]
fn topology_checks_hold_on_fixtures_and_their_mutations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/leader");
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".describe.txt") || name.ends_with(".topology.json") {
            texts.push(std::fs::read_to_string(&path).unwrap());
        }
    }
    assert!(texts.len() >= 7, "{} topology fixtures", texts.len());
    let mut parsed = 0;
    for text in &texts {
        let lines: Vec<&str> = text.lines().collect();
        let mut variants = vec![text.clone()];
        for i in 0..lines.len() {
            let mut dropped = lines.clone();
            dropped.remove(i);
            variants.push(dropped.join("\n"));
            let mut doubled = lines.clone();
            doubled.insert(i, lines[i]);
            variants.push(doubled.join("\n"));
            let mut cut = lines.clone();
            let mid = (0..=lines[i].len() / 2).rev().find(|&k| lines[i].is_char_boundary(k)).unwrap_or(0);
            cut[i] = &lines[i][..mid];
            variants.push(cut.join("\n"));
        }
        for variant in variants {
            let describe = Topology::from_describe(&variant, "app").is_ok();
            let json = serde_json::from_str::<Topology>(&variant).is_ok();
            parsed += usize::from(describe || json);
            for seed in [0u8, 1, 7, 255] {
                let mut data = vec![seed];
                data.extend_from_slice(variant.as_bytes());
                fuzzing::topology(&data);
            }
        }
    }
    // Many variants still parse, so task building runs too.
    assert!(parsed > 100, "only {parsed} variants parse");
}

/// The `StreamsGroupDescribe` fixtures (Java's and the real broker's), each behind the selector
/// byte of its message and version, whole and with every byte mutated: decoded values re-encode
/// to bytes that decode the same, and nothing panics.
#[test]
fn streams_group_describe_checks_hold_on_its_fixtures_and_their_mutations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/streams-group");
    let mut seeds = Vec::new();
    for (sub, request) in [("request", true), ("response", false), ("broker", false)] {
        for version in 0..=1u8 {
            let Ok(entries) = std::fs::read_dir(dir.join(sub).join(format!("v{version}"))) else { continue };
            for entry in entries {
                let mut data = vec![version * 2 + u8::from(request)];
                data.extend(std::fs::read(entry.unwrap().path()).unwrap());
                seeds.push(data);
            }
        }
    }
    assert!(seeds.len() >= 13, "{} seeds", seeds.len());
    for data in &seeds {
        fuzzing::streams_group_describe(data);
        for i in 1..data.len() {
            for v in [0x00, 0x01, 0x7f, 0x80, 0xff, data[i] ^ 0x01] {
                let mut m = data.clone();
                m[i] = v;
                fuzzing::streams_group_describe(&m);
            }
        }
    }
}

/// The `StreamsGroupHeartbeat` fixtures (Java's), each behind the selector
/// byte of its message and version, whole and with every byte mutated: decoded values re-encode
/// to bytes that decode the same, and nothing panics.
#[test]
fn streams_group_heartbeat_checks_hold_on_its_fixtures_and_their_mutations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/streams-heartbeat");
    let mut seeds = Vec::new();
    for (sub, request) in [("request", true), ("response", false)] {
        for version in 0..=1u8 {
            let Ok(entries) = std::fs::read_dir(dir.join(sub).join(format!("v{version}"))) else { continue };
            for entry in entries {
                let mut data = vec![version * 2 + u8::from(request)];
                data.extend(std::fs::read(entry.unwrap().path()).unwrap());
                seeds.push(data);
            }
        }
    }
    assert!(seeds.len() >= 16, "{} seeds", seeds.len());
    for data in &seeds {
        fuzzing::streams_group_heartbeat(data);
        for i in 1..data.len() {
            for v in [0x00, 0x01, 0x7f, 0x80, 0xff, data[i] ^ 0x01] {
                let mut m = data.clone();
                m[i] = v;
                fuzzing::streams_group_heartbeat(&m);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn fuzz_checks_hold_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        for (_, target) in TARGETS {
            target(&data);
        }
    }

    #[test]
    fn fuzz_checks_hold_on_plausible_headers(version in 0i32..14, rest in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut data = version.to_be_bytes().to_vec();
        data.extend_from_slice(&rest);
        for (_, target) in TARGETS {
            target(&data);
            target(&data[2..]);
        }
    }
}
