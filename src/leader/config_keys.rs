//! The leader's configs given as text (`key=value`, Kafka's keys): the task assignor's class and
//! its [`AssignmentConfigs`].

use super::input::LeaderConfig;
use crate::engine::{AssignmentConfigs, SetConfigError, UnknownAssignor};

/// The key that picks the task assignor (Kafka's `StreamsConfig.INTERNAL_TASK_ASSIGNOR_CLASS`).
pub const TASK_ASSIGNOR_CLASS_KEY: &str = "internal.task.assignor.class";

/// A config given as text that could not be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigKeyError {
    /// The key is nobody's config.
    #[error("{0}: unknown config")]
    Unknown(String),
    /// The value of a numeric config is not a number.
    #[error("{key}: `{value}` is not a number")]
    NotANumber {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
    /// The number does not fit the config's type.
    #[error("{key}: {value} is out of range")]
    OutOfRange {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
    /// `internal.task.assignor.class` names no known assignor.
    #[error(transparent)]
    Assignor(#[from] UnknownAssignor),
    /// A task assignor config was refused.
    #[error(transparent)]
    Assignment(#[from] SetConfigError),
}

impl LeaderConfig {
    /// Whether `key` is one of the leader's: [`TASK_ASSIGNOR_CLASS_KEY`] or a task assignor
    /// config.
    pub fn is_key(key: &str) -> bool {
        key == TASK_ASSIGNOR_CLASS_KEY || AssignmentConfigs::is_key(key)
    }

    /// Applies `(key, value)` configs given as text; the task assignor configs among them are
    /// applied together (see [`AssignmentConfigs::with_overrides`]).
    ///
    /// ```
    /// use kstreams_assignor::engine::AssignorKind;
    /// use kstreams_assignor::leader::LeaderConfig;
    ///
    /// let mut config = LeaderConfig::default();
    /// config.set_all([("internal.task.assignor.class", "optimized"), ("num.standby.replicas", "1")]).unwrap();
    /// assert_eq!(config.assignor, AssignorKind::Optimized);
    /// assert_eq!(config.assignment.num_standby_replicas, 1);
    /// assert!(config.set_all([("session.timeout.ms", "1")]).is_err());
    /// ```
    pub fn set_all<'a>(&mut self, configs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<(), ConfigKeyError> {
        let mut assignment = Vec::new();
        for (key, value) in configs {
            match key {
                TASK_ASSIGNOR_CLASS_KEY => self.assignor = value.parse()?,
                _ if AssignmentConfigs::is_key(key) => assignment.push((key, value)),
                _ => return Err(ConfigKeyError::Unknown(key.to_owned())),
            }
        }
        self.assignment = self.assignment.with_overrides(assignment)?;
        Ok(())
    }
}
