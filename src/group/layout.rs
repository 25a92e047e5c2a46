//! The layout of every response this crate reads from a broker, checked before the
//! `kafka-protocol` crate decodes it.
//!
//! `kafka-protocol` 0.18.0 reserves an array's capacity from the count it reads
//! (`Vec::with_capacity(n)`), before it reads any element, so a four-byte count could make it ask
//! for gigabytes. [`check`] walks a response body the way that crate's decoders do — the same
//! fields at the same versions, compact forms and tagged fields from the message's first flexible
//! version, known tagged fields decoded in place — and refuses a count that the bytes left cannot
//! hold before anything is allocated. A body that passes is one whose every array is backed by
//! its elements, so what the decoder then reserves is proportional to the frame's size.
//!
//! The layouts follow Kafka's message schemas (`clients/src/main/resources/common/message/`) at
//! the versions `kafka-protocol` 0.18.0 decodes; the tests check them against that crate's
//! encoder at every version, on generated messages.
//!
//! ```
//! use kstreams_assignor::group::layout::{self, LayoutErrorKind};
//!
//! // Heartbeat v4: correlation id 5, no header tags, throttle 0, error 27, no tags.
//! let body = [0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 27, 0];
//! layout::check(&layout::HEARTBEAT, 1, 4, &body).unwrap();
//!
//! // Metadata v12 whose broker array claims 2^32 − 2 entries in a 14-byte body.
//! let body = [0, 0, 0, 5, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
//! let err = layout::check(&layout::METADATA, 1, 12, &body).unwrap_err();
//! assert_eq!(err.path, "MetadataResponse.Brokers");
//! assert_eq!(err.offset, 9);
//! assert_eq!(err.kind, LayoutErrorKind::TooManyElements { count: 4_294_967_294, remaining: 0 });
//! ```

use std::fmt::Write as _;

/// A response message: its name, the versions it is checked at, and its first flexible version.
#[derive(Debug)]
pub struct Message {
    body: &'static Layout,
    min_version: i16,
    max_version: i16,
    flexible: i16,
}

impl Message {
    /// Kafka's name for the message (`MetadataResponse`).
    pub fn name(&self) -> &'static str {
        self.body.name
    }

    /// The versions [`check`] knows, the ones the `kafka-protocol` crate decodes.
    pub fn versions(&self) -> std::ops::RangeInclusive<i16> {
        self.min_version..=self.max_version
    }
}

/// Why a response does not have its message's layout. The offset counts from the first byte of
/// the body (the response header's correlation id) and points at the item that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} at byte {offset}: {kind}")]
#[non_exhaustive]
pub struct LayoutError {
    /// The field, as a path of Kafka's schema names with array indices
    /// (`MetadataResponse.Topics[2].Partitions`).
    pub path: String,
    /// Byte offset of the failing item.
    pub offset: usize,
    /// What was wrong.
    pub kind: LayoutErrorKind,
}

/// What was wrong with a response's layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutErrorKind {
    /// The body ends inside the item.
    #[error("needed {needed} byte(s), only {available} left")]
    Truncated {
        /// Bytes the item needs.
        needed: u64,
        /// Bytes left.
        available: usize,
    },
    /// An array count that the bytes left cannot hold.
    #[error("{count} element(s) claimed, only {remaining} byte(s) left")]
    TooManyElements {
        /// The count read.
        count: u64,
        /// Bytes left after the count.
        remaining: usize,
    },
    /// A length or count below −1.
    #[error("negative length {0}")]
    NegativeLength(i64),
    /// A string that is not UTF-8.
    #[error("not UTF-8")]
    NotUtf8,
    /// A known tagged field whose value does not fill the size its header gives.
    #[error("tagged field {tag} declares {declared} byte(s), its value has {actual}")]
    TaggedFieldSize {
        /// The tag.
        tag: u32,
        /// The size in the field's header.
        declared: u32,
        /// The bytes its value took.
        actual: usize,
    },
    /// Bytes after the message.
    #[error("{0} byte(s) after the message")]
    Trailing(usize),
    /// A version outside [`Message::versions`].
    #[error("version {version} is not one of {min}..={max}")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The lowest known.
        min: i16,
        /// The highest known.
        max: i16,
    },
}

/// Checks `body` — a response frame without its size: the header at `header_version` (0, or 1
/// with tagged fields), then `message` at `version` — against the message's layout. Every byte
/// must be used.
///
/// Complexity: O(body length); it allocates only the path (as deep as the message nests) and the
/// error.
pub fn check(message: &Message, header_version: i16, version: i16, body: &[u8]) -> Result<(), LayoutError> {
    let mut walk = Walk { buf: body, pos: 0, path: vec![(RESPONSE_HEADER.name, None)] };
    walk.structure(&RESPONSE_HEADER, header_version, 1)?;
    walk.path[0].0 = message.name();
    if !message.versions().contains(&version) {
        let kind = LayoutErrorKind::UnsupportedVersion { version, min: message.min_version, max: message.max_version };
        return Err(walk.error(walk.pos, kind));
    }
    walk.structure(message.body, version, message.flexible)?;
    match body.len() - walk.pos {
        0 => Ok(()),
        n => Err(walk.error(walk.pos, LayoutErrorKind::Trailing(n))),
    }
}

