//! The copies of stateful tasks `optimized` hands out beyond `num.standby.replicas` on the
//! streams protocol, bounded by the coordinator's `group.streams.num.warmup.replicas` and
//! counted by kind.
//!
//! The engine places three kinds of extra copy, each a standby on the wire (4.4.0's
//! `GroupAssignment` has no warm-up field): warm-ups, for a move its target still waits for;
//! make-before-break copies, a fresher copy kept where a task's standby moved and its replacement
//! still restores; and spares, copies of the tasks whose owner's crash would restore the most.
//! Each costs the member that holds it a changelog it keeps reading, for as long as the
//! assignment stands, and that is until the group changes: this protocol has no probing
//! rebalance. The engine bounds warm-ups and spares by `max.warmup.replicas` but not the kept
//! copies, so [`bound_extra_copies`] bounds them all together.

use std::collections::{HashMap, HashSet};

use crate::engine::{Assignment, AssignmentInput};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId};

/// The copies of stateful tasks an assignment hands out beyond the standbys asked for
/// (`num.standby.replicas` per stateful task, or one per other process where there are fewer),
/// by kind, as [`StreamsMemory::extra_copies`](super::StreamsMemory::extra_copies) tells them.
///
/// ```
/// use kstreams_assignor::engine::streams::ExtraCopies;
///
/// let none = ExtraCopies::default();
/// assert_eq!((none.total(), none.left_out), (0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtraCopies {
    /// The most extra copies the group may carry: `group.streams.num.warmup.replicas`.
    pub bound: usize,
    /// Warm-ups: a copy restoring a task that the target moves to its process once caught up.
    pub warmups: usize,
    /// Kept copies: a copy of a task its process held in the previous assignment, kept while
    /// the task's standby restores elsewhere (make-before-break). The state is there; the
    /// member keeps reading the changelog.
    pub kept: usize,
    /// Spares: any other copy beyond the standbys, on the tasks whose owner's crash would
    /// restore the most. The member restores it from what it has, then keeps reading.
    pub spares: usize,
    /// The copies the engine wanted beyond [`bound`](Self::bound), left out.
    pub left_out: usize,
}

impl ExtraCopies {
    /// All extra copies handed out: warm-ups, kept copies and spares.
    pub fn total(&self) -> usize {
        self.warmups + self.kept + self.spares
    }
}

/// The kinds of [`ExtraCopies`], in the order the bound keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Warmup,
    Kept,
    Spare,
}

/// Keeps at most `bound` of the engine's extra copies (its warm-ups and spares) in `assignment`
/// and counts those kept by kind. Warm-ups come first (the moves wait for them), then kept
/// copies (no restore), then spares; within a kind the copy closest to caught up first, then
/// by task and process. A copy left out is no longer a standby, a warm-up or a spare, and a
/// warm-up left out leaves the watch list.
///
/// # Arguments
///
/// * `input`: the engine's input, for each copy's lag (the task's end-offset sum less the
///   process's offset sum; a task the process runs is caught up, one it never reported lags by
///   the whole end-offset sum).
/// * `held`: the (process, task) pairs of the previous assignment, actives and standbys.
///
/// # Complexity
///
/// O(N + E·log E + E·S) for N processes, E extra copies and S tasks per process.
pub(super) fn bound_extra_copies(
    assignment: &mut Assignment,
    input: &AssignmentInput,
    held: &HashSet<(ProcessId, TaskId)>,
    bound: usize,
) -> ExtraCopies {
    let ends = input.changelog_end_offset_sums.as_ref();
    let sums: HashMap<ProcessId, _> = input.clients.iter().map(|c| (c.process_id, &c.task_offset_sums)).collect();
    let lag = |process: &ProcessId, t: &TaskId| -> i64 {
        let end = ends.and_then(|e| e.get(t)).copied().unwrap_or(0).max(0);
        match sums.get(process).and_then(|s| s.get(t)) {
            Some(&LATEST_OFFSET) => 0,
            Some(&sum) if sum >= 0 => (end - sum).max(0),
            _ => end,
        }
    };
    let mut copies: Vec<(Kind, i64, TaskId, ProcessId, usize)> = Vec::new();
    for (c, client) in assignment.clients.iter().enumerate() {
        crate::interrupt::tick();
        for t in &client.warmup_tasks {
            copies.push((Kind::Warmup, lag(&client.process_id, t), t.clone(), client.process_id, c));
        }
        for t in client.spare_tasks.iter().filter(|t| !client.warmup_tasks.contains(t)) {
            let kind = if held.contains(&(client.process_id, t.clone())) { Kind::Kept } else { Kind::Spare };
            copies.push((kind, lag(&client.process_id, t), t.clone(), client.process_id, c));
        }
    }
    copies.sort_unstable();
    let mut out = ExtraCopies { bound, ..ExtraCopies::default() };
    for (i, (kind, _, task, process, c)) in copies.into_iter().enumerate() {
        if i < bound {
            match kind {
                Kind::Warmup => out.warmups += 1,
                Kind::Kept => out.kept += 1,
                Kind::Spare => out.spares += 1,
            }
            continue;
        }
        out.left_out += 1;
        let client = &mut assignment.clients[c];
        for list in [&mut client.standby_tasks, &mut client.warmup_tasks, &mut client.spare_tasks] {
            if let Some(at) = list.iter().position(|t| *t == task) {
                list.remove(at);
            }
        }
        assignment.followup.watch_list.retain(|w| !(w.task_id == task && w.process_id == process));
    }
    out
}
