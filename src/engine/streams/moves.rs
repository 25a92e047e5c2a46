//! Fewer moves than the engine's target makes, for a balance as even as Kafka's `sticky` keeps,
//! after the engine's target and the balance step (`balance.rs`). `sticky` keeps a member's
//! tasks up to its quota and moves only the rest; the engine balances to capacity-proportional
//! quotas, tighter than `sticky`'s, and may make two moves where one does.
//!
//! 1. [`keep_previous`] chooses, within the balance bounds (for all tasks, `sticky`'s: every
//!    member within one task of every other; for stateful tasks, the target's own stateful
//!    spread), the per-process counts of stateful and stateless tasks that need the fewest moves
//!    (`counts.rs`), and reaches them giving moved tasks back to their previous owners first.
//! 2. [`cancel_swaps`] undoes swaps. Process P held t and gains u (from Q, or u had no owner or
//!    one that left), while t goes to R: t stays on P and u goes to R instead (no move at all
//!    where R is Q). Every process keeps its count of active tasks, so the balance stays, and
//!    each undone pair saves at least one move. Where t and u are both stateful or both
//!    stateless, the counts of stateful tasks stay too; where one is stateful and the other not,
//!    a stateful task changes process, and the pair is undone only where the spread of stateful
//!    tasks per member over the processes gets no wider than the assignment's. Once
//!    no pair is left, no process gains a stateful (stateless) task and loses one of its own:
//!    the moves are the least the per-process counts of stateful and stateless tasks need.
//!    Pairs of one kind go first, then those of one sub-topology (they keep the sub-topology
//!    spread too), then those whose new owner restores least. A pair of two kinds is what the
//!    first pass cannot reach when every process is at its cap and each of the two moves alone
//!    would cross it.
//! 3. [`hand_over`], under the caught-up rule only: a pair that cannot be undone because R is
//!    not caught up on u is undone through a third process that is (t stays on P, u goes there).

use std::collections::BTreeMap;

use super::counts::{Process, fewest_moves};
use crate::engine::{Assignment, AssignmentInput, ClientAssignment};
use crate::wire::{LATEST_OFFSET, TaskId};

/// A move toward the counts: its rank, the task, its destination and its source.
type Move = ((bool, i64, i64), TaskId, usize, usize);

/// A pair to undo: its rank, P, R, t and u.
type Pair = ((bool, bool, bool, i64, i64), usize, usize, TaskId, TaskId);

/// A hand-over: its rank, P, R, S, t and u.
type HandOver = ((bool, i64), usize, usize, usize, TaskId, TaskId);

