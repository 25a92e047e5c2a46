//! `AssignmentInfo`: what the group leader tells each Kafka Streams member (the `userData` of its
//! SyncGroup assignment). Versions 1–11, written with Java's `DataOutputStream`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::codec::{Reader, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};
use super::java_string::JavaString;
use super::types::{AssignorError, HostInfo, NextRebalance, TaskId, TopicPartition};
use super::LATEST_SUPPORTED_VERSION;

const MSG: MessageKind = MessageKind::AssignmentInfo;

/// `commonlySupportedVersion` of a v1 or v2 assignment, which does not carry the field.
pub const UNKNOWN_VERSION: i32 = -1;

pub use super::assignment_parts::{HostMaps, HostPartitions, IndexedHostPartitions, PartitionsByHost, StandbyTask, WirePartition, WirePartitions};
use super::assignment_maps::{host_info, resolve_indexed};
use super::offset_sums::unnamed_order;
use super::assignment_names::{DictionaryIndexes, Strings};
use super::assignment_parts::{
    HostMapsForm, Layout, Topics, read_indexed_hosts, read_partitions, read_standby_partitions, read_task_id, read_task_ids, read_usual_standby, write_indexed_hosts,
    write_partitions, write_task_id, write_utf,
};
/// A member's assignment metadata, exactly as it travels: lists keep wire order and duplicates,
/// strings keep their raw modified UTF-8, the v5+ dictionary keeps its entries and indexes, so
/// that [`AssignmentInfo::encode`] of a decoded value gives back the same bytes. The typed
/// accessors give the view a Java member works with.
///
/// ```
/// use kstreams_assignor::wire::{AssignmentInfo, HostInfo, NextRebalance, TaskId, TopicPartition};
///
/// let host = HostInfo::new("host-1", 8080);
/// let info = AssignmentInfo::new(11)
///     .with_active_tasks(vec![TaskId::new(0, 0), TaskId::new(0, 1)])
///     .with_partitions_by_host([(host.clone(), [TopicPartition::new("in", 0), TopicPartition::new("in", 1)].into())].into())
///     .with_next_rebalance(NextRebalance::at(1_700_000_000_000));
/// let bytes = info.encode().unwrap();
/// let back = AssignmentInfo::decode(&bytes).unwrap();
/// assert_eq!(back, info);
/// assert_eq!(back.partitions_by_host()[&host].len(), 2);
///
/// // Version 6 cannot carry a follow-up rebalance: refused, not silently dropped.
/// assert!(info.with_version(6).encode().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssignmentInfo {
    /// The version the leader used.
    pub version: i32,
    /// The newest version every member supports (v3+; [`UNKNOWN_VERSION`] for v1–2).
    pub commonly_supported_version: i32,
    /// Active tasks, one entry per assigned partition, in the order of the member's sorted
    /// partitions.
    pub active_tasks: Vec<TaskId>,
    /// Standby tasks and their partitions, in wire order.
    pub standby_tasks: Vec<StandbyTask>,
    /// Where every task is served. Shared: a leader gives every member the same maps, and a
    /// [`SharedHostMaps`] encodes them once for all.
    pub host_maps: Arc<HostMaps>,
    /// The assignor error code (v4+).
    pub error_code: AssignorError,
    /// When to rejoin for a follow-up rebalance (v7+).
    pub next_rebalance: NextRebalance,
    /// Bytes after the last field, which Java ignores; kept for a byte-exact re-encode.
    pub trailing_bytes: Vec<u8>,
}

impl AssignmentInfo {
    /// An empty assignment at `version`, with `commonlySupportedVersion` = 11 from v3 on.
    pub fn new(version: i32) -> Self {
        let commonly_supported_version = if version >= 3 { LATEST_SUPPORTED_VERSION } else { UNKNOWN_VERSION };
        let host_maps = match Layout::of(version).host_maps {
            HostMapsForm::Dictionary => HostMaps::Dictionary { topics: Vec::new(), active: Vec::new(), standby: Vec::new() },
            _ => HostMaps::Plain(Vec::new()),
        };
        Self {
            version,
            commonly_supported_version,
            active_tasks: Vec::new(),
            standby_tasks: Vec::new(),
            host_maps: Arc::new(host_maps),
            error_code: AssignorError::NONE,
            next_rebalance: NextRebalance::NONE,
            trailing_bytes: Vec::new(),
        }
    }

