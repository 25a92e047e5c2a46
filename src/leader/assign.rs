//! The group leader's whole assignment, Kafka Streams 4.4.0's `StreamsPartitionAssignor.assign`:
//! JoinGroup subscriptions in, each member's SyncGroup assignment out.
//!
//! 1. Every subscription is decoded. A member whose `SubscriptionInfo` version is newer than
//!    [`LATEST_SUPPORTED_VERSION`] joins one synthetic client, [`FUTURE_PROCESS_ID`], as in Kafka
//!    (which uses a random id there). Other members are grouped by process id. They are visited
//!    in Kafka's order, the iteration order of `ConsumerCoordinator`'s `HashMap` of member ids
//!    filled in JoinGroup order: the first member of a process gives the client its endpoint and
//!    client tags; each member adds one to the capacity, its owned partitions and its task
//!    offset sums (merged per client, later members overriding), so members of one process that
//!    disagree are resolved as Kafka resolves them. The client has a rack only if every member of
//!    the process sent the same `rackId` (Kafka's `validateClientRack`; otherwise rack-aware
//!    assignment stays off). The minimum used version and minimum latest-supported version are
//!    tracked.
//! 2. Error assignments (see [`AssignmentReport::error`]): any subscription with error code
//!    `SHUTDOWN_REQUESTED`; missing source topics (`INCOMPLETE_SOURCE_TOPIC_METADATA`); repartition
//!    topic counts that cannot be derived, a member from the future next to a v1/v2 member, or a
//!    task assignor failure (`ASSIGNMENT_ERROR`). Each is sent as Kafka sends it: an
//!    `AssignmentInfo` at version 11 with nothing assigned, the code, `nextRebalanceMs` = MAX, in an
//!    envelope without partitions.
//! 3. [`Tasks::build`] gives the tasks; each stateful task's changelog end-offset sum comes from
//!    the end offsets given (all unknown, `-3`, when they are unavailable; the engine then falls
//!    back as Kafka does). Previous active tasks come from owned partitions, then from offset sums.
//!    Unless `rack.aware.assignment.strategy` is `none`, every task's partitions go to the engine
//!    with their replica racks from the metadata ([`TaskPartitions`]): the task's source
//!    partitions (input and repartition topics, Kafka's `partitionsForTask`) and its changelog
//!    partitions (`ChangelogTopics.changelogPartionsForTask`, source-topic changelogs included).
//!    A partition whose racks are not in the metadata, or with a replica whose rack is empty, has
//!    unknown racks, and Kafka's `canEnableRackAwareAssignor` (the engine's check) then fails.
//! 4. [`engine::assign`] decides the tasks of each client; [`assign_tasks_to_threads`] and
//!    [`build_member_assignments`] split them over consumers.
//! 5. Host maps (only when the minimum used version is ≥ 2, for clients with an endpoint) hold the
//!    input partitions of each client's target active and standby tasks. Every `AssignmentInfo`
//!    is encoded at the minimum used version with the minimum latest-supported version; fields the
//!    version cannot carry are dropped explicitly (standby host map before v6, `nextRebalanceMs`
//!    before v7), as Java's encoder drops them.
//!
//! The bytes are Java's, not only the content: where Kafka writes a `HashMap` or `HashSet` (the
//! standby task map, the host maps, their partition sets, the v5+ topic dictionary) the leader
//! builds the same collections in the same order and replays their JDK 17 iteration order, down
//! to the order of `clientMetadataMap` (a `HashMap` by process id, filled while walking the
//! `HashMap` of subscriptions by member id) that the host maps are filled in.
//! 6. If the task assignor wants a probing rebalance, the leader's own client gets the deadline
//!    `now +` the assignor's follow-up interval (`probing.rebalance.interval.ms` for Kafka's
//!    assignors; the predicted catch-up time for the optimized one), which goes to its first
//!    consumer without held-back tasks (see [`build_member_assignments`]). The optimized
//!    assignor estimates restore rates from the previous rebalance: pass the last
//!    [`AssignmentReport::snapshot`] as [`LeaderInput::previous_rebalance`] (the
//!    [`StreamsMember`](crate::group::StreamsMember) hook does so when it leads twice in a row).
//!
//! Members are taken in the order given. Kafka takes them in the iteration order of its
//! `HashMap` of subscriptions; the order only matters when members of one process disagree (the
//! first one gives the endpoint and tags; a later one's offset sum for a task replaces an
//! earlier one's). Two clients with the same endpoint share one host map entry, as in Kafka: at
//! the position of the first of them in `clientMetadataMap` order, with the sets of the last.
//!
//! Undecodable subscriptions, invalid endpoints, duplicate client tags and a topology the leader
//! cannot build tasks from are not error assignments in Kafka either: the Java leader throws, and
//! so [`assign`] returns a [`LeaderError`].

