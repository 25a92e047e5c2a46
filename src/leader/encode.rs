//! The leader's last stages: the host maps of the target assignment, each client's tasks over
//! its consumers, and every member's `AssignmentInfo` in its envelope (steps 4 to 6 of
//! [`assign`](super::assign())); and Kafka's error assignment.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use super::aggregate::Members;
use super::engine_input::EngineInput;
use super::in_turn::in_turn;
use super::input::LeaderInput;
use super::java_order::{
    JavaTaskPartitions, java_client_order, java_host_maps, java_host_maps_form, java_partitions_for_task, java_standby_tasks,
};
use super::output::{AssignmentReport, GroupAssignment, LeaderError};
use super::tasks::Tasks;
use super::threads::{ClientHistory, ClientTasks, MemberAssignment, assign_tasks_to_threads, build_member_assignments};
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
    threads: usize,
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
        (active_hosts, standby_hosts) = java_host_maps(hosted, java_parts, threads);
    }
    java_host_maps_form(members.min_used, &active_hosts, &standby_hosts)
}

/// Splits each client's tasks over its consumers and encodes every member's assignment, the
/// excluded members' empty ones included; fills `report`'s member assignments and infos.
///
/// Large groups are encoded on several threads (see [`LeaderInput::threads`]): the clients are
/// cut into runs that the threads take in turn, and the runs are joined in client order, so the
/// bytes, the report and the first error are those of one thread.
///
/// The host maps are written once, and every member's buffer is allocated here, on the calling
/// thread, with room for the member (see [`member_room`]). A buffer allocated on a spawned
/// thread comes from that thread's allocator arena, which gives the memory back to the system
/// when the bytes are dropped, so the next assignment would fault it all in again (about
/// 12,000 page faults, the encoding's whole gain from a second core, at 1,000 members).
pub(crate) fn encode_members(
    input: &LeaderInput<'_>,
    tasks: &Tasks,
    members: &Members,
    engine: &EngineInput,
    assignment: &Assignment,
    report: &mut AssignmentReport,
) -> Result<BTreeMap<String, Vec<u8>>, LeaderError> {
    let java_parts = java_partitions_for_task(input.topology, tasks);
    let consumers = |ca: &ClientAssignment| members.clients[&ca.process_id].consumers.len();
    let threads = thread_count(assignment.clients.iter().map(consumers).sum(), input.threads);
    let host_maps = Arc::new(host_maps(members, assignment, &java_parts, threads));
    let mut template = AssignmentInfo::new(members.min_used);
    template.host_maps = host_maps.clone();
    // Maps that cannot be written fail each member's encoding, in order, as on one thread.
    let shared = SharedHostMaps::of(&template).unwrap_or_default();
    let group =
        Group { input, tasks, members, engine, assignment, java_parts: &java_parts, host_maps: &host_maps, shared: &shared };
    // A few runs per thread, taken in turn: a thread that is slowed takes fewer of them.
    let runs = client_runs(&assignment.clients, consumers, if threads > 1 { threads * RUNS_PER_THREAD } else { 1 });
    let task_rooms = task_rooms(&tasks.partitions_for_task);
    let buffers: Vec<Mutex<Vec<Vec<u8>>>> = runs
        .iter()
        .map(|run| {
            let mut buffers = Vec::new();
            for ca in run.iter() {
                let room = shared.len() + member_room(ca, &task_rooms);
                buffers.extend((0..consumers(ca)).map(|_| Vec::with_capacity(room)));
            }
            Mutex::new(buffers)
        })
        .collect();
    let encoded = in_turn(threads, runs.len(), |i| {
        let buffers = std::mem::take(&mut *buffers[i].lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        group.encode_clients(runs[i], buffers)
    });
    let mut out = BTreeMap::new();
    for run in encoded {
        let run = run?;
        out.extend(run.bytes);
        report.infos.extend(run.infos);
        report.member_assignments.extend(run.assignments);
    }
    let mut shared = SharedHostMaps::default();
    let deadline = group.followup_deadline();
    for (member, process_id) in &members.excluded {
        let mut info = AssignmentInfo::new(members.min_used);
        info.host_maps = host_maps.clone();
        if members.min_used >= 3 {
            info = info.with_commonly_supported_version(members.min_supported);
        }
        if members.min_used >= 7 && assignment.followup.probing_rebalance_needed && *process_id == input.leader_process_id {
            info = info.with_next_rebalance(NextRebalance::at(deadline));
        }
        out.insert(member.clone(), encode(member, &info, &[], &mut shared, Vec::new())?);
        report.infos.insert(member.clone(), info);
    }
    Ok(out)
}

/// The fewest members a thread of [`encode_members`] is given: below that, starting it costs
/// more than it saves.
const MIN_MEMBERS_PER_THREAD: usize = 32;

/// The runs of clients per thread of [`encode_members`].
const RUNS_PER_THREAD: usize = 4;

/// The threads [`encode_members`] uses for `members` members when at most `threads` are asked
/// for (`None`: the machine's parallelism): each takes at least [`MIN_MEMBERS_PER_THREAD`].
fn thread_count(members: usize, threads: Option<usize>) -> usize {
    let most = members / MIN_MEMBERS_PER_THREAD;
    if most < 2 {
        return 1;
    }
    let asked = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    asked.clamp(1, most)
}

/// `clients` cut into at most `n` runs, in order, of about equal numbers of members
/// (`consumers` of each client); always at least one run.
fn client_runs(clients: &[ClientAssignment], consumers: impl Fn(&ClientAssignment) -> usize, n: usize) -> Vec<&[ClientAssignment]> {
    let total: usize = clients.iter().map(&consumers).sum();
    let mut runs = Vec::with_capacity(n);
    let (mut start, mut seen) = (0, 0);
    for (i, ca) in clients.iter().enumerate() {
        seen += consumers(ca);
        // The run ends once it holds its share of the members.
        if seen * n >= total * (runs.len() + 1) && runs.len() + 1 < n {
            runs.push(&clients[start..=i]);
            start = i + 1;
        }
    }
    if start < clients.len() || runs.is_empty() {
        runs.push(&clients[start..]);
    }
    runs
}

/// A sub-topology (of a named topology) and the most bytes one of its tasks takes in a member's
/// assignment: its task id and its partitions (in the envelope for an active task, in the
/// standby map for a standby), with a topic name each at most.
type TaskRooms<'t> = BTreeMap<(i32, Option<&'t str>), usize>;

