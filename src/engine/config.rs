//! The assignment configuration: Kafka Streams' `AssignmentConfigs`, keyed and defaulted as in
//! `StreamsConfig`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// `rack.aware.assignment.strategy` (KIP-925).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum RackAwareStrategy {
    /// `none` (the default): no rack-aware optimisation.
    #[default]
    #[serde(rename = "none")]
    None,
    /// `min_traffic`: minimise cross-rack traffic.
    #[serde(rename = "min_traffic")]
    MinTraffic,
    /// `balance_subtopology`: minimise cross-rack traffic while spreading each sub-topology.
    #[serde(rename = "balance_subtopology")]
    BalanceSubtopology,
}

impl RackAwareStrategy {
    /// Kafka's name for the strategy.
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::MinTraffic => "min_traffic",
            Self::BalanceSubtopology => "balance_subtopology",
        }
    }
}

impl fmt::Display for RackAwareStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The most keys `rack.aware.assignment.tags` may list (`StreamsConfig.MAX_RACK_AWARE_ASSIGNMENT_TAG_LIST_SIZE`).
pub const MAX_RACK_AWARE_ASSIGNMENT_TAGS: usize = 5;

/// The configuration the task assignors read: the fields of Kafka Streams' `AssignmentConfigs`.
///
/// Serialised with Kafka's dotted keys; a missing key takes Kafka's default and an unknown key is
/// an error. Values are checked as `StreamsConfig`/`AssignmentConfigs` check them.
///
/// | key | default | valid |
/// |---|---|---|
/// | `num.standby.replicas` | 0 | any int (Kafka has no validator) |
/// | `acceptable.recovery.lag` | 10000 | ≥ 0 |
/// | `max.warmup.replicas` | 2 | ≥ 1 |
/// | `probing.rebalance.interval.ms` | 600000 | ≥ 60000 |
/// | `rack.aware.assignment.tags` | `[]` | ≤ 5 keys, none empty |
/// | `rack.aware.assignment.strategy` | `none` | `none`, `min_traffic`, `balance_subtopology` |
/// | `rack.aware.assignment.traffic_cost` | `null` | any int or `null` |
/// | `rack.aware.assignment.non_overlap_cost` | `null` | any int or `null` |
/// | `stream.imbalance.percentage` | 0 | 0 to 100 (read by `optimized` only) |
/// | `max.spare.replicas` | 0 | ≥ 0 (read by `optimized` only) |
///
/// The last two keys are not Kafka's. `stream.imbalance.percentage` is the balance factor of
/// the KIP-441 draft ("smooth scaling out"); `max.spare.replicas` lets the optimized assignor
/// keep spare copies beyond the idle part of `max.warmup.replicas`.
/// [`OptimizedTaskAssignor`](super::OptimizedTaskAssignor) reads them and Kafka's assignors
/// ignore them. They are serialised only when set.
///
/// ```
/// use kstreams_assignor::engine::AssignmentConfigs;
///
/// let configs: AssignmentConfigs = serde_json::from_str(r#"{"num.standby.replicas": 1}"#).unwrap();
/// assert_eq!(configs.num_standby_replicas, 1);
/// assert_eq!(configs.acceptable_recovery_lag, 10_000);
///
/// let err = serde_json::from_str::<AssignmentConfigs>(r#"{"max.warmup.replicas": 0}"#).unwrap_err();
/// assert!(err.to_string().contains("Invalid value 0 for configuration max.warmup.replicas: Value must be at least 1"));
/// let err = serde_json::from_str::<AssignmentConfigs>(r#"{"num.standby.replica": 1}"#).unwrap_err();
/// assert!(err.to_string().contains("unknown field `num.standby.replica`"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawAssignmentConfigs", into = "RawAssignmentConfigs")]
#[non_exhaustive]
pub struct AssignmentConfigs {
    /// `num.standby.replicas`: standby replicas per stateful task.
    pub num_standby_replicas: i32,
    /// `acceptable.recovery.lag`: the largest lag at which a client counts as caught up
    /// (`i64::MAX`: everyone is caught up).
    pub acceptable_recovery_lag: i64,
    /// `max.warmup.replicas`: warm-up replicas per rebalance for the whole group.
    pub max_warmup_replicas: i32,
    /// `probing.rebalance.interval.ms`: the delay of a follow-up probing rebalance.
    pub probing_rebalance_interval_ms: i64,
    /// `rack.aware.assignment.tags`: client tag keys to spread standbys over (KIP-708).
    pub rack_aware_assignment_tags: Vec<String>,
    /// `rack.aware.assignment.strategy` (KIP-925).
    pub rack_aware_assignment_strategy: RackAwareStrategy,
    /// `rack.aware.assignment.traffic_cost`; `None` lets each assignor pick its default.
    pub rack_aware_assignment_traffic_cost: Option<i32>,
    /// `rack.aware.assignment.non_overlap_cost`; `None` lets each assignor pick its default.
    pub rack_aware_assignment_non_overlap_cost: Option<i32>,
    /// `stream.imbalance.percentage`: how far, in percent of its capacity-proportional share,
    /// a client's number of tasks may stray before `optimized` moves tasks to balance it
    /// (0: as balanced as the counts allow).
    pub stream_imbalance_percentage: i32,
    /// `max.spare.replicas`: spare copies `optimized` may keep on top of the part of
    /// `max.warmup.replicas` that no warm-up needs (0: only that part).
    pub max_spare_replicas: i32,
}

