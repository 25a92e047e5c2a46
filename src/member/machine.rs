//! The group member's protocol as a state machine without I/O: it is fed the coordinator's
//! answers (or the errors of the calls) and the time, and says which request to send next and
//! until when nothing is due. The blocking `GroupMember` drives it over TCP.
//!
//! The machine never reads the clock: every call that depends on time takes `now` (epoch ms).
//! It calls the hook itself (the hook does no I/O); the leader's metadata and admin calls are
//! I/O, so the machine asks for them with [`Request::Lead`] and [`Request::CheckMetadata`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod lead;

use crate::client::connection::ErrorCode;
use crate::member::hook::{Followup, PartitionAssignorHook};
use crate::member::config::MemberConfig;
use crate::member::events::{GenerationRecord, MemberError, MemberEvent};
use crate::member::tasks::{MemberTasks, NoCallbacks, TaskCallbacks};
use crate::leader::{JoinMember, Topology};
use crate::wire::{AssignmentEnvelope, ProcessId, SubscriptionEnvelope, TaskId, TopicPartition};

/// What the machine wants the driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// Find the coordinator (on the bootstrap brokers in turn) and connect to it.
    FindCoordinator,
    /// `JoinGroup` with this member id, subscription metadata and reason.
    JoinGroup { member_id: String, metadata: Vec<u8>, reason: String },
    /// The leader's I/O (metadata, internal topics, end offsets), then
    /// [`MemberMachine::assign`]; the outcome comes back as [`Response::Led`].
    Lead { members: Vec<JoinMember> },
    /// `SyncGroup` with these assignments (empty unless leading).
    SyncGroup { generation_id: i32, member_id: String, assignments: BTreeMap<String, Vec<u8>> },
    /// `Heartbeat`.
    Heartbeat { generation_id: i32, member_id: String },
    /// `Metadata` for these topics, answered with their partition counts.
    CheckMetadata { topics: Vec<String> },
    /// `LeaveGroup`.
    LeaveGroup { member_id: String },
}

/// A successful answer to a [`Request`].
#[derive(Debug, Clone)]
pub(crate) enum Response {
    /// Connected to the coordinator.
    CoordinatorFound,
    /// `JoinGroup` answered `MEMBER_ID_REQUIRED` with this id.
    MemberIdRequired { member_id: String },
    /// `JoinGroup` completed.
    Joined {
        member_id: String,
        generation_id: i32,
        leader_id: String,
        protocol_name: Option<String>,
        skip_assignment: bool,
        members: Vec<JoinMember>,
    },
    /// The leader's assignment: each member's bytes and the generation's record.
    Led { assignments: BTreeMap<String, Vec<u8>>, record: GenerationRecord },
    /// `SyncGroup` completed with this member's assignment bytes.
    Synced { assignment: Vec<u8> },
    /// `Heartbeat` completed.
    HeartbeatOk,
    /// The partition counts of [`Request::CheckMetadata`]'s topics.
    Metadata { counts: BTreeMap<String, i32> },
    /// `LeaveGroup` was sent (or could not be): its outcome; `sent` is false when the request
    /// could not even be built.
    Left { outcome: Result<(), String>, sent: bool },
}

/// What the member does after an error.
enum Recovery {
    /// Join again (after forgetting the member id, or the generation).
    Rejoin { forget_member_id: bool, forget_generation: bool },
    /// Find the coordinator again, then carry on.
    Refind,
    /// Try the same step again.
    Retry,
    /// Stop.
    Fatal,
}

fn recovery(e: &MemberError) -> Recovery {
    match e {
        MemberError::Connection(c) => match c.code() {
            Some(ErrorCode::REBALANCE_IN_PROGRESS) => Recovery::Rejoin { forget_member_id: false, forget_generation: false },
            Some(ErrorCode::UNKNOWN_MEMBER_ID) => Recovery::Rejoin { forget_member_id: true, forget_generation: true },
            Some(ErrorCode::ILLEGAL_GENERATION) => Recovery::Rejoin { forget_member_id: false, forget_generation: true },
            Some(ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE) => Recovery::Refind,
            Some(ErrorCode::COORDINATOR_LOAD_IN_PROGRESS) => Recovery::Retry,
            Some(_) => Recovery::Fatal,
            None if c.is_network() => Recovery::Refind,
            None => Recovery::Fatal,
        },
        MemberError::NoCoordinator { .. } => Recovery::Retry,
        _ => Recovery::Fatal,
    }
}

/// Where the member is between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// It must (re)join.
    Join,
    /// It has an assignment and heartbeats.
    Stable,
}

