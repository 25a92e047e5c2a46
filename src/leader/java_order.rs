//! The Java collection orders the leader's results depend on: the iteration order of a JDK 17
//! `java.util.HashSet`/`HashMap` filled without removals, and the array of a
//! `java.util.PriorityQueue<TaskId>`.
//!
//! What a member is sent also holds Java hash orders: `AssignmentInfo` writes the standby task map,
//! the host maps, their partition sets and the v5+ topic dictionary in the iteration order of the
//! `HashMap`s and `HashSet`s the leader built them in. [`java_partitions_for_task`],
//! [`java_host_maps`], [`java_standby_tasks`] and [`java_host_maps_form`] rebuild those collections
//! as Java does, with the engine's full `HashMap` replay (tree bins included).
//!
//! Kafka's repartition fixpoint walks a `HashSet<TopicsInfo>` and `HashMap<String, _>`s;
//! `assignTasksToThreads` builds its queue of unassigned tasks from a `HashSet<TaskId>` and hands
//! out the last tasks by iterating the queue's array. The collections themselves are the crate's
//! one replay of the JDK's (`crate::jdk`), tree bins included.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet;

use super::in_turn::in_turn;
use super::tasks::Tasks;
use super::topology::Topology;
use crate::jdk::cmp::{JavaComparable, cmp_task_ids};
use crate::jdk::hash::JavaHashCode;
use crate::jdk::hash_map::{JavaHashMap, JavaHashSet};
use crate::jdk::hash_set::hash_set_order_by;
use crate::jdk::priority_queue::{JavaPriorityQueue, NaturalOrder};
use crate::wire::assignment_info::{HostPartitions, IndexedHostPartitions, StandbyTask, WirePartition};
use crate::wire::{HostInfo, HostMaps, JavaString, TaskId, TopicPartition};

/// A host map in Java's iteration order: each host with its partitions in its set's order.
pub(crate) type OrderedHostMap = Vec<(HostInfo, Vec<TopicPartition>)>;

/// The source topics of sub-topology `id` in the iteration order of `TopicsInfo.sourceTopics`, a
/// `new HashSet<String>()` filled in the topology's order of source topics.
fn source_topic_order(topology: &Topology, id: i32) -> Vec<String> {
    let mut set = JavaHashSet::new();
    for topic in topology.subtopology(id).into_iter().flat_map(|s| &s.source_topics) {
        set.add(topology.topic_name(topic));
    }
    set.keys().cloned().collect()
}

/// Every task's input partitions in the iteration order of Kafka's `partitionsForTask` set (see
/// [`java_partitions_for_task`]).
pub(crate) struct JavaTaskPartitions<'a> {
    /// The tasks' partitions as built.
    tasks: &'a BTreeMap<TaskId, Vec<TopicPartition>>,
    /// The partitions of the tasks whose Java order differs from the order built in.
    reordered: BTreeMap<TaskId, Vec<TopicPartition>>,
}

impl<'a> JavaTaskPartitions<'a> {
    /// Partition lists that are in Java's order already.
    #[cfg(test)]
    pub(crate) fn in_given_order(tasks: &'a BTreeMap<TaskId, Vec<TopicPartition>>) -> Self {
        Self { tasks, reordered: BTreeMap::new() }
    }

    /// The partitions of `task` in Java's order.
    pub(crate) fn get(&self, task: &TaskId) -> Option<&[TopicPartition]> {
        self.reordered.get(task).or_else(|| self.tasks.get(task)).map(Vec::as_slice)
    }
}

