//! Standby tasks (Kafka's `StickyTaskAssignor.assignStandby`), for `num.standby.replicas` > 0.
//!
//! 1. In descending (partition, subtopology) order, each stateful task's replicas go one by one
//!    to its previous active owner, then to the least loaded of its previous standby owners and
//!    offset reporters, each time to a member under the total quota whose process does not hold
//!    the task yet. The first replica that finds none leaves the rest for step 2.
//! 2. In descending (subtopology, partition) order, each left replica goes to the least loaded
//!    process not holding the task: the queue by load is polled until one is found, and the
//!    polled processes return to it innermost first, as Kafka's recursion returns them. A replica
//!    that finds no process is dropped (Kafka logs "There is not enough available capacity").

use super::active::process_queue;
use super::process::Task;
use super::state::State;

/// Places `num.standby.replicas` replicas of every task of `stateful`.
pub(super) fn assign_standby(state: &mut State, mut stateful: Vec<Task>) {
    stateful.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let replicas = state.num_standby_replicas;
    let mut left: Vec<(Task, i32)> = Vec::new();
    for task in stateful {
        let mut placed = 0;
        while placed < replicas {
            if !give_to_previous(state, task) {
                left.push((task, replicas - placed));
                break;
            }
            placed += 1;
        }
    }
    left.sort_by_key(|&(task, _)| std::cmp::Reverse(task));
    let mut queue = process_queue(state);
    let mut polled = Vec::new();
    for (task, remaining) in left {
        for _ in 0..remaining {
            polled.clear();
            let mut found = false;
            while let Some((load, p)) = queue.poll() {
                if state.processes[p].has_task(task) {
                    polled.push((load, p));
                    if queue.is_empty() {
                        break;
                    }
                    continue;
                }
                let count = state.processes[p].add_task_to_least_loaded(&mut state.members, task, false);
                if count != -1 {
                    found = true;
                    state.reached_total(count);
                }
                polled.push((state.processes[p].load(), p));
                break;
            }
            while let Some(entry) = polled.pop() {
                queue.offer(entry);
            }
            if !found {
                break;
            }
        }
    }
}

/// One replica of `task` to its previous active owner, or else to the least loaded previous
/// standby owner or reporter; returns whether one took it.
fn give_to_previous(state: &mut State, task: Task) -> bool {
    if let Some(&m) = state.prev_active.get(&task) {
        let p = state.members.process[m];
        if !state.processes[p].has_task(task) && state.members.count[m] < state.total_quota {
            let count = state.processes[p].add_task(&mut state.members, m, task, false);
            state.reached_total(count);
            return true;
        }
    }
    let Some(candidates) = state.prev_standby.get(&task).filter(|c| !c.is_empty()) else { return false };
    let Some(m) = state.least_loaded_previous(Some(candidates), Some(task)) else { return false };
    if state.members.count[m] >= state.total_quota {
        return false;
    }
    let p = state.members.process[m];
    let count = state.processes[p].add_task(&mut state.members, m, task, false);
    state.reached_total(count);
    true
}
