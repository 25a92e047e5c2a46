//! A host's request → the engine input `assign --input` reads: KIP-924's lags turned back into
//! offset sums and end-offset sums that give the engine the same lags (see `docs/plugin.md`).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use super::PluginError;
use super::request::Request;
use crate::engine::{AssignmentConfigs, AssignmentInput, ClientInput, InputError, PreviousRebalance, TaskPartitions};
use crate::wire::{LATEST_OFFSET, TaskId, UNKNOWN_OFFSET_SUM};

/// Where a task of the request is: stateful (its index among the stateful tasks) or stateless.
#[derive(Clone, Copy)]
enum Slot {
    Stateful(usize),
    Stateless,
}

/// The engine input for a request, with the previous rebalance's snapshot when there is one.
pub(super) fn engine_input(request: &Request, previous: Option<PreviousRebalance>) -> Result<AssignmentInput, PluginError> {
    let configs = AssignmentConfigs::default()
        .with_overrides(request.configs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(PluginError::Config)?;
    // Every task of the request by id: whether it is stateful and its place among those of its
    // kind. Keyed by value (KIP-924 has no named topologies), so a lookup reads no task record.
    let mut index: FxHashMap<(i32, i32), Slot> = FxHashMap::with_capacity_and_hasher(request.tasks.len(), Default::default());
    let key = |task: &TaskId| (task.subtopology, task.partition);
    let (mut stateful, mut stateless) = (Vec::new(), Vec::new());
    let mut task_partitions = BTreeMap::new();
    for task in &request.tasks {
        if let Some(topology) = &task.id.topology {
            return Err(PluginError::Invalid(format!("task {} belongs to the named topology '{topology}'; named topologies are not supported", task.id)));
        }
        let slot = match task.stateful {
            true => Slot::Stateful(stateful.len()),
            false => Slot::Stateless,
        };
        if index.insert(key(&task.id), slot).is_some() {
            return Err(PluginError::Input(InputError::DuplicateTask(task.id.clone())));
        }
        match task.stateful {
            true => stateful.push(task),
            false => stateless.push(&task.id),
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
    let stateful_slot = |task: &TaskId| match task.topology.is_none().then(|| index.get(&key(task))).flatten() {
        Some(Slot::Stateful(k)) => Some(*k),
        _ => None,
    };
    let lags_known = request.clients.iter().all(|c| c.lags.is_some());
    // Each stateful task's end-offset sum: the lag of a client without state for it, else the
    // largest lag of those that reported it (see docs/plugin.md).
    let mut ends: Vec<i64> = stateful.iter().map(|t| t.unreported_lag.unwrap_or(0)).collect();
    let mut lags_of = Vec::with_capacity(request.clients.len());
    for client in &request.clients {
        // The client's lags by stateful-task index (the last one given for a task counts).
        let mut lags: Vec<(usize, i64)> = Vec::with_capacity(client.lags.as_ref().map_or(0, Vec::len));
        for (task, lag) in client.lags.iter().flatten() {
            let Some(k) = stateful_slot(task) else { continue };
            if *lag < 0 && *lag != LATEST_OFFSET && *lag != UNKNOWN_OFFSET_SUM {
                return Err(PluginError::Invalid(format!("client {} reports lag {lag} on task {task}", client.process_id)));
            }
            ends[k] = ends[k].max(*lag);
            lags.push((k, *lag));
        }
        lags.sort_by_key(|&(k, _)| k);
        lags.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 = later.1;
            }
            same
        });
        lags_of.push(lags);
    }
    let mut clients = Vec::with_capacity(request.clients.len());
    for (client, lags) in request.clients.iter().zip(&lags_of) {
        let capacity = u32::try_from(client.threads)
            .map_err(|_| PluginError::Invalid(format!("client {} has {} stream threads", client.process_id, client.threads)))?;
        // One index lookup per previous task: the active ones of this rebalance are its owned
        // tasks, the stateful ones among all get an offset sum.
        let slot = |task: &TaskId| task.topology.is_none().then(|| index.get(&key(task)).copied()).flatten();
        let mut owned = Vec::with_capacity(client.previous_active.len());
        let mut sums = Vec::with_capacity(client.previous_active.len() + client.previous_standby.len());
        let offset_sum = |k: usize, active: bool| match lags_known {
            // Without lags only the previous tasks matter (Kafka's fallback assignor).
            false => Some(if active { LATEST_OFFSET } else { 0 }),
            true => match lags.binary_search_by_key(&k, |&(k, _)| k).map(|at| lags[at].1) {
                Ok(lag) if lag == LATEST_OFFSET || lag == UNKNOWN_OFFSET_SUM => Some(lag),
                Ok(lag) => Some(ends[k] - lag),
                Err(_) => None,
            },
        };
        for task in &client.previous_active {
            let Some(found) = slot(task) else { continue };
            owned.push(task.clone());
            if let Slot::Stateful(k) = found {
                sums.extend(offset_sum(k, true).map(|sum| (task.clone(), sum)));
            }
        }
        owned.sort_unstable();
        for task in &client.previous_standby {
            if let Some(Slot::Stateful(k)) = slot(task) {
                let active = !lags_known && owned.binary_search(task).is_ok();
                sums.extend(offset_sum(k, active).map(|sum| (task.clone(), sum)));
            }
        }
        let owned: BTreeSet<TaskId> = owned.into_iter().collect();
        let sums: BTreeMap<TaskId, i64> = sums.into_iter().collect();
        let mut input = ClientInput::new(client.process_id, capacity).with_task_offset_sums(sums).with_owned_active_tasks(owned);
        input.rack_id = client.rack_id.clone();
        input.client_tags = client.client_tags.iter().cloned().collect();
        clients.push(input);
    }
    let stateless: BTreeSet<TaskId> = stateless.into_iter().cloned().collect();
    let mut input = AssignmentInput::new().with_configs(configs);
    input.stateless_tasks = stateless;
    input.clients = clients;
    if lags_known {
        let ends: BTreeMap<TaskId, i64> = stateful.iter().zip(ends).map(|(t, end)| (t.id.clone(), end)).collect();
        input.stateful_tasks = ends.keys().cloned().collect();
        input.changelog_end_offset_sums = Some(ends);
    } else {
        input.stateful_tasks = stateful.iter().map(|t| t.id.clone()).collect();
        input = input.with_end_offsets_unavailable();
    }
    input.task_partitions = task_partitions;
    input.previous_rebalance = previous;
    Ok(input)
}