/// Every task's input partitions in the iteration order of Kafka's `partitionsForTask` set
/// (`PartitionGrouper.partitionGroups`: a `new HashSet<>(sourceTopics.size())` filled by walking
/// the sub-topology's source topics).
///
/// The source-topic set is filled in the topology's order of source topics, which is Kafka's
/// order when the topics are listed as its source nodes add them; two source topics of one
/// sub-topology that share a bucket of that set are the only case where Java's order can differ.
///
/// A task of one partition (of one source topic) is read from `tasks` as it is, since a set of
/// one iterates as itself: a large topology's tasks mostly are, and need no copy.
pub(crate) fn java_partitions_for_task<'a>(topology: &Topology, tasks: &'a Tasks) -> JavaTaskPartitions<'a> {
    let mut topic_orders: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    let reordered = tasks
        .partitions_for_task
        .iter()
        .filter(|(_, parts)| parts.len() > 1)
        .map(|(task, parts)| {
            let topics = topic_orders.entry(task.subtopology).or_insert_with(|| source_topic_order(topology, task.subtopology));
            let mut set = JavaHashSet::with_capacity(topics.len());
            for topic in topics.iter() {
                if let Some(tp) = parts.iter().find(|tp| *tp.topic == **topic) {
                    set.add(tp.clone());
                }
            }
            // Partitions of topics the topology does not list (none when the tasks were built
            // from it) go last.
            for tp in parts {
                if !set.contains_key(tp) {
                    set.add(tp.clone());
                }
            }
            (task.clone(), set.keys().cloned().collect())
        })
        .collect();
    JavaTaskPartitions { tasks: &tasks.partitions_for_task, reordered }
}

/// `partitionsByHost` and `standbyPartitionsByHost` as `populatePartitionsByHostMaps` builds them:
/// clients in `clientMetadataMap` order (`clients`, see [`java_client_order`]), each client with
/// an endpoint putting a `new HashSet<TopicPartition>()` filled from its active (standby) tasks,
/// ascending (a `TreeSet`), into a `new HashMap<HostInfo, _>()`. A second client with the same
/// endpoint replaces the first one's sets and keeps its position.
///
/// The clients' sets are built on up to `threads` threads, each taking a share of the clients
/// in order; the maps are then filled in order.
pub(crate) fn java_host_maps<'a>(
    clients: impl IntoIterator<Item = (&'a HostInfo, &'a [TaskId], &'a [TaskId])>,
    partitions_for_task: &JavaTaskPartitions<'_>,
    threads: usize,
) -> (OrderedHostMap, OrderedHostMap) {
    // The sets and maps hold references; the partitions are copied once, into the result.
    // Distinct tasks have distinct partitions, so each set's order is that of its partitions
    // added once each.
    let set_of = |tasks: &[TaskId]| -> Vec<&TopicPartition> {
        let mut sorted: Vec<&TaskId> = tasks.iter().collect();
        sorted.sort_by(|a, b| cmp_task_ids(a, b));
        sorted.dedup();
        hash_set_order(sorted.into_iter().flat_map(|t| partitions_for_task.get(t).unwrap_or_default()), |tp| tp.java_hash_code())
    };
    let clients: Vec<_> = clients.into_iter().collect();
    let sets_of = |share: &[(&HostInfo, &[TaskId], &[TaskId])]| -> Vec<_> {
        share.iter().map(|&(_, active, standby)| (set_of(active), set_of(standby))).collect()
    };
    let shares: Vec<_> = clients.chunks(clients.len().div_ceil(threads.max(1)).max(1)).collect();
    let sets = in_turn(threads, shares.len(), |i| sets_of(shares[i])).into_iter().flatten();
    let mut active = JavaHashMap::new();
    let mut standby = JavaHashMap::new();
    for (&(host, _, _), (active_set, standby_set)) in clients.iter().zip(sets) {
        active.insert(host, active_set);
        standby.insert(host, standby_set);
    }
    let ordered = |map: JavaHashMap<&HostInfo, Vec<&TopicPartition>>| {
        map.iter().map(|(&h, set)| (h.clone(), set.iter().map(|&tp| tp.clone()).collect())).collect()
    };
    (ordered(active), ordered(standby))
}

/// The order in which `StreamsPartitionAssignor.assign` visits the members: the iteration of
/// the subscriptions, a `new HashMap<String, Subscription>()` that `ConsumerCoordinator` fills
/// with the JoinGroup members in order. Yields indices into `member_ids` (distinct ids).
pub(crate) fn java_subscription_order<'a>(member_ids: impl Iterator<Item = &'a str>) -> Vec<usize> {
    let mut subscriptions = JavaHashMap::new();
    for (i, id) in member_ids.enumerate() {
        subscriptions.insert(id, i);
    }
    subscriptions.iter().map(|(_, &i)| i).collect()
}

