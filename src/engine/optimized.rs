//! An assignor that keeps the high-availability assignor's guarantees and moves less: a sticky,
//! capacity-proportional target, warm-ups picked by how soon they finish, a probing deadline
//! set to when they are predicted to have caught up, standbys that move make-before-break, and
//! spare copies from the idle warm-up budget.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::assignor::{AssignError, TaskAssignor};
use super::costs::{HIGH_AVAILABILITY_NON_OVERLAP_COST, HIGH_AVAILABILITY_TRAFFIC_COST, STATELESS_COSTS};
use super::input::AssignmentInput;
use super::lags::LagIndex;
use super::model::{Client, Model, Placement, Task};
use super::output::Assignment;
use super::rack_aware::optimizer::RackAwareOptimizer;
use super::rack_aware;
use super::spread::{Mix, rebalance_mix};
use super::kafka::standby;
use crate::flow::{self, CostMatrix, Graph};
use super::task_lag::TaskLag;
use crate::wire::LATEST_OFFSET;

/// The probing deadline when no restore rate has been observed yet: a first look, after which
/// the rates are known (capped by `probing.rebalance.interval.ms`).
pub const FIRST_PROBE_MS: i64 = 60_000;
/// The earliest probing deadline the assignor asks for.
pub const MIN_PROBE_MS: i64 = 1_000;
/// Restore rate assumed, for ranking only, where none has been observed (records per second).
const NOMINAL_RECORDS_PER_SEC: i64 = 1_000;
/// Flow cost of a task anywhere but on its caught-up owner: movements count first.
const MOVE_COST: i32 = 2_000_000;
/// Flow cost added where the client is not caught up (a warm-up is needed), before twice the
/// estimated restore time in seconds.
const COLD_COST: i32 = 200_000;
/// Cap on the restore-time part of a flow cost (seconds).
const MAX_RESTORE_SECS: i64 = 99_999;

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
///    quotas ([`flow::assign`]). Costs, in order of weight: a task off its caught-up owner (a
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
/// For T stateful tasks, N clients and S standbys per task: O(T·N) to deal the quotas and build
/// the costs; the target's assignment flow O(T·N²) at worst ([`flow::assign`]); the standby flow
/// successive shortest paths for T·S units over T·(1 + copies) + N edges, and its deal
/// O(T·S·(S + log N)) plus O(T·N·S) per trade (T·N edges where no deal exists and it falls back
/// to the full network); the spares O(T·N + W·T) for a budget of W; the sub-topology
/// trades about 64·(T + N·G) steps at most for G sub-topologies. Memory O(T·N) for the target's
/// costs; with rack awareness, the rack-aware optimiser's passes on top. In one run of
/// `compat/java/parity.sh --bench` (criterion on `benches/engine.rs`, 2 cores), 100 clients × 2,000
/// tasks with one standby took 9.0 ms and 1,000 clients × 10,000 tasks 0.58 s (peak 228 MB),
/// against 16 ms and 0.85 s for this crate's port of Kafka's assignor and 695 ms and 81 s for
/// Kafka's own Java classes.
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

        // 1–2. Quotas and the target of the stateful actives.
        let stateful = &model.stateful_tasks;
        let owners = previous_owners(&model);
        // A client claims the tasks it would keep: those it runs, and those it is the best
        // caught-up holder of when their owner is gone or behind.
        let mut claims = vec![0usize; n];
        for &t in stateful {
            let keeper = owners[t as usize]
                .filter(|&c| lags.is_caught_up(c, t))
                .or_else(|| best_caught_up(&model, &lags, t, None, &owners));
            if let Some(c) = keeper {
                claims[c] += 1;
            }
        }
        // The stateless tasks each client runs, and the room the balance of all actives leaves
        // it for more stateful tasks.
        let mut owner: Vec<Option<Client>> = vec![None; model.tasks.len()];
        let mut owned = vec![0usize; n];
        for (c, client) in model.clients.iter().enumerate() {
            for task in &client.input.owned_active_tasks {
                let t = model.task_index[task] as usize;
                if !model.stateful[t] && owner[t].is_none() {
                    owner[t] = Some(c);
                    owned[c] += 1;
                }
            }
        }
        let kept: Vec<usize> = claims.iter().zip(&owned).map(|(s, l)| s + l).collect();
        let all = sticky_quotas(stateful.len() + model.stateless_tasks.len(), &caps, &vec![0; n], &kept, usize::MAX, imbalance);
        let room: Vec<i64> = all.iter().zip(&kept).map(|(&a, &k)| a as i64 - k as i64).collect();
        let quotas = quota_window(stateful.len(), &caps, &vec![0; n], &claims, usize::MAX, imbalance, Some(&room)).0;
        let mut target = stateful_target(&model, &lags, &rates, &caps, &quotas, &owners)?;
        // Rack awareness (KIP-925), where Kafka's assignor would apply it: the target's tasks
        // re-placed for less cross-rack traffic, each client keeping its number of them.
        let mut rack = rack_aware::for_model(&model);
        let traffic = configs.rack_aware_assignment_traffic_cost.unwrap_or(HIGH_AVAILABILITY_TRAFFIC_COST);
        let non_overlap = configs.rack_aware_assignment_non_overlap_cost.unwrap_or(HIGH_AVAILABILITY_NON_OVERLAP_COST);
        if rack.can_enable() {
            target = rack_target(&model, &mut *rack, &target, traffic, non_overlap);
        }

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

        // 5. Spares: the copies moved standbys leave behind, then the warm-up budget no move
        // needs, and `max.spare.replicas`, keep copies where a crash would cost most.
        let extra = usize::try_from(configs.max_spare_replicas).unwrap_or(0);
        let mut spares = keep_fresher_copies(&model, &lags, &mut placement, &warmups);
        spares.extend(place_spares(&model, &lags, &mut placement, budget - warmups.len() + extra, &warmups));

        // 6. Stateless actives: sticky within the quotas on all actives, counted against the
        // stateful target (not the actives held while warm-ups restore), so that they do not
        // move back and forth while the stateful tasks converge.
        let active_counts: Vec<usize> = quotas.clone();
        let keep: Vec<usize> = active_counts.iter().zip(&owned).map(|(a, o)| a + o).collect();
        let totals = sticky_quotas(model.stateless_tasks.len(), &caps, &active_counts, &keep, usize::MAX, imbalance);
        let room: Vec<usize> = totals.iter().zip(&active_counts).map(|(q, a)| q - a).collect();
        place_stateless(&model, &mut placement, &caps, &owner, room)?;
        if rack.can_enable() {
            let (traffic, non_overlap) = STATELESS_COSTS;
            rack.optimize_active_tasks(&model, &model.stateless_tasks, &mut placement, traffic, non_overlap);
        }

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

/// The target re-placed by Kafka's rack-aware optimiser (`min_traffic` or `balance_subtopology`)
/// with the given costs: non-overlap counts against the target, so a task leaves it only where
/// that saves traffic, and every client keeps its number of tasks.
fn rack_target(model: &Model<'_>, rack: &mut dyn RackAwareOptimizer, target: &[Client], traffic: i32, non_overlap: i32) -> Vec<Client> {
    let tasks = &model.stateful_tasks;
    let mut placed = Placement::new(model);
    for (&t, &c) in tasks.iter().zip(target) {
        placed.assign_active(c, t);
    }
    rack.optimize_active_tasks(model, tasks, &mut placed, traffic, non_overlap);
    let owners = placed.active_clients(model.tasks.len());
    tasks.iter().zip(target).map(|(&t, &c)| owners[t as usize].unwrap_or(c)).collect()
}

