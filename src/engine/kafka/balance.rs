//! Moving tasks from overloaded to underloaded clients until no single move helps: Kafka's
//! `HighAvailabilityTaskAssignor.balanceTasksOverThreads`.

use crate::engine::model::{Client, Placement, Task};

/// Which of a client's assigned sets the balancing moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    /// Active tasks.
    Active,
    /// Standby tasks.
    Standby,
}

/// Balances tasks of one kind over the clients, measured by `assignedTaskLoad` (actives plus
/// standbys per thread).
///
/// Sweeps are repeated until one moves nothing. A sweep visits every ordered pair (source,
/// destination) of distinct clients in Java `ProcessId` order; for each pair it walks a snapshot of
/// the source's tasks of `kind` in `TaskId` order and moves a task while [`should_move`] holds,
/// skipping tasks the destination already has a copy of, and moving only if `allowed(source,
/// destination)` (the standby assignor's movement predicate).
///
/// # Arguments
/// * `placement` - the assignment to balance, changed in place.
/// * `kind` - whether actives or standbys move.
/// * `allowed` - the movement predicate; always `true` for actives.
///
/// # Returns
/// Nothing; `placement` holds the balanced assignment.
///
/// # Complexity
/// O(S · N² + M · log T) for S sweeps, N clients and M moved tasks: the pairs cost O(1) each to
/// check, and a snapshot is only taken for pairs where a move is possible. Kafka copies the
/// source's task set for every pair, O(S · N · T log T).
pub(crate) fn balance_tasks_over_threads(
    placement: &mut Placement,
    kind: TaskKind,
    mut allowed: impl FnMut(&Placement, Client, Client) -> bool,
) {
    let n = placement.active.len();
    let mut snapshot: Vec<Task> = Vec::new();
    let mut keep_balancing = true;
    while keep_balancing {
        keep_balancing = false;
        for source in 0..n {
            for destination in 0..n {
                if source == destination || !should_move(placement, source, destination) {
                    continue;
                }
                snapshot.clear();
                snapshot.extend(match kind {
                    TaskKind::Active => &placement.active[source],
                    TaskKind::Standby => &placement.standby[source],
                });
                for &task in &snapshot {
                    if !should_move(placement, source, destination) {
                        break;
                    }
                    if !placement.has_assigned_task(destination, task) && allowed(placement, source, destination) {
                        match kind {
                            TaskKind::Active => {
                                placement.unassign_active(source, task);
                                placement.assign_active(destination, task);
                            }
                            TaskKind::Standby => {
                                placement.unassign_standby(source, task);
                                placement.assign_standby(destination, task);
                            }
                        }
                        keep_balancing = true;
                    }
                }
            }
        }
    }
}

/// Kafka's `shouldMoveATask`: the source is more loaded than the destination, and moving one task
/// leaves the source at least as loaded as the destination with a strictly smaller skew. The f64
/// operations are Java's, in Java's order, so ties come out the same.
pub(crate) fn should_move(placement: &Placement, source: Client, destination: Client) -> bool {
    let skew = placement.assigned_load(source) - placement.assigned_load(destination);
    if skew <= 0.0 {
        return false;
    }
    let at_destination =
        (placement.assigned_count(destination) as f64 + 1.0) / f64::from(placement.capacity(destination));
    let at_source = (placement.assigned_count(source) as f64 - 1.0) / f64::from(placement.capacity(source));
    let proposed_skew = at_source - at_destination;
    if proposed_skew < 0.0 {
        return false;
    }
    proposed_skew < skew
}