/// A struct: its fields in order, then (at flexible versions) its tagged fields, of which some
/// are known.
#[derive(Debug)]
struct Layout {
    name: &'static str,
    fields: &'static [Field],
    tags: &'static [Tag],
}

/// A field, present at `min..=max`.
#[derive(Debug)]
struct Field {
    name: &'static str,
    min: i16,
    max: i16,
    ty: Ty,
}

/// A known tagged field.
#[derive(Debug)]
struct Tag {
    tag: u32,
    name: &'static str,
    ty: Ty,
}

/// A field's type. Strings, bytes and arrays take their compact forms at flexible versions;
/// nulls are accepted wherever the encoding can say null (the decoder refuses them where the
/// schema does not allow one, after this check, with nothing allocated from a count).
#[derive(Debug, Clone, Copy)]
enum Ty {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Uuid,
    Str,
    Bytes,
    /// An array of int32.
    I32s,
    /// An array of structs.
    Structs(&'static Layout),
}

use Ty::*;

const fn f(name: &'static str, min: i16, max: i16, ty: Ty) -> Field {
    Field { name, min, max, ty }
}

const fn tag(tag: u32, name: &'static str, ty: Ty) -> Tag {
    Tag { tag, name, ty }
}

struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The message's name, then field names with the index of the array element walked.
    path: Vec<(&'static str, Option<u64>)>,
}

impl Walk<'_> {
    fn error(&self, offset: usize, kind: LayoutErrorKind) -> LayoutError {
        let mut path = String::new();
        for (i, (name, index)) in self.path.iter().enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push_str(name);
            if let Some(index) = index {
                let _ = write!(path, "[{index}]");
            }
        }
        LayoutError { path, offset, kind }
    }

    fn take(&mut self, n: u64) -> Result<&[u8], LayoutError> {
        let available = self.buf.len() - self.pos;
        match usize::try_from(n) {
            Ok(n) if n <= available => {
                self.pos += n;
                Ok(&self.buf[self.pos - n..self.pos])
            }
            _ => Err(self.error(self.pos, LayoutErrorKind::Truncated { needed: n, available })),
        }
    }

    fn skip(&mut self, n: u64) -> Result<(), LayoutError> {
        self.take(n).map(|_| ())
    }

    /// An unsigned varint as `kafka-protocol` reads it: up to five bytes, the fifth one's
    /// continuation bit ignored.
    fn uvarint(&mut self) -> Result<u32, LayoutError> {
        let mut value = 0u32;
        for i in 0..5 {
            let b = u32::from(self.take(1)?[0]);
            value |= (b & 0x7f) << (i * 7);
            if b < 0x80 {
                break;
            }
        }
        Ok(value)
    }

    /// A length or count, `None` for null: a varint of length + 1 where `0` is null (`compact`),
    /// else an int16 (`short`) or int32 where `-1` is null.
    fn length(&mut self, compact: bool, short: bool) -> Result<Option<u64>, LayoutError> {
        let at = self.pos;
        if compact {
            return Ok(self.uvarint()?.checked_sub(1).map(u64::from));
        }
        let n = if short {
            i64::from(i16::from_be_bytes(self.take(2)?.try_into().expect("two bytes")))
        } else {
            i64::from(i32::from_be_bytes(self.take(4)?.try_into().expect("four bytes")))
        };
        match n {
            -1 => Ok(None),
            n if n < -1 => Err(self.error(at, LayoutErrorKind::NegativeLength(n))),
            n => Ok(Some(n as u64)),
        }
    }

    fn structure(&mut self, layout: &Layout, version: i16, flexible: i16) -> Result<(), LayoutError> {
        for field in layout.fields.iter().filter(|f| (f.min..=f.max).contains(&version)) {
            self.path.push((field.name, None));
            self.value(field.ty, version, flexible)?;
            self.path.pop();
        }
        if version < flexible {
            return Ok(());
        }
        for _ in 0..self.uvarint()? {
            let tag = self.uvarint()?;
            let size = self.uvarint()?;
            let Some(known) = layout.tags.iter().find(|t| t.tag == tag) else {
                self.skip(u64::from(size))?;
                continue;
            };
            // Decoded in place, as the decoder does; the size must match.
            let start = self.pos;
            self.path.push((known.name, None));
            self.value(known.ty, version, flexible)?;
            self.path.pop();
            if self.pos - start != size as usize {
                return Err(self.error(start, LayoutErrorKind::TaggedFieldSize { tag, declared: size, actual: self.pos - start }));
            }
        }
        Ok(())
    }

    fn value(&mut self, ty: Ty, version: i16, flexible: i16) -> Result<(), LayoutError> {
        let compact = version >= flexible;
        match ty {
            Bool | I8 => self.skip(1),
            I16 => self.skip(2),
            I32 => self.skip(4),
            I64 => self.skip(8),
            Uuid => self.skip(16),
            Str => {
                let Some(len) = self.length(compact, true)? else { return Ok(()) };
                let at = self.pos;
                match std::str::from_utf8(self.take(len)?) {
                    Ok(_) => Ok(()),
                    Err(_) => Err(self.error(at, LayoutErrorKind::NotUtf8)),
                }
            }
            Bytes => match self.length(compact, false)? {
                Some(len) => self.skip(len),
                None => Ok(()),
            },
            I32s => match self.count(compact, 4)? {
                // The count was checked against the bytes left: they are all there.
                Some(count) => self.skip(count * 4),
                None => Ok(()),
            },
            Structs(layout) => {
                let Some(count) = self.count(compact, 1)? else { return Ok(()) };
                for i in 0..count {
                    self.path.last_mut().expect("inside a field").1 = Some(i);
                    self.structure(layout, version, flexible)?;
                }
                self.path.last_mut().expect("inside a field").1 = None;
                Ok(())
            }
        }
    }

    /// An array's count, `None` for null, refused when the bytes left cannot hold that many
    /// elements of at least `least` bytes each (a struct takes one at least: its tag count, if
    /// nothing else).
    fn count(&mut self, compact: bool, least: u64) -> Result<Option<u64>, LayoutError> {
        let at = self.pos;
        let Some(count) = self.length(compact, false)? else { return Ok(None) };
        let remaining = self.buf.len() - self.pos;
        if count.saturating_mul(least) > remaining as u64 {
            return Err(self.error(at, LayoutErrorKind::TooManyElements { count, remaining }));
        }
        Ok(Some(count))
    }
}