    /// The assignment Java's leader sends everyone when the rebalance fails with `error`: version
    /// 11, nothing assigned.
    pub fn error(error: AssignorError) -> Self {
        Self::new(LATEST_SUPPORTED_VERSION).with_error_code(error)
    }

    /// Sets `commonlySupportedVersion`.
    pub fn with_commonly_supported_version(mut self, version: i32) -> Self {
        self.commonly_supported_version = version;
        self
    }

    /// Sets the active task list (one entry per partition, in the member's partition order).
    pub fn with_active_tasks(mut self, tasks: Vec<TaskId>) -> Self {
        self.active_tasks = tasks;
        self
    }

    /// Sets the standby tasks, in task order.
    pub fn with_standby_tasks(mut self, tasks: BTreeMap<TaskId, BTreeSet<TopicPartition>>) -> Self {
        self.standby_tasks = tasks
            .into_iter()
            .map(|(task, parts)| StandbyTask { task, partitions: parts.iter().map(WirePartition::from).collect() })
            .collect();
        self
    }

    /// Sets the active partitions by host.
    pub fn with_partitions_by_host(mut self, active: PartitionsByHost) -> Self {
        let standby = self.standby_partitions_by_host();
        self.host_maps = Arc::new(host_maps_in_form(Layout::of(self.version).host_maps, &active, &standby));
        self
    }

    /// Sets the standby partitions by host (carried from v6).
    pub fn with_standby_partitions_by_host(mut self, standby: PartitionsByHost) -> Self {
        let active = self.partitions_by_host();
        self.host_maps = Arc::new(host_maps_in_form(HostMapsForm::Dictionary, &active, &standby));
        self
    }

    /// Sets the error code.
    pub fn with_error_code(mut self, error: AssignorError) -> Self {
        self.error_code = error;
        self
    }

    /// Sets the follow-up rebalance time (carried from v7).
    pub fn with_next_rebalance(mut self, next: NextRebalance) -> Self {
        self.next_rebalance = next;
        self
    }

    /// The same assignment at another version. `commonlySupportedVersion` is kept from v3 on;
    /// host maps are converted when the message is encoded.
    pub fn with_version(mut self, version: i32) -> Self {
        if version < 3 {
            self.commonly_supported_version = UNKNOWN_VERSION;
        } else if self.version < 3 {
            self.commonly_supported_version = LATEST_SUPPORTED_VERSION;
        }
        self.version = version;
        self
    }

