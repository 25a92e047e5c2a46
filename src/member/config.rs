//! The group member's configuration, and the configs it creates internal topics with.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::net::client_config::Security;
use crate::leader::LeaderConfig;

/// The member's configuration; the defaults are Kafka Streams' consumer defaults.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MemberConfig {
    /// Bootstrap brokers, `host:port`.
    pub bootstrap: Vec<String>,
    /// `group.id` (Kafka Streams: `application.id`).
    pub group_id: String,
    /// `client.id`.
    pub client_id: String,
    /// `group.instance.id` (static membership), if any.
    pub group_instance_id: Option<String>,
    /// `session.timeout.ms` (45 s).
    pub session_timeout_ms: i32,
    /// The rebalance timeout: `max.poll.interval.ms` (300 s).
    pub rebalance_timeout_ms: i32,
    /// `heartbeat.interval.ms` (3 s).
    pub heartbeat_interval_ms: i64,
    /// `request.timeout.ms` (30 s): connect, read and write timeout of other requests.
    pub request_timeout_ms: u64,
    /// `retry.backoff.ms` (100 ms).
    pub retry_backoff_ms: u64,
    /// `retry.backoff.max.ms` (1 s).
    pub retry_backoff_max_ms: u64,
    /// `metadata.max.age.ms` (5 min): how often the leader checks its source topics.
    pub metadata_max_age_ms: i64,
    /// Take part in the group but not in the task assignment (this member gets no tasks).
    pub leader_only: bool,
    /// `replication.factor` of created internal topics (-1: the broker's default).
    pub replication_factor: i16,
    /// `topic.`-prefixed Streams configs, without the prefix: they override the internal
    /// topics' defaults.
    pub topic_configs: BTreeMap<String, String>,
    /// The leader's assignor configuration.
    pub leader: LeaderConfig,
    /// How every connection is secured (TLS, SASL): `PLAINTEXT` by default.
    pub security: Security,
    /// `client.rack`: the member's rack (sent on the streams protocol; none by default).
    pub rack_id: Option<String>,
    /// `client.tag.<key>`: the member's client tags, for the client-tag aware standby placement.
    pub client_tags: BTreeMap<String, String>,
}

impl MemberConfig {
    /// A configuration with Kafka's defaults.
    pub fn new(bootstrap: impl Into<String>, group_id: impl Into<String>) -> Self {
        Self {
            bootstrap: vec![bootstrap.into()],
            group_id: group_id.into(),
            client_id: "kstreams-assignor".into(),
            group_instance_id: None,
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            heartbeat_interval_ms: 3_000,
            request_timeout_ms: 30_000,
            retry_backoff_ms: 100,
            retry_backoff_max_ms: 1_000,
            metadata_max_age_ms: 300_000,
            leader_only: false,
            replication_factor: -1,
            topic_configs: BTreeMap::new(),
            leader: LeaderConfig::default(),
            security: Security::plaintext(),
            rack_id: None,
            client_tags: BTreeMap::new(),
        }
    }

    /// Sets leader-only mode.
    pub fn with_leader_only(mut self, leader_only: bool) -> Self {
        self.leader_only = leader_only;
        self
    }

    /// Sets `client.id`.
    pub fn with_client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = id.into();
        self
    }

    /// Sets how connections are secured.
    pub fn with_security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    /// Sets `group.instance.id`.
    pub fn with_group_instance_id(mut self, id: impl Into<String>) -> Self {
        self.group_instance_id = Some(id.into());
        self
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }

    pub(crate) fn group_timeout(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.rebalance_timeout_ms).unwrap_or(0)) + self.request_timeout()
    }
}

/// The configs Kafka Streams creates an internal topic with (`InternalTopicManager`): for a
/// repartition topic (`RepartitionTopicConfig`) `cleanup.policy=delete`,
/// `segment.bytes=52428800`, `retention.ms=-1`; for a changelog (`UnwindowedUnversionedChangelogTopicConfig`)
/// `cleanup.policy=compact`; both `message.timestamp.type=CreateTime`. `topic.`-prefixed Streams
/// configs override these.
///
/// The topology model does not tell windowed or versioned stores apart, so every changelog gets
/// the configs of a key-value store's changelog (Kafka gives a window store's changelog
/// `cleanup.policy=compact,delete` and a retention).
///
/// ```
/// use kstreams_assignor::member::config::internal_topic_configs;
///
/// let c = internal_topic_configs(true, &Default::default());
/// assert_eq!(c["cleanup.policy"], "delete");
/// assert_eq!(c["segment.bytes"], "52428800");
/// assert_eq!(internal_topic_configs(false, &Default::default())["cleanup.policy"], "compact");
/// ```
pub fn internal_topic_configs(repartition: bool, overrides: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut c = BTreeMap::new();
    c.insert("message.timestamp.type".to_owned(), "CreateTime".to_owned());
    if repartition {
        c.insert("cleanup.policy".to_owned(), "delete".to_owned());
        c.insert("segment.bytes".to_owned(), "52428800".to_owned());
        c.insert("retention.ms".to_owned(), "-1".to_owned());
    } else {
        c.insert("cleanup.policy".to_owned(), "compact".to_owned());
    }
    c.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    c
}