/// The stateless actives, `room[c]` on client `c`: each client keeps the tasks it ran while it
/// has room, giving up first those of the sub-topology it holds most of beyond its
/// capacity-proportional share; every other task goes to the client with room that holds least
/// of its sub-topology (then the least loaded, the lower index).
///
/// Complexity: O(L·(G + N)) for L stateless tasks, G sub-topologies and N clients.
fn place_stateless(
    model: &Model<'_>,
    placement: &mut Placement,
    caps: &[u64],
    owner: &[Option<Client>],
    mut room: Vec<usize>,
) -> Result<(), AssignError> {
    let n = model.num_clients();
    let mut mix = Mix::new(model, &model.stateless_tasks, caps);
    let mut kept: Vec<Vec<Task>> = vec![Vec::new(); n];
    let mut homeless = Vec::new();
    for &t in &model.stateless_tasks {
        match owner[t as usize] {
            Some(c) => {
                kept[c].push(t);
                mix.add(c, t);
            }
            None => homeless.push(t),
        }
    }
    for (c, tasks) in kept.iter_mut().enumerate() {
        if tasks.len() > room[c] {
            // Per group, the client's tasks in task order; it gives up the last task of the
            // group it holds most of beyond its share (the last group on a tie), one at a time.
            let mut by_group: BTreeMap<usize, Vec<Task>> = BTreeMap::new();
            for &t in tasks.iter() {
                by_group.entry(mix.group(t)).or_default().push(t);
            }
            for _ in room[c]..tasks.len() {
                let g = by_group
                    .iter()
                    .filter(|(_, ts)| !ts.is_empty())
                    .map(|(&g, _)| g)
                    .fold(None, |best: Option<usize>, g| match best {
                        Some(b) if mix.excess(c, b) > mix.excess(c, g) => Some(b),
                        _ => Some(g),
                    })
                    .ok_or(AssignError::Internal("optimized assignor: stateless room"))?;
                let t = by_group.get_mut(&g).and_then(Vec::pop).ok_or(AssignError::Internal("optimized assignor: stateless room"))?;
                mix.remove(c, t);
                homeless.push(t);
            }
            *tasks = by_group.into_values().flatten().collect();
        }
        for &t in tasks.iter() {
            placement.assign_active(c, t);
        }
        room[c] -= tasks.len();
    }
    homeless.sort_unstable();
    for t in homeless {
        let g = mix.group(t);
        let c = (0..n)
            .filter(|&c| room[c] > 0)
            .min_by(|&a, &b| {
                mix.excess(a, g).total_cmp(&mix.excess(b, g)).then(placement.assigned_load(a).total_cmp(&placement.assigned_load(b))).then(a.cmp(&b))
            })
            .ok_or(AssignError::Internal("optimized assignor: no room for a stateless task"))?;
        room[c] -= 1;
        mix.add(c, t);
        placement.assign_active(c, t);
    }
    Ok(())
}

/// Spare replicas: up to `budget` standbys beyond `num.standby.replicas`, so that a crash of a
/// task's owner restores less. A task qualifies when no warm-up is moving it and it has no
/// standby (its weight: its changelog size, the restore a spare saves once caught up) or only
/// standbys still restoring (its weight: how much further ahead the spare's client is than the
/// best of them, as when a standby moves and its old client still holds a fresh copy). One at a
/// time, each spare goes to a task of the client whose crash would restore the most (the sum of
/// the weights of its qualifying actives), its heaviest task first. A copy already caught up
/// counts twice, so a spare stays where it is unless the need elsewhere is twice as large. Each
/// spare goes to the client with the freshest copy, then the least load.
///
/// Complexity: O(T·N + min(budget, T)·T) for T stateful tasks and N clients.
fn place_spares(
    model: &Model<'_>,
    lags: &LagIndex,
    placement: &mut Placement,
    budget: usize,
    warmups: &[(Client, Task)],
) -> Vec<(Client, Task)> {
    let mut spares = Vec::new();
    if budget == 0 {
        return spares;
    }
    let n = model.num_clients();
    let owners = placement.active_clients(model.tasks.len());
    // Per task: what a crash of its owner would restore from its standbys (`i64::MAX`: none).
    let mut exposed = vec![i64::MAX; model.tasks.len()];
    for c in 0..n {
        for &t in &placement.standby[c] {
            let lag = if lags.is_caught_up(c, t) { 0 } else { effective_lag(model, c, t) };
            exposed[t as usize] = exposed[t as usize].min(lag);
        }
    }
    // A task warming up for a move is on its way already.
    warmups.iter().for_each(|&(_, t)| exposed[t as usize] = 0);
    // Per exposed stateful task with a known size: its owner, the spare's host, the weight.
    let mut candidates: Vec<(Task, Client, Client, i64)> = Vec::new();
    let mut exposure = vec![0i64; n];
    for &t in &model.stateful_tasks {
        let size = model.end_offset_sums[t as usize];
        let Some(owner) = owners[t as usize] else { continue };
        if size <= 0 || exposed[t as usize] == 0 {
            continue;
        }
        let by_copy = |&a: &Client, &b: &Client| {
            effective_lag(model, a, t)
                .cmp(&effective_lag(model, b, t))
                .then(placement.assigned_load(a).total_cmp(&placement.assigned_load(b)))
                .then(a.cmp(&b))
        };
        let Some(host) = (0..n).filter(|&c| c != owner && !placement.has_standby(c, t)).min_by(by_copy) else { continue };
        // A task without standbys is worth its size (once caught up, the spare saves a whole
        // restore); one whose standbys still restore, what the spare's head start saves.
        let weight = match exposed[t as usize] {
            i64::MAX => size,
            lag => lag.min(size) - effective_lag(model, host, t).clamp(0, lag.min(size)),
        };
        if weight <= 0 {
            continue;
        }
        let weight = if lags.is_caught_up(host, t) { weight.saturating_mul(2) } else { weight };
        exposure[owner] = exposure[owner].saturating_add(weight);
        candidates.push((t, owner, host, weight));
    }
    for _ in 0..budget {
        let best = (0..candidates.len()).max_by(|&i, &j| {
            let (a, b) = (&candidates[i], &candidates[j]);
            exposure[a.1].cmp(&exposure[b.1]).then(a.3.cmp(&b.3)).then(b.0.cmp(&a.0))
        });
        let Some(i) = best else { break };
        let (t, owner, host, weight) = candidates.swap_remove(i);
        exposure[owner] -= weight;
        placement.assign_standby(host, t);
        spares.push((host, t));
    }
    spares
}