    /// Decodes as Java's `AssignmentInfo.decode` does, leniencies included.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_reporting(bytes).map(|(info, _)| info)
    }

    /// Decodes, and lists the places where Java's reader was lenient.
    pub fn decode_reporting(bytes: &[u8]) -> Result<(Self, Vec<Lenience>), DecodeError> {
        let mut r = Reader::new(bytes, MSG);
        let version = r.i32("version")?;
        if !(1..=LATEST_SUPPORTED_VERSION).contains(&version) {
            return Err(r.error_at(
                0,
                "version",
                DecodeErrorKind::UnsupportedVersion { version, min: 1, max: LATEST_SUPPORTED_VERSION },
            ));
        }
        let layout = Layout::of(version);
        let mut strings = Strings::default();
        let commonly_supported_version =
            if layout.commonly_supported_version { r.i32("commonlySupportedVersion")? } else { UNKNOWN_VERSION };
        let task_size = if layout.named_task_ids { 12 } else { 8 };
        let n = r.count("activeTasks", task_size)?;
        let active_tasks = read_task_ids(&mut r, layout, n, "activeTasks")?;
        let n = r.count("standbyTasks", task_size + 4)?;
        let mut standby_tasks = Vec::with_capacity(n);
        for _ in 0..n {
            if read_usual_standby(&mut r, layout, &mut strings, &mut standby_tasks) {
                continue;
            }
            let task = read_task_id(&mut r, layout, "standbyTasks")?;
            let partitions = read_standby_partitions(&mut r, &mut strings, "standbyTasks.partitions")?;
            standby_tasks.push(StandbyTask { task, partitions });
        }
        let host_maps = match layout.host_maps {
            HostMapsForm::Absent => HostMaps::Plain(Vec::new()),
            HostMapsForm::Plain => {
                let n = r.count("partitionsByHost", 10)?;
                let mut hosts = Vec::with_capacity(n);
                for _ in 0..n {
                    let host = strings.read(&mut r, "partitionsByHost.host")?;
                    let port = r.i32("partitionsByHost.port")?;
                    let partitions = read_partitions(&mut r, &mut strings, "partitionsByHost.partitions")?;
                    hosts.push(HostPartitions { host, port, partitions });
                }
                HostMaps::Plain(hosts)
            }
            HostMapsForm::Dictionary => {
                let n = r.count("topicDictionary", 6)?;
                let mut topics = Vec::with_capacity(n);
                for _ in 0..n {
                    let index = r.i32("topicDictionary.index")?;
                    topics.push((index, strings.read(&mut r, "topicDictionary.topic")?));
                }
                let known = DictionaryIndexes::of(&topics);
                let active = read_indexed_hosts(&mut r, &mut strings, "partitionsByHost", &known)?;
                let standby = if layout.standby_host_map {
                    read_indexed_hosts(&mut r, &mut strings, "standbyPartitionsByHost", &known)?
                } else {
                    Vec::new()
                };
                HostMaps::Dictionary { topics, active, standby }
            }
        };
        let error_code = AssignorError(if layout.error_code { r.i32("errorCode")? } else { 0 });
        let next_rebalance =
            if layout.next_rebalance { NextRebalance(r.i64("nextRebalanceMs")?) } else { NextRebalance::NONE };
        let trailing_bytes = r.trailing().to_vec();
        let info = Self {
            version,
            commonly_supported_version,
            active_tasks,
            standby_tasks,
            host_maps: Arc::new(host_maps),
            error_code,
            next_rebalance,
            trailing_bytes,
        };
        Ok((info, r.finish()))
    }

    /// Encodes at [`AssignmentInfo::version`]. Host maps held in another version's form are
    /// converted. Fails on a field the version cannot carry, a named topology before v10, and a
    /// host or topic name over 65,535 bytes of modified UTF-8 (as Java's `writeUTF` does).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        self.encode_shared(&mut SharedHostMaps::default())
    }

    /// [`encode`](Self::encode), with the host maps written once for every message that
    /// carries the same ones (the same [`Arc`]) at the same version: a leader's members all do,
    /// and the maps are most of each message. The bytes are those of `encode`.
    ///
    /// ```
    /// use kstreams_assignor::wire::{AssignmentInfo, HostInfo, SharedHostMaps, TaskId, TopicPartition};
    ///
    /// let hosts = [(HostInfo::new("host-1", 8080), [TopicPartition::new("in", 0)].into())].into();
    /// let first = AssignmentInfo::new(11).with_active_tasks(vec![TaskId::new(0, 0)]).with_partitions_by_host(hosts);
    /// let mut second = AssignmentInfo::new(11);
    /// second.host_maps = first.host_maps.clone();
    /// let mut shared = SharedHostMaps::default();
    /// assert_eq!(first.encode_shared(&mut shared).unwrap(), first.encode().unwrap());
    /// assert_eq!(second.encode_shared(&mut shared).unwrap(), second.encode().unwrap());
    /// ```
    pub fn encode_shared(&self, shared: &mut SharedHostMaps) -> Result<Vec<u8>, EncodeError> {
        self.encode_shared_onto(shared, Vec::new())
    }

    /// [`encode_shared`](Self::encode_shared), appending the message to `buf` (an envelope
    /// writes it where its user data goes, without a copy).
    pub(crate) fn encode_shared_onto(&self, shared: &mut SharedHostMaps, buf: Vec<u8>) -> Result<Vec<u8>, EncodeError> {
        let version = self.version;
        let layout = encoding_layout(version)?;
        let missing = |field, since| Err(EncodeError::FieldNotInVersion { message: MSG, field, version, since });
        if !layout.commonly_supported_version && self.commonly_supported_version != UNKNOWN_VERSION {
            return missing("commonlySupportedVersion", 3);
        }
        if !layout.error_code && !self.error_code.is_none() {
            return missing("errorCode", 4);
        }
        if !layout.next_rebalance && !self.next_rebalance.is_none() {
            return missing("nextRebalanceMs", 7);
        }
        if !layout.named_task_ids
            && self.active_tasks.iter().chain(self.standby_tasks.iter().map(|s| &s.task)).any(|t| t.topology.is_some())
        {
            return Err(EncodeError::NamedTopologyNotSupported { message: MSG, version });
        }
        if !layout.standby_host_map && self.has_standby_hosts() {
            return missing("standbyPartitionsByHost", 6);
        }
        shared.hold(self, layout)?;

        let mut w = Writer::onto(MSG, buf, self.encoded_len_hint(layout, shared.bytes.len()));
        w.i32(version);
        if layout.commonly_supported_version {
            w.i32(self.commonly_supported_version);
        }
        w.count("activeTasks", self.active_tasks.len())?;
        for task in &self.active_tasks {
            write_task_id(&mut w, layout, task)?;
        }
        w.count("standbyTasks", self.standby_tasks.len())?;
        for standby in &self.standby_tasks {
            write_task_id(&mut w, layout, &standby.task)?;
            write_partitions(&mut w, "standbyTasks.partitions", &standby.partitions)?;
        }
        w.raw(&shared.bytes);
        if layout.error_code {
            w.i32(self.error_code.0);
        }
        if layout.next_rebalance {
            w.i64(self.next_rebalance.0);
        }
        w.raw(&self.trailing_bytes);
        Ok(w.finish())
    }

    /// The bytes this message takes in `layout` with a host section of `host_bytes` (exact, or
    /// a little above with named topologies): the writer's one allocation.
    fn encoded_len_hint(&self, layout: Layout, host_bytes: usize) -> usize {
        let task = |t: &TaskId| 8 + if layout.named_task_ids { 4 + t.topology.as_ref().map_or(0, |n| 2 * n.len()) } else { 0 };
        let actives: usize = self.active_tasks.iter().map(task).sum();
        let standbys: usize =
            self.standby_tasks.iter().map(|s| task(&s.task) + 4 + s.partitions.iter().map(|p| 6 + p.topic.len()).sum::<usize>()).sum();
        let optional = |present: bool, bytes: usize| if present { bytes } else { 0 };
        4 + optional(layout.commonly_supported_version, 4)
            + 4
            + actives
            + 4
            + standbys
            + host_bytes
            + optional(layout.error_code, 4)
            + optional(layout.next_rebalance, 8)
            + self.trailing_bytes.len()
    }

    /// The host maps as `layout` writes them (converted from another version's form if need be).
    fn host_section(&self, layout: Layout) -> Result<Vec<u8>, EncodeError> {
        let converted;
        let host_maps = if host_maps_form(&self.host_maps) == layout.host_maps {
            &*self.host_maps
        } else {
            converted = host_maps_in_form(layout.host_maps, &self.partitions_by_host(), &self.standby_partitions_by_host());
            &converted
        };
        let mut w = Writer::new(MSG, 0);
        match (layout.host_maps, host_maps) {
            (HostMapsForm::Absent, HostMaps::Plain(hosts)) if !hosts.is_empty() => {
                return Err(EncodeError::FieldNotInVersion { message: MSG, field: "partitionsByHost", version: self.version, since: 2 });
            }
            (HostMapsForm::Absent, _) => {}
            (_, HostMaps::Plain(hosts)) => {
                w.count("partitionsByHost", hosts.len())?;
                for h in hosts {
                    write_utf(&mut w, "partitionsByHost.host", &h.host)?;
                    w.i32(h.port);
                    write_partitions(&mut w, "partitionsByHost.partitions", &h.partitions)?;
                }
            }
            (_, HostMaps::Dictionary { topics, active, standby }) => {
                w.count("topicDictionary", topics.len())?;
                for (index, topic) in topics {
                    w.i32(*index);
                    write_utf(&mut w, "topicDictionary.topic", topic)?;
                }
                write_indexed_hosts(&mut w, "partitionsByHost", active)?;
                if layout.standby_host_map {
                    write_indexed_hosts(&mut w, "standbyPartitionsByHost", standby)?;
                }
            }
        }
        Ok(w.finish())
    }

    fn has_standby_hosts(&self) -> bool {
        matches!(&*self.host_maps, HostMaps::Dictionary { standby, .. } if !standby.is_empty())
    }

    /// Standby tasks and their partitions as Java reads them (a repeated task: the last wins).
    pub fn standby_tasks_map(&self) -> BTreeMap<TaskId, BTreeSet<TopicPartition>> {
        super::assignment_maps::standby_tasks_map(&self.standby_tasks)
    }

    /// The standby tasks (warm-ups included), sorted and each once: the keys of
    /// [`standby_tasks_map`](Self::standby_tasks_map) without building its partition sets.
    ///
    /// ```
    /// use std::collections::{BTreeMap, BTreeSet};
    /// use kstreams_assignor::wire::{AssignmentInfo, TaskId, TopicPartition};
    ///
    /// let standby: BTreeMap<TaskId, BTreeSet<TopicPartition>> =
    ///     [(TaskId::new(1, 0), [TopicPartition::new("in", 0)].into()), (TaskId::new(0, 2), [TopicPartition::new("in", 2)].into())].into();
    /// let info = AssignmentInfo::new(11).with_standby_tasks(standby);
    /// assert_eq!(info.standby_task_ids(), [TaskId::new(0, 2), TaskId::new(1, 0)]);
    /// ```
    pub fn standby_task_ids(&self) -> Vec<TaskId> {
        let tasks = || self.standby_tasks.iter().map(|s| &s.task);
        if self.standby_tasks.is_empty() {
            return Vec::new();
        }
        if tasks().all(|t| t.topology.is_none()) {
            // Put in order as the standby map's keys are: placed by table when they fill their
            // sub-topology × partition rectangle (a member's do), or sorted as integers.
            let task = |i: usize| &self.standby_tasks[i].task;
            let order = unnamed_order(self.standby_tasks.len(), &|i| (task(i).subtopology, task(i).partition, 0));
            return order.into_iter().map(|i| TaskId::new(task(i as usize).subtopology, task(i as usize).partition)).collect();
        }
        let mut tasks: Vec<TaskId> = tasks().cloned().collect();
        tasks.sort_unstable();
        tasks.dedup();
        tasks
    }

    /// Active partitions by host, as Java reads them (a repeated host: the last wins; an unknown
    /// dictionary index: topic `null`, as Java prints it).
    pub fn partitions_by_host(&self) -> PartitionsByHost {
        match &*self.host_maps {
            HostMaps::Plain(hosts) => {
                let mut topics = Topics::default();
                hosts
                    .iter()
                    .map(|h| (host_info(&h.host, h.port), h.partitions.iter().map(|p| topics.partition(p)).collect()))
                    .collect()
            }
            HostMaps::Dictionary { topics, active, .. } => resolve_indexed(topics, active),
        }
    }

    /// Standby partitions by host (v6+), as Java reads them.
    pub fn standby_partitions_by_host(&self) -> PartitionsByHost {
        match &*self.host_maps {
            HostMaps::Plain(_) => PartitionsByHost::new(),
            HostMaps::Dictionary { topics, standby, .. } => resolve_indexed(topics, standby),
        }
    }

    /// Every host of the host maps, active and standby: the keys of
    /// [`partitions_by_host`](Self::partitions_by_host) and
    /// [`standby_partitions_by_host`](Self::standby_partitions_by_host) together, without
    /// building their partition sets (a member checks its own endpoint against them).
    ///
    /// ```
    /// use kstreams_assignor::wire::{AssignmentInfo, HostInfo, TopicPartition};
    ///
    /// let (a, b) = (HostInfo::new("host-a", 8080), HostInfo::new("host-b", 8080));
    /// let info = AssignmentInfo::new(11)
    ///     .with_partitions_by_host([(b.clone(), [TopicPartition::new("in", 0)].into())].into())
    ///     .with_standby_partitions_by_host([(a.clone(), [TopicPartition::new("in", 0)].into())].into());
    /// assert_eq!(info.hosts(), [a, b].into());
    /// ```
    pub fn hosts(&self) -> BTreeSet<HostInfo> {
        // Each host's bytes converted once: a host usually serves active and standby tasks.
        let mut hosts: Vec<(&JavaString, i32)> = match &*self.host_maps {
            HostMaps::Plain(hosts) => hosts.iter().map(|h| (&h.host, h.port)).collect(),
            HostMaps::Dictionary { active, standby, .. } => active.iter().chain(standby).map(|h| (&h.host, h.port)).collect(),
        };
        hosts.sort_unstable();
        hosts.dedup();
        hosts.into_iter().map(|(host, port)| host_info(host, port)).collect()
    }
}

