//! Kafka's rule for a client's lag on a task (`ClientState.computeTaskLags`).

use serde::{Deserialize, Serialize};

use crate::wire::{LATEST_OFFSET, UNKNOWN_OFFSET_SUM};

/// How far a client's local state for a task is behind the changelog, as Kafka's leader computes
/// it (`ClientState.computeTaskLags`). The shipped form of KIP-441's "task lags".
///
/// ```
/// use kstreams_assignor::engine::TaskLag;
/// use kstreams_assignor::wire::LATEST_OFFSET;
///
/// assert_eq!(TaskLag::compute(Some(LATEST_OFFSET), 1_000), TaskLag::RUNNING_ACTIVE);
/// assert_eq!(TaskLag::compute(Some(900), 1_000), TaskLag::records(100));
/// assert_eq!(TaskLag::compute(None, 1_000), TaskLag::records(1_000));
/// // Local state ahead of the changelog is presumed corrupt: a full restore.
/// assert_eq!(TaskLag::compute(Some(2_000), 1_000), TaskLag::records(1_000));
/// assert!(TaskLag::records(100).is_caught_up(100));
/// assert!(!TaskLag::UNKNOWN.is_caught_up(i64::MAX - 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskLag(pub i64);

impl TaskLag {
    /// The client runs the task as an active task: always caught up (`-2`).
    pub const RUNNING_ACTIVE: Self = Self(LATEST_OFFSET);
    /// The lag is unknown (`-3`): never caught up.
    pub const UNKNOWN: Self = Self(UNKNOWN_OFFSET_SUM);

    /// A lag of `n` records.
    pub const fn records(n: i64) -> Self {
        Self(n)
    }

    /// Kafka's rule. `reported` is the client's offset sum for the task (`None` when it reported
    /// none, read as 0); `end_offset_sum` is the sum of the changelog end offsets (see
    /// [`end_offset_sum`](crate::wire::end_offset_sum)).
    pub const fn compute(reported: Option<i64>, end_offset_sum: i64) -> Self {
        let offset_sum = match reported {
            Some(v) => v,
            None => 0,
        };
        if offset_sum == LATEST_OFFSET || offset_sum == UNKNOWN_OFFSET_SUM {
            Self(offset_sum)
        } else if end_offset_sum < offset_sum {
            Self(end_offset_sum)
        } else {
            Self(end_offset_sum.wrapping_sub(offset_sum))
        }
    }

    /// Whether a client with this lag counts as caught up, given `acceptable.recovery.lag`
    /// (`i64::MAX` means unbounded).
    pub const fn is_caught_up(self, acceptable_recovery_lag: i64) -> bool {
        self.0 == LATEST_OFFSET || acceptable_recovery_lag == i64::MAX || (self.0 >= 0 && self.0 <= acceptable_recovery_lag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lags_follow_kafka_rules() {
        assert_eq!(TaskLag::compute(Some(UNKNOWN_OFFSET_SUM), 10), TaskLag::UNKNOWN);
        assert_eq!(TaskLag::compute(Some(5), UNKNOWN_OFFSET_SUM), TaskLag::UNKNOWN);
        assert_eq!(TaskLag::compute(Some(0), 0), TaskLag::records(0));
        assert!(TaskLag::records(5).is_caught_up(i64::MAX));
        assert!(!TaskLag::records(101).is_caught_up(100));
        assert!(TaskLag::UNKNOWN.is_caught_up(i64::MAX), "unbounded acceptable lag: everyone is caught up");
    }
}
