//! Decode and encode errors, and the record of Java's leniencies.

use std::fmt;

/// Which message a decoder was reading when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageKind {
    /// Kafka Streams' `SubscriptionInfo` (member → leader).
    SubscriptionInfo,
    /// Kafka Streams' `AssignmentInfo` (leader → member).
    AssignmentInfo,
    /// The consumer protocol's `ConsumerProtocolSubscription` envelope.
    SubscriptionEnvelope,
    /// The consumer protocol's `ConsumerProtocolAssignment` envelope.
    AssignmentEnvelope,
    /// Kafka's `StreamsGroupDescribeRequest` (API key 89).
    StreamsGroupDescribeRequest,
    /// Kafka's `StreamsGroupDescribeResponse` (API key 89).
    StreamsGroupDescribeResponse,
    /// Kafka's `StreamsGroupHeartbeatRequest` (API key 88).
    StreamsGroupHeartbeatRequest,
    /// Kafka's `StreamsGroupHeartbeatResponse` (API key 88).
    StreamsGroupHeartbeatResponse,
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SubscriptionInfo => "SubscriptionInfo",
            Self::AssignmentInfo => "AssignmentInfo",
            Self::SubscriptionEnvelope => "ConsumerProtocolSubscription",
            Self::AssignmentEnvelope => "ConsumerProtocolAssignment",
            Self::StreamsGroupDescribeRequest => "StreamsGroupDescribeRequest",
            Self::StreamsGroupDescribeResponse => "StreamsGroupDescribeResponse",
            Self::StreamsGroupHeartbeatRequest => "StreamsGroupHeartbeatRequest",
            Self::StreamsGroupHeartbeatResponse => "StreamsGroupHeartbeatResponse",
        })
    }
}

/// Bytes that could not be decoded: which message, which field, at which byte offset, and why.
///
/// The offset counts from the first byte of the buffer handed to the decoder and points at the
/// start of the item that failed (a length prefix, a count, a fixed-width field).
///
/// ```
/// use kstreams_assignor::wire::{AssignmentInfo, DecodeErrorKind};
///
/// let err = AssignmentInfo::decode(&[0, 0, 0, 1, 0, 0]).unwrap_err();
/// assert_eq!(err.field, "activeTasks");
/// assert_eq!(err.offset, 4);
/// assert!(matches!(err.kind, DecodeErrorKind::Truncated { needed: 4, available: 2 }));
/// assert_eq!(
///     err.to_string(),
///     "cannot decode AssignmentInfo: field `activeTasks` at byte 4: needed 4 byte(s), only 2 left"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode {message}: field `{field}` at byte {offset}: {kind}")]
#[non_exhaustive]
pub struct DecodeError {
    /// The message being decoded.
    pub message: MessageKind,
    /// The field being read, named as in Kafka's schema or source.
    pub field: &'static str,
    /// Byte offset of the failing item from the start of the buffer.
    pub offset: usize,
    /// What was wrong.
    pub kind: DecodeErrorKind,
}

/// The reason a decode failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside a fixed-width field or a length-prefixed region.
    #[error("needed {needed} byte(s), only {available} left")]
    Truncated {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        available: usize,
    },
    /// A non-nullable length or count was negative (Java: "non-nullable field … was serialized as
    /// null", or `IllegalArgumentException` from a collection constructor).
    #[error("negative length or count {value} where a non-negative one is required")]
    NegativeLength {
        /// The value read.
        value: i32,
    },
    /// A count of elements that the remaining input cannot possibly hold. Rejected before any
    /// allocation.
    #[error("count of {count} element(s) of at least {min_element_size} byte(s) each exceeds the {available} byte(s) left")]
    CountExceedsInput {
        /// The count read.
        count: usize,
        /// The smallest encoding of one element.
        min_element_size: usize,
        /// Bytes left after the count.
        available: usize,
    },
    /// A version this codec (and Java) cannot read.
    #[error("unsupported version {version}: expected {min}..={max}")]
    UnsupportedVersion {
        /// The version read.
        version: i32,
        /// Lowest readable version.
        min: i32,
        /// Highest readable version.
        max: i32,
    },
    /// The used and latest-supported versions contradict each other (Java throws
    /// `IllegalArgumentException` after decoding).
    #[error("version {version} is inconsistent with latest supported version {latest_supported}")]
    InconsistentVersions {
        /// The used version.
        version: i32,
        /// The latest supported version (-1 = unknown).
        latest_supported: i32,
    },
    /// An unsigned varint longer than five bytes (Java: "Varint is too long").
    #[error("varint longer than 5 bytes")]
    MalformedVarint,
    /// A string length above what Kafka's generated messages accept (Java: "string field … had
    /// invalid length").
    #[error("string of {len} bytes; the limit is {max}")]
    StringTooLong {
        /// The length read.
        len: usize,
        /// The largest length accepted.
        max: usize,
    },
    /// Bytes after the end of a message that must use every byte (a broker response).
    #[error("{len} byte(s) after the end of the message")]
    TrailingBytes {
        /// How many.
        len: usize,
    },
    /// Bytes that Java's `DataInputStream.readUTF` rejects.
    #[error("malformed modified UTF-8 at byte {at} of the string: {reason}")]
    MalformedModifiedUtf8 {
        /// Offset inside the string's bytes.
        at: usize,
        /// What was wrong.
        reason: &'static str,
    },
}

