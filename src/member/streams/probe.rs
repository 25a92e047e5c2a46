//! A prober: a member of a streams group that runs no task and makes the coordinator assign
//! again when an assignment would move a task to a copy that has caught up.
//!
//! Kafka 4.4's coordinator computes a new target assignment only when the group changes (a
//! member joins, leaves or changes its metadata, the topics or the assignment configs change);
//! the offsets members report are not such a change, so a warm-up that has caught up waits for
//! the next one (`docs/streams-sticky.md`). A member's client tags are part of its metadata: the
//! prober declares [`PROBE_TAG`] and changes its value to make the change. This crate's
//! `optimized` assignor gives a prober no task and, while one is in the group, moves a stateful
//! task only to a copy that has caught up ([`assign_optimized`](crate::engine::streams::assign_optimized)).
//!
//! Each look reads the group (`StreamsGroupDescribe`: members, their current and target tasks,
//! the offsets they reported), its topics' partition counts (`Metadata`) and its assignment
//! configs (`DescribeConfigs`), and asks [`moves_waiting`] whether an assignment now would move
//! an active task; only a settled group is asked (every member at the assignment epoch, holding
//! its target).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};


use crate::client::admin::{ConfigResource, describe_configs, fetch_metadata, partition_counts};
use crate::client::connection::Connection;
use crate::client::now_ms;
use crate::client::streams::{DescribedGroup, TaskIds};
use crate::engine::streams::{
    OPTIMIZED_ASSIGNOR_NAME, PROBE_TAG, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory,
    StreamsSubtopology, StreamsTopology, moves_waiting,
};
use crate::leader::Topology;
use crate::member::config::MemberConfig;
use crate::member::driver::connect_coordinator;
use crate::member::streams::driver::{StreamsGroupMember, TopologySource};
use crate::member::streams::events::{StreamsEvent, StreamsMemberError};
use crate::member::streams::topology::describe_group;
use crate::member::tasks::MemberTasks;
use crate::wire::ProcessId;

mod pacing;
use pacing::Pacing;

/// The group configs a look reads, as the coordinator names them.
const ASSIGNOR_NAME: &str = "streams.assignor.name";
const NUM_STANDBY_REPLICAS: &str = "streams.num.standby.replicas";
const NUM_WARMUP_REPLICAS: &str = "streams.num.warmup.replicas";
const ACCEPTABLE_RECOVERY_LAG: &str = "streams.acceptable.recovery.lag";
const RACK_AWARE_ASSIGNMENT_TAGS: &str = "streams.rack.aware.assignment.tags";

/// What one look at the group found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// The group is still taking on its target (an epoch or a member's tasks differ): not asked.
    Reconciling,
    /// An assignment now would move no active task.
    NothingWaiting,
    /// An assignment now would move an active task: the prober asks for one.
    MovesWaiting,
}

/// One look at the group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Look {
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the group's target assignment.
    pub assignment_epoch: i32,
    /// Members other than probers.
    pub members: usize,
    /// Standby tasks of the target (where `optimized` warms up the tasks it will move).
    pub standby_tasks: usize,
    /// The verdict.
    pub verdict: Verdict,
}

/// What the prober reports as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeEvent {
    /// The prober as a member of the group.
    Member(StreamsEvent),
    /// A look at the group.
    Looked(Look),
    /// The prober changed its tag to this value: the coordinator assigns again.
    Probed {
        /// The tag's new value.
        value: u64,
    },
    /// A look that failed (it is tried again at the next interval), in words.
    LookFailed(String),
    /// The last probe moved nothing: the group's target is the one it had when the prober asked,
    /// and the prober's view still has a move waiting (the assignor's warm-up configs differ
    /// from the group's, or its restore rates). The prober asks again, after `wait`, doubled
    /// each time up to 32 intervals.
    Unanswered {
        /// Until the next look.
        wait: Duration,
    },
}

/// Why a prober stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The prober as a member failed.
    #[error(transparent)]
    Member(#[from] StreamsMemberError),
    /// The group uses another assignor, which would give the prober tasks it never runs.
    #[error("group {group} is assigned by `{assignor}`, not `optimized`: a prober helps only the optimized assignor (set the group's streams.assignor.name=optimized), and another assignor would give it tasks it never runs")]
    NotOptimized {
        /// The group.
        group: String,
        /// Its assignor.
        assignor: String,
    },
    /// The coordinator gave the prober tasks; it left the group so that they go to a member that runs them.
    #[error("the coordinator gave the prober tasks ({tasks}): the group's assignor is not `optimized`; the prober left the group")]
    GivenTasks {
        /// The tasks.
        tasks: MemberTasks,
    },
}

