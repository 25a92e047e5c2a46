//! Describing a Kafka Streams group on a broker: `DescribeGroups`, then each member's metadata
//! (a `ConsumerProtocolSubscription` around a `SubscriptionInfo`) and current assignment (a
//! `ConsumerProtocolAssignment` around an `AssignmentInfo`) decoded.
//!
//! # Warm-up tasks
//!
//! The leader sends warm-up replicas as standby tasks: nothing in an `AssignmentInfo` marks a
//! standby as a warm-up, and the configured `num.standby.replicas` is not in the bytes either.
//! So from the bytes alone a warm-up cannot be told from a standby; the standby list is shown
//! as "standby (incl. warm-up)".
//!
//! # Lags at the last join
//!
//! A member reports its offset sum per task only in its subscription, that is once per
//! JoinGroup; `DescribeGroups` returns that subscription until the member joins again. With the
//! topology, the changelog partitions of each task are known: their end offsets are fetched now,
//! as the leader fetches them (`ListOffsets` latest; the group's committed offsets for a source
//! topic used as changelog), and each lag is Kafka's (`TaskLag::compute`) on the offset sum the
//! member reported at its last join and today's end-offset sum, for the tasks it reported and
//! the stateful tasks it is assigned. That is
//! [`DescribedMember::reported_lag_at_join`]: what the leader would compute from that
//! subscription today, never the lag of a task the member runs now (an active task it reported
//! as running shows as running; anything it restored since the join is not seen). The
//! subscription's `generationId` (the generation of the partitions the member owned when it
//! joined, -1 for none) dates it. Without the topology only the offset sums are shown.
//!
//! # Retries and rebalances
//!
//! As Kafka's admin client, `COORDINATOR_NOT_AVAILABLE`, `NOT_COORDINATOR` and
//! `COORDINATOR_LOAD_IN_PROGRESS` (from `FindCoordinator` or `DescribeGroups`) make it find the
//! coordinator again after a backoff of 100 ms, doubling up to 1 s, until the timeout
//! ([`admin::retry_coordinator`](crate::client::admin::retry_coordinator)). While the group
//! rebalances the coordinator has no metadata or assignment for some members:
//! [`DescribedGroup::rebalancing`] says so, and the text says it in words instead of a decode
//! error.
//!
//! The text rendering is in [`text`]: [`DescribedGroup::table`] fits 100 columns,
//! [`DescribedGroup::details`] adds everything else; [`DescribedGroup::to_json`] has it all.

pub mod size;
pub mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, DescribeGroupsRequest, GroupId};
use kafka_protocol::protocol::StrBytes;

use crate::client::connection::{Connection, ConnectionError, check, find_coordinator};
use crate::client::net::client_config::Security;
use crate::client::admin::{cluster_metadata, fetch_end_offsets, fetch_metadata, retry_coordinator};
use crate::leader::{ChangelogEndOffsets, Tasks, Topology};
use crate::engine::TaskLag;
use crate::wire::{AssignmentEnvelope, AssignmentInfo, SubscriptionEnvelope, SubscriptionInfo, TaskId, end_offset_sum};

/// Why a group cannot be described.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DescribeGroupError {
    /// A broker request failed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The broker did not describe the group.
    #[error("the broker did not describe group `{0}`")]
    Missing(String),
}

impl crate::client::admin::BrokerErrorCode for DescribeGroupError {
    fn broker_error_code(&self) -> Option<crate::client::connection::ErrorCode> {
        match self {
            Self::Connection(e) => e.code(),
            Self::Missing(_) => None,
        }
    }
}

/// One member as `DescribeGroups` returns it, decoded where possible.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DescribedMember {
    /// `memberId`.
    pub member_id: String,
    /// `groupInstanceId`.
    pub group_instance_id: Option<String>,
    /// `clientId`.
    pub client_id: String,
    /// `clientHost`.
    pub client_host: String,
    /// `memberMetadata`, raw.
    pub member_metadata: Vec<u8>,
    /// `memberAssignment`, raw (empty while the group rebalances).
    pub member_assignment: Vec<u8>,
    /// The decoded subscription, or why it does not decode.
    pub subscription: Result<(SubscriptionEnvelope, SubscriptionInfo), String>,
    /// The decoded assignment, or why it does not decode (`None`: no assignment).
    pub assignment: Option<Result<(AssignmentEnvelope, AssignmentInfo), String>>,
    /// Per task, the lag the offset sums of the member's last JoinGroup imply against the end
    /// offsets fetched now (with a topology and available end offsets); see the
    /// [module docs](self#lags-at-the-last-join).
    pub reported_lag_at_join: Option<BTreeMap<TaskId, TaskLag>>,
}

