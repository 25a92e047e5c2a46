//! `decode` and `encode`: rebalance metadata to JSON and back.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine as _;
use clap::ValueEnum;
use kstreams_assignor::wire::inspect::{self, Inspected, Kind};
use kstreams_assignor::wire::message::Message;
use kstreams_assignor::wire::Lenience;
use serde_json::Value;

use super::io::read_input;
use super::{CliError, usage};

#[derive(clap::Args)]
pub(crate) struct DecodeArgs {
    /// A file holding raw bytes, or hex or base64 text: one value per line, several values on a
    /// line separated by commas (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Hex given inline (`:` and whitespace allowed; several values separated by commas).
    #[arg(long, conflicts_with_all = ["file", "base64"])]
    hex: Option<String>,
    /// Base64 given inline (several values separated by commas).
    #[arg(long, conflicts_with = "file")]
    base64: Option<String>,
    /// What the bytes are; recognised when not given.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// One line of JSON per value even for a single value (several values always print one
    /// line each).
    #[arg(long)]
    compact: bool,
    /// Decode an embedded example: a Java member's JoinGroup metadata (envelope v3 around a v11
    /// subscription), as written by kafka-streams 4.4.0.
    #[arg(long, conflicts_with_all = ["file", "hex", "base64"])]
    example: bool,
}

/// `--kind`: the four wire messages, named as in JSON.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum KindArg {
    /// A bare Kafka Streams `SubscriptionInfo`.
    Subscription,
    /// A bare Kafka Streams `AssignmentInfo`.
    Assignment,
    /// A `ConsumerProtocolSubscription` (JoinGroup member metadata) around a subscription.
    SubscriptionEnvelope,
    /// A `ConsumerProtocolAssignment` (SyncGroup member assignment) around an assignment.
    AssignmentEnvelope,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Subscription => Kind::Subscription,
            KindArg::Assignment => Kind::Assignment,
            KindArg::SubscriptionEnvelope => Kind::SubscriptionEnvelope,
            KindArg::AssignmentEnvelope => Kind::AssignmentEnvelope,
        }
    }
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
    #[arg(long, value_enum)]
    kind: KindArg,
    /// The version to write (for an envelope, the envelope version); default: the JSON's own.
    #[arg(long)]
    version: Option<i32>,
    /// The JSON file (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "hex")]
    output: OutputFormat,
}

/// How the text of a value is read.
#[derive(Clone, Copy)]
enum Text {
    Hex,
    Base64,
    /// Hex when it can be, else base64.
    Either,
}

/// One input value: where it came from (for errors) and its bytes.
struct Input {
    place: Option<String>,
    bytes: Result<Vec<u8>, String>,
}

fn parse_value(item: &str, text: Text) -> Result<Vec<u8>, String> {
    let shown: String = item.chars().take(40).collect();
    match text {
        Text::Hex => {
            let compact: String = item.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
            hex::decode(&compact).map_err(|e| format!("`{shown}` is not hex: {e}"))
        }
        Text::Base64 => {
            let compact: String = item.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD.decode(&compact).map_err(|e| format!("`{shown}` is not base64: {e}"))
        }
        Text::Either => match inspect::parse_text(item) {
            Ok(mut v) if v.len() == 1 => Ok(v.remove(0)),
            _ => Err(format!("`{shown}` is neither hex nor base64")),
        },
    }
}

/// The comma-separated values of inline text.
fn inline_values(text: &str, how: Text) -> Vec<Input> {
    let items: Vec<&str> = text.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let many = items.len() > 1;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| Input { place: many.then(|| format!("value {}", i + 1)), bytes: parse_value(item, how) })
        .collect()
}

/// Whether file contents are text (hex or base64 lines) rather than raw metadata.
fn is_text(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| b.is_ascii_alphanumeric() || b"+/=:, \t\r\n".contains(&b))
}

/// The values of a text file: one per line, several on a line separated by commas (as tshark
/// prints a repeated field); blank lines are skipped but counted.
fn text_values(text: &str) -> Vec<Input> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let items: Vec<&str> = line.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        for (i, item) in items.iter().enumerate() {
            let place = if items.len() > 1 { format!("line {}, value {}", n + 1, i + 1) } else { format!("line {}", n + 1) };
            out.push(Input { place: Some(place), bytes: parse_value(item, Text::Either) });
        }
    }
    out
}