/// The prober of one streams group.
///
/// ```no_run
/// use std::time::Duration;
/// use kstreams_assignor::member::MemberConfig;
/// use kstreams_assignor::member::streams::StreamsProber;
///
/// let config = MemberConfig::new("localhost:9092", "word-count");
/// let mut prober = StreamsProber::new(config, Duration::from_secs(10));
/// prober.run(&mut || false, &mut |event| println!("{event:?}")).unwrap();
/// ```
#[derive(Debug)]
pub struct StreamsProber {
    config: MemberConfig,
    interval: Duration,
    topology: Option<Box<Topology>>,
}

impl StreamsProber {
    /// A prober of `config.group_id` that looks every `interval`.
    pub fn new(config: MemberConfig, interval: Duration) -> Self {
        Self { config, interval, topology: None }
    }

    /// The application's topology, for a group with joins: the prober declares the group's own
    /// topology completed with the file's co-partition groups, which the coordinator does not
    /// describe (see [`TopologySource::GroupOr`]). The group must still have a topology: a
    /// prober is never its first member.
    pub fn with_topology(mut self, topology: Topology) -> Self {
        self.topology = Some(Box::new(topology));
        self
    }

    /// Joins the group as a prober and looks at it every interval until `stop` returns true;
    /// leaves the group on the way out. Refuses a group another assignor than `optimized`
    /// assigns, and leaves the group if it is given a task.
    pub fn run(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(ProbeEvent)) -> Result<(), ProbeError> {
        let group = self.config.group_id.clone();
        let mut looks = connect_coordinator(&self.config).map_err(|e| StreamsMemberError::Setup(e.to_string()))?;
        let timeout = self.config.request_timeout();
        let described = describe_group(&mut looks, &group, timeout).map_err(StreamsMemberError::Setup)?;
        if described.as_ref().is_none_or(|g| g.topology.is_none()) {
            return Err(StreamsMemberError::Setup(format!(
                "group {group} has no topology yet: start a member of the application first (a prober is never a group's first member)"
            ))
            .into());
        }
        if let Some(g) = described {
            let assignor = match g.assignor_name.clone() {
                Some(name) => Some(name),
                None => group_configs(&mut looks, &group, timeout).remove(ASSIGNOR_NAME),
            };
            if let Some(assignor) = assignor.filter(|a| a != OPTIMIZED_ASSIGNOR_NAME) {
                return Err(ProbeError::NotOptimized { group, assignor });
            }
        }
        let source = self.topology.clone().map_or(TopologySource::Group, TopologySource::GroupOr);
        let mut config = self.config.clone();
        let mut value: u64 = 0;
        config.client_tags.insert(PROBE_TAG.to_owned(), value.to_string());
        let mut member = StreamsGroupMember::new(config.clone(), source, ProcessId::random());
        let events = RefCell::new(on_event);
        let given: RefCell<Option<MemberTasks>> = RefCell::new(None);
        let mut looks = Some(looks);
        let mut next_look = Instant::now() + self.interval;
        let mut pacing = Pacing::new(self.interval);
        let mut on_member = |event: StreamsEvent| {
            if let StreamsEvent::Epoch { tasks, .. } = &event
                && !tasks.is_empty()
            {
                *given.borrow_mut() = Some(tasks.clone());
            }
            (events.borrow_mut())(ProbeEvent::Member(event));
        };
        let mut stopping = || given.borrow().is_some() || stop();
        let interval = self.interval;
        let mut tags = |current: &BTreeMap<String, String>| -> Option<BTreeMap<String, String>> {
            if Instant::now() < next_look || given.borrow().is_some() {
                return None;
            }
            next_look = Instant::now() + interval;
            let mut conn = match looks.take() {
                Some(conn) => conn,
                None => match connect_coordinator(&config) {
                    Ok(conn) => conn,
                    Err(e) => {
                        (events.borrow_mut())(ProbeEvent::LookFailed(e.to_string()));
                        return None;
                    }
                },
            };
            match look(&mut conn, &config.group_id, timeout) {
                Ok((seen, target)) => {
                    looks = Some(conn);
                    let step = pacing.after(seen.verdict, target);
                    next_look = Instant::now() + step.wait;
                    (events.borrow_mut())(ProbeEvent::Looked(seen));
                    if step.unanswered {
                        (events.borrow_mut())(ProbeEvent::Unanswered { wait: step.wait });
                    }
                    if !step.probe {
                        return None;
                    }
                    value += 1;
                    (events.borrow_mut())(ProbeEvent::Probed { value });
                    let mut next = current.clone();
                    next.insert(PROBE_TAG.to_owned(), value.to_string());
                    Some(next)
                }
                Err(e) => {
                    (events.borrow_mut())(ProbeEvent::LookFailed(e));
                    None
                }
            }
        };
        member.run_with_tags(&mut stopping, &mut on_member, &mut tags)?;
        match given.into_inner() {
            Some(tasks) => Err(ProbeError::GivenTasks { tasks }),
            None => Ok(()),
        }
    }
}

