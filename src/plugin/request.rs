//! The request a JVM host sends for one rebalance (layout in `docs/plugin.md`): decoded from
//! untrusted bytes with bounded reads, and encoded for tests, benches and the fuzzer's seeds.

use uuid::Uuid;

use super::PluginError;
use crate::wire::{ProcessId, TaskId};

/// The one version of the request and response layout.
pub const VERSION: i32 = 1;

/// Flag bit 0: return the engine input as `assign --input` JSON.
const FLAG_DUMP: i8 = 1;
/// Partition kind bits.
const KIND_SOURCE: i8 = 1;
const KIND_CHANGELOG: i8 = 2;

/// One rebalance as the host sees it: KIP-924's `ApplicationState` and the configs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// `application.id`: the key of the memory between rebalances.
    pub application_id: String,
    /// The host's wall clock, in milliseconds since the epoch.
    pub now_ms: i64,
    /// Whether the response carries the engine input as JSON (the support dump).
    pub dump: bool,
    /// Assignment configs under Kafka's dotted keys, as strings.
    pub configs: Vec<(String, String)>,
    /// Every task of the topology.
    pub tasks: Vec<TaskRecord>,
    /// Every client (Kafka Streams instance) of the group.
    pub clients: Vec<ClientRecord>,
}

/// One task (`TaskInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task.
    pub id: TaskId,
    /// Whether it has state stores with changelogs.
    pub stateful: bool,
    /// For a stateful task, the lag of a client that reported no state for it, which Kafka
    /// computes as the task's changelog end-offset sum; `None` when every client reported it
    /// (or the task is stateless).
    pub unreported_lag: Option<i64>,
    /// Its partitions with the racks of their replicas (empty unless rack-aware assignment is on).
    pub partitions: Vec<PartitionRecord>,
}

/// One partition of a task (`TaskTopicPartition`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartitionRecord {
    /// An input (source) partition.
    pub source: bool,
    /// A changelog partition.
    pub changelog: bool,
    /// The racks of its replicas; `None` when the host does not know them.
    pub racks: Option<Vec<String>>,
}

/// One client (`KafkaStreamsState`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientRecord {
    /// Its process id.
    pub process_id: ProcessId,
    /// Its stream threads (`numProcessingThreads`).
    pub threads: i32,
    /// Its rack (`client.rack`).
    pub rack_id: Option<String>,
    /// Its client tags.
    pub client_tags: Vec<(String, String)>,
    /// Tasks it ran as active before this rebalance.
    pub previous_active: Vec<TaskId>,
    /// Tasks it held state for without running them as active.
    pub previous_standby: Vec<TaskId>,
    /// Its lags (`lagFor`) on the stateful tasks among its previous active and standby tasks
    /// (on any other task its lag is the task's `unreported_lag`); `None` when the host could
    /// not compute lags (changelog end offsets not fetched).
    pub lags: Option<Vec<(TaskId, i64)>>,
}

impl TaskRecord {
    /// A task without partition racks, reported by every client if stateful.
    pub fn new(id: TaskId, stateful: bool) -> Self {
        Self { id, stateful, unreported_lag: None, partitions: Vec::new() }
    }

    /// Sets the lag of the clients that reported no state for the task.
    pub fn with_unreported_lag(mut self, lag: i64) -> Self {
        self.unreported_lag = Some(lag);
        self
    }

    /// Adds a partition.
    pub fn with_partition(mut self, source: bool, changelog: bool, racks: Option<Vec<String>>) -> Self {
        self.partitions.push(PartitionRecord { source, changelog, racks });
        self
    }
}

impl ClientRecord {
    /// A client with no previous tasks, no rack, no tags and no lags reported.
    pub fn new(process_id: ProcessId, threads: i32) -> Self {
        Self {
            process_id,
            threads,
            rack_id: None,
            client_tags: Vec::new(),
            previous_active: Vec::new(),
            previous_standby: Vec::new(),
            lags: Some(Vec::new()),
        }
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b.try_into().expect("4 bytes"))
}

fn be_i64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b.try_into().expect("8 bytes"))
}

