//! The pieces of an `AssignmentInfo` on the wire: which fields a version carries, the
//! partition and host-map entries, and their readers and writers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::codec::{Reader, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError, Lenience};
use super::java_string::{JavaString, MAX_MODIFIED_UTF8_LEN};
use super::types::{HostInfo, TaskId, TopicPartition};
use super::MIN_NAMED_TOPOLOGY_VERSION;

/// Which fields a version carries, in wire order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub(super) commonly_supported_version: bool,
    pub(super) named_task_ids: bool,
    pub(super) host_maps: HostMapsForm,
    pub(super) standby_host_map: bool,
    pub(super) error_code: bool,
    pub(super) next_rebalance: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostMapsForm {
    /// v1: no host map.
    Absent,
    /// v2–4: topic names inline.
    Plain,
    /// v5+: a topic dictionary, then host maps of topic indexes.
    Dictionary,
}

impl Layout {
    pub(super) const fn of(version: i32) -> Self {
        Self {
            commonly_supported_version: version >= 3,
            named_task_ids: version >= MIN_NAMED_TOPOLOGY_VERSION,
            host_maps: if version >= 5 {
                HostMapsForm::Dictionary
            } else if version >= 2 {
                HostMapsForm::Plain
            } else {
                HostMapsForm::Absent
            },
            standby_host_map: version >= 6,
            error_code: version >= 4,
            next_rebalance: version >= 7,
        }
    }
}

/// A topic partition as `AssignmentInfo` carries it: the topic's raw modified UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WirePartition {
    /// The topic.
    pub topic: JavaString,
    /// The partition.
    pub partition: i32,
}

impl WirePartition {
    /// The typed topic partition (unpaired surrogates replaced).
    pub fn to_topic_partition(&self) -> TopicPartition {
        TopicPartition::new(&*self.topic.to_string_lossy(), self.partition)
    }
}

impl From<&TopicPartition> for WirePartition {
    fn from(tp: &TopicPartition) -> Self {
        Self { topic: JavaString::new(&tp.topic), partition: tp.partition }
    }
}

/// A standby task and its input partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyTask {
    /// The task.
    pub task: TaskId,
    /// Its partitions, in wire order.
    pub partitions: Vec<WirePartition>,
}

/// A v2–4 host-map entry: a host and the partitions it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPartitions {
    /// The host.
    pub host: JavaString,
    /// The port.
    pub port: i32,
    /// The partitions, in wire order.
    pub partitions: Vec<WirePartition>,
}

/// A v5+ host-map entry: partitions name their topic by dictionary index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedHostPartitions {
    /// The host.
    pub host: JavaString,
    /// The port.
    pub port: i32,
    /// `(topic index, partition)` pairs, in wire order.
    pub partitions: Vec<(i32, i32)>,
}

/// The host maps that tell a member where every task is served, in the form its version carries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostMaps {
    /// v1–4: active partitions by host, topic names inline (always empty at v1).
    Plain(Vec<HostPartitions>),
    /// v5+: a topic dictionary (`(index, name)` in wire order), active partitions by host, and
    /// (v6+) standby partitions by host.
    Dictionary {
        /// The topic dictionary.
        topics: Vec<(i32, JavaString)>,
        /// Active partitions by host.
        active: Vec<IndexedHostPartitions>,
        /// Standby partitions by host (written from v6).
        standby: Vec<IndexedHostPartitions>,
    },
}

/// Partitions by host, the typed view.
pub type PartitionsByHost = BTreeMap<HostInfo, BTreeSet<TopicPartition>>;

