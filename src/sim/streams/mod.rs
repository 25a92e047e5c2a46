//! The scenarios on the streams rebalance protocol (KIP-1071), as Kafka 4.4.0's group coordinator
//! runs it: the members are stream threads, a membership change bumps the group epoch, the
//! coordinator computes the target assignment with its assignor, and each member reconciles
//! towards it on its heartbeats, given a task only once its previous owner has revoked it.
//!
//! There is no probing rebalance on this protocol: in 4.4.0 task offsets alone never make a new
//! target (the coordinator's warm-up refinement returns the target unchanged), so warm-ups an
//! assignor places wait for the next membership change.
//!
//! ```
//! use kstreams_assignor::sim::{self, SimConfig, StreamsAssignor, StreamsConfig};
//!
//! let scenario = sim::builtin("scale-out", 0).unwrap();
//! let run = sim::run_streams(StreamsAssignor::Sticky, &scenario, &SimConfig::default(), &StreamsConfig::default()).unwrap();
//! assert!(run.report.converged);
//! // The joiner's tasks move the moment their owners revoke them: one target, no warm-ups.
//! assert_eq!((run.group_epochs, run.report.total_warmups), (2, 0));
//! assert_eq!(run.most_doubly_owned, 0);
//! ```
//!
//! | file | holds |
//! | --- | --- |
//! | `group.rs` | the coordinator's members, epochs, target and reconciliation |
//! | `run.rs` | the driver: events, group epochs, heartbeats, the world's restores |
//! | `same_inputs.rs` | `sticky` asked on each target's inputs of an `optimized` run |

mod group;
mod run;
mod same_inputs;

pub use same_inputs::{FirstDifference, StickyOnSameInputs};

use serde::Serialize;

use super::config::SimConfig;
use super::report::{Report, SimError};
use super::scenario::Scenario;
use super::table::format_ms;

/// The broker's assignor for the group (`group.streams.assignors`, per group
/// `streams.assignor.name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StreamsAssignor {
    /// Kafka 4.4.0's default, `sticky` ([`assign_sticky`](crate::engine::streams::assign_sticky)).
    Sticky,
    /// This crate's `optimized` on the streams group
    /// ([`assign_optimized`](crate::engine::streams::assign_optimized)).
    Optimized,
}

impl StreamsAssignor {
    /// Its name as `streams.assignor.name` knows it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sticky => crate::engine::streams::STICKY_ASSIGNOR_NAME,
            Self::Optimized => crate::engine::streams::OPTIMIZED_ASSIGNOR_NAME,
        }
    }

    /// The assignor named `name` (`sticky` or `optimized`).
    ///
    /// ```
    /// use kstreams_assignor::sim::StreamsAssignor;
    /// assert_eq!(StreamsAssignor::from_name("sticky"), Some(StreamsAssignor::Sticky));
    /// assert_eq!(StreamsAssignor::from_name("uniform"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Sticky, Self::Optimized].into_iter().find(|a| a.name() == name)
    }
}

/// The broker's settings for a streams group, by Kafka's names and with its defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamsConfig {
    /// `group.streams.heartbeat.interval.ms` (default 5000): how often a member heartbeats, and
    /// so how long a member waits to learn of a new target or of a task released to it.
    pub heartbeat_interval_ms: i64,
    /// `group.streams.num.warmup.replicas` (default 2).
    pub num_warmup_replicas: u32,
    /// `group.streams.acceptable.recovery.lag` (default 10000).
    pub acceptable_recovery_lag: i64,
    /// `probe.interval.ms` (default 0: none): a prober (`kstreams-assignor probe`) in the group
    /// that looks this often whether an assignment would move a task, and if so makes the
    /// coordinator assign again; under `optimized` stateful tasks then move only to caught-up
    /// copies. Kafka's `sticky` would give a prober tasks, so its runs have none.
    pub probe_interval_ms: i64,
    /// `streams.task.offset.interval.ms` (default 60000): how often a member sends its task
    /// offsets and end offsets at the latest. As Kafka 4.4.0's client does, a member sends them
    /// with its first heartbeat, with the first after its tasks changed, once this interval has
    /// passed since it last sent them, and at every heartbeat while one of its warm-ups is within
    /// `acceptable.recovery.lag`; a running active task is never among them (its process counts
    /// as caught up on it), and only tasks it restores have end offsets. 0: at every heartbeat.
    pub task_offset_interval_ms: i64,
}

impl Default for StreamsConfig {
    fn default() -> Self {
        Self {
            heartbeat_interval_ms: 5_000,
            num_warmup_replicas: 2,
            acceptable_recovery_lag: 10_000,
            probe_interval_ms: 0,
            task_offset_interval_ms: 60_000,
        }
    }
}