/// One look at `group` through its coordinator `conn`, with its target's fingerprint.
fn look(conn: &mut Connection, group: &str, timeout: Duration) -> Result<(Look, u64), String> {
    let g = describe_group(conn, group, timeout)?.ok_or_else(|| format!("group {group} is gone"))?;
    let sources: Vec<String> = g
        .topology
        .iter()
        .flat_map(|t| t.subtopologies.iter().flatten())
        .flat_map(|s| s.source_topics.iter().cloned())
        .collect();
    let metadata = fetch_metadata(conn, &sources).map_err(|e| format!("reading the partitions of {}: {e}", sources.join(", ")))?;
    let partitions = partition_counts(&metadata, &sources);
    let configs = assignment_configs(&group_configs(conn, group, timeout));
    Ok((judge(&g, &partitions, &configs, now_ms())?, target_fingerprint(&g)))
}

/// A hash of the group's target assignment (every member's active, standby and warm-up tasks),
/// to tell whether a probe changed it.
pub(crate) fn target_fingerprint(g: &DescribedGroup) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut members: Vec<_> = g.members.iter().collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for m in members {
        m.member_id.hash(&mut hasher);
        let a = &m.target_assignment;
        for list in [&a.active_tasks, &a.standby_tasks, &a.warmup_tasks] {
            let mut tasks: Vec<(&str, i32)> =
                list.iter().flat_map(|t| t.partitions.iter().map(move |&p| (t.subtopology_id.as_str(), p))).collect();
            tasks.sort_unstable();
            tasks.hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// The verdict on a described group: `partitions` holds the source topics' partition counts,
/// `configs` the group's assignment configs.
pub(crate) fn judge(
    g: &DescribedGroup,
    partitions: &BTreeMap<String, i32>,
    configs: &StreamsAssignmentConfigs,
    now_ms: i64,
) -> Result<Look, String> {
    let probers = |m: &&crate::client::streams::Member| m.client_tags.iter().any(|kv| kv.key == PROBE_TAG);
    let workers = g.members.iter().filter(|m| !probers(m)).count();
    let standby_tasks = g.members.iter().map(|m| count(&m.target_assignment.standby_tasks)).sum();
    let settled = g.group_epoch == g.assignment_epoch
        && g.members.iter().all(|m| m.member_epoch == g.assignment_epoch && m.assignment == m.target_assignment);
    let mut seen = Look { group_epoch: g.group_epoch, assignment_epoch: g.assignment_epoch, members: workers, standby_tasks, verdict: Verdict::Reconciling };
    if !settled || workers == 0 {
        return Ok(seen);
    }
    let topology = topology(g, partitions)?;
    let spec = StreamsGroupSpec::new(g.members.iter().map(member_spec)).with_configs(configs.clone());
    let mut target: BTreeMap<(&str, i32), &str> = BTreeMap::new();
    for m in &g.members {
        for t in &m.target_assignment.active_tasks {
            for &p in &t.partitions {
                target.insert((t.subtopology_id.as_str(), p), m.process_id.as_str());
            }
        }
    }
    let process_of = |sub: &str, p: i32| target.get(&(sub, p)).map(|s| (*s).to_owned());
    let waiting = moves_waiting(&spec, &topology, &StreamsMemory::new(), now_ms, process_of).map_err(|e| e.to_string())?;
    seen.verdict = if waiting { Verdict::MovesWaiting } else { Verdict::NothingWaiting };
    Ok(seen)
}

fn count(tasks: &[TaskIds]) -> usize {
    tasks.iter().map(|t| t.partitions.len()).sum()
}

/// The group's subtopologies with their task counts (the most partitions of a source topic) and
/// whether they keep state (a changelog).
fn topology(g: &DescribedGroup, partitions: &BTreeMap<String, i32>) -> Result<StreamsTopology, String> {
    let subtopologies = g.topology.as_ref().and_then(|t| t.subtopologies.as_ref()).ok_or("the group has no topology yet")?;
    let mut out = Vec::new();
    for s in subtopologies {
        let external = s.source_topics.iter().filter_map(|t| partitions.get(t).copied());
        let internal = s.repartition_source_topics.iter().map(|t| t.partitions);
        let tasks = external.chain(internal).max().unwrap_or(0);
        let tasks = u32::try_from(tasks).ok().filter(|&n| n > 0).ok_or_else(|| {
            format!("subtopology {} has no partitions yet (its source topics {})", s.subtopology_id, s.source_topics.join(", "))
        })?;
        out.push(StreamsSubtopology::new(s.subtopology_id.clone(), tasks, !s.state_changelog_topics.is_empty()));
    }
    Ok(StreamsTopology::new(out))
}

/// A described member as the assignor sees it: its current tasks (at the member's epoch) and
/// the offsets it reported.
fn member_spec(m: &crate::client::streams::Member) -> StreamsMemberSpec {
    let mut spec = StreamsMemberSpec::new(m.member_id.clone(), m.process_id.clone());
    spec.instance_id = m.instance_id.clone();
    spec.rack_id = m.rack_id.clone();
    spec.client_tags = m.client_tags.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
    for t in &m.assignment.active_tasks {
        for &p in &t.partitions {
            spec = spec.with_active_task(t.subtopology_id.clone(), p, m.member_epoch);
        }
    }
    for t in &m.assignment.standby_tasks {
        for &p in &t.partitions {
            spec = spec.with_standby_task(t.subtopology_id.clone(), p);
        }
    }
    for t in &m.assignment.warmup_tasks {
        for &p in &t.partitions {
            spec = spec.with_warmup_task(t.subtopology_id.clone(), p);
        }
    }
    for o in &m.task_offsets {
        spec = spec.with_task_offset(o.subtopology_id.clone(), o.partition, o.offset);
    }
    for o in &m.task_end_offsets {
        spec = spec.with_task_end_offset(o.subtopology_id.clone(), o.partition, o.offset);
    }
    spec
}

/// The group's configs as the broker describes them (its own, or the broker's defaults); empty
/// when the broker refuses or does not say.
fn group_configs(conn: &mut Connection, group: &str, timeout: Duration) -> BTreeMap<String, String> {
    let keys = [ASSIGNOR_NAME, NUM_STANDBY_REPLICAS, NUM_WARMUP_REPLICAS, ACCEPTABLE_RECOVERY_LAG, RACK_AWARE_ASSIGNMENT_TAGS];
    describe_configs(conn, ConfigResource::Group, group, &keys, timeout).unwrap_or_default()
}

/// The assignment configs of `configs` (the coordinator's defaults where one is missing or not
/// a number).
fn assignment_configs(configs: &BTreeMap<String, String>) -> StreamsAssignmentConfigs {
    let number = |key: &str, default: i64| configs.get(key).and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(default);
    let tags: Vec<String> = configs
        .get(RACK_AWARE_ASSIGNMENT_TAGS)
        .map(|v| v.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default();
    StreamsAssignmentConfigs::default()
        .with_num_standby_replicas(u32::try_from(number(NUM_STANDBY_REPLICAS, 0)).unwrap_or(0))
        .with_num_warmup_replicas(u32::try_from(number(NUM_WARMUP_REPLICAS, 2)).unwrap_or(2))
        .with_acceptable_recovery_lag(number(ACCEPTABLE_RECOVERY_LAG, 10_000))
        .with_rack_aware_assignment_tags(tags)
}

#[cfg(test)]
mod tests;
