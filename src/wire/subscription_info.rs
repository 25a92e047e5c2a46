//! `SubscriptionInfo`: what a Kafka Streams member tells the group leader (the `userData` of its
//! JoinGroup subscription). Versions 1–11, Kafka's generated-message encoding.

use std::collections::{BTreeMap, BTreeSet};

use super::codec::{Reader, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};
use super::offset_sums::OffsetSums;
use super::subscription_parts::{read_client_tags, read_flat_sums, read_grouped_sums, read_task_pairs, write_task_pairs};
use super::types::{AssignorError, LATEST_OFFSET, ProcessId, TaskId, UNKNOWN_OFFSET_SUM};
use super::{LATEST_SUPPORTED_VERSION, MIN_NAMED_TOPOLOGY_VERSION};

const MSG: MessageKind = MessageKind::SubscriptionInfo;

pub use super::subscription_parts::{ClientTag, SubtopologyOffsetSums, TaskOffsetSum};

/// `latestSupportedVersion` of a v1 or v2 subscription, which does not carry the field.
pub const UNKNOWN_VERSION: i32 = -1;

/// How a version lays out the task states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TasksForm {
    /// v1–6: previous active and standby task sets.
    Sets,
    /// v7–9: offset sums grouped by sub-topology.
    BySubtopology,
    /// v10+: one offset sum per task, with the named topology.
    Flat,
}

/// Which fields a version carries, in wire order. The single source of truth for encode, decode
/// and validation.
#[derive(Debug, Clone, Copy)]
struct Layout {
    latest_supported_version: bool,
    user_end_point: bool,
    tasks: TasksForm,
    unique_field: bool,
    error_code: bool,
    client_tags: bool,
}

impl Layout {
    /// The layout of a known version (1..=11).
    const fn of(version: i32) -> Self {
        Self {
            latest_supported_version: version >= 3,
            user_end_point: version >= 2,
            tasks: if version >= 10 {
                TasksForm::Flat
            } else if version >= 7 {
                TasksForm::BySubtopology
            } else {
                TasksForm::Sets
            },
            unique_field: version >= 8,
            error_code: version >= 9,
            client_tags: version >= 11,
        }
    }
}

/// The task states a member reports, in the form its version carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStates {
    /// v1–6: the tasks the member ran as active (`prevTasks`) and the other tasks it has state
    /// for (`standbyTasks`), in wire order.
    Sets {
        /// Previously owned active tasks.
        prev: Vec<TaskId>,
        /// Other tasks with local state.
        standby: Vec<TaskId>,
    },
    /// v7–9: offset sums grouped by sub-topology, in wire order.
    BySubtopology(Vec<SubtopologyOffsetSums>),
    /// v10+: one offset sum per task, in wire order.
    Flat(Vec<TaskOffsetSum>),
}

/// Two client tags with the same key. Java's leader fails its rebalance on this
/// (`IllegalStateException: Duplicate key …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("duplicate client tag key `{key}` (values `{first}` and `{second}`)")]
pub struct DuplicateClientTag {
    /// The repeated key.
    pub key: String,
    /// The first value.
    pub first: String,
    /// The second value.
    pub second: String,
}

