//! Active tasks (Kafka's `StickyTaskAssignor.assignActive`), in three passes.
//!
//! 1. In (partition, subtopology) order, each task goes back to its previous active owner if
//!    that member is under the active quota.
//! 2. Then each remaining task goes to the least loaded of its previous standby owners and
//!    offset reporters ([`State::least_loaded_previous`]) if that member is under the quota.
//! 3. The rest, in (subtopology, partition) order, go one by one to the least loaded process
//!    (a Java `PriorityQueue` by load) and in it to the member its heap puts first.

use std::cmp::Ordering;

use super::input::StreamsAssignError;
use super::process::Task;
use super::state::State;
use crate::jdk::cmp::cmp_loads;
use crate::jdk::priority_queue::JavaPriorityQueue;

/// A process in a queue by load: its load when it entered, which stays its load while queued.
pub(super) type Queued = (f64, usize);

pub(super) fn by_load(a: &Queued, b: &Queued) -> Ordering {
    cmp_loads(a.0, b.0)
}

/// The processes queued by load, offered in the order of `processIdToState`.
pub(super) fn process_queue(state: &State) -> JavaPriorityQueue<Queued, fn(&Queued, &Queued) -> Ordering> {
    let mut queue = JavaPriorityQueue::new(by_load as fn(&Queued, &Queued) -> Ordering);
    for (p, process) in state.processes.iter().enumerate() {
        queue.offer((process.load(), p));
    }
    queue
}

/// Places every task of `tasks` as an active task.
pub(super) fn assign_active(state: &mut State, mut tasks: Vec<Task>) -> Result<(), StreamsAssignError> {
    tasks.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    tasks.retain(|&task| {
        let Some(&m) = state.prev_active.get(&task) else { return true };
        !give_if_under_quota(state, m, task)
    });
    tasks.retain(|&task| {
        let Some(m) = state.least_loaded_previous(state.prev_standby.get(&task), None) else { return true };
        !give_if_under_quota(state, m, task)
    });
    tasks.sort();
    let mut queue = process_queue(state);
    for task in tasks {
        let Some((_, p)) = queue.poll() else {
            return Err(StreamsAssignError::NoMembers(state.task_name(task)));
        };
        let count = state.processes[p].add_task_to_least_loaded(&mut state.members, task, true);
        if count == -1 {
            return Err(StreamsAssignError::NoMembers(state.task_name(task)));
        }
        state.reached_active(count);
        state.reached_total(count);
        queue.offer((state.processes[p].load(), p));
    }
    Ok(())
}

/// Gives `task` to member `m` if it is under the active quota; returns whether it did.
fn give_if_under_quota(state: &mut State, m: usize, task: Task) -> bool {
    if state.members.count[m] >= state.active_quota {
        return false;
    }
    let p = state.members.process[m];
    let count = state.processes[p].add_task(&mut state.members, m, task, true);
    state.reached_active(count);
    state.reached_total(count);
    true
}
