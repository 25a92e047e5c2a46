//! The engine as the broker's streams assignor (KIP-1071's `TaskAssignor` of
//! `kafka-group-coordinator-api`, listed in `group.streams.assignors` and chosen per group by
//! `streams.assignor.name`): the Java class `OptimizedStreamsTaskAssignor` of `plugin/` sends
//! one [`StreamsRequest`] per call, and [`StreamsSessions`] answers it with
//! [`assign_optimized`].
//!
//! The broker's API names no group, and its coordinator calls from several threads: the
//! sessions keep one [`StreamsMemory`] per group as told by its topology (subtopology ids, task
//! counts, stateful flags) and its processes, take it out for the call and put it back after,
//! so that two groups never wait on each other.
//!
//! ```
//! use kstreams_assignor::engine::streams::{StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology, StreamsTopology};
//! use kstreams_assignor::plugin::streams::{StreamsRequest, StreamsSessions};
//!
//! let topology = StreamsTopology::new([StreamsSubtopology::new("0", 4, false)]);
//! let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("m-1", "p-1"), StreamsMemberSpec::new("m-2", "p-2")]);
//! let request = StreamsRequest::new(1_700_000_000_000, spec, topology);
//! let sessions = StreamsSessions::new();
//! let response = sessions.assign(&StreamsRequest::decode(&request.encode()).unwrap()).unwrap();
//! assert_eq!(response.assignment.members["m-1"].task_counts().0, 2);
//! assert!(response.summary.starts_with("optimized: 4 active tasks"), "{}", response.summary);
//! ```

mod request;

pub use request::{STREAMS_VERSION, StreamsRequest, StreamsResponse};

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::engine::streams::{StreamsGroupAssignment, StreamsMemory, StreamsTopology, assign_optimized};
use crate::interrupt::{Interrupted, interruptible};
use crate::plugin::PluginError;

/// The most groups remembered; past it the group assigned longest ago is forgotten.
pub const MAX_REMEMBERED_GROUPS: usize = 4096;

/// A group as its topology tells it: sorted (subtopology id, tasks, stateful).
type TopologyKey = Vec<(String, u32, bool)>;

struct Remembered {
    processes: BTreeSet<String>,
    memory: StreamsMemory,
    last_used: u64,
}

#[derive(Default)]
struct Groups {
    by_topology: HashMap<TopologyKey, Vec<Remembered>>,
    len: usize,
    clock: u64,
}

/// The memories of the groups this host assigned, safe to share between threads.
#[derive(Default)]
pub struct StreamsSessions {
    groups: Mutex<Groups>,
}

impl std::fmt::Debug for StreamsSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsSessions").field("groups", &self.remembered()).finish()
    }
}

