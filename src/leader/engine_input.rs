//! The leader's second stage: the task assignor's input from the aggregated clients, the tasks
//! and the changelog end offsets (step 3 of [`assign`](super::assign())).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use super::aggregate::Members;
use super::input::{ChangelogEndOffsets, LeaderInput, RebalanceSnapshot};
use super::tasks::{ClusterMetadata, Tasks};
use crate::engine::{AssignmentInput, ClientInput, PreviousRebalance, RackAwareStrategy, TaskPartitions};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId, TopicPartition, UNKNOWN_OFFSET_SUM, end_offset_sum};

/// What the task assignor gets, and what the later stages need from building it.
pub(crate) struct EngineInput {
    /// The task assignor's input.
    pub(crate) input: AssignmentInput,
    /// Each stateful task's changelog end-offset sum for the thread split's lags
    /// ([`UNKNOWN_OFFSET_SUM`] for all when the end offsets are unavailable).
    pub(crate) lag_ends: BTreeMap<TaskId, i64>,
    /// Each client's previous standby tasks: reported offset sums not owned as active.
    pub(crate) previous_standby: BTreeMap<ProcessId, BTreeSet<TaskId>>,
    /// What the next rebalance gets as [`LeaderInput::previous_rebalance`].
    pub(crate) snapshot: RebalanceSnapshot,
}

impl EngineInput {
    /// Builds the task assignor's input for `members` over `tasks`.
    pub(crate) fn build(input: &LeaderInput<'_>, tasks: &Tasks, members: &Members) -> Self {
        // End-offset sums of the stateful tasks (None: unavailable).
        let end_sums: Option<BTreeMap<TaskId, i64>> = match input.end_offsets {
            ChangelogEndOffsets::Unavailable => None,
            ChangelogEndOffsets::Available(offsets) => tasks
                .changelog_partitions_for_task
                .iter()
                .filter(|(_, parts)| !parts.is_empty())
                .map(|(task, parts)| {
                    let ends: Option<Vec<i64>> = parts.iter().map(|p| offsets.get(p).copied()).collect();
                    ends.map(|e| (task.clone(), end_offset_sum(e)))
                })
                .collect(),
        };
        let stateful: BTreeSet<TaskId> = tasks.stateful_tasks().cloned().collect();
        let lag_ends: BTreeMap<TaskId, i64> = match &end_sums {
            Some(sums) => sums.clone(),
            None => stateful.iter().map(|t| (t.clone(), UNKNOWN_OFFSET_SUM)).collect(),
        };
        // Looked up once per owned partition; its order does not matter.
        let task_for_partition: FxHashMap<&TopicPartition, &TaskId> =
            tasks.partitions_for_task.iter().flat_map(|(task, parts)| parts.iter().map(move |p| (p, task))).collect();

        let mut engine_input = AssignmentInput::new().with_configs(input.config.assignment.clone());
        engine_input.stateful_tasks = stateful;
        engine_input.stateless_tasks = tasks.stateless_tasks().cloned().collect();
        engine_input.changelog_end_offset_sums = end_sums;
        if input.config.assignment.rack_aware_assignment_strategy != RackAwareStrategy::None {
            engine_input.task_partitions = task_partitions(tasks, input.metadata);
        }
        let mut previous_standby: BTreeMap<ProcessId, BTreeSet<TaskId>> = BTreeMap::new();
        for (pid, client) in &members.clients {
            let owned_active: BTreeSet<TaskId> =
                client.owned.keys().filter_map(|p| task_for_partition.get(p).map(|&t| t.clone())).collect();
            let standby: BTreeSet<TaskId> = client
                .offset_sums
                .iter()
                .filter(|(t, s)| !owned_active.contains(*t) && **s != LATEST_OFFSET)
                .map(|(t, _)| t.clone())
                .collect();
            previous_standby.insert(*pid, standby);
            let capacity = u32::try_from(client.consumers.len()).unwrap_or(u32::MAX);
            let mut c = ClientInput::new(*pid, capacity)
                .with_task_offset_sums(client.offset_sums.clone())
                .with_owned_active_tasks(owned_active)
                .with_client_tags(client.tags.clone());
            if let Some(rack) = &client.rack {
                c = c.with_rack_id(rack.clone());
            }
            engine_input = engine_input.with_client(c);
        }

        if let Some(previous) = input.previous_rebalance {
            engine_input = engine_input.with_previous_rebalance(previous.as_previous(input.now_ms));
        }
        let snapshot = RebalanceSnapshot {
            at_ms: input.now_ms,
            sums: PreviousRebalance {
                elapsed_ms: 0,
                changelog_end_offset_sums: engine_input.changelog_end_offset_sums.clone().unwrap_or_default(),
                task_offset_sums: engine_input.clients.iter().map(|c| (c.process_id, c.task_offset_sums.clone())).collect(),
            },
        };
        Self { input: engine_input, lag_ends, previous_standby, snapshot }
    }
}

/// Every task's source and changelog partitions with their replica racks, for the rack-aware
/// optimiser; a partition with unknown racks gets an empty set, which keeps the optimiser off.
fn task_partitions(tasks: &Tasks, metadata: &ClusterMetadata) -> BTreeMap<TaskId, TaskPartitions> {
    let racks = |parts: Option<&Vec<TopicPartition>>| -> Vec<BTreeSet<String>> {
        parts
            .into_iter()
            .flatten()
            .map(|tp| {
                let replicas = usize::try_from(tp.partition)
                    .ok()
                    .and_then(|p| metadata.racks.get(&*tp.topic)?.get(p))
                    .filter(|replicas| !replicas.is_empty() && replicas.iter().all(|r| !r.is_empty()));
                replicas.map(|r| r.iter().cloned().collect()).unwrap_or_default()
            })
            .collect()
    };
    tasks
        .partitions_for_task
        .iter()
        .map(|(task, inputs)| {
            let mut partitions = TaskPartitions::new(Vec::<Vec<String>>::new());
            partitions.input = racks(Some(inputs));
            partitions.changelog = racks(tasks.changelog_partitions_for_task.get(task));
            (task.clone(), partitions)
        })
        .collect()
}