/// The one table of the assignment configs: each field's Kafka key, default, bounds and how it is
/// written. It generates [`ASSIGNMENT_CONFIG_KEYS`], `Default`, the range checks of
/// [`AssignmentConfigs::validate`] and the serialised form (every key optional, unknown keys
/// refused, a missing or `null` key at its default). A key marked `always` is written every time
/// (an unset `Option` as `null`); `when_set` (this crate's own keys) only when not the default.
macro_rules! assignment_configs {
    ($($field:ident: $ty:ty = $key:literal, default $default:expr, $kind:ident $(, at least $min:literal)? $(, at most $max:literal)?;)*) => {
        /// The keys of [`AssignmentConfigs`], in the order it serialises them: Kafka's, then this
        /// crate's `stream.imbalance.percentage` and `max.spare.replicas`.
        pub const ASSIGNMENT_CONFIG_KEYS: [&str; [$($key),*].len()] = [$($key),*];

        impl Default for AssignmentConfigs {
            fn default() -> Self {
                Self { $($field: $default),* }
            }
        }

        impl AssignmentConfigs {
            /// The range checks of the table, in its order.
            fn check_bounds(&self) -> Result<(), ConfigError> {
                $(
                    $(at_least($key, i64::from(self.$field), $min)?;)?
                    $(at_most($key, i64::from(self.$field), $max)?;)?
                )*
                Ok(())
            }
        }

        /// The serialised form: every key optional, unknown keys refused.
        #[derive(Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawAssignmentConfigs {
            $(
                #[serde(rename = $key, default, skip_serializing_if = "Option::is_none")]
                $field: Option<$ty>,
            )*
        }

        impl TryFrom<RawAssignmentConfigs> for AssignmentConfigs {
            type Error = ConfigError;

            fn try_from(raw: RawAssignmentConfigs) -> Result<Self, ConfigError> {
                let d = Self::default();
                let configs = Self { $($field: raw.$field.unwrap_or(d.$field)),* };
                configs.validate()?;
                Ok(configs)
            }
        }

        impl From<AssignmentConfigs> for RawAssignmentConfigs {
            fn from(c: AssignmentConfigs) -> Self {
                let d = AssignmentConfigs::default();
                Self { $($field: assignment_configs!(@write $kind c.$field, d.$field)),* }
            }
        }
    };
    (@write always $value:expr, $default:expr) => { Some($value) };
    (@write when_set $value:expr, $default:expr) => { Some($value).filter(|v| *v != $default) };
}

