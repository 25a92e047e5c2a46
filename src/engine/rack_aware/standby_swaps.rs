//! The standby rounds of [`PartitionRacks`]: up to four passes over the client pairs on different
//! racks, each pair's movable standbys re-placed at least cost keeping both clients' counts.

use super::partition_racks::PartitionRacks;
use crate::engine::model::{Client, Model, Placement, Task};
use crate::flow::{CostMatrix, reassign};

/// Kafka's `STANDBY_OPTIMIZER_MAX_ITERATION`.
const STANDBY_ROUNDS: usize = 4;

impl PartitionRacks {
    /// Kafka's `optimizeStandbyTasks` (see [`RackAwareOptimizer::optimize_standby_tasks`](super::optimizer::RackAwareOptimizer::optimize_standby_tasks)).
    pub(super) fn swap_standbys(
        &mut self,
        model: &Model<'_>,
        placement: &mut Placement,
        traffic_cost: i32,
        non_overlap_cost: i32,
        allowed: &dyn Fn(&Placement, Client, Client, Task) -> bool,
    ) {
        let n = model.num_clients();
        let rack = self.client_rack.clone().expect("enabled");
        let table = self.traffic_table(traffic_cost, true);
        let mut held = Holdings::new(placement, model.tasks.len());
        // Each client's standbys in task order (`placement.standby` as vectors, kept in step).
        let mut standbys: Vec<Vec<Task>> = placement.standby.iter().map(|s| s.iter().copied().collect()).collect();
        // Scratch reused by every pair: each side's movable tasks with what moving one across
        // changes the cost, the merged tasks, their side and the cost matrix.
        let mut from_a: Vec<(Task, i64)> = Vec::new();
        let mut from_b: Vec<(Task, i64)> = Vec::new();
        let (mut tasks, mut current, mut costs) = (Vec::new(), Vec::new(), Vec::new());
        let mut moved = true;
        let mut round = 0;
        while moved && round < STANDBY_ROUNDS {
            moved = false;
            round += 1;
            for a in 0..n {
                for b in a + 1..n {
                    if rack[a] == rack[b] {
                        continue;
                    }
                    let movable = |s: Client, d: Client, out: &mut Vec<(Task, i64)>| -> i64 {
                        out.clear();
                        let mut least = i64::MAX;
                        for &t in &standbys[s] {
                            if !held.holds(d, t) && allowed(placement, s, d, t) {
                                let here = table.get(t, rack[s]);
                                let there = table.get(t, rack[d]).wrapping_add(non_overlap_cost);
                                let delta = i64::from(there) - i64::from(here);
                                least = least.min(delta);
                                out.push((t, delta));
                            }
                        }
                        least
                    };
                    let least_a = movable(a, b, &mut from_a);
                    if from_a.is_empty() {
                        continue;
                    }
                    let least_b = movable(b, a, &mut from_b);
                    // The cheapest exchange of one task each way: if even it costs more than it
                    // saves, keeping every task where it is is the only optimum, which is what the
                    // solver would return.
                    if from_b.is_empty() || least_a + least_b > 0 {
                        continue;
                    }
                    // Both lists are in task order and disjoint: merge them.
                    tasks.clear();
                    current.clear();
                    costs.clear();
                    let pair = [a, b];
                    let (mut i, mut j) = (0, 0);
                    while i < from_a.len() || j < from_b.len() {
                        let side = usize::from(!(j == from_b.len() || (i < from_a.len() && from_a[i].0 < from_b[j].0)));
                        let t = if side == 0 { (from_a[i].0, i += 1).0 } else { (from_b[j].0, j += 1).0 };
                        tasks.push(t);
                        current.push(side);
                        let [here, there] = [pair[side], pair[1 - side]].map(|c| table.get(t, rack[c]));
                        let there = there.wrapping_add(non_overlap_cost);
                        costs.extend_from_slice(&if side == 0 { [here, there] } else { [there, here] });
                    }
                    let Ok(matrix) = CostMatrix::new(tasks.len(), 2, costs.clone()) else { continue };
                    let Ok(next) = reassign(&matrix, &current).map(|a| a.clients) else { continue };
                    for (k, &t) in tasks.iter().enumerate() {
                        if next[k] != current[k] {
                            let (from, to) = (pair[current[k]], pair[next[k]]);
                            placement.unassign_standby(from, t);
                            placement.assign_standby(to, t);
                            held.moved(from, to, t);
                            if let Ok(at) = standbys[from].binary_search(&t) {
                                standbys[from].remove(at);
                            }
                            if let Err(at) = standbys[to].binary_search(&t) {
                                standbys[to].insert(at, t);
                            }
                            moved = true;
                        }
                    }
                }
            }
        }
    }
}

/// Which tasks (active or standby) each client holds, as one bit per (client, task): Kafka's
/// `hasAssignedTask` without a tree search, kept in step with the placement by
/// [`optimize_standby_tasks`](RackAwareOptimizer::optimize_standby_tasks).
struct Holdings {
    words: usize,
    bits: Vec<u64>,
}

impl Holdings {
    fn new(placement: &Placement, tasks: usize) -> Self {
        let words = tasks.div_ceil(64);
        let mut held = Self { words, bits: vec![0; words * placement.active.len()] };
        for (c, (active, standby)) in placement.active.iter().zip(&placement.standby).enumerate() {
            for &t in active.iter().chain(standby) {
                held.bits[c * words + t as usize / 64] |= 1 << (t % 64);
            }
        }
        held
    }

    fn holds(&self, c: Client, t: Task) -> bool {
        self.bits[c * self.words + t as usize / 64] & (1 << (t % 64)) != 0
    }

    fn moved(&mut self, from: Client, to: Client, t: Task) {
        self.bits[from * self.words + t as usize / 64] &= !(1 << (t % 64));
        self.bits[to * self.words + t as usize / 64] |= 1 << (t % 64);
    }
}