/// Where the current step is.
#[derive(Debug)]
enum Step {
    /// No step under way: the next one starts at the next poll.
    Idle,
    /// The coordinator was found within a step: the step goes on at the next poll.
    Connected,
    /// A request is out; its answer is awaited.
    Awaiting(Pending),
    /// The `JoinGroup` of this metadata is to be sent (again).
    Join { metadata: Vec<u8> },
    /// The leader's work is to be asked for.
    Lead { members: Vec<JoinMember>, leader_id: String },
    /// The `SyncGroup` is to be sent.
    Sync { assignments: BTreeMap<String, Vec<u8>>, is_leader: bool, leader_id: String, probing_at: Option<i64> },
    /// Stable: heartbeat at `due`, unless a rejoin, a metadata check or a stop comes first.
    Wait { due: i64 },
    /// Waiting `retry.backoff.ms` (doubled each time) after an error.
    Backoff { until: i64 },
    /// Leaving (then done).
    Leave,
    /// Done: the outcome is ready.
    Done,
}

/// The request that is out, with what its answer needs.
#[derive(Debug)]
enum Pending {
    Coordinator,
    Join { metadata: Vec<u8> },
    Lead { leader_id: String },
    Sync { is_leader: bool, leader_id: String, probing_at: Option<i64> },
    Heartbeat,
    Metadata { due: i64 },
    Leave,
}

/// The group member's protocol without I/O (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct MemberMachine<H> {
    config: MemberConfig,
    topology: Topology,
    hook: H,
    process_id: ProcessId,
    coordinator_known: bool,
    member_id: String,
    generation_id: i32,
    owned: Vec<TopicPartition>,
    phase: Phase,
    step: Step,
    rejoin_reason: String,
    rejoin_at: Option<i64>,
    /// As leader: the source topics' partition counts the last assignment used.
    assigned_counts: Option<BTreeMap<String, i32>>,
    next_metadata_check: i64,
    backoff: u64,
    events: VecDeque<MemberEvent>,
    outcome: Option<Result<(), MemberError>>,
    /// The program's task callbacks, and the tasks they were last told of.
    callbacks: Callbacks,
    tasks: MemberTasks,
}

/// The task callbacks, boxed (they are the program's, and need not be `Debug`).
pub(crate) struct Callbacks(pub(crate) Box<dyn TaskCallbacks + Send>);

impl std::fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callbacks")
    }
}

impl<H: PartitionAssignorHook> MemberMachine<H> {
    /// A member of `config.group_id` with `hook` for the application `topology`.
    pub(crate) fn new(config: MemberConfig, topology: Topology, hook: H) -> Self {
        let process_id = hook.process_id();
        let backoff = config.retry_backoff_ms;
        Self {
            config,
            topology,
            hook,
            process_id,
            coordinator_known: false,
            member_id: String::new(),
            generation_id: -1,
            owned: Vec::new(),
            phase: Phase::Join,
            step: Step::Idle,
            rejoin_reason: "initial join".into(),
            rejoin_at: None,
            assigned_counts: None,
            next_metadata_check: i64::MAX,
            backoff,
            events: VecDeque::new(),
            outcome: None,
            callbacks: Callbacks(Box::new(NoCallbacks)),
            tasks: MemberTasks::default(),
        }
    }

    /// The callbacks to tell as tasks change.
    pub(crate) fn set_callbacks(&mut self, callbacks: Box<dyn TaskCallbacks + Send>) {
        self.callbacks = Callbacks(callbacks);
    }

    /// Tells the callbacks of the new tasks: the active ones revoked first, then all.
    fn tell_assigned(&mut self, next: MemberTasks) {
        let revoked = self.tasks.revoked_by(&next);
        if !revoked.is_empty() {
            self.callbacks.0.on_tasks_revoked(&revoked);
        }
        self.callbacks.0.on_tasks_assigned(&next);
        self.tasks = next;
    }

    /// Tells the callbacks that every task is lost (the member is out of the generation).
    fn tell_lost(&mut self) {
        if !self.tasks.is_empty() {
            self.callbacks.0.on_all_tasks_lost();
            self.tasks = MemberTasks::default();
        }
    }

    pub(crate) fn config(&self) -> &MemberConfig {
        &self.config
    }

    pub(crate) fn topology(&self) -> &Topology {
        &self.topology
    }

    pub(crate) fn member_id(&self) -> &str {
        &self.member_id
    }

    pub(crate) fn process_id(&self) -> ProcessId {
        self.process_id
    }

    pub(crate) fn generation_id(&self) -> i32 {
        self.generation_id
    }

