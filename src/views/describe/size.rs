//! The size of a classic group's metadata record against the broker's limit.
//!
//! The group coordinator keeps a classic group's state in one record of `__consumer_offsets`
//! (`GroupMetadataValue`), written when the leader's SyncGroup completes: every member's ids,
//! host, timeouts, its subscription (the chosen protocol's metadata) and its assignment. The
//! coordinator writes it in one record batch no larger than the topic's `max.message.bytes`,
//! which `__consumer_offsets` does not override, so the broker's `message.max.bytes` applies:
//! by default 1,048,588 bytes (1 MiB plus the 12 bytes of a batch's offset and length). When a
//! group's record is larger, SyncGroup fails (`MESSAGE_TOO_LARGE` inside the coordinator,
//! `UNKNOWN_SERVER_ERROR` to the members) and the group rebalances again, forever: large Kafka
//! Streams groups with many tasks per member meet it first, as every subscription carries an
//! offset sum per task and every assignment the partitions of every host.
//!
//! [`GroupRecordSize`] counts the record as Kafka writes it (`GroupMetadataValue` v3, its key,
//! and the batch and record headers) from what `DescribeGroups` returns; the limit is the topic's
//! `max.message.bytes` as the broker reports it (`DescribeConfigs`, [`record_limit`]), or the
//! default when the broker would not say (an older broker, or no `DescribeConfigs` permission on
//! the topic). The leader id, not in
//! `DescribeGroups`, is counted as long as the longest member id, so the figure is at most a few
//! bytes above Kafka's.

use std::time::Duration;

use serde::Serialize;

use crate::views::describe::DescribedGroup;
use crate::client::admin::{ConfigResource, describe_configs};
use crate::client::connection::Connection;

/// The topic that holds the group records, and the config that bounds them.
const OFFSETS_TOPIC: &str = "__consumer_offsets";
const MAX_MESSAGE_BYTES: &str = "max.message.bytes";

/// `__consumer_offsets`' `max.message.bytes` as `coord` reports it (its own value, or the broker's
/// `message.max.bytes` it inherits), or `None` when the broker refuses, errs or does not say.
pub fn record_limit(coord: &mut Connection, timeout: Duration) -> Option<usize> {
    let configs = describe_configs(coord, ConfigResource::Topic, OFFSETS_TOPIC, &[MAX_MESSAGE_BYTES], timeout)?;
    configs.get(MAX_MESSAGE_BYTES)?.parse().ok().filter(|&limit: &usize| limit > 0)
}

/// The default of `message.max.bytes` (and so of `__consumer_offsets`' `max.message.bytes`):
/// 1 MiB plus the 12 bytes of a record batch's base offset and length.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_588;

/// The share of the limit above which [`GroupRecordSize::warning`] warns.
pub const WARN_FRACTION: f64 = 0.8;

/// A record batch's header (magic v2) with one record's header, at most.
const BATCH_AND_RECORD_OVERHEAD: usize = 61 + 21;

/// One member's share of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MemberRecordSize {
    /// `memberId`.
    pub member_id: String,
    /// Bytes of its subscription (`memberMetadata`).
    pub subscription_bytes: usize,
    /// Bytes of its assignment (`memberAssignment`).
    pub assignment_bytes: usize,
    /// Everything the record holds for it: ids, host, timeouts, subscription and assignment.
    pub record_bytes: usize,
}

/// A classic group's metadata record against the broker's limit.
///
/// ```
/// use kstreams_assignor::views::describe::size::{GroupRecordSize, DEFAULT_MAX_MESSAGE_BYTES};
///
/// let small = GroupRecordSize::from_parts("app", "consumer", "stream", [("m-1", None, "c", "/h", 900_000, 10)]);
/// assert_eq!(small.limit_bytes, DEFAULT_MAX_MESSAGE_BYTES);
/// assert!(small.warning().is_some(), "{} bytes is above 80 % of the limit", small.total_bytes);
/// let ok = small.clone().with_limit(2_000_000);
/// assert!(ok.warning().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GroupRecordSize {
    /// Per member, in the order given.
    pub members: Vec<MemberRecordSize>,
    /// The whole batch: key, value, headers.
    pub total_bytes: usize,
    /// The limit it is held to.
    pub limit_bytes: usize,
    /// Whether the limit is Kafka's default (not read from the broker).
    pub limit_is_default: bool,
}

/// A string's size in a non-flexible message (`i16` length).
fn string(s: &str) -> usize {
    2 + s.len()
}

