//! What the group member reports as it goes, the leader's record of each generation, and why
//! the member stops.

use serde::Serialize;

use crate::client::admin::AdminError;
use crate::client::connection::ConnectionError;
use crate::member::hook::{OnAssignmentError, ReceivedAssignment};
use crate::leader::LeaderError;
use crate::wire::{DecodeError, EncodeError, ProcessId, TaskId};

/// What the member reports as it goes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum MemberEvent {
    /// The member connected to the group coordinator (first, or again after an error).
    CoordinatorFound {
        /// The coordinator, `host:port`.
        broker: String,
    },
    /// A JoinGroup completed.
    Joined {
        /// The generation.
        generation_id: i32,
        /// This member's id.
        member_id: String,
        /// The leader's member id.
        leader_id: String,
        /// Members in the generation (known to the leader only; 0 otherwise).
        members: usize,
    },
    /// The leader created internal topics.
    TopicsCreated(Vec<String>),
    /// The leader's assignment of one generation.
    Assigned(GenerationRecord),
    /// This member's own assignment, read by the hook.
    Received {
        /// The generation.
        generation_id: i32,
        /// The hook's reading.
        assignment: Box<ReceivedAssignment>,
        /// When the member will rejoin (epoch ms), if it will.
        rejoin_at: Option<i64>,
    },
    /// The member joins again.
    Rejoining(String),
    /// A retriable error; the member waits and retries.
    Retrying {
        /// The error.
        error: String,
        /// The wait.
        backoff_ms: u64,
    },
    /// The member left the group.
    Left(String),
}

/// The leader's assignment of one generation, per member.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GenerationRecord {
    /// The generation.
    pub generation_id: i32,
    /// The leader's member id.
    pub leader_id: String,
    /// The leader's clock when it assigned (epoch ms).
    pub assigned_at_ms: i64,
    /// The error code sent to every member, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i32>,
    /// Why (for an error assignment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When the leader rejoins for a probing rebalance (epoch ms), if one is wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probing_rebalance_at_ms: Option<i64>,
    /// Every member's assignment, in member id order.
    pub members: Vec<MemberRecord>,
}

/// One member's assignment in a [`GenerationRecord`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MemberRecord {
    /// The member id.
    pub member_id: String,
    /// Its process id.
    pub process_id: ProcessId,
    /// Whether it was excluded from the task assignment.
    pub excluded: bool,
    /// Active tasks.
    pub active_tasks: Vec<TaskId>,
    /// Standby tasks that are neither warm-ups nor spares.
    pub standby_tasks: Vec<TaskId>,
    /// Warm-up tasks (sent as standbys; the task assignor's warm-ups of the member's client).
    pub warmup_tasks: Vec<TaskId>,
    /// Spare replicas (sent as standbys; the optimized assignor's spares of the member's client).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spare_tasks: Vec<TaskId>,
    /// Its `nextRebalanceMs`.
    pub next_rebalance_ms: i64,
}

/// Why the member stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemberError {
    /// A broker request failed with an error the member does not recover from.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// No bootstrap broker answered `FindCoordinator`.
    #[error("no coordinator found for group `{group}`: {last}")]
    NoCoordinator {
        /// The group.
        group: String,
        /// Why: the error, or with several bootstrap brokers each one's (`broker: error; …`).
        last: String,
    },
    /// The hook could not build the subscription.
    #[error("subscription: {0}")]
    Subscription(#[from] EncodeError),
    /// The leader's assignment failed.
    #[error(transparent)]
    Leader(#[from] LeaderError),
    /// The assignment received does not decode.
    #[error("assignment received: {0}")]
    AssignmentDecode(#[source] DecodeError),
    /// The hook refused the assignment received.
    #[error("assignment received: {0}")]
    OnAssignment(#[from] OnAssignmentError),
    /// The coordinator chose another protocol than the hook's.
    #[error("the coordinator chose protocol `{got}`, this member offers `{expected}`")]
    Protocol {
        /// The hook's protocol.
        expected: String,
        /// The protocol chosen.
        got: String,
    },
    /// An internal topic exists with another partition count than the topology needs (Kafka
    /// Streams' leader fails the same way).
    #[error("internal topic `{topic}` has {actual} partitions, the topology needs {expected}")]
    InternalTopic {
        /// The topic.
        topic: String,
        /// The partitions needed.
        expected: i32,
        /// The partitions it has.
        actual: i32,
    },
    /// Creating an internal topic failed.
    #[error("creating internal topics: {0}")]
    CreateTopics(#[source] ConnectionError),
    /// A leader-only member
    /// ([`MemberConfig::leader_only`](crate::member::config::MemberConfig::leader_only)) was
    /// given tasks by another leader
    /// (a Java member leads the group). It leaves the group rather than hold tasks it does not
    /// run.
    #[error("member `{leader_id}` leads the group and gave this leader-only member tasks {}; left the group", display_tasks(tasks))]
    NotLeading {
        /// The leader's member id.
        leader_id: String,
        /// The active and standby tasks it was given.
        tasks: Vec<TaskId>,
    },
}

fn display_tasks(tasks: &[TaskId]) -> String {
    tasks.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl From<AdminError> for MemberError {
    fn from(e: AdminError) -> Self {
        match e {
            AdminError::CreateTopics(e) => Self::CreateTopics(e),
            AdminError::Connection(e) => Self::Connection(e),
        }
    }
}