/// A described group.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DescribedGroup {
    /// `groupId`.
    pub group_id: String,
    /// `groupState`.
    pub group_state: String,
    /// `protocolType`.
    pub protocol_type: String,
    /// `protocolData`: the protocol (assignor) chosen.
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedMember>,
    /// Why lags are not shown, when a topology was given but end offsets could not be had.
    pub lag_note: Option<String>,
    /// With a topology: the group's tasks, and the end offsets fetched.
    pub tasks: Option<GroupTasks>,
    /// `__consumer_offsets`' `max.message.bytes` as the broker reported it (`DescribeConfigs`),
    /// the limit of the group's metadata record; `None` when the broker would not say.
    pub record_limit_bytes: Option<usize>,
}

/// A classic group's tasks as its topology and the cluster make them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupTasks {
    /// Tasks without a changelog.
    pub stateless: BTreeSet<TaskId>,
    /// Tasks with changelogs, each with its changelog end-offset sum when the end offsets could be
    /// fetched.
    pub stateful: BTreeMap<TaskId, Option<i64>>,
}

fn decode_subscription(bytes: &[u8]) -> Result<(SubscriptionEnvelope, SubscriptionInfo), String> {
    let env = SubscriptionEnvelope::decode(bytes).map_err(|e| e.to_string())?;
    let info = SubscriptionInfo::decode(env.user_data.as_deref().ok_or("no user data")?).map_err(|e| e.to_string())?;
    Ok((env, info))
}

fn decode_assignment(bytes: &[u8]) -> Result<(AssignmentEnvelope, AssignmentInfo), String> {
    let env = AssignmentEnvelope::decode(bytes).map_err(|e| e.to_string())?;
    let info = AssignmentInfo::decode(env.user_data.as_deref().ok_or("no user data")?).map_err(|e| e.to_string())?;
    Ok((env, info))
}

/// Describes `group` through `bootstrap` (one server or a comma-separated list, tried in turn),
/// every connection secured as `security` says (see the [module docs](self)). `timeout` bounds
/// the whole call, retries included.
pub fn describe_group(
    bootstrap: &str,
    group: &str,
    topology: Option<&Topology>,
    security: &Security,
    timeout: Duration,
) -> Result<DescribedGroup, DescribeGroupError> {
    let client_id = "kstreams-assignor-describe";
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let (conn, coordinator, g) = retry_coordinator(deadline, || {
        let mut conn = Connection::bootstrap(bootstrap, client_id, security, left())?;
        let address = find_coordinator(&mut conn, group)?;
        let mut coordinator = if address == conn.broker() { None } else { Some(conn.open(&address)?) };
        let g = describe_groups(coordinator.as_mut().unwrap_or(&mut conn), group, left())?;
        Ok::<_, DescribeGroupError>((conn, coordinator, g))
    })?;
    describe_found(conn, coordinator, g, topology, deadline)
}

/// What a group's coordinator `coord` answers to `DescribeGroups` for `group`, its error checked.
pub(crate) fn describe_groups(coord: &mut Connection, group: &str, timeout: Duration) -> Result<DescribedGroupRaw, DescribeGroupError> {
    let key = StrBytes::from_string(group.to_owned());
    let response = coord.call_with_timeout(&DescribeGroupsRequest::default().with_groups(vec![GroupId(key)]), timeout)?;
    let g = response.groups.into_iter().next().ok_or_else(|| DescribeGroupError::Missing(group.to_owned()))?;
    check(coord.broker(), ApiKey::DescribeGroups, g.error_code, g.error_message.as_ref())?;
    Ok(g)
}

/// `DescribeGroups`' answer for one group.
pub(crate) type DescribedGroupRaw = kafka_protocol::messages::describe_groups_response::DescribedGroup;

