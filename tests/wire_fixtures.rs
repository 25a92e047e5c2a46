//! Golden fixtures written by the real Java `kafka-streams` classes (see
//! `fixtures/wire/FORMAT.md`): every file must decode to what Java decoded, fail where Java
//! failed, re-encode to the same bytes, and survive truncation and tampering without panicking.

use std::path::{Path, PathBuf};

use kstreams_assignor::wire::Lenience;
use kstreams_assignor::wire::json::{hex_user_data, normalize};
use kstreams_assignor::wire::message::{Kind, Message};
use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire")
}

struct Fixture {
    file: String,
    message: String,
    origin: String,
    expected: Option<Value>,
    java_error: Option<String>,
    bytes: Vec<u8>,
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixtures_dir().join("manifest.json")).expect("fixtures/wire/manifest.json");
    serde_json::from_str(&text).expect("manifest is JSON")
}

fn fixtures() -> Vec<Fixture> {
    let m = manifest();
    let list = m["fixtures"].as_array().expect("fixtures array");
    assert!(list.len() > 100, "suspiciously few fixtures: {}", list.len());
    list.iter()
        .map(|f| {
            let file = f["file"].as_str().expect("file").to_owned();
            let bytes = std::fs::read(fixtures_dir().join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            Fixture {
                message: f["message"].as_str().expect("message").to_owned(),
                origin: f["origin"].as_str().expect("origin").to_owned(),
                expected: f.get("expected").cloned(),
                java_error: f.get("javaError").and_then(Value::as_str).map(str::to_owned),
                file,
                bytes,
            }
        })
        .collect()
}

fn kind(message: &str) -> Kind {
    message.parse().unwrap_or_else(|_| panic!("unknown message kind {message}"))
}

/// Decodes as the manifest's view (envelope user data as hex), with the lenience seen.
fn view(message: &str, bytes: &[u8]) -> Result<(Value, Vec<Lenience>), String> {
    let (m, l) = Message::decode_reporting(kind(message), bytes).map_err(|e| e.to_string())?;
    Ok((m.view(hex_user_data(m.user_data())).map_err(|e| e.to_string())?, l))
}

/// Decodes and re-encodes without going through the view.
fn reencode(message: &str, bytes: &[u8]) -> Vec<u8> {
    Message::decode(kind(message), bytes).unwrap().encode().unwrap()
}

/// Builds the message from a view and encodes it at the view's version.
fn encode_view(message: &str, view: &Value) -> Result<Vec<u8>, String> {
    Message::from_view(kind(message), view).map_err(|e| e.to_string())?.encode().map_err(|e| e.to_string())
}

fn normalized(mut v: Value) -> Value {
    normalize(&mut v);
    v
}

fn report(failures: Vec<String>, checked: usize) {
    assert!(failures.is_empty(), "{} of {checked} fixtures failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn accepts_every_fixture_java_decodes_with_the_same_view() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.expected.is_some()) {
        checked += 1;
        let expected = normalized(f.expected.clone().unwrap());
        match view(&f.message, &f.bytes) {
            Ok((got, _)) if normalized(got.clone()) == expected => {}
            Ok((got, _)) => failures.push(format!("{}: view differs\n  java: {expected}\n  rust: {}", f.file, normalized(got))),
            Err(e) => failures.push(format!("{}: Java decodes it, we refuse: {e}", f.file)),
        }
    }
    report(failures, checked);
}

#[test]
fn refuses_every_fixture_java_refuses() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.java_error.is_some()) {
        checked += 1;
        if let Ok((v, _)) = view(&f.message, &f.bytes) {
            failures.push(format!("{}: Java throws {:?}, we accept: {v}", f.file, f.java_error.as_deref().unwrap()));
        }
    }
    assert!(checked >= 20, "expected the handmade error cases, found {checked}");
    report(failures, checked);
}

