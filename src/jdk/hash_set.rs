//! The iteration order of a `java.util.HashSet` of keys known only by their hash codes.

use std::cmp::Ordering;

use super::cmp::JavaComparable;
use super::hash::JavaHashCode;
use super::hash_map::JavaHashSet;

/// A key of a [`JavaHashSet`]: the index of an item, with its hash code and the items' order.
struct Keyed<'c, T> {
    hash: i32,
    seq: usize,
    items: &'c [T],
    cmp: &'c dyn Fn(&T, &T) -> Ordering,
}

impl<T> JavaHashCode for Keyed<'_, T> {
    fn java_hash_code(&self) -> i32 {
        self.hash
    }
}

impl<T> JavaComparable for Keyed<'_, T> {
    /// The items' order; items it does not tell apart in the order they were added.
    fn java_cmp(&self, other: &Self) -> Ordering {
        (self.cmp)(&self.items[self.seq], &self.items[other.seq]).then(self.seq.cmp(&other.seq))
    }
}

impl<T> PartialEq for Keyed<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

impl<T> Eq for Keyed<'_, T> {}

/// The iteration order of a `new HashSet<>()` after adding the distinct `items` in the given
/// order, where `hash` is their `hashCode()` and `cmp` their `compareTo` (which orders items of
/// equal hash in a tree bin), replayed by a [`JavaHashSet`], tree bins included.
///
/// For a class that is not `Comparable`, Java orders such items by their identity hash codes,
/// which differ from run to run; `|_, _| Ordering::Equal` takes them in the order added instead.
pub(crate) fn hash_set_order_by<T>(
    items: impl IntoIterator<Item = T>,
    hash: impl Fn(&T) -> i32,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    let items: Vec<T> = items.into_iter().collect();
    let order: Vec<usize> = {
        let mut set = JavaHashSet::new();
        for (seq, item) in items.iter().enumerate() {
            set.add(Keyed { hash: hash(item), seq, items: &items, cmp: &cmp });
        }
        set.keys().map(|k| k.seq).collect()
    };
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// [`hash_set_order_by`] for items of a class that is not `Comparable`: items of equal hash in a
/// tree bin are ordered as added.
pub(crate) fn hash_set_order<T>(items: impl IntoIterator<Item = T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    hash_set_order_by(items, hash, |_, _| Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::TaskId;

    fn t(s: i32, p: i32) -> TaskId {
        TaskId::new(s, p)
    }

    #[test]
    fn small_sets_iterate_by_bucket() {
        // Buckets of 16: 0_0 → 29791 & 15 = 15, 0_1 → 29822 & 15 = 14, 1_0 → 30752 & 15 = 0.
        let order = hash_set_order([t(0, 0), t(0, 1), t(1, 0)], TaskId::java_hash_code);
        assert_eq!(order, [t(1, 0), t(0, 1), t(0, 0)]);
    }
}
