//! The logical view of each message as JSON: what Java's decoded object shows through its
//! accessors, with the keys `kstreams-assignor decode` prints and `encode` reads. The format is
//! described in `fixtures/wire/FORMAT.md`.
//!
//! ```
//! use kstreams_assignor::wire::{json, ProcessId, SubscriptionInfo, TaskId};
//!
//! let info = SubscriptionInfo::new(11, ProcessId::NIL).with_task_offset_sums([(TaskId::new(1, 2), 42)]);
//! let view = json::subscription_view(&info).unwrap();
//! assert_eq!(view["taskOffsetSums"]["1_2"], 42);
//! assert_eq!(json::subscription_from_view(&view).unwrap(), info);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::assignment_parts::PartitionsByHost;
use super::envelope::{AssignmentEnvelope, SubscriptionEnvelope, TopicPartitions};
use super::subscription_info::{DuplicateClientTag, TaskStates};
use super::types::{AssignorError, HostInfo, NextRebalance, ProcessId, TaskId, TopicPartition};
use super::{AssignmentInfo, SubscriptionInfo};

/// JSON that does not describe a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {problem}")]
pub struct ViewError {
    /// The offending key.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

fn view_err(field: &str, problem: impl Into<String>) -> ViewError {
    ViewError { field: field.to_owned(), problem: problem.into() }
}

fn strings<T: ToString>(items: impl IntoIterator<Item = T>) -> Value {
    Value::Array(items.into_iter().map(|i| Value::String(i.to_string())).collect())
}

fn host_map(map: &PartitionsByHost) -> Value {
    Value::Object(map.iter().map(|(h, parts)| (h.to_string(), strings(parts))).collect())
}

/// The view of a `SubscriptionInfo`. Fails where Java's leader fails: on a repeated client tag.
pub fn subscription_view(info: &SubscriptionInfo) -> Result<Value, DuplicateClientTag> {
    let sums: Map<String, Value> = info.task_offset_sums().into_iter().map(|(t, s)| (t.to_string(), json!(s))).collect();
    Ok(json!({
        "version": info.version,
        "latestSupportedVersion": info.latest_supported_version,
        "processId": info.process_id.to_string(),
        "userEndPoint": info.user_end_point(),
        "prevTasks": strings(info.prev_tasks()),
        "standbyTasks": strings(info.standby_tasks()),
        "taskOffsetSums": sums,
        "uniqueField": info.unique_field,
        "errorCode": info.error_code.code(),
        "clientTags": info.client_tags_map()?,
    }))
}

/// The view of an `AssignmentInfo`.
pub fn assignment_view(info: &AssignmentInfo) -> Value {
    let standby: Map<String, Value> =
        info.standby_tasks_map().iter().map(|(t, parts)| (t.to_string(), strings(parts))).collect();
    json!({
        "version": info.version,
        "commonlySupportedVersion": info.commonly_supported_version,
        "activeTasks": strings(&info.active_tasks),
        "standbyTasks": standby,
        "partitionsByHost": host_map(&info.partitions_by_host()),
        "standbyPartitionsByHost": host_map(&info.standby_partitions_by_host()),
        "errorCode": info.error_code.code(),
        "nextRebalanceMs": info.next_rebalance.as_millis(),
    })
}

/// The view of a subscription envelope; `user_data` is what to show for the user data (the
/// manifest shows hex, the command line the decoded `SubscriptionInfo`).
pub fn subscription_envelope_view(env: &SubscriptionEnvelope, user_data: Value) -> Value {
    json!({
        "envelopeVersion": env.version,
        "topics": env.topics,
        "userData": user_data,
        "ownedPartitions": strings(env.owned_partitions_list()),
        "generationId": env.generation().unwrap_or(-1),
        "rackId": env.rack(),
    })
}

/// The view of an assignment envelope; see [`subscription_envelope_view`] for `user_data`.
pub fn assignment_envelope_view(env: &AssignmentEnvelope, user_data: Value) -> Value {
    json!({
        "envelopeVersion": env.version,
        "assignedPartitions": strings(env.partitions()),
        "userData": user_data,
    })
}

/// User data as the manifest shows it: lowercase hex, or null.
pub fn hex_user_data(user_data: Option<&[u8]>) -> Value {
    user_data.map_or(Value::Null, |b| Value::String(hex::encode(b)))
}

struct Obj<'a>(&'a Map<String, Value>);

