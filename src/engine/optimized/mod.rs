//! An assignor that keeps the high-availability assignor's guarantees and moves less: a sticky,
//! capacity-proportional target, warm-ups picked by how soon they finish, a probing deadline
//! set to when they are predicted to have caught up, standbys that move make-before-break, and
//! spare copies from the idle warm-up budget.
//!
//! [`OptimizedTaskAssignor::assign`] runs seven steps (its documentation says what each does);
//! the work of each is in its own file:
//!
//! | step | file |
//! |---|---|
//! | 1. quotas (stateful, standby and stateless counts per client) | `quotas.rs` |
//! | 2. the stateful target, with sub-topology trades (`spread.rs`) and rack awareness | `target.rs`, `spread.rs` |
//! | 3. availability: actives kept where caught up, warm-ups soonest first | `mod.rs` (with `holders.rs`) |
//! | 4. standbys | `standbys.rs` |
//! | 5. spares: fresher copies kept, the idle warm-up budget | `spares.rs` |
//! | 6. stateless tasks | `stateless.rs` |
//! | 7. the probing deadline, from the restore-rate estimate | `mod.rs`, `restore_rates.rs` |
//!
//! `holders.rs` answers who holds which copy (previous owners, best caught-up holders) for all
//! of them.

mod holders;
pub(crate) mod quotas;
mod restore_rates;
mod spares;
mod spread;
mod standbys;
mod stateless;
mod target;

use self::holders::{best_caught_up, better_holder, previous_owners};
use self::quotas::{imbalance, quota_window, sticky_quotas};
use self::restore_rates::RestoreRates;
use self::spares::{keep_fresher_copies, place_spares};
use self::standbys::place_standbys;
use self::stateless::{place_stateless, stateless_owners};
use self::target::{rack_target, stateful_target};
use crate::engine::assignor::{AssignError, TaskAssignor};
use crate::engine::costs::{HIGH_AVAILABILITY_NON_OVERLAP_COST, HIGH_AVAILABILITY_TRAFFIC_COST, STATELESS_COSTS};
use crate::engine::input::AssignmentInput;
use crate::engine::kafka::standby;
use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::engine::output::Assignment;
use crate::engine::rack_aware;

/// The probing deadline when no restore rate has been observed yet: a first look, after which
/// the rates are known (capped by `probing.rebalance.interval.ms`).
pub const FIRST_PROBE_MS: i64 = 60_000;

/// The earliest probing deadline the assignor asks for.
pub const MIN_PROBE_MS: i64 = 1_000;

