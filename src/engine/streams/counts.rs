//! The per-process counts of stateful and stateless active tasks that need the fewest moves
//! within the balance bounds: a min-cost flow over a small graph (tasks of a kind → processes),
//! solved by successive shortest paths.
//!
//! A process that holds x stateful tasks where it held a of its own makes max(0, x − a) moves
//! come to it (the tasks it keeps are its own); the fewest moves are the counts with the least
//! sum of those, stateful and stateless. Among those, the counts nearest the target's (its
//! spread, its choice by lag and restore rate) are chosen.

/// A process's bounds and counts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Process {
    /// Stateful, stateless tasks whose previous owner it is.
    pub(super) own: (u64, u64),
    /// The target's stateful tasks and all tasks.
    pub(super) target: (u64, u64),
    /// The fewest and most stateful tasks it may hold.
    pub(super) stateful: (u64, u64),
    /// The fewest and most tasks it may hold.
    pub(super) all: (u64, u64),
}

/// Per process, the stateful and stateless tasks to hold: of the counts within the bounds that
/// add up to the target's totals, those needing the fewest moves, then the nearest the
/// target's. `None` if no counts fit the bounds.
///
/// # Complexity
///
/// O(augmenting paths × P²) for P processes, each path found by Bellman-Ford over O(P) nodes
/// and arcs.
pub(super) fn fewest_moves(processes: &[Process]) -> Option<Vec<(u64, u64)>> {
    let stateful: u64 = processes.iter().map(|p| p.target.0).sum();
    let all: u64 = processes.iter().map(|p| p.target.1).sum();
    let units = i64::try_from(all).ok()?;
    // A move costs more than any nearness to the target can save; a lower bound's units are
    // worth more than all moves.
    let step = 2 * units + 1;
    let bound = step * (units + 1) * 2;
    let mut g = Graph::new(4 + 3 * processes.len());
    let (s, t, kinds) = (0, 1, [2, 3]);
    g.arc(s, kinds[0], stateful, 0);
    g.arc(s, kinds[1], all - stateful, 0);
    let mut held = Vec::with_capacity(processes.len());
    for (i, p) in processes.iter().enumerate() {
        let (a, b, node) = (4 + 3 * i, 5 + 3 * i, 6 + 3 * i);
        g.arc(kinds[0], a, p.own.0, 0);
        g.arc(kinds[0], a, all, step);
        g.arc(kinds[1], b, p.own.1, 0);
        g.arc(kinds[1], b, all, step);
        let (lo, hi) = p.stateful;
        let x0 = p.target.0.clamp(lo, hi);
        let first = g.arc(a, node, lo, -bound);
        g.arc(a, node, x0 - lo, 0);
        g.arc(a, node, hi - x0, 1);
        held.push(first);
        g.arc(b, node, all, 0);
        let (lo, hi) = p.all;
        let n0 = p.target.1.clamp(lo, hi);
        g.arc(node, t, lo, -bound);
        g.arc(node, t, n0 - lo, 0);
        g.arc(node, t, hi - n0, 1);
    }
    if g.max_flow_min_cost(s, t) != all {
        return None;
    }
    let mut out = Vec::with_capacity(processes.len());
    for (i, &first) in held.iter().enumerate() {
        let x: u64 = (first..first + 6).step_by(2).map(|e| g.flow(e)).sum();
        let n: u64 = g.arcs_from(6 + 3 * i).filter(|&e| g.to[e] == t).map(|e| g.flow(e)).sum();
        if x > n {
            return None;
        }
        out.push((x, n - x));
    }
    let lower_bounds_met = processes.iter().zip(&out).all(|(p, &(x, y))| x >= p.stateful.0 && x + y >= p.all.0);
    lower_bounds_met.then_some(out)
}

/// A flow network: arcs in pairs (an arc, then its reverse).
struct Graph {
    to: Vec<usize>,
    cap: Vec<u64>,
    cost: Vec<i64>,
    /// The initial capacity of each arc, to read its flow.
    initial: Vec<u64>,
    out: Vec<Vec<usize>>,
}