    /// Whether the member holds a connection to the coordinator (false once an error asks to
    /// find it again).
    pub(crate) fn coordinator_known(&self) -> bool {
        self.coordinator_known
    }

    pub(crate) fn hook(&self) -> &H {
        &self.hook
    }

    /// Whether a stop may be taken now: between steps, while waiting to heartbeat and while
    /// backing off (not inside a join and sync, nor while a request is out).
    pub(crate) fn stoppable(&self) -> bool {
        matches!(self.step, Step::Idle | Step::Wait { .. } | Step::Backoff { .. })
    }

    /// The caller stops the member: it leaves the group (dynamic members only), then is done.
    pub(crate) fn close(&mut self) {
        if self.outcome.is_none() && self.stoppable() {
            self.outcome = Some(Ok(()));
            self.step = Step::Leave;
            self.tell_assigned(MemberTasks::default());
        }
    }

    /// The caller stops even though a step is under way (the driver abandoned the request in
    /// flight, or does not send the next one): the member leaves the group, then is done. An
    /// error that already ends the member stays its outcome.
    pub(crate) fn abandon(&mut self) {
        if self.outcome.is_none() {
            self.outcome = Some(Ok(()));
        }
        if !matches!(self.step, Step::Done | Step::Awaiting(Pending::Leave)) {
            self.step = Step::Leave;
        }
    }

    /// The next event, if any.
    pub(crate) fn poll_event(&mut self) -> Option<MemberEvent> {
        self.events.pop_front()
    }

    /// Once done (after leaving): how the member ended.
    pub(crate) fn take_outcome(&mut self) -> Option<Result<(), MemberError>> {
        if matches!(self.step, Step::Done) { self.outcome.take() } else { None }
    }

    /// Until when (epoch ms) nothing is due, while waiting; `None` when a request is due now or
    /// an answer is awaited.
    pub(crate) fn poll_timeout(&self) -> Option<i64> {
        match self.step {
            Step::Wait { due } => {
                let mut t = due;
                if let Some(r) = self.rejoin_at {
                    t = t.min(r);
                }
                if self.assigned_counts.is_some() {
                    t = t.min(self.next_metadata_check);
                }
                Some(t)
            }
            Step::Backoff { until } => Some(until),
            _ => None,
        }
    }

    /// The request to send now, if one is due.
    pub(crate) fn poll_request(&mut self, now: i64) -> Option<Request> {
        loop {
            match std::mem::replace(&mut self.step, Step::Idle) {
                Step::Awaiting(p) => {
                    self.step = Step::Awaiting(p);
                    return None;
                }
                Step::Done => {
                    self.step = Step::Done;
                    return None;
                }
                Step::Leave => {
                    if self.member_id.is_empty() || self.config.group_instance_id.is_some() || !self.coordinator_known {
                        self.step = Step::Done;
                        return None;
                    }
                    self.step = Step::Awaiting(Pending::Leave);
                    return Some(Request::LeaveGroup { member_id: self.member_id.clone() });
                }
                Step::Backoff { until } if now < until => {
                    self.step = Step::Backoff { until };
                    return None;
                }
                Step::Backoff { .. } | Step::Idle | Step::Connected => {
                    if !self.coordinator_known {
                        self.step = Step::Awaiting(Pending::Coordinator);
                        return Some(Request::FindCoordinator);
                    }
                    match self.phase {
                        Phase::Join => match self.subscription() {
                            Ok(metadata) => self.step = Step::Join { metadata },
                            Err(e) => self.handle_error(e, now),
                        },
                        Phase::Stable => self.step = Step::Wait { due: now.saturating_add(self.config.heartbeat_interval_ms) },
                    }
                }
                Step::Join { metadata } => {
                    let request =
                        Request::JoinGroup { member_id: self.member_id.clone(), metadata: metadata.clone(), reason: self.rejoin_reason.clone() };
                    self.step = Step::Awaiting(Pending::Join { metadata });
                    return Some(request);
                }
                Step::Lead { members, leader_id } => {
                    self.step = Step::Awaiting(Pending::Lead { leader_id });
                    return Some(Request::Lead { members });
                }
                Step::Sync { assignments, is_leader, leader_id, probing_at } => {
                    let request =
                        Request::SyncGroup { generation_id: self.generation_id, member_id: self.member_id.clone(), assignments };
                    self.step = Step::Awaiting(Pending::Sync { is_leader, leader_id, probing_at });
                    return Some(request);
                }
                Step::Wait { due } => {
                    if let Some(t) = self.rejoin_at.filter(|&t| t <= now) {
                        let reason = format!("{} due at {t}", self.rejoin_reason);
                        self.backoff = self.config.retry_backoff_ms;
                        self.request_rejoin(reason);
                        continue;
                    }
                    if self.assigned_counts.is_some() && now >= self.next_metadata_check {
                        self.next_metadata_check = now.saturating_add(self.config.metadata_max_age_ms);
                        self.step = Step::Awaiting(Pending::Metadata { due });
                        return Some(Request::CheckMetadata { topics: self.external_source_topics().into_iter().collect() });
                    }
                    if now >= due {
                        self.step = Step::Awaiting(Pending::Heartbeat);
                        return Some(Request::Heartbeat { generation_id: self.generation_id, member_id: self.member_id.clone() });
                    }
                    self.step = Step::Wait { due };
                    return None;
                }
            }
        }
    }

