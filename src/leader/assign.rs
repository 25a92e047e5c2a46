//! The group leader's whole assignment, Kafka Streams 4.4.0's `StreamsPartitionAssignor.assign`:
//! JoinGroup subscriptions in, each member's SyncGroup assignment out, in named stages:
//!
//! | stage | function | module |
//! |---|---|---|
//! | decode and aggregate the members | `aggregate_members` | `aggregate` |
//! | the topology checked against the members' subscriptions | [`check_topology`] | [`topology_check`](super::topology_check) |
//! | the error assignments Kafka answers with | `error_assignment` | `encode` |
//! | the task assignor's input | `EngineInput::build` | `engine_input` |
//! | the task assignor | [`engine::assign`] | [`engine`] |
//! | host maps, consumers' tasks, bytes | `host_maps`, `encode_members` | `encode` |
//!
//! The steps, as Kafka takes them:
//!
//!
//! 1. Every subscription is decoded. A member whose `SubscriptionInfo` version is newer than
//!    [`LATEST_SUPPORTED_VERSION`](crate::wire::LATEST_SUPPORTED_VERSION) joins one synthetic client, [`FUTURE_PROCESS_ID`](super::FUTURE_PROCESS_ID), as in Kafka
//!    (which uses a random id there). Other members are grouped by process id. They are visited
//!    in Kafka's order, the iteration order of `ConsumerCoordinator`'s `HashMap` of member ids
//!    filled in JoinGroup order: the first member of a process gives the client its endpoint and
//!    client tags; each member adds one to the capacity, its owned partitions and its task
//!    offset sums (merged per client, later members overriding), so members of one process that
//!    disagree are resolved as Kafka resolves them. The client has a rack only if every member of
//!    the process sent the same `rackId` (Kafka's `validateClientRack`; otherwise rack-aware
//!    assignment stays off). The minimum used version and minimum latest-supported version are
//!    tracked.
//!
//!    Then, unless [`LeaderInput::check_topology`] is off, the topology is checked against every
//!    member's subscribed topics and the tasks it ran ([`check_topology`]):
//!    a mismatch is [`LeaderError::TopologyMismatch`], and nothing is assigned. Kafka's leader has
//!    no such step (its topology is the application's own); a shutdown request is answered first.
//! 2. Error assignments (see [`AssignmentReport::error`](super::AssignmentReport::error)): any subscription with error code
//!    `SHUTDOWN_REQUESTED`; missing source topics (`INCOMPLETE_SOURCE_TOPIC_METADATA`); repartition
//!    topic counts that cannot be derived, a member from the future next to a v1/v2 member, or a
//!    task assignor failure (`ASSIGNMENT_ERROR`). Each is sent as Kafka sends it: an
//!    `AssignmentInfo` at version 11 with nothing assigned, the code, `nextRebalanceMs` = MAX, in an
//!    envelope without partitions.
//! 3. [`Tasks::build`] gives the tasks; each stateful task's changelog end-offset sum comes from
//!    the end offsets given (all unknown, `-3`, when they are unavailable; the engine then falls
//!    back as Kafka does). Previous active tasks come from owned partitions, then from offset sums.
//!    Unless `rack.aware.assignment.strategy` is `none`, every task's partitions go to the engine
//!    with their replica racks from the metadata ([`TaskPartitions`](crate::engine::TaskPartitions)): the task's source
//!    partitions (input and repartition topics, Kafka's `partitionsForTask`) and its changelog
//!    partitions (`ChangelogTopics.changelogPartionsForTask`, source-topic changelogs included).
//!    A partition whose racks are not in the metadata, or with a replica whose rack is empty, has
//!    unknown racks, and Kafka's `canEnableRackAwareAssignor` (the engine's check) then fails.
//! 4. [`engine::assign`] decides the tasks of each client; [`assign_tasks_to_threads`](super::assign_tasks_to_threads) and
//!    [`build_member_assignments`](super::build_member_assignments) split them over consumers.
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
//!    consumer without held-back tasks (see [`build_member_assignments`](super::build_member_assignments)). The optimized
//!    assignor estimates restore rates from the previous rebalance: pass the last
//!    [`AssignmentReport::snapshot`](super::AssignmentReport::snapshot) as [`LeaderInput::previous_rebalance`] (the
//!    [`StreamsMember`](crate::member::StreamsMember) hook does so when it leads twice in a row).
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

use super::aggregate::{Members, aggregate_members};
use super::encode::{encode_members, error_assignment};
use super::engine_input::EngineInput;
use super::input::LeaderInput;
use super::output::{GroupAssignment, LeaderError};
use super::tasks::Tasks;
use super::topology_check::check_topology;
use crate::engine::{self, AssignError, Assignment, AssignmentInput, AssignorKind};
use crate::wire::{AssignorError, EARLIEST_PROBEABLE_VERSION};

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
///         // A Kafka Streams member subscribes to its topology's source topics.
///         let topics = vec!["text-lines".into(), "wc-words-repartition".into()];
///         JoinMember::new(id, SubscriptionEnvelope::new(topics, Some(info)).encode().unwrap())
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
    let members = aggregate_members(input)?;
    let mut report = members.report();
    if members.shutdown {
        return error_assignment(input, report, AssignorError::SHUTDOWN_REQUESTED, "a member requested shutdown".into());
    }
    if input.check_topology {
        check_topology(input.members, input.topology)?;
    }
    let tasks = match Tasks::build(input.topology, input.metadata) {
        Ok(tasks) => tasks,
        Err(e) => match e.assignor_error() {
            Some(code) => return error_assignment(input, report, code, e.to_string()),
            None => return Err(LeaderError::Tasks(e)),
        },
    };
    if let Some(v) = members.future_version {
        if members.min_used < EARLIEST_PROBEABLE_VERSION {
            let why = format!("a member from the future (version {v}) and a member at version {}", members.min_used);
            return error_assignment(input, report, AssignorError::ASSIGNMENT_ERROR, why);
        }
        report.version_probing = true;
    }
    let engine_input = EngineInput::build(input, &tasks, &members);
    let effective = engine::effective_assignor(input.config.assignor, &engine_input.input);
    let assignment = match run_assignor(input, &engine_input.input, &members, effective) {
        Ok(assignment) => assignment,
        Err(e) => return error_assignment(input, report, AssignorError::ASSIGNMENT_ERROR, format!("task assignor failed: {e}")),
    };
    let bytes = encode_members(input, &tasks, &members, &engine_input, &assignment, &mut report)?;
    report.assignment = Some(assignment);
    report.effective_assignor = Some(effective);
    report.snapshot = Some(engine_input.snapshot);
    Ok(GroupAssignment { members: bytes, report })
}

/// The task assignor's decision; with only excluded members there is nothing to assign to, and
/// nothing is wrong.
fn run_assignor(
    input: &LeaderInput<'_>,
    engine_input: &AssignmentInput,
    members: &Members,
    effective: AssignorKind,
) -> Result<Assignment, AssignError> {
    let assignment = engine::assign(input.config.assignor, engine_input);
    if members.clients.is_empty() {
        return Ok(Assignment {
            assignor: effective.to_string(),
            clients: Vec::new(),
            followup: engine::Followup {
                probing_rebalance_needed: false,
                probing_rebalance_interval_ms: input.config.assignment.probing_rebalance_interval_ms,
                watch_list: Vec::new(),
            },
        });
    }
    assignment
}