/// The [`TaskRooms`] of these tasks.
fn task_rooms(partitions_for_task: &BTreeMap<TaskId, Vec<TopicPartition>>) -> TaskRooms<'_> {
    let mut rooms = TaskRooms::new();
    for (t, parts) in partitions_for_task {
        let room = task_id_room(t) + parts.iter().map(|p| 10 + p.topic.len()).sum::<usize>();
        let most = rooms.entry((t.subtopology, t.topology.as_deref())).or_insert(0);
        *most = room.max(*most);
    }
    rooms
}

/// The most bytes `task`'s id takes.
fn task_id_room(task: &TaskId) -> usize {
    12 + task.topology.as_ref().map_or(0, |name| 4 + 2 * name.len())
}

/// An upper bound of the bytes a member of client `ca` takes beside the host maps: the member
/// gets some of the client's tasks.
fn member_room(ca: &ClientAssignment, rooms: &TaskRooms<'_>) -> usize {
    // Versions, counts, lengths, the error code and `nextRebalanceMs`.
    const FIXED: usize = 64;
    // A task the topology does not have has no partitions either.
    let task = |t: &TaskId| rooms.get(&(t.subtopology, t.topology.as_deref())).copied().unwrap_or_else(|| task_id_room(t));
    FIXED + ca.active_tasks.iter().chain(&ca.standby_tasks).map(task).sum::<usize>()
}

