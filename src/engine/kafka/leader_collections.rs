//! The hash-ordered collections Kafka Streams' leader hands to its assignors.
//!
//! The legacy sticky assignor iterates the task sets and the client map it is given, so its
//! decisions depend on their `HashMap`/`HashSet` iteration order, which depends on how the leader
//! (`StreamsPartitionAssignor`, 4.4.0) built them. This module replays that construction:
//!
//! 1. `topicGroups`: a `HashMap<Subtopology, …>` filled by one `putAll` of the sub-topologies in
//!    ascending id order (the topology builder's `LinkedHashMap`);
//! 2. `sourceTopicsByGroup`: a new `HashMap` filled in `topicGroups` order;
//! 3. `partitionsForTask` (`PartitionGrouper`): a new `HashMap<TaskId, …>` filled per sub-topology
//!    in `sourceTopicsByGroup` order, partitions ascending. Its key set is `allTasks`;
//! 4. `tasksForTopicGroup`: a `HashMap<Subtopology, HashSet<TaskId>>` filled in `allTasks` order;
//! 5. `ChangelogTopics.changelogPartitionsForStatefulTask`: a new `HashMap<TaskId, …>` filled, for
//!    each stateful sub-topology in `topicGroups` order, in `tasksForTopicGroup` order;
//! 6. `statefulTasks`: a new `HashSet<TaskId>` that `addAll`s step 5's key set;
//! 7. `clientStates`: a `HashMap<ProcessId, ClientState>` filled in the order of
//!    `clientMetadataMap`, itself a `HashMap` filled as members' subscriptions are read.
//!
//! Members' arrival order is not part of the input. Only clients whose process ids share a hash
//! bucket keep their arrival order in step 7; this module lets them arrive in ascending Java
//! `ProcessId` order, so the result does not depend on the input's client order.
//!
//! Sub-topologies are taken to be those of the tasks; a sub-topology counts as stateful when it
//! has a stateful task, and only its stateful tasks enter step 5 (in Kafka a sub-topology's tasks
//! are all stateful or all stateless).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::engine::model::{Client, Model, Task};
use crate::jdk::cmp::{JavaComparable, cmp_java_strings};
use crate::jdk::hash::{JavaHashCode, objects_hash, string_hash};
use crate::jdk::hash_map::{JavaHashMap, JavaHashSet};
use crate::wire::{ProcessId, TaskId};

/// `TopologyMetadata.Subtopology`: a sub-topology id and an optional topology name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Subtopology {
    id: i32,
    topology: Option<std::sync::Arc<str>>,
}

impl JavaHashCode for Subtopology {
    /// `Objects.hash(nodeGroupId, namedTopology)`.
    fn java_hash_code(&self) -> i32 {
        objects_hash(&[self.id, self.topology.as_deref().map_or(0, string_hash)])
    }
}

impl JavaComparable for Subtopology {
    /// `Subtopology.compareTo`: id, then topology name (null first).
    fn java_cmp(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id).then_with(|| match (&self.topology, &other.topology) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => cmp_java_strings(a, b),
        })
    }
}

/// `Subtopology.compareTo` as a key: id, then the name as UTF-16 (`None` first).
type SubtopologyOrder = (i32, Option<Vec<u16>>);
/// A sub-topology, its tasks in partition order, and whether it has a stateful task.
type SubtopologyTasks = (Subtopology, Vec<Task>, bool);

/// The leader's collections, as orders over the model's indices.
#[derive(Debug)]
pub(crate) struct LeaderCollections {
    /// `allTasks` (`partitionsForTask.keySet()`) in iteration order.
    pub(crate) all_tasks: Vec<Task>,
    /// `statefulTasks` in iteration order.
    pub(crate) stateful_tasks: Vec<Task>,
    /// `clientStates` in iteration order.
    pub(crate) clients: Vec<Client>,
}

impl LeaderCollections {
    /// Replays the leader's construction for `model`.
    ///
    /// Complexity: O(T + N) expected for T tasks and N clients.
    pub(crate) fn new(model: &Model<'_>) -> Self {
        let sub_of = |t: &TaskId| Subtopology { id: t.subtopology, topology: t.topology.clone() };

        // Tasks per sub-topology, sub-topologies in Subtopology.compareTo order (id, then name
        // with null first), tasks ascending.
        let mut by_sub: BTreeMap<SubtopologyOrder, SubtopologyTasks> = BTreeMap::new();
        for (t, task) in model.tasks.iter().enumerate() {
            let key = (task.subtopology, task.topology.as_deref().map(|n| n.encode_utf16().collect()));
            let entry = by_sub.entry(key).or_insert_with(|| (sub_of(task), Vec::new(), false));
            entry.1.push(t as Task);
            entry.2 |= model.stateful[t];
        }
        let subs: Vec<&SubtopologyTasks> = by_sub.values().collect();

        // 1. topicGroups: putAll into an empty HashMap pre-sizes it.
        let mut topic_groups: JavaHashMap<&Subtopology, usize> = JavaHashMap::presized_for_put_all(subs.len());
        for (i, (sub, _, _)) in subs.iter().enumerate() {
            topic_groups.insert(sub, i);
        }
        // 2. sourceTopicsByGroup.
        let mut source_topics_by_group: JavaHashMap<&Subtopology, usize> = JavaHashMap::new();
        for (sub, &i) in topic_groups.iter() {
            source_topics_by_group.insert(sub, i);
        }
        // 3. partitionsForTask.
        let mut partitions_for_task: JavaHashSet<&TaskId> = JavaHashSet::new();
        for (_, &i) in source_topics_by_group.iter() {
            for &t in &subs[i].1 {
                partitions_for_task.add(model.tasks[t as usize]);
            }
        }
        // 4. tasksForTopicGroup.
        let mut tasks_for_topic_group: Vec<JavaHashSet<&TaskId>> = subs.iter().map(|_| JavaHashSet::new()).collect();
        let index_of_sub: std::collections::HashMap<&Subtopology, usize> =
            subs.iter().enumerate().map(|(i, (sub, _, _))| (sub, i)).collect();
        for task in partitions_for_task.keys() {
            tasks_for_topic_group[index_of_sub[&sub_of(task)]].add(task);
        }
        // 5. changelogPartitionsForStatefulTask.
        let mut changelog_partitions: JavaHashSet<&TaskId> = JavaHashSet::new();
        for (_, &i) in topic_groups.iter() {
            if subs[i].2 {
                for task in tasks_for_topic_group[i].keys() {
                    if model.stateful[model.task_of(task) as usize] {
                        changelog_partitions.add(task);
                    }
                }
            }
        }
        // 6. statefulTasks.
        let mut stateful_tasks: JavaHashSet<&TaskId> = JavaHashSet::new();
        for task in changelog_partitions.keys() {
            stateful_tasks.add(task);
        }
        // 7. clientMetadataMap, then clientStates.
        let mut client_metadata: JavaHashMap<ProcessId, Client> = JavaHashMap::new();
        for (c, client) in model.clients.iter().enumerate() {
            client_metadata.insert(client.process_id, c);
        }
        let mut client_states: JavaHashMap<ProcessId, Client> = JavaHashMap::new();
        for (&pid, &c) in client_metadata.iter() {
            client_states.insert(pid, c);
        }

        Self {
            all_tasks: partitions_for_task.keys().map(|t| model.task_of(t)).collect(),
            stateful_tasks: stateful_tasks.keys().map(|t| model.task_of(t)).collect(),
            clients: client_states.iter().map(|(_, &c)| c).collect(),
        }
    }
}
