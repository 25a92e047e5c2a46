//! What a run gives back: a report of every rebalance, or why it could not run.

use serde::Serialize;

use crate::engine::AssignError;

/// What one rebalance did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Round {
    /// 1-based rebalance number.
    pub round: usize,
    /// Simulated time, ms since the scenario started.
    pub time_ms: i64,
    /// What triggered it (an event, or a probing rebalance).
    pub trigger: String,
    /// Members (processes) in the group.
    pub members: usize,
    /// Active tasks that changed owner.
    pub tasks_moved: usize,
    /// Stateful active tasks that changed owner.
    pub stateful_tasks_moved: usize,
    /// Warm-up replicas assigned.
    pub warmups: usize,
    /// Spare copies assigned (standbys beyond `num.standby.replicas` that the optimized assignor
    /// keeps so that a crash restores less; they stay until the next rebalance).
    pub spares: usize,
    /// Max − min active tasks per thread over the members.
    pub load_spread: f64,
    /// Max − min stateful active tasks per thread (stateful tasks carry the load that matters).
    pub stateful_load_spread: f64,
    /// The largest, over the sub-topologies, max − min of one sub-topology's active tasks per
    /// thread (the partitions of a sub-topology carry similar load, different sub-topologies
    /// need not).
    pub subtopology_spread: f64,
    /// Records active tasks must restore before they can process: the unavailability. Each
    /// restore counts once, in the rebalance that starts it (one still under way at a later
    /// rebalance, on the same member, is not counted again).
    pub restoring_lag: i64,
    /// Active tasks that start restoring.
    pub restoring_tasks: usize,
    /// Whether the assignor asked for a probing rebalance.
    pub probing_rebalance: bool,
    /// For a rebalance triggered by an event whose stretch (up to the next event) ends
    /// converged: a lower bound on the active tasks that had to change owner to get from the
    /// assignment before the event to the per-member counts the stretch ends with (see
    /// [`Report::lower_bound`]).
    pub movement_lower_bound: Option<usize>,
    /// Of `restoring_lag`, the records restored by tasks whose new owner was not caught up on
    /// them (its lag above `acceptable.recovery.lag`): the restores KIP-441's rule allows only
    /// where no client is caught up.
    pub restoring_lag_not_caught_up: i64,
    /// With a shadow assignor ([`run_with_shadow`](super::run_with_shadow)): the records its
    /// assignment would have had active tasks restore, on this rebalance's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow_restoring_lag: Option<i64>,
    /// With a shadow assignor: of `shadow_restoring_lag`, the records restored by tasks whose new
    /// owner was not caught up on them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow_restoring_lag_not_caught_up: Option<i64>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Assignor name.
    pub assignor: String,
    /// Every rebalance after the scenario's starting point.
    pub rounds: Vec<Round>,
    /// Whether the assignment ended stable (no probing rebalance wanted, no event left).
    pub converged: bool,
    /// Rebalances after the last event until stable.
    pub rounds_to_converge: usize,
    /// Simulated time from the last event to the stable assignment.
    pub time_to_converge_ms: i64,
    /// Sum of tasks moved over all rounds.
    pub total_tasks_moved: usize,
    /// Sum of warm-ups over all rounds.
    pub total_warmups: usize,
    /// Sum of probing rebalances asked for.
    pub probing_rebalances: usize,
    /// Sum of restoring lag over all rounds.
    pub total_restoring_lag: i64,
    /// Load spread of the final assignment.
    pub final_load_spread: f64,
    /// Stateful load spread of the final assignment.
    pub final_stateful_load_spread: f64,
    /// Sub-topology spread of the final assignment ([`Round::subtopology_spread`]).
    pub final_subtopology_spread: f64,
    /// The movement lower bound summed over the stretches where it applies: from an event's
    /// rebalance up to the next event, when that stretch ends converged. The target is the
    /// assignment the stretch converges to, by its per-member counts of stateful and of
    /// stateless active tasks. A task's type never changes, so a member gives up at least what
    /// it held above each of its two end counts, and every task whose owner is gone moves. Per
    /// stretch: `orphansₛ + orphansₗ + Σ max(0, heldₛ − targetₛ) + Σ max(0, heldₗ − targetₗ) +
    /// unplaced`, where `held` counts the active tasks a member owned before the event, `target`
    /// those it owns at the end, `ₛ` restricts to stateful tasks and `ₗ` to stateless ones. By
    /// KIP-441's rule that an active task only moves to a caught-up client while one exists,
    /// and where none is, to the most caught-up client rather than a staler one (Kafka's
    /// `TaskMovement`), a stateful orphan with caught-up copies lands on one of their holders
    /// first, and one without but with a copy fresher than some member's on a holder of its
    /// freshest copy; `unplaced` is how many such orphans a maximum matching cannot place on
    /// such a holder with room below its stateful target (each costs one more move: one more
    /// task leaves that holder, or the orphan moves twice). `None` if it applies nowhere. It measures the moves made on the way
    /// to the end counts, not the choice of those counts (the final spread is compared apart).
    pub lower_bound: Option<usize>,
    /// Tasks moved in the stretches where the lower bound applies.
    pub bounded_tasks_moved: usize,
    /// What departures cost on average, whoever departs: at each crash or departure, before it
    /// happens, the mean over the members up of the records their active stateful tasks would
    /// restore if that member went (each from the freshest copy any other member has), summed
    /// over those events. `restoring_lag` counts what the member that actually went cost; this
    /// takes the luck of which member that was out.
    pub expected_departure_restore: i64,
    /// What the copies cost the brokers: the changelog records fetched by copies that do not run
    /// as actives (restoring actives, warm-ups, standbys and spares; a caught-up standby keeps
    /// fetching what is produced), over the whole run and on to
    /// [`SimConfig::observe_until_ms`](super::SimConfig::observe_until_ms).
    pub changelog_records_read: i64,
    /// What the copies cost the members' disks: task state the members up hold beyond their
    /// active tasks (standbys, warm-ups, spares, and state left behind until the
    /// `state.cleanup.delay.ms` cleaner deletes it), in copies × ms over the whole run and on to
    /// [`SimConfig::observe_until_ms`](super::SimConfig::observe_until_ms).
    pub local_copy_ms: i64,
    /// Task downtime: the time active tasks did not process, tasks × ms, from the start of the
    /// run (its starting assignment included) until every task runs. A task is down while no
    /// member holds it (unowned: on the streams protocol between its revocation and its new
    /// owner's next heartbeat; on the classic protocol, where a task moves within the
    /// rebalance, only while no member is up) and while its owner restores it from its
    /// changelog, restores still under way when the run ends counted to their end at their
    /// rate. Neither protocol's rebalance pauses processing in the model.
    pub task_downtime_ms: i64,
}

/// The simulation could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The assignor rejected its input or failed.
    #[error("round {round}: {source}")]
    Assign {
        /// The rebalance that failed.
        round: usize,
        /// Why.
        source: AssignError,
    },
    /// The scenario refers to a member that does not exist, or is malformed.
    #[error("scenario `{scenario}`: {problem}")]
    Scenario {
        /// Scenario name.
        scenario: String,
        /// What is wrong.
        problem: String,
    },
}
