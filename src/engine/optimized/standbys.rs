//! Step 4, the standbys: per-client quotas on top of the target's actives and a min-cost flow
//! that keeps the copies that exist, then prefers the target of a pending move.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::holders::lags_caught_up;
use super::quotas::{imbalance, sticky_quotas};
use crate::engine::assignor::AssignError;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::engine::task_lag::TaskLag;
use crate::flow::{Graph, Network};

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
pub(super) fn place_standbys(
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
    // Per task: the clients holding a copy of it, its active's client aside, sorted; task `t`'s
    // are `holder_list[holder_starts[t]..holder_starts[t + 1]]`.
    let holds = |c: Client, t: Task| model.stateful[t as usize] && active_on[t as usize] != Some(c);
    // (Positions and clients are `u32`s: 4 bytes a task and 8 a holder, live while the
    // network is built.)
    let mut holder_starts = vec![0u32; model.tasks.len() + 1];
    for c in 0..n {
        for &t in model.reported(c).tasks().iter().filter(|&&t| holds(c, t)) {
            holder_starts[t as usize + 1] += 1;
        }
    }
    for t in 0..model.tasks.len() {
        holder_starts[t + 1] = holder_starts[t + 1].checked_add(holder_starts[t]).expect("standbys: 2^32 copies or more");
    }
    // With each holder, whether its copy is caught up (`lags_caught_up`, from the offset sum
    // at hand).
    let acceptable = model.input.configs.acceptable_recovery_lag;
    let mut fill = holder_starts[..model.tasks.len()].to_vec();
    let mut holder_list: Vec<(u32, bool)> = vec![(0, false); holder_starts[model.tasks.len()] as usize];
    for c in 0..n {
        for (t, sum) in model.reported(c).iter().filter(|&(t, _)| holds(c, t)) {
            let caught_up = TaskLag::compute(Some(sum), model.end_offset_sums[t as usize]).is_caught_up(acceptable);
            holder_list[fill[t as usize] as usize] = (c as u32, caught_up);
            fill[t as usize] += 1;
        }
    }
    drop(fill);
    for t in 0..model.tasks.len() {
        holder_list[holder_starts[t] as usize..holder_starts[t + 1] as usize].sort_unstable_by_key(|&(c, _)| c);
    }
    let holders = |t: Task| {
        let list = &holder_list[holder_starts[t as usize] as usize..holder_starts[t as usize + 1] as usize];
        list.iter().map(|&(c, caught_up)| (c as Client, caught_up))
    };
    drop(active_on);
    let mut claims: Vec<usize> = targets.to_vec();
    holder_list.iter().for_each(|&(c, _)| claims[c as usize] += 1);
    // A client holds at most one copy of each task.
    let quotas = sticky_quotas(tasks.len() * wanted, caps, targets, &claims, tasks.len(), imbalance(model));
    // The pending moves are in task order: a task's target is found by binary search (no
    // per-task table beside the network).
    debug_assert!(pending.windows(2).all(|w| w[0].0 < w[1].0), "pending moves out of task order");
    let target_of = |t: Task| pending.binary_search_by_key(&t, |&(p, _)| p).ok().map(|i| pending[i].1);
    let (source, sink) = (0, 1);
    let task_node = |k: usize| 2 + k;
    let client_node = |c: Client| 2 + tasks.len() + c;
    let pool = 2 + tasks.len() + n;
    // The network is built straight into the solver's form (`Network`), edge by edge from
    // these lists, so that no edge list is held beside it.
    let edges = |add: &mut dyn FnMut(usize, usize, i64, i64)| {
        for (k, &t) in tasks.iter().enumerate() {
            crate::interrupt::checkpoint();
            add(source, task_node(k), wanted as i64, 0);
            let pending_target = target_of(t).filter(|&d| !placement.has_active(d, t) && !holders(t).any(|(c, _)| c == d));
            // A caught-up copy costs 0, any other copy and the pending target 1.
            for (c, caught_up) in holders(t).chain(pending_target.map(|d| (d, false))) {
                add(task_node(k), client_node(c), 1, i64::from(!caught_up));
            }
            add(task_node(k), pool, wanted as i64, 2);
        }
        for c in 0..n {
            add(pool, client_node(c), tasks.len() as i64, 0);
            let quota = quotas[c].saturating_sub(targets[c]);
            add(client_node(c), sink, quota as i64, 0);
            add(client_node(c), sink, tasks.len() as i64, 1_000_000);
        }
    };
    let internal = |_| AssignError::Internal("optimized assignor: standby graph");
    let mut network = Network::build(3 + tasks.len() + n, edges).map_err(internal)?;
    drop((holder_list, holder_starts));
    network.min_cost_flow(source, sink, (tasks.len() * wanted) as i64).map_err(internal)?;
    // The copies each task keeps or gets from its own edges (task → client, in edge order),
    // then the units of the shared node: task → shared node per task, shared node → client per
    // client. The copies are read as (task, client) pairs first, and listed per task once the
    // network is freed.
    let mut kept: Vec<(u32, u32)> = Vec::with_capacity(tasks.len() * wanted);
    let mut units: Vec<i64> = Vec::with_capacity(n);
    let mut wants: Vec<i64> = Vec::with_capacity(tasks.len());
    for k in 0..tasks.len() {
        crate::interrupt::checkpoint();
        network.for_each_edge_from(task_node(k), |e| {
            if e.to == pool {
                wants.push(e.flow);
            } else if e.flow > 0 {
                kept.push((k as u32, (e.to - client_node(0)) as u32));
            }
        });
    }
    network.for_each_edge_from(pool, |e| units.push(e.flow));
    drop(network);
    // Each stateful task's active (by position), for the deal: read once the network is freed.
    let active_on = placement.active_clients(model.tasks.len());
    let actives: Vec<Option<Client>> = tasks.iter().map(|&t| active_on[t as usize]).collect();
    drop(active_on);
    // Every task gets at most `wanted` clients (its units from the source).
    let mut chosen = Chosen::new(tasks.len(), wanted);
    for (k, c) in kept {
        chosen.push(k as usize, c as Client);
    }
    if !deal_shared(units, &wants, &actives, &mut chosen) {
        let target_of = pending_targets(model, pending);
        return place_standbys_full(model, placement, &quotas, targets, &target_of, wanted).map(|()| false);
    }
    for (k, &t) in tasks.iter().enumerate() {
        crate::interrupt::checkpoint();
        for &c in chosen.of(k) {
            placement.assign_standby(c, t);
        }
    }
    Ok(true)
}

