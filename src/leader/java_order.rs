//! The Java collection orders the leader's results depend on: the iteration order of a JDK 17
//! `java.util.HashSet`/`HashMap` filled without removals, and the array of a
//! `java.util.PriorityQueue<TaskId>`.
//!
//! Kafka's repartition fixpoint walks a `HashSet<TopicsInfo>` and `HashMap<String, _>`s;
//! `assignTasksToThreads` builds its queue of unassigned tasks from a `HashSet<TaskId>` and hands
//! out the last tasks by iterating the queue's array. (The engine replays `HashMap` orders in
//! full, tree bins included, in its own private module; the leader only needs collections
//! filled without removals.)

use std::cmp::Ordering;

use crate::engine::cmp_task_ids;
use crate::wire::TaskId;

/// `String.hashCode()`: over UTF-16 code units, `h = 31·h + c`, wrapping.
pub(crate) fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `Objects.hash(a, b, …)` of values with these hash codes.
pub(crate) fn objects_hash(parts: &[i32]) -> i32 {
    parts.iter().fold(1i32, |h, &x| h.wrapping_mul(31).wrapping_add(x))
}

/// `TaskId.hashCode()`: `Objects.hash(subtopology, partition, topologyName)`.
pub(crate) fn task_hash(task: &TaskId) -> i32 {
    objects_hash(&[task.subtopology, task.partition, task.topology.as_deref().map_or(0, string_hash)])
}

/// `HashMap.hash`: the hash code with its high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// The smallest table at which JDK 17 turns a long bucket into a tree instead of resizing.
const MIN_TREEIFY_CAPACITY: usize = 64;
/// Bucket length at which a bucket becomes a tree (or the table doubles).
const TREEIFY_THRESHOLD: usize = 9;

/// The iteration order of a `new HashSet<>()` (or the key set of a `new HashMap<>()`) after
/// adding distinct `items` in the given order, where `hash` is their Java `hashCode()`.
///
/// A bucket is iterated in insertion order, buckets by index. The table starts at 16 and doubles
/// when the size passes 0.75 × capacity or when a bucket reaches 9 entries in a table smaller
/// than 64. A bucket that reaches 9 entries in a larger table becomes a red-black tree in Java,
/// whose iteration order is not replayed: such a bucket is taken in insertion order. (For tasks
/// that takes 9 with equal hash bits, e.g. `s_p`, `s+2_p+2`, … in a 64-bucket table, which
/// holds 25 to 48 tasks.)
pub(crate) fn hash_set_order<T>(items: impl IntoIterator<Item = T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    let entries: Vec<(u32, T)> = items.into_iter().map(|t| (spread(hash(&t)), t)).collect();
    let mut capacity = 16usize;
    let mut bucket_len = vec![0usize; capacity];
    for (size, (hash, _)) in entries.iter().enumerate() {
        let bucket = *hash as usize & (capacity - 1);
        bucket_len[bucket] += 1;
        // A long bucket in a small table doubles the table (`treeifyBin`).
        let mut resize = bucket_len[bucket] >= TREEIFY_THRESHOLD && capacity < MIN_TREEIFY_CAPACITY;
        if resize {
            capacity *= 2;
        }
        if size + 1 > capacity * 3 / 4 {
            capacity *= 2;
            resize = true;
        }
        if resize {
            bucket_len = vec![0; capacity];
            for (h, _) in &entries[..=size] {
                bucket_len[*h as usize & (capacity - 1)] += 1;
            }
        }
    }
    let mut order: Vec<(usize, usize, T)> =
        entries.into_iter().enumerate().map(|(i, (h, t))| (h as usize & (capacity - 1), i, t)).collect();
    order.sort_by_key(|(bucket, i, _)| (*bucket, *i));
    order.into_iter().map(|(_, _, t)| t).collect()
}

/// `java.util.PriorityQueue<TaskId>` with natural ordering, array for array.
#[derive(Debug)]
pub(crate) struct TaskQueue {
    heap: Vec<TaskId>,
}

fn less(a: &TaskId, b: &TaskId) -> bool {
    cmp_task_ids(a, b) == Ordering::Less
}

impl TaskQueue {
    /// `new PriorityQueue<>(collection)` for a collection that is not a `SortedSet` or a
    /// `PriorityQueue`: the elements in the collection's iteration order, then `heapify()`.
    pub(crate) fn from_collection(tasks: Vec<TaskId>) -> Self {
        let mut queue = Self { heap: tasks };
        for i in (0..queue.heap.len() / 2).rev() {
            queue.sift_down(i);
        }
        queue
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub(crate) fn contains(&self, task: &TaskId) -> bool {
        self.heap.contains(task)
    }

    /// The array, which is what a for-each over the queue visits.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &TaskId> {
        self.heap.iter()
    }

    /// `poll()`: the root; the last element moves to the root and sifts down.
    pub(crate) fn poll(&mut self) -> Option<TaskId> {
        if self.heap.is_empty() {
            return None;
        }
        let root = self.heap.swap_remove(0);
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        Some(root)
    }

    /// `remove(Object)`: `removeAt(indexOf(o))`: the last element takes the hole and sifts down,
    /// or up if it did not move down.
    pub(crate) fn remove(&mut self, task: &TaskId) -> bool {
        let Some(i) = self.heap.iter().position(|t| t == task) else {
            return false;
        };
        let last = self.heap.len() - 1;
        if i == last {
            self.heap.pop();
        } else {
            self.heap.swap_remove(i);
            if self.sift_down(i) == i {
                self.sift_up(i);
            }
        }
        true
    }

    /// `siftDownComparable`: moves the element at `k` down while a child is smaller (the smaller
    /// child, the left one on ties); returns where it ended.
    fn sift_down(&mut self, mut k: usize) -> usize {
        let n = self.heap.len();
        let half = n / 2;
        while k < half {
            let mut child = 2 * k + 1;
            let right = child + 1;
            if right < n && less(&self.heap[right], &self.heap[child]) {
                child = right;
            }
            if !less(&self.heap[child], &self.heap[k]) {
                break;
            }
            self.heap.swap(k, child);
            k = child;
        }
        k
    }

    /// `siftUpComparable`: moves the element at `k` up while smaller than its parent.
    fn sift_up(&mut self, mut k: usize) {
        while k > 0 {
            let parent = (k - 1) / 2;
            if !less(&self.heap[k], &self.heap[parent]) {
                break;
            }
            self.heap.swap(k, parent);
            k = parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn queue_polls_ascending_and_keeps_java_array() {
        let mut q = TaskQueue::from_collection(vec![t(0, 3), t(0, 1), t(0, 2), t(0, 0)]);
        // heapify: [0_3, 0_1, 0_2, 0_0] → sift index 1 (0_1 vs 0_0) → [0_3, 0_0, 0_2, 0_1] → index 0 → [0_0, 0_1, 0_2, 0_3]
        assert_eq!(q.iter().cloned().collect::<Vec<_>>(), [t(0, 0), t(0, 1), t(0, 2), t(0, 3)]);
        assert!(q.remove(&t(0, 1)));
        assert_eq!(q.iter().cloned().collect::<Vec<_>>(), [t(0, 0), t(0, 3), t(0, 2)]);
        assert_eq!(q.poll(), Some(t(0, 0)));
        assert_eq!(q.poll(), Some(t(0, 2)));
        assert_eq!(q.poll(), Some(t(0, 3)));
        assert_eq!(q.poll(), None);
    }
}
