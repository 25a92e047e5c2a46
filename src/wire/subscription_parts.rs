//! The pieces of a `SubscriptionInfo` on the wire: the task-state entries and client tags, and
//! their readers and writers.

use super::codec::{Reader, Writer};
use super::error::{DecodeError, EncodeError, Lenience};
use super::types::TaskId;

/// One v7–9 group: the offset sums of one sub-topology's tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtopologyOffsetSums {
    /// The sub-topology (`topicGroupId`).
    pub subtopology: i32,
    /// `(partition, offsetSum)` pairs in wire order.
    pub partitions: Vec<(i32, i64)>,
}

/// One v10+ offset-sum entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOffsetSum {
    /// The sub-topology (`topicGroupId`).
    pub subtopology: i32,
    /// The partition.
    pub partition: i32,
    /// The offset sum, or [`LATEST_OFFSET`](crate::wire::LATEST_OFFSET) for a running active task.
    pub offset_sum: i64,
    /// The named topology's raw UTF-8 bytes; `None` (and an empty name) mean none.
    pub named_topology: Option<Vec<u8>>,
}

impl TaskOffsetSum {
    /// The task this entry is for. Invalid UTF-8 in the name is replaced as Java replaces it.
    pub fn task_id(&self) -> TaskId {
        match &self.named_topology {
            Some(name) => TaskId::named(&String::from_utf8_lossy(name), self.subtopology, self.partition),
            None => TaskId::new(self.subtopology, self.partition),
        }
    }
}

/// A client tag (`client.tag.*`, v11+), raw UTF-8 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTag {
    /// The tag key.
    pub key: Vec<u8>,
    /// The tag value.
    pub value: Vec<u8>,
}

pub(super) fn read_task_pairs(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<TaskId>, DecodeError> {
    let n = r.count(field, 8)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let subtopology = r.i32(field)?;
        let partition = r.i32(field)?;
        out.push(TaskId::new(subtopology, partition));
    }
    Ok(out)
}

pub(super) fn write_task_pairs(w: &mut Writer, field: &'static str, tasks: &[TaskId]) -> Result<(), EncodeError> {
    w.count(field, tasks.len())?;
    for t in tasks {
        w.i32(t.subtopology);
        w.i32(t.partition);
    }
    Ok(())
}

pub(super) fn read_grouped_sums(r: &mut Reader<'_>) -> Result<Vec<SubtopologyOffsetSums>, DecodeError> {
    let n = r.count("taskOffsetSums", 8)?;
    let mut groups = Vec::with_capacity(n);
    for _ in 0..n {
        let subtopology = r.i32("taskOffsetSums.topicGroupId")?;
        let m = r.count("partitionToOffsetSum", 12)?;
        let mut partitions = Vec::with_capacity(m);
        for _ in 0..m {
            let partition = r.i32("partitionToOffsetSum.partition")?;
            let sum = r.i64("partitionToOffsetSum.offsetSum")?;
            partitions.push((partition, sum));
        }
        groups.push(SubtopologyOffsetSums { subtopology, partitions });
    }
    Ok(groups)
}

pub(super) fn read_flat_sums(r: &mut Reader<'_>) -> Result<Vec<TaskOffsetSum>, DecodeError> {
    let n = r.count("taskOffsetSums", 18)?;
    let mut entries = Vec::with_capacity(n);
    while entries.len() < n {
        // The usual entry, of no named topology (a null name, length -1): 18 bytes read in place.
        if let Some(h) = r.rest().first_chunk::<18>().filter(|h| h[16..] == [0xff, 0xff]) {
            let [s0, s1, s2, s3, p0, p1, p2, p3, o0, o1, o2, o3, o4, o5, o6, o7, _, _] = *h;
            entries.push(TaskOffsetSum {
                subtopology: i32::from_be_bytes([s0, s1, s2, s3]),
                partition: i32::from_be_bytes([p0, p1, p2, p3]),
                offset_sum: i64::from_be_bytes([o0, o1, o2, o3, o4, o5, o6, o7]),
                named_topology: None,
            });
            r.advance(18);
            continue;
        }
        let (subtopology, partition, offset_sum) = match r.chunk::<16>() {
            Some(h) => (
                i32::from_be_bytes([h[0], h[1], h[2], h[3]]),
                i32::from_be_bytes([h[4], h[5], h[6], h[7]]),
                i64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]),
            ),
            // Cut off within the entry: read field by field to name the missing one.
            None => (
                r.i32("taskOffsetSums.topicGroupId")?,
                r.i32("taskOffsetSums.partition")?,
                r.i64("taskOffsetSums.offsetSum")?,
            ),
        };
        let at = r.position();
        let named_topology = r.nullable_string_i16("taskOffsetSums.namedTopology")?.map(<[u8]>::to_vec);
        if let Some(name) = &named_topology {
            r.check_utf8(at, "taskOffsetSums.namedTopology", name);
        }
        if named_topology.as_ref().is_some_and(Vec::is_empty) {
            r.note(Lenience::EmptyNamedTopology { offset: at });
        }
        entries.push(TaskOffsetSum { subtopology, partition, offset_sum, named_topology });
    }
    Ok(entries)
}

pub(super) fn read_client_tags(r: &mut Reader<'_>) -> Result<Vec<ClientTag>, DecodeError> {
    let n = r.count("clientTags", 8)?;
    let mut tags = Vec::with_capacity(n);
    for _ in 0..n {
        let at = r.position();
        let key = r.bytes_i32("clientTags.key")?;
        r.check_utf8(at, "clientTags.key", key);
        let at = r.position();
        let value = r.bytes_i32("clientTags.value")?;
        r.check_utf8(at, "clientTags.value", value);
        tags.push(ClientTag { key: key.to_vec(), value: value.to_vec() });
    }
    Ok(tags)
}
