//! Java's orders: `compareTo` of the keys Kafka sorts and puts in tree bins, and `Double.compare`.
//!
//! Java's `UUID.compareTo` compares the high 64 bits as a *signed* long, then the low 64 bits as a
//! signed long. That is not the byte order [`ProcessId`]'s own `Ord` uses (the wire type sorts
//! like the bytes, i.e. unsigned), so every assignor sorts clients with
//! [`cmp_process_ids`] instead. Task ids sort as Java's `TaskId.compareTo`, whose topology names
//! compare as Java strings (UTF-16 code units).

use std::cmp::Ordering;

use crate::wire::{HostInfo, ProcessId, TaskId, TopicPartition};

/// Java's `UUID.compareTo` on two process ids: signed high 64 bits, then signed low 64 bits.
///
/// ```
/// use std::cmp::Ordering;
/// use kstreams_assignor::engine::cmp_process_ids;
/// use kstreams_assignor::wire::ProcessId;
///
/// let low: ProcessId = "00000000-0000-0000-0000-000000000001".parse().unwrap();
/// let high_bit: ProcessId = "80000000-0000-0000-0000-000000000000".parse().unwrap();
/// // Byte order puts 0x80… last; Java reads it as a negative long and puts it first.
/// assert_eq!(low.cmp(&high_bit), Ordering::Less);
/// assert_eq!(cmp_process_ids(&low, &high_bit), Ordering::Greater);
/// ```
pub fn cmp_process_ids(a: &ProcessId, b: &ProcessId) -> Ordering {
    java_uuid_key(a).cmp(&java_uuid_key(b))
}

/// The `(most, least)` significant bits of a process id as Java's signed longs.
pub(crate) fn java_uuid_key(id: &ProcessId) -> (i64, i64) {
    let (hi, lo) = id.0.as_u64_pair();
    (hi as i64, lo as i64)
}

/// Java's `TaskId.compareTo`: topology name (as Java strings), then sub-topology, then partition.
///
/// Java throws when exactly one of the two ids has a named topology; the engine rejects such
/// inputs before sorting, and this function puts unnamed tasks first.
///
/// ```
/// use std::cmp::Ordering;
/// use kstreams_assignor::engine::cmp_task_ids;
/// use kstreams_assignor::wire::TaskId;
///
/// assert_eq!(cmp_task_ids(&TaskId::new(0, 10), &TaskId::new(1, 0)), Ordering::Less);
/// // U+FF5E sorts after U+1F600 in UTF-16 (a surrogate pair starts with 0xD83D).
/// assert_eq!(cmp_task_ids(&TaskId::named("\u{ff5e}", 0, 0), &TaskId::named("\u{1f600}", 0, 0)), Ordering::Greater);
/// ```
pub fn cmp_task_ids(a: &TaskId, b: &TaskId) -> Ordering {
    let names = match (&a.topology, &b.topology) {
        (Some(x), Some(y)) => cmp_java_strings(x, y),
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    };
    names.then(a.subtopology.cmp(&b.subtopology)).then(a.partition.cmp(&b.partition))
}

/// Java's `String.compareTo`: lexicographic over UTF-16 code units.
pub(crate) fn cmp_java_strings(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Java's `Double.compare` for the loads the assignors compute (never NaN: capacities are ≥ 1).
pub(crate) fn cmp_loads(a: f64, b: f64) -> Ordering {
    a.total_cmp(&b)
}

/// Java's `compareTo` of keys that implement `Comparable<Self>`; a tree bin orders keys of equal
/// hash by it.
pub(crate) trait JavaComparable {
    fn java_cmp(&self, other: &Self) -> Ordering;
}

impl JavaComparable for TaskId {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_task_ids(self, other)
    }
}

impl JavaComparable for ProcessId {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_process_ids(self, other)
    }
}

impl JavaComparable for str {
    /// `String.compareTo`: over UTF-16 code units.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(self, other)
    }
}

impl JavaComparable for String {
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(self, other)
    }
}

impl JavaComparable for TopicPartition {
    /// `TopicPartition` is not `Comparable`: Java orders two distinct partitions of equal hash in
    /// a tree bin by their identity hash codes, which differ from run to run. This fixed order
    /// (topic, then partition) stands in for it; only such a tree bin can iterate differently.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(&self.topic, &other.topic).then(self.partition.cmp(&other.partition))
    }
}

impl JavaComparable for HostInfo {
    /// `HostInfo` is not `Comparable` either; as for [`TopicPartition`], a fixed stand-in
    /// (host, then port) for Java's identity-hash tie break.
    fn java_cmp(&self, other: &Self) -> Ordering {
        cmp_java_strings(&self.host, &other.host).then(self.port.cmp(&other.port))
    }
}

impl<T: JavaComparable + ?Sized> JavaComparable for &T {
    fn java_cmp(&self, other: &Self) -> Ordering {
        (**self).java_cmp(*other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(s: &str) -> ProcessId {
        s.parse().unwrap()
    }

    #[test]
    fn process_ids_compare_as_signed_longs() {
        let ids = [
            pid("ffffffff-ffff-ffff-ffff-ffffffffffff"),
            pid("00000000-0000-0000-0000-000000000000"),
            pid("7fffffff-ffff-ffff-0000-000000000000"),
            pid("00000000-0000-0000-8000-000000000000"),
            pid("80000000-0000-0000-0000-000000000000"),
        ];
        let mut sorted = ids.to_vec();
        sorted.sort_by(cmp_process_ids);
        let printed: Vec<String> = sorted.iter().map(ToString::to_string).collect();
        assert_eq!(
            printed,
            [
                "80000000-0000-0000-0000-000000000000",
                "ffffffff-ffff-ffff-ffff-ffffffffffff",
                "00000000-0000-0000-8000-000000000000",
                "00000000-0000-0000-0000-000000000000",
                "7fffffff-ffff-ffff-0000-000000000000",
            ]
        );
    }

    #[test]
    fn loads_compare_as_java_doubles() {
        assert_eq!(cmp_loads(-0.0, 0.0), Ordering::Less);
        assert_eq!(cmp_loads(1.0 / 3.0, 2.0 / 6.0), Ordering::Equal);
    }
}
