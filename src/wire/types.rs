//! The shared vocabulary: task ids, process ids, hosts, topic partitions, assignor error codes,
//! offset-sum sentinels and task lags.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// Implements `Serialize`/`Deserialize` through `Display`/`FromStr`.
macro_rules! serde_via_string {
    ($ty:ty, $expecting:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(|e| serde::de::Error::custom(format_args!("{}: {e}", $expecting)))
            }
        }
    };
}

/// A stream task: a sub-topology (Kafka's `topicGroupId`) and a partition, optionally within a
/// named topology.
///
/// Prints and parses as Kafka does: `0_1`, or `orders__0_1` in the named topology `orders`.
/// Tasks order as Java's `TaskId.compareTo`: by topology name, then sub-topology, then partition
/// (tasks without a topology name first).
///
/// ```
/// use kstreams_assignor::wire::TaskId;
///
/// let t: TaskId = "orders__2_7".parse().unwrap();
/// assert_eq!((t.subtopology, t.partition, t.topology.as_deref()), (2, 7, Some("orders")));
/// assert_eq!(TaskId::new(0, 1).to_string(), "0_1");
/// assert!("0-1".parse::<TaskId>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TaskId {
    /// The sub-topology (Java: `subtopology()`, on the wire `topicGroupId`).
    pub subtopology: i32,
    /// The input partition.
    pub partition: i32,
    /// The named topology, if any (wire versions 10+).
    pub topology: Option<Arc<str>>,
}

impl TaskId {
    /// A task of the unnamed topology.
    pub const fn new(subtopology: i32, partition: i32) -> Self {
        Self { subtopology, partition, topology: None }
    }

    /// A task of a named topology. An empty name means no named topology, as in Java.
    pub fn named(topology: &str, subtopology: i32, partition: i32) -> Self {
        let topology = (!topology.is_empty()).then(|| Arc::from(topology));
        Self { subtopology, partition, topology }
    }
}

impl Ord for TaskId {
    fn cmp(&self, other: &Self) -> Ordering {
        let ids = || (self.subtopology, self.partition).cmp(&(other.subtopology, other.partition));
        match (&self.topology, &other.topology) {
            (None, None) => ids(),
            (a, b) => a.cmp(b).then_with(ids),
        }
    }
}

impl PartialOrd for TaskId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.topology {
            write!(f, "{name}__")?;
        }
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// Text that is not a task id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a task id (expected <subtopology>_<partition> or <topology>__<subtopology>_<partition>)")]
pub struct ParseTaskIdError(String);

impl FromStr for TaskId {
    type Err = ParseTaskIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseTaskIdError(s.to_owned());
        let (topology, rest) = match s.find("__") {
            Some(i) => (Some(&s[..i]), &s[i + 2..]),
            None => (None, s),
        };
        let (sub, part) = rest.split_once('_').ok_or_else(err)?;
        let subtopology = sub.parse().map_err(|_| err())?;
        let partition = part.parse().map_err(|_| err())?;
        Ok(match topology {
            Some(name) => Self::named(name, subtopology, partition),
            None => Self::new(subtopology, partition),
        })
    }
}

serde_via_string!(TaskId, "task id");

/// A Kafka Streams instance's process id (`application.id`-wide unique, one per `KafkaStreams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ProcessId(pub Uuid);

impl ProcessId {
    /// The all-zero id Java uses for a subscription from a future version.
    pub const NIL: Self = Self(Uuid::nil());

    /// A fresh random (v4) id, as Kafka Streams makes one.
    pub fn random() -> Self {
        Self(Uuid::new_v4())
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl FromStr for ProcessId {
    type Err = uuid::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(s).map(Self)
    }
}

serde_via_string!(ProcessId, "process id");

/// A topic partition, printed as Kafka prints it: `orders-3`.
///
/// ```
/// use kstreams_assignor::wire::TopicPartition;
///
/// let tp: TopicPartition = "my-topic-3".parse().unwrap();
/// assert_eq!((&*tp.topic, tp.partition), ("my-topic", 3));
/// assert_eq!(tp.to_string(), "my-topic-3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicPartition {
    /// The topic name.
    pub topic: Arc<str>,
    /// The partition number.
    pub partition: i32,
}

impl Ord for TopicPartition {
    /// By topic, then partition. Topics shared through one `Arc` compare without reading them.
    fn cmp(&self, other: &Self) -> Ordering {
        let topic = if Arc::ptr_eq(&self.topic, &other.topic) { Ordering::Equal } else { self.topic.cmp(&other.topic) };
        topic.then(self.partition.cmp(&other.partition))
    }
}