pub(super) fn read_task_id(r: &mut Reader<'_>, layout: Layout, field: &'static str) -> Result<TaskId, DecodeError> {
    let (subtopology, partition) = match r.chunk::<8>() {
        Some(b) => (i32::from_be_bytes([b[0], b[1], b[2], b[3]]), i32::from_be_bytes([b[4], b[5], b[6], b[7]])),
        None => (r.i32(field)?, r.i32(field)?),
    };
    if !layout.named_task_ids {
        return Ok(TaskId::new(subtopology, partition));
    }
    let at = r.position();
    let chars = r.i32("namedTopology")?;
    if chars <= 0 {
        if chars < 0 {
            r.note(Lenience::NegativeAsEmpty { field: "namedTopology", offset: at, value: chars });
        }
        return Ok(TaskId::new(subtopology, partition));
    }
    let bytes = r.take(2 * chars as usize, "namedTopology")?;
    let units: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let name = String::from_utf16(&units).unwrap_or_else(|_| {
        r.note(Lenience::InvalidUtf16 { offset: at });
        String::from_utf16_lossy(&units)
    });
    Ok(TaskId::named(&name, subtopology, partition))
}

pub(super) fn write_task_id(w: &mut Writer, layout: Layout, task: &TaskId) -> Result<(), EncodeError> {
    w.i32(task.subtopology);
    w.i32(task.partition);
    if layout.named_task_ids {
        match &task.topology {
            None => w.i32(0),
            Some(name) => {
                let units: Vec<u16> = name.encode_utf16().collect();
                w.count("namedTopology", units.len())?;
                units.iter().for_each(|&u| w.u16(u));
            }
        }
    }
    Ok(())
}

/// Reads `AssignmentInfo`'s strings, sharing one allocation among repeats of the same bytes
/// (topic names recur once per partition). A repeat of the string just read (partitions of one
/// topic come together) is found without hashing.
#[derive(Default)]
pub(super) struct Strings<'a> {
    seen: HashMap<&'a [u8], (JavaString, bool)>,
    last: Option<(&'a [u8], JavaString, bool)>,
}

impl<'a> Strings<'a> {
    pub(super) fn read(&mut self, r: &mut Reader<'a>, field: &'static str) -> Result<JavaString, DecodeError> {
        let at = r.position();
        let len = r.u16(field)?;
        let bytes = r.take(len.into(), field)?;
        let (s, canonical) = match &self.last {
            Some((last, s, canonical)) if *last == bytes => (s.clone(), *canonical),
            _ => {
                let (s, canonical) = match self.seen.get(bytes) {
                    Some(known) => known.clone(),
                    None => {
                        let fresh = JavaString::from_modified_utf8_checked(bytes).map_err(|e| {
                            r.error_at(at, field, DecodeErrorKind::MalformedModifiedUtf8 { at: e.at, reason: e.reason })
                        })?;
                        self.seen.insert(bytes, fresh.clone());
                        fresh
                    }
                };
                self.last = Some((bytes, s.clone(), canonical));
                (s, canonical)
            }
        };
        if !canonical {
            r.note(Lenience::NonCanonicalModifiedUtf8 { field, offset: at });
        }
        Ok(s)
    }
}

/// Converts topic names to shared `Arc<str>`s, once per distinct name; a repeat of the last
/// topic (one allocation, as [`Strings`] shares them) without hashing.
#[derive(Default)]
pub(super) struct Topics {
    seen: HashMap<JavaString, Arc<str>>,
    last: Option<(JavaString, Arc<str>)>,
}

impl Topics {
    pub(super) fn get(&mut self, topic: &JavaString) -> Arc<str> {
        if let Some((last, name)) = &self.last {
            if last.shares(topic) {
                return name.clone();
            }
        }
        let name = match self.seen.get(topic) {
            Some(name) => name.clone(),
            None => {
                let name: Arc<str> = topic.to_string_lossy().into();
                self.seen.insert(topic.clone(), name.clone());
                name
            }
        };
        self.last = Some((topic.clone(), name.clone()));
        name
    }

    pub(super) fn partition(&mut self, p: &WirePartition) -> TopicPartition {
        TopicPartition { topic: self.get(&p.topic), partition: p.partition }
    }
}