/// Undoes the swaps of `assignment` (see the module), against the previous owners `input`
/// names. With `caught_up_only`, u only goes to an R caught up on it (within
/// `acceptable.recovery.lag`), as when stateful tasks move only to caught-up copies.
///
/// # Complexity
///
/// O(swaps × pairs); a pair is a task a process lost and one it gained, of one kind.
pub(crate) fn cancel_swaps(assignment: &mut Assignment, input: &AssignmentInput, caught_up_only: bool) {
    let known = Known::new(assignment, input);
    let (previous, lag) = (&known.previous, |i: usize, t: &TaskId| known.lag(i, t));
    let acceptable = input.configs.acceptable_recovery_lag;
    let stateful = |t: &TaskId| !input.stateless_tasks.contains(t);
    let caps = member_counts(assignment, input);
    let held = |a: &Assignment| stateful_counts(a, input);
    // A pair of a stateful and a stateless task moves a stateful task between P and R: allowed
    // where the spread of stateful loads per member gets no wider than the assignment's now.
    let mut held = held(assignment);
    let spread = Loads::new(&held, &caps).spread();
    // Each client's previous tasks, in task order, and each task's owner now: kept up to date
    // as pairs are undone, instead of a scan of every task per client and pair.
    let mut previous_of: Vec<Vec<&TaskId>> = vec![Vec::new(); assignment.clients.len()];
    for (t, &q) in previous {
        previous_of[q].push(t);
    }
    let mut owner: BTreeMap<TaskId, usize> =
        assignment.clients.iter().enumerate().flat_map(|(i, c)| c.active_tasks.iter().map(move |t| (t.clone(), i))).collect();
    loop {
        crate::interrupt::checkpoint();
        let loads = Loads::new(&held, &caps);
        // The best pair: (u's new owner R is its previous one, t and u of one kind, of one
        // sub-topology, R's lag on u, the change in lag restored), then the first.
        let mut best: Option<Pair> = None;
        let previous = &previous;
        for (p, client) in assignment.clients.iter().enumerate() {
            crate::interrupt::checkpoint();
            let gained: Vec<&TaskId> = client.active_tasks.iter().filter(|u| previous.get(*u) != Some(&p)).collect();
            if gained.is_empty() {
                continue;
            }
            for &t in &previous_of[p] {
                let Some(&r) = owner.get(t).filter(|&&r| r != p) else { continue };
                for &u in &gained {
                    let mixed = stateful(t) != stateful(u);
                    if mixed {
                        // The stateful one of t and u changes process: P gains it back or R takes it.
                        let (to, from) = if stateful(t) { (p, r) } else { (r, p) };
                        if !fraction_le(loads.spread_after(to, from), spread) {
                            continue;
                        }
                    }
                    let other = u.subtopology != t.subtopology || u.topology != t.topology;
                    let lag_r = lag(r, u);
                    let stays = previous.get(u) == Some(&r);
                    if caught_up_only && !stays && lag_r > acceptable {
                        continue;
                    }
                    let key = (!stays, mixed, other, lag_r, lag_r - lag(p, u) - lag(r, t));
                    if best.as_ref().is_none_or(|b| key < b.0) {
                        best = Some((key, p, r, t.clone(), u.clone()));
                    }
                }
            }
        }
        let Some((_, p, r, t, u)) = best else { return };
        exchange(assignment, p, r, &t, &u);
        // t is back on P, u on R; where one is stateful and the other not, the stateful one
        // changed process.
        match (stateful(&t), stateful(&u)) {
            (true, false) => (held[p], held[r]) = (held[p] + 1, held[r] - 1),
            (false, true) => (held[r], held[p]) = (held[r] + 1, held[p] - 1),
            _ => {}
        }
        owner.insert(t, p);
        owner.insert(u, r);
    }
}

/// The stateful active tasks per member of every process, in order (exact fractions).
struct Loads<'a> {
    held: &'a [u64],
    caps: &'a [u64],
    /// Process indices from the lowest load to the highest.
    order: Vec<usize>,
}

impl<'a> Loads<'a> {
    fn new(held: &'a [u64], caps: &'a [u64]) -> Self {
        let mut order: Vec<usize> = (0..held.len()).collect();
        order.sort_by(|&a, &b| (u128::from(held[a]) * u128::from(caps[b])).cmp(&(u128::from(held[b]) * u128::from(caps[a]))));
        Self { held, caps, order }
    }

    /// Highest load less lowest, as a fraction.
    fn spread(&self) -> (u128, u128) {
        match (self.order.first(), self.order.last()) {
            (Some(&lo), Some(&hi)) => difference((self.held[hi], self.caps[hi]), (self.held[lo], self.caps[lo])),
            _ => (0, 1),
        }
    }

    /// The spread once process `to` holds one stateful task more and `from` one less.
    fn spread_after(&self, to: usize, from: usize) -> (u128, u128) {
        let load = |i: usize| match i {
            _ if i == to => (self.held[i] + 1, self.caps[i]),
            _ if i == from => (self.held[i].saturating_sub(1), self.caps[i]),
            _ => (self.held[i], self.caps[i]),
        };
        // The others' lowest and highest, then the two changed loads.
        let others = |mut it: Box<dyn Iterator<Item = &usize> + '_>| it.find(|&&i| i != to && i != from).copied();
        let mut candidates: Vec<(u64, u64)> = vec![load(to), load(from)];
        candidates.extend(others(Box::new(self.order.iter())).map(load));
        candidates.extend(others(Box::new(self.order.iter().rev())).map(load));
        let lo = candidates.iter().copied().reduce(|a, b| if below(b, a) { b } else { a }).unwrap_or((0, 1));
        let hi = candidates.iter().copied().reduce(|a, b| if below(a, b) { b } else { a }).unwrap_or((0, 1));
        difference(hi, lo)
    }
}