fn future_version(lenience: &[Lenience]) -> Option<i32> {
    lenience.iter().find_map(|l| match l {
        Lenience::FutureVersion { version } => Some(*version),
        _ => None,
    })
}

/// Recognises the kind. Bytes that only read as a message from a future version (of which
/// nothing but the version numbers can be read, so every other field would be a default) are
/// refused: nearly any four bytes read that way.
fn recognise(bytes: &[u8]) -> Result<Inspected, String> {
    let found = inspect::decode(bytes, None).map_err(|e| e.to_string())?;
    if future_version(&found.lenience).is_none() {
        return Ok(found);
    }
    let reasons: String = Kind::ALL
        .into_iter()
        .map(|k| match inspect::decode(bytes, Some(k)) {
            Ok(i) => match future_version(&i.lenience) {
                Some(v) => format!(
                    "\n  as {k}: version {v} is newer than this tool reads, so only the version fields could be read (if that is what the bytes are, --kind {k} shows them)"
                ),
                None => format!("\n  as {k}: decodes only leniently"),
            },
            Err(e) => format!("\n  as {k}: {e}"),
        })
        .collect();
    Err(format!("the bytes are none of the known messages:{reasons}"))
}

fn decode_one(bytes: &[u8], kind: Option<Kind>) -> Result<Inspected, String> {
    match kind {
        Some(k) => inspect::decode(bytes, Some(k)).map_err(|e| e.to_string()),
        None => recognise(bytes),
    }
}

fn write_stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| format!("cannot write to standard output: {e}"))
}

/// `decode`: one JSON document per value (one line each when there are several); a value that
/// does not decode prints `null` in its place and its error on standard error, and the command
/// fails at the end.
pub(crate) fn decode(args: DecodeArgs) -> Result<String, CliError> {
    let values = if args.example {
        vec![Input { place: None, bytes: Ok(EXAMPLE_METADATA.to_vec()) }]
    } else if let Some(h) = &args.hex {
        inline_values(h, Text::Hex)
    } else if let Some(b) = &args.base64 {
        inline_values(b, Text::Base64)
    } else {
        let bytes = read_input(args.file.as_ref())?;
        if is_text(&bytes) {
            text_values(std::str::from_utf8(&bytes).expect("ASCII"))
        } else if bytes.is_empty() {
            Vec::new()
        } else {
            vec![Input { place: None, bytes: Ok(bytes) }]
        }
    };
    if values.is_empty() {
        return Err(usage("no input: give a file, --hex, --base64 or --example, or pipe values in"));
    }
    let kind = args.kind.map(Kind::from);
    if let [one] = values.as_slice() {
        let decoded = one.bytes.clone().and_then(|b| decode_one(&b, kind))?;
        let text = if args.compact { decoded.json.to_string() } else { serde_json::to_string_pretty(&decoded.json).expect("JSON") };
        return Ok(format!("{text}\n"));
    }
    let mut failed = 0;
    for value in &values {
        let line = match value.bytes.clone().and_then(|b| decode_one(&b, kind)) {
            Ok(decoded) => decoded.json.to_string(),
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {e}", value.place.as_deref().unwrap_or("input"));
                "null".to_owned()
            }
        };
        write_stdout(&format!("{line}\n"))?;
    }
    if failed > 0 {
        return Err(CliError::Failed(format!("{failed} of {} values did not decode", values.len())));
    }
    Ok(String::new())
}

/// The keys each kind must have (besides the version `--version` may give): the ones whose
/// default would be made up.
fn required_keys(kind: Kind, version_given: bool) -> &'static [&'static str] {
    match (kind, version_given) {
        (Kind::Subscription, _) => &["version", "latestSupportedVersion", "processId"],
        (Kind::Assignment, _) => &["version", "commonlySupportedVersion"],
        (Kind::SubscriptionEnvelope, false) => &["envelopeVersion", "topics", "userData"],
        (Kind::SubscriptionEnvelope, true) => &["topics", "userData"],
        (Kind::AssignmentEnvelope, false) => &["envelopeVersion", "assignedPartitions", "userData"],
        (Kind::AssignmentEnvelope, true) => &["assignedPartitions", "userData"],
    }
}

