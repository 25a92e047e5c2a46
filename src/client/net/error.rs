//! What goes wrong talking to a broker, in words an operator reads: [`ConnectionError`], and the
//! Kafka error codes a broker answers with ([`ErrorCode`]).
//!
//! A socket error is sorted by its kind: a read or write that waited past the request's deadline
//! (`WouldBlock`, `TimedOut`) is a [`ConnectionError::Timeout`], a socket the broker closed
//! (`UnexpectedEof`, `ConnectionReset`, `ConnectionAborted`, `BrokenPipe`) is a
//! [`ConnectionError::Closed`], and the operating system's own text (`os error 11`) is never the
//! whole message.
//!
//! ```
//! use std::io::{Error, ErrorKind};
//! use std::time::Duration;
//! use kstreams_assignor::client::connection::ConnectionError;
//!
//! let e = ConnectionError::from_io("127.0.0.1:9092", "JoinGroup", Duration::from_secs(30), Error::from(ErrorKind::WouldBlock));
//! assert_eq!(e.to_string(), "timed out after 30 s waiting for the broker at 127.0.0.1:9092 (JoinGroup)");
//! let e = ConnectionError::from_io("b:9092", "Heartbeat", Duration::from_secs(30), Error::from(ErrorKind::UnexpectedEof));
//! assert_eq!(e.to_string(), "the broker at b:9092 closed the connection (Heartbeat)");
//! ```

use std::fmt;
use std::io;
use std::time::Duration;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::ApiKey;

/// The largest response frame accepted (Kafka's default `socket.request.max.bytes`, 100 MiB).
pub const MAX_FRAME_BYTES: usize = 100 * 1024 * 1024;

/// A Kafka error code, printed with Kafka's name (`REBALANCE_IN_PROGRESS (27)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// No error.
    pub const NONE: Self = Self(0);
    /// `COORDINATOR_LOAD_IN_PROGRESS`.
    pub const COORDINATOR_LOAD_IN_PROGRESS: Self = Self(14);
    /// `COORDINATOR_NOT_AVAILABLE`.
    pub const COORDINATOR_NOT_AVAILABLE: Self = Self(15);
    /// `NOT_COORDINATOR`.
    pub const NOT_COORDINATOR: Self = Self(16);
    /// `ILLEGAL_GENERATION`.
    pub const ILLEGAL_GENERATION: Self = Self(22);
    /// `UNKNOWN_MEMBER_ID`.
    pub const UNKNOWN_MEMBER_ID: Self = Self(25);
    /// `REBALANCE_IN_PROGRESS`.
    pub const REBALANCE_IN_PROGRESS: Self = Self(27);
    /// `UNSUPPORTED_VERSION`.
    pub const UNSUPPORTED_VERSION: Self = Self(35);
    /// `UNSUPPORTED_SASL_MECHANISM`.
    pub const UNSUPPORTED_SASL_MECHANISM: Self = Self(33);
    /// `TOPIC_ALREADY_EXISTS`.
    pub const TOPIC_ALREADY_EXISTS: Self = Self(36);
    /// `MEMBER_ID_REQUIRED`.
    pub const MEMBER_ID_REQUIRED: Self = Self(79);
    /// `FENCED_INSTANCE_ID`.
    pub const FENCED_INSTANCE_ID: Self = Self(82);

    /// Whether this is an error.
    pub fn is_err(self) -> bool {
        self.0 != 0
    }

    /// Kafka's name for the code (`UNKNOWN_SERVER_ERROR` style), or `None` for a code the
    /// `kafka-protocol` crate does not know.
    pub fn name(self) -> Option<String> {
        match ResponseError::try_from_code(self.0) {
            None => Some("NONE".into()),
            Some(ResponseError::Unknown(_)) => None,
            Some(e) => {
                let camel = format!("{e:?}");
                let mut out = String::with_capacity(camel.len() + 8);
                for (i, c) in camel.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_uppercase());
                }
                Some(out)
            }
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "error code {}", self.0),
        }
    }
}

