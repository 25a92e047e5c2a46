//! Inside one process: which of its members (stream threads) gets which of the tasks the
//! process was given, for assignors that decide per process (`optimized`).
//!
//! Each kind of task is dealt on its own: first the active tasks, then the standby tasks (warm-ups
//! included) on top of them. A deal is sticky within a balanced quota: a member keeps the tasks
//! it holds now while it is below the floor of the process's load per member, then, while the
//! remainder lasts, up to one more; every other task goes to the least loaded member (then the
//! first in member order). After the active deal the members' active counts differ by at most
//! one, and after the standby deal so do their total counts, unless stickiness already left a
//! member above the ceiling (it never does for members that only keep tasks).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A task as the adapter numbers it: (subtopology index, partition).
pub(super) type Task = (u32, i32);

/// Deals `tasks` over `members` members whose current loads are `load` (updated in place).
/// `holder(t)` names the member that holds task `t` now, if any (of the same kind).
/// Returns, per member, the tasks it gets, in the order of `tasks`.
///
/// Complexity: O(T log M) for T tasks and M members.
pub(super) fn deal(tasks: &[Task], load: &mut [usize], holder: impl Fn(Task) -> Option<usize>) -> Vec<Vec<Task>> {
    let m = load.len();
    let mut out = vec![Vec::new(); m];
    if m == 0 {
        return out;
    }
    let total: usize = load.iter().sum::<usize>() + tasks.len();
    let (floor, remainder) = (total / m, total % m);
    // Slots above the floor still free: the remainder less the members already above it.
    let mut extra = remainder.saturating_sub(load.iter().filter(|&&l| l > floor).count());
    let mut placed = vec![false; tasks.len()];
    // Sticky, up to the floor.
    for (i, &t) in tasks.iter().enumerate() {
        if let Some(h) = holder(t).filter(|&h| h < m && load[h] < floor) {
            out[h].push(t);
            load[h] += 1;
            placed[i] = true;
        }
    }
    // Sticky, one more while the remainder lasts.
    for (i, &t) in tasks.iter().enumerate() {
        if placed[i] || extra == 0 {
            continue;
        }
        if let Some(h) = holder(t).filter(|&h| h < m && load[h] == floor) {
            out[h].push(t);
            load[h] += 1;
            placed[i] = true;
            extra -= 1;
        }
    }
    // The rest to the least loaded member, the first in member order on ties.
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> = load.iter().enumerate().map(|(h, &l)| Reverse((l, h))).collect();
    for (i, &t) in tasks.iter().enumerate() {
        if placed[i] {
            continue;
        }
        let Some(Reverse((l, h))) = heap.pop() else { break };
        out[h].push(t);
        load[h] = l + 1;
        heap.push(Reverse((l + 1, h)));
    }
    for list in &mut out {
        list.sort_unstable();
    }
    out
}

/// For each task, the first of `members` (by position) that holds it in `held(member)`.
pub(super) fn holders<'a, I>(members: usize, held: impl Fn(usize) -> I) -> HashMap<Task, usize>
where
    I: IntoIterator<Item = &'a Task>,
{
    let mut out = HashMap::new();
    for member in 0..members {
        for &t in held(member) {
            out.entry(t).or_insert(member);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(n: i32) -> Vec<Task> {
        (0..n).map(|p| (0, p)).collect()
    }

    #[test]
    fn members_keep_their_tasks_within_the_quota() {
        // Member 0 held 0..4, member 1 nothing: 6 tasks over 2 members, 3 each.
        let mut load = vec![0, 0];
        let out = deal(&tasks(6), &mut load, |(_, p)| (p < 4).then_some(0));
        assert_eq!(out[0], [(0, 0), (0, 1), (0, 2)]);
        assert_eq!(out[1], [(0, 3), (0, 4), (0, 5)]);
        assert_eq!(load, [3, 3]);
    }

    #[test]
    fn the_remainder_goes_to_holders_first() {
        // 5 tasks over 2 members: member 1 held 3 of them and keeps all 3 (floor 2, one extra).
        let mut load = vec![0, 0];
        let out = deal(&tasks(5), &mut load, |(_, p)| (p >= 2).then_some(1));
        assert_eq!(out[1], [(0, 2), (0, 3), (0, 4)]);
        assert_eq!(out[0], [(0, 0), (0, 1)]);
    }

    #[test]
    fn a_second_deal_balances_the_totals() {
        // Actives 3 on member 0 and 2 on member 1; 3 standbys make 4 each.
        let mut load = vec![3, 2];
        let out = deal(&tasks(3), &mut load, |_| None);
        assert_eq!(load, [4, 4]);
        assert_eq!((out[0].len(), out[1].len()), (1, 2));
    }

    #[test]
    fn loads_differ_by_at_most_one_whatever_was_held() {
        for members in 1..6 {
            for n in 0..20 {
                let mut load = vec![0; members];
                let out = deal(&tasks(n), &mut load, |(_, p)| Some((p as usize * 7) % (members + 1)));
                let (min, max) = (load.iter().min().unwrap(), load.iter().max().unwrap());
                assert!(max - min <= 1, "{members} members, {n} tasks: {load:?}");
                assert_eq!(out.iter().map(Vec::len).sum::<usize>(), n as usize);
            }
        }
    }
}
