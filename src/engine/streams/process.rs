//! A process (Kafka Streams instance) while the sticky assignor fills it: Kafka's `ProcessState`.
//!
//! Its load is its task count over its member count, as a `double`. Its members' task counts
//! live in a Java `HashMap` of member ids, whose iteration order seeds the members' heap; the
//! heap (`PriorityQueue` by task count) is built on the first least-loaded placement, kept while
//! only least-loaded placements follow and dropped by a placement on a named member.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::jdk::priority_queue::JavaPriorityQueue;

/// A task as the assignor keys it: the subtopology's index in Java's `String` order of the ids,
/// and the partition. Comparing indices compares the ids.
pub(super) type Task = (u32, i32);

/// A member's task count in the process's heap (Kafka's `Map.Entry<String, Integer>`).
type Entry = (usize, i32);

type ByCount = fn(&Entry, &Entry) -> Ordering;

fn by_count(a: &Entry, b: &Entry) -> Ordering {
    a.1.cmp(&b.1)
}

/// The tasks of every member, by member index (the index in the coordinator's member order).
#[derive(Debug, Default)]
pub(super) struct Members {
    /// Each member's process.
    pub(super) process: Vec<usize>,
    /// Each member's task count, active and standby.
    pub(super) count: Vec<i32>,
    /// Each member's active tasks.
    pub(super) active: Vec<Vec<Task>>,
    /// Each member's standby tasks.
    pub(super) standby: Vec<Vec<Task>>,
}

impl Members {
    pub(super) fn new(process: Vec<usize>) -> Self {
        let n = process.len();
        Self { process, count: vec![0; n], active: vec![Vec::new(); n], standby: vec![Vec::new(); n] }
    }
}

#[derive(Debug)]
pub(super) struct Process {
    /// Its members in the iteration order of its `HashMap` of member ids.
    members: Vec<usize>,
    task_count: i32,
    load: f64,
    tasks: HashSet<Task>,
    by_count: Option<JavaPriorityQueue<Entry, ByCount>>,
}

impl Process {
    /// A process of `members` (at least one), in its map's iteration order.
    pub(super) fn new(members: Vec<usize>) -> Self {
        Self { members, task_count: 0, load: 0.0, tasks: HashSet::new(), by_count: None }
    }

    /// Its task count over its member count (`computeLoad`).
    pub(super) fn load(&self) -> f64 {
        self.load
    }

    /// Whether it holds `task`, as active or standby.
    pub(super) fn has_task(&self, task: Task) -> bool {
        self.tasks.contains(&task)
    }

    /// `addTask`: gives `task` to `member` and drops the heap. Returns the member's new count.
    pub(super) fn add_task(&mut self, all: &mut Members, member: usize, task: Task, active: bool) -> i32 {
        self.by_count = None;
        self.add(all, member, task, active)
    }

    /// `addTaskToLeastLoadedMember`: gives `task` to the member the heap puts first. Returns that
    /// member's new count.
    pub(super) fn add_task_to_least_loaded(&mut self, all: &mut Members, task: Task, active: bool) -> i32 {
        if let [only] = self.members[..] {
            return self.add(all, only, task, active);
        }
        let members = &self.members;
        let heap = self.by_count.get_or_insert_with(|| {
            let mut heap = JavaPriorityQueue::new(by_count as ByCount);
            for &m in members {
                heap.offer((m, all.count[m]));
            }
            heap
        });
        let Some((member, _)) = heap.poll() else {
            // A process always has a member; an empty one takes nothing.
            return -1;
        };
        let count = self.add(all, member, task, active);
        if let Some(heap) = self.by_count.as_mut() {
            heap.offer((member, count));
        }
        count
    }

    fn add(&mut self, all: &mut Members, member: usize, task: Task, active: bool) -> i32 {
        self.task_count += 1;
        self.tasks.insert(task);
        if active {
            all.active[member].push(task);
        } else {
            all.standby[member].push(task);
        }
        all.count[member] += 1;
        self.load = f64::from(self.task_count) / self.members.len() as f64;
        all.count[member]
    }
}