/// a.0 / a.1 − b.0 / b.1 for a at least b, as a fraction.
fn difference(a: (u64, u64), b: (u64, u64)) -> (u128, u128) {
    let (an, ad, bn, bd) = (u128::from(a.0), u128::from(a.1.max(1)), u128::from(b.0), u128::from(b.1.max(1)));
    ((an * bd).saturating_sub(bn * ad), ad * bd)
}

/// Whether fraction a is at most fraction b.
fn fraction_le(a: (u128, u128), b: (u128, u128)) -> bool {
    a.0 * b.1 <= b.0 * a.1
}

/// Whether load a.0 / a.1 is below b.0 / b.1 (compared without dividing).
fn below(a: (u64, u64), b: (u64, u64)) -> bool {
    u128::from(a.0) * u128::from(b.1) < u128::from(b.0) * u128::from(a.1)
}

/// Gives back to their previous owners the tasks the target moves where the balance lets it.
/// The bounds, per process:
///
/// * all active tasks: at most ceil(tasks / members) per member (the cap Kafka's `sticky`
///   keeps) and at least floor(tasks / members), so every member stays within one task of every
///   other, as under `sticky`;
/// * stateful active tasks: per member, between the lowest and the highest the target has, so
///   the stateful spread stays the target's.
///
/// (A process the target leaves outside them keeps its count as a bound.) Within them, the
/// per-process counts of stateful and of stateless tasks with the fewest moves, then nearest the
/// target's ([`fewest_moves`]), are reached by moving tasks from the processes above their counts
/// to those below: first back to a task's previous owner (the most the target's owner would
/// restore first), then a task the process gained rather than one of its own, to the process
/// that lags least on it. The copy the destination held of the task takes the source's place.
///
/// The engine's capacity-proportional quotas of all tasks are tighter than the first bound (two
/// stateless tasks on a process of two members stay there when a task-less process of two
/// members joins), and a move that only serves them is not made.
///
/// With `caught_up_only` a stateful task moves only back to its previous owner or to a process
/// caught up on it, each move within the bounds, so the counts may stay short of the fewest
/// moves; without, the counts are reached. With it too, a task a watched warm-up restores counts
/// on the warm-up's process, where it will run: the tasks that move now (stateless ones) leave
/// room for it rather than move again when it comes.
///
pub(crate) fn keep_previous(assignment: &mut Assignment, input: &AssignmentInput, caught_up_only: bool) {
    let known = Known::new(assignment, input);
    let caps = member_counts(assignment, input);
    let n = caps.len();
    let members: u64 = caps.iter().sum::<u64>().max(1);
    let stateful = |t: &TaskId| !input.stateless_tasks.contains(t);
    let count = |a: &Assignment, of: &dyn Fn(&TaskId) -> bool| -> Vec<u64> {
        a.clients.iter().map(|c| c.active_tasks.iter().filter(|t| of(t)).count() as u64).collect()
    };
    let (mut all, mut held) = (count(assignment, &|_| true), count(assignment, &stateful));
    if caught_up_only {
        // A task a warm-up restores counts where it will run once the copy has caught up, so
        // that the tasks that can move now leave room for it.
        let at: BTreeMap<_, usize> = assignment.clients.iter().enumerate().map(|(i, c)| (c.process_id, i)).collect();
        let owner: BTreeMap<&TaskId, usize> =
            assignment.clients.iter().enumerate().flat_map(|(i, c)| c.active_tasks.iter().map(move |t| (t, i))).collect();
        let mut waiting = std::collections::BTreeSet::new();
        for w in &assignment.followup.watch_list {
            let (Some(&to), Some(&from)) = (at.get(&w.process_id), owner.get(&w.task_id)) else { continue };
            if to != from && held[from] > 0 && waiting.insert(&w.task_id) {
                (all[to], held[to], all[from], held[from]) = (all[to] + 1, held[to] + 1, all[from] - 1, held[from] - 1);
            }
        }
    }
    let total: u64 = all.iter().sum();
    let (lo, hi) = (total / members, total.div_ceil(members));
    // Stateful loads per member stay within the lowest and highest the target has.
    let below = |a: (u64, u64), b: (u64, u64)| u128::from(a.0) * u128::from(b.1) < u128::from(b.0) * u128::from(a.1);
    let (held_lo, held_hi) = (0..n).fold(((0, 1), (0, 1)), |(l, h), i| {
        let x = (held[i], caps[i]);
        (if i == 0 || below(x, l) { x } else { l }, if i == 0 || below(h, x) { x } else { h })
    });
    // The counts to reach: the fewest moves within those bounds (each process's own counts
    // within them too, should the target have left it outside).
    let mut own = vec![(0, 0); n];
    for t in assignment.clients.iter().flat_map(|c| &c.active_tasks) {
        if let Some(&p) = known.previous.get(t) {
            if stateful(t) {
                own[p].0 += 1;
            } else {
                own[p].1 += 1;
            }
        }
    }
    let processes: Vec<Process> = (0..n)
        .map(|i| {
            let c = u128::from(caps[i]);
            let fewest = (u128::from(held_lo.0) * c).div_ceil(u128::from(held_lo.1)) as u64;
            let most = (u128::from(held_hi.0) * c / u128::from(held_hi.1)) as u64;
            Process {
                own: own[i],
                target: (held[i], all[i]),
                stateful: (fewest.min(held[i]), most.max(held[i])),
                all: ((caps[i] * lo).min(all[i]), (caps[i] * hi).max(all[i])),
            }
        })
        .collect();
    let goal = fewest_moves(&processes);
    let acceptable = input.configs.acceptable_recovery_lag;
    loop {
        // The move: first those given back to their previous owner, the most R would restore
        // first; then, to reach the counts, a task R gained rather than one of its own, to the
        // process that lags least on it.
        crate::interrupt::checkpoint();
        let mut best: Option<Move> = None;
        for (r, client) in assignment.clients.iter().enumerate() {
            for t in &client.active_tasks {
                crate::interrupt::tick();
                let kind = stateful(t);
                let previous = known.previous.get(t).copied();
                let counts = |i: usize| if kind { held[i] } else { all[i] - held[i] };
                let goal_of = |i: usize| goal.as_ref().map(|g| if kind { g[i].0 } else { g[i].1 });
                if goal_of(r).is_some_and(|g| counts(r) <= g) {
                    continue;
                }
                for p in (0..n).filter(|&p| p != r) {
                    let back = previous == Some(p);
                    if !back && goal.is_none() {
                        continue;
                    }
                    if goal_of(p).is_some_and(|g| counts(p) >= g) {
                        continue;
                    }
                    // The counts reached are within the bounds; on the way there, each move
                    // stays within them only where a move may be the last (some stateful moves
                    // wait for caught-up copies).
                    let within = goal.is_some() && !caught_up_only;
                    if !within && (all[r] <= processes[r].all.0 || all[p] >= processes[p].all.1) {
                        continue;
                    }
                    if !within && kind && (below(held_hi, (held[p] + 1, caps[p])) || below((held[r] - 1, caps[r]), held_lo)) {
                        continue;
                    }
                    let lag = known.lag(p, t);
                    if !back && caught_up_only && kind && lag > acceptable {
                        continue;
                    }
                    let key = if back { (false, -known.lag(r, t), 0) } else { (true, i64::from(previous == Some(r)), lag) };
                    if best.as_ref().is_none_or(|b| key < b.0) {
                        best = Some((key, t.clone(), p, r));
                    }
                }
            }
        }
        let Some((_, t, p, r)) = best else { return };
        move_active(assignment, r, p, &t);
        all[p] += 1;
        all[r] -= 1;
        if stateful(&t) {
            held[p] += 1;
            held[r] -= 1;
        }
    }
}

