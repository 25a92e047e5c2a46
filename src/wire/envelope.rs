//! The consumer-protocol envelope around Streams' metadata: `ConsumerProtocolSubscription` (the
//! JoinGroup member metadata) and `ConsumerProtocolAssignment` (the SyncGroup member assignment),
//! each prefixed with its `i16` version. Versions 0–3; a higher version is read as version 3 with
//! anything after the known fields ignored, as Java reads it.
//!
//! Written by hand rather than with a generated-message crate: the two messages are small, and
//! this way they share the checked reader (typed errors with offsets, no allocation from
//! untrusted lengths), keep unknown trailing bytes, and implement Java's forward-compatible read.

use std::borrow::Cow;

use super::assignment_info::{AssignmentInfo, SharedHostMaps};
use super::codec::{Reader, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};
use super::types::TopicPartition;

/// JoinGroup protocol type of a Kafka Streams member.
pub const PROTOCOL_TYPE: &str = "consumer";
/// JoinGroup protocol (assignor) name of Kafka Streams.
pub const PROTOCOL_NAME: &str = "stream";
/// The highest envelope version known; Java writes it, and reads higher versions as it.
pub const HIGHEST_ENVELOPE_VERSION: i16 = 3;

/// The partitions of one topic, as the envelope groups them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicPartitions {
    /// The topic.
    pub topic: String,
    /// Partitions, in wire order.
    pub partitions: Vec<i32>,
}

/// Groups partitions by topic in order of each topic's first appearance, keeping list order
/// within a topic (Java's `ConsumerProtocol` grouping).
fn group_by_topic<'a>(partitions: impl IntoIterator<Item = &'a TopicPartition>) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for tp in partitions {
        let i = *index.entry(&tp.topic).or_insert_with(|| {
            out.push(TopicPartitions { topic: tp.topic.to_string(), partitions: Vec::new() });
            out.len() - 1
        });
        out[i].partitions.push(tp.partition);
    }
    out
}

fn flatten(groups: &[TopicPartitions]) -> Vec<TopicPartition> {
    groups
        .iter()
        .flat_map(|g| {
            let topic: std::sync::Arc<str> = g.topic.as_str().into();
            g.partitions.iter().map(move |&p| TopicPartition { topic: topic.clone(), partition: p })
        })
        .collect()
}

/// A JoinGroup member's metadata under protocol type `consumer`.
///
/// ```
/// use kstreams_assignor::wire::{SubscriptionEnvelope, TopicPartition};
///
/// let env = SubscriptionEnvelope::new(vec!["input".into()], Some(vec![0xca, 0xfe]))
///     .with_owned_partitions(&[TopicPartition::new("input", 1), TopicPartition::new("input", 0)])
///     .with_generation_id(5)
///     .with_rack_id("rack-a");
/// let bytes = env.encode().unwrap();
/// assert_eq!(&bytes[..2], &[0, 3]);
/// let back = SubscriptionEnvelope::decode(&bytes).unwrap();
/// assert_eq!(back, env);
/// assert_eq!(back.owned_partitions_list()[0], TopicPartition::new("input", 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionEnvelope {
    /// The envelope version as written (versions above 3 carry the v3 fields).
    pub version: i16,
    /// Subscribed topics, in wire order (Java sorts them).
    pub topics: Vec<String>,
    /// The assignor's user data: Streams' `SubscriptionInfo`.
    pub user_data: Option<Vec<u8>>,
    /// Partitions the member owns (v1+), grouped by topic.
    pub owned_partitions: Vec<TopicPartitions>,
    /// The member's last generation (v2+); -1 when none.
    pub generation_id: i32,
    /// `client.rack` (v3+).
    pub rack_id: Option<String>,
    /// Bytes after the known fields, which Java ignores.
    pub trailing_bytes: Vec<u8>,
}

impl SubscriptionEnvelope {
    /// A v3 envelope, as Java writes it.
    pub fn new(topics: Vec<String>, user_data: Option<Vec<u8>>) -> Self {
        Self {
            version: HIGHEST_ENVELOPE_VERSION,
            topics,
            user_data,
            owned_partitions: Vec::new(),
            generation_id: -1,
            rack_id: None,
            trailing_bytes: Vec::new(),
        }
    }