/// The optimized assignor: Kafka's high-availability guarantees (an active task only moves to a
/// client that is caught up on it, through a warm-up otherwise; at most `max.warmup.replicas`
/// warm-ups; `min(num.standby.replicas, N − 1)` standbys; capacity-proportional balance), with
/// a target that depends on where the tasks are. Warm-ups and spares together never exceed
/// `max.warmup.replicas` (plus `max.spare.replicas`, 0 by default).
///
/// # Arguments
/// An [`AssignmentInput`]. The optional
/// [`previous_rebalance`](AssignmentInput::previous_rebalance) gives observed restore rates.
///
/// # Returns
/// An [`Assignment`], built in this order:
/// 1. **quotas**: the stateful tasks are dealt one at a time to the client with the least tasks
///    per thread (capacity-proportional); then each client gets as many as it can keep of the
///    tasks it runs (or is the best caught-up holder of) without leaving the per-thread range
///    of that deal, so the balance is the deal's and the movement is minimal. Of two deals with
///    the same spread, the one that lets clients keep more of what they run wins, stateless
///    tasks included (a client does not gain a stateful task only to give up a stateless one).
///    With `stream.imbalance.percentage` (the KIP-441 draft's balance factor, 0 by default), a
///    client also keeps what it runs while its count stays within that percentage of its
///    capacity-proportional share; the same tolerance applies to the stateless and standby
///    quotas;
/// 2. **target**: a min-cost assignment of the stateful tasks to clients with exactly those
///    quotas ([`flow::assign_sparse`](crate::flow::assign_sparse)). Costs, in order of weight: a task off its caught-up owner (a
///    movement); on a client that is not caught up (a warm-up); the estimated restore time
///    there (the lag over the client's observed restore rate); not on its round-robin client.
///    Only the balance forces tasks off their owners, so a membership change moves only what
///    the new quotas require. Then the clients trade targets where that spreads each
///    sub-topology closer to their capacity-proportional shares without adding a movement or a
///    warm-up (which tasks move, not how many): a new member gets a mix of sub-topologies, not
///    only the one that restores fastest;
/// 3. **availability**: a task whose target client is not caught up stays on a caught-up client
///    (its current owner first) or, when none is, on the client with the smallest lag if that is
///    strictly smaller than the target's; the target gets a warm-up. Warm-ups go first to the
///    moves predicted to finish soonest, at most `max.warmup.replicas`;
/// 4. **standbys**: per-client quotas dealt as for actives on top of the target's actives, and a
///    min-cost flow that keeps the copies that exist (caught-up ones first), then prefers the
///    target of a pending move, and exceeds a quota only where the quotas cannot be met. With
///    `rack.aware.assignment.tags`, Kafka's tag-aware placement runs instead;
/// 5. **spares**: extra copies of stateful tasks, so that a crash restores less. First,
///    standbys move make-before-break: where a task's standby is still restoring, a fresher copy
///    a member holds (usually the standby it replaces) stays until the next rebalance. Then the
///    part of `max.warmup.replicas` that no warm-up needs (plus `max.spare.replicas`, this
///    crate's key, 0 by default) covers stateful tasks that have no caught-up standby: each
///    spare goes to a task of the client whose crash would restore the most, its largest task
///    first, on the client with the freshest copy. A caught-up spare stays unless a task twice
///    its size needs one. Spares are standbys on the wire, are listed in
///    [`ClientAssignment::spare_tasks`](super::ClientAssignment::spare_tasks) and never ask for a
///    probing rebalance;
/// 6. **stateless tasks**: quotas on all active tasks per thread; a client keeps the tasks it
///    owned while it has room (giving up first those of the sub-topology it holds most of beyond
///    its share), and every other task goes to the client with room that holds least of its
///    sub-topology;
/// 7. **probing**: wanted iff some active is not on its target; the interval is the predicted
///    time for the warm-ups to catch up fully (their lag over the observed net restore rate,
///    plus 10 % and a second), between [`MIN_PROBE_MS`] and `probing.rebalance.interval.ms`;
///    [`FIRST_PROBE_MS`] while no rate is known.
///
/// **Rack awareness** (KIP-925) applies where Kafka's assignor would enable it
/// (`rack.aware.assignment.strategy` set, every client's rack and every partition's replica racks
/// known): Kafka's optimiser re-places the target of step 2 (non-overlap counted against that
/// target, so a task leaves it only where that saves traffic), swaps the standbys of step 4 and
/// re-places the stateless tasks of step 6, each keeping every client's number of tasks, with
/// `rack.aware.assignment.traffic_cost` and `non_overlap_cost` or the high-availability
/// assignor's defaults (10 and 1). A task the target moves to another rack still goes through a
/// warm-up first.
///
/// # Complexity
/// For T stateful tasks, N clients and S standbys per task: the target's costs O(T·(S + K)) for
/// the K distinct restore rates of the clients (1 without a previous rebalance), as each task's
/// owner, reporters and round-robin client plus one cost per rate class, and its assignment
/// about O(T·(S + K)·log T) ([`flow::assign_sparse`](crate::flow::assign_sparse); up to 65,536
/// tasks × clients the dense [`flow::assign`](crate::flow::assign), O(T·N²) at worst); the standby flow
/// successive shortest paths for T·S units over T·(1 + copies) + N edges, and its deal
/// O(T·S·(S + log N)) plus O(T·N·S) per trade (T·N edges where no deal exists and it falls back
/// to the full network); the spares O(T·N + W·T) for a budget of W; the sub-topology
/// trades about 64·(T + N·G) steps at most for G sub-topologies. Memory O(T·(S + K) + N·K) for
/// the target; with rack awareness, the rack-aware optimiser's passes on top. Measured by
/// `cargo run --release --example scale_chart` (CPU time per assign, 2 cores, one standby),
/// 1,000 clients × 10,000 tasks took 27 ms and 10,000 clients × 100,000 tasks 0.62 s, against
/// 0.99 s and (at 10,000 × 10,000) 14 s for this crate's port of Kafka's assignor; see
/// `docs/optimized.md` for the grid.
///
/// # Example
/// ```
/// use kstreams_assignor::engine::{AssignmentInput, ClientInput, OptimizedTaskAssignor, TaskAssignor};
/// use kstreams_assignor::wire::{ProcessId, TaskId, LATEST_OFFSET};
///
/// let (a, b): (ProcessId, ProcessId) = ("00000000-0000-0000-0000-00000000000a".parse().unwrap(), "00000000-0000-0000-0000-00000000000b".parse().unwrap());
/// let tasks: Vec<TaskId> = (0..4).map(|p| TaskId::new(0, p)).collect();
/// // `b` runs all four tasks; `a` has just joined.
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(a, 1))
///     .with_client(ClientInput::new(b, 1).with_task_offset_sums(tasks.iter().map(|t| (t.clone(), LATEST_OFFSET))))
///     .with_stateful_tasks(tasks.iter().map(|t| (t.clone(), 50_000)));
/// let out = OptimizedTaskAssignor.assign(&input).unwrap();
/// // `b` keeps every active while `a` warms up two of them.
/// assert_eq!(out.client(&b).unwrap().active_tasks.len(), 4);
/// assert_eq!(out.client(&a).unwrap().warmup_tasks.len(), 2);
/// assert!(out.followup.probing_rebalance_needed);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OptimizedTaskAssignor;

