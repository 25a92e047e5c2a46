//! The streams request and response layouts (`docs/plugin.md`, "The broker assignor"): a
//! `GroupSpec` with its `TopologyDescriber` in, every member's tasks out.

use std::collections::BTreeMap;

use crate::engine::streams::{
    StreamsAssignmentConfigs, StreamsGroupAssignment, StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology, StreamsTopology,
    TaskValues, Tasks,
};
use crate::plugin::PluginError;
use crate::plugin::request::{Reader, Writer};

/// The streams request layout's version; the jar writes it first, the native library refuses
/// any other.
pub const STREAMS_VERSION: i32 = 1;

/// One call of the broker's `TaskAssignor.assign`: the group, its topology and the host's clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamsRequest {
    /// The host's clock (epoch ms), for restore rates.
    pub now_ms: i64,
    /// The group (`GroupSpec`), with the broker's warm-up settings in its configs.
    pub spec: StreamsGroupSpec,
    /// The topology (`TopologyDescriber`).
    pub topology: StreamsTopology,
}

impl StreamsRequest {
    /// A request for `spec` over `topology` at `now_ms`.
    pub fn new(now_ms: i64, spec: StreamsGroupSpec, topology: StreamsTopology) -> Self {
        Self { now_ms, spec, topology }
    }

    /// Decodes a request, refusing anything malformed with the field and byte offset.
    pub fn decode(bytes: &[u8]) -> Result<Self, PluginError> {
        let mut r = Reader { buf: bytes, pos: 0 };
        let version = r.i32("version")?;
        if version != STREAMS_VERSION {
            return Err(r.malformed(0, "version", format!("streams layout version {version}, this native library speaks only version {STREAMS_VERSION}: the jar and its native library do not match")));
        }
        let now_ms = r.i64("now_ms")?;
        let num_standby_replicas = non_negative(&mut r, "num_standby_replicas")?;
        let num_warmup_replicas = non_negative(&mut r, "num_warmup_replicas")?;
        let acceptable_recovery_lag = r.i64("acceptable_recovery_lag")?;
        let n = r.count("rack_aware_assignment_tags", 4)?;
        let tags = (0..n).map(|_| r.string("rack_aware_assignment_tags")).collect::<Result<Vec<_>, _>>()?;
        let n = r.count("subtopologies", 9)?;
        let mut subtopologies = Vec::with_capacity(n);
        for _ in 0..n {
            let id = r.string("subtopology.id")?;
            let partitions = non_negative(&mut r, "subtopology.partitions")?;
            let stateful = r.boolean("subtopology.stateful")?;
            subtopologies.push(StreamsSubtopology::new(id, partitions, stateful));
        }
        let n = r.count("members", 40)?;
        let mut members = Vec::with_capacity(n);
        for _ in 0..n {
            members.push(member(&mut r)?);
        }
        if r.pos != bytes.len() {
            return Err(r.malformed(r.pos, "end", format!("{} byte(s) after the request", bytes.len() - r.pos)));
        }
        let mut configs = StreamsAssignmentConfigs::default()
            .with_num_standby_replicas(num_standby_replicas)
            .with_num_warmup_replicas(num_warmup_replicas)
            .with_acceptable_recovery_lag(acceptable_recovery_lag);
        configs.rack_aware_assignment_tags = tags;
        Ok(Self { now_ms, spec: StreamsGroupSpec::new(members).with_configs(configs), topology: StreamsTopology::new(subtopologies) })
    }

    /// Encodes the request as the jar does (for tests, benches and the fuzz corpus).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        let c = &self.spec.configs;
        w.i32(STREAMS_VERSION);
        w.i64(self.now_ms);
        w.i32(clamp(c.num_standby_replicas));
        w.i32(clamp(c.num_warmup_replicas));
        w.i64(c.acceptable_recovery_lag);
        w.count(c.rack_aware_assignment_tags.len());
        c.rack_aware_assignment_tags.iter().for_each(|t| w.string(t));
        w.count(self.topology.subtopologies.len());
        for s in &self.topology.subtopologies {
            w.string(&s.id);
            w.i32(clamp(s.partitions));
            w.i8(i8::from(s.stateful));
        }
        w.count(self.spec.members.len());
        for m in &self.spec.members {
            w.string(&m.member_id);
            w.string(&m.process_id);
            optional(&mut w, m.instance_id.as_deref());
            optional(&mut w, m.rack_id.as_deref());
            let tags: Vec<(String, String)> = m.client_tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            w.pairs(&tags);
            let active: Tasks = m.active_tasks.iter().map(|(s, p)| (s.clone(), p.keys().copied().collect())).collect();
            write_tasks(&mut w, &active);
            write_tasks(&mut w, &m.standby_tasks);
            write_tasks(&mut w, &m.warmup_tasks);
            write_offsets(&mut w, &m.task_offsets);
            write_offsets(&mut w, &m.task_end_offsets);
        }
        w.buf
    }
}

