//! The four wire messages as one: [`Kind`] names them, [`Message`] holds one decoded, with
//! decoding (and its lenience report), encoding and the JSON view of [`json`].
//!
//! ```
//! use kstreams_assignor::wire::message::{Kind, Message};
//!
//! let bytes = hex::decode("000000010000000000000000").unwrap();
//! let (message, lenience) = Message::decode_reporting(Kind::Assignment, &bytes).unwrap();
//! assert!(lenience.is_empty());
//! assert_eq!(message.view(serde_json::Value::Null).unwrap()["activeTasks"], serde_json::json!([]));
//! assert_eq!(message.encode().unwrap(), bytes);
//! assert!(Message::decode_reporting(Kind::Subscription, &bytes).is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::assignment_info::AssignmentInfo;
use super::envelope::{AssignmentEnvelope, SubscriptionEnvelope};
use super::error::{DecodeError, EncodeError, Lenience};
use super::json::{self, ViewError};
use super::subscription_info::{DuplicateClientTag, SubscriptionInfo};

/// What a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A bare `SubscriptionInfo`.
    Subscription,
    /// A bare `AssignmentInfo`.
    Assignment,
    /// A `ConsumerProtocolSubscription` (JoinGroup member metadata).
    SubscriptionEnvelope,
    /// A `ConsumerProtocolAssignment` (SyncGroup member assignment).
    AssignmentEnvelope,
}

impl Kind {
    /// All kinds, envelopes first (the order in which recognition prefers them).
    pub const ALL: [Kind; 4] = [Kind::SubscriptionEnvelope, Kind::AssignmentEnvelope, Kind::Subscription, Kind::Assignment];

    /// The name used on the command line and in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Subscription => "subscription",
            Kind::Assignment => "assignment",
            Kind::SubscriptionEnvelope => "subscription-envelope",
            Kind::AssignmentEnvelope => "assignment-envelope",
        }
    }

    /// For an envelope, the kind of the Streams message its user data holds.
    pub const fn user_data_kind(self) -> Option<Kind> {
        match self {
            Kind::SubscriptionEnvelope => Some(Kind::Subscription),
            Kind::AssignmentEnvelope => Some(Kind::Assignment),
            Kind::Subscription | Kind::Assignment => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            format!("unknown kind `{s}` (expected subscription, assignment, subscription-envelope or assignment-envelope)")
        })
    }
}

/// One decoded wire message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// A bare `SubscriptionInfo`.
    Subscription(SubscriptionInfo),
    /// A bare `AssignmentInfo`.
    Assignment(AssignmentInfo),
    /// A `ConsumerProtocolSubscription`.
    SubscriptionEnvelope(SubscriptionEnvelope),
    /// A `ConsumerProtocolAssignment`.
    AssignmentEnvelope(AssignmentEnvelope),
}

/// Why a JSON view does not give a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FromViewError {
    /// The view is not one of the kind's.
    #[error(transparent)]
    View(#[from] ViewError),
    /// An envelope's `userData`, given as the Streams message's view, is not one.
    #[error("userData: {0}")]
    UserData(Box<FromViewError>),
    /// An envelope's `userData`, given as the Streams message's view, does not encode.
    #[error("userData: {0}")]
    UserDataEncode(EncodeError),
}

/// An envelope version that does not fit the envelope's `i16`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("envelope version {0} is out of range")]
pub struct EnvelopeVersionOutOfRange(pub i32);

impl Message {
    /// Its kind.
    pub const fn kind(&self) -> Kind {
        match self {
            Message::Subscription(_) => Kind::Subscription,
            Message::Assignment(_) => Kind::Assignment,
            Message::SubscriptionEnvelope(_) => Kind::SubscriptionEnvelope,
            Message::AssignmentEnvelope(_) => Kind::AssignmentEnvelope,
        }
    }

