//! The assignors by name ([`AssignorKind`]) and the leader's choice between them ([`assign`],
//! [`effective_assignor`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::assignor::{AssignError, TaskAssignor};
use super::input::AssignmentInput;
use super::kafka::fallback_prior::FallbackPriorTaskAssignor;
use super::kafka::high_availability::HighAvailabilityTaskAssignor;
use super::kafka::legacy_sticky::LegacyStickyTaskAssignor;
use super::optimized::OptimizedTaskAssignor;
use super::output::Assignment;

/// Kafka's built-in assignors, selectable by class name, and this crate's
/// [`OptimizedTaskAssignor`] (`optimized` or `OptimizedTaskAssignor`).
///
/// ```
/// use kstreams_assignor::engine::AssignorKind;
///
/// let kind: AssignorKind = "HighAvailabilityTaskAssignor".parse().unwrap();
/// assert_eq!(kind, AssignorKind::HighAvailability);
/// let fqcn = "org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor";
/// assert_eq!(fqcn.parse::<AssignorKind>().unwrap(), AssignorKind::LegacySticky);
/// assert!("StickyTaskAssignor".parse::<AssignorKind>().is_err());
/// assert_eq!("optimized".parse::<AssignorKind>().unwrap(), AssignorKind::Optimized);
/// assert_eq!("OptimizedTaskAssignor".parse::<AssignorKind>().unwrap(), AssignorKind::Optimized);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AssignorKind {
    /// `HighAvailabilityTaskAssignor`, Kafka's default.
    #[default]
    HighAvailability,
    /// `LegacyStickyTaskAssignor` (called `StickyTaskAssignor` before Kafka 3.8).
    LegacySticky,
    /// `FallbackPriorTaskAssignor`, used when the end offsets could not be fetched.
    FallbackPrior,
    /// [`OptimizedTaskAssignor`]: not one of Kafka's; the group's leader must be a member of
    /// this crate for it to run (see its documentation).
    Optimized,
}

/// The package of Kafka's internal assignors, as `internal.task.assignor.class` names them.
const KAFKA_PACKAGE: &str = "org.apache.kafka.streams.processor.internals.assignment.";

impl AssignorKind {
    /// All kinds.
    pub const ALL: [Self; 4] = [Self::HighAvailability, Self::LegacySticky, Self::FallbackPrior, Self::Optimized];

    /// The short name `optimized` also selects [`AssignorKind::Optimized`].
    pub const OPTIMIZED_SHORT_NAME: &'static str = "optimized";

    /// Kafka's class name (for [`AssignorKind::Optimized`], `OptimizedTaskAssignor`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::HighAvailability => HighAvailabilityTaskAssignor::NAME,
            Self::LegacySticky => LegacyStickyTaskAssignor::NAME,
            Self::FallbackPrior => FallbackPriorTaskAssignor::NAME,
            Self::Optimized => OptimizedTaskAssignor::NAME,
        }
    }

    /// The assignor.
    pub fn assignor(self) -> &'static dyn TaskAssignor {
        match self {
            Self::HighAvailability => &HighAvailabilityTaskAssignor,
            Self::LegacySticky => &LegacyStickyTaskAssignor,
            Self::FallbackPrior => &FallbackPriorTaskAssignor,
            Self::Optimized => &OptimizedTaskAssignor,
        }
    }
}

impl fmt::Display for AssignorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of Kafka's assignors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown task assignor `{0}` (expected HighAvailabilityTaskAssignor, LegacyStickyTaskAssignor, FallbackPriorTaskAssignor or optimized)"
)]
pub struct UnknownAssignor(String);

impl FromStr for AssignorKind {
    type Err = UnknownAssignor;

    /// Accepts the simple or the fully qualified class name, and `optimized`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == Self::OPTIMIZED_SHORT_NAME {
            return Ok(Self::Optimized);
        }
        let simple = s.strip_prefix(KAFKA_PACKAGE).unwrap_or(s);
        Self::ALL.into_iter().find(|k| k.name() == simple).ok_or_else(|| UnknownAssignor(s.to_owned()))
    }
}

impl Serialize for AssignorKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for AssignorKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// The leader's choice (Kafka's `StreamsPartitionAssignor.createTaskAssignor`) followed by the
/// assignment: the configured assignor runs, except that when the changelog end offsets could not
/// be fetched any assignor but `LegacyStickyTaskAssignor` is replaced by
/// `FallbackPriorTaskAssignor`. [`Assignment::assignor`] names the one that ran.
///
/// ```
/// use kstreams_assignor::engine::{assign, AssignmentInput, AssignorKind, ClientInput};
/// use kstreams_assignor::wire::{ProcessId, TaskId};
///
/// let input = AssignmentInput::new()
///     .with_client(ClientInput::new(ProcessId::NIL, 1))
///     .with_stateful_tasks([(TaskId::new(0, 0), 10)])
///     .with_end_offsets_unavailable();
/// let out = assign(AssignorKind::HighAvailability, &input).unwrap();
/// assert_eq!(out.assignor, "FallbackPriorTaskAssignor");
/// assert!(out.followup.probing_rebalance_needed, "the fallback always asks to retry");
/// ```
pub fn assign(configured: AssignorKind, input: &AssignmentInput) -> Result<Assignment, AssignError> {
    effective_assignor(configured, input).assignor().assign(input)
}

/// The assignor [`assign`] runs for `configured` on `input`.
pub fn effective_assignor(configured: AssignorKind, input: &AssignmentInput) -> AssignorKind {
    if input.changelog_end_offset_sums.is_none() && configured != AssignorKind::LegacySticky {
        AssignorKind::FallbackPrior
    } else {
        configured
    }
}
