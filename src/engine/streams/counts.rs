//! The per-process counts of stateful and stateless active tasks that need the fewest moves
//! within the balance bounds: a min-cost flow over a small graph (tasks of a kind → processes),
//! solved by [`flow::Graph`](crate::flow::Graph)'s successive shortest paths.
//!
//! A process that holds x stateful tasks where it held a of its own makes max(0, x − a) moves
//! come to it (the tasks it keeps are its own); the fewest moves are the counts with the least
//! sum of those, stateful and stateless. Among those, the counts nearest the target's (its
//! spread, its choice by lag and restore rate) are chosen.

use crate::flow::{EdgeId, Graph};

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
/// [`Graph::min_cost_max_flow`] over O(P) nodes and arcs for P processes; the costs take few
/// distinct values (0, 1, a move, a lower bound), so it needs few rounds.
pub(super) fn fewest_moves(processes: &[Process]) -> Option<Vec<(u64, u64)>> {
    let stateful: u64 = processes.iter().map(|p| p.target.0).sum();
    let all: u64 = processes.iter().map(|p| p.target.1).sum();
    let units = i64::try_from(all).ok()?;
    let cap = |n: u64| i64::try_from(n).ok();
    // A move costs more than any nearness to the target can save; a lower bound's units are
    // worth more than all moves.
    let step = 2 * units + 1;
    let bound = step.checked_mul(units + 1)?.checked_mul(2)?;
    let mut g = Graph::new(4 + 3 * processes.len());
    let (s, t, kinds) = (0, 1, [2, 3]);
    let mut arc = |from: usize, to: usize, n: u64, cost: i64| g.add_edge(from, to, cap(n)?, cost).ok();
    arc(s, kinds[0], stateful, 0)?;
    arc(s, kinds[1], all - stateful, 0)?;
    // Per process: the arcs into its node that carry its stateful tasks, and those into the sink
    // that carry all its tasks.
    let mut held: Vec<([EdgeId; 3], [EdgeId; 3])> = Vec::with_capacity(processes.len());
    for (i, p) in processes.iter().enumerate() {
        let (a, b, node) = (4 + 3 * i, 5 + 3 * i, 6 + 3 * i);
        arc(kinds[0], a, p.own.0, 0)?;
        arc(kinds[0], a, all, step)?;
        arc(kinds[1], b, p.own.1, 0)?;
        arc(kinds[1], b, all, step)?;
        let (lo, hi) = p.stateful;
        let x0 = p.target.0.clamp(lo, hi);
        let stateful = [arc(a, node, lo, -bound)?, arc(a, node, x0 - lo, 0)?, arc(a, node, hi - x0, 1)?];
        arc(b, node, all, 0)?;
        let (lo, hi) = p.all;
        let n0 = p.target.1.clamp(lo, hi);
        let every = [arc(node, t, lo, -bound)?, arc(node, t, n0 - lo, 0)?, arc(node, t, hi - n0, 1)?];
        held.push((stateful, every));
    }
    let solution = g.min_cost_max_flow(s, t).ok()?;
    if solution.flow != units {
        return None;
    }
    let flow = |edges: &[EdgeId; 3]| -> u64 { edges.iter().map(|&e| g.flow(e).max(0) as u64).sum() };
    let mut out = Vec::with_capacity(processes.len());
    for (stateful, every) in &held {
        let (x, n) = (flow(stateful), flow(every));
        if x > n {
            return None;
        }
        out.push((x, n - x));
    }
    let lower_bounds_met = processes.iter().zip(&out).all(|(p, &(x, y))| x >= p.stateful.0 && x + y >= p.all.0);
    lower_bounds_met.then_some(out)
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