    /// Sets the owned partitions, sorted and grouped by topic as Java does.
    pub fn with_owned_partitions(mut self, partitions: &[TopicPartition]) -> Self {
        let mut sorted = partitions.to_vec();
        sorted.sort();
        self.owned_partitions = group_by_topic(&sorted);
        self
    }

    /// Sets the generation id.
    pub fn with_generation_id(mut self, generation_id: i32) -> Self {
        self.generation_id = generation_id;
        self
    }

    /// Sets the rack id.
    pub fn with_rack_id(mut self, rack_id: &str) -> Self {
        self.rack_id = Some(rack_id.to_owned());
        self
    }

    /// Sets the envelope version.
    pub fn with_version(mut self, version: i16) -> Self {
        self.version = version;
        self
    }

    /// The owned partitions as a flat list.
    pub fn owned_partitions_list(&self) -> Vec<TopicPartition> {
        flatten(&self.owned_partitions)
    }

    /// The generation, if any (Java: a negative id means none).
    pub fn generation(&self) -> Option<i32> {
        (self.generation_id >= 0).then_some(self.generation_id)
    }

    /// The rack, if any (Java: null or empty means none).
    pub fn rack(&self) -> Option<&str> {
        self.rack_id.as_deref().filter(|r| !r.is_empty())
    }

    /// Decodes as Java's `ConsumerProtocol.deserializeSubscription` does.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_reporting(bytes).map(|(e, _)| e)
    }

    /// Decodes, and lists the places where Java's reader was lenient.
    pub fn decode_reporting(bytes: &[u8]) -> Result<(Self, Vec<Lenience>), DecodeError> {
        let mut r = Reader::new(bytes, MessageKind::SubscriptionEnvelope);
        let version = read_version(&mut r)?;
        let n = r.count("topics", 2)?;
        let mut topics = Vec::with_capacity(n);
        for _ in 0..n {
            topics.push(read_string(&mut r, "topics")?);
        }
        let user_data = r.nullable_bytes_i32("userData")?.map(<[u8]>::to_vec);
        let owned_partitions = if version >= 1 { read_topic_partitions(&mut r, "ownedPartitions")? } else { Vec::new() };
        let generation_id = if version >= 2 { r.i32("generationId")? } else { -1 };
        let rack_id = if version >= 3 {
            let at = r.position();
            r.nullable_string_i16("rackId")?.map(|b| lossy(&mut r, at, "rackId", b))
        } else {
            None
        };
        let trailing_bytes = r.trailing().to_vec();
        let env = Self { version, topics, user_data, owned_partitions, generation_id, rack_id, trailing_bytes };
        Ok((env, r.finish()))
    }

    /// Encodes at [`SubscriptionEnvelope::version`]. A field the version cannot carry is an
    /// error (Java drops owned partitions, generation and rack silently).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let msg = MessageKind::SubscriptionEnvelope;
        let version = self.version;
        check_version(msg, version)?;
        let missing = |field, since| Err(EncodeError::FieldNotInVersion { message: msg, field, version: version.into(), since });
        if version < 1 && !self.owned_partitions.is_empty() {
            return missing("ownedPartitions", 1);
        }
        if version < 2 && self.generation_id != -1 {
            return missing("generationId", 2);
        }
        if version < 3 && self.rack_id.is_some() {
            return missing("rackId", 3);
        }
        let mut w = Writer::new(msg, 64 + self.user_data.as_ref().map_or(0, Vec::len));
        w.i16(version);
        w.count("topics", self.topics.len())?;
        for t in &self.topics {
            w.string_i16("topics", t.as_bytes())?;
        }
        w.nullable_bytes_i32("userData", self.user_data.as_deref())?;
        if version >= 1 {
            write_topic_partitions(&mut w, "ownedPartitions", &self.owned_partitions)?;
        }
        if version >= 2 {
            w.i32(self.generation_id);
        }
        if version >= 3 {
            w.nullable_string_i16("rackId", self.rack_id.as_deref().map(str::as_bytes))?;
        }
        w.raw(&self.trailing_bytes);
        Ok(w.finish())
    }
}