/// Each client's process's members (its capacity, at least 1), in the assignment's order.
pub(super) fn member_counts(assignment: &Assignment, input: &AssignmentInput) -> Vec<u64> {
    let capacity: BTreeMap<_, u64> = input.clients.iter().map(|c| (c.process_id, u64::from(c.capacity.max(1)))).collect();
    assignment.clients.iter().map(|c| capacity.get(&c.process_id).copied().unwrap_or(1)).collect()
}

/// Each client's stateful active tasks, in the assignment's order.
fn stateful_counts(assignment: &Assignment, input: &AssignmentInput) -> Vec<u64> {
    assignment.clients.iter().map(|c| c.active_tasks.iter().filter(|t| !input.stateless_tasks.contains(*t)).count() as u64).collect()
}

/// Moves active `task` from client `from` to client `to`; the copy `to` held of it (standby,
/// warm-up, spare) goes to `from`, and a warm-up watched on `to` is watched on `from`.
fn move_active(assignment: &mut Assignment, from: usize, to: usize, task: &TaskId) {
    let role = take_role(&mut assignment.clients[to], task);
    remove(&mut assignment.clients[from].active_tasks, task);
    insert(&mut assignment.clients[to].active_tasks, task);
    put_role(&mut assignment.clients[from], task, role);
    let (to_id, from_id) = (assignment.clients[to].process_id, assignment.clients[from].process_id);
    if role.warmup {
        for w in assignment.followup.watch_list.iter_mut().filter(|w| w.task_id == *task && w.process_id == to_id) {
            w.process_id = from_id;
        }
    }
}

