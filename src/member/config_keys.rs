//! The member's configs given as text (`key=value`, Kafka's consumer and Streams keys).

use crate::member::config::MemberConfig;
use crate::leader::LeaderConfig;
use crate::leader::config_keys::ConfigKeyError;

/// `application.server`: the endpoint a member advertises (it is the hook's, not the
/// [`MemberConfig`]'s).
pub const APPLICATION_SERVER_KEY: &str = "application.server";

impl MemberConfig {
    /// Applies `(key, value)` configs given as text: the leader's (see
    /// [`LeaderConfig::set_all`]; its task assignor configs are applied together, after the
    /// others), `replication.factor`, `topic.*`, `session.timeout.ms`, `max.poll.interval.ms`,
    /// `heartbeat.interval.ms`, `request.timeout.ms`, `retry.backoff.ms`,
    /// `retry.backoff.max.ms`, `metadata.max.age.ms`, `client.id`, `group.instance.id`, and
    /// `application.server`, whose last value is returned.
    ///
    /// ```
    /// use kstreams_assignor::member::MemberConfig;
    ///
    /// let mut config = MemberConfig::new("localhost:9092", "app");
    /// let endpoint = config
    ///     .set_all([("session.timeout.ms", "10000"), ("application.server", "host:8080"), ("num.standby.replicas", "1")])
    ///     .unwrap();
    /// assert_eq!(config.session_timeout_ms, 10_000);
    /// assert_eq!(config.leader.assignment.num_standby_replicas, 1);
    /// assert_eq!(endpoint.as_deref(), Some("host:8080"));
    /// assert!(config.set_all([("session.timeout.ms", "soon")]).is_err());
    /// assert!(config.set_all([("session.timeout", "1")]).is_err());
    /// ```
    pub fn set_all<'a>(&mut self, configs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Option<String>, ConfigKeyError> {
        let mut assignment = Vec::new();
        let mut endpoint = None;
        for (k, v) in configs {
            let num = || -> Result<i64, ConfigKeyError> {
                v.parse().map_err(|_| ConfigKeyError::NotANumber { key: k.to_owned(), value: v.to_owned() })
            };
            let range = || ConfigKeyError::OutOfRange { key: k.to_owned(), value: v.to_owned() };
            let int = || num().and_then(|n| i32::try_from(n).map_err(|_| range()));
            let uint = || num().and_then(|n| u64::try_from(n).map_err(|_| range()));
            match k {
                "internal.task.assignor.class" => self.leader.set_all([(k, v)])?,
                _ if LeaderConfig::is_key(k) => assignment.push((k, v)),
                "replication.factor" => self.replication_factor = i16::try_from(num()?).map_err(|_| range())?,
                "session.timeout.ms" => self.session_timeout_ms = int()?,
                "max.poll.interval.ms" => self.rebalance_timeout_ms = int()?,
                "heartbeat.interval.ms" => self.heartbeat_interval_ms = num()?,
                "request.timeout.ms" => self.request_timeout_ms = uint()?,
                "retry.backoff.ms" => self.retry_backoff_ms = uint()?,
                "retry.backoff.max.ms" => self.retry_backoff_max_ms = uint()?,
                "metadata.max.age.ms" => self.metadata_max_age_ms = num()?,
                "client.id" => self.client_id = v.to_owned(),
                "group.instance.id" => self.group_instance_id = Some(v.to_owned()),
                "client.rack" => self.rack_id = Some(v.to_owned()).filter(|r| !r.is_empty()),
                _ if k.starts_with("client.tag.") => {
                    self.client_tags.insert(k["client.tag.".len()..].to_owned(), v.to_owned());
                }
                APPLICATION_SERVER_KEY => endpoint = Some(v.to_owned()),
                _ if k.starts_with("topic.") => {
                    self.topic_configs.insert(k["topic.".len()..].to_owned(), v.to_owned());
                }
                _ => return Err(ConfigKeyError::Unknown(k.to_owned())),
            }
        }
        self.leader.set_all(assignment)?;
        Ok(endpoint)
    }
}
