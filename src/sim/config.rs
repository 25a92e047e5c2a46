//! How the simulated world behaves between rebalances.

use serde::Serialize;

/// How the simulated world behaves between rebalances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SimConfig {
    /// Records per second one task restores from its changelog (actives and standbys alike).
    pub restore_records_per_sec: i64,
    /// Records per second appended to each task's changelog while the app runs.
    pub produce_records_per_sec: i64,
    /// Stop after this many rebalances even if not converged.
    pub max_rounds: usize,
    /// Kafka Streams' `state.cleanup.delay.ms` (default 600000): each member's state-directory
    /// cleaner runs every this many ms from the start of its process, and deletes the local
    /// state of every task the member neither runs nor keeps as a standby whose directory was
    /// last modified more than this long ago (`StateDirectory#cleanRemovedTasks`). The directory
    /// of a task counts as modified up to the moment the member last owned it. `0` or less: the
    /// state of unowned tasks is never deleted (not a Kafka setting).
    pub state_cleanup_delay_ms: i64,
    /// Simulated time up to which the costs of the copies
    /// ([`Report::changelog_records_read`](super::Report::changelog_records_read),
    /// [`Report::local_copy_ms`](super::Report::local_copy_ms)) are counted: a run that is
    /// stable earlier goes on without rebalancing until then (caught-up standbys and spares keep
    /// fetching, left-behind state waits for the cleaner), so that two runs that settle at
    /// different times pay for the same stretch of time. `0`: until the last rebalance.
    pub observe_until_ms: i64,
}

/// Kafka Streams' default `state.cleanup.delay.ms`.
pub const STATE_CLEANUP_DELAY_MS: i64 = 600_000;

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            restore_records_per_sec: 20_000,
            produce_records_per_sec: 100,
            max_rounds: 200,
            state_cleanup_delay_ms: STATE_CLEANUP_DELAY_MS,
            observe_until_ms: 0,
        }
    }
}
