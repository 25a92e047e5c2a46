//! Writes, for every fixture Java decoded, the bytes our encoder produces from Java's decoded
//! view, with a manifest in the fixture format, so that the Java harness can decode them
//! (`compat/java/run.sh verify DIR`) and confirm it reads the same values.
//!
//! Usage: `cargo run --example encode_manifest -- [FIXTURES_DIR] OUT_DIR`

use std::path::PathBuf;

use kstreams_assignor::wire::message::{Kind, Message};
use serde_json::{Value, json};

fn encode(message: &str, view: &Value) -> Result<Vec<u8>, String> {
    let kind: Kind = message.parse().map_err(|_| format!("unknown message {message}"))?;
    Message::from_view(kind, view).map_err(|e| e.to_string())?.encode().map_err(|e| e.to_string())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (fixtures, out) = match args.as_slice() {
        [out] => (PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire"), PathBuf::from(out)),
        [fixtures, out] => (PathBuf::from(fixtures), PathBuf::from(out)),
        _ => return Err("usage: encode_manifest [FIXTURES_DIR] OUT_DIR".into()),
    };
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(fixtures.join("manifest.json"))?)?;
    let mut entries = Vec::new();
    for f in manifest["fixtures"].as_array().ok_or("no fixtures array")? {
        let Some(expected) = f.get("expected") else { continue };
        let message = f["message"].as_str().ok_or("message")?;
        let file = f["file"].as_str().ok_or("file")?;
        let bytes = encode(message, expected).map_err(|e| format!("{file}: {e}"))?;
        let path = out.join(file);
        std::fs::create_dir_all(path.parent().ok_or("path")?)?;
        std::fs::write(&path, bytes)?;
        let mut entry = f.clone();
        entry["origin"] = json!("rust-encoded");
        entries.push(entry);
    }
    let count = entries.len();
    let out_manifest = json!({
        "kafkaStreamsVersion": manifest["kafkaStreamsVersion"],
        "latestSupportedVersion": manifest["latestSupportedVersion"],
        "generator": "examples/encode_manifest.rs",
        "fixtures": entries,
    });
    std::fs::write(out.join("manifest.json"), serde_json::to_string_pretty(&out_manifest)?)?;
    eprintln!("wrote {count} files encoded by kstreams-assignor to {}", out.display());
    Ok(())
}