#[test]
fn can_round_trip_every_fixture_byte_for_byte() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.expected.is_some()) {
        checked += 1;
        let (_, lenience) = view(&f.message, &f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.file));
        let again = reencode(&f.message, &f.bytes);
        if lenience.iter().all(Lenience::round_trips) {
            if again != f.bytes {
                failures.push(format!("{}: re-encoded bytes differ\n  java: {}\n  rust: {}", f.file, hex::encode(&f.bytes), hex::encode(&again)));
            }
        } else {
            // Java reads a negative length as empty; the canonical form must read the same.
            let (a, _) = view(&f.message, &f.bytes).unwrap();
            let (b, l) = view(&f.message, &again).unwrap();
            if a != b || !l.iter().all(Lenience::round_trips) {
                failures.push(format!("{}: canonical re-encoding reads differently", f.file));
            }
        }
    }
    report(failures, checked);
}

#[test]
fn encodes_values_built_from_the_view_canonically() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.expected.is_some()) {
        checked += 1;
        let expected = normalized(f.expected.clone().unwrap());
        match encode_view(&f.message, f.expected.as_ref().unwrap()) {
            Err(e) => failures.push(format!("{}: cannot encode the view: {e}", f.file)),
            Ok(bytes) => {
                let (got, lenience) = view(&f.message, &bytes).unwrap_or_else(|e| panic!("{}: {e}", f.file));
                if normalized(got.clone()) != expected {
                    failures.push(format!("{}: our encoding reads back differently: {got}", f.file));
                }
                let non_canonical: Vec<_> = lenience
                    .iter()
                    .filter(|l| !matches!(l, Lenience::FutureVersion { .. } | Lenience::EnvelopeVersionAboveKnown { .. }))
                    .collect();
                if !non_canonical.is_empty() {
                    failures.push(format!("{}: our encoding is not canonical: {non_canonical:?}", f.file));
                }
                if encode_view(&f.message, f.expected.as_ref().unwrap()).unwrap() != bytes {
                    failures.push(format!("{}: encoding is not deterministic", f.file));
                }
            }
        }
    }
    report(failures, checked);
}

#[test]
fn can_detect_truncation_of_every_java_fixture() {
    let fixtures = fixtures();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.origin == "java-encoded") {
        checked += 1;
        let len = f.bytes.len();
        let step = (len / 256).max(1);
        for cut in (0..len).step_by(step) {
            if let Ok((v, _)) = view(&f.message, &f.bytes[..cut]) {
                failures.push(format!("{}: a {cut}-byte prefix of {len} decodes: {v}", f.file));
                break;
            }
        }
    }
    report(failures, checked);
}

#[test]
fn survives_tampered_lengths_and_counts() {
    // Every 2- and 4-byte window overwritten with extreme values: decoding may fail, never panic.
    let fixtures = fixtures();
    let mut decoded = 0usize;
    let mut refused = 0usize;
    for f in fixtures.iter().filter(|f| f.bytes.len() <= 4096) {
        for at in 0..f.bytes.len() {
            for patch in [&[0x7f, 0xff, 0xff, 0xff][..], &[0xff, 0xff, 0xff, 0xfe], &[0x80, 0, 0, 0], &[0x7f, 0xff], &[0xff, 0xfe]] {
                let mut b = f.bytes.clone();
                let end = (at + patch.len()).min(b.len());
                b[at..end].copy_from_slice(&patch[..end - at]);
                match view(&f.message, &b) {
                    Ok(_) => decoded += 1,
                    Err(_) => refused += 1,
                }
            }
        }
    }
    assert!(refused > 0 && decoded > 0, "decoded {decoded}, refused {refused}");
}

#[test]
fn refuses_to_encode_what_java_refuses_to_encode() {
    let m = manifest();
    let cases = m["encodeErrors"].as_array().expect("encodeErrors");
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for c in cases {
        let message = c["message"].as_str().unwrap();
        let mut input = c["input"].clone();
        input["version"] = c["version"].clone();
        if let Ok(bytes) = encode_view(message, &input) {
            failures.push(format!("{}: Java refuses ({}), we wrote {} bytes", c["case"], c["javaError"], bytes.len()));
        }
    }
    report(failures, cases.len());
}

#[test]
fn manifest_names_the_pinned_jar_and_latest_version() {
    let m = manifest();
    assert_eq!(m["latestSupportedVersion"], 11);
    assert_eq!(m["latestSupportedVersion"].as_i64(), Some(kstreams_assignor::wire::LATEST_SUPPORTED_VERSION.into()));
    assert!(m["kafkaStreamsVersion"].as_str().unwrap().starts_with("4."));
}