    /// Feeds the answer to the request that is out.
    pub(crate) fn handle_response(&mut self, response: Response, now: i64) {
        let pending = match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Awaiting(p) => p,
            other => {
                self.step = other;
                return;
            }
        };
        if let Err(e) = self.on_response(pending, response, now) {
            self.handle_error(e, now);
        }
    }

    fn on_response(&mut self, pending: Pending, response: Response, now: i64) -> Result<(), MemberError> {
        match (pending, response) {
            (Pending::Coordinator, Response::CoordinatorFound) => {
                self.coordinator_known = true;
                self.step = Step::Connected;
            }
            (Pending::Join { metadata }, Response::MemberIdRequired { member_id }) => {
                self.member_id = member_id;
                self.step = Step::Join { metadata };
            }
            (Pending::Join { .. }, Response::Joined { member_id, generation_id, leader_id, protocol_name, skip_assignment, members }) => {
                if let Some(name) = protocol_name.filter(|n| n != self.hook.name()) {
                    return Err(MemberError::Protocol { expected: self.hook.name().into(), got: name });
                }
                self.member_id = member_id;
                self.generation_id = generation_id;
                self.events.push_back(MemberEvent::Joined {
                    generation_id,
                    member_id: self.member_id.clone(),
                    leader_id: leader_id.clone(),
                    members: members.len(),
                });
                if leader_id == self.member_id && !skip_assignment {
                    self.step = Step::Lead { members, leader_id };
                } else {
                    self.assigned_counts = None;
                    self.step = Step::Sync { assignments: BTreeMap::new(), is_leader: false, leader_id, probing_at: None };
                }
            }
            (Pending::Lead { leader_id }, Response::Led { assignments, record }) => {
                let probing_at = record.probing_rebalance_at_ms;
                self.events.push_back(MemberEvent::Assigned(record));
                self.step = Step::Sync { assignments, is_leader: true, leader_id, probing_at };
            }
            (Pending::Sync { is_leader, leader_id, probing_at }, Response::Synced { assignment }) => {
                self.synced(&assignment, is_leader, leader_id, probing_at, now)?;
            }
            (Pending::Heartbeat, Response::HeartbeatOk) => self.backoff = self.config.retry_backoff_ms,
            (Pending::Metadata { due }, Response::Metadata { counts }) => {
                match self.assigned_counts.as_ref().filter(|assigned| **assigned != counts) {
                    Some(assigned) => {
                        let reason = format!("source topic partitions changed from {assigned:?} to {counts:?}");
                        self.backoff = self.config.retry_backoff_ms;
                        self.request_rejoin(reason);
                    }
                    None => self.step = Step::Wait { due },
                }
            }
            (Pending::Leave, Response::Left { outcome, sent }) => {
                self.events.push_back(MemberEvent::Left(match outcome {
                    Ok(()) => format!("{} left", self.member_id),
                    Err(e) => format!("{} leaving: {e}", self.member_id),
                }));
                if sent {
                    self.member_id.clear();
                    self.generation_id = -1;
                }
                self.step = Step::Done;
            }
            (pending, response) => {
                // Only this crate's driver feeds the machine, and it answers what was asked: a
                // bug. A test build stops here; a release build goes on waiting for the answer.
                debug_assert!(false, "{response:?} does not answer {pending:?}");
                self.step = Step::Awaiting(pending);
            }
        }
        Ok(())
    }

    fn synced(
        &mut self,
        bytes: &[u8],
        is_leader: bool,
        leader_id: String,
        probing_at: Option<i64>,
        now: i64,
    ) -> Result<(), MemberError> {
        let envelope = AssignmentEnvelope::decode(bytes).map_err(MemberError::AssignmentDecode)?;
        let received = self.hook.on_assignment(&envelope)?;
        self.owned = envelope.partitions();
        let mut rejoin_at = match received.followup {
            Followup::At(next) => next.deadline(),
            Followup::Upgrade { .. } | Followup::Downgrade { .. } | Followup::EndpointMissing => Some(now),
            _ => None,
        };
        if let Some(t) = probing_at {
            rejoin_at = Some(rejoin_at.map_or(t, |r| r.min(t)));
        }
        self.rejoin_at = rejoin_at;
        self.rejoin_reason = match received.followup {
            Followup::Upgrade { to } => format!("version upgrade to {to}"),
            Followup::Downgrade { to } => format!("version downgrade to {to}"),
            Followup::EndpointMissing => "endpoint missing from the host maps".into(),
            _ => "probing rebalance".into(),
        };
        let given: Vec<TaskId> = received.active_tasks.keys().chain(received.standby_tasks.keys()).cloned().collect();
        let tasks = MemberTasks {
            active: received.active_tasks.keys().cloned().collect(),
            standby: received.standby_tasks.keys().cloned().collect(),
            warmup: BTreeSet::new(),
        };
        self.tell_assigned(tasks);
        self.events.push_back(MemberEvent::Received { generation_id: self.generation_id, assignment: Box::new(received), rejoin_at });
        if self.config.leader_only && !is_leader && !given.is_empty() {
            // Another member leads and gave this member tasks it will never run: leave, so
            // that the leader's next assignment gives them to members that do.
            return Err(MemberError::NotLeading { leader_id, tasks: given });
        }
        self.phase = Phase::Stable;
        self.backoff = self.config.retry_backoff_ms;
        Ok(())
    }

    /// Feeds the error of the request that is out (or of the driver's work for it).
    pub(crate) fn handle_error(&mut self, e: MemberError, now: i64) {
        if matches!(self.step, Step::Awaiting(Pending::Leave)) {
            // A leave that fails ends the member all the same (drivers report it as
            // Response::Left, with its outcome).
            self.step = Step::Done;
            return;
        }
        match recovery(&e) {
            Recovery::Fatal => {
                self.tell_lost();
                self.outcome = Some(Err(e));
                self.step = Step::Leave;
                return;
            }
            Recovery::Rejoin { forget_member_id, forget_generation } => {
                if forget_member_id {
                    self.member_id.clear();
                }
                if forget_generation {
                    self.generation_id = -1;
                    self.owned.clear();
                    self.tell_lost();
                }
                self.request_rejoin(e.to_string());
                return;
            }
            Recovery::Refind => self.coordinator_known = false,
            Recovery::Retry => {}
        }
        self.events.push_back(MemberEvent::Retrying { error: e.to_string(), backoff_ms: self.backoff });
        self.step = Step::Backoff { until: now.saturating_add(i64::try_from(self.backoff).unwrap_or(i64::MAX)) };
        self.backoff = (self.backoff * 2).min(self.config.retry_backoff_max_ms.max(self.config.retry_backoff_ms));
    }

    fn request_rejoin(&mut self, reason: String) {
        self.events.push_back(MemberEvent::Rejoining(reason.clone()));
        self.rejoin_reason = reason;
        self.phase = Phase::Join;
        self.rejoin_at = None;
        self.step = Step::Idle;
    }

    /// The subscription's bytes: the source topics, the hook's user data (rebuilt for every
    /// join), the partitions owned and their generation.
    fn subscription(&mut self) -> Result<Vec<u8>, MemberError> {
        let user_data = self.hook.subscription_user_data()?;
        let mut envelope = SubscriptionEnvelope::new(self.subscribed_topics(), Some(user_data)).with_owned_partitions(&self.owned);
        if !self.owned.is_empty() {
            envelope = envelope.with_generation_id(self.generation_id);
        }
        Ok(envelope.encode()?)
    }

    /// The topics the member subscribes to: every source topic of the topology, sorted.
    fn subscribed_topics(&self) -> Vec<String> {
        let topics: BTreeSet<String> =
            self.topology.subtopologies.iter().flat_map(|s| s.source_topics.iter()).map(|t| self.topology.topic_name(t)).collect();
        topics.into_iter().collect()
    }

    /// Source topics that are not repartition topics.
    pub(crate) fn external_source_topics(&self) -> BTreeSet<String> {
        self.topology
            .subtopologies
            .iter()
            .flat_map(|s| s.source_topics.iter())
            .filter(|t| !self.topology.is_repartition_topic(t))
            .cloned()
            .collect()
    }
}