/// The layout an `AssignmentInfo` of `version` is written in; versions this crate cannot write
/// fail.
fn encoding_layout(version: i32) -> Result<Layout, EncodeError> {
    if !(1..=LATEST_SUPPORTED_VERSION).contains(&version) {
        return Err(EncodeError::UnsupportedVersion { message: MSG, version, min: 1, max: LATEST_SUPPORTED_VERSION });
    }
    Ok(Layout::of(version))
}

/// The host maps of the last message encoded through it, as bytes, for the next message that
/// shares them ([`AssignmentInfo::encode_shared`]).
#[derive(Debug, Default, Clone)]
pub struct SharedHostMaps {
    key: Option<(Arc<HostMaps>, i32)>,
    bytes: Vec<u8>,
}

impl SharedHostMaps {
    /// Holding the host maps of `info` at its version, written: the messages that share them
    /// then copy these bytes.
    pub(crate) fn of(info: &AssignmentInfo) -> Result<Self, EncodeError> {
        let mut shared = Self::default();
        shared.hold(info, encoding_layout(info.version)?)?;
        Ok(shared)
    }

    /// The length of the host maps held, as written.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Makes these the written host maps of `info`, at `layout`.
    fn hold(&mut self, info: &AssignmentInfo, layout: Layout) -> Result<(), EncodeError> {
        let held = self.key.as_ref().is_some_and(|(maps, v)| Arc::ptr_eq(maps, &info.host_maps) && *v == info.version);
        if !held {
            self.bytes = info.host_section(layout)?;
            self.key = Some((Arc::clone(&info.host_maps), info.version));
        }
        Ok(())
    }
}