use std::collections::{BTreeMap, BTreeSet};

use super::java_order::{
    java_client_order, java_host_maps, java_host_maps_form, java_partitions_for_task, java_standby_tasks, java_subscription_order,
};
use super::tasks::{ClusterMetadata, TaskError, Tasks};
use super::threads::{
    ClientHistory, ClientTasks, MemberAssignment, ThreadError, assign_tasks_to_threads, build_member_assignments,
};
use super::input::{ChangelogEndOffsets, LeaderInput, RebalanceSnapshot};
use crate::engine::{
    self, AssignError, Assignment, AssignmentInput, AssignorKind, ClientInput, PreviousRebalance, RackAwareStrategy,
    TaskLag, TaskPartitions,
};
use crate::wire::{
    AssignmentEnvelope, AssignmentInfo, AssignorError, DecodeError, EARLIEST_PROBEABLE_VERSION, EncodeError, EndpointError,
    HostInfo, LATEST_SUPPORTED_VERSION, NextRebalance, ProcessId, SubscriptionEnvelope, SubscriptionInfo,
    TaskId, TopicPartition, UNKNOWN_OFFSET_SUM, end_offset_sum,
};

/// The process id of the synthetic client that holds every member from the future (Kafka draws
/// a random one per assignor instance; a fixed one keeps the result reproducible).
pub const FUTURE_PROCESS_ID: ProcessId = ProcessId(uuid::Uuid::from_u128(0xffff_ffff_ffff_ffff_ffff_ffff_ffff_fffe));

/// Why the leader could not produce any assignment (Kafka's leader throws in these cases).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderError {
    /// A member id appears twice.
    #[error("member `{0}` appears twice")]
    DuplicateMember(String),
    /// A member's envelope or `SubscriptionInfo` does not decode.
    #[error("subscription of member `{member}`: {source}")]
    Decode {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: DecodeError,
    },
    /// A member's envelope has no user data.
    #[error("subscription of member `{0}` has no user data")]
    NoUserData(String),
    /// A member's `application.server` is invalid.
    #[error("endpoint of member `{member}`: {source}")]
    Endpoint {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: EndpointError,
    },
    /// A member's client tags repeat a key.
    #[error("member `{member}` repeats client tag `{key}`")]
    DuplicateClientTag {
        /// The member.
        member: String,
        /// The key.
        key: String,
    },
    /// The topology and metadata do not give tasks (beyond the cases Kafka answers with an error
    /// assignment).
    #[error(transparent)]
    Tasks(TaskError),
    /// The thread split failed.
    #[error(transparent)]
    Threads(#[from] ThreadError),
    /// An assignment cannot be encoded at the negotiated version.
    #[error("assignment of member `{member}`: {source}")]
    Encode {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: EncodeError,
    },
}

/// The leader's answer: each member's SyncGroup assignment, and what went into it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GroupAssignment {
    /// Member id → its `ConsumerProtocolAssignment` bytes.
    pub members: BTreeMap<String, Vec<u8>>,
    /// The typed account.
    pub report: AssignmentReport,
}

/// How the leader came to its answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AssignmentReport {
    /// The minimum `SubscriptionInfo` version used by the members (at most 11): the version
    /// every assignment is encoded at.
    pub min_used_version: i32,
    /// The minimum latest-supported version: the `commonlySupportedVersion` sent.
    pub min_supported_version: i32,
    /// The version of a member from the future, if one joined (the last one seen).
    pub future_version: Option<i32>,
    /// Whether this is a version-probing rebalance.
    pub version_probing: bool,
    /// The clients: process id → its member ids (sorted as Kafka sorts them).
    pub clients: BTreeMap<ProcessId, Vec<String>>,
    /// The error code sent to everyone, and why; `None` for a normal assignment.
    pub error: Option<(AssignorError, String)>,
    /// The task assignor's result (normal assignments only).
    pub assignment: Option<Assignment>,
    /// The assignor that ran.
    pub effective_assignor: Option<AssignorKind>,
    /// What to pass as [`LeaderInput::previous_rebalance`] next time (normal assignments only).
    pub snapshot: Option<RebalanceSnapshot>,
    /// Each member's assignment content (normal assignments only), in member order.
    pub member_assignments: Vec<MemberAssignment>,
    /// The `AssignmentInfo` sent to each member.
    pub infos: BTreeMap<String, AssignmentInfo>,
}

