//! What a leader keeps of the assignment it last made, for the next one's restore rates: the
//! offset sums it saw and when, and the rule by which the next assignment may use them. The
//! streams group's memory (`streams/optimized.rs`) and the broker plugin's memory keep these.

use std::collections::BTreeMap;

use crate::engine::{AssignmentInput, PreviousRebalance};
use crate::wire::{ProcessId, TaskId};

/// A snapshot older than this many probing intervals is not used for restore rates.
pub(crate) const MAX_AGE_IN_PROBING_INTERVALS: i64 = 3;

/// The end-offset sums and each client's offset sums of one assignment, and when it was made.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    at_ms: i64,
    end_offset_sums: BTreeMap<TaskId, i64>,
    offset_sums: BTreeMap<ProcessId, BTreeMap<TaskId, i64>>,
}

/// Why a snapshot may not serve an assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stale {
    /// The clock is at or before the snapshot's time.
    ClockWentBack,
    /// The snapshot is older than [`MAX_AGE_IN_PROBING_INTERVALS`] probing intervals.
    TooOld,
    /// No client of the snapshot is in the input.
    NoClientLeft,
}

impl Snapshot {
    /// Takes the snapshot of `input` at `now_ms`, moving its end-offset sums and its clients'
    /// offset sums out of it; `None`, and `input` untouched, when it has no end-offset sums.
    pub(crate) fn take(input: &mut AssignmentInput, now_ms: i64) -> Option<Self> {
        let end_offset_sums = input.changelog_end_offset_sums.take()?;
        let offset_sums = input.clients.iter_mut().map(|c| (c.process_id, std::mem::take(&mut c.task_offset_sums))).collect();
        Some(Self { at_ms: now_ms, end_offset_sums, offset_sums })
    }

    /// When the snapshot was taken (epoch ms).
    pub(crate) fn at_ms(&self) -> i64 {
        self.at_ms
    }

    /// The milliseconds since the snapshot if it may serve the assignment of `input` at
    /// `now_ms`: taken before now, at most [`MAX_AGE_IN_PROBING_INTERVALS`] of the input's
    /// probing intervals ago, and by a client still in the input. Else the first of these that
    /// fails, in that order.
    pub(crate) fn elapsed_if_usable(&self, now_ms: i64, input: &AssignmentInput) -> Result<i64, Stale> {
        let elapsed_ms = now_ms.saturating_sub(self.at_ms);
        let max_age = input.configs.probing_rebalance_interval_ms.saturating_mul(MAX_AGE_IN_PROBING_INTERVALS);
        if elapsed_ms <= 0 {
            return Err(Stale::ClockWentBack);
        }
        if elapsed_ms > max_age {
            return Err(Stale::TooOld);
        }
        if !input.clients.iter().any(|c| self.offset_sums.contains_key(&c.process_id)) {
            return Err(Stale::NoClientLeft);
        }
        Ok(elapsed_ms)
    }

    /// The snapshot as the engine reads it, `elapsed_ms` after it was taken.
    pub(crate) fn into_previous(self, elapsed_ms: i64) -> PreviousRebalance {
        PreviousRebalance { elapsed_ms, changelog_end_offset_sums: self.end_offset_sums, task_offset_sums: self.offset_sums }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AssignmentConfigs, ClientInput};

    fn process_id(n: u128) -> ProcessId {
        ProcessId(uuid::Uuid::from_u128(n))
    }

    /// A client `process` with one offset sum, and `probing.rebalance.interval.ms` = `probing_ms`.
    fn input(process: u128, probing_ms: i64) -> AssignmentInput {
        AssignmentInput::new()
            .with_configs(AssignmentConfigs::default().with_probing_rebalance_interval_ms(probing_ms))
            .with_client(ClientInput::new(process_id(process), 1).with_task_offset_sums([(TaskId::new(0, 0), 5)]))
    }

    #[test]
    fn a_snapshot_serves_from_one_ms_to_three_probing_intervals_while_a_client_is_left() {
        let mut then = input(1, 1_000);
        let snap = Snapshot::take(&mut then, 10_000).expect("end-offset sums");
        assert!(then.clients[0].task_offset_sums.is_empty());
        assert_eq!(snap.elapsed_if_usable(10_001, &input(1, 1_000)), Ok(1));
        assert_eq!(snap.elapsed_if_usable(13_000, &input(1, 1_000)), Ok(3_000));
        assert_eq!(snap.elapsed_if_usable(13_001, &input(1, 1_000)), Err(Stale::TooOld));
        assert_eq!(snap.elapsed_if_usable(10_000, &input(1, 1_000)), Err(Stale::ClockWentBack));
        assert_eq!(snap.elapsed_if_usable(10_001, &input(2, 1_000)), Err(Stale::NoClientLeft));
        // The clock before the age, the age before the clients.
        assert_eq!(snap.elapsed_if_usable(9_000, &input(2, 1_000)), Err(Stale::ClockWentBack));
        assert_eq!(snap.elapsed_if_usable(20_000, &input(2, 1_000)), Err(Stale::TooOld));
        // An interval too long to triple is no age limit.
        assert_eq!(snap.elapsed_if_usable(i64::MAX, &input(1, i64::MAX)), Ok(i64::MAX - 10_000));
        let previous = snap.into_previous(7);
        assert_eq!((previous.elapsed_ms, previous.task_offset_sums[&process_id(1)][&TaskId::new(0, 0)]), (7, 5));
    }

    #[test]
    fn an_input_without_end_offset_sums_leaves_no_snapshot_and_keeps_its_offset_sums() {
        let mut then = input(1, 1_000);
        then.changelog_end_offset_sums = None;
        assert!(Snapshot::take(&mut then, 10_000).is_none());
        assert_eq!(then.clients[0].task_offset_sums.len(), 1);
    }
}