/// The clients each task's standbys go to, in one flat list with a fixed number of slots per
/// task (no `Vec` per task: a million small blocks at a million tasks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Chosen {
    /// Slots per task.
    width: usize,
    /// Task `k`'s clients are `slots[k * width..][..len[k]]`.
    slots: Vec<Client>,
    len: Vec<u32>,
}

impl Chosen {
    /// `tasks` tasks with no client yet, each with room for `width`.
    pub(super) fn new(tasks: usize, width: usize) -> Self {
        Self { width, slots: vec![0; tasks * width], len: vec![0; tasks] }
    }

    /// The lists `lists`, each with room for `width` clients in all.
    #[cfg(test)]
    pub(super) fn from_lists(lists: &[Vec<Client>], width: usize) -> Self {
        let mut chosen = Self::new(lists.len(), width);
        for (k, list) in lists.iter().enumerate() {
            list.iter().for_each(|&c| chosen.push(k, c));
        }
        chosen
    }

    /// Task `k`'s clients, in the order they were added.
    pub(super) fn of(&self, k: usize) -> &[Client] {
        &self.slots[k * self.width..][..self.len[k] as usize]
    }

    /// Adds client `c` to task `k`'s.
    ///
    /// # Panics
    /// If task `k` has no slot left.
    pub(super) fn push(&mut self, k: usize, c: Client) {
        let at = self.len[k] as usize;
        assert!(at < self.width, "standbys: task {k} given more than {} clients", self.width);
        self.slots[k * self.width + at] = c;
        self.len[k] += 1;
    }

    /// Replaces the `i`th client of task `k` with `c`.
    fn set(&mut self, k: usize, i: usize, c: Client) {
        assert!(i < self.len[k] as usize);
        self.slots[k * self.width + i] = c;
    }
}

/// The target client of each task with a pending move (by task index), `None` for the others.
fn pending_targets(model: &Model<'_>, pending: &[(Task, Client)]) -> Vec<Option<Client>> {
    let mut target_of = vec![None; model.tasks.len()];
    for &(t, d) in pending {
        target_of[t as usize] = Some(d);
    }
    target_of
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
pub(super) fn deal_shared(mut units: Vec<i64>, wants: &[i64], actives: &[Option<Client>], chosen: &mut Chosen) -> bool {
    // The clients with units left, lowest first.
    let mut left: BinaryHeap<Reverse<Client>> = (0..units.len()).filter(|&c| units[c] > 0).map(Reverse).collect();
    // Per task: where its dealt units start in `chosen` (the copies of its own edges come first).
    let own: Vec<usize> = (0..wants.len()).map(|k| chosen.of(k).len()).collect();
    let mut barred = Vec::new();
    for (k, &want) in wants.iter().enumerate() {
        crate::interrupt::checkpoint();
        for _ in 0..want {
            let pick = loop {
                match left.pop() {
                    Some(Reverse(c)) if may_take(actives, chosen, k, c) => break Some(c),
                    Some(entry) => barred.push(entry),
                    None => break None,
                }
            };
            left.extend(barred.drain(..));
            if let Some(c) = pick {
                chosen.push(k, c);
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
pub(super) fn may_take(actives: &[Option<Client>], chosen: &Chosen, k: usize, c: Client) -> bool {
    actives[k] != Some(c) && !chosen.of(k).contains(&c)
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
pub(super) fn trade_for(k: usize, units: &[i64], actives: &[Option<Client>], own: &[usize], chosen: &mut Chosen) -> Option<Client> {
    let n = units.len();
    // Per client: the (task, slot) pairs of units dealt to it so far.
    let mut dealt_to: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for j in 0..k {
        for i in own[j]..chosen.of(j).len() {
            dealt_to[chosen.of(j)[i]].push((j, i));
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
        crate::interrupt::checkpoint();
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
        chosen.set(j, i, at);
        at = before;
    }
    chosen.push(k, at);
    Some(reached)
}

/// [`place_standbys`] on the network with an edge from every task to every client without its
/// active (T·N edges), with the quotas and pending targets it computed: the fallback where the
/// shared node's units cannot be dealt.
pub(super) fn place_standbys_full(
    model: &Model<'_>,
    placement: &mut Placement,
    quotas: &[usize],
    targets: &[usize],
    target_of: &[Option<Client>],
    wanted: usize,
) -> Result<(), AssignError> {
    let n = model.num_clients();
    let tasks = &model.stateful_tasks;
    let has_copy = |c: Client, t: Task| !placement.has_active(c, t) && model.reported(c).contains(t);
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