/// A member's subscription metadata, exactly as it travels: collections keep wire order and
/// duplicates, strings keep their raw bytes, so that [`SubscriptionInfo::encode`] of a decoded
/// value gives back the same bytes. The `*_map`/`*_set` accessors give the view Java's leader
/// works with.
///
/// ```
/// use kstreams_assignor::wire::{ProcessId, SubscriptionInfo, TaskId, LATEST_OFFSET};
///
/// let info = SubscriptionInfo::new(11, ProcessId::random())
///     .with_user_end_point("host-1:8080")
///     .with_task_offset_sums([(TaskId::new(0, 0), LATEST_OFFSET), (TaskId::new(0, 1), 1_234)])
///     .with_client_tags([("zone", "eu-1a")]);
/// let bytes = info.encode().unwrap();
/// let back = SubscriptionInfo::decode(&bytes).unwrap();
/// assert_eq!(back, info);
/// assert_eq!(back.prev_tasks(), [TaskId::new(0, 0)].into());
/// assert_eq!(back.task_offset_sums()[&TaskId::new(0, 1)], 1_234);
///
/// // The same state at version 6 travels as task sets; Java reads standbys back as -3.
/// let v6 = SubscriptionInfo::decode(&info.clone().with_client_tags::<&str>([]).with_version(6).encode().unwrap()).unwrap();
/// assert_eq!(v6.task_offset_sums()[&TaskId::new(0, 1)], -3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionInfo {
    /// The version the member used (the layout of the rest).
    pub version: i32,
    /// The newest version the member can speak (v3+; [`UNKNOWN_VERSION`] for v1–2).
    pub latest_supported_version: i32,
    /// The member's process id.
    pub process_id: ProcessId,
    /// `application.server` as raw UTF-8 (v2+); empty means none.
    pub user_end_point: Vec<u8>,
    /// The member's task states.
    pub tasks: TaskStates,
    /// A counter that makes each rejoin's metadata differ (v8+); the leader ignores it.
    pub unique_field: i8,
    /// The member's sticky assignor error code (v9+).
    pub error_code: AssignorError,
    /// Client tags (v11+), in wire order.
    pub client_tags: Vec<ClientTag>,
    /// Bytes after the last field, which Java ignores; kept for a byte-exact re-encode.
    pub trailing_bytes: Vec<u8>,
}

impl SubscriptionInfo {
    /// An empty subscription at `version` from `process_id`, with `latestSupportedVersion` set as
    /// a current Java member sets it (11, or unknown for v1–2).
    pub fn new(version: i32, process_id: ProcessId) -> Self {
        let latest_supported_version = if version >= 3 { LATEST_SUPPORTED_VERSION } else { UNKNOWN_VERSION };
        let tasks = match Layout::of(version).tasks {
            TasksForm::Sets => TaskStates::Sets { prev: Vec::new(), standby: Vec::new() },
            TasksForm::BySubtopology => TaskStates::BySubtopology(Vec::new()),
            TasksForm::Flat => TaskStates::Flat(Vec::new()),
        };
        Self {
            version,
            latest_supported_version,
            process_id,
            user_end_point: Vec::new(),
            tasks,
            unique_field: 0,
            error_code: AssignorError::NONE,
            client_tags: Vec::new(),
            trailing_bytes: Vec::new(),
        }
    }

    /// Sets `application.server`.
    pub fn with_user_end_point(mut self, endpoint: &str) -> Self {
        self.user_end_point = endpoint.as_bytes().to_vec();
        self
    }

    /// Sets the task offset sums, in task order, in the form the current version carries
    /// (for v1–6: [`LATEST_OFFSET`] → previous active task, anything else → standby task).
    pub fn with_task_offset_sums(mut self, sums: impl IntoIterator<Item = (TaskId, i64)>) -> Self {
        let sums: BTreeMap<TaskId, i64> = sums.into_iter().collect();
        self.tasks = tasks_in_form(Layout::of(self.version).tasks, &sums);
        self
    }

    /// Sets `uniqueField`.
    pub fn with_unique_field(mut self, unique_field: i8) -> Self {
        self.unique_field = unique_field;
        self
    }

    /// Sets the error code.
    pub fn with_error_code(mut self, error_code: AssignorError) -> Self {
        self.error_code = error_code;
        self
    }