impl<'a> Obj<'a> {
    fn new(v: &'a Value) -> Result<Self, ViewError> {
        v.as_object().map(Self).ok_or_else(|| view_err("(top level)", "expected a JSON object"))
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn int<T: TryFrom<i64>>(&self, key: &str) -> Result<Option<T>, ViewError> {
        self.get(key)
            .map(|v| {
                v.as_i64()
                    .and_then(|n| T::try_from(n).ok())
                    .ok_or_else(|| view_err(key, format!("expected an integer in range, found {v}")))
            })
            .transpose()
    }

    fn required_int<T: TryFrom<i64>>(&self, key: &str) -> Result<T, ViewError> {
        self.int(key)?.ok_or_else(|| view_err(key, "missing"))
    }

    fn str(&self, key: &str) -> Result<Option<&'a str>, ViewError> {
        self.get(key).map(|v| v.as_str().ok_or_else(|| view_err(key, "expected a string"))).transpose()
    }

    fn array(&self, key: &str) -> Result<Vec<&'a str>, ViewError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().ok_or_else(|| view_err(key, "expected an array of strings")))
                .collect(),
            Some(_) => Err(view_err(key, "expected an array of strings")),
        }
    }

    fn parsed<T: std::str::FromStr>(&self, key: &str) -> Result<Vec<T>, ViewError>
    where
        T::Err: std::fmt::Display,
    {
        self.array(key)?.into_iter().map(|s| s.parse().map_err(|e: T::Err| view_err(key, e.to_string()))).collect()
    }

    fn object(&self, key: &str) -> Result<Vec<(&'a str, &'a Value)>, ViewError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(m)) => Ok(m.iter().map(|(k, v)| (k.as_str(), v)).collect()),
            Some(_) => Err(view_err(key, "expected an object")),
        }
    }

    fn host_map(&self, key: &str) -> Result<PartitionsByHost, ViewError> {
        self.object(key)?
            .into_iter()
            .map(|(host, parts)| {
                let (h, port) = host.rsplit_once(':').ok_or_else(|| view_err(key, format!("`{host}` is not host:port")))?;
                let port = port.parse().map_err(|_| view_err(key, format!("`{host}` has no valid port")))?;
                Ok((HostInfo::new(h, port), partition_set(key, parts)?))
            })
            .collect()
    }
}

fn partition_set(key: &str, v: &Value) -> Result<BTreeSet<TopicPartition>, ViewError> {
    v.as_array()
        .ok_or_else(|| view_err(key, "expected an array of topic partitions"))?
        .iter()
        .map(|p| {
            p.as_str()
                .ok_or_else(|| view_err(key, "expected a topic partition string"))?
                .parse()
                .map_err(|e: super::ParseTopicPartitionError| view_err(key, e.to_string()))
        })
        .collect()
}

/// Builds a `SubscriptionInfo` from its view. v1–6 take `prevTasks`/`standbyTasks`; v7+ take
/// `taskOffsetSums`.
pub fn subscription_from_view(view: &Value) -> Result<SubscriptionInfo, ViewError> {
    let o = Obj::new(view)?;
    let version: i32 = o.required_int("version")?;
    let process_id = match o.str("processId")? {
        Some(s) => s.parse().map_err(|e: uuid::Error| view_err("processId", e.to_string()))?,
        None => ProcessId::NIL,
    };
    let mut info = SubscriptionInfo::new(version, process_id);
    if let Some(lsv) = o.int("latestSupportedVersion")? {
        info.latest_supported_version = lsv;
    }
    if let Some(ep) = o.str("userEndPoint")? {
        info = info.with_user_end_point(ep);
    }
    if version <= 6 {
        info.tasks = TaskStates::Sets { prev: o.parsed("prevTasks")?, standby: o.parsed("standbyTasks")? };
    } else if version <= super::LATEST_SUPPORTED_VERSION {
        let sums = o
            .object("taskOffsetSums")?
            .into_iter()
            .map(|(t, v)| {
                let task: TaskId = t.parse().map_err(|e: super::ParseTaskIdError| view_err("taskOffsetSums", e.to_string()))?;
                let sum = v.as_i64().ok_or_else(|| view_err("taskOffsetSums", format!("`{t}`: expected an integer")))?;
                Ok((task, sum))
            })
            .collect::<Result<Vec<_>, ViewError>>()?;
        info = info.with_task_offset_sums(sums);
    }
    if let Some(u) = o.int("uniqueField")? {
        info.unique_field = u;
    }
    if let Some(e) = o.int("errorCode")? {
        info.error_code = AssignorError(e);
    }
    let tags = o
        .object("clientTags")?
        .into_iter()
        .map(|(k, v)| Ok((k, v.as_str().ok_or_else(|| view_err("clientTags", format!("`{k}`: expected a string")))?)))
        .collect::<Result<Vec<_>, ViewError>>()?;
    Ok(info.with_client_tags(tags))
}

