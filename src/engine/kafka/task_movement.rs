//! Keeping tasks on caught-up clients while their target clients warm up: Kafka's
//! `TaskMovement.assignActiveTaskMovements` and `assignStandbyTaskMovements`.

use std::cmp::Ordering;

use super::priority_set::JavaPrioritySet;
use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::jdk::priority_queue::JavaPriorityQueue;

/// A scheduled movement: task `task` is on `destination`, which is not caught up on it.
#[derive(Debug, Clone, Copy)]
struct Movement {
    task: Task,
    destination: Client,
    caught_up_clients: usize,
}

/// Kafka's movement order: fewest caught-up clients first, then `TaskId`. Movements of the same
/// task tie and leave the queue in `java.util.PriorityQueue` order.
fn movement_order(a: &Movement, b: &Movement) -> Ordering {
    a.caught_up_clients.cmp(&b.caught_up_clients).then(a.task.cmp(&b.task))
}

/// The warm-up budget and the warm-ups made, shared by both movement passes.
#[derive(Debug)]
pub(crate) struct Warmups {
    /// `max.warmup.replicas` minus the moves made so far (Kafka's `getAndDecrement` keeps
    /// counting below zero).
    remaining: i64,
    /// (client, task) warm-ups made by active movements (Kafka's `warmups` map).
    pub(crate) from_active_movements: Vec<(Client, Task)>,
    /// (client, task) standbys kept as warm-ups by standby movements.
    pub(crate) from_standby_movements: Vec<(Client, Task)>,
}

impl Warmups {
    pub(crate) fn new(max_warmup_replicas: i32) -> Self {
        Self {
            remaining: max_warmup_replicas.into(),
            from_active_movements: Vec::new(),
            from_standby_movements: Vec::new(),
        }
    }

    /// `remainingWarmupReplicas.getAndDecrement() > 0`.
    fn take(&mut self) -> bool {
        let available = self.remaining > 0;
        self.remaining -= 1;
        available
    }
}

/// Kafka's `caughtUpClientsByTaskLoad` before any client is offered.
fn new_set(model: &Model<'_>, placement: &Placement) -> JavaPrioritySet {
    let n = model.num_clients();
    JavaPrioritySet::new(
        model.clients.iter().map(|c| c.process_id).collect(),
        (0..n).map(|c| placement.assigned_load(c)).collect(),
    )
}

/// Kafka's `offerAll(asList(source, destination))` after a move changed both clients.
fn requeue(set: &mut JavaPrioritySet, placement: &Placement, source: Client, destination: Client) {
    set.set_load(source, placement.assigned_load(source));
    set.set_load(destination, placement.assigned_load(destination));
    set.offer(source);
    set.offer(destination);
}

/// Whether `client`'s copy of `task` should move: it is not caught up and some client has a
/// strictly smaller lag (Kafka's `taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist`).
fn should_move(model: &Model<'_>, lags: &LagIndex, task: Task, client: Client) -> bool {
    !lags.is_caught_up(client, task) && lags.smallest_lag(model, task) < model.lag(client, task)
}

