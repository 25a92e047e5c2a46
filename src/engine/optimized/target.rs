//! Step 2, the target: a min-cost assignment of the stateful tasks to clients with exactly their
//! quotas, then sub-topology trades, and Kafka's rack-aware optimiser on top where enabled.

use super::holders::{effective, lag_candidates};
use super::restore_rates::RestoreRates;
use super::spread::{Mix, Rise, rebalance_mix};
use crate::engine::assignor::AssignError;
use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Placement};
use crate::engine::rack_aware::optimizer::RackAwareOptimizer;
use crate::engine::task_lag::TaskLag;
use crate::flow::{self, CostMatrix, SparseCosts};

/// Flow cost of a task anywhere but on its caught-up owner: movements count first.
pub(super) const MOVE_COST: i32 = 2_000_000;

/// Flow cost added where the client is not caught up (a warm-up is needed), before twice the
/// estimated restore time in seconds.
pub(super) const COLD_COST: i32 = 200_000;

/// Largest target (stateful tasks × clients) solved on the dense cost matrix
/// ([`flow::assign`]); larger ones are solved sparsely ([`flow::assign_sparse`]).
pub(super) const DENSE_MAX_COSTS: usize = 1 << 16;

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

/// The target client of every stateful task (in `model.stateful_tasks` order). The lag index
/// is taken, and freed once the costs are known.
pub(super) fn stateful_target(
    model: &Model<'_>,
    lags: LagIndex,
    rates: &RestoreRates,
    caps: &[u64],
    quotas: &[usize],
    owners: &[Option<Client>],
) -> Result<Vec<Client>, AssignError> {
    let (n, tasks) = (model.num_clients(), &model.stateful_tasks);
    let (costs, mut split) = target_costs(model, &lags, rates, owners)?;
    // Nothing below reads the lag index: freed, its room serves the solver and the trades
    // (the caller builds it again for the next step).
    drop(lags);
    // Both solvers reach the same least cost and differ only in ties; small groups keep the
    // dense solver's, with which the simulator's comparison was established.
    let solved = if tasks.len().saturating_mul(n) <= DENSE_MAX_COSTS {
        CostMatrix::from_fn(tasks.len(), n, |k, c| costs.cost(k, c)).and_then(|matrix| flow::assign(&matrix, quotas))
    } else {
        flow::assign_sparse(&costs, quotas)
    };
    // The costs are not read again; the trades below use `split`.
    drop(costs);
    let mut target = solved.map_err(|_| AssignError::Internal("optimized assignor: no target"))?.clients;
    // Then each sub-topology spread over the clients, before the restore time.
    let mut mix = Mix::new(model, tasks, caps);
    rebalance_mix(&mut mix, tasks, owners, &mut target, n, &mut split);
    Ok(target)
}

