//! What the leader's assignment gives back: each member's bytes, the typed account of how they
//! were reached, and the errors for which Kafka's leader throws instead of answering.

use std::collections::BTreeMap;

use super::input::RebalanceSnapshot;
use super::tasks::TaskError;
use super::threads::{MemberAssignment, ThreadError};
use super::topology_check::TopologyMismatch;
use crate::engine::{Assignment, AssignorKind};
use crate::wire::{AssignmentInfo, AssignorError, DecodeError, EncodeError, EndpointError, ProcessId};

/// Why the leader could not produce any assignment (Kafka's leader throws in these cases).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderError {
    /// The members' subscriptions show another topology than the leader's
    /// ([`check_topology`](super::check_topology)): nothing is assigned.
    #[error(transparent)]
    TopologyMismatch(#[from] TopologyMismatch),
    /// A member id appears twice.
    #[error("member `{0}` appears twice")]
    DuplicateMember(String),
    /// A member's envelope or `SubscriptionInfo` does not decode.
    #[error("subscription of member `{member}`: {source}")]
    Decode {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: DecodeError,
    },
    /// A member's envelope has no user data.
    #[error("subscription of member `{0}` has no user data")]
    NoUserData(String),
    /// A member's `application.server` is invalid.
    #[error("endpoint of member `{member}`: {source}")]
    Endpoint {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: EndpointError,
    },
    /// A member's client tags repeat a key.
    #[error("member `{member}` repeats client tag `{key}`")]
    DuplicateClientTag {
        /// The member.
        member: String,
        /// The key.
        key: String,
    },
    /// The topology and metadata do not give tasks (beyond the cases Kafka answers with an error
    /// assignment).
    #[error(transparent)]
    Tasks(TaskError),
    /// The thread split failed.
    #[error(transparent)]
    Threads(#[from] ThreadError),
    /// An assignment cannot be encoded at the negotiated version.
    #[error("assignment of member `{member}`: {source}")]
    Encode {
        /// The member.
        member: String,
        /// The error.
        #[source]
        source: EncodeError,
    },
}

/// The leader's answer: each member's SyncGroup assignment, and what went into it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GroupAssignment {
    /// Member id → its `ConsumerProtocolAssignment` bytes.
    pub members: BTreeMap<String, Vec<u8>>,
    /// The typed account.
    pub report: AssignmentReport,
}

/// How the leader came to its answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AssignmentReport {
    /// The minimum `SubscriptionInfo` version used by the members (at most 11): the version
    /// every assignment is encoded at.
    pub min_used_version: i32,
    /// The minimum latest-supported version: the `commonlySupportedVersion` sent.
    pub min_supported_version: i32,
    /// The version of a member from the future, if one joined (the last one seen).
    pub future_version: Option<i32>,
    /// Whether this is a version-probing rebalance.
    pub version_probing: bool,
    /// The clients: process id → its member ids (sorted as Kafka sorts them).
    pub clients: BTreeMap<ProcessId, Vec<String>>,
    /// The error code sent to everyone, and why; `None` for a normal assignment.
    pub error: Option<(AssignorError, String)>,
    /// The task assignor's result (normal assignments only).
    pub assignment: Option<Assignment>,
    /// The assignor that ran.
    pub effective_assignor: Option<AssignorKind>,
    /// What to pass as [`LeaderInput::previous_rebalance`](super::LeaderInput::previous_rebalance) next time (normal assignments only).
    pub snapshot: Option<RebalanceSnapshot>,
    /// Each member's assignment content (normal assignments only), in member order.
    pub member_assignments: Vec<MemberAssignment>,
    /// The `AssignmentInfo` sent to each member.
    pub infos: BTreeMap<String, AssignmentInfo>,
    /// The process id each member's subscription carries (excluded members and members from the
    /// future included, which [`clients`](Self::clients) leaves out or files under
    /// [`FUTURE_PROCESS_ID`](super::FUTURE_PROCESS_ID)).
    pub process_ids: BTreeMap<String, ProcessId>,
}