/// `nextRebalanceMs` may be a string (JSON tools that read numbers as doubles lose an `i64`
/// beyond 2^53): it becomes the number it spells.
fn numbers_from_strings(kind: Kind, view: &mut Value) -> Result<(), String> {
    match kind {
        Kind::Assignment => {
            if let Some(v) = view.get_mut("nextRebalanceMs") {
                if let Some(s) = v.as_str() {
                    let n: i64 = s.trim().parse().map_err(|_| format!("field `nextRebalanceMs`: `{s}` is not a whole number of milliseconds"))?;
                    *v = Value::from(n);
                }
            }
            Ok(())
        }
        Kind::AssignmentEnvelope => match view.get_mut("userData") {
            Some(ud @ Value::Object(_)) => numbers_from_strings(Kind::Assignment, ud).map_err(|e| format!("userData: {e}")),
            _ => Ok(()),
        },
        Kind::Subscription | Kind::SubscriptionEnvelope => Ok(()),
    }
}

/// Refuses keys the message's view does not have (a misspelling would otherwise be dropped
/// without a word). The known keys are the view's own, plus `kind` and `lenience`, which
/// `decode` adds.
fn check_unknown_keys(kind: Kind, view: &Value, message: &Message, at: &str) -> Result<(), String> {
    let Value::Object(given) = view else { return Ok(()) };
    let known = message.view(Value::Null).map_err(|e| e.to_string())?;
    let known = known.as_object().expect("a view is an object");
    let unknown: Vec<&str> =
        given.keys().map(String::as_str).filter(|k| !known.contains_key(*k) && !matches!(*k, "kind" | "lenience")).collect();
    if !unknown.is_empty() {
        let mut expected: Vec<&str> = known.keys().map(String::as_str).collect();
        expected.sort_unstable();
        return Err(format!(
            "{at}unknown key(s) {} for a {} (expected {})",
            unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
            kind.name(),
            expected.join(", ")
        ));
    }
    if let (Some(inner), Some(ud @ Value::Object(_))) = (kind.user_data_kind(), given.get("userData")) {
        let inner_message = Message::from_view(inner, ud).map_err(|e| format!("{at}userData: {e}"))?;
        check_unknown_keys(inner, ud, &inner_message, &format!("{at}userData: "))?;
    }
    Ok(())
}

/// Refuses a view without the keys whose default would be made up.
fn check_missing_keys(kind: Kind, view: &Value, version_given: bool, at: &str) -> Result<(), String> {
    let Value::Object(given) = view else { return Ok(()) };
    let missing: Vec<String> =
        required_keys(kind, version_given).iter().filter(|k| !given.contains_key(**k)).map(|k| format!("`{k}`")).collect();
    if !missing.is_empty() {
        return Err(format!("{at}missing key(s) {} for a {}", missing.join(", "), kind.name()));
    }
    match (kind.user_data_kind(), given.get("userData")) {
        (Some(inner), Some(ud @ Value::Object(_))) => check_missing_keys(inner, ud, false, &format!("{at}userData: ")),
        _ => Ok(()),
    }
}

fn encode_value(kind: Kind, view: &mut Value, version: Option<i32>) -> Result<Vec<u8>, String> {
    if let Some(k) = view.get("kind").and_then(Value::as_str) {
        if k != kind.name() {
            return Err(format!("the JSON's `kind` is `{k}`, but --kind is {}", kind.name()));
        }
    }
    numbers_from_strings(kind, view)?;
    let mut message = Message::from_view(kind, view).map_err(|e| e.to_string())?;
    check_unknown_keys(kind, view, &message, "")?;
    if let Some(v) = version {
        message = message.with_version(v).map_err(|e| e.to_string())?;
    }
    // After encoding, so that a field the version cannot carry is named first.
    let bytes = message.encode().map_err(|e| e.to_string())?;
    check_missing_keys(kind, view, version.is_some(), "")?;
    Ok(bytes)
}

/// `encode`: the bytes in the asked format.
pub(crate) fn encode(args: EncodeArgs) -> Result<Vec<u8>, CliError> {
    let text = read_input(args.file.as_ref())?;
    let mut view: Value = serde_json::from_slice(&text).map_err(|e| format!("input is not JSON: {e}"))?;
    let bytes = encode_value(args.kind.into(), &mut view, args.version)?;
    Ok(match args.output {
        OutputFormat::Hex => format!("{}\n", hex::encode(&bytes)).into_bytes(),
        OutputFormat::Base64 => format!("{}\n", base64::engine::general_purpose::STANDARD.encode(&bytes)).into_bytes(),
        OutputFormat::Raw => bytes,
    })
}
