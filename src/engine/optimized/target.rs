//! Step 2, the target: a min-cost assignment of the stateful tasks to clients with exactly their
//! quotas, then sub-topology trades, and Kafka's rack-aware optimiser on top where enabled.

use super::holders::{effective, lag_candidates};
use super::restore_rates::RestoreRates;
use super::spread::{Mix, rebalance_mix};
use crate::engine::assignor::AssignError;
use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Placement};
use crate::engine::rack_aware::optimizer::RackAwareOptimizer;
use crate::engine::task_lag::TaskLag;
use crate::flow::{self, CostMatrix};

/// Flow cost of a task anywhere but on its caught-up owner: movements count first.
pub(super) const MOVE_COST: i32 = 2_000_000;

/// Flow cost added where the client is not caught up (a warm-up is needed), before twice the
/// estimated restore time in seconds.
pub(super) const COLD_COST: i32 = 200_000;

/// Cap on the restore-time part of a flow cost (seconds).
pub(super) const MAX_RESTORE_SECS: i64 = 99_999;

/// The target re-placed by Kafka's rack-aware optimiser (`min_traffic` or `balance_subtopology`)
/// with the given costs: non-overlap counts against the target, so a task leaves it only where
/// that saves traffic, and every client keeps its number of tasks.
pub(super) fn rack_target(model: &Model<'_>, rack: &mut dyn RackAwareOptimizer, target: &[Client], traffic: i32, non_overlap: i32) -> Vec<Client> {
    let tasks = &model.stateful_tasks;
    let mut placed = Placement::new(model);
    for (&t, &c) in tasks.iter().zip(target) {
        placed.assign_active(c, t);
    }
    rack.optimize_active_tasks(model, tasks, &mut placed, traffic, non_overlap);
    let owners = placed.active_clients(model.tasks.len());
    tasks.iter().zip(target).map(|(&t, &c)| owners[t as usize].unwrap_or(c)).collect()
}

/// The target client of every stateful task (in `model.stateful_tasks` order).
pub(super) fn stateful_target(
    model: &Model<'_>,
    lags: &LagIndex,
    rates: &RestoreRates,
    caps: &[u64],
    quotas: &[usize],
    owners: &[Option<Client>],
) -> Result<Vec<Client>, AssignError> {
    let n = model.num_clients();
    let tasks = &model.stateful_tasks;
    let acceptable = model.input.configs.acceptable_recovery_lag;
    // Per task: whether its owner is caught up, and the client with the smallest lag.
    let owner_caught_up: Vec<bool> = tasks.iter().map(|&t| owners[t as usize].is_some_and(|o| lags.is_caught_up(o, t))).collect();
    let most_caught_up: Vec<(i64, Client)> =
        tasks.iter().map(|&t| lag_candidates(model, lags, t, None).min().unwrap_or((i64::MAX, 0))).collect();
    // The costs below take `lag`, client `c`'s lag on the task (`Model::lag`), so that the
    // matrix can be built a row at a time.
    // Placing a task on a client that is not caught up costs a second movement when it must
    // first go somewhere else to stay available (its owner is gone or behind).
    let interim = |k: usize, lag: i64| -> bool {
        let t = tasks[k];
        if owner_caught_up[k] {
            false
        } else if lags.caught_up_count(t) > 0 {
            true
        } else {
            let (best, at) = most_caught_up[k];
            best < effective(lag) && Some(at) != owners[t as usize]
        }
    };
    // What a placement costs in movements and warm-ups.
    let class_at = |k: usize, c: Client, lag: i64| -> i32 {
        let t = tasks[k];
        match (owners[t as usize] == Some(c), TaskLag(lag).is_caught_up(acceptable)) {
            (true, true) => 0,
            (false, true) => MOVE_COST,
            (true, false) => MOVE_COST + 2,
            (false, false) => MOVE_COST * (1 + i32::from(interim(k, lag))) + COLD_COST,
        }
    };
    // And what its restore time costs.
    let restore_at = |k: usize, c: Client, lag: i64| -> i32 {
        let t = tasks[k];
        if owners[t as usize] != Some(c) && !TaskLag(lag).is_caught_up(acceptable) {
            let secs = rates.restore_ms_at(lag, c, t).map_or(MAX_RESTORE_SECS, |ms| (ms / 1000).min(MAX_RESTORE_SECS));
            2 * secs as i32
        } else {
            0
        }
    };
    let class = |k: usize, c: Client| class_at(k, c, model.lag(c, tasks[k]));
    let restore = |k: usize, c: Client| restore_at(k, c, model.lag(c, tasks[k]));
    // Ties go to the round-robin client, which spreads each sub-topology. Row by row: every
    // client that did not report the task has its unreported lag.
    let mut costs = Vec::with_capacity(tasks.len().saturating_mul(n));
    let mut row = vec![0i64; n];
    for (k, &t) in tasks.iter().enumerate() {
        row.fill(model.unreported_lag(t));
        for &(lag, c) in lags.reporters(t) {
            row[c] = lag;
        }
        costs.extend(row.iter().enumerate().map(|(c, &lag)| class_at(k, c, lag) + restore_at(k, c, lag) + i32::from(k % n != c)));
    }
    let costs = CostMatrix::new(tasks.len(), n, costs).map_err(|_| AssignError::Internal("optimized assignor: cost matrix"))?;
    let mut target = flow::assign(&costs, quotas).map_err(|_| AssignError::Internal("optimized assignor: no target"))?.clients;
    // Then each sub-topology spread over the clients, before the restore time.
    let mut mix = Mix::new(model, tasks, caps);
    rebalance_mix(&mut mix, tasks, owners, &mut target, n, |k, c| (i64::from(class(k, c)), i64::from(restore(k, c))));
    Ok(target)
}
