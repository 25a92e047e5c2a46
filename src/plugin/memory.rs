//! What a host process remembers between the rebalances it leads, per application: the offset
//! sums and end-offset sums it saw and when, from which the next rebalance it leads estimates
//! restore rates. A process that never led starts fresh (unknown rates), never with another's data.

use std::collections::HashMap;

use crate::engine::snapshot::{Snapshot, Stale};
use crate::engine::{AssignmentInput, PreviousRebalance};

/// How many applications one process remembers (a host runs few; the oldest is forgotten).
const MAX_APPLICATIONS: usize = 64;

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

/// The snapshots of a process, per `application.id`: each the last rebalance the process led for
/// that application.
#[derive(Debug, Default)]
pub struct Memory {
    snapshots: HashMap<String, Snapshot>,
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The previous rebalance of `application` as the engine reads it, if it may be used now
    /// ([`Snapshot::elapsed_if_usable`]): younger than three probing intervals, with a client
    /// still in the group. Its observations stay true whoever led in between: a rate is a
    /// difference of two observations over the time between them (and the engine skips a task
    /// whose offset went down, as when a client lost its state).
    ///
    /// A snapshot used is taken out of the memory, not copied (this rebalance's replaces it when
    /// the rebalance is [remembered](Self::remember)): a rebalance that fails after this starts
    /// the next one fresh.
    pub(super) fn recall(&mut self, application: &str, now_ms: i64, input: &AssignmentInput) -> (Option<PreviousRebalance>, Recall) {
        let Some(snap) = self.snapshots.get(application) else { return (None, Recall::Fresh("no earlier rebalance led here")) };
        let elapsed_ms = match snap.elapsed_if_usable(now_ms, input) {
            Ok(elapsed_ms) => elapsed_ms,
            Err(Stale::ClockWentBack) => return (None, Recall::Fresh("the clock went back since the last rebalance led here")),
            Err(Stale::TooOld) => return (None, Recall::Fresh("the last rebalance led here is older than three probing intervals")),
            Err(Stale::NoClientLeft) => return (None, Recall::Fresh("no client of the last rebalance led here is left")),
        };
        let snap = self.snapshots.remove(application).expect("looked up above");
        (Some(snap.into_previous(elapsed_ms)), Recall::Used { elapsed_ms })
    }

    /// Records this rebalance of `application`, keeping its offset sums; the rest of the input,
    /// and a snapshot it replaces, are handed back to be freed where the host likes.
    pub(super) fn remember(&mut self, application: &str, now_ms: i64, mut input: AssignmentInput) -> Leftovers {
        let Some(snapshot) = Snapshot::take(&mut input, now_ms) else {
            let replaced = self.snapshots.remove(application);
            return Leftovers { _input: Some(input), _replaced: replaced };
        };
        let mut replaced = None;
        if self.snapshots.len() >= MAX_APPLICATIONS && !self.snapshots.contains_key(application) {
            if let Some(oldest) = self.snapshots.iter().min_by_key(|(_, s)| s.at_ms()).map(|(k, _)| k.clone()) {
                replaced = self.snapshots.remove(&oldest);
            }
        }
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
