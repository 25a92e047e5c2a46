//! [`PartitionRacks`], the optimiser proper: the clients' racks, each task's partitions missing
//! from each rack, and the active-task optimisations (`min_traffic`, `balance_subtopology`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::optimizer::RackAwareOptimizer;
use crate::engine::config::RackAwareStrategy;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::flow::{CostMatrix, Graph, reassign};
use crate::wire::TaskId;

/// The rack-aware optimiser over the input's partition racks (Kafka's `RackAwareTaskAssignor`).
#[derive(Debug)]
pub(crate) struct PartitionRacks {
    pub(super) strategy: RackAwareStrategy,
    /// `canEnable`, once computed.
    pub(super) enabled: Option<bool>,
    /// Kafka's `validClientRack`, and the rack index of every client.
    pub(super) client_rack: Option<Vec<usize>>,
    /// Per task and rack index: input partitions with no replica on that rack (`None`: unknown).
    pub(super) input_miss: Vec<Option<Vec<u32>>>,
    /// The same for the changelog partitions.
    pub(super) changelog_miss: Vec<Option<Vec<u32>>>,
    pub(super) check_changelogs: bool,
    pub(super) stateful: Vec<bool>,
    /// Number of distinct client racks (the length of every `*_miss` entry).
    pub(super) racks: usize,
}

/// Kafka's `getCost` without the non-overlap term, tabulated: `traffic × misses` for every (task,
/// client rack), for one kind of partition (input or changelog; 0 where the racks are unknown).
pub(super) struct TrafficTable {
    pub(super) racks: usize,
    pub(super) cost: Vec<i32>,
}

impl TrafficTable {
    pub(super) fn get(&self, t: Task, rack: usize) -> i32 {
        self.cost[t as usize * self.racks + rack]
    }
}

impl PartitionRacks {
    /// Indexes the racks of the model's clients and partitions.
    pub(crate) fn new(model: &Model<'_>) -> Self {
        let mut rack_index: BTreeMap<&str, usize> = BTreeMap::new();
        let client_rack: Option<Vec<usize>> = model
            .clients
            .iter()
            .map(|c| {
                let rack = c.input.rack_id.as_deref()?;
                let next = rack_index.len();
                Some(*rack_index.entry(rack).or_insert(next))
            })
            .collect();
        let racks: Vec<&str> = {
            let mut v = vec![""; rack_index.len()];
            for (r, &i) in &rack_index {
                v[i] = r;
            }
            v
        };
        let miss = |parts: &[BTreeSet<String>]| -> Option<Vec<u32>> {
            if parts.is_empty() || parts.iter().any(BTreeSet::is_empty) {
                return None;
            }
            Some(racks.iter().map(|r| parts.iter().filter(|p| !p.contains(*r)).count() as u32).collect())
        };
        let partitions = |t: &TaskId| model.input.task_partitions.get(t);
        let input_miss = model.tasks.iter().map(|t| partitions(t).and_then(|p| miss(&p.input))).collect();
        let changelog_miss = model.tasks.iter().map(|t| partitions(t).and_then(|p| miss(&p.changelog))).collect();
        Self {
            strategy: model.input.configs.rack_aware_assignment_strategy,
            enabled: None,
            client_rack,
            input_miss,
            changelog_miss,
            check_changelogs: model.input.configs.num_standby_replicas != 0,
            stateful: model.stateful.clone(),
            racks: racks.len(),
        }
    }

    /// The [`TrafficTable`] of the input (`standby`: changelog) partitions for `traffic`.
    pub(super) fn traffic_table(&self, traffic: i32, standby: bool) -> TrafficTable {
        let miss = if standby { &self.changelog_miss } else { &self.input_miss };
        let mut cost = Vec::with_capacity(miss.len() * self.racks);
        for m in miss {
            match m {
                Some(m) => cost.extend(m.iter().map(|&k| traffic.wrapping_mul(k as i32))),
                None => cost.extend(std::iter::repeat_n(0, self.racks)),
            }
        }
        TrafficTable { racks: self.racks, cost }
    }

    /// Kafka's `getCost`.
    pub(super) fn cost(&self, t: Task, c: Client, current: bool, traffic: i32, non_overlap: i32, standby: bool) -> i32 {
        let miss = if standby { &self.changelog_miss } else { &self.input_miss };
        let rack = self.client_rack.as_ref().expect("enabled")[c];
        let misses = miss[t as usize].as_ref().expect("enabled")[rack];
        let cost = traffic.wrapping_mul(misses as i32);
        if current { cost } else { cost.wrapping_add(non_overlap) }
    }