/// The order of `clientMetadataMap`, a `new HashMap<ProcessId, _>()` into which each process is
/// put when its first member comes up in the iteration of the subscriptions
/// ([`java_subscription_order`]). `visited`: the client of each member in that order (excluded
/// members left out).
pub(crate) fn java_client_order<P>(visited: impl IntoIterator<Item = P>) -> Vec<P>
where
    P: JavaHashCode + JavaComparable + Eq + Clone,
{
    let mut clients = JavaHashSet::new();
    for p in visited {
        if !clients.contains_key(&p) {
            clients.add(p);
        }
    }
    clients.keys().cloned().collect()
}

/// A member's standby task map as `buildStandbyTaskMap` fills its `new HashMap<TaskId, _>()`:
/// the thread split's standby tasks in their order, then the held-back active tasks kept as
/// standbys, ascending; each with its `partitionsForTask` set.
pub(crate) fn java_standby_tasks<'a>(
    standby_order: impl IntoIterator<Item = &'a TaskId>,
    standby: &BTreeMap<TaskId, Vec<TopicPartition>>,
    partitions_for_task: &JavaTaskPartitions<'_>,
) -> Vec<StandbyTask> {
    // A task put again keeps its place and its (same) partitions: each task is added once.
    let mut seen: BTreeSet<&TaskId> = BTreeSet::new();
    let given: Vec<&TaskId> = standby_order.into_iter().filter(|t| standby.contains_key(*t) && seen.insert(*t)).collect();
    let mut rest: Vec<&TaskId> = standby.keys().filter(|t| !seen.contains(t)).collect();
    rest.sort_by(|a, b| cmp_task_ids(a, b));
    hash_set_order(given.into_iter().chain(rest), |t| task_hash(t))
        .into_iter()
        .map(|task| {
            let parts = partitions_for_task.get(task).unwrap_or_else(|| &standby[task][..]);
            StandbyTask { task: task.clone(), partitions: parts.iter().map(WirePartition::from).collect() }
        })
        .collect()
}

/// The host maps as `AssignmentInfo.encode` writes them at `version`: inline topic names at
/// v2–4; from v5 a topic dictionary built while walking every host's set (active hosts, then,
/// from v6, standby hosts) into a `HashSet` (`Collectors.toSet()`), numbered in that set's order
/// and written in the order of its `HashMap<String, Integer>`.
pub(crate) fn java_host_maps_form(version: i32, active: &OrderedHostMap, standby: &OrderedHostMap) -> HostMaps {
    if version < 5 {
        return HostMaps::Plain(
            active
                .iter()
                .map(|(h, parts)| HostPartitions {
                    host: JavaString::new(&h.host),
                    port: h.port,
                    partitions: parts.iter().map(WirePartition::from).collect(),
                })
                .collect(),
        );
    }
    let standby: &[(HostInfo, Vec<TopicPartition>)] = if version >= 6 { standby } else { &[] };
    // A partition can be active on one host and standby on another; adding it again leaves the
    // set as it was.
    let mut seen: FxHashSet<&TopicPartition> = FxHashSet::default();
    let distinct = active.iter().chain(standby).flat_map(|(_, parts)| parts).filter(|tp| seen.insert(*tp));
    let all = hash_set_order(distinct, |tp| tp.java_hash_code());
    let mut dictionary: JavaHashMap<String, i32> = JavaHashMap::new();
    for tp in all {
        if !dictionary.contains_key(&*tp.topic) {
            let next = dictionary.len() as i32;
            dictionary.insert(tp.topic.to_string(), next);
        }
    }
    let indexed = |map: &[(HostInfo, Vec<TopicPartition>)]| -> Vec<IndexedHostPartitions> {
        map.iter()
            .map(|(h, parts)| {
                // Partitions of one topic mostly come together: its index is looked up once.
                let mut last: Option<(&str, i32)> = None;
                let mut partitions = Vec::with_capacity(parts.len());
                for tp in parts {
                    let index = match last {
                        Some((t, i)) if t == &*tp.topic => i,
                        _ => {
                            let i = dictionary.get(&*tp.topic).copied().unwrap_or(-1);
                            last = Some((&tp.topic, i));
                            i
                        }
                    };
                    partitions.push((index, tp.partition));
                }
                IndexedHostPartitions { host: JavaString::new(&h.host), port: h.port, partitions }
            })
            .collect()
    };
    HostMaps::Dictionary {
        topics: dictionary.iter().map(|(topic, i)| (*i, JavaString::new(topic))).collect(),
        active: indexed(active),
        standby: indexed(standby),
    }
}

