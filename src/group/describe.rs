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
//! # Lags
//!
//! With the topology, the changelog partitions of each task are known: their end offsets are
//! fetched as the leader fetches them (`ListOffsets` latest; the group's committed offsets for a
//! source topic used as changelog), and each member's lag per task is Kafka's
//! (`TaskLag::compute` on the member's offset sum and the task's end-offset sum), for the tasks
//! it reports an offset sum for and the stateful tasks it is assigned. Without the topology only
//! the offset sums are shown.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Duration;

use kafka_protocol::messages::{ApiKey, DescribeGroupsRequest, GroupId};
use kafka_protocol::protocol::StrBytes;
use serde_json::{Value, json};

use super::connection::{Connection, ConnectionError, check, find_coordinator};
use super::net::client_config::Security;
use super::admin::{cluster_metadata, fetch_end_offsets, fetch_metadata};
use crate::leader::{ChangelogEndOffsets, Tasks, Topology};
use crate::wire::inspect::{self, Kind};
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
    /// Lag per task (with a topology and available end offsets).
    pub lags: Option<BTreeMap<TaskId, TaskLag>>,
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
/// every connection secured as `security` says (see the [module docs](self)).
pub fn describe_group(
    bootstrap: &str,
    group: &str,
    topology: Option<&Topology>,
    security: &Security,
    timeout: Duration,
) -> Result<DescribedGroup, DescribeGroupError> {
    let client_id = "kstreams-assignor-describe";
    let mut conn = Connection::bootstrap(bootstrap, client_id, security, timeout)?;
    let key = StrBytes::from_string(group.to_owned());
    let address = find_coordinator(&mut conn, group)?;
    let mut coordinator = if address == conn.broker() { None } else { Some(conn.open(&address)?) };
    let coord = coordinator.as_mut().unwrap_or(&mut conn);
    let response = coord.call(&DescribeGroupsRequest::default().with_groups(vec![GroupId(key)]))?;
    let g = response.groups.into_iter().next().ok_or_else(|| DescribeGroupError::Missing(group.to_owned()))?;
    check(coord.broker(), ApiKey::DescribeGroups, g.error_code, g.error_message.as_ref())?;

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
            lags: None,
        })
        .collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));

    let mut lag_note = None;
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
                let changelogs: BTreeSet<String> = tasks.changelog_topic_partitions.keys().cloned().collect();
                // Committed offsets come from the group coordinator.
                let coord = coordinator.as_mut().unwrap_or(&mut conn);
                match fetch_end_offsets(coord, &tasks, &changelogs, group, timeout) {
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
                        for m in &mut members {
                            let Ok((_, sub)) = &m.subscription else { continue };
                            let sums = sub.task_offset_sums();
                            let mut wanted: BTreeSet<TaskId> = sums.keys().cloned().collect();
                            if let Some(Ok((_, a))) = &m.assignment {
                                wanted.extend(a.active_tasks.iter().cloned());
                                wanted.extend(a.standby_tasks_map().into_keys());
                            }
                            let lags = wanted
                                .into_iter()
                                .filter_map(|t| {
                                    let end = *end_sums.get(&t)?;
                                    Some((t.clone(), TaskLag::compute(sums.get(&t).copied(), end)))
                                })
                                .collect();
                            m.lags = Some(lags);
                        }
                    }
                }
            }
        }
    }
    Ok(DescribedGroup {
        group_id: g.group_id.0.to_string(),
        group_state: g.group_state.to_string(),
        protocol_type: g.protocol_type.to_string(),
        protocol_data: g.protocol_data.to_string(),
        members,
        lag_note,
    })
}

fn ids<'a>(tasks: impl IntoIterator<Item = &'a TaskId>) -> String {
    let v: Vec<String> = tasks.into_iter().map(TaskId::to_string).collect();
    if v.is_empty() { "-".into() } else { v.join(" ") }
}

fn lag_text(l: TaskLag) -> String {
    match l {
        TaskLag::RUNNING_ACTIVE => "running".into(),
        TaskLag::UNKNOWN => "unknown".into(),
        TaskLag(n) => n.to_string(),
    }
}

