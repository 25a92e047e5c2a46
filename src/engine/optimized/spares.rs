//! Step 5, the spares: make-before-break standby moves, and the idle warm-up budget spent on
//! the tasks whose loss would cost most.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::holders::{effective, effective_lag};
use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Placement, Task};

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
/// Complexity: O(N·log N + T·(R + k) + (T + B)·log T) for N clients, T stateful tasks, R
/// reporters of a task, k clients skipped before the least loaded one that did not report it,
/// and B spares placed.
pub(super) fn place_spares(
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
    // The clients by (load, index), for the first of those that did not report a task.
    let mut by_load: Vec<Client> = (0..n).collect();
    by_load.sort_by(|&a, &b| placement.assigned_load(a).total_cmp(&placement.assigned_load(b)).then(a.cmp(&b)));
    // Per exposed stateful task with a known size: its owner, the spare's host, the weight.
    let mut candidates: Vec<(Task, Client, Client, i64)> = Vec::new();
    let mut exposure = vec![0i64; n];
    for &t in &model.stateful_tasks {
        let size = model.end_offset_sums[t as usize];
        let Some(owner) = owners[t as usize] else { continue };
        if size <= 0 || exposed[t as usize] == 0 {
            continue;
        }
        // The host: the first by (lag, load, index) of the clients that may take a copy. Those
        // that did not report `t` all have the same lag, so of them only the first by (load,
        // index) can come first.
        let eligible = |c: Client| c != owner && !placement.has_standby(c, t);
        let reported = lags.reporters(t).iter().filter(|&&(_, c)| eligible(c)).map(|&(lag, c)| (effective(lag), c));
        let other = by_load
            .iter()
            .copied()
            .find(|&c| eligible(c) && !model.reported(c).contains(t))
            .map(|c| (effective(model.unreported_lag(t)), c));
        let by_copy = |a: &(i64, Client), b: &(i64, Client)| {
            a.0.cmp(&b.0).then(placement.assigned_load(a.1).total_cmp(&placement.assigned_load(b.1))).then(a.1.cmp(&b.1))
        };
        let Some((_, host)) = reported.chain(other).min_by(by_copy) else { continue };
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
    // The candidates by (their owner's exposure, weight, lowest task first), the largest on
    // top. An owner's exposure only falls as its tasks get spares, so an entry whose exposure is
    // stale is put back with the current one when it comes up.
    let mut heap: BinaryHeap<(i64, i64, Reverse<Task>, usize)> =
        candidates.iter().enumerate().map(|(i, &(t, owner, _, weight))| (exposure[owner], weight, Reverse(t), i)).collect();
    while spares.len() < budget {
        let Some((seen, weight, task, i)) = heap.pop() else { break };
        let (t, owner, host, _) = candidates[i];
        if seen != exposure[owner] {
            heap.push((exposure[owner], weight, task, i));
            continue;
        }
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
/// Complexity: O(T + S + W·S + R·log R) for T tasks, S standbys, W warm-ups and R reported
/// offset sums; the copies are read from flat per-task lists, not from the placement's sets.
pub(super) fn keep_fresher_copies(
    model: &Model<'_>,
    lags: &LagIndex,
    placement: &mut Placement,
    warmups: &[(Client, Task)],
) -> Vec<(Client, Task)> {
    let tasks = model.tasks.len();
    let owners = placement.active_clients(tasks);
    // Per task, its standbys: task `t`'s are `standbys[starts[t]..starts[t + 1]]`.
    let mut starts = vec![0u32; tasks + 1];
    for held in &placement.standby {
        held.iter().for_each(|&t| starts[t as usize + 1] += 1);
    }
    for t in 0..tasks {
        starts[t + 1] += starts[t];
    }
    let mut fill = starts.clone();
    let mut standbys = vec![Held::default(); starts[tasks] as usize];
    for (c, held) in placement.standby.iter().enumerate() {
        for &t in held {
            standbys[fill[t as usize] as usize].client = c as u32;
            fill[t as usize] += 1;
        }
    }
    drop(fill);
    for &(c, t) in warmups {
        let of_task = &mut standbys[starts[t as usize] as usize..starts[t as usize + 1] as usize];
        of_task.iter_mut().filter(|s| s.client as usize == c).for_each(|s| s.warming = true);
    }
    let mut kept = Vec::new();
    let (mut stale, mut fresher) = (Vec::new(), Vec::new());
    for &t in &model.stateful_tasks {
        let of_task = &standbys[starts[t as usize] as usize..starts[t as usize + 1] as usize];
        // The lags of its standbys still restoring (a warm-up is there for the move); the
        // task's lags are read from its own reporters.
        stale.clear();
        for s in of_task.iter().filter(|s| !s.warming) {
            let c = s.client as Client;
            if !lags.is_caught_up(c, t) {
                stale.push(effective(lags.lag(model, c, t)));
            }
        }
        if stale.is_empty() {
            continue;
        }
        stale.sort_unstable_by(|a, b| b.cmp(a));
        let assigned = |c: Client| owners[t as usize] == Some(c) || of_task.iter().any(|s| s.client as usize == c);
        fresher.clear();
        fresher.extend(lags.reporters(t).iter().filter(|&&(_, c)| !assigned(c)).map(|&(lag, c)| (effective(lag), c)));
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

/// A standby of a task, for [`keep_fresher_copies`]: its client, and whether it is a warm-up.
#[derive(Debug, Clone, Copy, Default)]
struct Held {
    client: u32,
    warming: bool,
}