// The messages, field by field as Kafka's schemas give them, at the versions `kafka-protocol`
// 0.18.0 decodes.

/// `ApiVersionsResponse` (always read with header version 0).
pub const API_VERSIONS: Message = Message { body: &API_VERSIONS_RESPONSE, min_version: 0, max_version: 4, flexible: 3 };
/// `FindCoordinatorResponse`.
pub const FIND_COORDINATOR: Message = Message { body: &FIND_COORDINATOR_RESPONSE, min_version: 0, max_version: 6, flexible: 3 };
/// `JoinGroupResponse`.
pub const JOIN_GROUP: Message = Message { body: &JOIN_GROUP_RESPONSE, min_version: 0, max_version: 9, flexible: 6 };
/// `SyncGroupResponse`.
pub const SYNC_GROUP: Message = Message { body: &SYNC_GROUP_RESPONSE, min_version: 0, max_version: 5, flexible: 4 };
/// `HeartbeatResponse`.
pub const HEARTBEAT: Message = Message { body: &HEARTBEAT_RESPONSE, min_version: 0, max_version: 4, flexible: 4 };
/// `LeaveGroupResponse`.
pub const LEAVE_GROUP: Message = Message { body: &LEAVE_GROUP_RESPONSE, min_version: 0, max_version: 5, flexible: 4 };
/// `MetadataResponse`.
pub const METADATA: Message = Message { body: &METADATA_RESPONSE, min_version: 0, max_version: 13, flexible: 9 };
/// `CreateTopicsResponse`.
pub const CREATE_TOPICS: Message = Message { body: &CREATE_TOPICS_RESPONSE, min_version: 2, max_version: 7, flexible: 5 };
/// `ListOffsetsResponse`.
pub const LIST_OFFSETS: Message = Message { body: &LIST_OFFSETS_RESPONSE, min_version: 1, max_version: 10, flexible: 6 };
/// `DescribeGroupsResponse`.
pub const DESCRIBE_GROUPS: Message = Message { body: &DESCRIBE_GROUPS_RESPONSE, min_version: 0, max_version: 6, flexible: 5 };
/// `OffsetFetchResponse`.
pub const OFFSET_FETCH: Message = Message { body: &OFFSET_FETCH_RESPONSE, min_version: 1, max_version: 10, flexible: 6 };

const RESPONSE_HEADER: Layout = Layout {
    name: "ResponseHeader",
    fields: &[
        f("CorrelationId", 0, 1, I32),
    ],
    tags: &[],
};