/// A SyncGroup member assignment under protocol type `consumer`.
///
/// ```
/// use kstreams_assignor::wire::{AssignmentEnvelope, TopicPartition};
///
/// let parts = [TopicPartition::new("b", 1), TopicPartition::new("a", 2), TopicPartition::new("b", 0)];
/// let env = AssignmentEnvelope::new(&parts, Some(vec![0xca, 0xfe]));
/// let bytes = env.encode().unwrap();
/// assert_eq!(hex::encode(&bytes), "000300000002000162000000020000000100000000000161000000010000000200000002cafe");
/// // Grouped by topic in order of first appearance, as Java groups them.
/// let grouped = [TopicPartition::new("b", 1), TopicPartition::new("b", 0), TopicPartition::new("a", 2)];
/// assert_eq!(AssignmentEnvelope::decode(&bytes).unwrap().partitions(), grouped);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssignmentEnvelope {
    /// The envelope version as written (versions above 3 carry the v3 fields).
    pub version: i16,
    /// Assigned partitions, grouped by topic, in wire order.
    pub assigned_partitions: Vec<TopicPartitions>,
    /// The assignor's user data: Streams' `AssignmentInfo`.
    pub user_data: Option<Vec<u8>>,
    /// Bytes after the known fields, which Java ignores.
    pub trailing_bytes: Vec<u8>,
}

impl AssignmentEnvelope {
    /// A v3 envelope, partitions grouped by topic in order of first appearance, as Java does.
    pub fn new(partitions: &[TopicPartition], user_data: Option<Vec<u8>>) -> Self {
        Self {
            version: HIGHEST_ENVELOPE_VERSION,
            assigned_partitions: group_by_topic(partitions),
            user_data,
            trailing_bytes: Vec::new(),
        }
    }

    /// Sets the envelope version.
    pub fn with_version(mut self, version: i16) -> Self {
        self.version = version;
        self
    }

    /// The assigned partitions as a flat list, in wire order.
    pub fn partitions(&self) -> Vec<TopicPartition> {
        flatten(&self.assigned_partitions)
    }

    /// Decodes as Java's `ConsumerProtocol.deserializeAssignment` does.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_reporting(bytes).map(|(e, _)| e)
    }

    /// Decodes, and lists the places where Java's reader was lenient.
    pub fn decode_reporting(bytes: &[u8]) -> Result<(Self, Vec<Lenience>), DecodeError> {
        let mut r = Reader::new(bytes, MessageKind::AssignmentEnvelope);
        let version = read_version(&mut r)?;
        let assigned_partitions = read_topic_partitions(&mut r, "assignedPartitions")?;
        let user_data = r.nullable_bytes_i32("userData")?.map(<[u8]>::to_vec);
        let trailing_bytes = r.trailing().to_vec();
        Ok((Self { version, assigned_partitions, user_data, trailing_bytes }, r.finish()))
    }

    /// Encodes at [`AssignmentEnvelope::version`] (all versions share one layout).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let msg = MessageKind::AssignmentEnvelope;
        check_version(msg, self.version)?;
        let mut w = Writer::new(msg, 64 + self.user_data.as_ref().map_or(0, Vec::len));
        w.i16(self.version);
        write_topic_partitions(&mut w, "assignedPartitions", &self.assigned_partitions)?;
        w.nullable_bytes_i32("userData", self.user_data.as_deref())?;
        w.raw(&self.trailing_bytes);
        Ok(w.finish())
    }
}

