//! The admin calls the group member's leader and `describe_group` both make:
//! `Metadata` (partition counts and replica racks), `CreateTopics` for internal topics,
//! `ListOffsets` (latest) and `OffsetFetch` for changelog end offsets; and the retries of
//! coordinator errors that Kafka's admin client makes ([`retry_coordinator`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kafka_protocol::messages::{
    ApiKey, BrokerId, CreateTopicsRequest, DescribeConfigsRequest, GroupId, ListOffsetsRequest, MetadataRequest, MetadataResponse, OffsetFetchRequest,
    TopicName,
    create_topics_request::{CreatableTopic, CreatableTopicConfig},
    describe_configs_request::DescribeConfigsResource,
    list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic},
    metadata_request::MetadataRequestTopic,
    offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics},
};
use kafka_protocol::protocol::StrBytes;

use crate::client::connection::{Connection, ConnectionError, ErrorCode, check};
use crate::leader::{ChangelogEndOffsets, ClusterMetadata, Tasks};
use crate::wire::TopicPartition;

/// Why an admin call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    /// The broker refused to create a topic.
    #[error("creating internal topics: {0}")]
    CreateTopics(#[source] ConnectionError),
    /// Another request failed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
}

/// The first backoff of [`retry_coordinator`] (Kafka's `retry.backoff.ms`).
pub const RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// The longest backoff of [`retry_coordinator`] (Kafka's `retry.backoff.max.ms`).
pub const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// An error that may carry a Kafka error code from the broker.
pub trait BrokerErrorCode {
    /// The code, if the broker answered with one.
    fn broker_error_code(&self) -> Option<ErrorCode>;
}

impl BrokerErrorCode for ConnectionError {
    fn broker_error_code(&self) -> Option<ErrorCode> {
        self.code()
    }
}

/// Whether Kafka's admin client finds the coordinator again and retries after this code:
/// `COORDINATOR_NOT_AVAILABLE`, `NOT_COORDINATOR`, `COORDINATOR_LOAD_IN_PROGRESS`.
pub fn is_coordinator_retriable(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::COORDINATOR_NOT_AVAILABLE | ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS)
}

/// Runs `attempt` (which finds the coordinator and asks it) again while it fails with a code
/// [`is_coordinator_retriable`] accepts, waiting [`RETRY_BACKOFF`] doubled each time up to
/// [`RETRY_BACKOFF_MAX`], until `deadline`; then returns the last error. Any other error is
/// returned at once.
///
/// ```
/// use std::time::{Duration, Instant};
/// use kafka_protocol::messages::ApiKey;
/// use kstreams_assignor::client::admin::retry_coordinator;
/// use kstreams_assignor::client::connection::{ConnectionError, ErrorCode};
///
/// let busy = || ConnectionError::Broker {
///     broker: "b:9092".into(), api: ApiKey::DescribeGroups, code: ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, message: None,
/// };
/// let mut calls = 0;
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let got = retry_coordinator(deadline, || { calls += 1; if calls < 3 { Err(busy()) } else { Ok(calls) } });
/// assert_eq!(got.unwrap(), 3);
/// // Past the deadline the last error comes back.
/// let err = retry_coordinator(Instant::now(), || Err::<(), _>(busy())).unwrap_err();
/// assert_eq!(err.code(), Some(ErrorCode::COORDINATOR_LOAD_IN_PROGRESS));
/// ```
pub fn retry_coordinator<T, E: BrokerErrorCode>(deadline: Instant, mut attempt: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut backoff = RETRY_BACKOFF;
    loop {
        match attempt() {
            Err(e) if e.broker_error_code().is_some_and(is_coordinator_retriable) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left <= backoff {
                    return Err(e);
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
            }
            other => return other,
        }
    }
}

/// `Metadata` for `topics` (no auto-creation).
pub fn fetch_metadata(conn: &mut Connection, topics: &[String]) -> Result<MetadataResponse, ConnectionError> {
    let version = conn.version::<MetadataRequest>()?;
    let request = MetadataRequest::default()
        .with_topics(Some(
            topics
                .iter()
                .map(|t| MetadataRequestTopic::default().with_name(Some(TopicName(StrBytes::from_string(t.clone())))))
                .collect(),
        ))
        .with_allow_auto_topic_creation(version < 4);
    conn.call(&request)
}

/// A config resource's type on the wire (`ConfigResource.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigResource {
    /// A topic (`TOPIC`, 2).
    Topic,
    /// A group (`GROUP`, 32).
    Group,
}

