//! What Kafka Streams runs when the changelog end offsets could not be fetched:
//! `FallbackPriorTaskAssignor`.

use super::legacy_sticky;
use crate::engine::assignor::{AssignError, TaskAssignor};
use crate::engine::input::AssignmentInput;
use crate::engine::model::Model;
use crate::engine::output::Assignment;

/// The fallback assignor: the legacy sticky assignor in "preserve" mode (every previous active
/// owner keeps its tasks, whatever the quota), without rack awareness, always asking for a
/// probing rebalance so that the lags can be fetched again after `probing.rebalance.interval.ms`.
///
/// # Arguments
/// An [`AssignmentInput`]; lags are not used, so the end offsets may be missing.
///
/// # Returns
/// Kafka 4.4.0's assignment, with `probing_rebalance_needed` set and no warm-ups.
///
/// # Complexity
/// As [`LegacyStickyTaskAssignor`](crate::engine::LegacyStickyTaskAssignor): O(T² + T · N).
///
/// # Example
/// ```
/// use kstreams_assignor::engine::{AssignmentInput, ClientInput, FallbackPriorTaskAssignor, TaskAssignor};
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let (a, b): (ProcessId, ProcessId) = ("00000000-0000-0000-0000-00000000000a".parse().unwrap(), "00000000-0000-0000-0000-00000000000b".parse().unwrap());
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(a, 1))
///     .with_client(ClientInput::new(b, 1).with_owned_active_tasks([TaskId::new(0, 0), TaskId::new(0, 1)]))
///     .with_stateless_tasks([TaskId::new(0, 0), TaskId::new(0, 1)])
///     .with_end_offsets_unavailable();
/// let out = FallbackPriorTaskAssignor.assign(&input).unwrap();
/// // Previous owners keep everything, balance or not.
/// assert_eq!(out.client(&b).unwrap().active_tasks.len(), 2);
/// assert!(out.followup.probing_rebalance_needed);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct FallbackPriorTaskAssignor;

impl FallbackPriorTaskAssignor {
    /// Kafka's class name.
    pub const NAME: &'static str = "FallbackPriorTaskAssignor";
}

impl TaskAssignor for FallbackPriorTaskAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError> {
        let model = Model::new(input)?;
        let placement = legacy_sticky::run(&model, true, None);
        Ok(Assignment::from_placement(Self::NAME, &model, &placement, true, Vec::new()))
    }
}