    /// Decodes `bytes` as `kind`, and lists the places where Java's reader was lenient.
    pub fn decode_reporting(kind: Kind, bytes: &[u8]) -> Result<(Message, Vec<Lenience>), DecodeError> {
        Ok(match kind {
            Kind::Subscription => SubscriptionInfo::decode_reporting(bytes).map(|(m, l)| (Message::Subscription(m), l))?,
            Kind::Assignment => AssignmentInfo::decode_reporting(bytes).map(|(m, l)| (Message::Assignment(m), l))?,
            Kind::SubscriptionEnvelope => {
                SubscriptionEnvelope::decode_reporting(bytes).map(|(m, l)| (Message::SubscriptionEnvelope(m), l))?
            }
            Kind::AssignmentEnvelope => {
                AssignmentEnvelope::decode_reporting(bytes).map(|(m, l)| (Message::AssignmentEnvelope(m), l))?
            }
        })
    }

    /// Decodes `bytes` as `kind`.
    pub fn decode(kind: Kind, bytes: &[u8]) -> Result<Message, DecodeError> {
        Self::decode_reporting(kind, bytes).map(|(m, _)| m)
    }

    /// Encodes, refusing what the message's version cannot carry.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        match self {
            Message::Subscription(m) => m.encode(),
            Message::Assignment(m) => m.encode(),
            Message::SubscriptionEnvelope(m) => m.encode(),
            Message::AssignmentEnvelope(m) => m.encode(),
        }
    }

    /// The message with another version (for an envelope, the envelope version).
    pub fn with_version(self, version: i32) -> Result<Message, EnvelopeVersionOutOfRange> {
        let envelope = || i16::try_from(version).map_err(|_| EnvelopeVersionOutOfRange(version));
        Ok(match self {
            Message::Subscription(m) => Message::Subscription(m.with_version(version)),
            Message::Assignment(m) => Message::Assignment(m.with_version(version)),
            Message::SubscriptionEnvelope(mut m) => {
                m.version = envelope()?;
                Message::SubscriptionEnvelope(m)
            }
            Message::AssignmentEnvelope(mut m) => {
                m.version = envelope()?;
                Message::AssignmentEnvelope(m)
            }
        })
    }

    /// An envelope's user data (`None` for a bare message or an envelope without).
    pub fn user_data(&self) -> Option<&[u8]> {
        match self {
            Message::SubscriptionEnvelope(m) => m.user_data.as_deref(),
            Message::AssignmentEnvelope(m) => m.user_data.as_deref(),
            Message::Subscription(_) | Message::Assignment(_) => None,
        }
    }

    /// The JSON view ([`json`]); an envelope's `userData` is `user_data` (a bare
    /// message ignores it). A subscription Java's leader would reject has none.
    pub fn view(&self, user_data: Value) -> Result<Value, DuplicateClientTag> {
        Ok(match self {
            Message::Subscription(m) => json::subscription_view(m)?,
            Message::Assignment(m) => json::assignment_view(m),
            Message::SubscriptionEnvelope(m) => json::subscription_envelope_view(m, user_data),
            Message::AssignmentEnvelope(m) => json::assignment_envelope_view(m, user_data),
        })
    }

    /// The message a JSON view describes. An envelope's `userData` may be hex or the Streams
    /// message's own view, which is then encoded at its own version.
    pub fn from_view(kind: Kind, view: &Value) -> Result<Message, FromViewError> {
        let nested = |inner: Kind| -> Result<Value, FromViewError> {
            let mut view = view.clone();
            if let Some(ud @ Value::Object(_)) = view.get("userData") {
                let message = Message::from_view(inner, ud).map_err(|e| FromViewError::UserData(Box::new(e)))?;
                let bytes = message.encode().map_err(FromViewError::UserDataEncode)?;
                view["userData"] = Value::String(hex::encode(bytes));
            }
            Ok(view)
        };
        Ok(match kind {
            Kind::Subscription => Message::Subscription(json::subscription_from_view(view)?),
            Kind::Assignment => Message::Assignment(json::assignment_from_view(view)?),
            Kind::SubscriptionEnvelope => {
                Message::SubscriptionEnvelope(json::subscription_envelope_from_view(&nested(Kind::Subscription)?)?)
            }
            Kind::AssignmentEnvelope => {
                Message::AssignmentEnvelope(json::assignment_envelope_from_view(&nested(Kind::Assignment)?)?)
            }
        })
    }
}