/// The three-process form of [`cancel_swaps`] under the caught-up rule. Process P held t and
/// gains the stateful task u, t goes to R, and R is not caught up on u (nor its previous owner),
/// so the pair cannot be undone. Then t stays on P and u goes to a third process S that is u's
/// previous owner or caught up on it, where R may give up a task and S take one within the
/// balance [`keep_previous`] keeps (each member within one task of every other) and the spread of
/// stateful tasks per member gets no wider than the assignment's. Each hand-over saves t's move,
/// and u's too where S is u's previous owner. Hand-overs to u's previous owner go first, then to
/// the process that lags least on u.
///
/// # Complexity
///
/// O(hand-overs × blocked pairs × processes).
pub(crate) fn hand_over(assignment: &mut Assignment, input: &AssignmentInput) {
    let known = Known::new(assignment, input);
    let acceptable = input.configs.acceptable_recovery_lag;
    let stateful = |t: &TaskId| !input.stateless_tasks.contains(t);
    let caps = member_counts(assignment, input);
    let members: u64 = caps.iter().sum::<u64>().max(1);
    let spread = Loads::new(&stateful_counts(assignment, input), &caps).spread();
    let mut previous_of: Vec<Vec<&TaskId>> = vec![Vec::new(); assignment.clients.len()];
    for (t, &q) in &known.previous {
        previous_of[q].push(t);
    }
    loop {
        crate::interrupt::checkpoint();
        let owner: BTreeMap<&TaskId, usize> =
            assignment.clients.iter().enumerate().flat_map(|(i, c)| c.active_tasks.iter().map(move |t| (t, i))).collect();
        let all: Vec<u64> = assignment.clients.iter().map(|c| c.active_tasks.len() as u64).collect();
        let held = stateful_counts(assignment, input);
        let loads = Loads::new(&held, &caps);
        let total: u64 = all.iter().sum();
        let (lo, hi) = (total / members, total.div_ceil(members));
        // The best hand-over: (S is not u's previous owner, S's lag on u), then the first.
        let mut best: Option<HandOver> = None;
        for (p, client) in assignment.clients.iter().enumerate() {
            crate::interrupt::checkpoint();
            let gained: Vec<&TaskId> =
                client.active_tasks.iter().filter(|u| stateful(u) && known.previous.get(*u) != Some(&p)).collect();
            if gained.is_empty() {
                continue;
            }
            for &t in &previous_of[p] {
                let Some(&r) = owner.get(t).filter(|&&r| r != p) else { continue };
                if all[r] <= caps[r] * lo {
                    continue;
                }
                for &u in &gained {
                    if known.previous.get(u) == Some(&r) || known.lag(r, u) <= acceptable {
                        continue; // the pair itself can be undone
                    }
                    for s in (0..all.len()).filter(|&s| s != p && s != r && all[s] < caps[s] * hi) {
                        let back = known.previous.get(u) == Some(&s);
                        let lag = known.lag(s, u);
                        if !back && lag > acceptable {
                            continue;
                        }
                        // S gains the stateful u; R loses t, or P does where t is stateless.
                        let after = loads.spread_after(s, if stateful(t) { r } else { p });
                        if !fraction_le(after, spread) {
                            continue;
                        }
                        let key = (!back, lag);
                        if best.as_ref().is_none_or(|b| key < b.0) {
                            best = Some((key, p, r, s, t.clone(), u.clone()));
                        }
                    }
                }
            }
        }
        let Some((_, p, r, s, t, u)) = best else { return };
        move_active(assignment, r, p, &t);
        move_active(assignment, p, s, &u);
    }
}

