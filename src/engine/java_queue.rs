//! The array binary heap of `java.util.PriorityQueue`, step for step.
//!
//! Kafka orders task movements by `(number of caught-up clients, task)`. Two standby movements of
//! the same task tie, and then the order in which they leave the queue is whatever the heap's
//! sift-up/sift-down sequence produces. Replaying that sequence gives the same order.

use std::cmp::Ordering;

/// A priority queue that polls equal elements in the order `java.util.PriorityQueue` does.
#[derive(Debug)]
pub(crate) struct JavaPriorityQueue<T, F> {
    heap: Vec<T>,
    cmp: F,
}

impl<T, F: Fn(&T, &T) -> Ordering> JavaPriorityQueue<T, F> {
    /// An empty queue with the comparator `cmp`.
    pub(crate) fn new(cmp: F) -> Self {
        Self { heap: Vec::new(), cmp }
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// `offer`: append, then sift up while strictly smaller than the parent.
    ///
    /// Complexity: O(log n).
    pub(crate) fn offer(&mut self, x: T) {
        self.heap.push(x);
        let mut k = self.heap.len() - 1;
        while k > 0 {
            let parent = (k - 1) >> 1;
            if (self.cmp)(&self.heap[k], &self.heap[parent]) != Ordering::Less {
                break;
            }
            self.heap.swap(k, parent);
            k = parent;
        }
    }

    /// `poll`: take the root, move the last element to the root and sift it down (towards the
    /// smaller child, the left one on ties; stop when not greater than that child).
    ///
    /// Complexity: O(log n).
    pub(crate) fn poll(&mut self) -> Option<T> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let result = self.heap.swap_remove(0);
        let n = n - 1;
        let half = n >> 1;
        let mut k = 0;
        while k < half {
            let mut child = 2 * k + 1;
            let right = child + 1;
            if right < n && (self.cmp)(&self.heap[child], &self.heap[right]) == Ordering::Greater {
                child = right;
            }
            if (self.cmp)(&self.heap[k], &self.heap[child]) != Ordering::Greater {
                break;
            }
            self.heap.swap(k, child);
            k = child;
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
