//! What a KIP-924 host sends for a group, built from an engine input: for this crate's tests and
//! benches (feature `testdata`).

use super::{ClientRecord, Request, TaskRecord};
use crate::engine::{AssignmentInput, ClientInput};
use crate::wire::{LATEST_OFFSET, TaskId, UNKNOWN_OFFSET_SUM};

/// Kafka's `ClientState.computeTaskLags` for one task: the lag of a client with offset sum `sum`
/// (0 when it reported none) on a task whose changelogs end at `end`.
pub fn kafka_lag(sum: Option<i64>, end: i64) -> i64 {
    match sum.unwrap_or(0) {
        s @ (LATEST_OFFSET | UNKNOWN_OFFSET_SUM) => s,
        s if s > end => end,
        s => end - s,
    }
}

/// The request a JVM host sends when Kafka Streams sees `input`: each client's previous active
/// tasks (its owned active tasks and those it reported as running, offset sum `LATEST_OFFSET`),
/// previous standby tasks (the other tasks it reported an offset sum for), and `lagFor` of each of those that is stateful; each stateful task's lag on a client
/// without state for it. `input` must carry end-offset sums.
///
/// # Panics
/// When `input` has no end-offset sums.
pub fn request_for(input: &AssignmentInput, now_ms: i64) -> Request {
    let ends = input.changelog_end_offset_sums.as_ref().expect("an input with end-offset sums");
    let held = |c: &ClientInput, t: &TaskId| c.task_offset_sums.contains_key(t) || c.owned_active_tasks.contains(t);
    let active = |c: &ClientInput, t: &TaskId| c.owned_active_tasks.contains(t) || c.task_offset_sums.get(t) == Some(&LATEST_OFFSET);
    let mut tasks: Vec<TaskRecord> = ends
        .iter()
        .map(|(t, &end)| {
            let task = TaskRecord::new(t.clone(), true);
            if input.clients.iter().any(|c| !held(c, t)) { task.with_unreported_lag(end) } else { task }
        })
        .collect();
    tasks.extend(input.stateless_tasks.iter().map(|t| TaskRecord::new(t.clone(), false)));
    let clients = input
        .clients
        .iter()
        .map(|c| {
            let mut r = ClientRecord::new(c.process_id, c.capacity as i32);
            let reported = c.owned_active_tasks.iter().chain(c.task_offset_sums.keys()).collect::<std::collections::BTreeSet<_>>();
            r.previous_active = reported.iter().filter(|t| active(c, t)).map(|t| (*t).clone()).collect();
            r.previous_standby = reported.iter().filter(|t| !active(c, t)).map(|t| (*t).clone()).collect();
            r.lags = Some(
                ends.iter().filter(|(t, _)| held(c, t)).map(|(t, &end)| (t.clone(), kafka_lag(c.task_offset_sums.get(t).copied(), end))).collect(),
            );
            r
        })
        .collect();
    Request { application_id: "app".into(), now_ms, tasks, clients, configs: vec![], dump: false }
}