/// What the passes read of the input: each task's previous owner and each client's lag.
struct Known<'a> {
    /// Each task's previous active owner, by index into the assignment's clients.
    previous: BTreeMap<TaskId, usize>,
    /// Each client's reported offset sums, by index into the assignment's clients.
    sums: Vec<Option<&'a BTreeMap<TaskId, i64>>>,
    input: &'a AssignmentInput,
}

impl<'a> Known<'a> {
    fn new(assignment: &Assignment, input: &'a AssignmentInput) -> Self {
        let index: BTreeMap<_, usize> = assignment.clients.iter().enumerate().map(|(i, c)| (c.process_id, i)).collect();
        let mut previous = BTreeMap::new();
        let mut sums = vec![None; assignment.clients.len()];
        for client in &input.clients {
            let Some(&i) = index.get(&client.process_id) else { continue };
            sums[i] = Some(&client.task_offset_sums);
            for t in &client.owned_active_tasks {
                previous.insert(t.clone(), i);
            }
        }
        Self { previous, sums, input }
    }

    /// Client `i`'s lag on `t` ([`lag`]).
    fn lag(&self, i: usize, t: &TaskId) -> i64 {
        lag(self.input, self.sums[i], t)
    }
}

/// A client's lag on `t` given its reported offset sums: 0 for a stateless task or one it runs,
/// else the end-offset sum less its reported sum (the whole end without one).
pub(super) fn lag(input: &AssignmentInput, sums: Option<&BTreeMap<TaskId, i64>>, t: &TaskId) -> i64 {
    if input.stateless_tasks.contains(t) {
        return 0;
    }
    let end = input.changelog_end_offset_sums.as_ref().and_then(|e| e.get(t)).copied().unwrap_or(0).max(0);
    match sums.and_then(|s| s.get(t)).copied() {
        Some(LATEST_OFFSET) => 0,
        Some(sum) if sum >= 0 => (end - sum).max(0),
        _ => end,
    }
}

/// P runs t and R runs u, where P ran u and R ran t: each task's other copies on the two
/// processes trade places with its active, so every task keeps its number of copies and no
/// process holds two copies of one task.
fn exchange(assignment: &mut Assignment, p: usize, r: usize, t: &TaskId, u: &TaskId) {
    let role_p_t = take_role(&mut assignment.clients[p], t);
    let role_r_u = take_role(&mut assignment.clients[r], u);
    for (client, out, into) in [(p, u, t), (r, t, u)] {
        let c = &mut assignment.clients[client];
        remove(&mut c.active_tasks, out);
        insert(&mut c.active_tasks, into);
    }
    put_role(&mut assignment.clients[r], t, role_p_t);
    put_role(&mut assignment.clients[p], u, role_r_u);
    let (pid, rid) = (assignment.clients[p].process_id, assignment.clients[r].process_id);
    for w in &mut assignment.followup.watch_list {
        if role_p_t.warmup && w.task_id == *t && w.process_id == pid {
            w.process_id = rid;
        } else if role_r_u.warmup && w.task_id == *u && w.process_id == rid {
            w.process_id = pid;
        }
    }
    assignment.followup.watch_list.sort_by(|a, b| (&a.task_id, a.process_id).cmp(&(&b.task_id, b.process_id)));
}