assignment_configs! {
    num_standby_replicas: i32 = "num.standby.replicas", default 0, always;
    acceptable_recovery_lag: i64 = "acceptable.recovery.lag", default 10_000, always, at least 0;
    max_warmup_replicas: i32 = "max.warmup.replicas", default 2, always, at least 1;
    probing_rebalance_interval_ms: i64 = "probing.rebalance.interval.ms", default 600_000, always, at least 60_000;
    rack_aware_assignment_tags: Vec<String> = "rack.aware.assignment.tags", default Vec::new(), always;
    rack_aware_assignment_strategy: RackAwareStrategy = "rack.aware.assignment.strategy", default RackAwareStrategy::None, always;
    rack_aware_assignment_traffic_cost: Option<i32> = "rack.aware.assignment.traffic_cost", default None, always;
    rack_aware_assignment_non_overlap_cost: Option<i32> = "rack.aware.assignment.non_overlap_cost", default None, always;
    stream_imbalance_percentage: i32 = "stream.imbalance.percentage", default 0, when_set, at least 0, at most 100;
    max_spare_replicas: i32 = "max.spare.replicas", default 0, when_set, at least 0;
}

fn at_least(key: &'static str, value: i64, min: i64) -> Result<(), ConfigError> {
    if value < min {
        return Err(ConfigError { key, value: value.to_string(), reason: format!("Value must be at least {min}") });
    }
    Ok(())
}

fn at_most(key: &'static str, value: i64, max: i64) -> Result<(), ConfigError> {
    if value > max {
        return Err(ConfigError { key, value: value.to_string(), reason: format!("Value must be no more than {max}") });
    }
    Ok(())
}

/// A configuration value Kafka would refuse. Prints as Kafka's `ConfigException` does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid value {value} for configuration {key}: {reason}")]
#[non_exhaustive]
pub struct ConfigError {
    /// The dotted key.
    pub key: &'static str,
    /// The refused value, printed as Kafka prints it.
    pub value: String,
    /// Why it was refused.
    pub reason: String,
}

impl AssignmentConfigs {
    /// Sets `num.standby.replicas`.
    pub fn with_num_standby_replicas(mut self, n: i32) -> Self {
        self.num_standby_replicas = n;
        self
    }

    /// Sets `acceptable.recovery.lag`.
    pub fn with_acceptable_recovery_lag(mut self, lag: i64) -> Self {
        self.acceptable_recovery_lag = lag;
        self
    }

    /// Sets `max.warmup.replicas`.
    pub fn with_max_warmup_replicas(mut self, n: i32) -> Self {
        self.max_warmup_replicas = n;
        self
    }

    /// Sets `probing.rebalance.interval.ms`.
    pub fn with_probing_rebalance_interval_ms(mut self, ms: i64) -> Self {
        self.probing_rebalance_interval_ms = ms;
        self
    }

    /// Sets `rack.aware.assignment.tags`.
    pub fn with_rack_aware_assignment_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.rack_aware_assignment_tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `rack.aware.assignment.strategy`.
    pub fn with_rack_aware_assignment_strategy(mut self, strategy: RackAwareStrategy) -> Self {
        self.rack_aware_assignment_strategy = strategy;
        self
    }

    /// Sets `rack.aware.assignment.traffic_cost` and `rack.aware.assignment.non_overlap_cost`.
    pub fn with_rack_aware_costs(mut self, traffic_cost: Option<i32>, non_overlap_cost: Option<i32>) -> Self {
        self.rack_aware_assignment_traffic_cost = traffic_cost;
        self.rack_aware_assignment_non_overlap_cost = non_overlap_cost;
        self
    }

    /// Sets `stream.imbalance.percentage` (read by the optimized assignor only).
    ///
    /// ```
    /// use kstreams_assignor::engine::AssignmentConfigs;
    ///
    /// let configs = AssignmentConfigs::default().with_stream_imbalance_percentage(20);
    /// assert!(configs.validate().is_ok());
    /// assert!(AssignmentConfigs::default().with_stream_imbalance_percentage(101).validate().is_err());
    /// ```
    pub fn with_stream_imbalance_percentage(mut self, percent: i32) -> Self {
        self.stream_imbalance_percentage = percent;
        self
    }