/// What [`encode_members`] reads, shared by its threads.
struct Group<'g, 'i> {
    input: &'g LeaderInput<'i>,
    tasks: &'g Tasks,
    members: &'g Members,
    engine: &'g EngineInput,
    assignment: &'g Assignment,
    java_parts: &'g JavaTaskPartitions<'g>,
    host_maps: &'g Arc<HostMaps>,
    /// `host_maps` written, when they could be.
    shared: &'g SharedHostMaps,
}

/// A run of clients' members, in order: their bytes, `AssignmentInfo`s and contents.
#[derive(Default)]
struct Encoded {
    bytes: Vec<(String, Vec<u8>)>,
    infos: Vec<(String, AssignmentInfo)>,
    assignments: Vec<MemberAssignment>,
}

impl Group<'_, '_> {
    /// The leader's client's follow-up deadline: `now +` the assignor's follow-up interval
    /// (`probing.rebalance.interval.ms` for Kafka's assignors, the predicted catch-up time for
    /// the optimized one).
    fn followup_deadline(&self) -> i64 {
        self.input.now_ms.wrapping_add(self.assignment.followup.probing_rebalance_interval_ms)
    }

    /// Splits each of `clients`' tasks over its consumers and encodes their assignments, into
    /// `buffers` while they last.
    fn encode_clients(&self, clients: &[ClientAssignment], mut buffers: Vec<Vec<u8>>) -> Result<Encoded, LeaderError> {
        let (min_used, min_supported) = (self.members.min_used, self.members.min_supported);
        let mut shared = self.shared.clone();
        let mut done = Encoded::default();
        for ca in clients {
            let client = &self.members.clients[&ca.process_id];
            // The thread split reads the lags of the client's active tasks (which of them are
            // stateful) and of the tasks its consumers reported, so only those are computed.
            let wanted: BTreeSet<&TaskId> = ca.active_tasks.iter().chain(client.consumer_tasks.values().flatten()).collect();
            let lags = wanted.into_iter().filter_map(|t| {
                let end = *self.engine.lag_ends.get(t)?;
                Some((t.clone(), TaskLag::compute(client.offset_sums.get(t).copied(), end).0))
            });
            let mut client_tasks = ClientTasks::new(client.consumers.iter().cloned())
                .with_active(ca.active_tasks.iter().cloned())
                .with_standby(ca.standby_tasks.iter().cloned())
                .with_lags(lags);
            client_tasks.previous_tasks = client.consumer_tasks.clone();
            let threads = assign_tasks_to_threads(&client_tasks)?;
            let mut history = ClientHistory::new()
                .with_previous_standby_tasks(self.engine.previous_standby[&ca.process_id].iter().cloned());
            history.owned_partitions = client.owned.clone();
            if self.assignment.followup.probing_rebalance_needed && ca.process_id == self.input.leader_process_id {
                history = history.with_followup_deadline(self.followup_deadline());
            }
            for m in build_member_assignments(&threads, self.tasks, &history, &self.members.all_owned)? {
                let mut info = AssignmentInfo::new(min_used).with_active_tasks(m.active_tasks.clone());
                let standby_order = threads.0.get(&m.consumer).map(|t| t.standby.as_slice()).unwrap_or_default();
                info.standby_tasks = java_standby_tasks(standby_order, &m.standby_tasks, self.java_parts);
                info.host_maps = self.host_maps.clone();
                if min_used >= 3 {
                    info = info.with_commonly_supported_version(min_supported);
                }
                if min_used >= 7 {
                    info = info.with_next_rebalance(m.next_rebalance);
                }
                let buf = buffers.pop().unwrap_or_default();
                done.bytes.push((m.consumer.clone(), encode(&m.consumer, &info, &m.active_partitions, &mut shared, buf)?));
                done.infos.push((m.consumer.clone(), info));
                done.assignments.push(m);
            }
        }
        Ok(done)
    }
}