/// Bounded reads: every read checks the bytes left, every count is checked against them before
/// anything is allocated.
pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn malformed(&self, at: usize, field: &'static str, reason: String) -> PluginError {
        PluginError::Malformed { field, offset: at, reason }
    }

    pub(super) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], PluginError> {
        match self.buf[self.pos..].split_at_checked(n) {
            Some((head, _)) => {
                self.pos += n;
                Ok(head)
            }
            None => {
                let left = self.buf.len() - self.pos;
                Err(self.malformed(self.pos, field, format!("needed {n} byte(s), only {left} left")))
            }
        }
    }

    pub(super) fn i8(&mut self, field: &'static str) -> Result<i8, PluginError> {
        Ok(self.take(1, field)?[0] as i8)
    }

    pub(super) fn i32(&mut self, field: &'static str) -> Result<i32, PluginError> {
        Ok(i32::from_be_bytes(self.take(4, field)?.try_into().expect("4 bytes")))
    }

    pub(super) fn i64(&mut self, field: &'static str) -> Result<i64, PluginError> {
        Ok(i64::from_be_bytes(self.take(8, field)?.try_into().expect("8 bytes")))
    }

    /// A count of elements of at least `min_size` bytes each; `-1` is `None` where `nullable`.
    fn count_or_null(&mut self, field: &'static str, min_size: usize, nullable: bool) -> Result<Option<usize>, PluginError> {
        let at = self.pos;
        let n = self.i32(field)?;
        if n == -1 && nullable {
            return Ok(None);
        }
        let n = usize::try_from(n).map_err(|_| self.malformed(at, field, format!("negative count {n}")))?;
        let left = self.buf.len() - self.pos;
        if n.saturating_mul(min_size) > left {
            return Err(self.malformed(at, field, format!("count of {n} element(s) exceeds the {left} byte(s) left")));
        }
        Ok(Some(n))
    }

    pub(super) fn count(&mut self, field: &'static str, min_size: usize) -> Result<usize, PluginError> {
        Ok(self.count_or_null(field, min_size, false)?.expect("not nullable"))
    }

    pub(super) fn string_or_null(&mut self, field: &'static str, nullable: bool) -> Result<Option<String>, PluginError> {
        let Some(len) = self.count_or_null(field, 1, nullable)? else { return Ok(None) };
        let at = self.pos;
        let bytes = self.take(len, field)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(e) => Err(self.malformed(at + e.valid_up_to(), field, "not UTF-8".to_owned())),
        }
    }

    pub(super) fn string(&mut self, field: &'static str) -> Result<String, PluginError> {
        Ok(self.string_or_null(field, false)?.expect("not nullable"))
    }

    fn task(&mut self, field: &'static str) -> Result<TaskId, PluginError> {
        Ok(TaskId::new(self.i32(field)?, self.i32(field)?))
    }

    /// A list of tasks, read in one bounds check.
    fn tasks(&mut self, field: &'static str) -> Result<Vec<TaskId>, PluginError> {
        let n = self.count(field, 8)?;
        Ok(self.take(n * 8, field)?.chunks_exact(8).map(|b| TaskId::new(be_i32(&b[..4]), be_i32(&b[4..]))).collect())
    }

    /// A list of (task, lag) pairs, read in one bounds check; `-1` is `None`.
    fn lags(&mut self, field: &'static str) -> Result<Option<Vec<(TaskId, i64)>>, PluginError> {
        let Some(n) = self.count_or_null(field, 16, true)? else { return Ok(None) };
        let bytes = self.take(n * 16, field)?;
        Ok(Some(bytes.chunks_exact(16).map(|b| (TaskId::new(be_i32(&b[..4]), be_i32(&b[4..8])), be_i64(&b[8..]))).collect()))
    }

    pub(super) fn pairs(&mut self, field: &'static str) -> Result<Vec<(String, String)>, PluginError> {
        let n = self.count(field, 8)?;
        (0..n).map(|_| Ok((self.string(field)?, self.string(field)?))).collect()
    }

    pub(super) fn boolean(&mut self, field: &'static str) -> Result<bool, PluginError> {
        let at = self.pos;
        match self.i8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.malformed(at, field, format!("{b} is not a boolean (0 or 1)"))),
        }
    }
}