    /// Sets `max.spare.replicas` (read by the optimized assignor only).
    pub fn with_max_spare_replicas(mut self, n: i32) -> Self {
        self.max_spare_replicas = n;
        self
    }

    /// Checks every value as Kafka's validators do.
    ///
    /// ```
    /// use kstreams_assignor::engine::AssignmentConfigs;
    ///
    /// assert!(AssignmentConfigs::default().validate().is_ok());
    /// let err = AssignmentConfigs::default().with_probing_rebalance_interval_ms(1_000).validate().unwrap_err();
    /// assert_eq!(err.key, "probing.rebalance.interval.ms");
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_bounds()?;
        let tags = &self.rack_aware_assignment_tags;
        let printed = || format!("[{}]", tags.join(", "));
        if tags.len() > MAX_RACK_AWARE_ASSIGNMENT_TAGS {
            return Err(ConfigError {
                key: "rack.aware.assignment.tags",
                value: printed(),
                reason: format!("exceeds maximum list size of [{MAX_RACK_AWARE_ASSIGNMENT_TAGS}]."),
            });
        }
        if tags.iter().any(String::is_empty) {
            return Err(ConfigError {
                key: "rack.aware.assignment.tags",
                value: printed(),
                reason: "Contains invalid value []. Tag key cannot be empty.".to_owned(),
            });
        }
        Ok(())
    }
}

/// A task assignor config given as text (`key=value`) that could not be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetConfigError {
    /// The key is none of [`ASSIGNMENT_CONFIG_KEYS`].
    #[error("{}: not a task assignor config (known: {})", .0, ASSIGNMENT_CONFIG_KEYS.join(", "))]
    UnknownKey(String),
    /// The value has the wrong type or Kafka would refuse it.
    #[error(transparent)]
    Invalid(serde_json::Error),
}

impl AssignmentConfigs {
    /// Whether `key` is one of [`ASSIGNMENT_CONFIG_KEYS`].
    pub fn is_key(key: &str) -> bool {
        ASSIGNMENT_CONFIG_KEYS.contains(&key)
    }