impl PartialOrd for TopicPartition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl TopicPartition {
    /// A topic partition.
    pub fn new(topic: impl Into<Arc<str>>, partition: i32) -> Self {
        Self { topic: topic.into(), partition }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// Text that is not `<topic>-<partition>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a topic partition (expected <topic>-<partition>)")]
pub struct ParseTopicPartitionError(String);

impl FromStr for TopicPartition {
    type Err = ParseTopicPartitionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (topic, partition) = s.rsplit_once('-').ok_or_else(|| ParseTopicPartitionError(s.to_owned()))?;
        let partition = partition.parse().map_err(|_| ParseTopicPartitionError(s.to_owned()))?;
        Ok(Self::new(topic, partition))
    }
}

serde_via_string!(TopicPartition, "topic partition");

/// Where a Kafka Streams instance serves interactive queries (`application.server`), printed as
/// `host:port`.
///
/// ```
/// use kstreams_assignor::wire::HostInfo;
///
/// let h = HostInfo::from_endpoint("http://[::1]:8080").unwrap().unwrap();
/// assert_eq!((h.host.as_str(), h.port), ("::1", 8080));
/// assert_eq!(HostInfo::from_endpoint("  ").unwrap(), None);
/// assert!(HostInfo::from_endpoint("no-port").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostInfo {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: i32,
}

/// An `application.server` value that Kafka Streams' `HostInfo.buildFromEndpoint` rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a valid endpoint (expected [scheme://]host:port)")]
pub struct EndpointError(String);

impl HostInfo {
    /// A host and port.
    pub fn new(host: impl Into<String>, port: i32) -> Self {
        Self { host: host.into(), port }
    }

    /// Parses an endpoint as Kafka Streams does: blank means none; otherwise
    /// `[scheme://][`\[`]host[`\]`]:port`, where the host may contain `0-9a-zA-Z-%._:`.
    pub fn from_endpoint(endpoint: &str) -> Result<Option<Self>, EndpointError> {
        if endpoint.trim().is_empty() {
            return Ok(None);
        }
        let err = || EndpointError(endpoint.to_owned());
        let host_char = |c: char| c.is_ascii_alphanumeric() || "-%._".contains(c);
        let rest = match endpoint.split_once("://") {
            Some((scheme, rest)) if scheme.chars().all(host_char) => rest,
            _ => endpoint,
        };
        let (host, port) = rest.rsplit_once(':').ok_or_else(err)?;
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let port: i32 = port.parse().map_err(|_| err())?;
        let host = host.strip_prefix('[').unwrap_or(host);
        let host = host.strip_suffix(']').unwrap_or(host);
        if !host.chars().all(|c| host_char(c) || c == ':') {
            return Err(err());
        }
        Ok(Some(Self::new(host, port)))
    }
}

impl fmt::Display for HostInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// The error code a leader sends in `AssignmentInfo` (v4+) and a member echoes in
/// `SubscriptionInfo` (v9+). Unknown codes are kept as they are.
///
/// Java members treat every non-zero code other than the four named ones as fatal, so a leader
/// must never invent one. A follow-up rebalance is asked for with
/// [`AssignmentInfo::next_rebalance`](crate::wire::AssignmentInfo), not with an error code.
///
/// ```
/// use kstreams_assignor::wire::AssignorError;
///
/// assert_eq!(AssignorError::SHUTDOWN_REQUESTED.name(), Some("SHUTDOWN_REQUESTED"));
/// assert_eq!(AssignorError::from_code(9).to_string(), "UNKNOWN(9)");
/// assert!(AssignorError::NONE.is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AssignorError(pub i32);

impl AssignorError {
    /// No error.
    pub const NONE: Self = Self(0);
    /// A source topic is missing; the member raises `MissingSourceTopicException`.
    pub const INCOMPLETE_SOURCE_TOPIC_METADATA: Self = Self(1);
    /// Legacy version-probing signal (Kafka 2.x leaders).
    pub const VERSION_PROBING: Self = Self(2);
    /// The leader failed to compute an assignment; the member raises `TaskAssignmentException`.
    pub const ASSIGNMENT_ERROR: Self = Self(3);
    /// A member asked for the whole application to shut down.
    pub const SHUTDOWN_REQUESTED: Self = Self(4);

    /// The error with this code.
    pub const fn from_code(code: i32) -> Self {
        Self(code)
    }

    /// The wire code.
    pub const fn code(self) -> i32 {
        self.0
    }

    /// Kafka's name for a known code.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("NONE"),
            1 => Some("INCOMPLETE_SOURCE_TOPIC_METADATA"),
            2 => Some("VERSION_PROBING"),
            3 => Some("ASSIGNMENT_ERROR"),
            4 => Some("SHUTDOWN_REQUESTED"),
            _ => None,
        }
    }

    /// Whether this is code 0.
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for AssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "UNKNOWN({})", self.0),
        }
    }
}

/// Offset sum a member reports for a task it runs as an active, caught-up task (Java
/// `Task.LATEST_OFFSET`).
pub const LATEST_OFFSET: i64 = -2;