/// The target's flow costs of every stateful task (by its position in `model.stateful_tasks`),
/// and the same split for the sub-topology trades.
pub(super) fn target_costs(
    model: &Model<'_>,
    lags: &LagIndex,
    rates: &RestoreRates,
    owners: &[Option<Client>],
) -> Result<(SparseCosts, SplitCosts), AssignError> {
    let n = model.num_clients();
    let tasks = &model.stateful_tasks;
    let acceptable = model.input.configs.acceptable_recovery_lag;
    // Per task: whether its owner is caught up. (The client with the smallest lag is looked up
    // where it is needed, for the few tasks that have no caught-up client: a table of it for
    // every task would take 16 bytes a task.)
    let owner_caught_up: Vec<bool> = tasks.iter().map(|&t| owners[t as usize].is_some_and(|o| lags.is_caught_up(o, t))).collect();
    // The costs below take `lag`, client `c`'s lag on the task (`Model::lag`), and whether `c`
    // is the task's owner, so that a client that did not report the task is costed once.
    // Placing a task on a client that is not caught up costs a second movement when it must
    // first go somewhere else to stay available (its owner is gone or behind).
    let interim = |k: usize, lag: i64| -> bool {
        let t = tasks[k];
        if owner_caught_up[k] {
            false
        } else if lags.caught_up_count(t) > 0 {
            true
        } else {
            let (best, at) = lag_candidates(model, lags, t, None).min().unwrap_or((i64::MAX, 0));
            best < effective(lag) && Some(at) != owners[t as usize]
        }
    };
    // What a placement costs in movements and warm-ups.
    let class_at = |k: usize, owner: bool, lag: i64| -> i32 {
        match (owner, TaskLag(lag).is_caught_up(acceptable)) {
            (true, true) => 0,
            (false, true) => MOVE_COST,
            (true, false) => MOVE_COST + 2,
            (false, false) => MOVE_COST * (1 + i32::from(interim(k, lag))) + COLD_COST,
        }
    };
    // And what its restore time costs.
    let restore_at = |k: usize, c: Client, owner: bool, lag: i64| -> i32 {
        if !owner && !TaskLag(lag).is_caught_up(acceptable) {
            let secs = rates.restore_ms_at(lag, c, tasks[k]).map_or(MAX_RESTORE_SECS, |ms| (ms / 1000).min(MAX_RESTORE_SECS));
            2 * secs as i32
        } else {
            0
        }
    };
    let is_owner = |k: usize, c: Client| owners[tasks[k] as usize] == Some(c);
    // Clients with the same restore rate cost the same on a task they did not report and do
    // not own: one class per rate, represented by its first client.
    let rate_of: Vec<Option<u64>> = (0..n).map(|c| rates.gross_rate(c).map(f64::to_bits)).collect();
    let mut distinct = rate_of.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let class_of: Vec<usize> = rate_of.iter().map(|r| distinct.binary_search(r).unwrap_or(0)).collect();
    let mut first_of_class = vec![usize::MAX; distinct.len()];
    for (c, &r) in class_of.iter().enumerate().rev() {
        first_of_class[r] = c;
    }
    // Ties go to the round-robin client, which spreads each sub-topology: every other client
    // costs 1 more. The candidates of a task are its owner, the clients that reported it and
    // its round-robin client; a candidate never costs more than a client of its class with no
    // state for the task (a reported lag worse than none, an unknown or corrupt offset sum,
    // counts as none).
    let internal = |_| AssignError::Internal("optimized assignor: target costs");
    let mut costs = SparseCosts::new(class_of.clone()).map_err(internal)?;
    // The lists below are reserved at their largest (a task's candidates are at most its
    // reporters, its owner and its round-robin client) rather than grown by doubling: the
    // pages never written are never resident, and no copies are left behind as freed blocks.
    let most_candidates = lags.report_count() + 2 * tasks.len();
    costs.reserve(tasks.len(), most_candidates);
    let (mut class_costs, mut candidates, mut listed) = (Vec::new(), Vec::new(), Vec::new());
    // The same costs split as (movements and warm-ups, restore time), without the tie, for the
    // sub-topology trades: per task its candidates' and then its classes'.
    let classes = first_of_class.len();
    let class_index: Vec<u32> = class_of.iter().map(|&r| r as u32).collect();
    let mut split = SplitCosts { classes, class_of: class_index, entries: Vec::new(), starts: Vec::with_capacity(tasks.len() + 1) };
    split.entries.reserve(tasks.len() * classes + most_candidates);
    split.starts.push(0);
    let position = |len: usize| u32::try_from(len).map_err(|_| AssignError::Internal("optimized assignor: target costs"));
    for (k, &t) in tasks.iter().enumerate() {
        crate::interrupt::tick();
        let unreported = model.unreported_lag(t);
        let round_robin = k % n;
        class_costs.clear();
        for &c in &first_of_class {
            let (class, restore) = (class_at(k, false, unreported), restore_at(k, c, false, unreported));
            split.entries.push(SplitCost::new(u32::MAX, class, restore)?);
            class_costs.push(class + restore + 1);
        }
        candidates.clear();
        candidates.extend(lags.reporters(t).iter().map(|&(lag, c)| (c, lag)));
        candidates.extend(owners[t as usize].iter().chain([&round_robin]).map(|&c| (c, lags.lag(model, c, t))));
        candidates.sort_unstable_by_key(|&(c, _)| c);
        candidates.dedup_by_key(|&mut (c, _)| c);
        listed.clear();
        for &(c, lag) in &candidates {
            let owner = is_owner(k, c);
            let (class, restore) = (class_at(k, owner, lag), restore_at(k, c, owner, lag));
            split.entries.push(SplitCost::new(c as u32, class, restore)?);
            let tie = i32::from(c != round_robin);
            listed.push((c, (class + restore + tie).min(class_costs[class_of[c]] - 1 + tie)));
        }
        split.starts.push(position(split.entries.len())?);
        costs.push_task(&class_costs, &listed).map_err(internal)?;
    }
    // Room for the last task's fixed-width read in `SplitCosts::rise`.
    split.entries.extend([PADDING; SHORT]);
    Ok((costs, split))
}

