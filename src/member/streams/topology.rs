//! The topology a streams-protocol member declares when it joins. The coordinator takes the
//! first member's topology for the group and refuses any other one ("Topology updates are not
//! supported yet"), so a member joining beside Java members declares the group's own: it reads
//! it with `StreamsGroupDescribe`. A member that is first declares the one of its topology file,
//! built as Kafka Streams builds it (`StreamThread.initBrokerTopology`).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::connection::{Connection, ErrorCode};
use crate::client::streams::{
    self, CopartitionGroup, DescribedGroup, HeartbeatSubtopology, HeartbeatTopology, KeyValue, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, TopicInfo,
};
use crate::leader::Topology;
use crate::member::config::{MemberConfig, internal_topic_configs};

/// The group as its coordinator describes it (`StreamsGroupDescribe`): `Ok(None)` while there is
/// none (no member has joined yet, or the group does not exist).
pub(crate) fn describe_group(conn: &mut Connection, group: &str, timeout: Duration) -> Result<Option<DescribedGroup>, String> {
    let broker = conn.broker().to_owned();
    let (min, max) = conn.broker_versions(streams::API_KEY).ok_or_else(|| {
        format!("the broker at {broker} does not speak the streams group protocol (no StreamsGroupDescribe): it needs Kafka 4.2 or later")
    })?;
    let version = max.min(streams::MAX_VERSION);
    if version < min.max(streams::MIN_VERSION) {
        return Err(format!("the broker at {broker} speaks StreamsGroupDescribe {min}..={max}, this member 0..=1"));
    }
    let body = StreamsGroupDescribeRequest::new(vec![group.to_owned()]).encode(version).map_err(|e| e.to_string())?;
    let raw = conn
        .call_raw("StreamsGroupDescribe", streams::API_KEY, version, streams::REQUEST_HEADER_VERSION, &body, streams::RESPONSE_HEADER_VERSION, timeout)
        .map_err(|e| e.to_string())?;
    let response = StreamsGroupDescribeResponse::decode(&raw, version).map_err(|e| format!("the broker at {broker}: {e}"))?;
    let Some(g) = response.groups.into_iter().find(|g| g.group_id == group) else { return Ok(None) };
    match ErrorCode(g.error_code) {
        ErrorCode::NONE => Ok(Some(g)),
        // GROUP_ID_NOT_FOUND: nobody has joined yet.
        ErrorCode(69) => Ok(None),
        code => Err(format!("describing group {group}: {code}{}", g.error_message.map(|m| format!(": {m}")).unwrap_or_default())),
    }
}

/// The group's topology as its coordinator holds it: `Ok(None)` while the group has none (no
/// member has joined yet, or the group does not exist).
pub(crate) fn described(conn: &mut Connection, group: &str, timeout: Duration) -> Result<Option<HeartbeatTopology>, String> {
    let Some(g) = describe_group(conn, group, timeout)? else { return Ok(None) };
    let Some(topology) = g.topology else { return Ok(None) };
    let Some(subtopologies) = topology.subtopologies else { return Ok(None) };
    let subtopologies = subtopologies
        .into_iter()
        .map(|s| HeartbeatSubtopology {
            subtopology_id: s.subtopology_id,
            source_topics: s.source_topics,
            source_topic_regex: Vec::new(),
            state_changelog_topics: s.state_changelog_topics.into_iter().map(as_declared).collect(),
            repartition_sink_topics: s.repartition_sink_topics,
            repartition_source_topics: s.repartition_source_topics.into_iter().map(as_declared).collect(),
            copartition_groups: Vec::new(),
        })
        .collect();
    Ok(Some(HeartbeatTopology { epoch: topology.epoch, subtopologies }))
}

/// An internal topic as a member declared it, from what the coordinator describes: the
/// coordinator describes the topology it configured, with the partition counts it derived, where
/// members declare none (a changelog must not have one; a repartition topic of the DSL has none
/// unless `Repartitioned.numberOfPartitions` fixed it, a case that needs the topology file), and
/// its configs in any order, where members send them sorted by key.
fn as_declared(mut t: TopicInfo) -> TopicInfo {
    t.partitions = 0;
    t.topic_configs.sort_by(|a, b| a.key.cmp(&b.key));
    t
}

fn configs(map: BTreeMap<String, String>) -> Vec<KeyValue> {
    map.into_iter().map(|(key, value)| KeyValue { key, value }).collect()
}

/// The topology of a topology file as a Java member of it declares it: per subtopology its
/// external source topics, the repartition topics it writes and reads, its changelogs, with
/// `replication.factor` and the internal topics' configs (`topic.*` overrides included), every
/// list sorted by name as Java sorts it, and the co-partition groups as indexes.
pub(crate) fn from_file(topology: &Topology, config: &MemberConfig) -> HeartbeatTopology {
    let repartition_partitions: BTreeMap<String, i32> =
        topology.repartition_topics.iter().map(|r| (topology.topic_name(&r.name), r.partitions.unwrap_or(0))).collect();
    let subtopologies = topology
        .subtopologies
        .iter()
        .map(|s| {
            let mut source_topics = Vec::new();
            let mut repartition_sources = Vec::new();
            for t in &s.source_topics {
                if topology.is_repartition_topic(t) {
                    let name = topology.topic_name(t);
                    repartition_sources.push(TopicInfo {
                        partitions: repartition_partitions.get(&name).copied().unwrap_or(0),
                        name,
                        replication_factor: config.replication_factor,
                        topic_configs: configs(internal_topic_configs(true, &config.topic_configs)),
                    });
                } else {
                    source_topics.push(t.clone());
                }
            }
            source_topics.sort();
            repartition_sources.sort_by(|a, b| a.name.cmp(&b.name));
            let mut sinks: Vec<String> =
                s.sink_topics.iter().filter(|t| topology.is_repartition_topic(t)).map(|t| topology.topic_name(t)).collect();
            sinks.sort();
            let mut changelogs: Vec<TopicInfo> = s
                .stores
                .iter()
                .filter_map(|store| topology.changelog_topic(store))
                .map(|name| TopicInfo {
                    name,
                    partitions: 0,
                    replication_factor: config.replication_factor,
                    topic_configs: configs(internal_topic_configs(false, &config.topic_configs)),
                })
                .collect();
            changelogs.sort_by(|a, b| a.name.cmp(&b.name));
            let index = |name: &str, list: &[String]| list.iter().position(|t| t == name).and_then(|i| i16::try_from(i).ok());
            let repartition_names: Vec<String> = repartition_sources.iter().map(|t| t.name.clone()).collect();
            let copartition_groups = topology
                .copartition_groups
                .iter()
                .filter(|g| g.iter().all(|t| index(t, &source_topics).or(index(&topology.topic_name(t), &repartition_names)).is_some()))
                .map(|g| CopartitionGroup {
                    source_topics: g.iter().filter_map(|t| index(t, &source_topics)).collect(),
                    source_topic_regex: Vec::new(),
                    repartition_source_topics: g.iter().filter_map(|t| index(&topology.topic_name(t), &repartition_names)).collect(),
                })
                .collect();
            HeartbeatSubtopology {
                subtopology_id: s.id.to_string(),
                source_topics,
                source_topic_regex: Vec::new(),
                state_changelog_topics: changelogs,
                repartition_sink_topics: sinks,
                repartition_source_topics: repartition_sources,
                copartition_groups,
            }
        })
        .collect();
    HeartbeatTopology { epoch: 0, subtopologies }
}