/// The topic indexes a v5+ dictionary defines. Java numbers them 0, 1, 2, … in order, which is
/// checked without a lookup.
pub(super) enum DictionaryIndexes {
    /// Exactly `0..n`, in order.
    Dense(usize),
    /// Anything else, sorted.
    Sorted(Vec<i32>),
}

impl DictionaryIndexes {
    pub(super) fn of(topics: &[(i32, JavaString)]) -> Self {
        if topics.iter().enumerate().all(|(i, (index, _))| usize::try_from(*index) == Ok(i)) {
            return Self::Dense(topics.len());
        }
        let mut indexes: Vec<i32> = topics.iter().map(|(i, _)| *i).collect();
        indexes.sort_unstable();
        Self::Sorted(indexes)
    }

    /// Where `index` is in the dictionary's order of indexes, if it is there.
    pub(super) fn position(&self, index: i32) -> Option<usize> {
        match self {
            Self::Dense(n) => usize::try_from(index).ok().filter(|i| i < n),
            Self::Sorted(indexes) => indexes.binary_search(&index).ok(),
        }
    }
}

pub(super) fn write_utf(w: &mut Writer, field: &'static str, s: &JavaString) -> Result<(), EncodeError> {
    let len = u16::try_from(s.len()).map_err(|_| EncodeError::StringTooLong {
        message: w.message(),
        field,
        len: s.len(),
        max: MAX_MODIFIED_UTF8_LEN,
    })?;
    w.u16(len);
    w.raw(s.as_bytes());
    Ok(())
}

pub(super) fn read_partitions<'a>(r: &mut Reader<'a>, strings: &mut Strings<'a>, field: &'static str) -> Result<Vec<WirePartition>, DecodeError> {
    let n = r.count(field, 6)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let topic = strings.read(r, field)?;
        let partition = r.i32(field)?;
        out.push(WirePartition { topic, partition });
    }
    Ok(out)
}

pub(super) fn write_partitions(w: &mut Writer, field: &'static str, partitions: &[WirePartition]) -> Result<(), EncodeError> {
    w.count(field, partitions.len())?;
    for p in partitions {
        write_utf(w, field, &p.topic)?;
        w.i32(p.partition);
    }
    Ok(())
}

pub(super) fn read_indexed_hosts<'a>(
    r: &mut Reader<'a>,
    strings: &mut Strings<'a>,
    field: &'static str,
    known_indexes: &DictionaryIndexes,
) -> Result<Vec<IndexedHostPartitions>, DecodeError> {
    let n = r.count(field, 10)?;
    let mut hosts = Vec::with_capacity(n);
    for _ in 0..n {
        let host = strings.read(r, field)?;
        let port = r.i32(field)?;
        let m = r.count(field, 8)?;
        let mut partitions = Vec::with_capacity(m);
        for _ in 0..m {
            let at = r.position();
            let (index, partition) = match r.chunk::<8>() {
                Some(b) => (i32::from_be_bytes([b[0], b[1], b[2], b[3]]), i32::from_be_bytes([b[4], b[5], b[6], b[7]])),
                // Cut off within the pair: read field by field to say where.
                None => (r.i32(field)?, r.i32(field)?),
            };
            if known_indexes.position(index).is_none() {
                r.note(Lenience::UnknownTopicIndex { offset: at, index });
            }
            partitions.push((index, partition));
        }
        hosts.push(IndexedHostPartitions { host, port, partitions });
    }
    Ok(hosts)
}

pub(super) fn write_indexed_hosts(w: &mut Writer, field: &'static str, hosts: &[IndexedHostPartitions]) -> Result<(), EncodeError> {
    w.count(field, hosts.len())?;
    for h in hosts {
        write_utf(w, field, &h.host)?;
        w.i32(h.port);
        w.count(field, h.partitions.len())?;
        for &(index, partition) in &h.partitions {
            w.i32(index);
            w.i32(partition);
        }
    }
    Ok(())
}
