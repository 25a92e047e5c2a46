//! The fuzz targets' checks, run on every `cargo test` over the golden fixtures, every
//! single-byte mutation of the small ones, and random bytes. Long runs use `cargo fuzz` (see
//! `fuzz/`).

use std::path::Path;

use kstreams_assignor::fuzzing;
use proptest::prelude::*;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 6] = [
    ("subscription", fuzzing::subscription),
    ("assignment", fuzzing::assignment),
    ("subscription-envelope", fuzzing::subscription_envelope),
    ("assignment-envelope", fuzzing::assignment_envelope),
    ("inspect", fuzzing::inspect),
    ("java_string", fuzzing::java_string),
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