/// Builds an `AssignmentInfo` from its view.
pub fn assignment_from_view(view: &Value) -> Result<AssignmentInfo, ViewError> {
    let o = Obj::new(view)?;
    let version: i32 = o.required_int("version")?;
    let mut info = AssignmentInfo::new(version).with_active_tasks(o.parsed("activeTasks")?);
    if let Some(csv) = o.int("commonlySupportedVersion")? {
        info.commonly_supported_version = csv;
    }
    let standby = o
        .object("standbyTasks")?
        .into_iter()
        .map(|(t, parts)| {
            let task: TaskId = t.parse().map_err(|e: super::ParseTaskIdError| view_err("standbyTasks", e.to_string()))?;
            Ok((task, partition_set("standbyTasks", parts)?))
        })
        .collect::<Result<BTreeMap<_, _>, ViewError>>()?;
    info = info.with_standby_tasks(standby).with_partitions_by_host(o.host_map("partitionsByHost")?);
    let standby_hosts = o.host_map("standbyPartitionsByHost")?;
    if !standby_hosts.is_empty() {
        info = info.with_standby_partitions_by_host(standby_hosts);
    }
    if let Some(e) = o.int("errorCode")? {
        info.error_code = AssignorError(e);
    }
    if let Some(n) = o.int("nextRebalanceMs")? {
        info.next_rebalance = NextRebalance(n);
    }
    Ok(info)
}

fn user_data_hex(o: &Obj<'_>) -> Result<Option<Vec<u8>>, ViewError> {
    o.str("userData")?.map(|h| hex::decode(h).map_err(|e| view_err("userData", e.to_string()))).transpose()
}

fn regroup(partitions: Vec<TopicPartition>) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    for tp in partitions {
        match out.last_mut() {
            Some(g) if *g.topic == *tp.topic => g.partitions.push(tp.partition),
            _ => out.push(TopicPartitions { topic: tp.topic.to_string(), partitions: vec![tp.partition] }),
        }
    }
    out
}

/// Builds a subscription envelope from its view (with `userData` as hex).
pub fn subscription_envelope_from_view(view: &Value) -> Result<SubscriptionEnvelope, ViewError> {
    let o = Obj::new(view)?;
    let topics = o.array("topics")?.into_iter().map(str::to_owned).collect();
    let mut env = SubscriptionEnvelope::new(topics, user_data_hex(&o)?);
    if let Some(v) = o.int("envelopeVersion")? {
        env.version = v;
    }
    env.owned_partitions = regroup(o.parsed("ownedPartitions")?);
    if let Some(g) = o.int("generationId")? {
        env.generation_id = g;
    }
    env.rack_id = o.str("rackId")?.map(str::to_owned);
    Ok(env)
}

/// Builds an assignment envelope from its view (with `userData` as hex).
pub fn assignment_envelope_from_view(view: &Value) -> Result<AssignmentEnvelope, ViewError> {
    let o = Obj::new(view)?;
    let mut env = AssignmentEnvelope::new(&[], user_data_hex(&o)?);
    env.assigned_partitions = regroup(o.parsed("assignedPartitions")?);
    if let Some(v) = o.int("envelopeVersion")? {
        env.version = v;
    }
    Ok(env)
}

/// Sorts the set-like arrays of a view (as the manifest compares them): every array except
/// `activeTasks`, `topics`, `ownedPartitions` and `assignedPartitions`.
pub fn normalize(view: &mut Value) {
    fn walk(v: &mut Value, key: &str) {
        match v {
            Value::Object(m) => m.iter_mut().for_each(|(k, v)| walk(v, k)),
            Value::Array(items) => {
                items.iter_mut().for_each(|i| walk(i, key));
                if !matches!(key, "activeTasks" | "topics" | "ownedPartitions" | "assignedPartitions") {
                    items.sort_by_key(|i| i.to_string());
                }
            }
            _ => {}
        }
    }
    walk(view, "");
}