    /// Sets the client tags, in key order.
    pub fn with_client_tags<S: AsRef<str>>(mut self, tags: impl IntoIterator<Item = (S, S)>) -> Self {
        let tags: BTreeMap<String, String> =
            tags.into_iter().map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned())).collect();
        self.client_tags =
            tags.into_iter().map(|(k, v)| ClientTag { key: k.into_bytes(), value: v.into_bytes() }).collect();
        self
    }

    /// The same subscription at another version: tasks converted to that version's form (as
    /// Java converts them), `latestSupportedVersion` set as a Java member sets it.
    pub fn with_version(mut self, version: i32) -> Self {
        let sums = self.task_offset_sums();
        self.tasks = tasks_in_form(Layout::of(version).tasks, &sums);
        self.latest_supported_version = if version >= 3 { LATEST_SUPPORTED_VERSION } else { UNKNOWN_VERSION };
        self.version = version;
        self
    }

    /// Decodes as Java's `SubscriptionInfo.decode` does, leniencies included. See
    /// [`SubscriptionInfo::decode_reporting`] to learn where the input was not canonical.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_reporting(bytes).map(|(info, _)| info)
    }

    /// Decodes, and lists the places where Java's reader was lenient.
    pub fn decode_reporting(bytes: &[u8]) -> Result<(Self, Vec<Lenience>), DecodeError> {
        let mut r = Reader::new(bytes, MSG);
        let version = r.i32("version")?;
        if version > LATEST_SUPPORTED_VERSION {
            // Version probing: a member from the future. Java reads the two version fields only.
            let lsv_at = r.position();
            let latest_supported_version = r.i32("latestSupportedVersion")?;
            if latest_supported_version == UNKNOWN_VERSION || version > latest_supported_version {
                return Err(inconsistent(&r, lsv_at, version, latest_supported_version));
            }
            r.note(Lenience::FutureVersion { version });
            let mut info = Self::new(version, ProcessId::NIL);
            info.latest_supported_version = latest_supported_version;
            info.trailing_bytes = r.trailing().to_vec();
            return Ok((info, r.finish()));
        }
        if version < 1 {
            return Err(r.error_at(
                0,
                "version",
                DecodeErrorKind::UnsupportedVersion { version, min: 1, max: LATEST_SUPPORTED_VERSION },
            ));
        }
        let layout = Layout::of(version);
        let lsv_at = r.position();
        let latest_supported_version =
            if layout.latest_supported_version { r.i32("latestSupportedVersion")? } else { UNKNOWN_VERSION };
        let process_id = ProcessId(r.uuid("processId")?);
        let mut tasks = match layout.tasks {
            TasksForm::Sets => {
                let prev = read_task_pairs(&mut r, "prevTasks")?;
                let standby = read_task_pairs(&mut r, "standbyTasks")?;
                Some(TaskStates::Sets { prev, standby })
            }
            _ => None,
        };
        let user_end_point = if layout.user_end_point {
            let at = r.position();
            let bytes = r.bytes_i32("userEndPoint")?;
            r.check_utf8(at, "userEndPoint", bytes);
            bytes.to_vec()
        } else {
            Vec::new()
        };
        match layout.tasks {
            TasksForm::Sets => {}
            TasksForm::BySubtopology => tasks = Some(TaskStates::BySubtopology(read_grouped_sums(&mut r)?)),
            TasksForm::Flat => tasks = Some(TaskStates::Flat(read_flat_sums(&mut r)?)),
        }
        let unique_field = if layout.unique_field { r.i8("uniqueField")? } else { 0 };
        let error_code = AssignorError(if layout.error_code { r.i32("errorCode")? } else { 0 });
        let client_tags = if layout.client_tags { read_client_tags(&mut r)? } else { Vec::new() };
        if latest_supported_version == UNKNOWN_VERSION && version > 2
            || latest_supported_version != UNKNOWN_VERSION && version > latest_supported_version
        {
            return Err(inconsistent(&r, lsv_at, version, latest_supported_version));
        }
        let trailing_bytes = r.trailing().to_vec();
        let info = Self {
            version,
            latest_supported_version,
            process_id,
            user_end_point,
            tasks: tasks.expect("every layout has a task form"),
            unique_field,
            error_code,
            client_tags,
            trailing_bytes,
        };
        Ok((info, r.finish()))
    }

    /// Encodes at [`SubscriptionInfo::version`]. Tasks held in another version's form are
    /// converted as Java converts them. Fails on a field the version cannot carry, on a named
    /// topology before v10, and on strings too long for their length prefix.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let version = self.version;
        let mut w = Writer::new(MSG, self.size_hint());
        if version > LATEST_SUPPORTED_VERSION {
            self.check_future_stub()?;
            w.i32(version);
            w.i32(self.latest_supported_version);
            w.raw(&self.trailing_bytes);
            return Ok(w.finish());
        }
        if version < 1 {
            return Err(EncodeError::UnsupportedVersion { message: MSG, version, min: 1, max: LATEST_SUPPORTED_VERSION });
        }
        let layout = Layout::of(version);
        self.check_fields(&layout)?;
        w.i32(version);
        if layout.latest_supported_version {
            w.i32(self.latest_supported_version);
        }
        w.uuid(&self.process_id.0);
        let converted;
        let tasks = if self.tasks_form() == layout.tasks {
            &self.tasks
        } else {
            converted = tasks_in_form(layout.tasks, &self.task_offset_sums());
            &converted
        };
        if let TaskStates::Sets { prev, standby } = tasks {
            write_task_pairs(&mut w, "prevTasks", prev)?;
            write_task_pairs(&mut w, "standbyTasks", standby)?;
        }
        if layout.user_end_point {
            w.bytes_i32("userEndPoint", &self.user_end_point)?;
        }
        match tasks {
            TaskStates::Sets { .. } => {}
            TaskStates::BySubtopology(groups) => {
                w.count("taskOffsetSums", groups.len())?;
                for g in groups {
                    w.i32(g.subtopology);
                    w.count("partitionToOffsetSum", g.partitions.len())?;
                    for &(partition, sum) in &g.partitions {
                        w.i32(partition);
                        w.i64(sum);
                    }
                }
            }
            TaskStates::Flat(entries) => {
                w.count("taskOffsetSums", entries.len())?;
                let head = |e: &TaskOffsetSum| {
                    let mut head = [0xff; 18];
                    head[..4].copy_from_slice(&e.subtopology.to_be_bytes());
                    head[4..8].copy_from_slice(&e.partition.to_be_bytes());
                    head[8..16].copy_from_slice(&e.offset_sum.to_be_bytes());
                    head
                };
                // 18 bytes each, the null name's length (-1) included, as if no task were named;
                // written again if one is (found in the same pass).
                let (start, mut named) = (w.buf.len(), false);
                w.records(entries, |e| {
                    named |= e.named_topology.is_some();
                    head(e)
                });
                if named {
                    w.buf.truncate(start);
                    for e in entries {
                        w.raw(&head(e)[..16]);
                        w.nullable_string_i16("namedTopology", e.named_topology.as_deref())?;
                    }
                }
            }
        }
        if layout.unique_field {
            w.i8(self.unique_field);
        }
        if layout.error_code {
            w.i32(self.error_code.0);
        }
        if layout.client_tags {
            w.count("clientTags", self.client_tags.len())?;
            for tag in &self.client_tags {
                w.bytes_i32("clientTags.key", &tag.key)?;
                w.bytes_i32("clientTags.value", &tag.value)?;
            }
        }
        w.raw(&self.trailing_bytes);
        Ok(w.finish())
    }

    /// The encoded length when the tasks are held in the version's form and no task is named
    /// (the writer's capacity: one allocation, no regrowth).
    fn size_hint(&self) -> usize {
        let tasks = match &self.tasks {
            TaskStates::Sets { prev, standby } => 8 + 8 * (prev.len() + standby.len()),
            TaskStates::BySubtopology(g) => 4 + g.iter().map(|g| 8 + 12 * g.partitions.len()).sum::<usize>(),
            // Named topologies are rare; their names grow the buffer.
            TaskStates::Flat(e) => 4 + 18 * e.len(),
        };
        let tags: usize = 4 + self.client_tags.iter().map(|t| 8 + t.key.len() + t.value.len()).sum::<usize>();
        // version, latestSupportedVersion, processId, the endpoint's length, uniqueField, errorCode.
        let fixed = 4 + 4 + 16 + 4 + 1 + 4;
        fixed + tasks + tags + self.user_end_point.len() + self.trailing_bytes.len()
    }

    fn tasks_form(&self) -> TasksForm {
        match self.tasks {
            TaskStates::Sets { .. } => TasksForm::Sets,
            TaskStates::BySubtopology(_) => TasksForm::BySubtopology,
            TaskStates::Flat(_) => TasksForm::Flat,
        }
    }

    fn check_fields(&self, layout: &Layout) -> Result<(), EncodeError> {
        let version = self.version;
        let missing = |field, since| Err(EncodeError::FieldNotInVersion { message: MSG, field, version, since });
        if !layout.latest_supported_version && self.latest_supported_version != UNKNOWN_VERSION {
            return missing("latestSupportedVersion", 3);
        }
        if !layout.user_end_point && !self.user_end_point.is_empty() {
            return missing("userEndPoint", 2);
        }
        if !layout.unique_field && self.unique_field != 0 {
            return missing("uniqueField", 8);
        }
        if !layout.error_code && !self.error_code.is_none() {
            return missing("errorCode", 9);
        }
        if !layout.client_tags && !self.client_tags.is_empty() {
            return missing("clientTags", 11);
        }
        if version < MIN_NAMED_TOPOLOGY_VERSION && self.has_named_topology() {
            return Err(EncodeError::NamedTopologyNotSupported { message: MSG, version });
        }
        Ok(())
    }

    fn check_future_stub(&self) -> Result<(), EncodeError> {
        let empty = Self::new(self.version, ProcessId::NIL);
        let stub = Self {
            latest_supported_version: self.latest_supported_version,
            trailing_bytes: self.trailing_bytes.clone(),
            ..empty
        };
        if *self == stub {
            Ok(())
        } else {
            Err(EncodeError::UnsupportedVersion { message: MSG, version: self.version, min: 1, max: LATEST_SUPPORTED_VERSION })
        }
    }

    fn has_named_topology(&self) -> bool {
        match &self.tasks {
            TaskStates::Sets { prev, standby } => prev.iter().chain(standby).any(|t| t.topology.is_some()),
            TaskStates::BySubtopology(_) => false,
            TaskStates::Flat(entries) => entries.iter().any(|e| e.named_topology.as_ref().is_some_and(|n| !n.is_empty())),
        }
    }

    /// The offset sum per task, as Java's leader reads it: v7+ in wire order with the last
    /// duplicate winning; v1–6 previous active tasks as [`LATEST_OFFSET`], then standby tasks as
    /// [`UNKNOWN_OFFSET_SUM`] (so a task in both sets ends as unknown). Sorted by task.
    pub fn offset_sums(&self) -> OffsetSums {
        match &self.tasks {
            TaskStates::Sets { prev, standby } => prev
                .iter()
                .map(|t| (t.clone(), LATEST_OFFSET))
                .chain(standby.iter().map(|t| (t.clone(), UNKNOWN_OFFSET_SUM)))
                .collect(),
            TaskStates::BySubtopology(groups) => {
                let flat: Vec<(i32, i32, i64)> =
                    groups.iter().flat_map(|g| g.partitions.iter().map(|&(p, sum)| (g.subtopology, p, sum))).collect();
                OffsetSums::from_unnamed(flat.len(), |i| flat[i])
            }
            TaskStates::Flat(e) if e.iter().all(|e| e.named_topology.as_ref().is_none_or(Vec::is_empty)) => {
                OffsetSums::from_unnamed(e.len(), |i| (e[i].subtopology, e[i].partition, e[i].offset_sum))
            }
            TaskStates::Flat(entries) => entries.iter().map(|e| (e.task_id(), e.offset_sum)).collect(),
        }
    }

    /// [`SubscriptionInfo::offset_sums`] as a `BTreeMap`.
    pub fn task_offset_sums(&self) -> BTreeMap<TaskId, i64> {
        self.offset_sums().into_map()
    }

    /// Tasks the member ran as active tasks (offset sum [`LATEST_OFFSET`]).
    pub fn prev_tasks(&self) -> BTreeSet<TaskId> {
        match &self.tasks {
            TaskStates::Sets { prev, .. } => prev.iter().cloned().collect(),
            _ => self.offset_sums().into_iter().filter(|&(_, s)| s == LATEST_OFFSET).map(|(t, _)| t).collect(),
        }
    }

    /// Other tasks the member has state for.
    pub fn standby_tasks(&self) -> BTreeSet<TaskId> {
        match &self.tasks {
            TaskStates::Sets { standby, .. } => standby.iter().cloned().collect(),
            _ => self.offset_sums().into_iter().filter(|&(_, s)| s != LATEST_OFFSET).map(|(t, _)| t).collect(),
        }
    }

    /// `application.server`, or `None` when empty (Java: null). Invalid UTF-8 is replaced.
    pub fn user_end_point(&self) -> Option<String> {
        (!self.user_end_point.is_empty()).then(|| String::from_utf8_lossy(&self.user_end_point).into_owned())
    }

    /// The client tags as Java's leader reads them; a repeated key is an error, as in Java.
    pub fn client_tags_map(&self) -> Result<BTreeMap<String, String>, DuplicateClientTag> {
        let mut map = BTreeMap::new();
        for tag in &self.client_tags {
            let key = String::from_utf8_lossy(&tag.key).into_owned();
            let value = String::from_utf8_lossy(&tag.value).into_owned();
            if let Some(first) = map.get(&key) {
                return Err(DuplicateClientTag { key, first: String::clone(first), second: value });
            }
            map.insert(key, value);
        }
        Ok(map)
    }
}