impl GroupRecordSize {
    /// The record of a group with `protocol_type`/`protocol` and its members, each as
    /// (member id, group instance id, client id, client host, subscription bytes, assignment
    /// bytes), against [`DEFAULT_MAX_MESSAGE_BYTES`].
    pub fn from_parts<'a>(
        group: &str,
        protocol_type: &str,
        protocol: &str,
        members: impl IntoIterator<Item = (&'a str, Option<&'a str>, &'a str, &'a str, usize, usize)>,
    ) -> Self {
        let members: Vec<MemberRecordSize> = members
            .into_iter()
            .map(|(id, instance, client, host, subscription, assignment)| MemberRecordSize {
                member_id: id.to_owned(),
                subscription_bytes: subscription,
                assignment_bytes: assignment,
                // Ids and host; rebalance and session timeouts; both byte arrays with i32 lengths.
                record_bytes: string(id) + instance.map_or(2, string) + string(client) + string(host) + 4 + 4 + 4 + subscription + 4 + assignment,
            })
            .collect();
        let leader = members.iter().map(|m| m.member_id.len()).max().unwrap_or(0);
        // Key: version, group. Value: version, protocol type, generation, protocol, leader,
        // state timestamp, member count.
        let key = 2 + string(group);
        let value = 2 + string(protocol_type) + 4 + string(protocol) + 2 + leader + 8 + 4;
        let total = BATCH_AND_RECORD_OVERHEAD + key + value + members.iter().map(|m| m.record_bytes).sum::<usize>();
        Self { members, total_bytes: total, limit_bytes: DEFAULT_MAX_MESSAGE_BYTES, limit_is_default: true }
    }

    /// The same record against the broker's own limit.
    pub fn with_limit(mut self, limit_bytes: usize) -> Self {
        self.limit_bytes = limit_bytes;
        self.limit_is_default = false;
        self
    }

    /// The share of the limit used (0.5: half).
    pub fn fraction(&self) -> f64 {
        self.total_bytes as f64 / self.limit_bytes.max(1) as f64
    }

    /// One line: the total against the limit.
    pub fn summary(&self) -> String {
        let whose = if self.limit_is_default { "message.max.bytes default" } else { "the broker's max.message.bytes" };
        format!(
            "group record {} bytes of {} ({:.1} %, {whose})",
            self.total_bytes,
            self.limit_bytes,
            self.fraction() * 100.0
        )
    }

    /// Above [`WARN_FRACTION`] of the limit: what happens at the limit, in a sentence.
    pub fn warning(&self) -> Option<String> {
        (self.fraction() > WARN_FRACTION).then(|| {
            format!(
                "warning: the group's metadata record is {} bytes, {:.0} % of the {} bytes the broker writes in one batch: \
                 above it every SyncGroup fails and the group rebalances without end (fewer tasks per member, fewer members, \
                 or a larger message.max.bytes)",
                self.total_bytes,
                self.fraction() * 100.0,
                self.limit_bytes
            )
        })
    }
}

impl DescribedGroup {
    /// The group's metadata record against the broker's limit, or [`DEFAULT_MAX_MESSAGE_BYTES`]
    /// when it was not read (see the [module docs](self)).
    pub fn record_size(&self) -> GroupRecordSize {
        let size = GroupRecordSize::from_parts(
            &self.group_id,
            &self.protocol_type,
            &self.protocol_data,
            self.members.iter().map(|m| {
                (
                    m.member_id.as_str(),
                    m.group_instance_id.as_deref(),
                    m.client_id.as_str(),
                    m.client_host.as_str(),
                    m.member_metadata.len(),
                    m.member_assignment.len(),
                )
            }),
        );
        match self.record_limit_bytes {
            Some(limit) => size.with_limit(limit),
            None => size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_counts_every_member_field_and_the_headers() {
        let one = GroupRecordSize::from_parts("g", "consumer", "stream", [("m", None, "c", "h", 10, 20)]);
        // Member: 3 + 2 + 3 + 3 + 12 + 10 + 4 + 20.
        assert_eq!(one.members[0].record_bytes, 57);
        // Batch 82, key 2 + 3, value 2 + 10 + 4 + 8 + 3 + 8 + 4, member 57.
        assert_eq!(one.total_bytes, 82 + 5 + 39 + 57);
        let two = GroupRecordSize::from_parts("g", "consumer", "stream", [("m", None, "c", "h", 10, 20), ("n", Some("i"), "c", "h", 0, 0)]);
        assert_eq!(two.total_bytes - one.total_bytes, two.members[1].record_bytes);
    }

    #[test]
    fn warns_only_above_eighty_percent() {
        let at = |bytes| GroupRecordSize::from_parts("g", "consumer", "stream", [("m", None, "c", "h", bytes, 0)]).with_limit(10_000);
        assert!(at(7_000).warning().is_none());
        let over = at(8_000);
        assert!(over.fraction() > 0.8);
        assert!(over.warning().unwrap().contains("10000 bytes"), "{:?}", over.warning());
        assert!(over.summary().contains("the broker's max.message.bytes"));
    }
}