impl OptimizedTaskAssignor {
    /// The assignor's name (not one of Kafka's classes).
    pub const NAME: &'static str = "OptimizedTaskAssignor";
}

impl TaskAssignor for OptimizedTaskAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError> {
        let model = Model::new(input)?;
        let configs = &input.configs;
        let n = model.num_clients();
        let caps: Vec<u64> = model.clients.iter().map(|c| u64::from(c.capacity)).collect();
        let lags = LagIndex::new(&model);
        let rates = RestoreRates::new(&model);
        let mut placement = Placement::new(&model);
        let imbalance = imbalance(&model);

        crate::interrupt::checkpoint();
        // 1–2. Quotas and the target of the stateful actives.
        let stateful = &model.stateful_tasks;
        let owners = previous_owners(&model);
        // A client claims the tasks it would keep: those it runs, and those it is the best
        // caught-up holder of when their owner is gone or behind.
        let mut claims = vec![0usize; n];
        for &t in stateful {
            crate::interrupt::tick();
            let keeper = owners[t as usize]
                .filter(|&c| lags.is_caught_up(c, t))
                .or_else(|| best_caught_up(&model, &lags, t, None, &owners));
            if let Some(c) = keeper {
                claims[c] += 1;
            }
        }
        // The stateless tasks each client runs, and the room the balance of all actives leaves
        // it for more stateful tasks. (The per-task owners are listed again for step 6 rather
        // than held through the standby step.)
        let mut owned = vec![0usize; n];
        stateless_owners(&model).into_iter().flatten().for_each(|c| owned[c] += 1);
        let kept: Vec<usize> = claims.iter().zip(&owned).map(|(s, l)| s + l).collect();
        let all = sticky_quotas(stateful.len() + model.stateless_tasks.len(), &caps, &vec![0; n], &kept, usize::MAX, imbalance);
        let room: Vec<i64> = all.iter().zip(&kept).map(|(&a, &k)| a as i64 - k as i64).collect();
        let quotas = quota_window(stateful.len(), &caps, &vec![0; n], &claims, usize::MAX, imbalance, Some(&room)).0;
        // The lag index goes to the target, which frees it once its costs are known, so that
        // the solver and the trades find its room; it is built again for step 3 (the same
        // index, from the same model; 0.1 s at a million tasks).
        let mut target = stateful_target(&model, lags, &rates, &caps, &quotas, &owners)?;
        crate::interrupt::checkpoint();
        let lags = LagIndex::new(&model);
        // Rack awareness (KIP-925), where Kafka's assignor would apply it: the target's tasks
        // re-placed for less cross-rack traffic, each client keeping its number of them.
        let mut rack = rack_aware::for_model(&model);
        let traffic = configs.rack_aware_assignment_traffic_cost.unwrap_or(HIGH_AVAILABILITY_TRAFFIC_COST);
        let non_overlap = configs.rack_aware_assignment_non_overlap_cost.unwrap_or(HIGH_AVAILABILITY_NON_OVERLAP_COST);
        if rack.can_enable() {
            target = rack_target(&model, &mut *rack, &target, traffic, non_overlap);
        }

        crate::interrupt::checkpoint();
        // 3. Actives: on the target when it is caught up, else where availability is kept.
        let mut pending: Vec<(Task, Client)> = Vec::new();
        for (k, &t) in stateful.iter().enumerate() {
            let d = target[k];
            let holder = if lags.is_caught_up(d, t) { d } else { better_holder(&model, &lags, t, d, &owners).unwrap_or(d) };
            if holder != d {
                pending.push((t, d));
            }
            placement.assign_active(holder, t);
        }
        // Neither is read after this step; freed, the standby step's network has their room.
        // Nor is the lag index read by the standby step, whose network is the largest thing an
        // assign builds: it is freed for that step and built again for the spares (the same
        // index, from the same model; 0.1 s at a million tasks, for 55 MB of the peak).
        drop((owners, target, lags));