/// Standbys move make-before-break: where a task's standbys (warm-ups aside) include copies
/// still restoring, each of its other local copies that is fresher than one of them stays as a
/// spare until the next rebalance, the freshest against the stalest. Such a copy is state a
/// member reported and still holds, usually the standby (or active) it ran until now: keeping it
/// adds no restore the new standby does not need anyway, and if the active's client crashes
/// before the new standby catches up, the task restores from the kept copy instead.
///
/// Complexity: O(S·log W + R·log R) for S standbys, W warm-ups and R reported offset sums.
fn keep_fresher_copies(
    model: &Model<'_>,
    lags: &LagIndex,
    placement: &mut Placement,
    warmups: &[(Client, Task)],
) -> Vec<(Client, Task)> {
    let warming: BTreeSet<(Client, Task)> = warmups.iter().copied().collect();
    // Per task: the lags of its standbys still restoring.
    let mut restoring: Vec<Vec<i64>> = vec![Vec::new(); model.tasks.len()];
    for (c, standbys) in placement.standby.iter().enumerate() {
        for &t in standbys {
            if !lags.is_caught_up(c, t) && !warming.contains(&(c, t)) {
                restoring[t as usize].push(effective_lag(model, c, t));
            }
        }
    }
    let mut kept = Vec::new();
    for &t in &model.stateful_tasks {
        let stale = &mut restoring[t as usize];
        if stale.is_empty() {
            continue;
        }
        stale.sort_unstable_by(|a, b| b.cmp(a));
        let mut fresher: Vec<(i64, Client)> = lags
            .reporters(t)
            .iter()
            .filter(|&&(_, c)| !placement.has_assigned_task(c, t))
            .map(|&(_, c)| (effective_lag(model, c, t), c))
            .collect();
        fresher.sort_unstable();
        // Pairing the freshest with the stalest keeps the most copies: where one pair fails,
        // every later copy is staler and every later standby fresher.
        for (&(lag, c), &worst) in fresher.iter().zip(stale.iter()) {
            if lag >= worst {
                break;
            }
            kept.push((c, t));
        }
    }
    for &(c, t) in &kept {
        placement.assign_standby(c, t);
    }
    kept
}

/// `stream.imbalance.percentage`, within 0 to 100.
fn imbalance(model: &Model<'_>) -> u32 {
    model.input.configs.stream_imbalance_percentage.clamp(0, 100) as u32
}

/// Lag as the assignor compares it: `-2` (running) before everything, unknown (`-3`) last.
fn effective_lag(model: &Model<'_>, c: Client, t: Task) -> i64 {
    effective(model.lag(c, t))
}

/// [`effective_lag`] of a lag.
fn effective(lag: i64) -> i64 {
    match lag {
        LATEST_OFFSET => -1,
        lag if lag < 0 => i64::MAX,
        lag => lag,
    }
}

/// The previous owner of each task: the client that reported it running (`-2`), else one that
/// owned its partitions (lowest index first).
fn previous_owners(model: &Model<'_>) -> Vec<Option<Client>> {
    let mut owners = vec![None; model.tasks.len()];
    for (c, client) in model.clients.iter().enumerate() {
        for (&t, &sum) in &client.reported {
            if sum == LATEST_OFFSET && owners[t as usize].is_none() {
                owners[t as usize] = Some(c);
            }
        }
    }
    for (c, client) in model.clients.iter().enumerate() {
        for task in &client.input.owned_active_tasks {
            let t = model.task_index[task] as usize;
            let runs_elsewhere = owners[t].is_some_and(|o| model.clients[o].reported.get(&(t as Task)) == Some(&LATEST_OFFSET));
            if owners[t].is_none() || (!runs_elsewhere && c < owners[t].unwrap_or(usize::MAX)) {
                owners[t] = Some(c);
            }
        }
    }
    owners
}

/// The best caught-up client for `t` other than `except`: its previous owner, else the one
/// with the smallest lag (by [`effective_lag`], then index).
///
/// Complexity: O(R·log M) for the R clients that reported `t` (M: the most tasks a client
/// reported); the others all have the same lag, so only the first of them counts.
fn best_caught_up(model: &Model<'_>, lags: &LagIndex, t: Task, except: Option<Client>, owners: &[Option<Client>]) -> Option<Client> {
    if let Some(owner) = owners[t as usize].filter(|&o| Some(o) != except && lags.is_caught_up(o, t)) {
        return Some(owner);
    }
    lag_candidates(model, lags, t, except).filter(|&(_, c)| lags.is_caught_up(c, t)).min().map(|(_, c)| c)
}

/// The clients that can come first in `t`'s order by (lag as [`effective_lag`] compares it,
/// index), `except` aside: those that reported `t`, and the first of the others, which all have
/// the same lag (and are caught up or not alike).
///
/// Complexity: O(R) for the R clients that reported `t`, plus the scan for the first other.
fn lag_candidates<'a>(model: &'a Model<'_>, lags: &'a LagIndex, t: Task, except: Option<Client>) -> impl Iterator<Item = (i64, Client)> + 'a {
    let reported = lags.reporters(t).iter().filter(move |&&(_, c)| Some(c) != except).map(|&(lag, c)| (effective(lag), c));
    let reported_by = |c: Client| model.clients[c].reported.contains_key(&t);
    let other = (0..model.num_clients()).find(|&c| Some(c) != except && !reported_by(c)).map(|c| (effective(model.unreported_lag(t)), c));
    reported.chain(other)
}

/// Where `t` runs while its target `d` is not caught up: a caught-up client (the previous
/// owner first, then by lag), else the client with the smallest lag if strictly smaller than
/// `d`'s.
fn better_holder(model: &Model<'_>, lags: &LagIndex, t: Task, d: Client, owners: &[Option<Client>]) -> Option<Client> {
    best_caught_up(model, lags, t, Some(d), owners).or_else(|| {
        let own = effective_lag(model, d, t);
        lag_candidates(model, lags, t, Some(d)).min().filter(|&(l, _)| l < own).map(|(_, c)| c)
    })
}

/// Deals `total` units one at a time to the client with the least units per thread (with
/// `lowest_after`: the least after taking the unit, which keeps the maximum down rather than the
/// minimum up). Ties go to the other criterion, then to a client further below its `claims` (it
/// keeps a task instead of taking one), then to the lower index. No client goes above `limit`
/// (while any is below it).
///
/// Complexity: O(N + total · log N): only the client that takes a unit changes its place in that
/// order.
fn deal(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, lowest_after: bool) -> Vec<usize> {
    let mut q = start.to_vec();
    let key = |c: usize, q: usize| DealKey { units: q, cap: caps[c], deficit: claims[c].saturating_sub(q), client: c, lowest_after };
    let mut heap: BinaryHeap<Reverse<DealKey>> = (0..q.len()).filter(|&c| q[c] < limit).map(|c| Reverse(key(c, q[c]))).collect();
    for _ in 0..total {
        let Some(Reverse(first)) = heap.pop() else { break };
        let c = first.client;
        q[c] += 1;
        if q[c] < limit {
            heap.push(Reverse(key(c, q[c])));
        }
    }
    q
}

/// A client's place in [`deal`]'s order, first to take the next unit first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DealKey {
    units: usize,
    cap: u64,
    deficit: usize,
    client: usize,
    lowest_after: bool,
}

impl Ord for DealKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // units / cap against the other's, exactly.
        let per_thread = |a: usize, b: usize| (a as u128 * u128::from(other.cap)).cmp(&(b as u128 * u128::from(self.cap)));
        let (now, after) = (per_thread(self.units, other.units), per_thread(self.units + 1, other.units + 1));
        let order = if self.lowest_after { after.then(now) } else { now.then(after) };
        order.then(other.deficit.cmp(&self.deficit)).then(self.client.cmp(&other.client))
    }
}