/// Offset sum meaning "unknown" (Java `SubscriptionInfo.UNKNOWN_OFFSET_SUM`). A leader reading a
/// v1–6 subscription uses it for every standby task.
pub const UNKNOWN_OFFSET_SUM: i64 = -3;

/// The end-offset sum a streams-protocol member (KIP-1071) reports for a task when it does not
/// know the end offset of one of the task's changelogs yet, or when the sum overflows: Java's
/// `Long.MAX_VALUE` (Kafka Streams 4.4.0, `DefaultStateUpdater`'s
/// `updateTaskEndOffsetSumSnapshot`). The same value as a task's offset sum means that the sum
/// overflowed (`StateDirectory.sumOfChangelogOffsets`). Either way it is not a position in the
/// changelog: a lag from it is unknown, never a number.
pub const UNKNOWN_END_OFFSET_SUM: i64 = i64::MAX;

/// The changelog end-offset sum of a task as Kafka's leader computes it: the sum of its
/// changelog partitions' end offsets, pinned to `i64::MAX` on overflow.
///
/// ```
/// assert_eq!(kstreams_assignor::wire::end_offset_sum([10, 20]), 30);
/// assert_eq!(kstreams_assignor::wire::end_offset_sum([i64::MAX, 1]), i64::MAX);
/// ```
pub fn end_offset_sum(end_offsets: impl IntoIterator<Item = i64>) -> i64 {
    let mut sum: i64 = 0;
    for offset in end_offsets {
        sum = sum.wrapping_add(offset);
        if sum < 0 {
            return i64::MAX;
        }
    }
    sum
}

/// When a member should rejoin for a follow-up rebalance (`AssignmentInfo.nextRebalanceMs`,
/// v7+): the shipped form of KIP-441's "imbalanced assignment" signal.
///
/// ```
/// use kstreams_assignor::wire::NextRebalance;
///
/// assert_eq!(NextRebalance::NONE.as_millis(), i64::MAX);
/// assert_eq!(NextRebalance::at(1_700_000_000_000).deadline(), Some(1_700_000_000_000));
/// assert!(NextRebalance::IMMEDIATELY.is_immediate());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NextRebalance(pub i64);

impl NextRebalance {
    /// No follow-up (`Long.MAX_VALUE`), also what versions before 7 decode to.
    pub const NONE: Self = Self(i64::MAX);
    /// Rejoin at once (`0`).
    pub const IMMEDIATELY: Self = Self(0);

    /// Rejoin at this wall-clock time, in milliseconds since the Unix epoch.
    pub const fn at(epoch_ms: i64) -> Self {
        Self(epoch_ms)
    }

    /// The raw value.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// Whether there is no follow-up.
    pub const fn is_none(self) -> bool {
        self.0 == i64::MAX
    }

    /// Whether a Java member rejoins at once (0; a negative time is in the past, so also at once).
    pub const fn is_immediate(self) -> bool {
        self.0 <= 0
    }

    /// The scheduled time, if a follow-up is scheduled.
    pub const fn deadline(self) -> Option<i64> {
        if self.is_none() { None } else { Some(self.0) }
    }
}

impl Default for NextRebalance {
    fn default() -> Self {
        Self::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_print_and_parse_as_kafka() {
        for text in ["0_0", "12_345", "topo__0_1", "a_b__3_4", "-1_2"] {
            assert_eq!(text.parse::<TaskId>().unwrap().to_string(), text);
        }
        for bad in ["", "0", "0_", "_1", "x_1", "topo__1", "0_1_2"] {
            assert!(bad.parse::<TaskId>().is_err(), "{bad}");
        }
        assert_eq!("__0_1".parse::<TaskId>().unwrap(), TaskId::new(0, 1));
    }

    #[test]
    fn task_ids_order_as_java() {
        let mut v: Vec<TaskId> = ["1_0", "0_10", "0_2", "b__0_0", "a__1_0"].iter().map(|s| s.parse().unwrap()).collect();
        v.sort();
        let printed: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(printed, ["0_2", "0_10", "1_0", "a__1_0", "b__0_0"]);
    }

    #[test]
    fn endpoints_parse_as_kafka_streams() {
        let ok = |s: &str| HostInfo::from_endpoint(s).unwrap().unwrap().to_string();
        assert_eq!(ok("localhost:8080"), "localhost:8080");
        assert_eq!(ok("a:1:2"), "a:1:2");
        assert_eq!(ok("https://host.example:443"), "host.example:443");
        assert_eq!(ok("[fe80::1%eth0]:9"), "fe80::1%eth0:9");
        for bad in ["host", "host:", "host:x", "ho st:1", "host:99999999999", "a/b:1"] {
            assert!(HostInfo::from_endpoint(bad).is_err(), "{bad}");
        }
    }
}