/// One client as the leader aggregates it.
struct Client {
    endpoint: Option<HostInfo>,
    tags: BTreeMap<String, String>,
    /// The rack every member so far sent (`None` once one sent none or another one).
    rack: Option<String>,
    consumers: Vec<String>,
    /// Owned partition → consumer (a later owner replaces an earlier one).
    owned: BTreeMap<TopicPartition, String>,
    offset_sums: BTreeMap<TaskId, i64>,
    consumer_tasks: BTreeMap<String, BTreeSet<TaskId>>,
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

/// Runs the leader's assignment (see the [module docs](self)).
///
/// ```
/// use kstreams_assignor::leader::{assign, ChangelogEndOffsets, ClusterMetadata, JoinMember, LeaderConfig, LeaderInput, Topology};
/// use kstreams_assignor::wire::{AssignmentEnvelope, AssignmentInfo, ProcessId, SubscriptionEnvelope, SubscriptionInfo};
///
/// let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
/// let topology = Topology::from_describe(&text, "wc").unwrap();
/// let metadata = ClusterMetadata::new().with_topic("text-lines", 2);
/// let process = ProcessId::NIL;
/// let members: Vec<JoinMember> = ["t-1", "t-2"]
///     .into_iter()
///     .map(|id| {
///         let info = SubscriptionInfo::new(11, process).with_user_end_point("host-1:8080").encode().unwrap();
///         JoinMember::new(id, SubscriptionEnvelope::new(vec!["text-lines".into()], Some(info)).encode().unwrap())
///     })
///     .collect();
/// let config = LeaderConfig::default();
/// let input = LeaderInput::new(&members, &topology, &metadata, &ChangelogEndOffsets::Unavailable, process)
///     .with_config(&config)
///     .with_now_ms(1_700_000_000_000);
/// let out = assign(&input).unwrap();
/// assert_eq!(out.report.min_used_version, 11);
/// for bytes in out.members.values() {
///     let envelope = AssignmentEnvelope::decode(bytes).unwrap();
///     let info = AssignmentInfo::decode(envelope.user_data.as_deref().unwrap()).unwrap();
///     // Two tasks per sub-topology over two threads: one of each per thread.
///     assert_eq!(envelope.partitions().len(), 2);
///     assert_eq!(info.active_tasks.len(), 2);
/// }
/// ```
pub fn assign(input: &LeaderInput<'_>) -> Result<GroupAssignment, LeaderError> {
    let mut clients: BTreeMap<ProcessId, Client> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut all_owned: BTreeSet<TopicPartition> = BTreeSet::new();
    let mut min_used = LATEST_SUPPORTED_VERSION;
    let mut min_supported = LATEST_SUPPORTED_VERSION;
    let mut future_version = None;
    let mut shutdown = false;
    let mut excluded: Vec<(String, ProcessId)> = Vec::new();
    // The client of each member Kafka visits, in that order (excluded members left out).
    let mut visited_clients: Vec<ProcessId> = Vec::new();
    for member in input.members {
        if !seen.insert(member.member_id.clone()) {
            return Err(LeaderError::DuplicateMember(member.member_id.clone()));
        }
    }

    // Kafka visits the members in its subscriptions map's order: where members of one process
    // disagree, that order decides whose endpoint and tags the client gets and whose offset
    // sums win.
    for k in java_subscription_order(input.members.iter().map(|m| m.member_id.as_str())) {
        let member = &input.members[k];
        let id = &member.member_id;
        let decode_err = |source| LeaderError::Decode { member: id.clone(), source };
        let envelope = SubscriptionEnvelope::decode(&member.subscription).map_err(decode_err)?;
        let user_data = envelope.user_data.as_deref().ok_or_else(|| LeaderError::NoUserData(id.clone()))?;
        let info = SubscriptionInfo::decode(user_data).map_err(decode_err)?;
        if info.error_code == AssignorError::SHUTDOWN_REQUESTED {
            shutdown = true;
        }
        min_used = min_used.min(info.version);
        min_supported = min_supported.min(info.latest_supported_version);
        if input.excluded_members.contains(id) {
            excluded.push((id.clone(), info.process_id));
            continue;
        }
        let process_id = if info.version > LATEST_SUPPORTED_VERSION {
            future_version = Some(info.version);
            FUTURE_PROCESS_ID
        } else {
            info.process_id
        };
        visited_clients.push(process_id);
        let client = match clients.entry(process_id) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let (endpoint, tags) = if process_id == FUTURE_PROCESS_ID && info.version > LATEST_SUPPORTED_VERSION {
                    (None, BTreeMap::new())
                } else {
                    let endpoint = HostInfo::from_endpoint(&info.user_end_point().unwrap_or_default())
                        .map_err(|source| LeaderError::Endpoint { member: id.clone(), source })?;
                    let tags =
                        info.client_tags_map().map_err(|d| LeaderError::DuplicateClientTag { member: id.clone(), key: d.key })?;
                    (endpoint, tags)
                };
                e.insert(Client {
                    endpoint,
                    tags,
                    rack: envelope.rack().map(str::to_owned),
                    consumers: Vec::new(),
                    owned: BTreeMap::new(),
                    offset_sums: BTreeMap::new(),
                    consumer_tasks: BTreeMap::new(),
                })
            }
        };
        if !client.consumers.is_empty() && client.rack.as_deref() != envelope.rack() {
            client.rack = None;
        }
        client.consumers.push(id.clone());
        let owned = envelope.owned_partitions_list();
        for p in owned {
            all_owned.insert(p.clone());
            client.owned.insert(p, id.clone());
        }
        let sums = info.task_offset_sums();
        client.consumer_tasks.insert(id.clone(), sums.keys().cloned().collect());
        client.offset_sums.extend(sums);
    }

    let mut report = AssignmentReport {
        min_used_version: min_used,
        min_supported_version: min_supported,
        future_version,
        version_probing: false,
        clients: clients
            .iter()
            .map(|(p, c)| {
                let mut consumers = c.consumers.clone();
                consumers.sort_by(|a, b| crate::leader::threads::cmp_member_ids(a, b));
                (*p, consumers)
            })
            .collect(),
        error: None,
        assignment: None,
        effective_assignor: None,
        snapshot: None,
        member_assignments: Vec::new(),
        infos: BTreeMap::new(),
    };

    if shutdown {
        return error_assignment(input, report, AssignorError::SHUTDOWN_REQUESTED, "a member requested shutdown".into());
    }
    let tasks = match Tasks::build(input.topology, input.metadata) {
        Ok(tasks) => tasks,
        Err(e) => match e.assignor_error() {
            Some(code) => return error_assignment(input, report, code, e.to_string()),
            None => return Err(LeaderError::Tasks(e)),
        },
    };
    if let Some(v) = future_version {
        if min_used < EARLIEST_PROBEABLE_VERSION {
            let why = format!("a member from the future (version {v}) and a member at version {min_used}");
            return error_assignment(input, report, AssignorError::ASSIGNMENT_ERROR, why);
        }
        report.version_probing = true;
    }

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
    let task_for_partition: BTreeMap<TopicPartition, TaskId> =
        tasks.task_for_partition().into_iter().map(|(p, t)| (p.clone(), t.clone())).collect();

    let mut engine_input = AssignmentInput::new().with_configs(input.config.assignment.clone());
    engine_input.stateful_tasks = stateful.clone();
    engine_input.stateless_tasks = tasks.stateless_tasks().cloned().collect();
    engine_input.changelog_end_offset_sums = end_sums;
    if input.config.assignment.rack_aware_assignment_strategy != RackAwareStrategy::None {
        engine_input.task_partitions = task_partitions(&tasks, input.metadata);
    }
    let mut previous_standby: BTreeMap<ProcessId, BTreeSet<TaskId>> = BTreeMap::new();
    for (pid, client) in &clients {
        let owned_active: BTreeSet<TaskId> = client.owned.keys().filter_map(|p| task_for_partition.get(p).cloned()).collect();
        let standby: BTreeSet<TaskId> = client
            .offset_sums
            .iter()
            .filter(|(t, s)| !owned_active.contains(*t) && **s != crate::wire::LATEST_OFFSET)
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
    let effective = engine::effective_assignor(input.config.assignor, &engine_input);
    let assignment = match engine::assign(input.config.assignor, &engine_input) {
        // Only excluded members: nothing to assign to, and nothing is wrong.
        _ if clients.is_empty() => Assignment {
            assignor: effective.to_string(),
            clients: Vec::new(),
            followup: engine::Followup {
                probing_rebalance_needed: false,
                probing_rebalance_interval_ms: input.config.assignment.probing_rebalance_interval_ms,
                watch_list: Vec::new(),
            },
        },
        Ok(a) => a,
        Err(e) => {
            return error_assignment(input, report, AssignorError::ASSIGNMENT_ERROR, engine_error(&e));
        }
    };

    // Host maps from the target assignment, in Java's orders.
    let java_parts = java_partitions_for_task(input.topology, &tasks);
    let (mut active_hosts, mut standby_hosts) = (Vec::new(), Vec::new());
    if min_used >= 2 {
        let by_process: BTreeMap<ProcessId, &engine::ClientAssignment> =
            assignment.clients.iter().map(|ca| (ca.process_id, ca)).collect();
        let hosted = java_client_order(visited_clients.iter().copied()).into_iter().filter_map(|pid| {
            let host = clients.get(&pid)?.endpoint.as_ref()?;
            let (active, standby) =
                by_process.get(&pid).map_or((&[][..], &[][..]), |ca| (ca.active_tasks.as_slice(), ca.standby_tasks.as_slice()));
            Some((host, active, standby))
        });
        (active_hosts, standby_hosts) = java_host_maps(hosted, &java_parts);
    }
    let host_maps = java_host_maps_form(min_used, &active_hosts, &standby_hosts);

    // The assignor's follow-up interval: `probing.rebalance.interval.ms` for Kafka's assignors,
    // the predicted catch-up time for the optimized one.
    let deadline = input.now_ms.wrapping_add(assignment.followup.probing_rebalance_interval_ms);
    let mut members = BTreeMap::new();
    for ca in &assignment.clients {
        let client = &clients[&ca.process_id];
        let lags = lag_ends.iter().map(|(t, end)| (t.clone(), TaskLag::compute(client.offset_sums.get(t).copied(), *end).0));
        let mut client_tasks = ClientTasks::new(client.consumers.iter().cloned())
            .with_active(ca.active_tasks.iter().cloned())
            .with_standby(ca.standby_tasks.iter().cloned())
            .with_lags(lags);
        client_tasks.previous_tasks = client.consumer_tasks.clone();
        let threads = assign_tasks_to_threads(&client_tasks)?;
        let mut history = ClientHistory::new().with_previous_standby_tasks(previous_standby[&ca.process_id].iter().cloned());
        history.owned_partitions = client.owned.clone();
        if assignment.followup.probing_rebalance_needed && ca.process_id == input.leader_process_id {
            history = history.with_followup_deadline(deadline);
        }
        for m in build_member_assignments(&threads, &tasks, &history, &all_owned)? {
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
            let bytes = info.encode().map_err(|source| LeaderError::Encode { member: m.consumer.clone(), source })?;
            let envelope = AssignmentEnvelope::new(&m.active_partitions, Some(bytes))
                .encode()
                .map_err(|source| LeaderError::Encode { member: m.consumer.clone(), source })?;
            members.insert(m.consumer.clone(), envelope);
            report.infos.insert(m.consumer.clone(), info);
            report.member_assignments.push(m);
        }
    }
    for (member, process_id) in &excluded {
        let mut info = AssignmentInfo::new(min_used);
        info.host_maps = host_maps.clone();
        if min_used >= 3 {
            info = info.with_commonly_supported_version(min_supported);
        }
        if min_used >= 7 && assignment.followup.probing_rebalance_needed && *process_id == input.leader_process_id {
            info = info.with_next_rebalance(NextRebalance::at(deadline));
        }
        let encode_err = |source| LeaderError::Encode { member: member.clone(), source };
        let bytes = info.encode().map_err(encode_err)?;
        let envelope = AssignmentEnvelope::new(&[], Some(bytes)).encode().map_err(encode_err)?;
        members.insert(member.clone(), envelope);
        report.infos.insert(member.clone(), info);
    }
    report.assignment = Some(assignment);
    report.effective_assignor = Some(effective);
    report.snapshot = Some(snapshot);
    Ok(GroupAssignment { members, report })
}

fn engine_error(e: &AssignError) -> String {
    format!("task assignor failed: {e}")
}

/// Every member gets Kafka's error assignment with `code`.
fn error_assignment(
    input: &LeaderInput<'_>,
    mut report: AssignmentReport,
    code: AssignorError,
    why: String,
) -> Result<GroupAssignment, LeaderError> {
    let info = error_info(code);
    let bytes = info.encode().map_err(|source| LeaderError::Encode { member: String::new(), source })?;
    let envelope = AssignmentEnvelope::new(&[], Some(bytes))
        .encode()
        .map_err(|source| LeaderError::Encode { member: String::new(), source })?;
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
