//! The balance the streams protocol needs from `optimized`, as a hard rule: after the engine's
//! target, every process holds the active tasks the engine's own quotas give it (capacity, its
//! member count, proportional; `quotas::sticky_quotas` with no imbalance allowed), as close to
//! what it holds as that balance lets it.
//!
//! The streams protocol has no probing rebalance: a target the engine leaves unbalanced (its
//! caught-up rule keeps stateful tasks on the clients that have their state, waiting for warm-ups
//! that no rebalance will ever promote) stays unbalanced until the group changes. Kafka's
//! `sticky` keeps the members within ceil(tasks / members); so must we. The quotas keep every
//! process's tasks per member within the balanced window, and the tasks of a process are dealt
//! evenly over its members, so no member is above ceil(tasks / members) (checked against
//! `sticky` on random groups by `tests/streams_balance.rs`). Counts the engine's own quotas give
//! are counts its next assignment keeps, so a settled group stays settled.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::optimized::quotas::sticky_quotas;
use crate::engine::{Assignment, AssignmentInput};
use crate::wire::{LATEST_OFFSET, TaskId};

/// Moves active tasks from the processes above their quota to those below it, the quotas being
/// the engine's own balanced counts closest to the current ones: first the stateful tasks
/// against the quotas of stateful tasks, then the stateless ones against the quotas of all
/// (the engine's steps 1 and 6). Each move is the cheapest for its destination: a task it holds
/// a copy of (the copy and the active swap places, so the number of copies stays), else the task
/// it lags least on.
///
/// # Complexity
///
/// O(moves × (processes + tasks of the source)), plus the engine's quotas.
pub(crate) fn balance_processes(assignment: &mut Assignment, input: &AssignmentInput) {
    let capacity: BTreeMap<_, u64> = input.clients.iter().map(|c| (c.process_id, u64::from(c.capacity.max(1)))).collect();
    let caps: Vec<u64> = assignment.clients.iter().map(|c| capacity.get(&c.process_id).copied().unwrap_or(1)).collect();
    let n = caps.len();
    let stateless = |t: &TaskId| input.stateless_tasks.contains(t);
    let count = |a: &Assignment, of: &dyn Fn(&TaskId) -> bool| -> Vec<usize> {
        a.clients.iter().map(|c| c.active_tasks.iter().filter(|t| of(t)).count()).collect()
    };
    let stateful_counts = count(assignment, &|t| !stateless(t));
    let quotas = sticky_quotas(stateful_counts.iter().sum(), &caps, &vec![0; n], &stateful_counts, usize::MAX, 0);
    settle(assignment, input, &caps, &quotas, &|t| !stateless(t), false);
    let stateful_counts = count(assignment, &|t| !stateless(t));
    let totals = count(assignment, &|_| true);
    let stateless_total = totals.iter().sum::<usize>() - stateful_counts.iter().sum::<usize>();
    let quotas = sticky_quotas(stateless_total, &caps, &stateful_counts, &totals, usize::MAX, 0);
    settle(assignment, input, &caps, &quotas, &stateless, true);
}

/// Moves active tasks of one kind (`of`) until every client holds `quotas` active tasks of that
/// kind, or of every kind with `all_kinds` (the moves are of this kind either way).
fn settle(assignment: &mut Assignment, input: &AssignmentInput, caps: &[u64], quotas: &[usize], of: &dyn Fn(&TaskId) -> bool, all_kinds: bool) {
    let sums: BTreeMap<_, _> = input.clients.iter().map(|c| (c.process_id, &c.task_offset_sums)).collect();
    let ids: Vec<_> = assignment.clients.iter().map(|c| c.process_id).collect();
    let lag = |i: usize, t: &TaskId| -> u64 {
        if input.stateless_tasks.contains(t) {
            return 0;
        }
        let end = input.changelog_end_offset_sums.as_ref().and_then(|e| e.get(t)).copied().unwrap_or(0);
        match sums.get(&ids[i]).and_then(|s| s.get(t)).copied() {
            Some(LATEST_OFFSET) => 0,
            Some(sum) if sum >= 0 => end.saturating_sub(sum).max(0) as u64,
            _ => end.max(0) as u64,
        }
    };
    let n = caps.len();
    loop {
        let load = |i: usize| {
            let tasks = &assignment.clients[i].active_tasks;
            if all_kinds { tasks.len() } else { tasks.iter().filter(|t| of(t)).count() }
        };
        // Load per unit of capacity, compared without dividing: the source is the most loaded now
        // of those above their quota, the destination the least loaded once it has the task of
        // those below theirs.
        let by_ratio = |extra: usize| {
            move |a: &&usize, b: &&usize| {
                let (la, lb) = ((load(**a) + extra) as u128, (load(**b) + extra) as u128);
                (la * u128::from(caps[**b])).cmp(&(lb * u128::from(caps[**a]))).then(a.cmp(b))
            }
        };
        let sources: Vec<usize> = (0..n).filter(|&i| load(i) > quotas[i]).collect();
        let destinations: Vec<usize> = (0..n).filter(|&i| load(i) < quotas[i]).collect();
        let (Some(&from), Some(&to)) = (sources.iter().max_by(by_ratio(0)), destinations.iter().min_by(by_ratio(1))) else {
            return;
        };
        let held: BTreeSet<&TaskId> = assignment.clients[to].standby_tasks.iter().collect();
        let Some(task) = assignment.clients[from]
            .active_tasks
            .iter()
            .filter(|t| of(t))
            .min_by_key(|t| (!held.contains(t), lag(to, t), (*t).clone()))
            .cloned()
        else {
            return;
        };
        move_active(assignment, from, to, &task);
    }
}

/// Moves active `task` from client `from` to client `to`; a copy `to` held goes to `from`.
fn move_active(assignment: &mut Assignment, from: usize, to: usize, task: &TaskId) {
    let remove = |v: &mut Vec<TaskId>| match v.iter().position(|t| t == task) {
        Some(at) => {
            v.remove(at);
            true
        }
        None => false,
    };
    let insert = |v: &mut Vec<TaskId>| {
        let at = v.partition_point(|t| t < task);
        v.insert(at, task.clone());
    };
    remove(&mut assignment.clients[from].active_tasks);
    insert(&mut assignment.clients[to].active_tasks);
    if remove(&mut assignment.clients[to].standby_tasks) {
        let was_warmup = remove(&mut assignment.clients[to].warmup_tasks);
        let was_spare = remove(&mut assignment.clients[to].spare_tasks);
        insert(&mut assignment.clients[from].standby_tasks);
        if was_warmup {
            insert(&mut assignment.clients[from].warmup_tasks);
        }
        if was_spare {
            insert(&mut assignment.clients[from].spare_tasks);
        }
    }
}