impl StreamsSessions {
    /// No group remembered.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many groups are remembered.
    pub fn remembered(&self) -> usize {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner).len
    }

    /// Assigns one request with the memory of its group (the remembered group of the same
    /// topology that shares the most processes with it; a fresh memory if none shares one),
    /// and remembers the group with its processes of this call.
    ///
    /// # Errors
    ///
    /// [`PluginError::Streams`] for a group the assignor refuses.
    pub fn assign(&self, request: &StreamsRequest) -> Result<StreamsResponse, PluginError> {
        self.assign_until(request, None)
    }

    /// [`assign`](Self::assign) within a deadline: past `deadline` the engine stops at its next
    /// checkpoint (see [`interrupt`](crate::interrupt)) and the call fails with
    /// [`PluginError::Interrupted`]; the group's memory, which the stopped call may have half
    /// updated, is forgotten (its next call starts afresh). `None`: no deadline.
    ///
    /// # Errors
    ///
    /// [`PluginError::Streams`] for a group the assignor refuses; [`PluginError::Interrupted`]
    /// past the deadline.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use kstreams_assignor::engine::streams::{StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology, StreamsTopology};
    /// use kstreams_assignor::plugin::PluginError;
    /// use kstreams_assignor::plugin::streams::{StreamsRequest, StreamsSessions};
    ///
    /// let topology = StreamsTopology::new([StreamsSubtopology::new("0", 4, true)]);
    /// let spec = StreamsGroupSpec::new([StreamsMemberSpec::new("m-1", "p-1")]);
    /// let request = StreamsRequest::new(1_700_000_000_000, spec, topology);
    /// let sessions = StreamsSessions::new();
    /// let late = sessions.assign_until(&request, Some(Instant::now()));
    /// assert!(matches!(late, Err(PluginError::Interrupted { .. })));
    /// let on_time = sessions.assign_until(&request, Some(Instant::now() + Duration::from_secs(60)));
    /// assert!(on_time.is_ok());
    /// ```
    pub fn assign_until(&self, request: &StreamsRequest, deadline: Option<Instant>) -> Result<StreamsResponse, PluginError> {
        let key = topology_key(&request.topology);
        let processes: BTreeSet<String> = request.spec.members.iter().map(|m| m.process_id.clone()).collect();
        let taken = self.take(&key, &processes);
        let found = taken.is_some();
        let mut memory = taken.unwrap_or_default();
        let started = Instant::now();
        let mut run = || assign_optimized(&request.spec, &request.topology, &mut memory, request.now_ms);
        let result = match deadline {
            None => run(),
            Some(deadline) => match interruptible(move || Instant::now() >= deadline, run) {
                Ok(result) => result,
                // The memory may be half updated: the group is forgotten.
                Err(Interrupted) => {
                    let budget_ms = u64::try_from(deadline.saturating_duration_since(started).as_millis()).unwrap_or(u64::MAX);
                    return Err(PluginError::Interrupted { budget_ms });
                }
            },
        };
        let engine_nanos = i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX);
        let assignment = match result {
            Ok(assignment) => assignment,
            Err(e) => {
                // The group keeps its last assignment, and so its memory.
                if found {
                    self.put(key, processes, memory);
                }
                return Err(e.into());
            }
        };
        let summary = summary(&assignment, &memory, processes.len());
        self.put(key, processes, memory);
        Ok(StreamsResponse { assignment, summary, engine_nanos })
    }

    fn take(&self, key: &TopologyKey, processes: &BTreeSet<String>) -> Option<StreamsMemory> {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let list = groups.by_topology.get_mut(key)?;
        let best = list
            .iter()
            .enumerate()
            .map(|(i, r)| (r.processes.intersection(processes).count(), i))
            .filter(|&(shared, _)| shared > 0)
            .max();
        let (_, i) = best?;
        let taken = list.swap_remove(i);
        if list.is_empty() {
            groups.by_topology.remove(key);
        }
        groups.len -= 1;
        Some(taken.memory)
    }

    fn put(&self, key: TopologyKey, processes: BTreeSet<String>, memory: StreamsMemory) {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        groups.clock += 1;
        let last_used = groups.clock;
        if groups.len >= MAX_REMEMBERED_GROUPS {
            forget_oldest(&mut groups);
        }
        groups.by_topology.entry(key).or_default().push(Remembered { processes, memory, last_used });
        groups.len += 1;
    }
}

/// The call's log line: the active tasks, the standbys asked for (`num.standby.replicas`), and
/// apart from them the extra copies by kind with their bound (see [`ExtraCopies`]), all handed
/// out as standbys.
fn summary(assignment: &StreamsGroupAssignment, memory: &StreamsMemory, processes: usize) -> String {
    let (mut active, mut copies) = (0, 0);
    for m in assignment.members.values() {
        let (a, s, w) = m.task_counts();
        (active, copies) = (active + a, copies + s + w);
    }
    let extra = memory.extra_copies();
    let waiting = memory.followup().is_some_and(|f| f.probing_rebalance_needed && !f.watch_list.is_empty());
    let left_out = match extra.left_out {
        0 => String::new(),
        n => format!(", {n} more left out by the bound"),
    };
    format!(
        "optimized: {active} active tasks and {} standbys (num.standby.replicas) over {} members of {processes} processes; \
         {} extra copies handed out as standbys (at most group.streams.num.warmup.replicas={}): {} warm-ups, {} kept copies, \
         {} spares{left_out}{}",
        copies - extra.total(),
        assignment.members.len(),
        extra.total(),
        extra.bound,
        extra.warmups,
        extra.kept,
        extra.spares,
        if waiting { "; warm-ups restoring, the next assignment may move their tasks" } else { "" },
    )
}

fn forget_oldest(groups: &mut Groups) {
    let oldest = groups
        .by_topology
        .iter()
        .flat_map(|(k, list)| list.iter().enumerate().map(move |(i, r)| (r.last_used, k.clone(), i)))
        .min();
    if let Some((_, key, i)) = oldest {
        let list = groups.by_topology.get_mut(&key).expect("present");
        list.swap_remove(i);
        if list.is_empty() {
            groups.by_topology.remove(&key);
        }
        groups.len -= 1;
    }
}

fn topology_key(topology: &StreamsTopology) -> TopologyKey {
    let mut key: TopologyKey = topology.subtopologies.iter().map(|s| (s.id.clone(), s.partitions, s.stateful)).collect();
    key.sort();
    key
}

#[cfg(test)]
mod tests;