/// A value that cannot be written at the requested version, or that Java would refuse to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The version is outside what the message can be written at.
    #[error("{message} cannot be written at version {version}: expected {min}..={max}")]
    UnsupportedVersion {
        /// The message.
        message: MessageKind,
        /// The requested version.
        version: i32,
        /// Lowest writable version.
        min: i32,
        /// Highest writable version.
        max: i32,
    },
    /// A field holds a value the version cannot carry. Java drops some of these silently; this
    /// codec refuses rather than lose data.
    #[error("{message} field `{field}` is not carried by version {version} (since v{since})")]
    FieldNotInVersion {
        /// The message.
        message: MessageKind,
        /// The field.
        field: &'static str,
        /// The requested version.
        version: i32,
        /// The first version that carries the field.
        since: i32,
    },
    /// A task of a named topology at a version before 10 (Java: `TaskAssignmentException`).
    #[error("{message}: named topologies are not compatible with version {version} (since v10)")]
    NamedTopologyNotSupported {
        /// The message.
        message: MessageKind,
        /// The requested version.
        version: i32,
    },
    /// A string longer than its length prefix can express (Java: `UTFDataFormatException` for
    /// modified UTF-8 over 65,535 bytes; "field is too long" for strings over 32,767 bytes).
    #[error("{message} field `{field}` is {len} bytes long; the limit is {max}")]
    StringTooLong {
        /// The message.
        message: MessageKind,
        /// The field.
        field: &'static str,
        /// Encoded length in bytes.
        len: usize,
        /// Maximum encoded length.
        max: usize,
    },
    /// A collection with more elements than an `i32` count can express.
    #[error("{message} field `{field}` has {len} elements; the limit is {}", i32::MAX)]
    TooManyElements {
        /// The message.
        message: MessageKind,
        /// The field.
        field: &'static str,
        /// Number of elements.
        len: usize,
    },
}

/// Input that Java accepts although it is not what Java writes. The decoders accept it as Java
/// does and report it here, so callers can see exactly where the bytes were non-canonical.
///
/// As JSON (serde), an object with the variant in `type` and its fields:
/// `{"type": "trailingBytes", "offset": 8, "len": 4}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Lenience {
    /// Bytes after the last field; Java ignores them. They are kept in the message so that
    /// re-encoding is byte-exact.
    TrailingBytes {
        /// Offset of the first trailing byte.
        offset: usize,
        /// How many there are.
        len: usize,
    },
    /// A version newer than this codec knows: only the version fields were read, as Java does.
    FutureVersion {
        /// The version read.
        version: i32,
    },
    /// Modified UTF-8 in a form Java never writes (a raw `00` byte, or an overlong sequence) that
    /// Java's reader accepts. The raw bytes are kept.
    NonCanonicalModifiedUtf8 {
        /// The field.
        field: &'static str,
        /// Offset of the string's length prefix.
        offset: usize,
    },
    /// UTF-8 that is not valid; Java decodes it with U+FFFD replacement. The raw bytes are kept.
    InvalidUtf8 {
        /// The field.
        field: &'static str,
        /// Offset of the string's length prefix.
        offset: usize,
    },
    /// Invalid UTF-8 in an envelope string or a `StreamsGroupDescribe` string; Java decodes it
    /// with U+FFFD replacement, and so does this codec, so re-encoding writes the replaced text.
    ReplacedInvalidUtf8 {
        /// The field.
        field: &'static str,
        /// Offset of the string's length prefix.
        offset: usize,
    },
    /// A negative length or count that Java treats as null or empty. Re-encoding writes the
    /// canonical form (`-1` for null, `0` for empty), so this input does not round-trip byte for
    /// byte.
    NegativeAsEmpty {
        /// The field.
        field: &'static str,
        /// Offset of the length or count.
        offset: usize,
        /// The value read.
        value: i32,
    },
    /// A named-topology name of length zero, which Java reads as "no named topology" and never
    /// writes. The empty name is kept, so re-encoding is byte-exact.
    EmptyNamedTopology {
        /// Offset of the length.
        offset: usize,
    },
    /// A named-topology name in `AssignmentInfo` whose UTF-16 units are not valid Unicode (an
    /// unpaired surrogate); it was replaced with U+FFFD.
    InvalidUtf16 {
        /// Offset of the character count.
        offset: usize,
    },
    /// A v5+ host-map partition whose topic index is not in the dictionary; Java reads it as a
    /// partition of topic `null`.
    UnknownTopicIndex {
        /// Offset of the index.
        offset: usize,
        /// The index read.
        index: i32,
    },
    /// An envelope version above the highest known, read as the highest known (Java's rule).
    EnvelopeVersionAboveKnown {
        /// The version read.
        version: i16,
    },
}

impl Lenience {
    /// Whether re-encoding the decoded message reproduces the input bytes despite this lenience.
    pub fn round_trips(&self) -> bool {
        !matches!(
            self,
            Self::NegativeAsEmpty { .. } | Self::InvalidUtf16 { .. } | Self::ReplacedInvalidUtf8 { .. }
        )
    }
}