impl Graph {
    fn new(nodes: usize) -> Self {
        Self { to: Vec::new(), cap: Vec::new(), cost: Vec::new(), initial: Vec::new(), out: vec![Vec::new(); nodes] }
    }

    /// Adds an arc and its reverse; returns the arc's index.
    fn arc(&mut self, from: usize, to: usize, cap: u64, cost: i64) -> usize {
        let e = self.to.len();
        for (a, b, c, k) in [(from, to, cap, cost), (to, from, 0, -cost)] {
            self.to.push(b);
            self.cap.push(c);
            self.cost.push(k);
            self.initial.push(c);
            self.out[a].push(self.to.len() - 1);
        }
        e
    }

    fn flow(&self, e: usize) -> u64 {
        self.initial[e] - self.cap[e]
    }

    fn arcs_from(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        self.out[node].iter().copied().filter(|e| e % 2 == 0)
    }

    /// Pushes as much flow as it can from `s` to `t`, along the cheapest paths first; returns
    /// the flow.
    fn max_flow_min_cost(&mut self, s: usize, t: usize) -> u64 {
        let n = self.out.len();
        let mut total = 0;
        loop {
            // Bellman-Ford (queue-based): the residual graph has no negative cycle.
            let mut dist = vec![i64::MAX; n];
            let mut via = vec![usize::MAX; n];
            let mut queued = vec![false; n];
            let mut queue = std::collections::VecDeque::from([s]);
            dist[s] = 0;
            while let Some(u) = queue.pop_front() {
                queued[u] = false;
                for &e in &self.out[u] {
                    let v = self.to[e];
                    if self.cap[e] > 0 && dist[u] + self.cost[e] < dist[v] {
                        dist[v] = dist[u] + self.cost[e];
                        via[v] = e;
                        if !queued[v] {
                            queued[v] = true;
                            queue.push_back(v);
                        }
                    }
                }
            }
            if dist[t] == i64::MAX {
                return total;
            }
            let mut push = u64::MAX;
            let mut v = t;
            while v != s {
                let e = via[v];
                push = push.min(self.cap[e]);
                v = self.to[e ^ 1];
            }
            let mut v = t;
            while v != s {
                let e = via[v];
                self.cap[e] -= push;
                self.cap[e ^ 1] += push;
                v = self.to[e ^ 1];
            }
            total += push;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateful_surplus_is_traded_where_it_saves_a_move() {
        // Three one-member processes; p0 held 4 stateful, p1 3 stateful and 1 stateless, p2
        // nothing. The target: p0 2 stateful, p1 3, p2 2 stateful and the stateless one (3
        // moves). Bounds: 2 to 3 stateful, 2 to 3 in all.
        let p = |own, target| Process { own, target, stateful: (2, 3), all: (2, 3) };
        let counts = fewest_moves(&[p((4, 0), (2, 2)), p((3, 1), (3, 3)), p((0, 0), (2, 3))]).unwrap();
        // p0 keeps 3, p1 keeps 2 and its stateless task, p2 gets 2: 2 moves.
        assert_eq!(counts, [(3, 0), (2, 1), (2, 0)]);
    }

    #[test]
    fn of_counts_that_move_as_little_the_target_s_stay() {
        // Each process held one task; a third task had no owner. Either process may take it.
        let p = |target| Process { own: (1, 0), target, stateful: (1, 2), all: (1, 2) };
        assert_eq!(fewest_moves(&[p((1, 1)), p((2, 2))]).unwrap(), [(1, 0), (2, 0)]);
        assert_eq!(fewest_moves(&[p((2, 2)), p((1, 1))]).unwrap(), [(2, 0), (1, 0)]);
    }

    #[test]
    fn counts_outside_the_bounds_are_refused() {
        let p = Process { own: (0, 0), target: (3, 3), stateful: (0, 2), all: (0, 2) };
        assert_eq!(fewest_moves(&[p]), None);
    }
}