impl AssignmentEnvelope {
    /// A v3 envelope for `partitions` with `info` as its user data, encoded in one buffer: the
    /// bytes of `AssignmentEnvelope::new(partitions, Some(info.encode_shared(shared)?)).encode()`
    /// without writing the `AssignmentInfo` twice (a leader's members each carry the host maps
    /// of the whole group).
    ///
    /// ```
    /// use kstreams_assignor::wire::{AssignmentEnvelope, AssignmentInfo, SharedHostMaps, TaskId, TopicPartition};
    ///
    /// let info = AssignmentInfo::new(11).with_active_tasks(vec![TaskId::new(0, 1)]);
    /// let partitions = [TopicPartition::new("in", 1)];
    /// let bytes = AssignmentEnvelope::encode_with_info(&partitions, &info, &mut SharedHostMaps::default()).unwrap();
    /// let separately = AssignmentEnvelope::new(&partitions, Some(info.encode().unwrap())).encode().unwrap();
    /// assert_eq!(bytes, separately);
    /// ```
    pub fn encode_with_info(partitions: &[TopicPartition], info: &AssignmentInfo, shared: &mut SharedHostMaps) -> Result<Vec<u8>, EncodeError> {
        Self::encode_with_info_onto(partitions, info, shared, Vec::new())
    }

    /// [`encode_with_info`](Self::encode_with_info) into `buf` (emptied first), which keeps
    /// its allocation when it has room for the message: a leader that encodes on several
    /// threads allocates the buffers on its own.
    pub(crate) fn encode_with_info_onto(
        partitions: &[TopicPartition],
        info: &AssignmentInfo,
        shared: &mut SharedHostMaps,
        mut buf: Vec<u8>,
    ) -> Result<Vec<u8>, EncodeError> {
        let msg = MessageKind::AssignmentEnvelope;
        buf.clear();
        // The envelope's head; the info reserves the rest in one step (the head is small).
        let mut w = Writer::onto(msg, buf, 64 + 8 * partitions.len());
        w.i16(HIGHEST_ENVELOPE_VERSION);
        write_topic_partitions(&mut w, "assignedPartitions", &group_by_topic(partitions))?;
        let at = w.buf.len();
        w.i32(0);
        let mut buf = info.encode_shared_onto(shared, w.finish())?;
        let len = buf.len() - at - 4;
        let len = i32::try_from(len).map_err(|_| EncodeError::TooManyElements { message: msg, field: "userData", len })?;
        buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        Ok(buf)
    }
}

fn check_version(message: MessageKind, version: i16) -> Result<(), EncodeError> {
    if version < 0 {
        return Err(EncodeError::UnsupportedVersion { message, version: version.into(), min: 0, max: i16::MAX.into() });
    }
    Ok(())
}

fn read_version(r: &mut Reader<'_>) -> Result<i16, DecodeError> {
    let version = r.i16("version")?;
    if version < 0 {
        return Err(r.error_at(
            0,
            "version",
            DecodeErrorKind::UnsupportedVersion { version: version.into(), min: 0, max: i16::MAX.into() },
        ));
    }
    if version > HIGHEST_ENVELOPE_VERSION {
        r.note(Lenience::EnvelopeVersionAboveKnown { version });
    }
    Ok(version)
}

fn lossy(r: &mut Reader<'_>, at: usize, field: &'static str, bytes: &[u8]) -> String {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => s.to_owned(),
        Cow::Owned(s) => {
            r.note(Lenience::ReplacedInvalidUtf8 { field, offset: at });
            s
        }
    }
}

fn read_string(r: &mut Reader<'_>, field: &'static str) -> Result<String, DecodeError> {
    let at = r.position();
    let bytes = r.string_i16(field)?;
    Ok(lossy(r, at, field, bytes))
}

fn read_topic_partitions(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<TopicPartitions>, DecodeError> {
    let n = r.count(field, 6)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let topic = read_string(r, field)?;
        let m = r.count(field, 4)?;
        let mut partitions = Vec::with_capacity(m);
        for _ in 0..m {
            partitions.push(r.i32(field)?);
        }
        out.push(TopicPartitions { topic, partitions });
    }
    Ok(out)
}

fn write_topic_partitions(w: &mut Writer, field: &'static str, groups: &[TopicPartitions]) -> Result<(), EncodeError> {
    w.count(field, groups.len())?;
    for g in groups {
        w.string_i16(field, g.topic.as_bytes())?;
        w.count(field, g.partitions.len())?;
        for &p in &g.partitions {
            w.i32(p);
        }
    }
    Ok(())
}
