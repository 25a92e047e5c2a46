//! A host's request → the engine input `assign --input` reads: KIP-924's lags turned back into
//! offset sums and end-offset sums that give the engine the same lags (see `docs/plugin.md`).

use std::collections::{BTreeMap, BTreeSet};

use super::PluginError;
use super::request::Request;
use crate::engine::{AssignmentConfigs, AssignmentInput, ClientInput, InputError, PreviousRebalance, TaskPartitions};
use crate::wire::{LATEST_OFFSET, TaskId, UNKNOWN_OFFSET_SUM};

/// The engine input for a request, with the previous rebalance's snapshot when there is one.
pub(super) fn engine_input(request: &Request, previous: Option<PreviousRebalance>) -> Result<AssignmentInput, PluginError> {
    let configs = AssignmentConfigs::default()
        .with_overrides(request.configs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(PluginError::Config)?;
    let mut stateful = BTreeSet::new();
    let mut stateless = BTreeSet::new();
    let mut task_partitions = BTreeMap::new();
    for task in &request.tasks {
        let new = if task.stateful { stateful.insert(task.id.clone()) } else { stateless.insert(task.id.clone()) };
        if !new || (stateful.contains(&task.id) && stateless.contains(&task.id)) {
            return Err(PluginError::Input(InputError::DuplicateTask(task.id.clone())));
        }
        if !task.partitions.is_empty() {
            let racks = |p: &super::request::PartitionRecord| p.racks.iter().flatten().cloned().collect::<BTreeSet<_>>();
            let parts = TaskPartitions {
                input: task.partitions.iter().filter(|p| p.source).map(racks).collect(),
                changelog: task.partitions.iter().filter(|p| p.changelog).map(racks).collect(),
            };
            task_partitions.insert(task.id.clone(), parts);
        }
    }
    let lags_known = request.clients.iter().all(|c| c.lags.is_some());
    // Each stateful task's end-offset sum: the lag of a client without state for it, else the
    // largest lag of those that reported it (see docs/plugin.md).
    let mut ends: BTreeMap<TaskId, i64> =
        request.tasks.iter().filter(|t| t.stateful).map(|t| (t.id.clone(), t.unreported_lag.unwrap_or(0))).collect();
    let mut lags_of = Vec::with_capacity(request.clients.len());
    for client in &request.clients {
        let mut lags = BTreeMap::new();
        for (task, lag) in client.lags.iter().flatten() {
            if !stateful.contains(task) {
                continue;
            }
            if *lag < 0 && *lag != LATEST_OFFSET && *lag != UNKNOWN_OFFSET_SUM {
                return Err(PluginError::Invalid(format!("client {} reports lag {lag} on task {task}", client.process_id)));
            }
            if let Some(end) = ends.get_mut(task) {
                *end = (*end).max(*lag);
            }
            lags.insert(task.clone(), *lag);
        }
        lags_of.push(lags);
    }
    let mut clients = Vec::with_capacity(request.clients.len());
    for (client, lags) in request.clients.iter().zip(&lags_of) {
        let capacity = u32::try_from(client.threads)
            .map_err(|_| PluginError::Invalid(format!("client {} has {} stream threads", client.process_id, client.threads)))?;
        let known = |t: &&TaskId| stateful.contains(*t) || stateless.contains(*t);
        let owned: BTreeSet<TaskId> = client.previous_active.iter().filter(known).cloned().collect();
        let mut sums = BTreeMap::new();
        for task in client.previous_active.iter().chain(&client.previous_standby).filter(|t| stateful.contains(*t)) {
            let sum = if !lags_known {
                // Without lags only the previous tasks matter (Kafka's fallback assignor).
                if owned.contains(task) { LATEST_OFFSET } else { 0 }
            } else {
                match lags.get(task) {
                    Some(&lag) if lag == LATEST_OFFSET || lag == UNKNOWN_OFFSET_SUM => lag,
                    Some(&lag) => ends[task] - lag,
                    None => continue,
                }
            };
            sums.insert(task.clone(), sum);
        }
        let mut input = ClientInput::new(client.process_id, capacity).with_task_offset_sums(sums).with_owned_active_tasks(owned);
        input.rack_id = client.rack_id.clone();
        input.client_tags = client.client_tags.iter().cloned().collect();
        clients.push(input);
    }
    let mut input = AssignmentInput::new().with_configs(configs).with_stateless_tasks(stateless);
    input.clients = clients;
    if lags_known {
        input = input.with_stateful_tasks(ends);
    } else {
        input.stateful_tasks = stateful;
        input = input.with_end_offsets_unavailable();
    }
    input.task_partitions = task_partitions;
    input.previous_rebalance = previous;
    Ok(input)
}
