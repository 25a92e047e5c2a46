//! Standby placement that spreads the copies of a task over client tag values (KIP-708): Kafka's
//! `ClientTagAwareStandbyTaskAssignor`.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::StandbyTaskAssignor;
use crate::engine::kafka::priority_set::PrioritySet;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::jdk::hash_map::JavaHashMap;
use crate::wire::TaskId;

/// Places standbys on clients whose tags differ from the other copies' tags.
///
/// For each stateful task (in `TaskId` order), starting from the client with the active, Kafka
/// repeatedly excludes every client that shares a tag value with the client placed last, for each
/// configured tag key, until a key has no unused value left (from then on that key is ignored),
/// and gives the next standby to the least loaded remaining client without a copy. Standbys that
/// find no such client are placed at the end on the least loaded clients, visiting the tasks in
/// the iteration order of Kafka's `HashMap<TaskId, Integer>` (reproduced exactly, see
/// `jdk/hash_map.rs`).
///
/// # Arguments
/// * `model` - clients with their `client.tag.*` tags, stateful tasks, `num.standby.replicas`
///   (S) and `rack.aware.assignment.tags`.
/// * `placement` - one active per stateful task; standbys are added.
///
/// # Returns
/// Every stateful task gets `min(S, N − 1)` standbys (S ≥ 1). Kafka quirk kept: with S < 0 the
/// first placement attempt still runs, so each task gets one standby if a client qualifies.
///
/// # Complexity
/// O(T · S · (K + R · K)) for T stateful tasks, K tag keys and R clients rejected per poll (R can
/// reach N when many clients share the excluded tag values), plus O(T) to replay the `HashMap`.
/// Kafka re-offers all N clients to its queue for every task (O(T · N²) with
/// `PriorityQueue.remove`); here only the clients whose load changed are re-offered.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientTagAwareStandbyTaskAssignor;

impl StandbyTaskAssignor for ClientTagAwareStandbyTaskAssignor {
    fn assign(&self, model: &Model<'_>, placement: &mut Placement) {
        let standbys = model.input.configs.num_standby_replicas;
        let configured: HashSet<&str> = model.input.configs.rack_aware_assignment_tags.iter().map(String::as_str).collect();
        let tags = |c: Client| &model.clients[c].input.client_tags;

        // tagKeyToValues over all clients and all their tags.
        let mut values_per_key: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for c in 0..model.num_clients() {
            for (k, v) in tags(c) {
                values_per_key.entry(k).or_default().insert(v);
            }
        }

        // Kafka's tasksToRemainingStandbys: a HashMap filled in TaskId order.
        let mut remaining: JavaHashMap<&TaskId, i32> = JavaHashMap::new();
        for &t in &model.stateful_tasks {
            remaining.insert(model.tasks[t as usize], standbys);
        }

        let owner = placement.active_clients(model.tasks.len());

        let mut clients = PrioritySet::new(model.num_clients());
        // Clients polled for the previous task: Kafka re-offers every client before each task;
        // only these have a different load from when they were last offered.
        let mut to_reoffer: Vec<Client> = (0..model.num_clients()).collect();
        let mut used: Vec<(&str, &str)> = Vec::new();

        for &task in &model.stateful_tasks {
            let Some(active_client) = owner[task as usize] else { continue };
            for c in to_reoffer.drain(..) {
                clients.offer(c, placement.assigned_load(c));
            }
            used.clear();
            let mut used_clients = 1usize;
            let mut left = standbys;
            let mut last = active_client;
            loop {
                // updateClientsOnAlreadyUsedTagEntries(last, used_clients)
                for (key, value) in tags(last) {
                    if !configured.contains(key.as_str()) {
                        continue;
                    }
                    if values_per_key[key.as_str()].len() <= used_clients {
                        used.retain(|(k, _)| *k != key.as_str());
                    } else if !used.contains(&(key.as_str(), value.as_str())) {
                        used.push((key.as_str(), value.as_str()));
                    }
                }
                let excluded = |c: Client| used.iter().any(|&(k, v)| tags(c).get(k).map(String::as_str) == Some(v));
                let Some(c) = clients.poll(|c| !placement.has_assigned_task(c, task) && !excluded(c)) else { break };
                used_clients += 1;
                left -= 1;
                placement.assign_standby(c, task);
                to_reoffer.push(c);
                last = c;
                if left <= 0 {
                    break;
                }
            }
            let key = &model.tasks[task as usize];
            if left > 0 {
                remaining.insert(key, left);
            } else {
                remaining.remove(key);
            }
        }

        if remaining.is_empty() {
            return;
        }
        // assignPendingStandbyTasksToLeastLoadedClients, in HashMap order.
        for c in to_reoffer.drain(..) {
            clients.offer(c, placement.assigned_load(c));
        }
        let pending: Vec<(Task, i32)> = remaining.iter().map(|(t, &n)| (model.task_of(t), n)).collect();
        for (task, mut left) in pending {
            while left > 0 {
                let Some(c) = clients.poll(|c| !placement.has_assigned_task(c, task)) else { break };
                placement.assign_standby(c, task);
                clients.offer(c, placement.assigned_load(c));
                left -= 1;
            }
        }
    }

    /// Kafka: a standby may move only to a client that has the same value as the source for
    /// every tag the source has (all its tags, configured or not).
    fn is_allowed_task_movement(&self, model: &Model<'_>, source: Client, destination: Client) -> bool {
        let dest = &model.clients[destination].input.client_tags;
        model.clients[source].input.client_tags.iter().all(|(k, v)| dest.get(k) == Some(v))
    }

    /// Kafka: count the distinct `(key, value)` tags over the task's other holders plus the source,
    /// and plus the destination instead; the move is allowed if it does not lose any.
    fn is_allowed_standby_swap(
        &self,
        model: &Model<'_>,
        placement: &Placement,
        source: Client,
        destination: Client,
        task: Task,
    ) -> bool {
        let tags = |c: Client| model.clients[c].input.client_tags.iter();
        let mut with_source: HashSet<(&String, &String)> = HashSet::new();
        let mut with_destination = HashSet::new();
        for c in 0..model.num_clients() {
            if c != source && c != destination && placement.has_assigned_task(c, task) {
                with_source.extend(tags(c));
                with_destination.extend(tags(c));
            }
        }
        with_source.extend(tags(source));
        with_destination.extend(tags(destination));
        with_destination.len() >= with_source.len()
    }
}
