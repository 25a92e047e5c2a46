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
use crate::leader::tasks::java_set_order;
use crate::member::config::{MemberConfig, internal_topic_configs};
use crate::member::streams::events::StreamsMemberError;
use crate::member::streams::fixed_counts::infer_fixed_counts;

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
///
/// Beside it, the partition count the coordinator configured for each repartition topic (fixed
/// by the application, or derived), by topic: the declaration has 0, see [`declare`].
pub(crate) fn described(
    conn: &mut Connection,
    group: &str,
    timeout: Duration,
) -> Result<Option<DescribedTopology>, String> {
    let Some(g) = describe_group(conn, group, timeout)? else { return Ok(None) };
    let Some(topology) = g.topology else { return Ok(None) };
    let Some(subtopologies) = topology.subtopologies else { return Ok(None) };
    let counts = subtopologies.iter().flat_map(|s| &s.repartition_source_topics).map(|t| (t.name.clone(), t.partitions)).collect();
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
    Ok(Some((HeartbeatTopology { epoch: topology.epoch, subtopologies }, counts)))
}

/// The group's topology as a member declares it, and the coordinator's partition count per
/// repartition topic.
pub(crate) type DescribedTopology = (HeartbeatTopology, BTreeMap<String, i32>);

/// What tells a repartition topic's fixed partition count apart from a derived one: the counts
/// the coordinator describes and the external source topics' partition counts (or why they are
/// unknown). See `fixed_counts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counts {
    /// The coordinator's count per repartition topic.
    pub(crate) described: BTreeMap<String, i32>,
    /// The partition count per external source topic, or why they are unknown.
    pub(crate) sources: Result<BTreeMap<String, i32>, String>,
}