/// `TaskId.hashCode()`: `Objects.hash(subtopology, partition, topologyName)`.
pub(crate) fn task_hash(task: &TaskId) -> i32 {
    task.java_hash_code()
}

/// The iteration order of a `new HashSet<>()` of distinct, `Comparable` `items` added in the
/// given order, where `hash` is their `hashCode()` (tree bins included).
pub(crate) fn hash_set_order<T: JavaComparable>(items: impl IntoIterator<Item = T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    hash_set_order_by(items, hash, T::java_cmp)
}

/// `java.util.PriorityQueue<TaskId>` with natural ordering, array for array.
pub(crate) type TaskQueue = JavaPriorityQueue<TaskId, NaturalOrder<TaskId>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdk::hash::string_hash;
    use crate::wire::ProcessId;

    fn t(s: i32, p: i32) -> TaskId {
        TaskId::new(s, p)
    }

    #[test]
    fn task_hashes_match_java() {
        // Objects.hash(a, b, c) = 31·(31·(31 + a) + b) + c, with "ab".hashCode() = 3105.
        assert_eq!(task_hash(&t(0, 0)), 29_791);
        assert_eq!(task_hash(&t(1, 2)), (31 * (31 * (31 + 1) + 2)));
        assert_eq!(task_hash(&TaskId::named("ab", 1, 2)), 31 * (31 * (31 + 1) + 2) + 3105);
    }

    #[test]
    fn string_hashes_match_java() {
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("ab"), 3105);
        // "polygenelubricants".hashCode() is Integer.MIN_VALUE.
        assert_eq!(string_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn small_sets_iterate_by_bucket() {
        // Buckets of 16: 0_0 → 29791 & 15 = 15, 0_1 → 29822 & 15 = 14, 1_0 → 30752 & 15 = 0.
        let order = hash_set_order([t(0, 0), t(0, 1), t(1, 0)], task_hash);
        assert_eq!(order, [t(1, 0), t(0, 1), t(0, 0)]);
    }

    fn tp(topic: &str, p: i32) -> TopicPartition {
        TopicPartition::new(topic, p)
    }

    fn names(parts: &[TopicPartition]) -> Vec<String> {
        parts
            .iter()
            .map(|tp| format!("{}-{}", tp.topic, tp.partition))
            .collect()
    }

    // The expected orders below were printed by JDK 17 with kafka-clients/kafka-streams 4.4.0's
    // TopicPartition and HostInfo.

    #[test]
    fn host_sets_and_dictionary_follow_java() {
        assert_eq!(tp("text-lines", 3).java_hash_code(), 756_307_581);
        assert_eq!(
            HostInfo::new("host-1", 8080).java_hash_code(),
            1_098_651_588
        );
        // 40 partitions added task by task: the set resizes twice on the way.
        let partitions: BTreeMap<TaskId, Vec<TopicPartition>> = (0..20)
            .map(|p| {
                (
                    TaskId::new(0, p),
                    vec![tp("wc-words-repartition", p), tp("text-lines", p)],
                )
            })
            .collect();
        let host = HostInfo::new("h", 1);
        let tasks: Vec<TaskId> = partitions.keys().cloned().collect();
        let (active, standby) = java_host_maps([(&host, &tasks[..], &[][..])], &JavaTaskPartitions::in_given_order(&partitions), 1);
        let want = "text-lines-12,wc-words-repartition-2,text-lines-10,wc-words-repartition-0,text-lines-16,text-lines-14,\
                    text-lines-4,text-lines-2,text-lines-8,text-lines-6,wc-words-repartition-18,wc-words-repartition-16,\
                    wc-words-repartition-14,wc-words-repartition-12,wc-words-repartition-10,text-lines-18,\
                    wc-words-repartition-8,wc-words-repartition-6,wc-words-repartition-4,wc-words-repartition-3,\
                    text-lines-11,wc-words-repartition-1,text-lines-9,text-lines-15,text-lines-13,text-lines-3,\
                    text-lines-1,text-lines-7,text-lines-5,wc-words-repartition-19,wc-words-repartition-17,\
                    text-lines-0,wc-words-repartition-15,wc-words-repartition-13,wc-words-repartition-11,\
                    text-lines-19,wc-words-repartition-9,text-lines-17,wc-words-repartition-7,wc-words-repartition-5";
        assert_eq!(names(&active[0].1), want.split(',').collect::<Vec<_>>());
        assert_eq!((standby.len(), standby[0].1.len()), (1, 0));
        // The dictionary numbers topics by first appearance in that set and is written in the
        // order of its HashMap: {wc-words-repartition=1, text-lines=0}.
        let HostMaps::Dictionary { topics, .. } = java_host_maps_form(11, &active, &standby) else {
            panic!()
        };
        let topics: Vec<(i32, String)> = topics
            .iter()
            .map(|(i, t)| (*i, t.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            topics,
            [
                (1, "wc-words-repartition".to_string()),
                (0, "text-lines".to_string())
            ]
        );
    }

    #[test]
    fn a_task_set_of_three_source_topics_follows_java() {
        let topic = "app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000017-topic";
        let topology = Topology::new("app").with_subtopology(
            crate::leader::Subtopology::new(0).with_source_topics(["orders", "customers", topic]),
        );
        let metadata = crate::leader::ClusterMetadata::new()
            .with_topic("orders", 6)
            .with_topic("customers", 6)
            .with_topic(topic, 6);
        let tasks = Tasks::build(&topology, &metadata).unwrap();
        let parts = java_partitions_for_task(&topology, &tasks);
        assert_eq!(
            names(parts.get(&TaskId::new(0, 5)).unwrap()),
            [
                format!("{topic}-5"),
                "orders-5".into(),
                "customers-5".into()
            ]
        );
    }

    #[test]
    fn hosts_keep_their_first_position_and_last_sets() {
        let hosts: Vec<HostInfo> = (1..=6)
            .map(|h| HostInfo::new(format!("host-{h}"), 8080))
            .chain([HostInfo::new("host-2", 8080)])
            .collect();
        let partitions: BTreeMap<TaskId, Vec<TopicPartition>> = (1..=7)
            .map(|p| (TaskId::new(0, p), vec![tp("t", p)]))
            .collect();
        let tasks: Vec<Vec<TaskId>> = (1..=7).map(|p| vec![TaskId::new(0, p)]).collect();
        let (active, _) = java_host_maps(
            hosts.iter().zip(&tasks).map(|(h, t)| (h, &t[..], &[][..])),
            &JavaTaskPartitions::in_given_order(&partitions),
            1,
        );
        let got: Vec<String> = active
            .iter()
            .map(|(h, parts)| format!("{}={}", h.host, parts[0].partition))
            .collect();
        assert_eq!(
            got,
            [
                "host-6=6", "host-1=1", "host-5=5", "host-4=4", "host-3=3", "host-2=7"
            ]
        );
    }

    #[test]
    fn clients_come_in_subscription_map_order() {
        // JDK 17 iterates a HashMap of these member ids as m-3-0-311, m-3-1-44, leader-1,
        // m-1-1-902, m-1-0-17, m-3-2-650, m-2-0-5. The process ids 1, 0x11 and 0x21 share a
        // bucket, so clientMetadataMap iterates them in that order of first appearance (printed
        // by JDK 17 with Kafka's ProcessId); leader-1 is no client here.
        let pid = |n: u128| ProcessId(uuid::Uuid::from_u128(n));
        let members: Vec<(String, Option<ProcessId>)> = [
            ("m-1-0-17", Some(pid(0x11))),
            ("m-1-1-902", Some(pid(0x11))),
            ("m-2-0-5", Some(pid(0x21))),
            ("m-3-0-311", Some(pid(1))),
            ("m-3-1-44", Some(pid(1))),
            ("m-3-2-650", Some(pid(1))),
            ("leader-1", None),
        ]
        .into_iter()
        .map(|(m, p)| (m.to_string(), p))
        .collect();
        let visited = java_subscription_order(members.iter().map(|(id, _)| id.as_str())).into_iter().filter_map(|i| members[i].1);
        assert_eq!(java_client_order(visited), [pid(1), pid(0x11), pid(0x21)]);
    }
}