/// The target's costs of a task on a client as (movements and warm-ups, restore time): the
/// candidates' own, else their class's. One task's costs sit together (its classes', then its
/// candidates'), so that a look-up reads one range.
pub(super) struct SplitCosts {
    classes: usize,
    class_of: Vec<u32>,
    /// The costs of the task at `i` are `entries[starts[i]..starts[i + 1]]`: `classes` class
    /// costs (by class, `client` unused), then its candidates' (by client), and after the last
    /// task [`PADDING`]. Tasks are in the order of `model.stateful_tasks` until the trades
    /// arrange them in theirs. (Positions are `u32`s: 4 bytes a task.)
    entries: Vec<SplitCost>,
    starts: Vec<u32>,
}

/// One cost of [`SplitCosts`], in 8 bytes: its client, and its movements and warm-ups (one of
/// [`CLASS_COSTS`], by position) packed with its restore time (below 2^[`RESTORE_BITS`]). (12
/// bytes as two `i32`s: a million tasks' costs took 16 MB more, twice over while the trades
/// arrange them.)
#[derive(Debug, Clone, Copy)]
struct SplitCost {
    client: u32,
    packed: u32,
}

/// The movements-and-warm-ups part of every cost `target_costs` makes.
const CLASS_COSTS: [i32; 5] = [0, MOVE_COST, MOVE_COST + 2, MOVE_COST + COLD_COST, 2 * MOVE_COST + COLD_COST];

/// Bits of [`SplitCost::packed`] that hold the restore time (at most `2 · MAX_RESTORE_SECS`).
const RESTORE_BITS: u32 = 24;

impl SplitCost {
    /// The cost, or an internal error where `class` is not one of [`CLASS_COSTS`] or `restore`
    /// does not fit.
    fn new(client: u32, class: i32, restore: i32) -> Result<Self, AssignError> {
        let unfit = AssignError::Internal("optimized assignor: a target cost out of range");
        let at = CLASS_COSTS.iter().position(|&c| c == class).ok_or(unfit.clone())?;
        let restore = u32::try_from(restore).ok().filter(|&r| r < 1 << RESTORE_BITS).ok_or(unfit)?;
        Ok(Self { client, packed: (at as u32) << RESTORE_BITS | restore })
    }

    fn class(self) -> i64 {
        i64::from(CLASS_COSTS[(self.packed >> RESTORE_BITS) as usize])
    }

    fn restore(self) -> i64 {
        i64::from(self.packed & ((1 << RESTORE_BITS) - 1))
    }
}

impl Rise for SplitCosts {
    fn arrange<'a>(&mut self, order: impl Iterator<Item = &'a mut (u32, u32)>) {
        // Both layouts are alive until the copy is made; the flow's costs, freed before the
        // trades, took more.
        let mut entries = Vec::with_capacity(self.entries.len());
        let mut starts = Vec::with_capacity(self.starts.len());
        for task in order {
            crate::interrupt::tick();
            let k = task.0 as usize;
            // (No place in `order` reaches the number of tasks, whose positions are `u32`s; and
            // the blocks are the same in another order: no position exceeds the last one of the
            // former layout, which is a `u32`.)
            task.1 = starts.len() as u32;
            starts.push(entries.len() as u32);
            entries.extend_from_slice(&self.entries[self.starts[k] as usize..self.starts[k + 1] as usize]);
        }
        starts.push(entries.len() as u32);
        entries.extend([PADDING; SHORT]);
        (self.entries, self.starts) = (entries, starts);
    }

    fn rise(&self, at: u32, from: Client, to: Client) -> (i64, i64) {
        let (start, end) = (self.starts[at as usize] as usize, self.starts[at as usize + 1] as usize);
        let first = start + self.classes;
        let listed = end - first;
        // Positions of the two costs in `entries`: their classes', unless they are candidates.
        let (mut at_from, mut at_to) = (start + self.class_of[from] as usize, start + self.class_of[to] as usize);
        if listed <= SHORT {
            // Most tasks have a few candidates: picked among a fixed number of slots by
            // conditional moves, not by branches that would mispredict from task to task.
            // Slots past the task's own are masked (`entries` is padded after the last task).
            for (i, e) in self.entries[first..first + SHORT].iter().enumerate() {
                let live = i < listed;
                let client = e.client as usize;
                at_from = if live & (client == from) { first + i } else { at_from };
                at_to = if live & (client == to) { first + i } else { at_to };
            }
        } else {
            let candidates = &self.entries[first..end];
            let find = |c: Client| candidates.binary_search_by_key(&c, |e| e.client as usize).ok().map(|i| first + i);
            at_from = find(from).unwrap_or(at_from);
            at_to = find(to).unwrap_or(at_to);
        }
        let (a, b) = (self.entries[at_to], self.entries[at_from]);
        (a.class() - b.class(), a.restore() - b.restore())
    }
}