        crate::interrupt::checkpoint();
        // 4. Standbys.
        let wanted = usize::try_from(configs.num_standby_replicas.max(0)).unwrap_or(0).min(n - 1);
        if !configs.rack_aware_assignment_tags.is_empty() && configs.num_standby_replicas != 0 {
            standby::for_configs(configs).assign(&model, &mut placement);
        } else if wanted > 0 {
            place_standbys(&model, &mut placement, &caps, &quotas, wanted, &pending)?;
        }
        if wanted > 0 && rack.can_enable() {
            let standbys = standby::for_configs(configs);
            let allowed = |p: &Placement, s, d, t| standbys.is_allowed_standby_swap(&model, p, s, d, t);
            rack.optimize_standby_tasks(&model, &mut placement, traffic, non_overlap, &allowed);
        }

        // Warm-ups: pending moves whose target holds no copy, soonest first.
        let mut progressing: Vec<(Task, Client)> = Vec::new();
        let mut candidates: Vec<(i64, Task, Client)> = Vec::new();
        for &(t, d) in &pending {
            if placement.has_standby(d, t) {
                progressing.push((t, d));
            } else {
                candidates.push((rates.restore_ms(&model, d, t).unwrap_or(i64::MAX), t, d));
            }
        }
        candidates.sort_unstable();
        let budget = usize::try_from(configs.max_warmup_replicas).unwrap_or(0);
        let mut warmups = Vec::new();
        for &(_, t, d) in candidates.iter().take(budget) {
            placement.assign_standby(d, t);
            warmups.push((d, t));
            progressing.push((t, d));
        }

        crate::interrupt::checkpoint();
        // 5. Spares: the copies moved standbys leave behind, then the warm-up budget no move
        // needs, and `max.spare.replicas`, keep copies where a crash would cost most.
        let extra = usize::try_from(configs.max_spare_replicas).unwrap_or(0);
        let lags = LagIndex::new(&model);
        let mut spares = keep_fresher_copies(&model, &lags, &mut placement, &warmups);
        spares.extend(place_spares(&model, &lags, &mut placement, budget - warmups.len() + extra, &warmups));

        crate::interrupt::checkpoint();
        // 6. Stateless actives: sticky within the quotas on all actives, counted against the
        // stateful target (not the actives held while warm-ups restore), so that they do not
        // move back and forth while the stateful tasks converge.
        let active_counts: Vec<usize> = quotas.clone();
        let keep: Vec<usize> = active_counts.iter().zip(&owned).map(|(a, o)| a + o).collect();
        let totals = sticky_quotas(model.stateless_tasks.len(), &caps, &active_counts, &keep, usize::MAX, imbalance);
        let room: Vec<usize> = totals.iter().zip(&active_counts).map(|(q, a)| q - a).collect();
        place_stateless(&model, &mut placement, &caps, &stateless_owners(&model), room)?;
        if rack.can_enable() {
            let (traffic, non_overlap) = STATELESS_COSTS;
            rack.optimize_active_tasks(&model, &model.stateless_tasks, &mut placement, traffic, non_overlap);
        }

        crate::interrupt::checkpoint();
        // 7. Probing deadline.
        let needed = !pending.is_empty();
        let interval = configs.probing_rebalance_interval_ms;
        let mut deadline = Some(0i64);
        for &(t, d) in &progressing {
            let lag = model.lag(d, t);
            // Fully caught up, not just within `acceptable.recovery.lag`: the active then moves
            // without restoring anything.
            let remaining = (lag >= 0).then_some(lag);
            let ms = remaining.and_then(|r| rates.net_rate(d, t).map(|rate| (r as f64 / rate * 1.1) as i64 + 1_000));
            deadline = deadline.zip(ms).map(|(a, b)| a.max(b));
        }
        let after = match deadline {
            _ if progressing.is_empty() => interval,
            Some(ms) => ms.clamp(MIN_PROBE_MS, interval),
            None => FIRST_PROBE_MS.min(interval),
        };
        let mut out = Assignment::from_placement(Self::NAME, &model, &placement, needed, warmups);
        out.mark_spares(&model, &spares);
        out.followup.probing_rebalance_interval_ms = after;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
