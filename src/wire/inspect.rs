//! Decoding bytes of unknown kind, for operators: hex, base64 or raw input; an envelope or bare
//! user data; a subscription or an assignment — recognised where that is unambiguous.
//!
//! ```
//! use kstreams_assignor::wire::inspect::{self, Kind};
//!
//! // Colon-separated hex, as some tshark versions print bytes fields.
//! let inputs = inspect::parse_text("00:00:00:01:00:00:00:00:00:00:00:00").unwrap();
//! let decoded = inspect::decode(&inputs[0], None).unwrap();
//! assert_eq!(decoded.kind, Kind::Assignment);
//! assert_eq!(decoded.json["activeTasks"], serde_json::json!([]));
//! ```

use base64::Engine as _;
use serde_json::{Value, json};

use super::error::{DecodeError, Lenience};
pub use super::message::Kind;
use super::message::Message;

/// Why input could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// The text is neither hex nor base64.
    #[error("input is neither hex nor base64: {0}")]
    NotText(String),
    /// The bytes decode as no kind.
    #[error("the bytes are none of the known messages:{}", .0.iter().map(|(k, e)| format!("\n  as {k}: {e}")).collect::<String>())]
    Unrecognised(Vec<(Kind, DecodeError)>),
    /// The bytes decode cleanly as more than one kind.
    #[error("the bytes decode as {} alike; choose one with --kind", .0.iter().map(|k| k.name()).collect::<Vec<_>>().join(" and "))]
    Ambiguous(Vec<Kind>),
    /// The bytes do not decode as the kind asked for.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Java's leader would reject the decoded subscription (a repeated client tag).
    #[error(transparent)]
    Semantic(#[from] super::subscription_info::DuplicateClientTag),
}

/// A decoded buffer: its kind, its JSON view, and where Java's reader had to be lenient.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// What the bytes are.
    pub kind: Kind,
    /// The JSON view, with `kind` and `lenience` keys added; an envelope's `userData` holds the
    /// decoded Streams message, or `{ "hex", "error" }` when it does not decode.
    pub json: Value,
    /// Non-canonical input Java accepts.
    pub lenience: Vec<Lenience>,
}

/// Turns text into buffers: hex (whitespace and `:` separators allowed, as `tshark` prints bytes
/// fields) or base64. Several comma-separated values (tshark's separator for repeated fields)
/// give several buffers.
pub fn parse_text(text: &str) -> Result<Vec<Vec<u8>>, InspectError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let compact: String = item.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
            if compact.len() % 2 == 0 && compact.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(hex::decode(&compact).expect("checked hex digits"));
            }
            let b64: String = item.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(&b64)
                .map_err(|_| InspectError::NotText(item.chars().take(40).collect()))
        })
        .collect()
}

/// Whether raw file contents look like text (hex or base64) rather than binary metadata.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.iter().all(|&b| b.is_ascii_alphanumeric() || b"+/=:, \t\r\n".contains(&b))
        && std::str::from_utf8(bytes).is_ok_and(|t| parse_text(t).is_ok())
}

fn lenience_json(lenience: &[Lenience]) -> Value {
    serde_json::to_value(lenience).expect("a lenience serializes")
}

/// An envelope's user data decoded as `kind`, with its lenience, or `{ "hex", "error" }`; and
/// whether it decoded with no lenience.
fn inner_user_data(user_data: Option<&[u8]>, kind: Kind) -> (Value, bool) {
    match user_data {
        None => (Value::Null, true),
        Some(bytes) => match Message::decode_reporting(kind, bytes)
            .map_err(InspectError::from)
            .and_then(|(m, l)| Ok((m.view(Value::Null)?, l)))
        {
            Ok((mut v, l)) => {
                let clean = l.is_empty();
                v["lenience"] = lenience_json(&l);
                (v, clean)
            }
            Err(e) => (json!({ "hex": hex::encode(bytes), "error": e.to_string() }), false),
        },
    }
}

/// Decodes as one kind. `clean` is whether decoding needed no lenience at all (used to
/// recognise the kind).
fn decode_as(bytes: &[u8], kind: Kind) -> Result<(Inspected, bool), InspectError> {
    let (message, lenience) = Message::decode_reporting(kind, bytes)?;
    let (user_data, inner_clean) = match kind.user_data_kind() {
        Some(inner) => inner_user_data(message.user_data(), inner),
        None => (Value::Null, true),
    };
    let mut json = message.view(user_data)?;
    json["kind"] = Value::String(kind.name().to_owned());
    json["lenience"] = lenience_json(&lenience);
    let clean = lenience.is_empty() && inner_clean;
    Ok((Inspected { kind, json, lenience }, clean))
}

/// Decodes `bytes` as `kind`, or recognises the kind: the one kind that decodes with no
/// lenience at all (envelopes whose user data decodes too), else the one kind that decodes at
/// all.
pub fn decode(bytes: &[u8], kind: Option<Kind>) -> Result<Inspected, InspectError> {
    if let Some(kind) = kind {
        return decode_as(bytes, kind).map(|(i, _)| i);
    }
    let mut ok = Vec::new();
    let mut failures = Vec::new();
    for kind in Kind::ALL {
        match decode_as(bytes, kind) {
            Ok(found) => ok.push(found),
            Err(InspectError::Decode(e)) => failures.push((kind, e)),
            Err(_) => {}
        }
    }
    let clean: Vec<usize> = (0..ok.len()).filter(|&i| ok[i].1).collect();
    let pick = match (clean.len(), ok.len()) {
        (1, _) => clean[0],
        (0, 1) => 0,
        (0, 0) => return Err(InspectError::Unrecognised(failures)),
        (0, _) => return Err(InspectError::Ambiguous(ok.iter().map(|(i, _)| i.kind).collect())),
        _ => return Err(InspectError::Ambiguous(clean.iter().map(|&i| ok[i].0.kind).collect())),
    };
    Ok(ok.swap_remove(pick).0)
}