/// The kind of copy other than active a client holds of a task.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Role {
    standby: bool,
    warmup: bool,
    spare: bool,
}

pub(super) fn take_role(client: &mut ClientAssignment, task: &TaskId) -> Role {
    Role { standby: remove(&mut client.standby_tasks, task), warmup: remove(&mut client.warmup_tasks, task), spare: remove(&mut client.spare_tasks, task) }
}

pub(super) fn put_role(client: &mut ClientAssignment, task: &TaskId, role: Role) {
    for (has, list) in [(role.standby, &mut client.standby_tasks), (role.warmup, &mut client.warmup_tasks), (role.spare, &mut client.spare_tasks)] {
        if has {
            insert(list, task);
        }
    }
}

pub(super) fn remove(list: &mut Vec<TaskId>, task: &TaskId) -> bool {
    match list.iter().position(|t| t == task) {
        Some(at) => {
            list.remove(at);
            true
        }
        None => false,
    }
}

pub(super) fn insert(list: &mut Vec<TaskId>, task: &TaskId) {
    let at = list.partition_point(|t| t < task);
    list.insert(at, task.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AssignorKind, ClientInput, assign};
    use crate::wire::ProcessId;

    #[test]
    fn a_task_that_r_cannot_take_goes_to_a_third_process_caught_up_on_it() {
        // P (one member) owned t; R (two members) owns a and c; S (two members) owns b and d; u's
        // owner has left. The target gives u to P and t to R. R has no state of u, S has all of
        // it, so t goes back to P and u to S: one move fewer, no member above two tasks, the
        // stateful spread per member still 0.5.
        let task = |p| TaskId::new(0, p);
        let (t, u, a, b, c, d) = (task(0), task(1), task(2), task(3), task(4), task(5));
        let id = |n: u128| ProcessId(uuid::Uuid::from_u128(n));
        let input = AssignmentInput::new()
            .with_client(ClientInput::new(id(1), 1).with_owned_active_tasks([t.clone()]))
            .with_client(ClientInput::new(id(2), 2).with_owned_active_tasks([a.clone(), c.clone()]))
            .with_client(ClientInput::new(id(3), 2).with_owned_active_tasks([b.clone(), d.clone()]).with_task_offset_sums([(u.clone(), 100_000)]))
            .with_stateful_tasks((0..6).map(|p| (task(p), 100_000)));
        let mut assignment = assign(AssignorKind::Optimized, &input).unwrap();
        let place = [(id(1), vec![u.clone()]), (id(2), vec![t.clone(), a.clone(), c.clone()]), (id(3), vec![b.clone(), d.clone()])];
        for client in &mut assignment.clients {
            let (_, tasks) = place.iter().find(|(p, _)| *p == client.process_id).unwrap();
            (client.active_tasks, client.standby_tasks, client.warmup_tasks, client.spare_tasks) = (tasks.clone(), vec![], vec![], vec![]);
        }
        cancel_swaps(&mut assignment, &input, true);
        assert_eq!(assignment.client(&id(1)).unwrap().active_tasks, std::slice::from_ref(&u), "R is not caught up on u: the pair stays");
        hand_over(&mut assignment, &input);
        assert_eq!(assignment.client(&id(1)).unwrap().active_tasks, [t]);
        assert_eq!(assignment.client(&id(2)).unwrap().active_tasks, [a, c]);
        assert_eq!(assignment.client(&id(3)).unwrap().active_tasks, [u, b, d]);
    }
}
