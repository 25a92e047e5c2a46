//! The offset sums a member reports, as the leader reads them: one per task, in task order, in a
//! sorted vector (a linear placement or one sort, no tree nodes).

use std::collections::BTreeMap;
use std::ops::Index;

use super::types::TaskId;

/// The offset sum per task, sorted by task (Java's `TaskId` order), each task once: what
/// [`SubscriptionInfo::offset_sums`](super::SubscriptionInfo::offset_sums) gives. A sorted
/// vector with the map operations a reader needs (lookup by binary search, iteration in task
/// order); [`OffsetSums::into_map`] gives the `BTreeMap`. Tasks without a named topology (all of
/// them before version 10, nearly always after) are held as 16 bytes each and made on iteration.
///
/// ```
/// use kstreams_assignor::wire::{OffsetSums, TaskId};
///
/// // In wire order, 0_1 twice: the last one wins, as in Java's map.
/// let sums: OffsetSums = [(TaskId::new(0, 1), 5), (TaskId::new(0, 0), -2), (TaskId::new(0, 1), 7)].into_iter().collect();
/// assert_eq!(sums.len(), 2);
/// assert_eq!(sums[&TaskId::new(0, 1)], 7);
/// assert_eq!(sums.get(&TaskId::new(1, 0)), None);
/// assert_eq!(sums.keys().collect::<Vec<_>>(), [TaskId::new(0, 0), TaskId::new(0, 1)]);
/// ```
#[derive(Debug, Clone)]
pub struct OffsetSums(Entries);

#[derive(Debug, Clone)]
enum Entries {
    /// `(subtopology, partition, offset sum)`, no task named.
    Unnamed(Vec<(i32, i32, i64)>),
    /// Some task named.
    Any(Vec<(TaskId, i64)>),
}

impl Default for OffsetSums {
    fn default() -> Self {
        Self(Entries::Unnamed(Vec::new()))
    }
}

impl PartialEq for OffsetSums {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for OffsetSums {}

/// Orders tasks without a named topology as `TaskId::cmp` does, as one integer.
fn unnamed_key(subtopology: i32, partition: i32) -> u64 {
    let bits = |v: i32| u64::from(v as u32 ^ 0x8000_0000);
    (bits(subtopology) << 32) | bits(partition)
}

/// The indexes of [`OffsetSums::from_unnamed`]'s entries in task order, the last of equal
/// tasks kept. `len` is at least 1.
pub(super) fn unnamed_order(len: usize, entry: &impl Fn(usize) -> (i32, i32, i64)) -> Vec<u32> {
    let (s0, p0, _) = entry(0);
    let (mut s_min, mut s_max, mut p_min, mut p_max) = (s0, s0, p0, p0);
    for i in 1..len {
        let (s, p, _) = entry(i);
        (s_min, s_max) = (s_min.min(s), s_max.max(s));
        (p_min, p_max) = (p_min.min(p), p_max.max(p));
    }
    let offset = |lo: i32, v: i32| (i64::from(v) - i64::from(lo)) as u64;
    let cols = offset(p_min, p_max) + 1;
    // At most 4 cells per entry (plus a few): bounded by what the input holds.
    let cells = (offset(s_min, s_max) + 1).checked_mul(cols).filter(|&c| c <= 4 * len as u64 + 64);
    match cells {
        Some(cells) => {
            let mut cell = vec![u32::MAX; cells as usize];
            for i in 0..len {
                let (s, p, _) = entry(i);
                cell[(offset(s_min, s) * cols + offset(p_min, p)) as usize] = i as u32;
            }
            cell.retain(|&i| i != u32::MAX);
            cell
        }
        None => {
            // The wire index breaks ties, so that the last of equal tasks sorts last.
            let mut keys: Vec<u128> = (0..len)
                .map(|i| {
                    let (s, p, _) = entry(i);
                    (u128::from(unnamed_key(s, p)) << 64) | i as u128
                })
                .collect();
            keys.sort_unstable();
            keys.dedup_by(|later, kept| {
                let same = *later >> 64 == *kept >> 64;
                if same {
                    *kept = *later;
                }
                same
            });
            keys.into_iter().map(|k| k as u32).collect()
        }
    }
}

impl OffsetSums {
    /// `len` entries of tasks without a named topology, in wire order: entry `i` is
    /// `entry(i)` = `(subtopology, partition, offset sum)`; the last of equal tasks wins.
    ///
    /// When the tasks fill a good part of their sub-topology × partition rectangle (a member's
    /// tasks usually do), each is placed in its cell: linear time, and the last write to a cell
    /// is the last duplicate. Otherwise the keys are sorted.
    pub(crate) fn from_unnamed(len: usize, entry: impl Fn(usize) -> (i32, i32, i64)) -> Self {
        let order = if len == 0 { Vec::new() } else { unnamed_order(len, &entry) };
        Self(Entries::Unnamed(order.into_iter().map(|i| entry(i as usize)).collect()))
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        match &self.0 {
            Entries::Unnamed(v) => v.len(),
            Entries::Any(v) => v.len(),
        }
    }

    /// Whether no task has an offset sum.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset sum of `task` (a binary search).
    pub fn get(&self, task: &TaskId) -> Option<&i64> {
        match &self.0 {
            Entries::Unnamed(_) if task.topology.is_some() => None,
            Entries::Unnamed(v) => {
                let key = (task.subtopology, task.partition);
                v.binary_search_by(|&(s, p, _)| (s, p).cmp(&key)).ok().map(|i| &v[i].2)
            }
            Entries::Any(v) => v.binary_search_by(|(t, _)| t.cmp(task)).ok().map(|i| &v[i].1),
        }
    }