/// What went wrong talking to a broker. Each variant names the broker (`host:port`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The TCP connection could not be opened.
    #[error("cannot connect to {broker}: {reason}")]
    Connect {
        /// The broker.
        broker: String,
        /// Why, in words (`connection refused`, `timed out after 30 s`).
        reason: String,
    },
    /// The request's deadline passed before the broker answered (or took what was written).
    #[error("timed out after {} waiting for the broker at {broker} ({during})", seconds(*after))]
    Timeout {
        /// The broker.
        broker: String,
        /// What was waited for: the API in flight, or the TLS handshake.
        during: String,
        /// The deadline the request had.
        after: Duration,
    },
    /// The broker closed the connection (or reset it) before the answer was whole.
    #[error("the broker at {broker} closed the connection ({during})")]
    Closed {
        /// The broker.
        broker: String,
        /// What was in flight.
        during: String,
    },
    /// Another read or write error.
    #[error("{during} with the broker at {broker}: {reason}")]
    Io {
        /// The broker.
        broker: String,
        /// What was in flight.
        during: String,
        /// The error, in words.
        reason: String,
    },
    /// The TLS handshake failed, or the broker's TLS records are not valid.
    #[error("TLS with the broker at {broker}: {reason}")]
    Tls {
        /// The broker.
        broker: String,
        /// Why (`the broker's certificate is not trusted (…)`).
        reason: String,
    },
    /// SASL authentication failed: the broker refused the credentials or the mechanism, or its
    /// answers do not follow the mechanism.
    #[error("SASL authentication failed at {broker} ({mechanism}): {reason}")]
    Sasl {
        /// The broker.
        broker: String,
        /// The mechanism (`SCRAM-SHA-512`).
        mechanism: String,
        /// The broker's message, or what was wrong with its answer.
        reason: String,
    },
    /// No bootstrap server could be reached: each one's failure, in order.
    #[error("no bootstrap server could be reached: {}", failures.iter().map(|(b, e)| format!("{b}: {e}")).collect::<Vec<_>>().join("; "))]
    Bootstrap {
        /// Each server and why it failed.
        failures: Vec<(String, ConnectionError)>,
    },
    /// The broker sent a frame size out of range.
    #[error("{broker} sent a {api:?} frame of {size} bytes (accepted: 4 to {MAX_FRAME_BYTES}){}", tls_hint(*size))]
    FrameSize {
        /// The broker.
        broker: String,
        /// The API in flight.
        api: ApiKey,
        /// The size announced.
        size: i64,
    },
    /// The response carries another correlation id than the request.
    #[error("{broker} answered {api:?} with correlation id {got}, expected {expected}")]
    Correlation {
        /// The broker.
        broker: String,
        /// The API in flight.
        api: ApiKey,
        /// The id expected.
        expected: i32,
        /// The id received.
        got: i32,
    },
    /// A response does not decode.
    #[error("{api:?} v{version} response from {broker} does not decode: {reason}")]
    Decode {
        /// The broker.
        broker: String,
        /// The API.
        api: ApiKey,
        /// The version it was read at.
        version: i16,
        /// The decoder's message.
        reason: String,
    },
    /// A request cannot be encoded at the negotiated version.
    #[error("{api:?} v{version} request to {broker} cannot be encoded: {reason}")]
    Encode {
        /// The broker.
        broker: String,
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
        /// The encoder's message.
        reason: String,
    },
    /// The broker and this client share no version of an API.
    #[error("{broker} supports {api:?} {broker_versions}, this client {client_versions}")]
    UnsupportedApi {
        /// The broker.
        broker: String,
        /// The API.
        api: ApiKey,
        /// The broker's range (`none` when it does not list the API).
        broker_versions: String,
        /// The range the `kafka-protocol` crate knows.
        client_versions: String,
    },
    /// The broker answered with an error code.
    #[error("{api:?} to {broker}: {code}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The broker.
        broker: String,
        /// The API.
        api: ApiKey,
        /// The error code.
        code: ErrorCode,
        /// The broker's message, if any.
        message: Option<String>,
    },
}

impl ConnectionError {
    /// The Kafka error code, for [`ConnectionError::Broker`].
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Broker { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the network failed (no connection, a timeout, a closed or broken socket), so that
    /// another try, perhaps at another broker, may succeed; `false` for answers that say
    /// something (a broker error code, a refused login, a certificate not trusted).
    pub fn is_network(&self) -> bool {
        match self {
            Self::Connect { .. } | Self::Timeout { .. } | Self::Closed { .. } | Self::Io { .. } => true,
            Self::Bootstrap { failures } => failures.iter().all(|(_, e)| e.is_network()),
            _ => false,
        }
    }

    /// Sorts a socket error of `during` (an API name, or `the TLS handshake`) at `broker`, whose
    /// deadline was `after`: see the [module docs](self).
    pub fn from_io(broker: &str, during: &str, after: Duration, e: io::Error) -> Self {
        let (broker, during) = (broker.to_owned(), during.to_owned());
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Self::Timeout { broker, during, after },
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => Self::Closed { broker, during },
            _ => Self::Io { broker, during, reason: plain_io(&e) },
        }
    }

    /// A connect error (`cannot connect to …: connection refused`).
    pub fn connect(broker: &str, after: Duration, e: &io::Error) -> Self {
        let reason = match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!("timed out after {}", seconds(after)),
            _ => plain_io(e),
        };
        Self::Connect { broker: broker.to_owned(), reason }
    }
}

/// An I/O error in words: the kind's name for the kinds an operator meets, the error's own text
/// after it.
pub fn plain_io(e: &io::Error) -> String {
    let words = match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused",
        io::ErrorKind::ConnectionReset => "connection reset",
        io::ErrorKind::HostUnreachable => "host unreachable",
        io::ErrorKind::NetworkUnreachable => "network unreachable",
        io::ErrorKind::AddrNotAvailable => "address not available",
        io::ErrorKind::PermissionDenied => "permission denied",
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out",
        _ => return e.to_string(),
    };
    match e.raw_os_error() {
        // The operating system's text says no more than the kind.
        Some(_) => words.to_owned(),
        None if e.get_ref().is_some() => format!("{words}: {e}"),
        None => words.to_owned(),
    }
}

/// `30 s`, `0.5 s`, `1.25 s`: to the nearest millisecond (a deadline computed from what is left
/// of a longer one reads as what was asked for).
pub fn seconds(d: Duration) -> String {
    let ms = (d.as_micros() + 500) / 1000;
    if ms % 1000 == 0 { format!("{} s", ms / 1000) } else { format!("{} s", ms as f64 / 1000.0) }
}

/// A frame "size" that is the start of a TLS record (content type 20 to 23, version 3.x) means
/// the broker speaks TLS to a plaintext client.
fn tls_hint(size: i64) -> &'static str {
    let bytes = (size as i32).to_be_bytes();
    if (20..=23).contains(&bytes[0]) && bytes[1] == 3 {
        ": the broker answered with TLS; set security.protocol=SSL or SASL_SSL in --command-config"
    } else {
        ""
    }
}

