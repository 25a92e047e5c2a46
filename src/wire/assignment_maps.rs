//! The typed maps a member reads from an `AssignmentInfo` (Java's `standbyTasks`,
//! `partitionsByHost`, `standbyPartitionsByHost`), built from the wire view: the entries put in
//! order as integers (or by table), then each map and set built once from sorted input.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::assignment_names::DictionaryIndexes;
use super::assignment_parts::{IndexedHostPartitions, PartitionsByHost, StandbyTask, Topics};
use super::java_string::JavaString;
use super::offset_sums::unnamed_order;
use super::types::{HostInfo, TaskId, TopicPartition};

/// Topic name Java gives a host-map partition whose dictionary index is unknown.
const UNKNOWN_TOPIC: &str = "null";

pub(super) fn host_info(host: &JavaString, port: i32) -> HostInfo {
    HostInfo::new(host.to_string_lossy().into_owned(), port)
}

/// Standby tasks and their partitions as Java reads them (a repeated task: the last wins).
pub(super) fn standby_tasks_map(standby: &[StandbyTask]) -> BTreeMap<TaskId, BTreeSet<TopicPartition>> {
    let mut topics = Topics::default();
    let mut entry = |s: &StandbyTask| {
        let partitions = match &s.partitions[..] {
            // A task usually has one input partition: one node, nothing to sort.
            [one] => {
                let mut set = BTreeSet::new();
                set.insert(topics.partition(one));
                set
            }
            many => many.iter().map(|p| topics.partition(p)).collect(),
        };
        (s.task.clone(), partitions)
    };
    if standby.is_empty() || standby.iter().any(|s| s.task.topology.is_some()) {
        return standby.iter().map(entry).collect();
    }
    // No task named: the tasks put in order as integers (placed by table when they fill their
    // rectangle, as a member's do), the last of a repeated task kept; the map's own sort then
    // finds the order made. In task order, the tasks of one sub-topology (which read the same
    // topics) come together, and their topic names are found without hashing.
    let order = unnamed_order(standby.len(), &|i| (standby[i].task.subtopology, standby[i].task.partition, 0));
    order.into_iter().map(|i| entry(&standby[i as usize])).collect()
}

