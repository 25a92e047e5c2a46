//! The [`Model`](super::model::Model)'s two lookup tables, kept flat so that a million tasks
//! cost a few arrays rather than hash maps: task id → task index ([`TaskIndex`]), and each
//! client's reported offset sums ([`Reports`], read through [`ClientReports`]).

use std::cmp::Ordering;

use crate::jdk::cmp::cmp_java_strings;
use crate::wire::TaskId;

/// A task index, as the model's `Task` (the position in Java's `TaskId` order).
type Task = u32;
/// A client index, as the model's `Client` (the position in Java's `ProcessId` order).
type Client = usize;

/// Task id → task index, for tasks numbered in Java's `TaskId` order.
///
/// The tasks of one sub-topology (of one named topology) are consecutive in that order, sorted
/// by partition, and usually their partitions are `0..p` with none missing: such a group finds
/// a task by subtraction. Other groups search their partitions. Memory: one small entry per
/// group instead of a hash-map entry per task.
#[derive(Debug)]
pub(crate) struct TaskIndex<'a> {
    /// The groups, in task order (so sorted by topology name, then sub-topology).
    groups: Vec<Group<'a>>,
}

/// The tasks of one (named topology, sub-topology): `start..start + len` in task order.
#[derive(Debug)]
struct Group<'a> {
    topology: Option<&'a str>,
    subtopology: i32,
    start: Task,
    len: u32,
    /// The group's first partition.
    first: i32,
    /// Whether its partitions are `first..first + len`, none missing.
    dense: bool,
}

impl<'a> TaskIndex<'a> {
    /// The index of `tasks`, which must be sorted in Java's `TaskId` order without repeats.
    ///
    /// Complexity: O(T).
    pub(crate) fn new(tasks: &[&'a TaskId]) -> Self {
        let mut groups: Vec<Group<'a>> = Vec::new();
        for (i, &t) in tasks.iter().enumerate() {
            let topology = t.topology.as_deref();
            match groups.last_mut() {
                Some(g) if g.topology == topology && g.subtopology == t.subtopology => {
                    g.dense &= i64::from(t.partition) == i64::from(g.first) + i64::from(g.len);
                    g.len += 1;
                }
                _ => groups.push(Group { topology, subtopology: t.subtopology, start: i as Task, len: 1, first: t.partition, dense: true }),
            }
        }
        groups.shrink_to_fit();
        Self { groups }
    }

    /// The index of task `id` in `tasks` (the slice this index was built from), if it is one.
    ///
    /// Complexity: O(log G) for G groups, plus O(log P) in a group of P partitions that is not
    /// dense.
    pub(crate) fn get(&self, tasks: &[&TaskId], id: &TaskId) -> Option<Task> {
        let topology = id.topology.as_deref();
        let g = self.groups.binary_search_by(|g| cmp_group(g.topology, g.subtopology, topology, id.subtopology)).ok()?;
        let g = &self.groups[g];
        if g.dense {
            let offset = i64::from(id.partition) - i64::from(g.first);
            return (0..i64::from(g.len)).contains(&offset).then(|| g.start + offset as Task);
        }
        let range = &tasks[g.start as usize..(g.start + g.len) as usize];
        range.binary_search_by_key(&id.partition, |t| t.partition).ok().map(|k| g.start + k as Task)
    }
}

/// Java's `TaskId` order on the (topology, sub-topology) part of two ids.
fn cmp_group(a: Option<&str>, a_sub: i32, b: Option<&str>, b_sub: i32) -> Ordering {
    let names = match (a, b) {
        (Some(x), Some(y)) => cmp_java_strings(x, y),
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    };
    names.then(a_sub.cmp(&b_sub))
}

/// Every client's reported offset sums of known tasks, in two flat arrays: client `c`'s are at
/// `starts[c]..starts[c + 1]`, sorted by task.
///
/// Memory: 12 bytes a report (a hash map per client took about twice that).
#[derive(Debug, Default)]
pub(crate) struct Reports {
    starts: Vec<usize>,
    tasks: Vec<Task>,
    sums: Vec<i64>,
}

impl Reports {
    /// The reports of `clients` clients, given in client order: `reports(c, push)` calls
    /// `push(t, sum)` for each of client `c`'s (each task once, in any order). `capacity` is at
    /// least their number (a bound reserved at once rather than grown by doubling).
    ///
    /// Complexity: O(R log M) for R reports and at most M per client (O(R) when each client's
    /// come in task order).
    pub(crate) fn new(clients: usize, capacity: usize, mut reports: impl FnMut(Client, &mut dyn FnMut(Task, i64))) -> Self {
        let mut out = Self { starts: Vec::with_capacity(clients + 1), tasks: Vec::with_capacity(capacity), sums: Vec::with_capacity(capacity) };
        out.starts.push(0);
        let mut client: Vec<(Task, i64)> = Vec::new();
        for c in 0..clients {
            client.clear();
            reports(c, &mut |t, sum| client.push((t, sum)));
            client.sort_unstable_by_key(|&(t, _)| t);
            out.tasks.extend(client.iter().map(|&(t, _)| t));
            out.sums.extend(client.iter().map(|&(_, sum)| sum));
            out.starts.push(out.tasks.len());
        }
        out
    }