    /// Whether `task` has an offset sum.
    pub fn contains_key(&self, task: &TaskId) -> bool {
        self.get(task).is_some()
    }

    /// `(task, offset sum)` in task order.
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Entries::Unnamed(v) => Iter(IterEntries::Unnamed(v.iter())),
            Entries::Any(v) => Iter(IterEntries::Any(v.iter())),
        }
    }

    /// The tasks, in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = TaskId> + DoubleEndedIterator + '_ {
        self.iter().map(|(t, _)| t)
    }

    /// The offset sums, in task order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = i64> + DoubleEndedIterator + '_ {
        self.iter().map(|(_, s)| s)
    }

    /// The same entries in a `BTreeMap`.
    pub fn into_map(self) -> BTreeMap<TaskId, i64> {
        self.into_iter().collect()
    }
}

/// The entries of an [`OffsetSums`], in task order.
#[derive(Debug, Clone)]
pub struct Iter<'a>(IterEntries<'a>);

#[derive(Debug, Clone)]
enum IterEntries<'a> {
    Unnamed(std::slice::Iter<'a, (i32, i32, i64)>),
    Any(std::slice::Iter<'a, (TaskId, i64)>),
}

impl Iterator for Iter<'_> {
    type Item = (TaskId, i64);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterEntries::Unnamed(i) => i.next().map(|&(s, p, sum)| (TaskId::new(s, p), sum)),
            IterEntries::Any(i) => i.next().map(|(t, sum)| (t.clone(), *sum)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterEntries::Unnamed(i) => i.size_hint(),
            IterEntries::Any(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterEntries::Unnamed(i) => i.next_back().map(|&(s, p, sum)| (TaskId::new(s, p), sum)),
            IterEntries::Any(i) => i.next_back().map(|(t, sum)| (t.clone(), *sum)),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Entries in wire order; for a task given more than once the last one wins, as with Java's
/// `Map.put`.
impl FromIterator<(TaskId, i64)> for OffsetSums {
    fn from_iter<I: IntoIterator<Item = (TaskId, i64)>>(entries: I) -> Self {
        let mut entries: Vec<(TaskId, i64)> = entries.into_iter().collect();
        // Strictly increasing (what a map's order writes): nothing to sort or merge.
        if entries.is_sorted_by(|a, b| a.0 < b.0) {
            return Self(Entries::Any(entries));
        }
        if entries.iter().all(|(t, _)| t.topology.is_none()) {
            return Self::from_unnamed(entries.len(), |i| (entries[i].0.subtopology, entries[i].0.partition, entries[i].1));
        }
        // Stable, so that equal tasks stay in wire order for the merge.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = later.1;
            }
            same
        });
        Self(Entries::Any(entries))
    }
}

impl Index<&TaskId> for OffsetSums {
    type Output = i64;

    /// The offset sum of `task`; panics when it has none, as `BTreeMap`'s index does.
    fn index(&self, task: &TaskId) -> &i64 {
        self.get(task).expect("no offset sum for this task")
    }
}

impl IntoIterator for OffsetSums {
    type Item = (TaskId, i64);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        match self.0 {
            Entries::Unnamed(v) => IntoIter(IntoEntries::Unnamed(v.into_iter())),
            Entries::Any(v) => IntoIter(IntoEntries::Any(v.into_iter())),
        }
    }
}

/// The entries of an [`OffsetSums`], in task order, by value.
#[derive(Debug)]
pub struct IntoIter(IntoEntries);

#[derive(Debug)]
enum IntoEntries {
    Unnamed(std::vec::IntoIter<(i32, i32, i64)>),
    Any(std::vec::IntoIter<(TaskId, i64)>),
}

impl Iterator for IntoIter {
    type Item = (TaskId, i64);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IntoEntries::Unnamed(i) => i.next().map(|(s, p, sum)| (TaskId::new(s, p), sum)),
            IntoEntries::Any(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IntoEntries::Unnamed(i) => i.size_hint(),
            IntoEntries::Any(i) => i.size_hint(),
        }
    }
}

impl ExactSizeIterator for IntoIter {}

impl<'a> IntoIterator for &'a OffsetSums {
    type Item = (TaskId, i64);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn task(topology: u8, subtopology: i32, partition: i32) -> TaskId {
        match topology {
            0 => TaskId::new(subtopology, partition),
            n => TaskId::named(&format!("t{n}"), subtopology, partition),
        }
    }

    proptest! {
        /// The same entries, lookups and order as a `BTreeMap` filled in wire order (Java's
        /// `put`: the last of equal tasks wins).
        #[test]
        fn equal_the_map_built_by_insertion(
            entries in proptest::collection::vec((0u8..3, -2i32..3, i32::MIN..i32::MAX, any::<i64>()), 0..40),
            named in any::<bool>(),
            wide in any::<bool>(),
        ) {
            // Narrow partitions fill their rectangle (placed in cells), wide ones do not (sorted).
            let entries: Vec<(TaskId, i64)> = entries
                .into_iter()
                .map(|(n, s, p, sum)| (task(if named { n } else { 0 }, s, if wide { p } else { p % 4 }), sum))
                .collect();
            let mut map = BTreeMap::new();
            for (t, s) in &entries {
                map.insert(t.clone(), *s);
            }
            let sums: OffsetSums = entries.iter().cloned().collect();
            prop_assert_eq!(sums.iter().collect::<Vec<_>>(), map.clone().into_iter().collect::<Vec<_>>());
            for (t, _) in &entries {
                prop_assert_eq!(sums.get(t), map.get(t));
            }
            prop_assert_eq!(sums.get(&task(9, 9, 9)), None);
            prop_assert_eq!(sums.into_map(), map);
        }
    }
}