    /// These configs with `(key, value)` overrides given as text, as a properties file or a
    /// command line gives them: `rack.aware.assignment.tags` is a comma-separated list, a value
    /// that reads as a number is one, anything else a string. The result is validated once all
    /// overrides are in (a later override of a key replaces an earlier one).
    ///
    /// ```
    /// use kstreams_assignor::engine::{AssignmentConfigs, SetConfigError};
    ///
    /// let configs = AssignmentConfigs::default()
    ///     .with_overrides([("num.standby.replicas", "2"), ("rack.aware.assignment.tags", "zone,rack")])
    ///     .unwrap();
    /// assert_eq!(configs.num_standby_replicas, 2);
    /// assert_eq!(configs.rack_aware_assignment_tags, ["zone", "rack"]);
    ///
    /// let err = AssignmentConfigs::default().with_overrides([("max.warmups", "4")]).unwrap_err();
    /// assert!(matches!(err, SetConfigError::UnknownKey(_)));
    /// let err = AssignmentConfigs::default().with_overrides([("max.warmup.replicas", "0")]).unwrap_err();
    /// assert!(err.to_string().contains("Value must be at least 1"));
    /// ```
    pub fn with_overrides<'a>(&self, overrides: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, SetConfigError> {
        use serde_json::Value;
        let mut map = match serde_json::to_value(self).map_err(SetConfigError::Invalid)? {
            Value::Object(map) => map,
            other => unreachable!("configs serialize to an object, not {other}"),
        };
        for (key, value) in overrides {
            if !Self::is_key(key) {
                return Err(SetConfigError::UnknownKey(key.to_owned()));
            }
            let value = if key == "rack.aware.assignment.tags" {
                Value::Array(value.split(',').filter(|t| !t.is_empty()).map(|t| Value::String(t.trim().to_owned())).collect())
            } else {
                serde_json::from_str::<Value>(value).ok().filter(Value::is_number).unwrap_or_else(|| Value::String(value.to_owned()))
            };
            map.insert(key.to_owned(), value);
        }
        serde_json::from_value(Value::Object(map)).map_err(SetConfigError::Invalid)
    }

    /// Sets one config given as text (see [`with_overrides`](Self::with_overrides)).
    ///
    /// ```
    /// use kstreams_assignor::engine::AssignmentConfigs;
    ///
    /// let mut configs = AssignmentConfigs::default();
    /// configs.set("probing.rebalance.interval.ms", "120000").unwrap();
    /// assert_eq!(configs.probing_rebalance_interval_ms, 120_000);
    /// assert!(configs.set("probing.rebalance.interval.ms", "soon").is_err());
    /// ```
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SetConfigError> {
        *self = self.with_overrides([(key, value)])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_with_kafka_keys() {
        let json = serde_json::to_value(AssignmentConfigs::default()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "num.standby.replicas": 0,
                "acceptable.recovery.lag": 10000,
                "max.warmup.replicas": 2,
                "probing.rebalance.interval.ms": 600000,
                "rack.aware.assignment.tags": [],
                "rack.aware.assignment.strategy": "none",
                "rack.aware.assignment.traffic_cost": null,
                "rack.aware.assignment.non_overlap_cost": null,
            })
        );
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert!(keys.iter().all(|k| AssignmentConfigs::is_key(k)), "{keys:?}");
        let back: AssignmentConfigs = serde_json::from_value(json).unwrap();
        assert_eq!(back, AssignmentConfigs::default());
        assert_eq!(serde_json::from_str::<AssignmentConfigs>("{}").unwrap(), AssignmentConfigs::default());
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        for (json, key) in [
            (r#"{"acceptable.recovery.lag": -1}"#, "acceptable.recovery.lag"),
            (r#"{"probing.rebalance.interval.ms": 59999}"#, "probing.rebalance.interval.ms"),
            (r#"{"rack.aware.assignment.tags": ["a","b","c","d","e","f"]}"#, "rack.aware.assignment.tags"),
            (r#"{"rack.aware.assignment.tags": [""]}"#, "rack.aware.assignment.tags"),
            (r#"{"stream.imbalance.percentage": -1}"#, "stream.imbalance.percentage"),
            (r#"{"stream.imbalance.percentage": 101}"#, "stream.imbalance.percentage"),
            (r#"{"max.spare.replicas": -1}"#, "max.spare.replicas"),
        ] {
            let err = serde_json::from_str::<AssignmentConfigs>(json).unwrap_err().to_string();
            assert!(err.contains(key), "{json}: {err}");
        }
        let err = serde_json::from_str::<AssignmentConfigs>(r#"{"rack.aware.assignment.strategy": "fast"}"#);
        assert!(err.unwrap_err().to_string().contains("unknown variant `fast`"));
        let err = serde_json::from_str::<AssignmentConfigs>(r#"{"num.standby.replicas": 3000000000}"#);
        assert!(err.is_err(), "num.standby.replicas is a Java int");
    }

    #[test]
    fn accepts_what_kafka_accepts() {
        let c: AssignmentConfigs = serde_json::from_str(
            r#"{"num.standby.replicas": -1, "acceptable.recovery.lag": 9223372036854775807,
                "rack.aware.assignment.strategy": "balance_subtopology",
                "rack.aware.assignment.traffic_cost": 7}"#,
        )
        .unwrap();
        assert_eq!(c.num_standby_replicas, -1);
        assert_eq!(c.acceptable_recovery_lag, i64::MAX);
        assert_eq!(c.rack_aware_assignment_strategy, RackAwareStrategy::BalanceSubtopology);
        assert_eq!(c.rack_aware_assignment_traffic_cost, Some(7));
        // Not Kafka's keys: written only when set.
        let c: AssignmentConfigs = serde_json::from_str(r#"{"stream.imbalance.percentage": 20, "max.spare.replicas": 3}"#).unwrap();
        assert_eq!((c.stream_imbalance_percentage, c.max_spare_replicas), (20, 3));
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!((&json["stream.imbalance.percentage"], &json["max.spare.replicas"]), (&20.into(), &3.into()));
    }
}