    /// Client `c`'s reports.
    pub(crate) fn client(&self, c: Client) -> ClientReports<'_> {
        let range = self.starts[c]..self.starts[c + 1];
        ClientReports { tasks: &self.tasks[range.clone()], sums: &self.sums[range] }
    }
}

/// One client's reported offset sums, sorted by task.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientReports<'m> {
    tasks: &'m [Task],
    sums: &'m [i64],
}

impl<'m> ClientReports<'m> {
    /// The offset sum reported for `t`, if any. O(log M) for M reports.
    pub(crate) fn get(&self, t: Task) -> Option<i64> {
        self.tasks.binary_search(&t).ok().map(|k| self.sums[k])
    }

    /// Whether an offset sum was reported for `t`. O(log M) for M reports.
    pub(crate) fn contains(&self, t: Task) -> bool {
        self.tasks.binary_search(&t).is_ok()
    }

    /// The tasks reported, sorted.
    pub(crate) fn tasks(&self) -> &'m [Task] {
        self.tasks
    }

    /// The (task, offset sum) pairs, sorted by task.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Task, i64)> + 'm {
        self.tasks.iter().copied().zip(self.sums.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tasks_of_dense_sparse_and_named_groups() {
        let ids = [
            TaskId::new(0, 0),
            TaskId::new(0, 1),
            TaskId::new(0, 2),
            TaskId::new(1, 3),
            TaskId::new(1, 7),
            TaskId::new(1, 8),
            TaskId::new(4, -1),
            TaskId::new(4, 0),
        ];
        let tasks: Vec<&TaskId> = ids.iter().collect();
        let index = TaskIndex::new(&tasks);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(index.get(&tasks, id), Some(i as Task), "{id}");
        }
        for missing in [TaskId::new(0, 3), TaskId::new(0, -1), TaskId::new(1, 4), TaskId::new(2, 0), TaskId::new(4, 1), TaskId::named("a", 0, 0)] {
            assert_eq!(index.get(&tasks, &missing), None, "{missing}");
        }
        let named = [TaskId::named("B", 0, 1), TaskId::named("a", 0, 0), TaskId::named("a", 0, 2), TaskId::named("é", 1, 5)];
        let mut sorted: Vec<&TaskId> = named.iter().collect();
        sorted.sort_by(|a, b| crate::jdk::cmp::cmp_task_ids(a, b));
        let index = TaskIndex::new(&sorted);
        for (i, id) in sorted.iter().enumerate() {
            assert_eq!(index.get(&sorted, id), Some(i as Task), "{id}");
        }
        assert_eq!(index.get(&sorted, &TaskId::named("a", 0, 1)), None);
        assert_eq!(index.get(&sorted, &TaskId::new(0, 1)), None);
    }

    #[test]
    fn keeps_each_clients_reports_sorted() {
        let lists: [&[(Task, i64)]; 3] = [&[(5, 50), (1, 10)], &[], &[(2, -2)]];
        let reports = Reports::new(3, 3, |c, push| lists[c].iter().for_each(|&(t, s)| push(t, s)));
        assert_eq!(reports.client(0).iter().collect::<Vec<_>>(), [(1, 10), (5, 50)]);
        assert_eq!((reports.client(0).get(5), reports.client(0).get(2), reports.client(1).contains(1)), (Some(50), None, false));
        assert_eq!(reports.client(2).tasks(), [2]);
    }
}
