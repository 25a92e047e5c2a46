//! The pieces of an `AssignmentInfo` on the wire: which fields a version carries, the
//! partition and host-map entries, and their readers and writers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::codec::{Reader, Writer};
use super::error::{DecodeError, EncodeError, Lenience};
use super::assignment_names::{DictionaryIndexes, Strings};
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
    pub partitions: WirePartitions,
}

/// A standby task's partitions, in wire order: a slice to read. A task usually reads one
/// partition (one source topic), which is held in place, so that decoding a member's standby
/// tasks allocates nothing per task.
///
/// ```
/// use kstreams_assignor::wire::JavaString;
/// use kstreams_assignor::wire::assignment_info::{WirePartition, WirePartitions};
///
/// let one: WirePartitions = [WirePartition { topic: JavaString::new("in"), partition: 3 }].into_iter().collect();
/// assert_eq!(one.len(), 1);
/// assert_eq!(one[0].partition, 3);
/// let two = WirePartitions::from(vec![one[0].clone(), WirePartition { topic: JavaString::new("in"), partition: 4 }]);
/// assert_eq!(two.iter().map(|p| p.partition).collect::<Vec<_>>(), [3, 4]);
/// ```
#[derive(Clone, Default)]
pub struct WirePartitions(PartitionsRepr);

#[derive(Clone, Default)]
enum PartitionsRepr {
    #[default]
    None,
    One(WirePartition),
    Many(Vec<WirePartition>),
}

impl std::ops::Deref for WirePartitions {
    type Target = [WirePartition];

    fn deref(&self) -> &[WirePartition] {
        match &self.0 {
            PartitionsRepr::None => &[],
            PartitionsRepr::One(p) => std::slice::from_ref(p),
            PartitionsRepr::Many(v) => v,
        }
    }
}

impl From<Vec<WirePartition>> for WirePartitions {
    fn from(mut v: Vec<WirePartition>) -> Self {
        Self(match v.len() {
            0 => PartitionsRepr::None,
            1 => PartitionsRepr::One(v.pop().expect("one element")),
            _ => PartitionsRepr::Many(v),
        })
    }
}

impl FromIterator<WirePartition> for WirePartitions {
    fn from_iter<I: IntoIterator<Item = WirePartition>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let Some(first) = iter.next() else { return Self::default() };
        let Some(second) = iter.next() else { return Self(PartitionsRepr::One(first)) };
        let mut v = Vec::with_capacity(2 + iter.size_hint().0);
        v.extend([first, second]);
        v.extend(iter);
        Self(PartitionsRepr::Many(v))
    }
}

impl PartialEq for WirePartitions {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for WirePartitions {}

impl fmt::Debug for WirePartitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
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

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `n` task ids (already checked to fit in the input). A task of no named topology is read in
/// place, a named one by [`read_task_id`].
pub(super) fn read_task_ids(r: &mut Reader<'_>, layout: Layout, n: usize, field: &'static str) -> Result<Vec<TaskId>, DecodeError> {
    let size = if layout.named_task_ids { 12 } else { 8 };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        // The usual entries that come in a row, in one pass over their bytes.
        let rest = r.rest();
        let region = &rest[..rest.len().min((n - out.len()) * size)];
        let before = out.len();
        out.extend(
            region
                .chunks_exact(size)
                .map_while(|c| (size == 8 || c[8..12] == [0; 4]).then(|| TaskId::new(be_i32(c, 0), be_i32(c, 4)))),
        );
        r.advance((out.len() - before) * size);
        if out.len() < n {
            out.push(read_task_id(r, layout, field)?);
        }
    }
    Ok(out)
}

/// The next standby task when it is the usual one, read in place: no named topology, one
/// partition, of a topic [`Strings::known`] gives: pushed onto `out`. `false`, consuming
/// nothing, otherwise.
#[inline]
pub(super) fn read_usual_standby<'a>(r: &mut Reader<'a>, layout: Layout, strings: &mut Strings<'a>, out: &mut Vec<StandbyTask>) -> bool {
    let t = if layout.named_task_ids { 12 } else { 8 };
    let rest = r.rest();
    let Some(head) = rest.get(..t + 6) else { return false };
    if (t == 12 && head[8..12] != [0; 4]) || head[t..t + 4] != [0, 0, 0, 1] {
        return false;
    }
    let len = usize::from(u16::from_be_bytes([head[t + 4], head[t + 5]]));
    let (Some(topic), Some(partition)) = (rest.get(t + 6..t + 6 + len), rest.get(t + 6 + len..t + 10 + len)) else { return false };
    let Some(topic) = strings.known(topic) else { return false };
    let partition = i32::from_be_bytes([partition[0], partition[1], partition[2], partition[3]]);
    r.advance(t + 10 + len);
    out.push(StandbyTask {
        task: TaskId::new(be_i32(head, 0), be_i32(head, 4)),
        partitions: WirePartitions(PartitionsRepr::One(WirePartition { topic, partition })),
    });
    true
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
        out.push(read_partition(r, strings, field)?);
    }
    Ok(out)
}

/// [`read_partitions`] into a standby task's list (one partition without an allocation).
pub(super) fn read_standby_partitions<'a>(r: &mut Reader<'a>, strings: &mut Strings<'a>, field: &'static str) -> Result<WirePartitions, DecodeError> {
    let n = r.count(field, 6)?;
    Ok(WirePartitions(match n {
        0 => PartitionsRepr::None,
        1 => PartitionsRepr::One(read_partition(r, strings, field)?),
        _ => {
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(read_partition(r, strings, field)?);
            }
            PartitionsRepr::Many(out)
        }
    }))
}

#[inline]
fn read_partition<'a>(r: &mut Reader<'a>, strings: &mut Strings<'a>, field: &'static str) -> Result<WirePartition, DecodeError> {
    let topic = strings.read(r, field)?;
    let partition = r.i32(field)?;
    Ok(WirePartition { topic, partition })
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
        // The count is checked to fit: the pairs are read in place.
        let m = r.count(field, 8)?;
        let start = r.position();
        let pairs = &r.rest()[..8 * m];
        let partitions: Vec<(i32, i32)> = pairs.chunks_exact(8).map(|b| (be_i32(b, 0), be_i32(b, 4))).collect();
        r.advance(8 * m);
        if !known_indexes.all_known(&partitions) {
            for (i, &(index, _)) in partitions.iter().enumerate() {
                if known_indexes.position(index).is_none() {
                    r.note(Lenience::UnknownTopicIndex { offset: start + 8 * i, index });
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standby_partitions_hold_one_in_place_and_compare_as_slices() {
        let p = |n| WirePartition { topic: JavaString::new("in"), partition: n };
        let one: WirePartitions = [p(1)].into_iter().collect();
        assert!(matches!(one.0, PartitionsRepr::One(_)));
        assert_eq!(one, WirePartitions::from(vec![p(1)]));
        assert_eq!(&*WirePartitions::from(vec![p(1), p(2)]), &[p(1), p(2)]);
        assert!(WirePartitions::from(Vec::new()).is_empty());
        assert_eq!(format!("{one:?}"), format!("{:?}", vec![p(1)]));
    }
}