impl Request {
    /// Decodes a request, refusing anything malformed with the field and byte offset.
    ///
    /// ```
    /// use kstreams_assignor::plugin::{PluginError, Request};
    ///
    /// let err = Request::decode(&[0, 0, 0, 1, 0, 0, 0x7f, 0xff]).unwrap_err();
    /// assert!(matches!(err, PluginError::Malformed { field: "applicationId", offset: 4, .. }));
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Self, PluginError> {
        let mut r = Reader { buf: bytes, pos: 0 };
        let version = r.i32("version")?;
        if version != VERSION {
            return Err(PluginError::Version { version });
        }
        let application_id = r.string("applicationId")?;
        let now_ms = r.i64("nowMs")?;
        let flags = r.i8("flags")?;
        let configs = r.pairs("configs")?;
        let n_tasks = r.count("tasks", 21)?;
        let mut tasks = Vec::with_capacity(n_tasks);
        for _ in 0..n_tasks {
            let id = r.task("task")?;
            let stateful = r.boolean("stateful")?;
            let at = r.pos;
            let unreported_lag = match r.i64("unreportedLag")? {
                -1 => None,
                lag if lag >= 0 => Some(lag),
                lag => return Err(r.malformed(at, "unreportedLag", format!("{lag} is neither a lag nor -1"))),
            };
            let n_parts = r.count("partitions", 5)?;
            let mut partitions = Vec::with_capacity(n_parts);
            for _ in 0..n_parts {
                let kind = r.i8("partitionKind")?;
                let racks = match r.count_or_null("racks", 4, true)? {
                    None => None,
                    Some(n) => Some((0..n).map(|_| r.string("rack")).collect::<Result<_, _>>()?),
                };
                partitions.push(PartitionRecord { source: kind & KIND_SOURCE != 0, changelog: kind & KIND_CHANGELOG != 0, racks });
            }
            tasks.push(TaskRecord { id, stateful, unreported_lag, partitions });
        }
        let n_clients = r.count("clients", 40)?;
        let mut clients = Vec::with_capacity(n_clients);
        for _ in 0..n_clients {
            let msb = r.i64("processId")? as u64;
            let lsb = r.i64("processId")? as u64;
            let process_id = ProcessId(Uuid::from_u64_pair(msb, lsb));
            let threads = r.i32("threads")?;
            let rack_id = r.string_or_null("rackId", true)?;
            let client_tags = r.pairs("clientTags")?;
            let previous_active = r.tasks("previousActiveTasks")?;
            let previous_standby = r.tasks("previousStandbyTasks")?;
            let lags = r.lags("lags")?;
            clients.push(ClientRecord { process_id, threads, rack_id, client_tags, previous_active, previous_standby, lags });
        }
        if r.pos != bytes.len() {
            return Err(r.malformed(r.pos, "end", format!("{} byte(s) after the last client", bytes.len() - r.pos)));
        }
        Ok(Self { application_id, now_ms, dump: flags & FLAG_DUMP != 0, configs, tasks, clients })
    }

    /// Encodes the request as a host would.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.i32(VERSION);
        w.string(&self.application_id);
        w.i64(self.now_ms);
        w.i8(if self.dump { FLAG_DUMP } else { 0 });
        w.pairs(&self.configs);
        w.count(self.tasks.len());
        for task in &self.tasks {
            w.task(&task.id);
            w.i8(i8::from(task.stateful));
            w.i64(task.unreported_lag.unwrap_or(-1));
            w.count(task.partitions.len());
            for p in &task.partitions {
                w.i8(if p.source { KIND_SOURCE } else { 0 } | if p.changelog { KIND_CHANGELOG } else { 0 });
                match &p.racks {
                    None => w.i32(-1),
                    Some(racks) => {
                        w.count(racks.len());
                        racks.iter().for_each(|r| w.string(r));
                    }
                }
            }
        }
        w.count(self.clients.len());
        for c in &self.clients {
            w.uuid(&c.process_id.0);
            w.i32(c.threads);
            match &c.rack_id {
                None => w.i32(-1),
                Some(rack) => w.string(rack),
            }
            w.pairs(&c.client_tags);
            w.tasks(&c.previous_active);
            w.tasks(&c.previous_standby);
            match &c.lags {
                None => w.i32(-1),
                Some(lags) => {
                    w.count(lags.len());
                    for (task, lag) in lags {
                        w.task(task);
                        w.i64(*lag);
                    }
                }
            }
        }
        w.buf
    }
}

/// The big-endian writer of both directions.
#[derive(Default)]
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
}

impl Writer {
    pub(super) fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    pub(super) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(super) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(super) fn count(&mut self, n: usize) {
        self.i32(i32::try_from(n).unwrap_or(i32::MAX));
    }

    pub(super) fn string(&mut self, s: &str) {
        self.count(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }

    pub(super) fn uuid(&mut self, id: &Uuid) {
        let (msb, lsb) = id.as_u64_pair();
        self.i64(msb as i64);
        self.i64(lsb as i64);
    }

    pub(super) fn task(&mut self, t: &TaskId) {
        self.i32(t.subtopology);
        self.i32(t.partition);
    }

    pub(super) fn tasks(&mut self, tasks: &[TaskId]) {
        self.count(tasks.len());
        tasks.iter().for_each(|t| self.task(t));
    }

    pub(super) fn pairs(&mut self, pairs: &[(String, String)]) {
        self.count(pairs.len());
        for (k, v) in pairs {
            self.string(k);
            self.string(v);
        }
    }
}