/// The described group from its coordinator's answer `g`: the members' payloads decoded, with a
/// topology their lags, and the record limit. `conn` is the bootstrap connection (for metadata),
/// `coordinator` the coordinator's when it is another broker; `deadline` bounds the calls.
pub(crate) fn describe_found(
    mut conn: Connection,
    mut coordinator: Option<Connection>,
    g: DescribedGroupRaw,
    topology: Option<&Topology>,
    deadline: Instant,
) -> Result<DescribedGroup, DescribeGroupError> {
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let group = g.group_id.0.as_str();
    let mut members: Vec<DescribedMember> = g
        .members
        .iter()
        .map(|m| DescribedMember {
            member_id: m.member_id.to_string(),
            group_instance_id: m.group_instance_id.as_ref().map(|s| s.to_string()),
            client_id: m.client_id.to_string(),
            client_host: m.client_host.to_string(),
            member_metadata: m.member_metadata.to_vec(),
            member_assignment: m.member_assignment.to_vec(),
            subscription: decode_subscription(&m.member_metadata),
            assignment: (!m.member_assignment.is_empty()).then(|| decode_assignment(&m.member_assignment)),
            reported_lag_at_join: None,
        })
        .collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));

    let mut lag_note = None;
    let mut all_tasks = None;
    if let Some(topology) = topology {
        let external: Vec<String> = topology
            .subtopologies
            .iter()
            .flat_map(|s| s.source_topics.iter())
            .filter(|t| !topology.is_repartition_topic(t))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let metadata = fetch_metadata(&mut conn, &external)?;
        match Tasks::build(topology, &cluster_metadata(&metadata, &external)) {
            Err(e) => lag_note = Some(format!("no tasks: {e}")),
            Ok(tasks) => {
                let (stateful, stateless) = tasks.partitions_for_task.keys().cloned().partition(|t| tasks.is_stateful(t));
                let stateful: BTreeSet<TaskId> = stateful;
                all_tasks = Some(GroupTasks { stateless, stateful: stateful.into_iter().map(|t| (t, None)).collect() });
                let changelogs: BTreeSet<String> = tasks.changelog_topic_partitions.keys().cloned().collect();
                // Committed offsets come from the group coordinator.
                let coord = coordinator.as_mut().unwrap_or(&mut conn);
                match fetch_end_offsets(coord, &tasks, &changelogs, group, left()) {
                    ChangelogEndOffsets::Unavailable => lag_note = Some("end offsets unavailable".into()),
                    ChangelogEndOffsets::Available(ends) => {
                        let end_sums: BTreeMap<&TaskId, i64> = tasks
                            .changelog_partitions_for_task
                            .iter()
                            .filter_map(|(t, ps)| {
                                let e: Option<Vec<i64>> = ps.iter().map(|p| ends.get(p).copied()).collect();
                                Some((t, end_offset_sum(e?)))
                            })
                            .collect();
                        if let Some(all) = &mut all_tasks {
                            for (t, e) in &end_sums {
                                all.stateful.insert((*t).clone(), Some(*e));
                            }
                        }
                        for m in &mut members {
                            let Ok((_, sub)) = &m.subscription else { continue };
                            let sums = sub.offset_sums();
                            let mut wanted: BTreeSet<TaskId> = sums.keys().collect();
                            if let Some(Ok((_, a))) = &m.assignment {
                                wanted.extend(a.active_tasks.iter().cloned());
                                wanted.extend(a.standby_task_ids());
                            }
                            let lags = wanted
                                .into_iter()
                                .filter_map(|t| {
                                    let end = *end_sums.get(&t)?;
                                    Some((t.clone(), TaskLag::compute(sums.get(&t).copied(), end)))
                                })
                                .collect();
                            m.reported_lag_at_join = Some(lags);
                        }
                    }
                }
            }
        }
    }
    let record_limit_bytes = size::record_limit(coordinator.as_mut().unwrap_or(&mut conn), left());
    Ok(DescribedGroup {
        record_limit_bytes,
        group_id: g.group_id.0.to_string(),
        group_state: g.group_state.to_string(),
        protocol_type: g.protocol_type.to_string(),
        protocol_data: g.protocol_data.to_string(),
        members,
        lag_note,
        tasks: all_tasks,
    })
}

impl DescribedMember {
    /// The `generationId` of the member's subscription: the generation of the partitions it
    /// owned when it last joined (-1: none, or a subscription before v2 or that does not decode).
    pub fn subscription_generation_id(&self) -> i32 {
        self.subscription.as_ref().map_or(-1, |(env, _)| env.generation_id)
    }
}

impl DescribedGroup {
    /// Whether the coordinator holds no complete picture because the group rebalances: its state
    /// is `PreparingRebalance` or `CompletingRebalance`, or a member has no metadata or no
    /// assignment yet.
    pub fn rebalancing(&self) -> bool {
        matches!(self.group_state.as_str(), "PreparingRebalance" | "CompletingRebalance")
            || self.members.iter().any(|m| m.member_metadata.is_empty() || m.member_assignment.is_empty())
    }

    /// When [rebalancing](Self::rebalancing): what that means, in plain words.
    pub fn rebalancing_note(&self) -> Option<String> {
        self.rebalancing().then(|| {
            format!(
                "the group is rebalancing (state {}): member metadata is not available yet; try again in a few seconds",
                self.group_state
            )
        })
    }
}