/// The values of `keys` of the resource `name` as the broker describes them (its own or the
/// inherited default), by key; a key without a value is left out. `None` when the broker does
/// not answer in `timeout`, refuses (no `DescribeConfigs` permission, an old broker) or errs.
pub fn describe_configs(
    conn: &mut Connection,
    kind: ConfigResource,
    name: &str,
    keys: &[&str],
    timeout: Duration,
) -> Option<BTreeMap<String, String>> {
    conn.version::<DescribeConfigsRequest>().ok()?;
    let resource = DescribeConfigsResource::default()
        .with_resource_type(match kind {
            ConfigResource::Topic => 2,
            ConfigResource::Group => 32,
        })
        .with_resource_name(StrBytes::from_string(name.to_owned()))
        .with_configuration_keys(Some(keys.iter().map(|k| StrBytes::from_string((*k).to_owned())).collect()));
    let response = conn.call_with_timeout(&DescribeConfigsRequest::default().with_resources(vec![resource]), timeout).ok()?;
    let result = response.results.into_iter().find(|r| r.error_code == 0 && r.resource_name.as_str() == name)?;
    Some(result.configs.into_iter().filter_map(|c| Some((c.name.as_str().to_owned(), c.value?.as_str().to_owned()))).collect())
}

/// Partition counts of the topics among `topics` that the metadata lists without error.
pub fn partition_counts(metadata: &MetadataResponse, topics: &[String]) -> BTreeMap<String, i32> {
    metadata
        .topics
        .iter()
        .filter(|t| t.error_code == 0 && !t.partitions.is_empty())
        .filter_map(|t| {
            let name = t.name.as_ref()?.0.to_string();
            topics.contains(&name).then(|| (name, i32::try_from(t.partitions.len()).unwrap_or(i32::MAX)))
        })
        .collect()
}

/// The leader's [`ClusterMetadata`]: partition counts of `topics`, and per partition the racks of
/// its replicas when the brokers have racks.
pub fn cluster_metadata(metadata: &MetadataResponse, topics: &[String]) -> ClusterMetadata {
    let racks: BTreeMap<i32, String> =
        metadata.brokers.iter().filter_map(|b| Some((b.node_id.0, b.rack.as_ref()?.to_string()))).collect();
    let mut cluster = ClusterMetadata::new();
    for (topic, n) in partition_counts(metadata, topics) {
        cluster = cluster.with_topic(topic.clone(), n);
        if racks.is_empty() {
            continue;
        }
        let Some(t) = metadata.topics.iter().find(|t| t.name.as_ref().is_some_and(|x| x.0.as_str() == topic)) else { continue };
        let mut parts: Vec<_> = t.partitions.iter().collect();
        parts.sort_by_key(|p| p.partition_index);
        let per_partition: Vec<Vec<String>> = parts
            .iter()
            .map(|p| {
                let set: BTreeSet<String> = p.replica_nodes.iter().filter_map(|b| racks.get(&b.0).cloned()).collect();
                set.into_iter().collect()
            })
            .collect();
        cluster = cluster.with_racks(topic, per_partition);
    }
    cluster
}

/// Creates topics (name, partitions, configs); an existing topic is not an error. Returns the
/// names created.
pub fn create_topics(
    conn: &mut Connection,
    topics: &[(String, i32, BTreeMap<String, String>)],
    replication_factor: i16,
    timeout: Duration,
) -> Result<Vec<String>, AdminError> {
    let request = CreateTopicsRequest::default()
        .with_topics(
            topics
                .iter()
                .map(|(name, n, configs)| {
                    CreatableTopic::default()
                        .with_name(TopicName(StrBytes::from_string(name.clone())))
                        .with_num_partitions(*n)
                        .with_replication_factor(replication_factor)
                        .with_configs(
                            configs
                                .iter()
                                .map(|(k, v)| {
                                    CreatableTopicConfig::default()
                                        .with_name(StrBytes::from_string(k.clone()))
                                        .with_value(Some(StrBytes::from_string(v.clone())))
                                })
                                .collect(),
                        )
                })
                .collect(),
        )
        .with_timeout_ms(i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX));
    let response = conn.call(&request).map_err(AdminError::CreateTopics)?;
    let mut created = Vec::new();
    for t in &response.topics {
        let code = ErrorCode(t.error_code);
        if code == ErrorCode::TOPIC_ALREADY_EXISTS {
            continue;
        }
        check(conn.broker(), ApiKey::CreateTopics, t.error_code, t.error_message.as_ref()).map_err(AdminError::CreateTopics)?;
        created.push(t.name.0.to_string());
    }
    // Wait until the new topics have leaders (Kafka's leader validates them the same way).
    let names: Vec<String> = topics.iter().map(|t| t.0.clone()).collect();
    for _ in 0..50 {
        let metadata = fetch_metadata(conn, &names)?;
        let ready = metadata.topics.iter().filter(|t| t.error_code == 0 && t.partitions.iter().all(|p| p.leader_id.0 >= 0)).count();
        if ready == names.len() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(created)
}

/// End offsets of every changelog partition: `ListOffsets` (latest) at each partition's leader
/// for changelog topics, the group's committed offsets (`OffsetFetch`) for source topics used as
/// changelogs. Any failure makes them unavailable, as in Kafka.
pub fn fetch_end_offsets(
    conn: &mut Connection,
    tasks: &Tasks,
    changelog_topics: &BTreeSet<String>,
    group_id: &str,
    timeout: Duration,
) -> ChangelogEndOffsets {
    let partitions: BTreeSet<&TopicPartition> = tasks.changelog_partitions_for_task.values().flatten().collect();
    let (latest, committed): (Vec<&TopicPartition>, Vec<&TopicPartition>) =
        partitions.into_iter().partition(|p| changelog_topics.contains(&*p.topic));
    let mut out = BTreeMap::new();
    match list_latest_offsets(conn, &latest, timeout) {
        Ok(o) => out.extend(o),
        Err(_) => return ChangelogEndOffsets::Unavailable,
    }
    if !committed.is_empty() {
        match committed_offsets(conn, &committed, group_id) {
            Ok(o) => out.extend(o),
            Err(_) => return ChangelogEndOffsets::Unavailable,
        }
    }
    ChangelogEndOffsets::Available(out)
}

