//! The iteration order of a `java.util.HashSet` of keys known only by their hash codes.

use std::cmp::Ordering;

use super::cmp::JavaComparable;
use super::hash::{JavaHashCode, spread};
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
/// equal hash in a tree bin), replayed by a [`JavaHashSet`], tree bins included; sets whose
/// buckets never reach 9 keys are put in order by bucket alone.
///
/// For a class that is not `Comparable`, Java orders such items by their identity hash codes,
/// which differ from run to run; `|_, _| Ordering::Equal` takes them in the order added instead.
pub(crate) fn hash_set_order_by<T>(
    items: impl IntoIterator<Item = T>,
    hash: impl Fn(&T) -> i32,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    let items: Vec<T> = items.into_iter().collect();
    let hashes: Vec<i32> = items.iter().map(&hash).collect();
    let order: Vec<usize> = uncrowded_order(&hashes).unwrap_or_else(|| {
        let mut set = JavaHashSet::new();
        for (seq, &hash) in hashes.iter().enumerate() {
            set.add(Keyed { hash, seq, items: &items, cmp: &cmp });
        }
        set.keys().map(|k| k.seq).collect()
    });
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// The iteration order of a `new HashSet<>()` after adding distinct keys with these hash codes,
/// when no bucket of the table ever holds 9 keys: by bucket of the final table, in insertion
/// order within a bucket, since a resize splits every bucket keeping its order. `None` when a
/// bucket does reach 9 (it then becomes a tree, or a small table doubles early), which leaves
/// the order to the full replay.
///
/// Complexity: O(k log k) for k keys, without the replay's nodes.
fn uncrowded_order(hashes: &[i32]) -> Option<Vec<usize>> {
    let k = hashes.len();
    let spread: Vec<u32> = hashes.iter().map(|&h| spread(h) as u32).collect();
    // The table passes through capacities 16, 32, …; each one holds up to its threshold plus
    // one key (the key that crosses the threshold is put before the table doubles).
    let mut capacity = 16usize;
    let mut counts: Vec<u8> = Vec::new();
    loop {
        let threshold = capacity * 3 / 4;
        if k >= 9 {
            counts.clear();
            counts.resize(capacity, 0);
            for &h in &spread[..(threshold + 1).min(k)] {
                let n = &mut counts[h as usize & (capacity - 1)];
                *n += 1;
                if *n >= 9 {
                    return None;
                }
            }
        }
        if k <= threshold {
            break;
        }
        capacity *= 2;
    }
    let mask = capacity - 1;
    let mut order: Vec<usize> = (0..k).collect();
    // Stable: insertion order within a bucket.
    order.sort_by_key(|&i| spread[i] as usize & mask);
    Some(order)
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

    /// The order by bucket is the replay's order whenever it is used, through resizes; sets
    /// with a crowded bucket are left to the replay.
    #[test]
    fn the_order_by_bucket_is_the_replay_order() {
        let replay = |hashes: &[i32]| -> Vec<usize> {
            let items: Vec<usize> = (0..hashes.len()).collect();
            let cmp = |a: &usize, b: &usize| a.cmp(b);
            let mut set = JavaHashSet::new();
            for (seq, &hash) in hashes.iter().enumerate() {
                set.add(Keyed { hash, seq, items: &items, cmp: &cmp });
            }
            set.keys().map(|k| k.seq).collect()
        };
        let mut rng = crate::rng::Rng::new(11);
        let (mut fast, mut crowded) = (0, 0);
        for k in [0usize, 1, 5, 9, 12, 13, 25, 49, 100, 700] {
            for spread_bits in [3u32, 8, 16, 31] {
                let hashes: Vec<i32> =
                    (0..k).map(|_| (rng.range(0, (1i64 << spread_bits) - 1) as i32).wrapping_mul(-1_640_531_535)).collect();
                match uncrowded_order(&hashes) {
                    Some(order) => {
                        assert_eq!(order, replay(&hashes), "k = {k}, bits = {spread_bits}");
                        fast += 1;
                    }
                    None => crowded += 1,
                }
            }
        }
        assert!(fast >= 20 && crowded >= 3, "{fast} by bucket, {crowded} crowded");
    }
}