/// Candidates of a task that `SplitCosts::rise` scans without branches; longer lists are
/// searched.
const SHORT: usize = 4;

/// The entries after the last task, read and masked by that scan.
const PADDING: SplitCost = SplitCost { client: u32::MAX, packed: 0 };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Split costs of `tasks` tasks over `clients` clients in `classes` classes, each task with
    /// 0 to 7 candidates (both sides of `SHORT`).
    fn random_split(rng: &mut Rng, tasks: usize, clients: usize, classes: usize) -> SplitCosts {
        let class_of = (0..clients).map(|_| rng.range(0, classes as i64 - 1) as u32).collect();
        let mut split = SplitCosts { classes, class_of, entries: Vec::new(), starts: vec![0] };
        let cost = |rng: &mut Rng, client| SplitCost::new(client, *rng.pick(&CLASS_COSTS), rng.range(0, 199_998) as i32).unwrap();
        for _ in 0..tasks {
            split.entries.extend((0..classes).map(|_| cost(rng, u32::MAX)));
            let mut listed: Vec<u32> = (0..clients as u32).collect();
            // A random subset of the clients, in client order.
            let keep = rng.range(0, 7) as usize;
            while listed.len() > keep {
                let at = rng.range(0, listed.len() as i64 - 1) as usize;
                listed.remove(at);
            }
            split.entries.extend(listed.into_iter().map(|c| cost(rng, c)));
            split.starts.push(split.entries.len() as u32);
        }
        split.entries.extend([PADDING; SHORT]);
        split
    }

    /// The cost of task `k` on `c` read the plain way: its candidate's entry, else its class's.
    fn plain(split: &SplitCosts, k: usize, c: Client) -> (i64, i64) {
        let block = &split.entries[split.starts[k] as usize..split.starts[k + 1] as usize];
        let (by_class, listed) = block.split_at(split.classes);
        let e = listed.iter().find(|e| e.client as usize == c).unwrap_or(&by_class[split.class_of[c] as usize]);
        (e.class(), e.restore())
    }

    #[test]
    fn rises_are_the_same_before_and_after_the_costs_are_arranged() {
        let mut rng = Rng::new(7);
        for (tasks, clients, classes) in [(1, 2, 1), (40, 9, 1), (60, 12, 3), (25, 5, 2)] {
            let mut split = random_split(&mut rng, tasks, clients, classes);
            let rise = |split: &SplitCosts, k: usize, from: Client, to: Client| {
                let ((a, x), (b, y)) = (plain(split, k, to), plain(split, k, from));
                (a - b, x - y)
            };
            let pairs: Vec<(Client, Client)> = (0..clients).flat_map(|f| (0..clients).map(move |t| (f, t))).collect();
            let before: Vec<Vec<(i64, i64)>> = (0..tasks).map(|k| pairs.iter().map(|&(f, t)| rise(&split, k, f, t)).collect()).collect();
            for (k, expected) in before.iter().enumerate() {
                let unarranged: Vec<(i64, i64)> = pairs.iter().map(|&(f, t)| split.rise(k as u32, f, t)).collect();
                assert_eq!(&unarranged, expected, "task {k} in task order");
            }
            // A random order (Fisher–Yates).
            let mut order: Vec<u32> = (0..tasks as u32).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.range(0, i as i64) as usize);
            }
            // Each task with a handle that no task has yet, which `arrange` replaces.
            let mut held: Vec<(u32, u32)> = order.iter().map(|&k| (k, tasks as u32)).collect();
            split.arrange(held.iter_mut());
            assert_eq!(split.entries.len(), split.starts[tasks] as usize + SHORT, "padded once");
            assert!(held.iter().map(|&(_, at)| at).eq(0..tasks as u32), "handles are places in the order");
            for &(k, at) in &held {
                let arranged: Vec<(i64, i64)> = pairs.iter().map(|&(f, t)| split.rise(at, f, t)).collect();
                assert_eq!(arranged, before[k as usize], "task {k} at {at}");
            }
        }
    }
}
