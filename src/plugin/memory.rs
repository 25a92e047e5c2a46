//! What a host process remembers between the rebalances it leads, per application: the offset
//! sums and end-offset sums it saw and when, from which the next rebalance it leads estimates
//! restore rates. A process that never led starts fresh (unknown rates), never with another's data.

use std::collections::{BTreeMap, HashMap};

use crate::engine::{AssignmentInput, PreviousRebalance};
use crate::wire::{ProcessId, TaskId};

/// How many applications one process remembers (a host runs few; the oldest is forgotten).
const MAX_APPLICATIONS: usize = 64;
/// A snapshot older than this many probing intervals is not used.
const MAX_AGE_IN_PROBING_INTERVALS: i64 = 3;

/// The last rebalance one process led for one application.
#[derive(Debug, Clone)]
struct Snapshot {
    at_ms: i64,
    end_offset_sums: BTreeMap<TaskId, i64>,
    offset_sums: BTreeMap<ProcessId, BTreeMap<TaskId, i64>>,
}

/// Why the previous snapshot was or was not used, for the host's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recall {
    /// Used: the previous rebalance was this long ago.
    Used {
        /// Milliseconds since it.
        elapsed_ms: i64,
    },
    /// Not used, with the reason.
    Fresh(&'static str),
}

/// The snapshots of a process, per `application.id`.
#[derive(Debug, Default)]
pub struct Memory {
    snapshots: HashMap<String, Snapshot>,
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The previous rebalance of `application` as the engine reads it, if it may be used now:
    /// younger than [`MAX_AGE_IN_PROBING_INTERVALS`] probing intervals, with a client still in
    /// the group. Its observations stay true whoever led in between: a rate is a difference of
    /// two observations over the time between them (and the engine skips a task whose offset went
    /// down, as when a client lost its state).
    ///
    /// A snapshot used is taken out of the memory, not copied (this rebalance's replaces it when
    /// the rebalance is [remembered](Self::remember)): a rebalance that fails after this starts
    /// the next one fresh.
    pub(super) fn recall(&mut self, application: &str, now_ms: i64, input: &AssignmentInput) -> (Option<PreviousRebalance>, Recall) {
        let Some(snap) = self.snapshots.get(application) else { return (None, Recall::Fresh("no earlier rebalance led here")) };
        let elapsed_ms = now_ms.saturating_sub(snap.at_ms);
        let max_age = input.configs.probing_rebalance_interval_ms.saturating_mul(MAX_AGE_IN_PROBING_INTERVALS);
        if elapsed_ms <= 0 {
            return (None, Recall::Fresh("the clock went back since the last rebalance led here"));
        }
        if elapsed_ms > max_age {
            return (None, Recall::Fresh("the last rebalance led here is older than three probing intervals"));
        }
        if !input.clients.iter().any(|c| snap.offset_sums.contains_key(&c.process_id)) {
            return (None, Recall::Fresh("no client of the last rebalance led here is left"));
        }
        let snap = self.snapshots.remove(application).expect("looked up above");
        let previous = PreviousRebalance { elapsed_ms, changelog_end_offset_sums: snap.end_offset_sums, task_offset_sums: snap.offset_sums };
        (Some(previous), Recall::Used { elapsed_ms })
    }

    /// Records this rebalance of `application`, keeping its offset sums; the rest of the input,
    /// and a snapshot it replaces, are handed back to be freed where the host likes.
    pub(super) fn remember(&mut self, application: &str, now_ms: i64, mut input: AssignmentInput) -> Leftovers {
        let Some(ends) = input.changelog_end_offset_sums.take() else {
            let replaced = self.snapshots.remove(application);
            return Leftovers { _input: Some(input), _replaced: replaced };
        };
        let mut replaced = None;
        if self.snapshots.len() >= MAX_APPLICATIONS && !self.snapshots.contains_key(application) {
            if let Some(oldest) = self.snapshots.iter().min_by_key(|(_, s)| s.at_ms).map(|(k, _)| k.clone()) {
                replaced = self.snapshots.remove(&oldest);
            }
        }
        let offset_sums = input.clients.iter_mut().map(|c| (c.process_id, std::mem::take(&mut c.task_offset_sums))).collect();
        let snapshot = Snapshot { at_ms: now_ms, end_offset_sums: ends, offset_sums };
        let replaced = self.snapshots.insert(application.to_owned(), snapshot).or(replaced);
        Leftovers { _input: Some(input), _replaced: replaced }
    }
}

/// What a rebalance leaves behind once remembered: the parts of its input the memory does not
/// keep and any snapshot it replaced. Dropping it frees them; a host that answers the group
/// first can drop it on another thread, off the rebalance's path.
#[derive(Debug, Default)]
#[must_use = "dropping the leftovers frees them; drop them where it costs least"]
pub struct Leftovers {
    // Held only to be dropped.
    _input: Option<AssignmentInput>,
    _replaced: Option<Snapshot>,
}