fn inconsistent(r: &Reader<'_>, at: usize, version: i32, latest_supported: i32) -> DecodeError {
    r.error_at(at, "latestSupportedVersion", DecodeErrorKind::InconsistentVersions { version, latest_supported })
}

fn tasks_in_form(form: TasksForm, sums: &BTreeMap<TaskId, i64>) -> TaskStates {
    // Only the flat form carries topology names; keep them so that encoding at an older version
    // refuses them instead of dropping them.
    let form = if sums.keys().any(|t| t.topology.is_some()) { TasksForm::Flat } else { form };
    match form {
        TasksForm::Sets => {
            let (prev, standby): (Vec<_>, Vec<_>) = sums.iter().partition(|&(_, &s)| s == LATEST_OFFSET);
            TaskStates::Sets {
                prev: prev.into_iter().map(|(t, _)| t.clone()).collect(),
                standby: standby.into_iter().map(|(t, _)| t.clone()).collect(),
            }
        }
        TasksForm::BySubtopology => {
            // Sorted task ids keep each sub-topology's tasks together.
            let mut groups: Vec<SubtopologyOffsetSums> = Vec::new();
            for (task, &sum) in sums {
                match groups.last_mut() {
                    Some(g) if g.subtopology == task.subtopology => g.partitions.push((task.partition, sum)),
                    _ => groups.push(SubtopologyOffsetSums { subtopology: task.subtopology, partitions: vec![(task.partition, sum)] }),
                }
            }
            TaskStates::BySubtopology(groups)
        }
        TasksForm::Flat => TaskStates::Flat(
            sums.iter()
                .map(|(t, &offset_sum)| TaskOffsetSum {
                    subtopology: t.subtopology,
                    partition: t.partition,
                    offset_sum,
                    named_topology: t.topology.as_ref().map(|n| n.as_bytes().to_vec()),
                })
                .collect(),
        ),
    }
}
