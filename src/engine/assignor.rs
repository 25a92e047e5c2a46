//! The assignor interface: [`TaskAssignor`] and its error.

use super::input::{AssignmentInput, InputError};
use super::output::Assignment;

/// A task assignor: a pure function from the group's state to an assignment.
///
/// Implementations are deterministic: the same input (in any client order) gives the same
/// assignment.
pub trait TaskAssignor {
    /// The assignor's name (Kafka's class name for Kafka's assignors).
    fn name(&self) -> &'static str;

    /// Computes an assignment.
    fn assign(&self, input: &AssignmentInput) -> Result<Assignment, AssignError>;
}

/// Why no assignment was computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssignError {
    /// The input is invalid.
    #[error("invalid assignment input: {0}")]
    Input(#[from] InputError),
    /// The assignor reached a state Kafka treats as a bug (`IllegalStateException`).
    #[error("internal assignor error: {0}")]
    Internal(&'static str),
}