const API_VERSIONS_RESPONSE: Layout = Layout {
    name: "ApiVersionsResponse",
    fields: &[
        f("ErrorCode", 0, 4, I16),
        f("ApiKeys", 0, 4, Structs(&API_VERSION)),
        f("ThrottleTimeMs", 1, 4, I32),
    ],
    tags: &[
        tag(0, "SupportedFeatures", Structs(&SUPPORTED_FEATURE_KEY)),
        tag(1, "FinalizedFeaturesEpoch", I64),
        tag(2, "FinalizedFeatures", Structs(&FINALIZED_FEATURE_KEY)),
        tag(3, "ZkMigrationReady", Bool),
    ],
};

const API_VERSION: Layout = Layout {
    name: "ApiVersion",
    fields: &[
        f("ApiKey", 0, 4, I16),
        f("MinVersion", 0, 4, I16),
        f("MaxVersion", 0, 4, I16),
    ],
    tags: &[],
};

const SUPPORTED_FEATURE_KEY: Layout = Layout {
    name: "SupportedFeatureKey",
    fields: &[
        f("Name", 3, 4, Str),
        f("MinVersion", 3, 4, I16),
        f("MaxVersion", 3, 4, I16),
    ],
    tags: &[],
};

const FINALIZED_FEATURE_KEY: Layout = Layout {
    name: "FinalizedFeatureKey",
    fields: &[
        f("Name", 3, 4, Str),
        f("MaxVersionLevel", 3, 4, I16),
        f("MinVersionLevel", 3, 4, I16),
    ],
    tags: &[],
};

const FIND_COORDINATOR_RESPONSE: Layout = Layout {
    name: "FindCoordinatorResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 6, I32),
        f("ErrorCode", 0, 3, I16),
        f("ErrorMessage", 1, 3, Str),
        f("NodeId", 0, 3, I32),
        f("Host", 0, 3, Str),
        f("Port", 0, 3, I32),
        f("Coordinators", 4, 6, Structs(&COORDINATOR)),
    ],
    tags: &[],
};

const COORDINATOR: Layout = Layout {
    name: "Coordinator",
    fields: &[
        f("Key", 4, 6, Str),
        f("NodeId", 4, 6, I32),
        f("Host", 4, 6, Str),
        f("Port", 4, 6, I32),
        f("ErrorCode", 4, 6, I16),
        f("ErrorMessage", 4, 6, Str),
    ],
    tags: &[],
};

const JOIN_GROUP_RESPONSE: Layout = Layout {
    name: "JoinGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 9, I32),
        f("ErrorCode", 0, 9, I16),
        f("GenerationId", 0, 9, I32),
        f("ProtocolType", 7, 9, Str),
        f("ProtocolName", 0, 9, Str),
        f("Leader", 0, 9, Str),
        f("SkipAssignment", 9, 9, Bool),
        f("MemberId", 0, 9, Str),
        f("Members", 0, 9, Structs(&JOIN_GROUP_RESPONSE_MEMBER)),
    ],
    tags: &[],
};

const JOIN_GROUP_RESPONSE_MEMBER: Layout = Layout {
    name: "JoinGroupResponseMember",
    fields: &[
        f("MemberId", 0, 9, Str),
        f("GroupInstanceId", 5, 9, Str),
        f("Metadata", 0, 9, Bytes),
    ],
    tags: &[],
};

const SYNC_GROUP_RESPONSE: Layout = Layout {
    name: "SyncGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 5, I32),
        f("ErrorCode", 0, 5, I16),
        f("ProtocolType", 5, 5, Str),
        f("ProtocolName", 5, 5, Str),
        f("Assignment", 0, 5, Bytes),
    ],
    tags: &[],
};

const HEARTBEAT_RESPONSE: Layout = Layout {
    name: "HeartbeatResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 4, I32),
        f("ErrorCode", 0, 4, I16),
    ],
    tags: &[],
};

const LEAVE_GROUP_RESPONSE: Layout = Layout {
    name: "LeaveGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 5, I32),
        f("ErrorCode", 0, 5, I16),
        f("Members", 3, 5, Structs(&MEMBER_RESPONSE)),
    ],
    tags: &[],
};

const MEMBER_RESPONSE: Layout = Layout {
    name: "MemberResponse",
    fields: &[
        f("MemberId", 3, 5, Str),
        f("GroupInstanceId", 3, 5, Str),
        f("ErrorCode", 3, 5, I16),
    ],
    tags: &[],
};

const METADATA_RESPONSE: Layout = Layout {
    name: "MetadataResponse",
    fields: &[
        f("ThrottleTimeMs", 3, 13, I32),
        f("Brokers", 0, 13, Structs(&METADATA_RESPONSE_BROKER)),
        f("ClusterId", 2, 13, Str),
        f("ControllerId", 1, 13, I32),
        f("Topics", 0, 13, Structs(&METADATA_RESPONSE_TOPIC)),
        f("ClusterAuthorizedOperations", 8, 10, I32),
        f("ErrorCode", 13, 13, I16),
    ],
    tags: &[],
};

