//! `decode` and `encode`: rebalance metadata to JSON and back.

use std::path::PathBuf;

use base64::Engine as _;
use clap::ValueEnum;
use kstreams_assignor::wire::inspect::{self, Kind};
use kstreams_assignor::wire::message::Message;
use serde_json::Value;

use super::io::read_input;

#[derive(clap::Args)]
pub(crate) struct DecodeArgs {
    /// A file holding raw bytes, hex or base64 (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Hex given inline (`:` and whitespace allowed; several values separated by commas).
    #[arg(long, conflicts_with_all = ["file", "base64"])]
    hex: Option<String>,
    /// Base64 given inline.
    #[arg(long, conflicts_with = "file")]
    base64: Option<String>,
    /// What the bytes are; recognised when not given.
    #[arg(long, value_parser = parse_kind)]
    kind: Option<Kind>,
    /// One line of JSON per input instead of pretty-printed.
    #[arg(long)]
    compact: bool,
    /// Decode an embedded example: a Java member's JoinGroup metadata (envelope v3 around a v11
    /// subscription), as written by kafka-streams 4.4.0.
    #[arg(long, conflicts_with_all = ["file", "hex", "base64"])]
    example: bool,
}

/// JoinGroup member metadata written by the Java classes (`fixtures/wire`).
const EXAMPLE_METADATA: &[u8] = include_bytes!("../../fixtures/wire/subscription-envelope/v3/streams-user-data.bin");

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormat {
    Hex,
    Base64,
    Raw,
}

#[derive(clap::Args)]
pub(crate) struct EncodeArgs {
    /// What to encode.
    #[arg(long, value_parser = parse_kind)]
    kind: Kind,
    /// The version to write (for an envelope, the envelope version); default: the JSON's own.
    #[arg(long)]
    version: Option<i32>,
    /// The JSON file (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "hex")]
    output: OutputFormat,
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    s.parse()
}

/// `decode`: JSON, one document per input.
pub(crate) fn decode(args: DecodeArgs) -> Result<String, String> {
    let buffers = if args.example {
        vec![EXAMPLE_METADATA.to_vec()]
    } else if let Some(h) = &args.hex {
        inspect::parse_text(h).map_err(|e| e.to_string())?
    } else if let Some(b) = &args.base64 {
        inspect::parse_text(b).map_err(|e| e.to_string())?
    } else {
        let bytes = read_input(args.file.as_ref())?;
        if inspect::looks_like_text(&bytes) {
            inspect::parse_text(std::str::from_utf8(&bytes).expect("checked")).map_err(|e| e.to_string())?
        } else {
            vec![bytes]
        }
    };
    if buffers.is_empty() {
        return Err("no input".into());
    }
    let mut out = String::new();
    for (i, bytes) in buffers.iter().enumerate() {
        let decoded = inspect::decode(bytes, args.kind).map_err(|e| {
            if buffers.len() > 1 { format!("input {}: {e}", i + 1) } else { e.to_string() }
        })?;
        let text = if args.compact { decoded.json.to_string() } else { serde_json::to_string_pretty(&decoded.json).expect("JSON") };
        out.push_str(&text);
        out.push('\n');
    }
    Ok(out)
}

fn encode_value(kind: Kind, view: &Value, version: Option<i32>) -> Result<Vec<u8>, String> {
    let mut message = Message::from_view(kind, view).map_err(|e| e.to_string())?;
    if let Some(v) = version {
        message = message.with_version(v).map_err(|e| e.to_string())?;
    }
    message.encode().map_err(|e| e.to_string())
}

/// `encode`: the bytes in the asked format.
pub(crate) fn encode(args: EncodeArgs) -> Result<Vec<u8>, String> {
    let text = read_input(args.file.as_ref())?;
    let view: Value = serde_json::from_slice(&text).map_err(|e| format!("input is not JSON: {e}"))?;
    let bytes = encode_value(args.kind, &view, args.version)?;
    Ok(match args.output {
        OutputFormat::Hex => format!("{}\n", hex::encode(&bytes)).into_bytes(),
        OutputFormat::Base64 => format!("{}\n", base64::engine::general_purpose::STANDARD.encode(&bytes)).into_bytes(),
        OutputFormat::Raw => bytes,
    })
}