fn host_maps_form(maps: &HostMaps) -> HostMapsForm {
    match maps {
        HostMaps::Plain(hosts) if hosts.is_empty() => HostMapsForm::Absent,
        HostMaps::Plain(_) => HostMapsForm::Plain,
        HostMaps::Dictionary { .. } => HostMapsForm::Dictionary,
    }
}

/// Builds host maps in `form`. The dictionary numbers topics in the order they first appear
/// (active hosts, then standby hosts, each in sorted order).
fn host_maps_in_form<'a>(form: HostMapsForm, active: &'a PartitionsByHost, standby: &'a PartitionsByHost) -> HostMaps {
    let plain = |map: &PartitionsByHost| -> Vec<HostPartitions> {
        map.iter()
            .map(|(h, parts)| HostPartitions {
                host: JavaString::new(&h.host),
                port: h.port,
                partitions: parts.iter().map(WirePartition::from).collect(),
            })
            .collect()
    };
    match form {
        HostMapsForm::Absent | HostMapsForm::Plain => HostMaps::Plain(plain(active)),
        HostMapsForm::Dictionary => {
            let mut index: BTreeMap<&str, i32> = BTreeMap::new();
            let mut topics = Vec::new();
            let mut indexed = |map: &'a PartitionsByHost| -> Vec<IndexedHostPartitions> {
                map.iter()
                    .map(|(h, parts)| IndexedHostPartitions {
                        host: JavaString::new(&h.host),
                        port: h.port,
                        partitions: parts
                            .iter()
                            .map(|tp| {
                                let next = topics.len() as i32;
                                let i = *index.entry(&*tp.topic).or_insert_with(|| {
                                    topics.push((next, JavaString::new(&tp.topic)));
                                    next
                                });
                                (i, tp.partition)
                            })
                            .collect(),
                    })
                    .collect()
            };
            let active = indexed(active);
            let standby = indexed(standby);
            HostMaps::Dictionary { topics, active, standby }
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's size hint is the encoded length of every Java-written fixture: one allocation.
    #[test]
    fn the_size_hint_is_the_encoded_length_of_every_fixture() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire/assignment");
        let mut checked = 0;
        let versions = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
        for path in versions.flat_map(|v| std::fs::read_dir(v).unwrap().map(|e| e.unwrap().path())) {
            // The malformed fixtures do not decode; version 0 does not encode.
            let Ok(info) = AssignmentInfo::decode(&std::fs::read(&path).unwrap()) else { continue };
            let Ok(encoded) = info.encode() else { continue };
            let layout = Layout::of(info.version);
            let hosts = info.host_section(layout).unwrap().len();
            let named = info.active_tasks.iter().chain(info.standby_tasks.iter().map(|s| &s.task)).any(|t| t.topology.is_some());
            if named {
                assert!(info.encoded_len_hint(layout, hosts) >= encoded.len(), "{}", path.display());
            } else {
                assert_eq!(info.encoded_len_hint(layout, hosts), encoded.len(), "{}", path.display());
            }
            checked += 1;
        }
        assert!(checked >= 90, "only {checked} fixtures under {}", dir.display());
    }

    /// The standby task ids are the keys of the standby map, the hosts those of the host maps:
    /// on every fixture, and with tasks repeated, out of order, negative and named.
    #[test]
    fn the_standby_task_ids_and_the_hosts_are_the_maps_keys() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire/assignment");
        let versions = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
        let mut infos: Vec<AssignmentInfo> = versions
            .flat_map(|v| std::fs::read_dir(v).unwrap().map(|e| e.unwrap().path()))
            .filter_map(|path| AssignmentInfo::decode(&std::fs::read(path).unwrap()).ok())
            .collect();
        let task = |t: TaskId| StandbyTask { task: t, partitions: WirePartitions::default() };
        let mut odd = AssignmentInfo::new(11);
        odd.standby_tasks = [(2, 0), (-1, 5), (2, 0), (0, -3), (0, 7)].into_iter().map(|(s, p)| task(TaskId::new(s, p))).collect();
        infos.push(odd.clone());
        odd.standby_tasks.push(task(TaskId::named("b", 0, 1)));
        odd.standby_tasks.push(task(TaskId::named("a", 3, 1)));
        infos.push(odd);
        for info in &infos {
            assert_eq!(info.standby_task_ids(), info.standby_tasks_map().into_keys().collect::<Vec<_>>());
            let hosts: BTreeSet<HostInfo> = info.partitions_by_host().into_keys().chain(info.standby_partitions_by_host().into_keys()).collect();
            assert_eq!(info.hosts(), hosts);
        }
        assert!(infos.iter().filter(|i| i.standby_tasks.len() > 1).count() >= 3);
    }
}