    /// Kafka's `BalanceSubtopologyGraphConstructor` solved to a min-cost max-flow.
    ///
    /// Kafka's network has an edge from every task to every (sub-topology, client) node. Tasks of
    /// one sub-topology whose input partitions miss the same racks cost the same on every client
    /// they move to, so the network solved here gives each task one edge to stay where it is and
    /// one to a node shared by its class, from which the class's edges fan out to the clients:
    /// about `2 × tasks + classes × clients` edges instead of `tasks × clients`. Every placement
    /// of Kafka's network costs the same here and back, so the least cost is Kafka's (a task of a
    /// class is never routed back to its own client through the class node at a lower cost, as
    /// moving never costs less than staying; where that could happen — a negative
    /// `non_overlap_cost`, or costs that wrap — Kafka's network is built as it is).
    fn balance_subtopology(
        &self,
        model: &Model<'_>,
        tasks: &[Task],
        current: &[usize],
        cost: impl Fn(Task, Client, bool) -> i32,
    ) -> Option<Vec<usize>> {
        let n = model.num_clients();
        let t_len = tasks.len();
        let mut groups: BTreeMap<(Option<&str>, i32), Vec<usize>> = BTreeMap::new();
        for (i, &t) in tasks.iter().enumerate() {
            let id = &model.tasks[t as usize];
            groups.entry((id.topology.as_deref(), id.subtopology)).or_default().push(i);
        }
        let mut original = vec![0usize; n];
        for &c in current {
            original[c] += 1;
        }
        // Classes: (group, the racks the task's inputs miss), in first-seen order.
        let mut class_of = vec![0usize; t_len];
        let mut classes: Vec<(usize, usize)> = Vec::new(); // (group, representative task index)
        {
            let mut index: HashMap<(usize, &[u32]), usize> = HashMap::new();
            for (g, members) in groups.values().enumerate() {
                for &i in members {
                    let key = self.input_miss[tasks[i] as usize].as_deref().unwrap_or(&[]);
                    let next = classes.len();
                    let k = *index.entry((g, key)).or_insert(next);
                    if k == next {
                        classes.push((g, i));
                    }
                    class_of[i] = k;
                }
            }
        }
        let aggregate = classes.iter().all(|&(_, i)| (0..n).all(|c| cost(tasks[i], c, false) >= cost(tasks[i], c, true)));
        let g_len = groups.len();
        let k_len = if aggregate { classes.len() } else { 0 };
        let class_node = |k: usize| t_len + k;
        let stage1 = |g: usize, c: usize| t_len + k_len + g * n + c;
        let stage2 = |c: usize| t_len + k_len + g_len * n + c;
        let source = t_len + k_len + g_len * n + n;
        let sink = source + 1;
        let mut graph = Graph::new(sink + 1);
        let mut task_edges = vec![Vec::new(); t_len];
        let mut class_edges = vec![Vec::new(); k_len];
        let mut stay_edges = Vec::with_capacity(if aggregate { t_len } else { 0 });
        let mut class_size = vec![0i64; k_len];
        for (g, members) in groups.values().enumerate() {
            if aggregate {
                for &i in members {
                    let stay = graph.add_edge(i, stage1(g, current[i]), 1, i64::from(cost(tasks[i], current[i], true))).ok()?;
                    let moving = graph.add_edge(i, class_node(class_of[i]), 1, 0).ok()?;
                    stay_edges.push((i, stay, moving));
                    class_size[class_of[i]] += 1;
                }
            }
            for (c, &count) in original.iter().enumerate() {
                if !aggregate {
                    for &i in members {
                        let e = graph.add_edge(i, stage1(g, c), 1, i64::from(cost(tasks[i], c, current[i] == c))).ok()?;
                        task_edges[i].push((c, e));
                    }
                }
                let capacity =
                    if count > 0 { (count as f64 / t_len as f64 * members.len() as f64).ceil() as i64 } else { 0 };
                graph.add_edge(stage1(g, c), stage2(c), capacity, 0).ok()?;
            }
        }
        for (k, &(g, rep)) in classes.iter().enumerate().take(k_len) {
            for c in 0..n {
                let e = graph.add_edge(class_node(k), stage1(g, c), class_size[k], i64::from(cost(tasks[rep], c, false))).ok()?;
                class_edges[k].push((c, e));
            }
        }
        for i in 0..t_len {
            graph.add_edge(source, i, 1, 0).ok()?;
        }
        for (c, &count) in original.iter().enumerate() {
            graph.add_edge(stage2(c), sink, count as i64, 0).ok()?;
        }
        let solution = graph.min_cost_max_flow(source, sink).ok()?;
        if solution.flow != t_len as i64 {
            // Kafka throws here; the placement is kept.
            return None;
        }
        if !aggregate {
            return task_edges
                .iter()
                .map(|edges| edges.iter().find(|&&(_, e)| graph.flow(e) == 1).map(|&(c, _)| c))
                .collect::<Option<Vec<_>>>();
        }
        // Tasks that moved take their class's destinations in task order and client order.
        let mut next: Vec<Option<usize>> = vec![None; t_len];
        let mut movers: Vec<Vec<usize>> = vec![Vec::new(); k_len];
        let mut by_task = stay_edges;
        by_task.sort_unstable_by_key(|&(i, _, _)| i);
        for (i, stay, moving) in by_task {
            if graph.flow(stay) == 1 {
                next[i] = Some(current[i]);
            } else if graph.flow(moving) == 1 {
                movers[class_of[i]].push(i);
            }
        }
        for (k, edges) in class_edges.iter().enumerate() {
            let mut tasks_left = movers[k].iter();
            for &(c, e) in edges {
                for _ in 0..graph.flow(e) {
                    next[*tasks_left.next()?] = Some(c);
                }
            }
        }
        next.into_iter().collect()
    }
}

