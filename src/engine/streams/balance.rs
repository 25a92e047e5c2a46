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
use super::moves::{insert, lag, member_counts, put_role, remove, take_role};
use crate::wire::TaskId;

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
    let caps = member_counts(assignment, input);
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
    let lag = |i: usize, t: &TaskId| lag(input, sums.get(&ids[i]).copied(), t);
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
    remove(&mut assignment.clients[from].active_tasks, task);
    insert(&mut assignment.clients[to].active_tasks, task);
    let role = take_role(&mut assignment.clients[to], task);
    put_role(&mut assignment.clients[from], task, role);
}
