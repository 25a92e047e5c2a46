//! The consumer-group hook of a Kafka Streams member, shaped like Java's
//! `ConsumerPartitionAssignor`: its protocol [`name`](PartitionAssignorHook::name), the user data
//! of its subscription, the leader's [`assign`](PartitionAssignorHook::assign), and the member's
//! [`on_assignment`](PartitionAssignorHook::on_assignment).
//!
//! [`StreamsMember`] implements it from a member's local state. On receipt of an assignment it
//! applies the member-side rules of version probing:
//!
//! * an error code other than 0 is handed back ([`Followup::Error`]) with nothing assigned;
//! * a received version above the one sent, or a commonly supported version above 11, is an error;
//! * from version 3 on: a commonly supported version above the used one → the member upgrades to it
//!   and rebalances at once; else a received version below the used one → the member downgrades to
//!   the commonly supported version and rebalances at once;
//! * otherwise `nextRebalanceMs` is the follow-up, and a member whose endpoint is missing from the
//!   host maps (when they are not empty) rebalances at once.
//!
//! ```
//! use kstreams_assignor::member::{Followup, PartitionAssignorHook, StreamsMember};
//! use kstreams_assignor::wire::{AssignmentEnvelope, AssignmentInfo, ProcessId, SubscriptionInfo, TaskId, TopicPartition};
//!
//! let mut member = StreamsMember::new(ProcessId::NIL).with_version(11);
//! assert_eq!(member.name(), "stream");
//! let sent = SubscriptionInfo::decode(&member.subscription_user_data().unwrap()).unwrap();
//! assert_eq!((sent.version, sent.unique_field), (11, 1));
//!
//! // A v7 leader answers: the member downgrades to v7 and rebalances.
//! let info = AssignmentInfo::new(7).with_commonly_supported_version(7).with_active_tasks(vec![TaskId::new(0, 0)]);
//! let env = AssignmentEnvelope::new(&[TopicPartition::new("in", 0)], Some(info.encode().unwrap()));
//! let got = member.on_assignment(&env).unwrap();
//! assert_eq!(got.active_tasks[&TaskId::new(0, 0)], [TopicPartition::new("in", 0)].into());
//! assert_eq!(got.followup, Followup::Downgrade { to: 7 });
//! assert_eq!(member.used_version(), 7);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::leader::{GroupAssignment, LeaderError, LeaderInput};
use crate::wire::{
    AssignmentEnvelope, AssignmentInfo, AssignorError, DecodeError, EncodeError, HostInfo, LATEST_SUPPORTED_VERSION,
    NextRebalance, PROTOCOL_NAME, ProcessId, SubscriptionInfo, TaskId, TopicPartition,
};

/// A consumer-group assignor hook, modelled on Java's `ConsumerPartitionAssignor`.
pub trait PartitionAssignorHook {
    /// The protocol name sent in JoinGroup.
    fn name(&self) -> &'static str;
    /// The process id this member subscribes with (the leader's own client gets the probing
    /// deadline).
    fn process_id(&self) -> ProcessId;
    /// The user data of this member's subscription.
    fn subscription_user_data(&mut self) -> Result<Vec<u8>, EncodeError>;
    /// The leader's assignment of the whole group.
    fn assign(&mut self, input: &LeaderInput<'_>) -> Result<GroupAssignment, LeaderError>;
    /// This member's reading of the assignment it received.
    fn on_assignment(&mut self, assignment: &AssignmentEnvelope) -> Result<ReceivedAssignment, OnAssignmentError>;
}

/// What a member does after an assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Followup {
    /// Rejoin at this time (`NextRebalance::NONE`: no follow-up).
    At(NextRebalance),
    /// The group supports a newer version: the member now uses it and rebalances at once.
    Upgrade {
        /// The version now used.
        to: i32,
    },
    /// The leader answered at an older version: the member now uses the commonly supported
    /// version and rebalances at once.
    Downgrade {
        /// The version now used.
        to: i32,
    },
    /// The member's endpoint is missing from the host map: rebalance at once.
    EndpointMissing,
    /// The leader sent an error code; nothing is assigned.
    Error(AssignorError),
}

/// A received assignment, as the member's task manager takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReceivedAssignment {
    /// Active tasks with their partitions.
    pub active_tasks: BTreeMap<TaskId, BTreeSet<TopicPartition>>,
    /// Standby tasks with their partitions.
    pub standby_tasks: BTreeMap<TaskId, BTreeSet<TopicPartition>>,
    /// The decoded `AssignmentInfo`.
    pub info: AssignmentInfo,
    /// What to do next.
    pub followup: Followup,
}

/// An assignment the member cannot accept (Java's member throws).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OnAssignmentError {
    /// The envelope has no user data.
    #[error("assignment has no user data")]
    NoUserData,
    /// The `AssignmentInfo` does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The leader used a version newer than the member sent.
    #[error("received version {received} is newer than the version {used} sent")]
    NewerThanSent {
        /// The received version.
        received: i32,
        /// The version sent.
        used: i32,
    },
    /// The commonly supported version is newer than any this crate knows.
    #[error("commonly supported version {0} is newer than {LATEST_SUPPORTED_VERSION}")]
    UnknownCommonVersion(i32),
    /// The active task list and the partitions differ in length.
    #[error("{tasks} active tasks for {partitions} partitions")]
    TaskListMismatch {
        /// Entries in the active task list.
        tasks: usize,
        /// Assigned partitions.
        partitions: usize,
    },
}

