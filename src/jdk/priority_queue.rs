//! `java.util.PriorityQueue`: its array binary heap, step for step.
//!
//! Kafka orders task movements by `(number of caught-up clients, task)`. Two standby movements of
//! the same task tie, and then the order in which they leave the queue is whatever the heap's
//! sift-up/sift-down sequence produces. The leader hands out its last unassigned tasks by iterating
//! the queue's array. Replaying the heap gives the same orders.

use std::cmp::Ordering;

use super::cmp::JavaComparable;

/// A priority queue that keeps the array of `java.util.PriorityQueue` and so polls equal
/// elements, and iterates, in Java's order.
#[derive(Debug)]
pub(crate) struct JavaPriorityQueue<T, F> {
    heap: Vec<T>,
    cmp: F,
}

/// The comparator of a queue in natural order (`Comparable.compareTo`).
pub(crate) type NaturalOrder<T> = fn(&T, &T) -> Ordering;

impl<T: JavaComparable> JavaPriorityQueue<T, NaturalOrder<T>> {
    /// `new PriorityQueue<>(collection)` in natural order, for a collection that is not a
    /// `SortedSet` or a `PriorityQueue`: the elements in the collection's iteration order, then
    /// `heapify()`.
    ///
    /// Complexity: O(n).
    pub(crate) fn from_collection(items: Vec<T>) -> Self {
        let mut queue = Self { heap: items, cmp: T::java_cmp };
        for i in (0..queue.heap.len() / 2).rev() {
            queue.sift_down(i);
        }
        queue
    }
}

impl<T, F: Fn(&T, &T) -> Ordering> JavaPriorityQueue<T, F> {
    /// An empty queue with the comparator `cmp`.
    pub(crate) fn new(cmp: F) -> Self {
        Self { heap: Vec::new(), cmp }
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// `contains(o)`: a scan of the array.
    pub(crate) fn contains(&self, x: &T) -> bool
    where
        T: PartialEq,
    {
        self.heap.contains(x)
    }

    /// The array, which is what a for-each over the queue visits.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.heap.iter()
    }

    fn less(&self, a: usize, b: usize) -> bool {
        (self.cmp)(&self.heap[a], &self.heap[b]) == Ordering::Less
    }

    /// `offer`: append, then sift up while strictly smaller than the parent.
    ///
    /// Complexity: O(log n).
    pub(crate) fn offer(&mut self, x: T) {
        self.heap.push(x);
        self.sift_up(self.heap.len() - 1);
    }

    /// `poll`: take the root, move the last element to the root and sift it down.
    ///
    /// Complexity: O(log n).
    pub(crate) fn poll(&mut self) -> Option<T> {
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
    /// or up if it did not move down. Returns whether `x` was in the queue.
    ///
    /// Complexity: O(n).
    pub(crate) fn remove(&mut self, x: &T) -> bool
    where
        T: PartialEq,
    {
        let Some(i) = self.heap.iter().position(|t| t == x) else {
            return false;
        };
        if i == self.heap.len() - 1 {
            self.heap.pop();
        } else {
            self.heap.swap_remove(i);
            if self.sift_down(i) == i {
                self.sift_up(i);
            }
        }
        true
    }

    /// `siftDown`: moves the element at `k` down while a child is smaller (the smaller child, the
    /// left one on ties); returns where it ended.
    fn sift_down(&mut self, mut k: usize) -> usize {
        let n = self.heap.len();
        while k < n / 2 {
            let mut child = 2 * k + 1;
            let right = child + 1;
            if right < n && self.less(right, child) {
                child = right;
            }
            if !self.less(child, k) {
                break;
            }
            self.heap.swap(k, child);
            k = child;
        }
        k
    }

    /// `siftUp`: moves the element at `k` up while strictly smaller than its parent.
    fn sift_up(&mut self, mut k: usize) {
        while k > 0 {
            let parent = (k - 1) / 2;
            if !self.less(k, parent) {
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
    use crate::wire::TaskId;

    #[test]
    fn ties_leave_in_java_heap_order() {
        // (key, tag): Java's PriorityQueue with comparator on key only, offering keys
        // 1,1,1,0,1 tagged a..e, polls d, e, b, c, a (checked with JDK 17 jshell).
        let mut q = JavaPriorityQueue::new(|a: &(i32, char), b: &(i32, char)| a.0.cmp(&b.0));
        for x in [(1, 'a'), (1, 'b'), (1, 'c'), (0, 'd'), (1, 'e')] {
            q.offer(x);
        }
        let order: String = std::iter::from_fn(|| q.poll()).map(|x| x.1).collect();
        assert_eq!(order, "debca");
    }

    fn t(s: i32, p: i32) -> TaskId {
        TaskId::new(s, p)
    }

    #[test]
    fn queue_polls_ascending_and_keeps_java_array() {
        let mut q = JavaPriorityQueue::from_collection(vec![t(0, 3), t(0, 1), t(0, 2), t(0, 0)]);
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
