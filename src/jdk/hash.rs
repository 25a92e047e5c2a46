//! Java's `hashCode()` of the values Kafka's collections hold, and `HashMap.hash`.

use crate::wire::{HostInfo, ProcessId, TaskId, TopicPartition};

/// Java's `hashCode()` of a value.
pub(crate) trait JavaHashCode {
    fn java_hash_code(&self) -> i32;
}

/// `String.hashCode`: `s[0]·31^(n-1) + … + s[n-1]` over UTF-16 code units, wrapping.
pub(crate) fn string_hash(s: &str) -> i32 {
    // An ASCII string's UTF-16 code units are its bytes: no decoding.
    if s.is_ascii() {
        return s.bytes().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    }
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `Objects.hash(a, b, c)` = `Arrays.hashCode(new Object[]{a, b, c})`.
pub(crate) fn objects_hash(parts: &[i32]) -> i32 {
    parts.iter().fold(1i32, |h, &p| h.wrapping_mul(31).wrapping_add(p))
}

impl JavaHashCode for TaskId {
    /// `Objects.hash(subtopology, partition, topologyName)`; an `Integer` hashes to its value and
    /// a null name to 0.
    fn java_hash_code(&self) -> i32 {
        let name = self.topology.as_deref().map_or(0, string_hash);
        objects_hash(&[self.subtopology, self.partition, name])
    }
}

impl JavaHashCode for ProcessId {
    /// `UUID.hashCode`: `(int) (hilo >> 32) ^ (int) hilo` with `hilo = most ^ least`.
    fn java_hash_code(&self) -> i32 {
        let (hi, lo) = self.0.as_u64_pair();
        let hilo = hi ^ lo;
        ((hilo >> 32) as i32) ^ (hilo as i32)
    }
}

impl JavaHashCode for str {
    fn java_hash_code(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHashCode for String {
    fn java_hash_code(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHashCode for TopicPartition {
    /// `TopicPartition.hashCode`: `31 · (31 + partition) + topic.hashCode()`.
    fn java_hash_code(&self) -> i32 {
        31i32.wrapping_mul(31i32.wrapping_add(self.partition)).wrapping_add(string_hash(&self.topic))
    }
}

impl JavaHashCode for HostInfo {
    /// `HostInfo.hashCode`: `31 · host.hashCode() + port`.
    fn java_hash_code(&self) -> i32 {
        31i32.wrapping_mul(string_hash(&self.host)).wrapping_add(self.port)
    }
}

impl<T: JavaHashCode + ?Sized> JavaHashCode for &T {
    fn java_hash_code(&self) -> i32 {
        (**self).java_hash_code()
    }
}

/// `HashMap.hash`: the hash code with its high half folded into the low half.
pub(crate) fn spread(h: i32) -> i32 {
    h ^ ((h as u32) >> 16) as i32
}