/// A Kafka Streams member's local state, and the hook built on it.
#[derive(Debug, Clone)]
pub struct StreamsMember {
    process_id: ProcessId,
    endpoint: Option<String>,
    offset_sums: BTreeMap<TaskId, i64>,
    tags: Vec<(String, String)>,
    used_version: i32,
    unique_field: i8,
    error_code: AssignorError,
    /// What it saw the last time it led, for the next assignment.
    last_rebalance: Option<crate::leader::RebalanceSnapshot>,
}

impl StreamsMember {
    /// A member at the latest version, no endpoint, no state.
    pub fn new(process_id: ProcessId) -> Self {
        Self {
            process_id,
            endpoint: None,
            offset_sums: BTreeMap::new(),
            tags: Vec::new(),
            used_version: LATEST_SUPPORTED_VERSION,
            unique_field: 0,
            error_code: AssignorError::NONE,
            last_rebalance: None,
        }
    }

    /// Sets the version it subscribes with (`upgrade.from`, or after probing).
    pub fn with_version(mut self, version: i32) -> Self {
        self.used_version = version;
        self
    }

    /// Sets `application.server`.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets the offset sums of its local task state.
    pub fn with_offset_sums(mut self, sums: impl IntoIterator<Item = (TaskId, i64)>) -> Self {
        self.offset_sums = sums.into_iter().collect();
        self
    }

    /// Sets its client tags.
    pub fn with_client_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = (S, S)>) -> Self {
        self.tags = tags.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        self
    }

    /// Sets the error code it reports (e.g. `SHUTDOWN_REQUESTED`).
    pub fn with_error_code(mut self, code: AssignorError) -> Self {
        self.error_code = code;
        self
    }

    /// The version it subscribes with.
    pub fn used_version(&self) -> i32 {
        self.used_version
    }

    /// Its process id.
    pub fn process_id(&self) -> ProcessId {
        self.process_id
    }

    /// Builds its `SubscriptionInfo`; each call increments `uniqueField` (as Java does, so that
    /// the group coordinator sees changed metadata). Fields the used version cannot carry are left
    /// out explicitly: the endpoint before v2, the error code before v9, client tags before v11.
    pub fn subscription_info(&mut self) -> SubscriptionInfo {
        self.unique_field = self.unique_field.wrapping_add(1);
        let v = self.used_version;
        let mut info = SubscriptionInfo::new(v, self.process_id).with_task_offset_sums(self.offset_sums.clone());
        if v >= 2 {
            if let Some(e) = &self.endpoint {
                info = info.with_user_end_point(e);
            }
        }
        if v >= 8 {
            info = info.with_unique_field(self.unique_field);
        }
        if v >= 9 {
            info = info.with_error_code(self.error_code);
        }
        if v >= 11 {
            info = info.with_client_tags(self.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        info
    }
}

impl PartitionAssignorHook for StreamsMember {
    fn name(&self) -> &'static str {
        PROTOCOL_NAME
    }

    fn process_id(&self) -> ProcessId {
        self.process_id
    }

    fn subscription_user_data(&mut self) -> Result<Vec<u8>, EncodeError> {
        self.subscription_info().encode()
    }

    /// The leader's assignment; the previous one this member computed, if the caller gives none,
    /// feeds the optimized assignor's restore-rate estimates.
    fn assign(&mut self, input: &LeaderInput<'_>) -> Result<GroupAssignment, LeaderError> {
        let previous = self.last_rebalance.take();
        let mut input = input.clone();
        if input.previous_rebalance.is_none() {
            input.previous_rebalance = previous.as_ref();
        }
        let out = crate::leader::assign(&input)?;
        self.last_rebalance = out.report.snapshot.clone();
        Ok(out)
    }

    fn on_assignment(&mut self, assignment: &AssignmentEnvelope) -> Result<ReceivedAssignment, OnAssignmentError> {
        let bytes = assignment.user_data.as_deref().ok_or(OnAssignmentError::NoUserData)?;
        let info = AssignmentInfo::decode(bytes)?;
        if !info.error_code.is_none() {
            return Ok(ReceivedAssignment {
                active_tasks: BTreeMap::new(),
                standby_tasks: BTreeMap::new(),
                followup: Followup::Error(info.error_code),
                info,
            });
        }
        let (received, common) = (info.version, info.commonly_supported_version);
        if received > self.used_version {
            return Err(OnAssignmentError::NewerThanSent { received, used: self.used_version });
        }
        if common > LATEST_SUPPORTED_VERSION {
            return Err(OnAssignmentError::UnknownCommonVersion(common));
        }
        let partitions = assignment.partitions();
        if partitions.len() != info.active_tasks.len() {
            return Err(OnAssignmentError::TaskListMismatch { tasks: info.active_tasks.len(), partitions: partitions.len() });
        }
        let mut active_tasks: BTreeMap<TaskId, BTreeSet<TopicPartition>> = BTreeMap::new();
        for (p, t) in partitions.into_iter().zip(&info.active_tasks) {
            active_tasks.entry(t.clone()).or_default().insert(p);
        }
        let standby_tasks = info.standby_tasks_map();

        let mut followup = Followup::At(info.next_rebalance);
        if received >= 3 {
            if common > self.used_version {
                self.used_version = common;
                followup = Followup::Upgrade { to: common };
            } else if received < self.used_version {
                self.used_version = common;
                followup = Followup::Downgrade { to: common };
            }
        }
        if let Followup::At(_) = followup {
            let own = self.endpoint.as_deref().and_then(|e| HostInfo::from_endpoint(e).ok().flatten());
            let hosts = info.hosts();
            if own.is_some_and(|host| !hosts.is_empty() && !hosts.contains(&host)) {
                followup = Followup::EndpointMissing;
            }
        }
        Ok(ReceivedAssignment { active_tasks, standby_tasks, info, followup })
    }
}