impl DescribedGroup {
    /// The group as JSON, with Kafka's field names (`memberId`, `memberMetadata` …; the decoded
    /// metadata as the `decode` command prints it).
    pub fn to_json(&self) -> Value {
        let members: Vec<Value> = self
            .members
            .iter()
            .map(|m| {
                let metadata = inspect::decode(&m.member_metadata, Some(Kind::SubscriptionEnvelope))
                    .map_or_else(|e| json!({ "error": e.to_string(), "hex": hex::encode(&m.member_metadata) }), |d| d.json);
                let assignment = if m.member_assignment.is_empty() {
                    Value::Null
                } else {
                    inspect::decode(&m.member_assignment, Some(Kind::AssignmentEnvelope))
                        .map_or_else(|e| json!({ "error": e.to_string(), "hex": hex::encode(&m.member_assignment) }), |d| d.json)
                };
                let mut v = json!({
                    "memberId": m.member_id,
                    "groupInstanceId": m.group_instance_id,
                    "clientId": m.client_id,
                    "clientHost": m.client_host,
                    "memberMetadata": metadata,
                    "memberAssignment": assignment,
                });
                if let Some(lags) = &m.lags {
                    v["taskLags"] = lags.iter().map(|(t, l)| (t.to_string(), Value::from(l.0))).collect::<serde_json::Map<_, _>>().into();
                }
                v
            })
            .collect();
        let mut out = json!({
            "groupId": self.group_id,
            "groupState": self.group_state,
            "protocolType": self.protocol_type,
            "protocolData": self.protocol_data,
            "members": members,
        });
        if let Some(n) = &self.lag_note {
            out["lagNote"] = Value::from(n.clone());
        }
        out
    }

    /// The group as text: one block per member.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "group {}  state {}  protocol {}/{}  {} members",
            self.group_id,
            self.group_state,
            self.protocol_type,
            self.protocol_data,
            self.members.len()
        );
        if let Some(n) = &self.lag_note {
            let _ = writeln!(s, "lags: {n}");
        }
        for m in &self.members {
            let _ = writeln!(s);
            let instance = m.group_instance_id.as_deref().map(|i| format!("  instance {i}")).unwrap_or_default();
            let _ = writeln!(s, "member {}{instance}  client {} {}", m.member_id, m.client_id, m.client_host);
            match &m.subscription {
                Err(e) => {
                    let _ = writeln!(s, "  metadata: does not decode: {e}");
                }
                Ok((env, info)) => {
                    let _ = writeln!(
                        s,
                        "  process {}  endpoint {}  version {} (latest {})  rack {}",
                        info.process_id,
                        info.user_end_point().filter(|e| !e.is_empty()).unwrap_or_else(|| "-".into()),
                        info.version,
                        info.latest_supported_version,
                        env.rack().unwrap_or("-"),
                    );
                    if let Some(lags) = &m.lags {
                        let l: Vec<String> = lags.iter().map(|(t, l)| format!("{t}:{}", lag_text(*l))).collect();
                        let _ = writeln!(s, "  lag                     {}", if l.is_empty() { "-".into() } else { l.join(" ") });
                    } else {
                        let sums = info.task_offset_sums();
                        let l: Vec<String> = sums.iter().map(|(t, v)| format!("{t}:{v}")).collect();
                        let _ = writeln!(s, "  offset sums             {}", if l.is_empty() { "-".into() } else { l.join(" ") });
                    }
                }
            }
            match &m.assignment {
                None => {
                    let _ = writeln!(s, "  assignment: none");
                }
                Some(Err(e)) => {
                    let _ = writeln!(s, "  assignment: does not decode: {e}");
                }
                Some(Ok((_, info))) => {
                    let active: BTreeSet<&TaskId> = info.active_tasks.iter().collect();
                    let _ = writeln!(s, "  active                  {}", ids(active));
                    let _ = writeln!(s, "  standby (incl. warm-up) {}", ids(info.standby_tasks_map().keys()));
                    let next = info.next_rebalance.deadline().map_or("-".into(), |t| t.to_string());
                    let code = if info.error_code.is_none() { String::new() } else { format!("  error code {}", info.error_code.code()) };
                    let _ = writeln!(s, "  assignment version {}  nextRebalanceMs {next}{code}", info.version);
                }
            }
        }
        s
    }
}
