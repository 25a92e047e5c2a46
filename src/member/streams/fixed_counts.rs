//! Which repartition topics' partition counts the application fixed
//! (`Repartitioned.withNumberOfPartitions`), told from what the coordinator describes.
//!
//! A member declares a repartition topic's partition count only when the application fixed it,
//! and 0 otherwise; the coordinator refuses a member whose declaration differs from the group's.
//! `StreamsGroupDescribe` gives the count the coordinator configured for each repartition topic,
//! which is either the fixed count or the one it derived, and the `Topology#describe()` text does
//! not print fixed counts. So the member derives each count as Kafka does ([`Tasks::build`], from
//! the external source topics' partition counts, with the co-partition groups) and where the
//! described count differs, the application must have fixed it: the member declares the
//! described count. Where they agree it declares 0: a count fixed to exactly the derived value
//! cannot be told apart (the coordinator refuses the join then, naming the topic; the topology
//! JSON's `repartitionTopics[].partitions` says it).
//!
//! A fixed count flows on: the repartition topics written from a topic with a fixed count are
//! derived from it. So the counts are told apart from the upstream end: a differing topic is
//! taken as fixed only once no differing topic feeds it, then the counts are derived again.

use std::collections::{BTreeMap, BTreeSet};

use crate::client::streams::HeartbeatTopology;
use crate::leader::{ClusterMetadata, Subtopology, Tasks, Topology};

/// Sets, in `declared`, the partition count of each repartition topic whose described count
/// (`described`, by topic; 0 or less: not configured) differs from the one derived from the
/// external source topics' partition counts (`sources`, or why they are unknown). Counts already
/// set (fixed by the topology file) stay. Returns what was found, for the origin line.
pub(crate) fn infer_fixed_counts(
    declared: &mut HeartbeatTopology,
    described: &BTreeMap<String, i32>,
    sources: &Result<BTreeMap<String, i32>, String>,
    group: &str,
) -> String {
    if declared.subtopologies.iter().all(|s| s.repartition_source_topics.is_empty()) {
        return String::new();
    }
    let unknown = |why: String| {
        format!(
            "repartition partition counts not told apart ({why}): every count the topology file does not fix is declared 0, \
             as derived; a count the application fixed would be refused by the coordinator"
        )
    };
    let sources = match sources {
        Ok(s) => s,
        Err(why) => return unknown(format!("the source topics' partition counts are unknown: {why}")),
    };
    let topology = match model(declared, group) {
        Ok(t) => t,
        Err(why) => return unknown(why),
    };
    let cluster = sources.iter().fold(ClusterMetadata::new(), |c, (t, n)| c.with_topic(t.clone(), *n));
    let mut fixed: BTreeMap<String, i32> =
        declared.subtopologies.iter().flat_map(|s| &s.repartition_source_topics).filter(|t| t.partitions > 0).map(|t| (t.name.clone(), t.partitions)).collect();
    let mut found: Vec<String> = Vec::new();
    let derived = loop {
        let mut with_fixed = topology.clone();
        for r in &mut with_fixed.repartition_topics {
            r.partitions = fixed.get(&kafka_name(group, &r.name)).copied();
        }
        let derived = match Tasks::build(&with_fixed, &cluster) {
            Ok(tasks) => tasks.repartition_topic_partitions,
            Err(e) => return unknown(format!("the counts cannot be derived: {e}")),
        };
        let differing: BTreeSet<&String> = described
            .iter()
            .filter(|(t, d)| **d > 0 && !fixed.contains_key(*t) && derived.get(*t).is_some_and(|n| n != *d))
            .map(|(t, _)| t)
            .collect();
        if differing.is_empty() {
            break derived;
        }
        let upstream_most: Vec<&String> = differing.iter().copied().filter(|t| !feeders(declared, t).iter().any(|u| differing.contains(u))).collect();
        let chosen = if upstream_most.is_empty() { differing.into_iter().collect() } else { upstream_most };
        for t in chosen {
            found.push(format!("{t} ({}, where the source topics give {})", described[t], derived[t]));
            fixed.insert(t.clone(), described[t]);
        }
    };
    for t in declared.subtopologies.iter_mut().flat_map(|s| s.repartition_source_topics.iter_mut()) {
        if let Some(&n) = fixed.get(&t.name) {
            t.partitions = n;
        }
    }
    let agreed: Vec<String> = described
        .iter()
        .filter(|(t, d)| **d > 0 && !fixed.contains_key(*t) && derived.get(*t) == Some(*d))
        .map(|(t, d)| format!("{t} ({d})"))
        .collect();
    let list = |items: &[String]| if items.is_empty() { "none".to_owned() } else { items.join(", ") };
    format!(
        "repartition partition counts the application fixed, told from the coordinator's: {}; declared 0 as derived \
         (the coordinator's count is the one the source topics give; a count fixed to that very value cannot be told apart): {}",
        list(&found),
        list(&agreed)
    )
}

/// The repartition topic's Kafka name (`<group>-<raw>`).
fn kafka_name(group: &str, raw: &str) -> String {
    format!("{group}-{raw}")
}

/// The repartition topics read by the sub-topologies that write `topic`.
fn feeders<'a>(declared: &'a HeartbeatTopology, topic: &str) -> Vec<&'a String> {
    declared
        .subtopologies
        .iter()
        .filter(|s| s.repartition_sink_topics.iter().any(|t| t == topic))
        .flat_map(|s| s.repartition_source_topics.iter().map(|t| &t.name))
        .collect()
}

/// The declaration as the leader's topology model: internal topics by their raw names (the
/// group is the application id), every repartition topic's count left to derive.
fn model(declared: &HeartbeatTopology, group: &str) -> Result<Topology, String> {
    let prefix = format!("{group}-");
    let raw = |name: &str| {
        name.strip_prefix(&prefix).map(str::to_owned).ok_or_else(|| format!("repartition topic {name} is not named after the group"))
    };
    let mut topology = Topology::new(group);
    let mut repartition = BTreeSet::new();
    for s in &declared.subtopologies {
        let id = s.subtopology_id.parse().map_err(|_| format!("sub-topology id {} is not a number", s.subtopology_id))?;
        let mut sub = Subtopology::new(id).with_source_topics(s.source_topics.iter().cloned());
        for t in &s.repartition_source_topics {
            let name = raw(&t.name)?;
            sub.source_topics.push(name.clone());
            repartition.insert(name);
        }
        for t in &s.repartition_sink_topics {
            sub.sink_topics.push(raw(t)?);
        }
        for g in &s.copartition_groups {
            let at = |i: i16| usize::try_from(i).ok();
            let mut topics: Vec<String> = g.source_topics.iter().filter_map(|&i| s.source_topics.get(at(i)?).cloned()).collect();
            for &i in &g.repartition_source_topics {
                if let Some(t) = at(i).and_then(|i| s.repartition_source_topics.get(i)) {
                    topics.push(raw(&t.name)?);
                }
            }
            topology = topology.with_copartition_group(topics);
        }
        topology = topology.with_subtopology(sub);
    }
    for name in repartition {
        topology = topology.with_repartition_topic(name, None);
    }
    Ok(topology)
}

#[cfg(test)]
#[path = "fixed_counts_tests.rs"]
mod tests;