/// One member's `AssignmentInfo` in its `ConsumerProtocolAssignment` envelope, in `buf`.
/// The host maps, the same for every member, are written once (`shared`).
fn encode(
    member: &str,
    info: &AssignmentInfo,
    partitions: &[TopicPartition],
    shared: &mut SharedHostMaps,
    buf: Vec<u8>,
) -> Result<Vec<u8>, LeaderError> {
    let encode_err = |source| LeaderError::Encode { member: member.to_owned(), source };
    AssignmentEnvelope::encode_with_info_onto(partitions, info, shared, buf).map_err(encode_err)
}

/// Every member gets Kafka's error assignment with `code`.
pub(crate) fn error_assignment(
    input: &LeaderInput<'_>,
    mut report: AssignmentReport,
    code: AssignorError,
    why: String,
) -> Result<GroupAssignment, LeaderError> {
    let info = error_info(code);
    let envelope = encode("", &info, &[], &mut SharedHostMaps::default(), Vec::new())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leader::aggregate::aggregate_members;
    use crate::leader::testdata::large_group;

    #[test]
    fn client_runs_are_in_order_and_share_the_members() {
        // 40 processes of 4 threads: 160 members.
        let g = large_group(40, 4, 200, 1);
        let input = LeaderInput::new(&g.members, &g.topology, &g.metadata, &g.end_offsets, g.leader).with_config(&g.config);
        let members = aggregate_members(&input).unwrap();
        let clients: Vec<ClientAssignment> = members
            .clients
            .keys()
            .map(|&process_id| ClientAssignment {
                process_id,
                active_tasks: Vec::new(),
                standby_tasks: Vec::new(),
                warmup_tasks: Vec::new(),
                spare_tasks: Vec::new(),
            })
            .collect();
        let consumers = |ca: &ClientAssignment| members.clients[&ca.process_id].consumers.len();
        for (n, expected) in [(1, vec![40]), (2, vec![20, 20]), (3, vec![14, 13, 13]), (5, vec![8; 5])] {
            let runs = client_runs(&clients, consumers, n);
            assert_eq!(runs.iter().map(|r| r.len()).collect::<Vec<_>>(), expected, "{n}");
            let joined: Vec<ProcessId> = runs.iter().flat_map(|r| r.iter().map(|ca| ca.process_id)).collect();
            assert_eq!(joined, members.clients.keys().copied().collect::<Vec<_>>());
        }
        assert_eq!(client_runs(&clients[..3], consumers, 8).len(), 3);
        assert_eq!(client_runs(&[], consumers, 8).len(), 1);
    }

    #[test]
    fn every_member_fits_the_room_allocated_for_it() {
        for (processes, threads, partitions, standbys) in [(40, 4, 200, 1), (7, 3, 500, 2), (3, 1, 40, 0)] {
            let g = large_group(processes, threads, partitions, standbys);
            let input = LeaderInput::new(&g.members, &g.topology, &g.metadata, &g.end_offsets, g.leader).with_config(&g.config);
            let out = crate::leader::assign(&input).unwrap();
            let members = aggregate_members(&input).unwrap();
            let tasks = Tasks::build(&g.topology, &g.metadata).unwrap();
            let rooms = task_rooms(&tasks.partitions_for_task);
            let host_bytes = SharedHostMaps::of(out.report.infos.values().next().unwrap()).unwrap().len();
            assert!(host_bytes > 0);
            let assignment = out.report.assignment.as_ref().unwrap();
            for ca in &assignment.clients {
                let room = host_bytes + member_room(ca, &rooms);
                for consumer in &members.clients[&ca.process_id].consumers {
                    let len = out.members[consumer].len();
                    assert!(len <= room, "{consumer}: {len} bytes, room for {room}");
                }
            }
        }
    }

    #[test]
    fn each_thread_takes_at_least_32_members() {
        assert_eq!(thread_count(160, Some(1)), 1);
        assert_eq!(thread_count(160, Some(3)), 3);
        assert_eq!(thread_count(160, Some(9)), 5);
        assert_eq!(thread_count(63, Some(8)), 1);
        assert_eq!(thread_count(64, Some(8)), 2);
        assert_eq!(thread_count(0, Some(8)), 1);
        assert!(thread_count(10_000, None) >= 1);
    }
}
