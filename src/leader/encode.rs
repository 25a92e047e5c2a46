//! The leader's last stages: the host maps of the target assignment, each client's tasks over
//! its consumers, and every member's `AssignmentInfo` in its envelope (steps 4 to 6 of
//! [`assign`](super::assign())); and Kafka's error assignment.

use std::collections::{BTreeMap, BTreeSet};

use super::aggregate::Members;
use super::engine_input::EngineInput;
use super::input::LeaderInput;
use super::java_order::{
    JavaTaskPartitions, java_client_order, java_host_maps, java_host_maps_form, java_partitions_for_task, java_standby_tasks,
};
use super::output::{AssignmentReport, GroupAssignment, LeaderError};
use super::tasks::Tasks;
use super::threads::{ClientHistory, ClientTasks, assign_tasks_to_threads, build_member_assignments};
use crate::engine::{Assignment, ClientAssignment, TaskLag};
use crate::wire::{
    AssignmentEnvelope, AssignmentInfo, AssignorError, HostMaps, NextRebalance, ProcessId, SharedHostMaps, TaskId, TopicPartition,
};

/// The host maps every member gets: the input partitions of each client's target active and
/// standby tasks, in Java's orders (empty below version 2, and for clients without an endpoint).
pub(crate) fn host_maps(
    members: &Members,
    assignment: &Assignment,
    java_parts: &JavaTaskPartitions<'_>,
) -> HostMaps {
    let (mut active_hosts, mut standby_hosts) = (Vec::new(), Vec::new());
    if members.min_used >= 2 {
        let by_process: BTreeMap<ProcessId, &ClientAssignment> =
            assignment.clients.iter().map(|ca| (ca.process_id, ca)).collect();
        let hosted = java_client_order(members.visited_clients.iter().copied()).into_iter().filter_map(|pid| {
            let host = members.clients.get(&pid)?.endpoint.as_ref()?;
            let (active, standby) =
                by_process.get(&pid).map_or((&[][..], &[][..]), |ca| (ca.active_tasks.as_slice(), ca.standby_tasks.as_slice()));
            Some((host, active, standby))
        });
        (active_hosts, standby_hosts) = java_host_maps(hosted, java_parts);
    }
    java_host_maps_form(members.min_used, &active_hosts, &standby_hosts)
}

/// Splits each client's tasks over its consumers and encodes every member's assignment, the
/// excluded members' empty ones included; fills `report`'s member assignments and infos.
pub(crate) fn encode_members(
    input: &LeaderInput<'_>,
    tasks: &Tasks,
    members: &Members,
    engine: &EngineInput,
    assignment: &Assignment,
    report: &mut AssignmentReport,
) -> Result<BTreeMap<String, Vec<u8>>, LeaderError> {
    let (min_used, min_supported) = (members.min_used, members.min_supported);
    let java_parts = java_partitions_for_task(input.topology, tasks);
    let host_maps = std::sync::Arc::new(host_maps(members, assignment, &java_parts));
    let mut shared = SharedHostMaps::default();
    // The assignor's follow-up interval: `probing.rebalance.interval.ms` for Kafka's assignors,
    // the predicted catch-up time for the optimized one.
    let deadline = input.now_ms.wrapping_add(assignment.followup.probing_rebalance_interval_ms);
    let mut out = BTreeMap::new();
    for ca in &assignment.clients {
        let client = &members.clients[&ca.process_id];
        // The thread split reads the lags of the client's active tasks (which of them are
        // stateful) and of the tasks its consumers reported, so only those are computed.
        let wanted: BTreeSet<&TaskId> = ca.active_tasks.iter().chain(client.consumer_tasks.values().flatten()).collect();
        let lags = wanted.into_iter().filter_map(|t| {
            let end = *engine.lag_ends.get(t)?;
            Some((t.clone(), TaskLag::compute(client.offset_sums.get(t).copied(), end).0))
        });
        let mut client_tasks = ClientTasks::new(client.consumers.iter().cloned())
            .with_active(ca.active_tasks.iter().cloned())
            .with_standby(ca.standby_tasks.iter().cloned())
            .with_lags(lags);
        client_tasks.previous_tasks = client.consumer_tasks.clone();
        let threads = assign_tasks_to_threads(&client_tasks)?;
        let mut history =
            ClientHistory::new().with_previous_standby_tasks(engine.previous_standby[&ca.process_id].iter().cloned());
        history.owned_partitions = client.owned.clone();
        if assignment.followup.probing_rebalance_needed && ca.process_id == input.leader_process_id {
            history = history.with_followup_deadline(deadline);
        }
        for m in build_member_assignments(&threads, tasks, &history, &members.all_owned)? {
            let mut info = AssignmentInfo::new(min_used).with_active_tasks(m.active_tasks.clone());
            let standby_order = threads.0.get(&m.consumer).map(|t| t.standby.as_slice()).unwrap_or_default();
            info.standby_tasks = java_standby_tasks(standby_order, &m.standby_tasks, &java_parts);
            info.host_maps = host_maps.clone();
            if min_used >= 3 {
                info = info.with_commonly_supported_version(min_supported);
            }
            if min_used >= 7 {
                info = info.with_next_rebalance(m.next_rebalance);
            }
            out.insert(m.consumer.clone(), encode(&m.consumer, &info, &m.active_partitions, &mut shared)?);
            report.infos.insert(m.consumer.clone(), info);
            report.member_assignments.push(m);
        }
    }
    for (member, process_id) in &members.excluded {
        let mut info = AssignmentInfo::new(min_used);
        info.host_maps = host_maps.clone();
        if min_used >= 3 {
            info = info.with_commonly_supported_version(min_supported);
        }
        if min_used >= 7 && assignment.followup.probing_rebalance_needed && *process_id == input.leader_process_id {
            info = info.with_next_rebalance(NextRebalance::at(deadline));
        }
        out.insert(member.clone(), encode(member, &info, &[], &mut shared)?);
        report.infos.insert(member.clone(), info);
    }
    Ok(out)
}

/// One member's `AssignmentInfo` in its `ConsumerProtocolAssignment` envelope.
/// The host maps, the same for every member, are written once (`shared`).
fn encode(member: &str, info: &AssignmentInfo, partitions: &[TopicPartition], shared: &mut SharedHostMaps) -> Result<Vec<u8>, LeaderError> {
    let encode_err = |source| LeaderError::Encode { member: member.to_owned(), source };
    AssignmentEnvelope::encode_with_info(partitions, info, shared).map_err(encode_err)
}

/// Every member gets Kafka's error assignment with `code`.
pub(crate) fn error_assignment(
    input: &LeaderInput<'_>,
    mut report: AssignmentReport,
    code: AssignorError,
    why: String,
) -> Result<GroupAssignment, LeaderError> {
    let info = error_info(code);
    let envelope = encode("", &info, &[], &mut SharedHostMaps::default())?;
    let mut members = BTreeMap::new();
    for m in input.members {
        members.insert(m.member_id.clone(), envelope.clone());
        report.infos.insert(m.member_id.clone(), info.clone());
    }
    report.error = Some((code, why));
    Ok(GroupAssignment { members, report })
}

/// The `AssignmentInfo` of Kafka's error assignment: version 11, nothing assigned, `code`, no
/// follow-up.
pub fn error_info(code: AssignorError) -> AssignmentInfo {
    AssignmentInfo::error(code).with_next_rebalance(NextRebalance::NONE)
}