const METADATA_RESPONSE_BROKER: Layout = Layout {
    name: "MetadataResponseBroker",
    fields: &[
        f("NodeId", 0, 13, I32),
        f("Host", 0, 13, Str),
        f("Port", 0, 13, I32),
        f("Rack", 1, 13, Str),
    ],
    tags: &[],
};

const METADATA_RESPONSE_TOPIC: Layout = Layout {
    name: "MetadataResponseTopic",
    fields: &[
        f("ErrorCode", 0, 13, I16),
        f("Name", 0, 13, Str),
        f("TopicId", 10, 13, Uuid),
        f("IsInternal", 1, 13, Bool),
        f("Partitions", 0, 13, Structs(&METADATA_RESPONSE_PARTITION)),
        f("TopicAuthorizedOperations", 8, 13, I32),
    ],
    tags: &[],
};

const METADATA_RESPONSE_PARTITION: Layout = Layout {
    name: "MetadataResponsePartition",
    fields: &[
        f("ErrorCode", 0, 13, I16),
        f("PartitionIndex", 0, 13, I32),
        f("LeaderId", 0, 13, I32),
        f("LeaderEpoch", 7, 13, I32),
        f("ReplicaNodes", 0, 13, I32s),
        f("IsrNodes", 0, 13, I32s),
        f("OfflineReplicas", 5, 13, I32s),
    ],
    tags: &[],
};

const CREATE_TOPICS_RESPONSE: Layout = Layout {
    name: "CreateTopicsResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 7, I32),
        f("Topics", 2, 7, Structs(&CREATABLE_TOPIC_RESULT)),
    ],
    tags: &[],
};

const CREATABLE_TOPIC_RESULT: Layout = Layout {
    name: "CreatableTopicResult",
    fields: &[
        f("Name", 2, 7, Str),
        f("TopicId", 7, 7, Uuid),
        f("ErrorCode", 2, 7, I16),
        f("ErrorMessage", 2, 7, Str),
        f("NumPartitions", 5, 7, I32),
        f("ReplicationFactor", 5, 7, I16),
        f("Configs", 5, 7, Structs(&CREATABLE_TOPIC_CONFIGS)),
    ],
    tags: &[
        tag(0, "TopicConfigErrorCode", I16),
    ],
};

const CREATABLE_TOPIC_CONFIGS: Layout = Layout {
    name: "CreatableTopicConfigs",
    fields: &[
        f("Name", 5, 7, Str),
        f("Value", 5, 7, Str),
        f("ReadOnly", 5, 7, Bool),
        f("ConfigSource", 5, 7, I8),
        f("IsSensitive", 5, 7, Bool),
    ],
    tags: &[],
};

const LIST_OFFSETS_RESPONSE: Layout = Layout {
    name: "ListOffsetsResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 10, I32),
        f("Topics", 1, 10, Structs(&LIST_OFFSETS_TOPIC_RESPONSE)),
    ],
    tags: &[],
};

const LIST_OFFSETS_TOPIC_RESPONSE: Layout = Layout {
    name: "ListOffsetsTopicResponse",
    fields: &[
        f("Name", 1, 10, Str),
        f("Partitions", 1, 10, Structs(&LIST_OFFSETS_PARTITION_RESPONSE)),
    ],
    tags: &[],
};

const LIST_OFFSETS_PARTITION_RESPONSE: Layout = Layout {
    name: "ListOffsetsPartitionResponse",
    fields: &[
        f("PartitionIndex", 1, 10, I32),
        f("ErrorCode", 1, 10, I16),
        f("Timestamp", 1, 10, I64),
        f("Offset", 1, 10, I64),
        f("LeaderEpoch", 4, 10, I32),
    ],
    tags: &[],
};

const DESCRIBE_GROUPS_RESPONSE: Layout = Layout {
    name: "DescribeGroupsResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 6, I32),
        f("Groups", 0, 6, Structs(&DESCRIBED_GROUP)),
    ],
    tags: &[],
};

const DESCRIBED_GROUP: Layout = Layout {
    name: "DescribedGroup",
    fields: &[
        f("ErrorCode", 0, 6, I16),
        f("ErrorMessage", 6, 6, Str),
        f("GroupId", 0, 6, Str),
        f("GroupState", 0, 6, Str),
        f("ProtocolType", 0, 6, Str),
        f("ProtocolData", 0, 6, Str),
        f("Members", 0, 6, Structs(&DESCRIBED_GROUP_MEMBER)),
        f("AuthorizedOperations", 3, 6, I32),
    ],
    tags: &[],
};