impl StreamsConfig {
    /// Sets one setting by Kafka's name: `group.streams.heartbeat.interval.ms`,
    /// `group.streams.num.warmup.replicas`, `group.streams.acceptable.recovery.lag` or the
    /// group's `streams.task.offset.interval.ms`; or the prober's `probe.interval.ms`.
    ///
    /// ```
    /// use kstreams_assignor::sim::StreamsConfig;
    /// let mut c = StreamsConfig::default();
    /// c.set("group.streams.heartbeat.interval.ms", "2000").unwrap();
    /// assert_eq!(c.heartbeat_interval_ms, 2000);
    /// assert!(c.set("group.streams.heartbeat.interval.ms", "0").is_err());
    /// assert!(c.set("group.streams.nope", "1").is_err());
    /// ```
    ///
    /// # Errors
    /// An unknown key, or a value that is not a number in the setting's range.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = || format!("{key}: `{value}` is not a valid value");
        match key {
            "group.streams.heartbeat.interval.ms" => {
                self.heartbeat_interval_ms = value.parse().ok().filter(|&v: &i64| v > 0).ok_or_else(bad)?;
            }
            "group.streams.num.warmup.replicas" => self.num_warmup_replicas = value.parse().map_err(|_| bad())?,
            "group.streams.acceptable.recovery.lag" => {
                self.acceptable_recovery_lag = value.parse().ok().filter(|&v: &i64| v >= 0).ok_or_else(bad)?;
            }
            "streams.task.offset.interval.ms" => {
                self.task_offset_interval_ms = value.parse().ok().filter(|&v: &i64| v >= 0).ok_or_else(bad)?;
            }
            "probe.interval.ms" => {
                self.probe_interval_ms = value.parse().ok().filter(|&v: &i64| v >= 0).ok_or_else(bad)?;
            }
            _ => return Err(format!("unknown streams group config `{key}`")),
        }
        Ok(())
    }
}

/// A run on the streams protocol: the [`Report`] every protocol gives, and what only this one
/// has.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamsReport {
    /// The run, one [`Round`](super::Round) per target assignment (group epoch) after the start;
    /// a round's moves and restores are those of the reconciliation towards its target.
    pub report: Report,
    /// The group epoch at the end (the start's included).
    pub group_epochs: i32,
    /// Heartbeats the coordinator handled while members reconciled, after the start (a
    /// revocation's acknowledgement counts as one).
    pub heartbeats: usize,
    /// When every active task ran again after the last event (no restore under way), ms after it:
    /// the restoration time.
    pub restored_ms: i64,
    /// Active tasks no member owned (revoked and not yet given), integrated over time (tasks ×
    /// ms): the processing gap the revocation rule costs, before any restoring.
    pub unowned_task_ms: i64,
    /// Warm-up tasks in the last target: placed, and waiting for a membership change (or a
    /// prober) to be promoted (task offsets alone make no new target in 4.4.0).
    pub warmups_waiting: usize,
    /// Target assignments the prober asked for.
    pub probes: usize,
    /// The most active tasks owned by two members at once at any heartbeat (the revocation rule
    /// keeps it at 0).
    pub most_doubly_owned: usize,
    /// For an `optimized` run: Kafka's `sticky` asked on each target's group spec, and how the
    /// two answers compare there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sticky_on_same_inputs: Option<StickyOnSameInputs>,
    /// The simulated time the run ended at.
    pub end_ms: i64,
}

/// Runs `scenario` on the streams protocol with `assignor` as the group's assignor, until every
/// member is reconciled with the last target.
///
/// # Errors
/// [`SimError`] when the scenario is malformed or the assignor fails.
pub fn run_streams(
    assignor: StreamsAssignor,
    scenario: &Scenario,
    config: &SimConfig,
    streams: &StreamsConfig,
) -> Result<StreamsReport, SimError> {
    run::run(assignor, scenario, config, streams)
}

impl StreamsReport {
    /// The round-by-round table ([`Report::table`]) and a line on the protocol.
    pub fn table(&self) -> String {
        let mut out = self.report.table();
        out.push_str(&format!(
            "streams protocol: group epoch {}, {} heartbeat(s) reconciling, every active running {} after the last event, unowned task-time {}, warm-ups waiting {}, tasks owned twice {} ({})\n",
            self.group_epochs,
            self.heartbeats,
            format_ms(self.restored_ms),
            format_ms(self.unowned_task_ms),
            self.warmups_waiting,
            self.most_doubly_owned,
            if self.probes > 0 {
                format!("the prober made {} target(s)", self.probes)
            } else {
                "task offsets alone never make a new target in Kafka 4.4.0: no probing rebalance".to_owned()
            }
        ));
        out
    }
}