impl PartialOrd for DealKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Per-client counts for `total` more units on top of `start`, as balanced as [`deal`]'s
/// (every client's units per thread stay within its minimum and maximum) and as close to
/// `claims` as that allows: each client gets its claim clamped to that window, then the sum is
/// corrected on the most (least) loaded clients.
///
/// Complexity: O(N + total · log N) for the two deals, plus O(N) per unit by which the clamped
/// claims miss the deal's sum.
fn sticky_quotas(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, imbalance: u32) -> Vec<usize> {
    quota_window(total, caps, start, claims, limit, imbalance, None).0
}

/// [`sticky_quotas`], and the most each client may hold without leaving the window. `room`:
/// per client, how many more units of another kind it could take within the balance of all
/// units (negative: how many it must give up), to break ties between windows.
fn quota_window(
    total: usize,
    caps: &[u64],
    start: &[usize],
    claims: &[usize],
    limit: usize,
    imbalance: u32,
    room: Option<&[i64]>,
) -> (Vec<usize>, Vec<usize>) {
    // The window does not depend on the claims' placement, so a placement inside it stays
    // inside it. Of the two ways of dealing, the one with the smaller spread sets it; at equal
    // spreads, the one whose quotas make the clients give up fewer of the units they claim,
    // then fewer units of another kind (per `room`), the first on a tie: balance then does not
    // force a move that another window avoids.
    let zeros = vec![0; start.len()];
    let spread = |q: &[usize]| {
        let loads = q.iter().zip(caps).map(|(&q, &c)| q as f64 / c as f64);
        loads.clone().fold(f64::MIN, f64::max) - loads.fold(f64::MAX, f64::min)
    };
    let raise_min = deal(total, caps, start, &zeros, limit, false);
    let lower_max = deal(total, caps, start, &zeros, limit, true);
    let (a, b) = (spread(&raise_min), spread(&lower_max));
    if b < a - 1e-12 {
        return fit_window(&lower_max, caps, start, claims, limit, imbalance);
    }
    let first = fit_window(&raise_min, caps, start, claims, limit, imbalance);
    if b > a + 1e-12 || lower_max == raise_min {
        return first;
    }
    let second = fit_window(&lower_max, caps, start, claims, limit, imbalance);
    let given_up = |q: &[usize]| -> (usize, i64) {
        let own: usize = claims.iter().zip(q).map(|(&c, &q)| c.saturating_sub(q)).sum();
        let other: i64 = room.map_or(0, |room| {
            // Units gained beyond the room: each makes the client give up one of another kind.
            (0..q.len()).map(|c| (q[c] as i64 - claims[c] as i64 - room[c].max(0)).max(0)).sum()
        });
        (own, other)
    };
    if given_up(&second.0) < given_up(&first.0) { second } else { first }
}

/// The quotas inside the window that `filled` (a deal) spans: every client's units per thread
/// between the deal's minimum and maximum, each client as close to its claim as that allows,
/// the sum corrected on the most (least) loaded clients; and the most each client may hold.
///
/// With an `imbalance` (`stream.imbalance.percentage`), the window also spans, per client, the
/// whole counts within its capacity-proportional share of the total ± that percentage: a
/// client within it keeps its claim.
fn fit_window(filled: &[usize], caps: &[u64], start: &[usize], claims: &[usize], limit: usize, imbalance: u32) -> (Vec<usize>, Vec<usize>) {
    let n = filled.len();
    let load_lt = |a: (usize, usize), b: (usize, usize)| (a.0 as u128 * u128::from(caps[b.1])) < (b.0 as u128 * u128::from(caps[a.1]));
    let lo_at = (0..n).fold(0, |m, c| if load_lt((filled[c], c), (filled[m], m)) { c } else { m });
    let hi_at = (0..n).fold(0, |m, c| if load_lt((filled[m], m), (filled[c], c)) { c } else { m });
    let (lo_q, lo_cap) = (filled[lo_at] as u128, u128::from(caps[lo_at]));
    let (hi_q, hi_cap) = (filled[hi_at] as u128, u128::from(caps[hi_at]));
    let want: usize = filled.iter().sum();
    // With an imbalance, the whole counts within share × (100 ± imbalance) / 100 (none without).
    let per = caps.iter().map(|&c| u128::from(c)).sum::<u128>() * 100;
    let scaled = |c: usize, percent: u32| want as u128 * u128::from(caps[c]) * u128::from(percent);
    let tolerated = |c: usize| match imbalance {
        0 => (usize::MAX, 0),
        p => (scaled(c, 100 - p.min(100)).div_ceil(per) as usize, (scaled(c, 100 + p) / per) as usize),
    };
    let lo: Vec<usize> = (0..n)
        .map(|c| ((lo_q * u128::from(caps[c])).div_ceil(lo_cap) as usize).min(tolerated(c).0).max(start[c]).min(filled[c]))
        .collect();
    let hi: Vec<usize> =
        (0..n).map(|c| (((hi_q * u128::from(caps[c])) / hi_cap) as usize).max(tolerated(c).1).min(limit).max(filled[c])).collect();
    let mut q: Vec<usize> = (0..n).map(|c| claims[c].clamp(lo[c], hi[c].max(lo[c]))).collect();
    let mut sum: usize = q.iter().sum();
    while sum > want {
        let c = (0..n).filter(|&c| q[c] > lo[c]).fold(None, |m: Option<usize>, c| match m {
            Some(m) if !load_lt((q[m], m), (q[c], c)) => Some(m),
            _ => Some(c),
        });
        let Some(c) = c else { return (filled.to_vec(), hi) };
        q[c] -= 1;
        sum -= 1;
    }
    while sum < want {
        let c = (0..n).filter(|&c| q[c] < hi[c]).fold(None, |m: Option<usize>, c| match m {
            Some(m) if !load_lt((q[c] + 1, c), (q[m] + 1, m)) => Some(m),
            _ => Some(c),
        });
        let Some(c) = c else { return (filled.to_vec(), hi) };
        q[c] += 1;
        sum += 1;
    }
    (q, hi)
}