/// An internal topic as a member declared it, from what the coordinator describes: the
/// coordinator describes the topology it configured, with the partition counts it derived, where
/// members declare none (a changelog must not have one; a repartition topic of the DSL has none
/// unless `Repartitioned.numberOfPartitions` fixed it, told apart by `fixed_counts`), and
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
/// list sorted by name as Java sorts it, and the co-partition groups as indexes (in the order
/// Java iterates each group's set of topic names).
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
                .map(|g| {
                    // In the order Java iterates the group's set of topic names.
                    let names: Vec<String> = g.iter().map(|t| topology.topic_name(t)).collect();
                    let names = java_set_order(&names);
                    CopartitionGroup {
                        source_topics: names.iter().filter_map(|t| index(t, &source_topics)).collect(),
                        source_topic_regex: Vec::new(),
                        repartition_source_topics: names.iter().filter_map(|t| index(t, &repartition_names)).collect(),
                    }
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

/// The topology a member declares, and where each part of it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    /// The declaration.
    pub(crate) topology: HeartbeatTopology,
    /// Where its parts came from, in words: the group's description, the topology file, or both.
    pub(crate) origin: String,
}

/// The topology to declare, from what the coordinator describes (`described`, `None` while the
/// group has none) and the member's topology file, if any.
///
/// The coordinator compares a joining member's topology with the group's, field by field
/// (sources, repartition topics with their partition counts and configs, changelogs with their
/// configs, co-partition groups), and refuses any difference. `StreamsGroupDescribe` carries all
/// of it but two: the co-partition groups (the inputs of a join) and which repartition topics'
/// partition counts the application fixed (`Repartitioned.numberOfPartitions`; the describe
/// answer has the counts the coordinator configured, fixed or derived). So:
///
/// * no group topology: the file's, as Kafka Streams declares it ([`from_file`]);
/// * the group's and a file: the group's, with the co-partition groups and fixed counts of the
///   file, once the file's sub-topologies read and write the same topics as the group's;
/// * the group's and no file: the group's, when no sub-topology reads two topics or more (it has
///   no co-partition group then); otherwise a refusal that asks for the file, because the
///   co-partition groups of such a sub-topology cannot be known.
///
/// With the group's topology, each repartition topic's count not fixed by the file is the
/// coordinator's where it differs from the count derived from `counts` (the application fixed
/// it), else 0 (`fixed_counts`).
pub(crate) fn declare(
    described: Option<HeartbeatTopology>,
    file: Option<&Topology>,
    counts: &Counts,
    config: &MemberConfig,
) -> Result<Declared, StreamsMemberError> {
    let group = &config.group_id;
    match (described.map(sorted), file) {
        (None, Some(file)) => Ok(Declared {
            topology: from_file(file, config),
            origin: format!("the topology file's topology, as the first member of group {group} (it has none yet)"),
        }),
        (None, None) => Err(StreamsMemberError::Setup(format!(
            "group {group} has no topology yet: start a member of the application first, or give the member its topology file (--topology)"
        ))),
        (Some(group_topology), None) => {
            let joined: Vec<String> = group_topology
                .subtopologies
                .iter()
                .filter(|s| read_topics(s).len() >= 2)
                .map(|s| format!("sub-topology {} reads {}", s.subtopology_id, read_topics(s).join(", ")))
                .collect();
            if !joined.is_empty() {
                return Err(StreamsMemberError::Setup(format!(
                    "group {group}'s {}: the coordinator compares the co-partition groups of such a sub-topology (the inputs of a join), \
                     which it does not describe, so the member cannot declare them: give the application's topology with --topology FILE \
                     (its Topology#describe() text or the topology JSON)",
                    joined.join("; ")
                )));
            }
            let mut topology = group_topology;
            let inferred = infer_fixed_counts(&mut topology, &counts.described, &counts.sources, group);
            let origin = format!("group {group}'s topology, as its coordinator describes it");
            Ok(Declared { topology, origin: if inferred.is_empty() { origin } else { format!("{origin}; {inferred}") } })
        }
        (Some(group_topology), Some(file)) => {
            let from_file = from_file(file, config);
            let differences = differences(&group_topology, &from_file);
            if !differences.is_empty() {
                return Err(StreamsMemberError::TopologyMismatch(format!(
                    "the topology file is not the one of group {group}: {}; give the application's current Topology#describe() text",
                    differences.join("; ")
                )));
            }
            let mut declared = completed(group_topology, &from_file, group);
            let inferred = infer_fixed_counts(&mut declared.topology, &counts.described, &counts.sources, group);
            if !inferred.is_empty() {
                declared.origin = format!("{}; {inferred}", declared.origin);
            }
            Ok(declared)
        }
    }
}

/// The group's topology with every list sorted by name, as Kafka Streams declares it: the
/// coordinator describes them in an order of its own, and compares a joining member's lists, and
/// the co-partition groups' indexes into them, with the first member's.
fn sorted(mut t: HeartbeatTopology) -> HeartbeatTopology {
    for s in &mut t.subtopologies {
        s.source_topics.sort();
        s.repartition_sink_topics.sort();
        s.repartition_source_topics.sort_by(|a, b| a.name.cmp(&b.name));
        s.state_changelog_topics.sort_by(|a, b| a.name.cmp(&b.name));
    }
    t
}

/// The topics a sub-topology reads: its external sources, then its repartition sources.
fn read_topics(s: &HeartbeatSubtopology) -> Vec<String> {
    s.source_topics.iter().cloned().chain(s.repartition_source_topics.iter().map(|t| t.name.clone())).collect()
}

/// How the file's topology differs from the group's, in the topics each sub-topology reads
/// and writes: one phrase per difference, none when they agree.
fn differences(group: &HeartbeatTopology, file: &HeartbeatTopology) -> Vec<String> {
    let names = |list: &[TopicInfo]| list.iter().map(|t| t.name.clone()).collect::<std::collections::BTreeSet<_>>();
    let set = |list: &[String]| list.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    let show = |set: &std::collections::BTreeSet<String>| {
        if set.is_empty() { "none".to_owned() } else { set.iter().cloned().collect::<Vec<_>>().join(", ") }
    };
    // Whole sub-topologies first: a missing one also turns the topics between it and the others
    // into external topics of the file, which the differences of topics then name.
    let mut out: Vec<String> = group
        .subtopologies
        .iter()
        .filter(|g| !file.subtopologies.iter().any(|f| f.subtopology_id == g.subtopology_id))
        .map(|g| format!("the group has sub-topology {} (reading {}), the file does not", g.subtopology_id, read_topics(g).join(", ")))
        .collect();
    for f in &file.subtopologies {
        if !group.subtopologies.iter().any(|g| g.subtopology_id == f.subtopology_id) {
            out.push(format!("the file has sub-topology {} (reading {}), the group does not", f.subtopology_id, read_topics(f).join(", ")));
        }
    }
    for g in &group.subtopologies {
        let Some(f) = file.subtopologies.iter().find(|f| f.subtopology_id == g.subtopology_id) else { continue };
        let fields: [(&str, std::collections::BTreeSet<String>, std::collections::BTreeSet<String>); 4] = [
            ("source topics", set(&g.source_topics), set(&f.source_topics)),
            ("repartition topics read", names(&g.repartition_source_topics), names(&f.repartition_source_topics)),
            ("repartition topics written", set(&g.repartition_sink_topics), set(&f.repartition_sink_topics)),
            ("changelog topics", names(&g.state_changelog_topics), names(&f.state_changelog_topics)),
        ];
        for (what, in_group, in_file) in fields {
            if in_group != in_file {
                out.push(format!("sub-topology {}'s {what} are {} in the group, {} in the file", g.subtopology_id, show(&in_group), show(&in_file)));
            }
        }
    }
    out
}

/// The group's topology with what only the file carries: each sub-topology's co-partition
/// groups (as indexes into the group's own lists) and the repartition topics' fixed counts.
fn completed(mut group_topology: HeartbeatTopology, file: &HeartbeatTopology, group: &str) -> Declared {
    let mut joins = Vec::new();
    let mut fixed = Vec::new();
    for g in &mut group_topology.subtopologies {
        let Some(f) = file.subtopologies.iter().find(|f| f.subtopology_id == g.subtopology_id) else { continue };
        for t in &mut g.repartition_source_topics {
            if let Some(declared) = f.repartition_source_topics.iter().find(|d| d.name == t.name).filter(|d| d.partitions > 0) {
                t.partitions = declared.partitions;
                fixed.push(format!("{} ({})", t.name, t.partitions));
            }
        }
        let position = |name: &str, list: &[String]| list.iter().position(|t| t == name).and_then(|i| i16::try_from(i).ok());
        let group_repartition: Vec<String> = g.repartition_source_topics.iter().map(|t| t.name.clone()).collect();
        let file_repartition: Vec<String> = f.repartition_source_topics.iter().map(|t| t.name.clone()).collect();
        g.copartition_groups = f
            .copartition_groups
            .iter()
            .map(|c| {
                let sources: Vec<&String> = c.source_topics.iter().filter_map(|&i| f.source_topics.get(usize::try_from(i).ok()?)).collect();
                let repartition: Vec<&String> =
                    c.repartition_source_topics.iter().filter_map(|&i| file_repartition.get(usize::try_from(i).ok()?)).collect();
                let topics: Vec<String> = sources.iter().chain(repartition.iter()).map(|t| (*t).clone()).collect();
                joins.push(format!("sub-topology {}: {}", g.subtopology_id, topics.join(" + ")));
                CopartitionGroup {
                    source_topics: sources.iter().filter_map(|t| position(t, &g.source_topics)).collect(),
                    source_topic_regex: Vec::new(),
                    repartition_source_topics: repartition.iter().filter_map(|t| position(t, &group_repartition)).collect(),
                }
            })
            .collect();
    }
    let list = |items: Vec<String>| if items.is_empty() { "none".to_owned() } else { items.join("; ") };
    Declared {
        topology: group_topology,
        origin: format!(
            "group {group}'s topology as its coordinator describes it (sub-topologies, topics, replication factors, topic configs); \
             from the topology file, what the coordinator does not describe: co-partition groups {}, fixed repartition partition counts {}",
            list(joins),
            list(fixed)
        ),
    }
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