impl RackAwareOptimizer for PartitionRacks {
    fn can_enable(&mut self) -> bool {
        if self.strategy == RackAwareStrategy::None {
            return false;
        }
        if let Some(enabled) = self.enabled {
            return enabled;
        }
        let inputs = self.input_miss.iter().all(Option::is_some);
        let changelogs =
            !self.check_changelogs || self.stateful.iter().zip(&self.changelog_miss).all(|(&s, m)| !s || m.is_some());
        let enabled = self.client_rack.is_some() && inputs && changelogs;
        self.enabled = Some(enabled);
        enabled
    }

    fn optimize_active_tasks(
        &mut self,
        model: &Model<'_>,
        tasks: &[Task],
        placement: &mut Placement,
        traffic_cost: i32,
        non_overlap_cost: i32,
    ) {
        if tasks.is_empty() {
            return;
        }
        let n = model.num_clients();
        let owner: HashMap<Task, Client> =
            (0..n).flat_map(|c| placement.active[c].iter().map(move |&t| (t, c))).collect();
        let Some(current) = tasks.iter().map(|t| owner.get(t).copied()).collect::<Option<Vec<_>>>() else {
            return; // Kafka throws for an unassigned task.
        };
        let next = match self.strategy {
            RackAwareStrategy::BalanceSubtopology => {
                let cost = |t, c, here| self.cost(t, c, here, traffic_cost, non_overlap_cost, false);
                self.balance_subtopology(model, tasks, &current, cost)
            }
            _ => {
                let table = self.traffic_table(traffic_cost, false);
                let rack = self.client_rack.as_deref().expect("enabled");
                let mut costs = Vec::with_capacity(tasks.len() * n);
                for (&t, &here) in tasks.iter().zip(&current) {
                    let row = &table.cost[t as usize * table.racks..][..table.racks];
                    costs.extend(rack.iter().map(|&r| row[r].wrapping_add(non_overlap_cost)));
                    let k = costs.len() - n + here;
                    costs[k] = row[rack[here]];
                }
                CostMatrix::new(tasks.len(), n, costs).ok().and_then(|m| reassign(&m, &current).ok()).map(|a| a.clients)
            }
        };
        let Some(next) = next else { return };
        for (i, &t) in tasks.iter().enumerate() {
            if next[i] != current[i] {
                placement.unassign_active(current[i], t);
            }
        }
        for (i, &t) in tasks.iter().enumerate() {
            if next[i] != current[i] {
                placement.assign_active(next[i], t);
            }
        }
    }

    fn optimize_standby_tasks(
        &mut self,
        model: &Model<'_>,
        placement: &mut Placement,
        traffic_cost: i32,
        non_overlap_cost: i32,
        allowed: &dyn Fn(&Placement, Client, Client, Task) -> bool,
    ) {
        self.swap_standbys(model, placement, traffic_cost, non_overlap_cost, allowed);
    }
}