fn clamp(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

fn non_negative(r: &mut Reader<'_>, field: &'static str) -> Result<u32, PluginError> {
    let at = r.pos;
    let v = r.i32(field)?;
    u32::try_from(v).map_err(|_| r.malformed(at, field, format!("{v} is negative")))
}

fn optional(w: &mut Writer, s: Option<&str>) {
    match s {
        Some(s) => w.string(s),
        None => w.i32(-1),
    }
}

fn member(r: &mut Reader<'_>) -> Result<StreamsMemberSpec, PluginError> {
    let mut m = StreamsMemberSpec::new(r.string("member.member_id")?, r.string("member.process_id")?);
    m.instance_id = r.string_or_null("member.instance_id", true)?;
    m.rack_id = r.string_or_null("member.rack_id", true)?;
    m.client_tags = r.pairs("member.client_tags")?.into_iter().collect();
    // The API's current active tasks carry no epoch.
    m.active_tasks = read_tasks(r, "member.active_tasks")?.into_iter().map(|(s, p)| (s, p.into_iter().map(|p| (p, 0)).collect())).collect();
    m.standby_tasks = read_tasks(r, "member.standby_tasks")?;
    m.warmup_tasks = read_tasks(r, "member.warmup_tasks")?;
    m.task_offsets = read_offsets(r, "member.task_offsets")?;
    m.task_end_offsets = read_offsets(r, "member.task_end_offsets")?;
    Ok(m)
}

/// Tasks by subtopology: a count of (subtopology id, count of partitions, partitions).
fn read_tasks(r: &mut Reader<'_>, field: &'static str) -> Result<Tasks, PluginError> {
    read_by_subtopology(r, field, 4, |b| i32::from_be_bytes(b.try_into().expect("4 bytes")))
}

fn write_tasks(w: &mut Writer, tasks: &Tasks) {
    write_by_subtopology(w, tasks, |w, &p| w.i32(p));
}

/// Offsets by task: a count of (subtopology id, count of (partition, offset)).
fn read_offsets(r: &mut Reader<'_>, field: &'static str) -> Result<TaskValues<i64>, PluginError> {
    read_by_subtopology(r, field, 12, |b| {
        (i32::from_be_bytes(b[..4].try_into().expect("4 bytes")), i64::from_be_bytes(b[4..].try_into().expect("8 bytes")))
    })
}

fn write_offsets(w: &mut Writer, values: &TaskValues<i64>) {
    write_by_subtopology(w, values, |w, (&p, &o)| {
        w.i32(p);
        w.i64(o);
    });
}

/// A map by subtopology id, the layout of tasks and offsets: a count of (subtopology id, count of
/// entries, entries of `width` bytes each, each read by `entry`). A subtopology twice is refused.
fn read_by_subtopology<C: FromIterator<E>, E>(
    r: &mut Reader<'_>,
    field: &'static str,
    width: usize,
    entry: impl Fn(&[u8]) -> E,
) -> Result<BTreeMap<String, C>, PluginError> {
    let n = r.count(field, 8)?;
    let mut map = BTreeMap::new();
    for _ in 0..n {
        let at = r.pos;
        let id = r.string(field)?;
        let k = r.count(field, width)?;
        let entries = r.take(k * width, field)?.chunks_exact(width).map(&entry).collect();
        if map.insert(id.clone(), entries).is_some() {
            return Err(r.malformed(at, field, format!("subtopology {id:?} appears twice")));
        }
    }
    Ok(map)
}

/// Writes what [`read_by_subtopology`] reads: a count of (subtopology id, count of entries,
/// entries, each written by `entry`).
fn write_by_subtopology<'m, C>(w: &mut Writer, map: &'m BTreeMap<String, C>, entry: impl Fn(&mut Writer, <&'m C as IntoIterator>::Item))
where
    &'m C: IntoIterator,
    <&'m C as IntoIterator>::IntoIter: ExactSizeIterator,
{
    w.count(map.len());
    for (id, entries) in map {
        w.string(id);
        let entries = entries.into_iter();
        w.count(entries.len());
        for e in entries {
            entry(w, e);
        }
    }
}

/// The answer to one [`StreamsRequest`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamsResponse {
    /// Every member's tasks; the host hands warm-ups out as standbys.
    pub assignment: StreamsGroupAssignment,
    /// One line for the host's log.
    pub summary: String,
    /// Time spent in the engine (nanoseconds; 0: not measured).
    pub engine_nanos: i64,
}

impl StreamsResponse {
    /// Encodes the response: version, a count of members (member id, active, standby and
    /// warm-up tasks in the request's task layout), the summary and the engine's nanoseconds.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.i32(STREAMS_VERSION);
        w.count(self.assignment.members.len());
        for (id, m) in &self.assignment.members {
            w.string(id);
            write_tasks(&mut w, &m.active_tasks);
            write_tasks(&mut w, &m.standby_tasks);
            write_tasks(&mut w, &m.warmup_tasks);
        }
        w.string(&self.summary);
        w.i64(self.engine_nanos);
        w.buf
    }
}
