//! Helpers shared by the leader tests: the seeded random stream and the JSON-lines files of the
//! Java parity runs (`compat/java/leader-parity.sh`).

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The engine's seeded SplitMix64 stream, so generated cases depend only on the seed.
pub use kstreams_assignor::rng::Rng;

/// `fixtures/leader/<name>`.
pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/leader").join(name)
}

/// The directory of a parity run: `LEADER_PARITY_DIR`, default `target/leader-parity`.
pub fn parity_dir() -> PathBuf {
    std::env::var_os("LEADER_PARITY_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/leader-parity"))
}

pub fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn write_jsonl<T: Serialize>(path: &Path, items: &[T]) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
        .collect()
}