/// `ListOffsets` (latest, read uncommitted) for `partitions`, each sent to its leader.
pub fn list_latest_offsets(
    conn: &mut Connection,
    partitions: &[&TopicPartition],
    timeout: Duration,
) -> Result<BTreeMap<TopicPartition, i64>, ConnectionError> {
    if partitions.is_empty() {
        return Ok(BTreeMap::new());
    }
    let topics: Vec<String> = partitions.iter().map(|p| p.topic.to_string()).collect::<BTreeSet<_>>().into_iter().collect();
    let metadata = fetch_metadata(conn, &topics)?;
    let brokers: BTreeMap<i32, String> = metadata.brokers.iter().map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port))).collect();
    let mut by_leader: BTreeMap<i32, BTreeMap<String, Vec<i32>>> = BTreeMap::new();
    for p in partitions {
        let leader = metadata
            .topics
            .iter()
            .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == &*p.topic))
            .and_then(|t| t.partitions.iter().find(|q| q.partition_index == p.partition))
            .map(|q| q.leader_id.0)
            .filter(|&l| l >= 0)
            .ok_or_else(|| ConnectionError::Broker {
                broker: conn.broker().to_owned(),
                api: ApiKey::Metadata,
                code: ErrorCode(5), // LEADER_NOT_AVAILABLE
                message: Some(format!("no leader for {p}")),
            })?;
        by_leader.entry(leader).or_default().entry(p.topic.to_string()).or_default().push(p.partition);
    }
    let mut out = BTreeMap::new();
    for (leader, topics) in by_leader {
        let address = brokers.get(&leader).cloned().unwrap_or_else(|| conn.broker().to_owned());
        let mut target = if address == conn.broker() { None } else { Some(conn.open(&address)?) };
        let target = target.as_mut().unwrap_or(conn);
        let version = target.version::<ListOffsetsRequest>()?;
        let timeout_ms = if version >= 10 { i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX) } else { 0 };
        let request = ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_isolation_level(0)
            .with_timeout_ms(timeout_ms)
            .with_topics(
                topics
                    .iter()
                    .map(|(t, ps)| {
                        ListOffsetsTopic::default().with_name(TopicName(StrBytes::from_string(t.clone()))).with_partitions(
                            ps.iter()
                                .map(|&p| ListOffsetsPartition::default().with_partition_index(p).with_timestamp(-1))
                                .collect(),
                        )
                    })
                    .collect(),
            );
        let response = target.call_at(&request, version, timeout)?;
        for t in &response.topics {
            for p in &t.partitions {
                check(&address, ApiKey::ListOffsets, p.error_code, None)?;
                out.insert(TopicPartition::new(t.name.0.as_str(), p.partition_index), p.offset);
            }
        }
    }
    Ok(out)
}

/// The group's committed offsets (`OffsetFetch` v8+) of `partitions`; a partition without a
/// committed offset counts 0, as in Kafka's leader (`ClientUtils.fetchCommittedOffsets`).
pub fn committed_offsets(
    conn: &mut Connection,
    partitions: &[&TopicPartition],
    group_id: &str,
) -> Result<BTreeMap<TopicPartition, i64>, ConnectionError> {
    let version = conn.version::<OffsetFetchRequest>()?;
    if version < 8 {
        return Err(ConnectionError::UnsupportedApi {
            broker: conn.broker().to_owned(),
            api: ApiKey::OffsetFetch,
            broker_versions: format!("up to {version}"),
            client_versions: "8 and above".into(),
        });
    }
    let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for p in partitions {
        by_topic.entry(p.topic.to_string()).or_default().push(p.partition);
    }
    let request = OffsetFetchRequest::default().with_groups(vec![
        OffsetFetchRequestGroup::default().with_group_id(GroupId(StrBytes::from_string(group_id.to_owned()))).with_topics(Some(
            by_topic
                .iter()
                .map(|(t, ps)| {
                    OffsetFetchRequestTopics::default()
                        .with_name(TopicName(StrBytes::from_string(t.clone())))
                        .with_partition_indexes(ps.clone())
                })
                .collect(),
        )),
    ]);
    let response = conn.call(&request)?;
    let mut out = BTreeMap::new();
    for g in &response.groups {
        check(conn.broker(), ApiKey::OffsetFetch, g.error_code, None)?;
        for t in &g.topics {
            for p in &t.partitions {
                check(conn.broker(), ApiKey::OffsetFetch, p.error_code, None)?;
                out.insert(TopicPartition::new(t.name.0.as_str(), p.partition_index), p.committed_offset.max(0));
            }
        }
    }
    Ok(out)
}