/// Moves every active task whose client is not caught up to a caught-up client, leaving a warm-up
/// standby behind while the budget lasts.
///
/// # Arguments
/// * `model`, `lags` - the lags of every client on every stateful task.
/// * `placement` - the target assignment (actives and standbys); changed in place.
/// * `warmups` - the shared warm-up budget; warm-ups made are recorded in it.
///
/// # Returns
/// The number of movements scheduled (each makes the assignor ask for a probing rebalance), or
/// `Err` with Kafka's message if a scheduled movement finds no source (cannot happen: the
/// scheduling rule guarantees a more caught-up client).
///
/// For each movement (fewest caught-up clients first), in order: swap with the least loaded
/// caught-up client holding a standby of the task; else move the active to the least loaded
/// caught-up client, keeping a warm-up on the destination if the budget allows; else use the most
/// caught-up client (swap if it has a standby, move otherwise).
///
/// The caught-up clients are polled from a replica of Kafka's `PriorityQueue` (see
/// [`JavaPrioritySet`]), which is what makes the choices equal to Kafka's when that queue is out of
/// order.
///
/// # Complexity
/// O(A log A + M · N log N) for A active tasks, M movements and N clients, as in Kafka: a poll
/// pops every client ahead of the first acceptable one and offers them back (when none is
/// acceptable and the queue is in order, a sort replaces the pops).
pub(crate) fn assign_active_task_movements(
    model: &Model<'_>,
    lags: &LagIndex,
    placement: &mut Placement,
    warmups: &mut Warmups,
) -> Result<usize, &'static str> {
    let n = model.num_clients();
    let mut caught_up_by_load = new_set(model, placement);
    let mut movements = JavaPriorityQueue::new(movement_order);
    for c in 0..n {
        for &t in &placement.active[c] {
            if should_move(model, lags, t, c) {
                movements.offer(Movement { task: t, destination: c, caught_up_clients: lags.caught_up_count(t) });
            }
        }
        caught_up_by_load.offer(c);
    }
    let needed = movements.len();
    while let Some(Movement { task, destination, .. }) = movements.poll() {
        let caught_up = |c: Client| lags.is_caught_up(c, task);
        // Only caught-up clients are accepted: when they are few, they are the candidates.
        let candidates = lags.caught_up_clients(task);
        let source = if let Some(source) =
            caught_up_by_load.poll_among(candidates, |c| caught_up(c) && placement.has_standby(c, task))
        {
            swap_standby_and_active(placement, task, source, destination);
            source
        } else if let Some(source) = caught_up_by_load.poll_among(candidates, caught_up) {
            move_active_and_try_to_warm_up(placement, warmups, task, source, destination);
            source
        } else if let Some(source) = lags.most_caught_up_eligible(model, task, destination, |_| true) {
            if placement.has_standby(source, task) {
                swap_standby_and_active(placement, task, source, destination);
            } else {
                move_active_and_try_to_warm_up(placement, warmups, task, source, destination);
            }
            source
        } else {
            return Err("Tried to move task to more caught-up client as scheduled before but none exist");
        };
        requeue(&mut caught_up_by_load, placement, source, destination);
    }
    Ok(needed)
}

/// Moves standbys whose client is not caught up to a caught-up (or the most caught-up) client
/// without a copy, keeping the old standby as a warm-up while the budget lasts. Warm-ups made by
/// [`assign_active_task_movements`] are left alone.
///
/// # Arguments
/// As for [`assign_active_task_movements`].
///
/// # Returns
/// The number of standbys moved.
///
/// # Complexity
/// O(S log S + M · N log N) for S standby tasks and M movements, as in Kafka.
pub(crate) fn assign_standby_task_movements(
    model: &Model<'_>,
    lags: &LagIndex,
    placement: &mut Placement,
    warmups: &mut Warmups,
) -> usize {
    let n = model.num_clients();
    let mut is_warmup = vec![Vec::new(); n];
    for &(c, t) in &warmups.from_active_movements {
        is_warmup[c].push(t);
    }
    let mut caught_up_by_load = new_set(model, placement);
    let mut movements = JavaPriorityQueue::new(movement_order);
    for (c, warm) in is_warmup.iter().enumerate() {
        for &t in &placement.standby[c] {
            if !warm.contains(&t) && should_move(model, lags, t, c) {
                movements.offer(Movement { task: t, destination: c, caught_up_clients: lags.caught_up_count(t) });
            }
        }
        caught_up_by_load.offer(c);
    }
    let mut moved = 0;
    while let Some(Movement { task, destination, .. }) = movements.poll() {
        let eligible = |c: Client| !placement.has_assigned_task(c, task);
        let source = caught_up_by_load
            .poll_among(lags.caught_up_clients(task), |c| lags.is_caught_up(c, task) && eligible(c))
            .or_else(|| lags.most_caught_up_eligible(model, task, destination, eligible));
        let Some(source) = source else { continue };
        placement.assign_standby(source, task);
        if warmups.take() {
            warmups.from_standby_movements.push((destination, task));
        } else {
            placement.unassign_standby(destination, task);
        }
        requeue(&mut caught_up_by_load, placement, source, destination);
        moved += 1;
    }
    moved
}

/// Kafka's `swapStandbyAndActive`: `source` turns its standby into the active, `destination`
/// turns its active into a standby.
fn swap_standby_and_active(placement: &mut Placement, task: Task, source: Client, destination: Client) {
    placement.unassign_standby(source, task);
    placement.assign_active(source, task);
    placement.unassign_active(destination, task);
    placement.assign_standby(destination, task);
}

/// Kafka's `moveActiveAndTryToWarmUp`.
fn move_active_and_try_to_warm_up(
    placement: &mut Placement,
    warmups: &mut Warmups,
    task: Task,
    source: Client,
    destination: Client,
) {
    placement.assign_active(source, task);
    placement.unassign_active(destination, task);
    if warmups.take() {
        placement.assign_standby(destination, task);
        warmups.from_active_movements.push((destination, task));
    }
}