const DESCRIBED_GROUP_MEMBER: Layout = Layout {
    name: "DescribedGroupMember",
    fields: &[
        f("MemberId", 0, 6, Str),
        f("GroupInstanceId", 4, 6, Str),
        f("ClientId", 0, 6, Str),
        f("ClientHost", 0, 6, Str),
        f("MemberMetadata", 0, 6, Bytes),
        f("MemberAssignment", 0, 6, Bytes),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE: Layout = Layout {
    name: "OffsetFetchResponse",
    fields: &[
        f("ThrottleTimeMs", 3, 10, I32),
        f("Topics", 1, 7, Structs(&OFFSET_FETCH_RESPONSE_TOPIC)),
        f("ErrorCode", 2, 7, I16),
        f("Groups", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_GROUP)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_TOPIC: Layout = Layout {
    name: "OffsetFetchResponseTopic",
    fields: &[
        f("Name", 1, 7, Str),
        f("Partitions", 1, 7, Structs(&OFFSET_FETCH_RESPONSE_PARTITION)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_PARTITION: Layout = Layout {
    name: "OffsetFetchResponsePartition",
    fields: &[
        f("PartitionIndex", 1, 7, I32),
        f("CommittedOffset", 1, 7, I64),
        f("CommittedLeaderEpoch", 5, 7, I32),
        f("Metadata", 1, 7, Str),
        f("ErrorCode", 1, 7, I16),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_GROUP: Layout = Layout {
    name: "OffsetFetchResponseGroup",
    fields: &[
        f("GroupId", 8, 10, Str),
        f("Topics", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_TOPICS)),
        f("ErrorCode", 8, 10, I16),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_TOPICS: Layout = Layout {
    name: "OffsetFetchResponseTopics",
    fields: &[
        f("Name", 8, 9, Str),
        f("TopicId", 10, 10, Uuid),
        f("Partitions", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_PARTITIONS)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_PARTITIONS: Layout = Layout {
    name: "OffsetFetchResponsePartitions",
    fields: &[
        f("PartitionIndex", 8, 10, I32),
        f("CommittedOffset", 8, 10, I64),
        f("CommittedLeaderEpoch", 8, 10, I32),
        f("Metadata", 8, 10, Str),
        f("ErrorCode", 8, 10, I16),
    ],
    tags: &[],
};

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};
    use kafka_protocol::messages::{self, ResponseHeader};
    use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};

    use super::*;
    use crate::group::connection::{Call, decode_response};

    /// SplitMix64: enough randomness for generated messages, reproducible by seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn uvarint(out: &mut Vec<u8>, mut v: u32) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A random message of `layout` at `version`, written independently of `kafka-protocol`:
    /// arrays of up to two elements, short ASCII strings, some known tagged fields (with values
    /// the crate does not leave out as defaults) and an unknown one now and then, so that the
    /// crate's decoder must read it whole and its encoder must give the same bytes back.
    fn generate(rng: &mut Rng, layout: &Layout, version: i16, flexible: i16, out: &mut Vec<u8>) {
        for field in layout.fields.iter().filter(|f| (f.min..=f.max).contains(&version)) {
            value(rng, field.ty, version, flexible, false, out);
        }
        if version < flexible {
            return;
        }
        let known: Vec<&Tag> = layout.tags.iter().filter(|_| rng.below(2) == 0).collect();
        let unknown = rng.below(3) == 0;
        uvarint(out, known.len() as u32 + u32::from(unknown));
        for t in known {
            let mut v = Vec::new();
            value(rng, t.ty, version, flexible, true, &mut v);
            uvarint(out, t.tag);
            uvarint(out, v.len() as u32);
            out.extend(v);
        }
        if unknown {
            uvarint(out, 100 + rng.below(50) as u32);
            let n = rng.below(4) as usize;
            uvarint(out, n as u32);
            out.extend((0..n).map(|_| rng.next() as u8));
        }
    }

    fn value(rng: &mut Rng, ty: Ty, version: i16, flexible: i16, non_default: bool, out: &mut Vec<u8>) {
        let compact = version >= flexible;
        let int = |rng: &mut Rng, width: usize, out: &mut Vec<u8>| {
            let v = if non_default { 1 + rng.below(1000) } else { rng.next() };
            out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
        };
        let length = |n: usize, short: bool, out: &mut Vec<u8>| match (compact, short) {
            (true, _) => uvarint(out, n as u32 + 1),
            (false, true) => out.extend_from_slice(&(n as i16).to_be_bytes()),
            (false, false) => out.extend_from_slice(&(n as i32).to_be_bytes()),
        };
        match ty {
            Bool => out.push(u8::from(non_default || rng.below(2) == 1)),
            I8 => int(rng, 1, out),
            I16 => int(rng, 2, out),
            I32 => int(rng, 4, out),
            I64 => int(rng, 8, out),
            Uuid => (0..16).for_each(|_| out.push(rng.next() as u8)),
            Str => {
                let n = rng.below(5) as usize + usize::from(non_default);
                length(n, true, out);
                out.extend((0..n).map(|_| b'a' + rng.below(26) as u8));
            }
            Bytes => {
                let n = rng.below(5) as usize;
                length(n, false, out);
                out.extend((0..n).map(|_| rng.next() as u8));
            }
            I32s | Structs(_) => {
                let n = rng.below(3) as usize + usize::from(non_default);
                length(n, false, out);
                for _ in 0..n {
                    match ty {
                        Structs(layout) => generate(rng, layout, version, flexible, out),
                        _ => int(rng, 4, out),
                    }
                }
            }
        }
    }

    fn encode<M: Encodable>(m: &M, version: i16) -> Vec<u8> {
        let mut buf = BytesMut::new();
        m.encode(&mut buf, version).unwrap();
        buf.to_vec()
    }

    fn framed<R: Call>(version: i16, body: &[u8]) -> (i16, Vec<u8>) {
        let hv = R::Response::header_version(version);
        let mut out = encode(&ResponseHeader::default().with_correlation_id(7), hv);
        out.extend_from_slice(body);
        (hv, out)
    }

    /// The layout's versions are the crate's, and at every one: the crate's default response
    /// passes; generated messages decode whole with the crate, re-encode to the same bytes, pass
    /// the check, and no strict prefix does.
    fn agrees_with_kafka_protocol<R: Call>(cases: u64)
    where
        R::Response: Encodable + Default,
    {
        let message = R::LAYOUT;
        let known = <R::Response as kafka_protocol::protocol::Message>::VERSIONS;
        assert_eq!(message.versions(), known.min..=known.max, "{}", message.name());
        for version in message.versions() {
            let (hv, bytes) = framed::<R>(version, &encode(&R::Response::default(), version));
            check(message, hv, version, &bytes).unwrap_or_else(|e| panic!("default {} v{version}: {e}", message.name()));
            for seed in 0..cases {
                let mut rng = Rng(seed);
                let mut body = Vec::new();
                generate(&mut rng, message.body, version, message.flexible, &mut body);
                let mut buf = Bytes::from(body.clone());
                let decoded = R::Response::decode(&mut buf, version)
                    .unwrap_or_else(|e| panic!("{} v{version} seed {seed}: the crate cannot decode {body:?}: {e}", message.name()));
                assert!(buf.is_empty(), "{} v{version} seed {seed}: the crate left {} byte(s)", message.name(), buf.len());
                assert_eq!(encode(&decoded, version), body, "{} v{version} seed {seed}: re-encoded differently", message.name());
                let (hv, bytes) = framed::<R>(version, &body);
                check(message, hv, version, &bytes).unwrap_or_else(|e| panic!("{} v{version} seed {seed}: {e}", message.name()));
                for n in 0..bytes.len() {
                    assert!(check(message, hv, version, &bytes[..n]).is_err(), "{} v{version} seed {seed}: prefix {n} passes", message.name());
                }
                // Whatever passes after a byte is changed decodes without asking for more than
                // the frame holds (the crate is only handed bytes that pass).
                for i in (0..bytes.len()).step_by(3) {
                    for v in [0x00, 0x7f, 0x80, 0xff] {
                        let mut m = bytes.clone();
                        m[i] = v;
                        let _ = decode_response::<R>(m, version);
                    }
                }
            }
        }
    }

    fn err(message: &Message, header_version: i16, version: i16, body: &[u8]) -> (String, usize, LayoutErrorKind) {
        let e = check(message, header_version, version, body).unwrap_err();
        (e.path, e.offset, e.kind)
    }

    #[test]
    fn counts_the_frame_cannot_hold_are_refused_with_their_path_and_offset() {
        // Metadata v1 (int32 counts): correlation id, brokers = i32::MAX.
        let mut v1 = vec![0, 0, 0, 7];
        v1.extend_from_slice(&i32::MAX.to_be_bytes());
        v1.extend_from_slice(&[0; 8]);
        let expected = LayoutErrorKind::TooManyElements { count: i32::MAX as u64, remaining: 8 };
        assert_eq!(err(&METADATA, 0, 1, &v1), ("MetadataResponse.Brokers".into(), 4, expected));
        let e = decode_response::<messages::MetadataRequest>(v1, 1).unwrap_err();
        assert_eq!(e, "MetadataResponse.Brokers at byte 4: 2147483647 element(s) claimed, only 8 byte(s) left");

        // DescribeGroups v5 (compact): one group whose member count is 2^32 − 2.
        let mut v5 = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 2, 0, 0, 2, b'g', 1, 1, 1];
        v5.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        let expected = LayoutErrorKind::TooManyElements { count: u32::MAX as u64 - 1, remaining: 0 };
        assert_eq!(err(&DESCRIBE_GROUPS, 1, 5, &v5), ("DescribeGroupsResponse.Groups[0].Members".into(), 17, expected));

        // What the fuzzer found when `decode_response` skipped this check: a DescribeGroups v5
        // body of 13 bytes that made the decoder reserve 1.36 GB for 6,291,454 groups.
        let found = vec![0, 0, 0, 0x4f, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x02];
        let e = decode_response::<messages::DescribeGroupsRequest>(found, 5).unwrap_err();
        assert_eq!(e, "DescribeGroupsResponse.Groups at byte 9: 6291454 element(s) claimed, only 0 byte(s) left");

        // Replica ids are four bytes each: three of them do not fit in eight bytes.
        // Metadata v0: no brokers, one topic `t` with one partition claiming three replicas.
        let mut partition = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, b't', 0, 0, 0, 1];
        partition.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3]);
        partition.extend_from_slice(&[0; 8]);
        let expected = LayoutErrorKind::TooManyElements { count: 3, remaining: 8 };
        assert_eq!(err(&METADATA, 0, 0, &partition), ("MetadataResponse.Topics[0].Partitions[0].ReplicaNodes".into(), 31, expected));
    }

    #[test]
    fn bad_lengths_strings_tags_and_versions_are_typed_errors() {
        // FindCoordinator v1: throttle, error code, error message of length −2.
        let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0xff, 0xfe];
        assert_eq!(err(&FIND_COORDINATOR, 0, 1, &body), ("FindCoordinatorResponse.ErrorMessage".into(), 10, LayoutErrorKind::NegativeLength(-2)));
        // ... and an error message that is not UTF-8.
        let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 0xc3, 0x28];
        assert_eq!(err(&FIND_COORDINATOR, 0, 1, &body), ("FindCoordinatorResponse.ErrorMessage".into(), 12, LayoutErrorKind::NotUtf8));
        // ApiVersions v3 (header v0): no keys, throttle, then tag 1 (an int64) declared as 4 bytes.
        let body = [0, 0, 0, 7, 0, 0, 1, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 9];
        let kind = LayoutErrorKind::TaggedFieldSize { tag: 1, declared: 4, actual: 8 };
        assert_eq!(err(&API_VERSIONS, 0, 3, &body), ("ApiVersionsResponse".into(), 14, kind));
        // An unknown tag is skipped by its size; a size past the end is truncation.
        let body = [0, 0, 0, 7, 0, 0, 1, 0, 0, 0, 0, 1, 9, 2, 0xaa, 0xbb];
        check(&API_VERSIONS, 0, 3, &body).unwrap();
        let kind = LayoutErrorKind::Truncated { needed: 3, available: 2 };
        assert_eq!(err(&API_VERSIONS, 0, 3, &[&body[..13], &[3, 0xaa, 0xbb]].concat()), ("ApiVersionsResponse".into(), 14, kind));
        // Versions outside the crate's range, and bytes after the message.
        let kind = LayoutErrorKind::UnsupportedVersion { version: 1, min: 2, max: 7 };
        assert_eq!(err(&CREATE_TOPICS, 0, 1, &[0, 0, 0, 7]), ("CreateTopicsResponse".into(), 4, kind));
        let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 27, 0];
        assert_eq!(err(&HEARTBEAT, 0, 1, &body), ("HeartbeatResponse".into(), 10, LayoutErrorKind::Trailing(1)));
        // A header cut short names the header.
        assert_eq!(err(&HEARTBEAT, 1, 4, &[0, 0]).0, "ResponseHeader.CorrelationId");
    }

    #[test]
    fn layouts_agree_with_kafka_protocol_at_every_version() {
        const CASES: u64 = 60;
        assert_eq!(crate::group::connection::RESPONSE_DECODERS.len(), 11, "every call's response is checked here");
        agrees_with_kafka_protocol::<messages::ApiVersionsRequest>(CASES);
        agrees_with_kafka_protocol::<messages::FindCoordinatorRequest>(CASES);
        agrees_with_kafka_protocol::<messages::JoinGroupRequest>(CASES);
        agrees_with_kafka_protocol::<messages::SyncGroupRequest>(CASES);
        agrees_with_kafka_protocol::<messages::HeartbeatRequest>(CASES);
        agrees_with_kafka_protocol::<messages::LeaveGroupRequest>(CASES);
        agrees_with_kafka_protocol::<messages::MetadataRequest>(CASES);
        agrees_with_kafka_protocol::<messages::CreateTopicsRequest>(CASES);
        agrees_with_kafka_protocol::<messages::ListOffsetsRequest>(CASES);
        agrees_with_kafka_protocol::<messages::DescribeGroupsRequest>(CASES);
        agrees_with_kafka_protocol::<messages::OffsetFetchRequest>(CASES);
    }
}