/// A host map of a v5+ dictionary, as Java reads it (a repeated host: the last wins; an unknown
/// dictionary index: topic `null`, as Java prints it).
pub(super) fn resolve_indexed(topics: &[(i32, JavaString)], hosts: &[IndexedHostPartitions]) -> PartitionsByHost {
    // One slot per dictionary index, and a last one for an unknown index. A repeated index: the
    // last entry wins, as in Java's map.
    let indexes = DictionaryIndexes::of(topics);
    let unknown = topics.len();
    let mut names: Vec<Arc<str>> = vec![Arc::from(UNKNOWN_TOPIC); topics.len() + 1];
    for (index, topic) in topics {
        if let Some(at) = indexes.position(*index) {
            names[at] = Arc::from(&*topic.to_string_lossy());
        }
    }
    // Each slot's rank in name order (equal names, equal ranks): a host's partitions then sort
    // as integers.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_unstable_by(|&a, &b| names[a].cmp(&names[b]));
    // (A name's rank stands for it: the name of any of its slots, `ranked`, is the same text.)
    let mut rank = vec![0u64; names.len()];
    let mut ranked: Vec<Arc<str>> = vec![names[order[0]].clone()];
    for w in order.windows(2) {
        rank[w[1]] = rank[w[0]] + u64::from(names[w[1]] != names[w[0]]);
        if rank[w[1]] != rank[w[0]] {
            ranked.push(names[w[1]].clone());
        }
    }
    let infos: Vec<HostInfo> = hosts.iter().map(|h| host_info(&h.host, h.port)).collect();
    // A partition as one integer: its name's rank, then the partition with its sign flipped.
    let mut sorted: Vec<u64> = Vec::new();
    let mut set = |h: &IndexedHostPartitions| -> BTreeSet<TopicPartition> {
        sorted.clear();
        sorted.extend(h.partitions.iter().map(|&(index, partition)| {
            let slot = indexes.position(index).unwrap_or(unknown);
            (rank[slot] << 32) | u64::from(partition as u32 ^ 0x8000_0000)
        }));
        sorted.sort_unstable();
        sorted
            .iter()
            .map(|&key| TopicPartition { topic: ranked[(key >> 32) as usize].clone(), partition: (key as u32 ^ 0x8000_0000) as i32 })
            .collect()
    };
    // The hosts in order (a repeated host in wire order, so that the map keeps the last): by the
    // first 8 bytes of the name as one integer, the name and port where those tie.
    let prefix = |info: &HostInfo| {
        let mut head = [0u8; 8];
        let bytes = info.host.as_bytes();
        let n = bytes.len().min(8);
        head[..n].copy_from_slice(&bytes[..n]);
        u64::from_be_bytes(head)
    };
    let mut by_host: Vec<(u64, usize)> = infos.iter().enumerate().map(|(i, info)| (prefix(info), i)).collect();
    by_host.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| infos[a.1].cmp(&infos[b.1])).then(a.1.cmp(&b.1)));
    let mut infos: Vec<Option<HostInfo>> = infos.into_iter().map(Some).collect();
    by_host.into_iter().map(|(_, i)| (infos[i].take().expect("each host once"), set(&hosts[i]))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::assignment_parts::WirePartition;
    use proptest::prelude::*;

    /// What Java's reader does: each entry put into a map in wire order.
    fn standby_by_insert(standby: &[StandbyTask]) -> BTreeMap<TaskId, BTreeSet<TopicPartition>> {
        standby.iter().map(|s| (s.task.clone(), s.partitions.iter().map(WirePartition::to_topic_partition).collect())).collect()
    }

    fn hosts_by_insert(topics: &[(i32, JavaString)], hosts: &[IndexedHostPartitions]) -> PartitionsByHost {
        let names: BTreeMap<i32, String> = topics.iter().map(|(i, t)| (*i, t.to_string_lossy().into_owned())).collect();
        let name = |i: i32| names.get(&i).map_or(UNKNOWN_TOPIC, String::as_str);
        hosts
            .iter()
            .map(|h| (host_info(&h.host, h.port), h.partitions.iter().map(|&(i, p)| TopicPartition::new(name(i), p)).collect()))
            .collect()
    }

    fn standby_task() -> impl Strategy<Value = StandbyTask> {
        let task = (prop::option::weighted(0.1, prop::sample::select(vec!["a", "b"])), -2i32..4, -2i32..6)
            .prop_map(|(name, s, p)| name.map_or(TaskId::new(s, p), |n| TaskId::named(n, s, p)));
        let partition = (prop::sample::select(vec!["in", "other", "a-much-longer-topic-name-than-22"]), -1i32..3)
            .prop_map(|(t, p)| WirePartition { topic: JavaString::new(t), partition: p });
        (task, prop::collection::vec(partition, 0..4)).prop_map(|(task, parts)| StandbyTask { task, partitions: parts.into() })
    }

    fn indexed_host() -> impl Strategy<Value = IndexedHostPartitions> {
        let host = prop::sample::select(vec!["h", "h\u{0}", "host-longer-than-8", "host-longer-than-9", "é", ""]);
        (host, 0i32..3, prop::collection::vec((-1i32..6, -2i32..5), 0..12))
            .prop_map(|(host, port, partitions)| IndexedHostPartitions { host: JavaString::new(host), port, partitions })
    }

    proptest! {
        /// Both maps are what inserting the wire entries in order gives: repeated, unordered,
        /// named and negative tasks; repeated hosts, indexes and partitions; unknown indexes.
        #[test]
        fn the_maps_are_those_of_inserting_in_wire_order(
            standby in prop::collection::vec(standby_task(), 0..40),
            dictionary in prop::collection::vec((-1i32..5, prop::sample::select(vec!["x", "y", "z", "y"])), 0..6),
            hosts in prop::collection::vec(indexed_host(), 0..12),
        ) {
            prop_assert_eq!(standby_tasks_map(&standby), standby_by_insert(&standby));
            let topics: Vec<(i32, JavaString)> = dictionary.iter().map(|&(i, t)| (i, JavaString::new(t))).collect();
            prop_assert_eq!(resolve_indexed(&topics, &hosts), hosts_by_insert(&topics, &hosts));
        }
    }
}