/// The target client of every stateful task (in `model.stateful_tasks` order).
fn stateful_target(
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

/// Gives each stateful task `wanted` standbys: a min-cost flow that keeps the copies with the
/// smallest lags, then prefers pending targets, then any client, within per-client quotas (with
/// overflow at a high cost where the quotas cannot be met).
///
/// The quotas count the target's actives (`targets`), not the actives held while warm-ups
/// restore, so that standbys do not move back and forth while the actives converge; within the
/// balanced window they follow the copies that exist (see [`sticky_quotas`]).
///
/// Every client without a copy costs the same, so the network reaches them through one shared
/// node: source → task (`wanted` units); task → each client with a copy or the pending target
/// (1 unit, cost 0 or 1); task → shared node (cost 2) → every client; client → sink (its quota,
/// then overflow). That network may route a task's unit to its active's client or to a client
/// already holding it; the units of the shared node are then dealt to the tasks
/// ([`deal_shared`]): in order, each to the lowest-numbered client allowed that has units left,
/// trading units dealt earlier where none is. Every unit through the shared node costs the
/// same, so a complete deal costs what the network's optimum does, which is no more than the
/// optimum of the network with an edge per task and client (its relaxation) — the deal is
/// optimal. Where no complete deal exists for the network's flow, that full network is solved
/// instead ([`place_standbys_full`]).
///
/// Returns whether the deal completed (`false`: the full network was solved).
///
/// Complexity: the flow has T·(1 + copies) + N edges and T·`wanted` units; the deal
/// O(T·`wanted`·(`wanted` + log N)), plus O(T·N·`wanted`) at most for each trade.
fn place_standbys(
    model: &Model<'_>,
    placement: &mut Placement,
    caps: &[u64],
    targets: &[usize],
    wanted: usize,
    pending: &[(Task, Client)],
) -> Result<bool, AssignError> {
    let n = model.num_clients();
    let tasks = &model.stateful_tasks;
    let active_on = placement.active_clients(model.tasks.len());
    // Per task: the clients holding a copy of it, its active's client aside.
    let mut holders: Vec<Vec<Client>> = vec![Vec::new(); model.tasks.len()];
    for (c, client) in model.clients.iter().enumerate() {
        for &t in client.reported.keys() {
            if model.stateful[t as usize] && active_on[t as usize] != Some(c) {
                holders[t as usize].push(c);
            }
        }
    }
    holders.iter_mut().for_each(|h| h.sort_unstable());
    let mut claims: Vec<usize> = targets.to_vec();
    holders.iter().flatten().for_each(|&c| claims[c] += 1);
    // A client holds at most one copy of each task.
    let quotas = sticky_quotas(tasks.len() * wanted, caps, targets, &claims, tasks.len(), imbalance(model));
    let mut target_of = vec![None; model.tasks.len()];
    for &(t, d) in pending {
        target_of[t as usize] = Some(d);
    }
    let (source, sink) = (0, 1);
    let task_node = |k: usize| 2 + k;
    let client_node = |c: Client| 2 + tasks.len() + c;
    let pool = 2 + tasks.len() + n;
    let mut graph = Graph::new(3 + tasks.len() + n);
    let internal = |_| AssignError::Internal("optimized assignor: standby graph");
    let mut direct = Vec::new();
    let mut shared = Vec::with_capacity(tasks.len());
    for (k, &t) in tasks.iter().enumerate() {
        graph.add_edge(source, task_node(k), wanted as i64, 0).map_err(internal)?;
        let pending_target = target_of[t as usize].filter(|&d| active_on[t as usize] != Some(d) && !holders[t as usize].contains(&d));
        for &c in holders[t as usize].iter().chain(&pending_target) {
            let cost = i64::from(!(holders[t as usize].contains(&c) && lags_caught_up(model, c, t)));
            direct.push((graph.add_edge(task_node(k), client_node(c), 1, cost).map_err(internal)?, c, k));
        }
        shared.push(graph.add_edge(task_node(k), pool, wanted as i64, 2).map_err(internal)?);
    }
    let mut dealt = Vec::with_capacity(n);
    for c in 0..n {
        dealt.push(graph.add_edge(pool, client_node(c), tasks.len() as i64, 0).map_err(internal)?);
        let quota = quotas[c].saturating_sub(targets[c]);
        graph.add_edge(client_node(c), sink, quota as i64, 0).map_err(internal)?;
        graph.add_edge(client_node(c), sink, tasks.len() as i64, 1_000_000).map_err(internal)?;
    }
    graph.min_cost_flow(source, sink, (tasks.len() * wanted) as i64).map_err(internal)?;
    // The copies each task keeps or gets from its own edges, then the shared units.
    let mut chosen: Vec<Vec<Client>> = vec![Vec::new(); tasks.len()];
    for &(edge, c, k) in &direct {
        if graph.flow(edge) > 0 {
            chosen[k].push(c);
        }
    }
    let units: Vec<i64> = dealt.iter().map(|&e| graph.flow(e)).collect();
    let wants: Vec<i64> = shared.iter().map(|&e| graph.flow(e)).collect();
    let actives: Vec<Option<Client>> = tasks.iter().map(|&t| active_on[t as usize]).collect();
    if !deal_shared(units, &wants, &actives, &mut chosen) {
        return place_standbys_full(model, placement, &quotas, targets, &target_of, wanted).map(|()| false);
    }
    for (k, &t) in tasks.iter().enumerate() {
        for &c in &chosen[k] {
            placement.assign_standby(c, t);
        }
    }
    Ok(true)
}

/// Deals the shared node's units (`units[c]` of client `c`) to the tasks (`wants[k]` to task
/// `k`), in task order, each unit to the lowest-numbered client with units left that neither
/// runs the task (`actives[k]`) nor holds a copy of it already (`chosen[k]`, which the deal
/// extends).
///
/// Where every client with units left is barred from the task, units dealt to earlier tasks
/// are traded along an augmenting path ([`trade_for`]). Every unit of the shared node costs the
/// same and each client's count is unchanged, so trades keep the flow's cost.
///
/// Returns `false` when no complete deal exists.
fn deal_shared(mut units: Vec<i64>, wants: &[i64], actives: &[Option<Client>], chosen: &mut [Vec<Client>]) -> bool {
    // The clients with units left, lowest first.
    let mut left: BinaryHeap<Reverse<Client>> = (0..units.len()).filter(|&c| units[c] > 0).map(Reverse).collect();
    // Per task: where its dealt units start in `chosen` (the copies of its own edges come first).
    let own: Vec<usize> = chosen.iter().map(Vec::len).collect();
    let mut barred = Vec::new();
    for k in 0..wants.len() {
        for _ in 0..wants[k] {
            let pick = loop {
                match left.pop() {
                    Some(Reverse(c)) if may_take(actives, chosen, k, c) => break Some(c),
                    Some(entry) => barred.push(entry),
                    None => break None,
                }
            };
            left.extend(barred.drain(..));
            if let Some(c) = pick {
                chosen[k].push(c);
                units[c] -= 1;
                if units[c] > 0 {
                    left.push(Reverse(c));
                }
            } else {
                let Some(c) = trade_for(k, &units, actives, &own, chosen) else { return false };
                units[c] -= 1;
                if units[c] == 0 {
                    left.retain(|&Reverse(x)| x != c);
                }
            }
        }
    }
    true
}

/// Whether task `k` may take a unit on client `c`: `c` neither runs it nor holds a copy of it.
fn may_take(actives: &[Option<Client>], chosen: &[Vec<Client>], k: usize, c: Client) -> bool {
    actives[k] != Some(c) && !chosen[k].contains(&c)
}

/// Gives task `k` one more client by trading units dealt to tasks before it: a breadth-first
/// search for `k` → client ← task → client ← … → a client with units left, where each
/// "← task" holds that client through a dealt unit (not a copy of its own edges) and each
/// "task →" may take the next client. Along the path each task swaps to the next client and `k`
/// takes the first. Returns the client whose unit was used, or `None` when no path exists, in
/// which case no deal gives `k` another unit without taking one from another task.
///
/// Each task reached first tries the clients with units left, so a path of one trade costs
/// O(U + N·S) for N clients, U units dealt so far and at most S clients per task; the whole
/// search O(U + k·N·S) at most.
fn trade_for(k: usize, units: &[i64], actives: &[Option<Client>], own: &[usize], chosen: &mut [Vec<Client>]) -> Option<Client> {
    let n = units.len();
    // Per client: the (task, slot) pairs of units dealt to it so far.
    let mut dealt_to: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for j in 0..k {
        for i in own[j]..chosen[j].len() {
            dealt_to[chosen[j][i]].push((j, i));
        }
    }
    // The clients with units left: a path ends at the first of them it reaches.
    let spare: Vec<Client> = (0..n).filter(|&c| units[c] > 0).collect();
    // Per client reached: the client before it on the path and the (task, slot) that swaps.
    let mut parent: Vec<Option<(Client, usize, usize)>> = vec![None; n];
    let mut seen: Vec<bool> = (0..n).map(|c| may_take(actives, chosen, k, c)).collect();
    let mut task_seen = vec![false; k];
    let mut queue: std::collections::VecDeque<Client> = (0..n).filter(|&c| seen[c]).collect();
    let mut end = spare.iter().copied().find(|&r| seen[r]);
    while end.is_none() {
        let c = queue.pop_front()?;
        for &(j, i) in &dealt_to[c] {
            if std::mem::replace(&mut task_seen[j], true) {
                continue;
            }
            // Task `j` gives up `c`: for a client with units left if it may take one, else for
            // any client it may take, from which the search goes on.
            if let Some(r) = spare.iter().copied().find(|&r| !seen[r] && may_take(actives, chosen, j, r)) {
                parent[r] = Some((c, j, i));
                end = Some(r);
                break;
            }
            for next in 0..n {
                if !seen[next] && may_take(actives, chosen, j, next) {
                    seen[next] = true;
                    parent[next] = Some((c, j, i));
                    queue.push_back(next);
                }
            }
        }
    }
    let reached = end?;
    let mut at = reached;
    while let Some((before, j, i)) = parent[at] {
        chosen[j][i] = at;
        at = before;
    }
    chosen[k].push(at);
    Some(reached)
}

/// [`place_standbys`] on the network with an edge from every task to every client without its
/// active (T·N edges), with the quotas and pending targets it computed: the fallback where the
/// shared node's units cannot be dealt.
fn place_standbys_full(
    model: &Model<'_>,
    placement: &mut Placement,
    quotas: &[usize],
    targets: &[usize],
    target_of: &[Option<Client>],
    wanted: usize,
) -> Result<(), AssignError> {
    let n = model.num_clients();
    let tasks = &model.stateful_tasks;
    let has_copy = |c: Client, t: Task| !placement.has_active(c, t) && model.clients[c].reported.contains_key(&t);
    let (source, sink) = (0, 1);
    let task_node = |k: usize| 2 + k;
    let client_node = |c: Client| 2 + tasks.len() + c;
    let mut graph = Graph::new(2 + tasks.len() + n);
    let internal = |_| AssignError::Internal("optimized assignor: standby graph");
    let mut choices = Vec::new();
    for (k, &t) in tasks.iter().enumerate() {
        graph.add_edge(source, task_node(k), wanted as i64, 0).map_err(internal)?;
        for c in (0..n).filter(|&c| !placement.has_active(c, t)) {
            let cost = if has_copy(c, t) && lags_caught_up(model, c, t) {
                0
            } else if has_copy(c, t) || target_of[t as usize] == Some(c) {
                1
            } else {
                2
            };
            choices.push((graph.add_edge(task_node(k), client_node(c), 1, cost).map_err(internal)?, c, t));
        }
    }
    for c in 0..n {
        let quota = quotas[c].saturating_sub(targets[c]);
        graph.add_edge(client_node(c), sink, quota as i64, 0).map_err(internal)?;
        graph.add_edge(client_node(c), sink, tasks.len() as i64, 1_000_000).map_err(internal)?;
    }
    graph.min_cost_flow(source, sink, (tasks.len() * wanted) as i64).map_err(internal)?;
    for (edge, c, t) in choices {
        if graph.flow(edge) > 0 {
            placement.assign_standby(c, t);
        }
    }
    Ok(())
}

/// Whether client `c` is caught up on `t` (`-2`, or a lag within `acceptable.recovery.lag`).
fn lags_caught_up(model: &Model<'_>, c: Client, t: Task) -> bool {
    TaskLag(model.lag(c, t)).is_caught_up(model.input.configs.acceptable_recovery_lag)
}

/// Restore rates observed between the previous rebalance and this one.
struct RestoreRates {
    /// Per client: mean restore rate of its restoring tasks (records per ms), if observed.
    client: Vec<Option<f64>>,
    /// Mean over all observations.
    group: Option<f64>,
    /// Per task: changelog growth (records per ms).
    produce: Vec<f64>,
}

impl RestoreRates {
    fn new(model: &Model<'_>) -> Self {
        let n = model.num_clients();
        let mut out = Self { client: vec![None; n], group: None, produce: vec![0.0; model.tasks.len()] };
        let Some(prev) = model.input.previous_rebalance.as_ref().filter(|p| p.elapsed_ms > 0) else {
            return out;
        };
        let elapsed = prev.elapsed_ms as f64;
        for (task, &before) in &prev.changelog_end_offset_sums {
            if let Some(&t) = model.task_index.get(task) {
                let now = model.end_offset_sums[t as usize];
                if before >= 0 && now >= before {
                    out.produce[t as usize] = (now - before) as f64 / elapsed;
                }
            }
        }
        let (mut sum, mut count) = (0.0, 0usize);
        for (c, client) in model.clients.iter().enumerate() {
            let Some(before) = prev.task_offset_sums.get(&client.process_id) else { continue };
            let (mut s, mut k) = (0.0, 0usize);
            // A task it had no state for then has been restored from 0.
            for (&t, &now) in &client.reported {
                let then = before.get(&model.tasks[t as usize]).copied().unwrap_or(0);
                if !model.stateful[t as usize] {
                    continue;
                }
                // Only tasks still restoring: a caught-up copy only follows the producers.
                let end = model.end_offset_sums[t as usize];
                if then >= 0 && now > then && now < end {
                    s += (now - then) as f64 / elapsed;
                    k += 1;
                }
            }
            if k > 0 {
                out.client[c] = Some(s / k as f64);
                sum += s;
                count += k;
            }
        }
        if count > 0 {
            out.group = Some(sum / count as f64);
        }
        out
    }

    /// Net catch-up rate of client `c` on task `t` (records per ms), if known and positive.
    fn net_rate(&self, c: Client, t: Task) -> Option<f64> {
        let gross = self.client[c].or(self.group)?;
        let net = gross - self.produce[t as usize];
        (net > 0.0).then_some(net)
    }

    /// Estimated time for client `c` to restore task `t` fully (ms); `None` for an unknown lag.
    fn restore_ms(&self, model: &Model<'_>, c: Client, t: Task) -> Option<i64> {
        self.restore_ms_at(model.lag(c, t), c, t)
    }

    /// [`restore_ms`](Self::restore_ms) for `c`'s lag on `t`.
    fn restore_ms_at(&self, lag: i64, c: Client, t: Task) -> Option<i64> {
        if lag == LATEST_OFFSET {
            return Some(0);
        }
        if TaskLag(lag) == TaskLag::UNKNOWN || lag < 0 {
            return None;
        }
        let rate = self.net_rate(c, t).unwrap_or(NOMINAL_RECORDS_PER_SEC as f64 / 1000.0);
        Some((lag as f64 / rate).min(i64::MAX as f64 / 2.0) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a standby placement costs in the standby network: 0 for a caught-up copy kept, 1 for
    /// another copy or a pending target, 2 elsewhere, and 1,000,000 per standby above a quota.
    fn standby_cost(model: &Model<'_>, placement: &Placement, quotas: &[usize], targets: &[usize], pending: &[(Task, Client)]) -> i64 {
        let mut cost = 0;
        for c in 0..model.num_clients() {
            for &t in &placement.standby[c] {
                let copy = model.clients[c].reported.contains_key(&t);
                cost += if copy && lags_caught_up(model, c, t) {
                    0
                } else if copy || pending.contains(&(t, c)) {
                    1
                } else {
                    2
                };
            }
            cost += 1_000_000 * placement.standby[c].len().saturating_sub(quotas[c].saturating_sub(targets[c])) as i64;
        }
        cost
    }

    #[test]
    fn the_best_caught_up_client_is_the_one_a_scan_of_every_client_finds() {
        // Which kind of client won: the previous owner, a reporter, one that did not report.
        let mut won = [0usize; 3];
        for index in 0..300u64 {
            let s = crate::engine::scenario::random(3, index);
            let Ok(model) = Model::new(&s.input) else { continue };
            let (lags, owners, n) = (LagIndex::new(&model), previous_owners(&model), model.num_clients());
            for &t in &model.stateful_tasks {
                for except in std::iter::once(None).chain((0..n).map(Some)) {
                    let scan = (0..n)
                        .filter(|&c| Some(c) != except && lags.is_caught_up(c, t))
                        .min_by_key(|&c| (owners[t as usize] != Some(c), effective_lag(&model, c, t), c));
                    let best = best_caught_up(&model, &lags, t, except, &owners);
                    assert_eq!(best, scan, "scenario {index}, task {t}, except {except:?}");
                    if let Some(c) = best {
                        won[if owners[t as usize] == Some(c) { 0 } else if model.clients[c].reported.contains_key(&t) { 1 } else { 2 }] += 1;
                    }
                }
            }
        }
        assert!(won.iter().all(|&w| w > 20), "{won:?}");
    }

    #[test]
    fn standbys_through_the_shared_node_cost_what_the_full_network_does() {
        let (mut compared, mut dealt) = (0, 0);
        for index in 0..400u64 {
            let s = crate::engine::scenario::random(3, index);
            let Ok(model) = Model::new(&s.input) else { continue };
            let n = model.num_clients();
            if n < 2 || model.stateful_tasks.is_empty() {
                continue;
            }
            let wanted = (1 + index as usize % 3).min(n - 1);
            // Actives on the clients that report them running, else round-robin; a pending move
            // for every fifth task.
            let mut placement = Placement::new(&model);
            let mut targets = vec![0; n];
            let mut pending = Vec::new();
            for (k, &t) in model.stateful_tasks.iter().enumerate() {
                let c = (0..n).find(|&c| model.clients[c].reported.get(&t) == Some(&LATEST_OFFSET)).unwrap_or(k % n);
                placement.assign_active(c, t);
                targets[c] += 1;
                if k % 5 == 0 {
                    pending.push((t, (c + 1) % n));
                }
            }
            let caps: Vec<u64> = model.clients.iter().map(|c| u64::from(c.capacity.max(1))).collect();
            // The quotas and pending targets as `place_standbys` computes them, counted per pair.
            let claims: Vec<usize> = (0..n)
                .map(|c| targets[c] + model.stateful_tasks.iter().filter(|&&t| !placement.has_active(c, t) && model.clients[c].reported.contains_key(&t)).count())
                .collect();
            let quotas = sticky_quotas(model.stateful_tasks.len() * wanted, &caps, &targets, &claims, model.stateful_tasks.len(), 0);
            let mut target_of = vec![None; model.tasks.len()];
            pending.iter().for_each(|&(t, d)| target_of[t as usize] = Some(d));
            let (mut shared, mut full) = (placement.clone(), placement.clone());
            dealt += usize::from(place_standbys(&model, &mut shared, &caps, &targets, wanted, &pending).unwrap());
            place_standbys_full(&model, &mut full, &quotas, &targets, &target_of, wanted).unwrap();
            for &t in &model.stateful_tasks {
                let holders: Vec<Client> = (0..n).filter(|&c| shared.has_standby(c, t)).collect();
                assert_eq!(holders.len(), wanted, "scenario {index}: task {t}");
                assert!(holders.iter().all(|&c| !shared.has_active(c, t)), "scenario {index}: task {t}");
            }
            assert_eq!(
                standby_cost(&model, &shared, &quotas, &targets, &pending),
                standby_cost(&model, &full, &quotas, &targets, &pending),
                "scenario {index}"
            );
            compared += 1;
        }
        assert!(compared > 200 && dealt * 2 > compared, "{dealt} of {compared} dealt through the shared node");
    }

    /// The deal as a scan over every client per unit: the order [`deal`] keeps in a heap.
    fn deal_by_scan(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, lowest_after: bool) -> Vec<usize> {
        let mut q = start.to_vec();
        for _ in 0..total {
            let Some(mut best) = (0..q.len()).find(|&c| q[c] < limit) else { break };
            for c in best + 1..q.len() {
                if q[c] >= limit {
                    continue;
                }
                let cmp = |x: usize, y: usize| (x as u128 * u128::from(caps[best])).cmp(&(y as u128 * u128::from(caps[c])));
                let deficit = |k: usize| claims[k].saturating_sub(q[k]);
                let (now, after) = (cmp(q[c], q[best]), cmp(q[c] + 1, q[best] + 1));
                let order = if lowest_after { after.then(now) } else { now.then(after) };
                if order.then_with(|| deficit(best).cmp(&deficit(c))) == Ordering::Less {
                    best = c;
                }
            }
            q[best] += 1;
        }
        q
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn the_heap_deals_as_the_scan_does(
            clients in proptest::collection::vec((1u64..6, 0usize..8, 0usize..12), 1..12),
            total in 0usize..80,
            limit in proptest::option::of(1usize..14),
            lowest_after: bool,
        ) {
            let caps: Vec<u64> = clients.iter().map(|c| c.0).collect();
            let start: Vec<usize> = clients.iter().map(|c| c.1).collect();
            let claims: Vec<usize> = clients.iter().map(|c| c.2).collect();
            let limit = limit.unwrap_or(usize::MAX);
            proptest::prop_assert_eq!(
                deal(total, &caps, &start, &claims, limit, lowest_after),
                deal_by_scan(total, &caps, &start, &claims, limit, lowest_after)
            );
        }
    }

    /// Whether the shared units can be dealt at all: a max flow from the tasks' wants through
    /// every allowed (task, client) pair to the clients' units.
    fn deal_exists(units: &[i64], wants: &[i64], actives: &[Option<Client>], own: &[Vec<Client>]) -> bool {
        let (n, tasks) = (units.len(), wants.len());
        let mut graph = crate::flow::Graph::new(2 + tasks + n);
        for (k, &want) in wants.iter().enumerate() {
            graph.add_edge(0, 2 + k, want, 0).unwrap();
            for c in (0..n).filter(|&c| may_take(actives, own, k, c)) {
                graph.add_edge(2 + k, 2 + tasks + c, 1, 0).unwrap();
            }
        }
        for (c, &u) in units.iter().enumerate() {
            graph.add_edge(2 + tasks + c, 1, u, 0).unwrap();
        }
        graph.min_cost_max_flow(0, 1).unwrap().flow == wants.iter().sum::<i64>()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
        /// The deal completes exactly when some deal exists, and then gives each task its units
        /// on distinct clients it may take, using each client's units exactly.
        #[test]
        fn the_shared_units_are_dealt_whenever_they_can_be(
            n in 2usize..7,
            tasks in proptest::collection::vec((0usize..8, proptest::collection::vec(0usize..7, 0..3), 0usize..4), 1..14),
            spread in proptest::collection::vec(0usize..7, 0..40),
        ) {
            // Task k: its active (none when out of range), the copies of its own edges, its wants.
            let actives: Vec<Option<Client>> = tasks.iter().map(|t| (t.0 < n).then_some(t.0)).collect();
            let own: Vec<Vec<Client>> = tasks.iter().zip(&actives).map(|(t, &a)| {
                let mut own: Vec<Client> = t.1.iter().copied().filter(|&c| c < n && Some(c) != a).collect();
                own.sort_unstable();
                own.dedup();
                own
            }).collect();
            let wants: Vec<i64> = tasks.iter().map(|t| t.2 as i64).collect();
            // As many units as wanted, spread over the clients by the drawn sequence.
            let total: i64 = wants.iter().sum();
            let mut units = vec![0i64; n];
            for u in 0..total as usize {
                units[spread.get(u).map_or(u % n, |&c| c % n)] += 1;
            }
            let mut chosen = own.clone();
            let dealt = deal_shared(units.clone(), &wants, &actives, &mut chosen);
            proptest::prop_assert_eq!(dealt, deal_exists(&units, &wants, &actives, &own));
            if dealt {
                let mut used = vec![0i64; n];
                for k in 0..wants.len() {
                    proptest::prop_assert_eq!(&chosen[k][..own[k].len()], &own[k][..]);
                    let extra = &chosen[k][own[k].len()..];
                    proptest::prop_assert_eq!(extra.len() as i64, wants[k]);
                    let mut all = chosen[k].clone();
                    all.sort_unstable();
                    all.dedup();
                    proptest::prop_assert_eq!(all.len(), chosen[k].len(), "task {} holds a client twice", k);
                    proptest::prop_assert!(extra.iter().all(|&c| Some(c) != actives[k]));
                    extra.iter().for_each(|&c| used[c] += 1);
                }
                proptest::prop_assert_eq!(used, units);
            }
        }
    }

    #[test]
    fn a_deal_stuck_on_the_last_task_trades_along_a_path() {
        // One unit on each of clients 0, 1 and 2. In order, task 0 (active on 2) takes client 0
        // and task 1 (active on 0) client 1; task 2 (active on 2, a copy of its own on 1) finds
        // only client 2 left. No single swap helps (task 0 cannot take 2, and task 1 holds a
        // client task 2 has): task 1 moves 1 → 2, task 0 moves 0 → 1, and task 2 takes 0.
        let actives = [Some(2), Some(0), Some(2)];
        let mut chosen = vec![vec![], vec![], vec![1]];
        assert!(deal_shared(vec![1, 1, 1], &[1, 1, 1], &actives, &mut chosen));
        assert_eq!(chosen, [vec![1], vec![2], vec![1, 0]]);
        // With task 2 also running on the client task 1 needs, no deal exists.
        let mut chosen = vec![vec![], vec![], vec![1]];
        assert!(!deal_shared(vec![1, 1, 1], &[1, 1, 1], &[Some(2), Some(2), Some(2)], &mut chosen));
    }

    #[test]
    fn dealing_is_capacity_proportional_and_sticky_on_ties() {
        assert_eq!(deal(3, &[1, 4], &[0, 0], &[0, 0], usize::MAX, false), [1, 2]);
        assert_eq!(deal(16, &[2, 2, 2, 2], &[0; 4], &[0; 4], usize::MAX, false), [4, 4, 4, 4]);
        // 16 over 3: one client gets 6; the one that runs more keeps it.
        assert_eq!(deal(16, &[2, 2, 2], &[0; 3], &[5, 5, 6], usize::MAX, false), [5, 5, 6]);
        assert_eq!(deal(16, &[2, 2, 2], &[0; 3], &[0; 3], usize::MAX, false), [6, 5, 5]);
        // Equal loads: the larger capacity takes the unit (3.25 rather than 4 per thread).
        assert_eq!(deal(30, &[2, 2, 1, 4], &[0; 4], &[12, 12, 6, 0], usize::MAX, false), [7, 7, 3, 13]);
    }

    #[test]
    fn sticky_quotas_keep_claims_within_the_balanced_window() {
        // Loads 0.5..1 per thread: every claim is kept.
        assert_eq!(sticky_quotas(11, &[4, 4, 3, 2, 1, 4], &[0; 6], &[2, 3, 1, 1, 1, 1], usize::MAX, 0), [2, 3, 2, 1, 1, 2]);
        assert_eq!(sticky_quotas(16, &[2, 2, 2, 2], &[0; 4], &[6, 5, 5, 0], usize::MAX, 0), [4, 4, 4, 4]);
        // Units on top of a start never go below it.
        assert_eq!(sticky_quotas(2, &[1, 1], &[3, 0], &[5, 0], usize::MAX, 0), [3, 2]);
        assert_eq!(deal(2, &[1, 1], &[3, 0], &[0, 0], usize::MAX, false), [3, 2]);
    }

    #[test]
    fn an_imbalance_keeps_the_claims_within_that_percentage_of_each_share() {
        // The KIP-441 draft's example: threads 5, 10, 10 and 15 share 80 tasks as 10, 20, 20
        // and 30; with 20 %, a group running 12, 18, 23 and 27 stays as it is.
        let caps = [5, 10, 10, 15];
        assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[12, 18, 23, 27], usize::MAX, 20), [12, 18, 23, 27]);
        assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[12, 18, 23, 27], usize::MAX, 0), [10, 20, 20, 30]);
        // 13 is beyond 12 (10 + 20 %): it gives one up, which goes to the client that is then the
        // least loaded per thread (28 / 15 against 19 / 10).
        assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[13, 18, 22, 27], usize::MAX, 20), [12, 18, 22, 28]);
        // Whole tasks within the percentage: 10 % of a share of 6 is not a task, so 5 or 7 is
        // outside it and only the balanced window (6 each) remains.
        assert_eq!(sticky_quotas(24, &[1; 4], &[0; 4], &[7, 7, 5, 5], usize::MAX, 10), [6, 6, 6, 6]);
        assert_eq!(sticky_quotas(24, &[1; 4], &[0; 4], &[7, 7, 5, 5], usize::MAX, 17), [7, 7, 5, 5]);
        // A fifth member joins four that run 10 each: with 25 % of a share of 8 it takes 6, the
        // least the percentage allows, and the others give up 8 rather than 10.
        assert_eq!(sticky_quotas(40, &[1; 5], &[0; 5], &[10, 10, 10, 10, 0], usize::MAX, 25), [8, 8, 9, 9, 6]);
        assert_eq!(sticky_quotas(40, &[1; 5], &[0; 5], &[10, 10, 10, 10, 0], usize::MAX, 0), [8, 8, 8, 8, 8]);
    }

    #[test]
    fn at_equal_spreads_the_window_that_keeps_other_tasks_wins() {
        // 3 units over 1, 2 and 3 threads: (1, 1, 1) and (0, 1, 2) both spread 2/3 per thread.
        // The claims fit both; only the second leaves the 1-thread client the other task it
        // runs.
        assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 1, 1], usize::MAX, 0, None).0, [1, 1, 1]);
        assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 1, 1], usize::MAX, 0, Some(&[0, 1, 1])).0, [0, 1, 2]);
        // A claim the first window cannot keep decides.
        assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 0, 2], usize::MAX, 0, None).0, [0, 1, 2]);
    }
}
