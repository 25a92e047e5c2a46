//! The streams-protocol member as a state machine without I/O: it is fed the coordinator's
//! answers (or the errors of the calls) and the time, and says which request to send next and
//! until when nothing is due. [`StreamsGroupMember`](super::StreamsGroupMember) drives it over
//! TCP. Its states and transitions are drawn in `docs/streams-member.md`.
//!
//! The rules, as Kafka 4.4's Java member (`StreamsMembershipManager`,
//! `StreamsGroupHeartbeatRequestManager`) keeps them:
//! - it joins at epoch 0 with its topology, process id, endpoint, rack and client tags, and
//!   empty task lists; later heartbeats carry only what changed (null: unchanged);
//! - a new target assignment is reconciled at once: active tasks it loses are revoked (the
//!   callback runs) before the next heartbeat acknowledges the new set, so no task is held
//!   past its revocation; a task it gains comes only when the coordinator gives it, which it
//!   does once the previous owner acknowledged giving it up;
//! - fenced (`FENCED_MEMBER_EPOCH`, `UNKNOWN_MEMBER_ID`): all tasks are lost, and it joins
//!   again at epoch 0 with the same member id;
//! - the coordinator moved or is loading: it finds it again or retries, with exponential
//!   backoff; any other error is fatal, in words;
//! - on close it revokes its active tasks and leaves with epoch -1, or -2 as a static member
//!   (`group.instance.id`) that will come back.
//!
//! One rule is stricter than Java's: a member that has not heard from the coordinator for
//! `session.timeout.ms` knows the coordinator has removed it, so it drops its tasks then (all
//! lost) rather than when it hears back. A coordinator that restarted meanwhile may still hold
//! a static member it reloaded, and refuse its join (`UNRELEASED_INSTANCE_ID`) until that
//! membership expires: the member then joins again with backoff, for up to twice
//! `session.timeout.ms`, instead of stopping.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::client::connection::ErrorCode;
use crate::client::streams::{
    Endpoint, HeartbeatTopology, KeyValue, Status, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
    TaskOffset,
};
use crate::client::streams::heartbeat_request::{JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
use crate::member::config::MemberConfig;
use crate::member::streams::events::{MemberState, StreamsEvent, StreamsMemberError};
use crate::member::tasks::{MemberTasks, TaskCallbacks, TaskOffsetSums};
use crate::wire::{ProcessId, TaskId};

/// What the machine wants the driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// Find the coordinator (on the bootstrap brokers in turn) and connect to it.
    FindCoordinator,
    /// Send this heartbeat to the coordinator.
    Heartbeat(Box<StreamsGroupHeartbeatRequest>),
}

/// A successful answer to a [`Request`].
#[derive(Debug, Clone)]
pub(crate) enum Response {
    /// Connected to the coordinator, `host:port`.
    CoordinatorFound(String),
    /// The coordinator answered the heartbeat (its error code may be set).
    Heartbeat(Box<StreamsGroupHeartbeatResponse>),
}

/// What the member declares when it joins.
#[derive(Debug, Clone)]
pub(crate) struct Declaration {
    pub(crate) topology: HeartbeatTopology,
    pub(crate) process_id: ProcessId,
    pub(crate) endpoint: Option<Endpoint>,
}

/// What the last heartbeat carried, so the next one carries only what changed (Java's
/// `LastSentFields`); cleared after an error, so that the next heartbeat carries everything.
#[derive(Debug, Default)]
struct LastSent {
    tasks: Option<MemberTasks>,
    offsets: Option<BTreeMap<TaskId, i64>>,
    end_offsets: Option<BTreeMap<TaskId, i64>>,
    client_tags: Option<BTreeMap<String, String>>,
}

/// The streams-protocol member without I/O.
pub(crate) struct StreamsMachine {
    config: MemberConfig,
    declaration: Declaration,
    callbacks: Box<dyn TaskCallbacks + Send>,
    member_id: String,
    epoch: i32,
    state: MemberState,
    coordinator_known: bool,
    in_flight: bool,
    /// The tasks held (reconciled) and the coordinator's target.
    owned: MemberTasks,
    target: MemberTasks,
    group_ready: bool,
    statuses: Vec<Status>,
    last_sent: LastSent,
    offsets_sent_at: i64,
    heartbeat_interval_ms: i64,
    task_offset_interval_ms: i64,
    acceptable_recovery_lag: Option<i64>,
    endpoint_information_epoch: i32,
    next_heartbeat_at: i64,
    /// When the coordinator last answered (or the member joined), for the session guard.
    last_heard: Option<i64>,
    /// Whether the member dropped its tasks itself (the session guard) and has not been heard
    /// since: the coordinator may still hold its membership.
    self_fenced: bool,
    /// When the coordinator first refused such a member's join for a `group.instance.id` it
    /// still holds.
    unreleased_since: Option<i64>,
    backoff_ms: u64,
    retry_at: i64,
    events: VecDeque<StreamsEvent>,
    outcome: Option<Result<(), StreamsMemberError>>,
}

impl std::fmt::Debug for StreamsMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsMachine")
            .field("member_id", &self.member_id)
            .field("epoch", &self.epoch)
            .field("state", &self.state)
            .field("owned", &self.owned)
            .finish_non_exhaustive()
    }
}

/// Tasks by subtopology as the heartbeat lists them.
fn task_ids(tasks: &BTreeSet<TaskId>) -> Vec<TaskIds> {
    let mut by: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for t in tasks {
        by.entry(t.subtopology).or_default().push(t.partition);
    }
    by.into_iter().map(|(s, partitions)| TaskIds { subtopology_id: s.to_string(), partitions }).collect()
}

fn task_offsets(sums: &BTreeMap<TaskId, i64>) -> Vec<TaskOffset> {
    sums.iter().map(|(t, &offset)| TaskOffset { subtopology_id: t.subtopology.to_string(), partition: t.partition, offset }).collect()
}

impl StreamsMachine {
    /// A member of `config.group_id` with this declaration and these callbacks.
    pub(crate) fn new(config: MemberConfig, declaration: Declaration, callbacks: Box<dyn TaskCallbacks + Send>) -> Self {
        let backoff_ms = config.retry_backoff_ms;
        Self {
            config,
            declaration,
            callbacks,
            member_id: ProcessId::random().to_string(),
            epoch: JOIN_EPOCH,
            state: MemberState::Joining,
            coordinator_known: false,
            in_flight: false,
            owned: MemberTasks::default(),
            target: MemberTasks::default(),
            group_ready: true,
            statuses: Vec::new(),
            last_sent: LastSent::default(),
            offsets_sent_at: i64::MIN,
            heartbeat_interval_ms: 0,
            task_offset_interval_ms: 60_000,
            acceptable_recovery_lag: None,
            endpoint_information_epoch: -1,
            next_heartbeat_at: 0,
            last_heard: None,
            self_fenced: false,
            unreleased_since: None,
            backoff_ms,
            retry_at: 0,
            events: VecDeque::new(),
            outcome: None,
        }
    }

    pub(crate) fn member_id(&self) -> &str {
        &self.member_id
    }

    pub(crate) fn epoch(&self) -> i32 {
        self.epoch
    }

    pub(crate) fn state(&self) -> MemberState {
        self.state
    }

    /// Whether the member knows its coordinator (false after it moved or went away).
    pub(crate) fn coordinator_known(&self) -> bool {
        self.coordinator_known
    }

    pub(crate) fn owned(&self) -> &MemberTasks {
        &self.owned
    }

    /// The next event, if any.
    pub(crate) fn poll_event(&mut self) -> Option<StreamsEvent> {
        self.events.pop_front()
    }

    /// The outcome, once the member is done (left, or stopped on an error).
    pub(crate) fn take_outcome(&mut self) -> Option<Result<(), StreamsMemberError>> {
        self.outcome.take()
    }

    /// Whether the member is done.
    pub(crate) fn done(&self) -> bool {
        matches!(self.state, MemberState::Unsubscribed | MemberState::Fatal)
    }

    /// Leaves the group: the active tasks are revoked (the callback runs), then the leave
    /// heartbeat goes out at the next poll (none when the coordinator is not known, or the
    /// member never joined).
    pub(crate) fn close(&mut self) {
        if self.done() || self.state == MemberState::Leaving {
            return;
        }
        if !self.owned.active.is_empty() && self.epoch > 0 {
            let active = self.owned.active.clone();
            self.callbacks.on_tasks_revoked(&active);
        }
        self.owned = MemberTasks::default();
        self.target = MemberTasks::default();
        if self.epoch <= 0 || !self.coordinator_known {
            self.finish(Ok(()), "never joined or coordinator unknown: nothing to leave".into());
            return;
        }
        self.epoch = if self.config.group_instance_id.is_some() { STATIC_LEAVE_EPOCH } else { LEAVE_EPOCH };
        self.state = MemberState::Leaving;
    }

    fn finish(&mut self, outcome: Result<(), StreamsMemberError>, why: String) {
        self.state = if outcome.is_ok() { MemberState::Unsubscribed } else { MemberState::Fatal };
        if outcome.is_ok() {
            self.events.push_back(StreamsEvent::Left(why));
        }
        self.outcome = Some(outcome);
    }

    /// The time (epoch ms) of the next request, `None` while one is out or when done.
    pub(crate) fn poll_timeout(&self) -> Option<i64> {
        if self.done() || self.in_flight {
            return None;
        }
        if !self.coordinator_known {
            return Some(self.retry_at);
        }
        let guard = self.last_heard.map_or(i64::MAX, |t| t.saturating_add(self.config.session_timeout_ms.into()));
        Some(match self.state {
            MemberState::Joining | MemberState::Acknowledging | MemberState::Leaving => self.retry_at,
            _ => self.next_heartbeat_at.max(self.retry_at).min(guard),
        })
    }

    /// The request due at `now`, if any.
    pub(crate) fn poll_request(&mut self, now: i64) -> Option<Request> {
        if self.done() || self.in_flight {
            return None;
        }
        self.session_guard(now);
        if now < self.retry_at {
            return None;
        }
        if !self.coordinator_known {
            self.in_flight = true;
            return Some(Request::FindCoordinator);
        }
        let urgent = matches!(self.state, MemberState::Joining | MemberState::Acknowledging | MemberState::Leaving);
        if !urgent && now < self.next_heartbeat_at {
            return None;
        }
        let request = self.heartbeat(now);
        if self.state == MemberState::Acknowledging {
            self.state = if self.owned == self.target { MemberState::Stable } else { MemberState::Reconciling };
        }
        self.in_flight = true;
        self.next_heartbeat_at = now.saturating_add(self.heartbeat_interval_ms);
        Some(Request::Heartbeat(Box::new(request)))
    }

    /// Replaces the client tags the member declares (`client.tag.*`). New tags go out with the
    /// next heartbeat, sent at once: the coordinator takes a member's new tags as a change of the
    /// group and computes a new target assignment.
    pub(crate) fn set_client_tags(&mut self, tags: BTreeMap<String, String>) {
        if tags != self.config.client_tags {
            self.config.client_tags = tags;
            self.next_heartbeat_at = 0;
        }
    }

    /// The client tags the member declares.
    pub(crate) fn client_tags(&self) -> &BTreeMap<String, String> {
        &self.config.client_tags
    }

    /// Drops every task once the coordinator cannot have kept the member (no answer for
    /// `session.timeout.ms`), and joins again when it can.
    fn session_guard(&mut self, now: i64) {
        let Some(heard) = self.last_heard else { return };
        if self.epoch > 0 && now.saturating_sub(heard) >= i64::from(self.config.session_timeout_ms) {
            let why = format!(
                "no answer from the group coordinator for {} ms (session.timeout.ms): it has removed this member",
                now - heard
            );
            self.fence(why);
            self.self_fenced = true;
        }
    }

    /// The heartbeat the member sends now (Java's `HeartbeatState.buildRequestData`).
    fn heartbeat(&mut self, now: i64) -> StreamsGroupHeartbeatRequest {
        let c = &self.config;
        let mut r = StreamsGroupHeartbeatRequest::new(c.group_id.clone(), self.member_id.clone(), self.epoch);
        r.endpoint_information_epoch = self.endpoint_information_epoch;
        r.instance_id = c.group_instance_id.clone();
        if self.state == MemberState::Leaving {
            return r;
        }
        let sums = self.callbacks.offset_sums();
        if self.state == MemberState::Joining {
            r.topology = Some(self.declaration.topology.clone());
            r.rebalance_timeout_ms = c.rebalance_timeout_ms;
            r.process_id = Some(self.declaration.process_id.to_string());
            r.user_endpoint = self.declaration.endpoint.clone();
            r.rack_id = c.rack_id.clone();
            r.client_tags = Some(c.client_tags.iter().map(|(k, v)| KeyValue { key: k.clone(), value: v.clone() }).collect());
            r.active_tasks = Some(Vec::new());
            r.standby_tasks = Some(Vec::new());
            r.warmup_tasks = Some(Vec::new());
            r.task_offsets = Some(task_offsets(&sums.offsets));
            r.task_end_offsets = Some(task_offsets(&sums.end_offsets));
            self.last_sent = LastSent {
                tasks: None,
                offsets: Some(sums.offsets),
                end_offsets: Some(sums.end_offsets),
                client_tags: Some(c.client_tags.clone()),
            };
            self.offsets_sent_at = now;
            return r;
        }
        if self.last_sent.client_tags.as_ref() != Some(&c.client_tags) {
            r.client_tags = Some(c.client_tags.iter().map(|(k, v)| KeyValue { key: k.clone(), value: v.clone() }).collect());
            self.last_sent.client_tags = Some(c.client_tags.clone());
        }
        let changed = self.last_sent.tasks.as_ref() != Some(&self.owned);
        if changed {
            r.active_tasks = Some(task_ids(&self.owned.active));
            r.standby_tasks = Some(task_ids(&self.owned.standby));
            r.warmup_tasks = Some(task_ids(&self.owned.warmup));
            self.last_sent.tasks = Some(self.owned.clone());
        }
        let interval = self.offsets_sent_at.saturating_add(self.task_offset_interval_ms) <= now;
        if changed || interval || self.hot_warmup(&sums) {
            if self.last_sent.offsets.as_ref() != Some(&sums.offsets) {
                r.task_offsets = Some(task_offsets(&sums.offsets));
                self.last_sent.offsets = Some(sums.offsets);
                self.offsets_sent_at = now;
            }
            if self.last_sent.end_offsets.as_ref() != Some(&sums.end_offsets) {
                r.task_end_offsets = Some(task_offsets(&sums.end_offsets));
                self.last_sent.end_offsets = Some(sums.end_offsets);
                self.offsets_sent_at = now;
            }
        }
        r
    }

    /// A warm-up within the acceptable recovery lag: its offsets go out at once, so that the
    /// assignor can move the active task (Java's `hasAtLeastOneHotWarmupTask`).
    fn hot_warmup(&self, sums: &TaskOffsetSums) -> bool {
        let Some(lag) = self.acceptable_recovery_lag else { return false };
        self.owned.warmup.iter().any(|t| match (sums.offsets.get(t), sums.end_offsets.get(t)) {
            (Some(&o), Some(&e)) if o != i64::MAX && e != i64::MAX => e.saturating_sub(o) <= lag,
            _ => false,
        })
    }

    /// The answer to the request that was out.
    pub(crate) fn handle_response(&mut self, response: Response, now: i64) {
        self.in_flight = false;
        match response {
            Response::CoordinatorFound(broker) => {
                self.coordinator_known = true;
                self.events.push_back(StreamsEvent::CoordinatorFound { broker });
            }
            Response::Heartbeat(r) if r.error_code == 0 => {
                self.backoff_ms = self.config.retry_backoff_ms;
                self.retry_at = 0;
                self.last_heard = Some(now);
                self.self_fenced = false;
                self.unreleased_since = None;
                self.heard(&r, now);
            }
            Response::Heartbeat(r) => self.heartbeat_error(&r, now),
        }
    }

    /// A heartbeat without error (Java's `onHeartbeatSuccess`).
    fn heard(&mut self, r: &StreamsGroupHeartbeatResponse, now: i64) {
        if self.state == MemberState::Leaving {
            self.finish(Ok(()), format!("left the group (epoch {})", r.member_epoch));
            return;
        }
        self.endpoint_information_epoch = r.endpoint_information_epoch;
        if r.member_epoch < 0 {
            return;
        }
        if r.heartbeat_interval_ms > 0 {
            self.heartbeat_interval_ms = r.heartbeat_interval_ms.into();
            self.next_heartbeat_at = now.saturating_add(self.heartbeat_interval_ms);
        }
        if r.task_offset_interval_ms > 0 {
            self.task_offset_interval_ms = r.task_offset_interval_ms.into();
        }
        self.acceptable_recovery_lag = r.recovery_lag();
        let joined = self.state == MemberState::Joining;
        let epoch_changed = r.member_epoch != self.epoch;
        self.epoch = r.member_epoch;
        if joined {
            self.events.push_back(StreamsEvent::Joined { member_id: self.member_id.clone(), epoch: self.epoch });
        }
        let statuses = r.status.clone().unwrap_or_default();
        if r.status.is_some() && statuses != self.statuses {
            self.events.push_back(StreamsEvent::Status(statuses.clone()));
            self.statuses = statuses;
        }
        let ready = r.group_ready();
        let target = match (&r.active_tasks, &r.standby_tasks, &r.warmup_tasks) {
            (Some(a), Some(s), Some(w)) => match self.tasks_of(a, s, w) {
                Ok(t) => Some(t),
                Err(e) => return self.fatal(e),
            },
            (None, None, None) => None,
            _ => {
                let why = "the coordinator sent some task lists and not others (all three or none)".to_owned();
                return self.fatal(StreamsMemberError::Protocol(why));
            }
        };
        if let Some(target) = target {
            self.target = target;
        }
        let ready_changed = ready != self.group_ready;
        self.group_ready = ready;
        let reconciled = self.target != self.owned;
        if reconciled {
            self.state = MemberState::Reconciling;
            self.reconcile();
        } else if joined || matches!(self.state, MemberState::Reconciling) {
            self.state = MemberState::Stable;
        }
        // The coordinator may raise the epoch first and give the tasks later (once their owners
        // let go), at the same epoch: each change of what the member holds is reported.
        if joined || epoch_changed || ready_changed || reconciled {
            self.events.push_back(StreamsEvent::Epoch {
                epoch: self.epoch,
                tasks: self.owned.clone(),
                group_ready: self.group_ready,
                statuses: self.statuses.clone(),
            });
        }
    }

    /// Takes on the target (Java's `maybeReconcile`): revoke first, then assign, then
    /// acknowledge with the next heartbeat, sent at once.
    fn reconcile(&mut self) {
        let revoked = self.owned.revoked_by(&self.target);
        if !revoked.is_empty() {
            self.callbacks.on_tasks_revoked(&revoked);
        }
        self.owned = self.target.clone();
        self.callbacks.on_tasks_assigned(&self.owned);
        self.events.push_back(StreamsEvent::Reconciled { epoch: self.epoch, revoked, tasks: self.owned.clone() });
        self.state = MemberState::Acknowledging;
    }

    /// The coordinator's task lists as task ids; a subtopology this member's topology does not
    /// have is fatal, as for Java's member.
    fn tasks_of(&self, active: &[TaskIds], standby: &[TaskIds], warmup: &[TaskIds]) -> Result<MemberTasks, StreamsMemberError> {
        let known: BTreeSet<&str> = self.declaration.topology.subtopologies.iter().map(|s| s.subtopology_id.as_str()).collect();
        let set = |lists: &[TaskIds]| -> Result<BTreeSet<TaskId>, StreamsMemberError> {
            let mut out = BTreeSet::new();
            for l in lists {
                let subtopology = l
                    .subtopology_id
                    .parse::<i32>()
                    .ok()
                    .filter(|_| known.contains(l.subtopology_id.as_str()))
                    .ok_or_else(|| StreamsMemberError::UnknownSubtopology { subtopology: l.subtopology_id.clone(), known: known.iter().map(|s| s.to_string()).collect() })?;
                out.extend(l.partitions.iter().map(|&p| TaskId::new(subtopology, p)));
            }
            Ok(out)
        };
        Ok(MemberTasks { active: set(active)?, standby: set(standby)?, warmup: set(warmup)? })
    }

    /// An error code in a heartbeat answer (Java's `onErrorResponse`).
    fn heartbeat_error(&mut self, r: &StreamsGroupHeartbeatResponse, now: i64) {
        let code = ErrorCode(r.error_code);
        let message = r.error_message.clone().unwrap_or_default();
        self.last_sent = LastSent::default();
        match code.0 {
            14 => self.retry(now, format!("the group coordinator is loading ({code}) {message}")),
            15 | 16 => {
                self.coordinator_known = false;
                self.retry(now, format!("the group coordinator moved or is not available ({code}) {message}"));
            }
            25 | 110 if self.state == MemberState::Leaving => self.finish(Ok(()), format!("already out of the group ({code})")),
            25 | 110 => {
                self.last_heard = Some(now);
                self.fence(format!("fenced by the group coordinator: {code} {message}"));
            }
            29 => {
                let why = format!("not authorized to a topic of the topology ({code}) {message}");
                self.retry(now, why);
            }
            111 if self.may_wait_for_release(now) => {
                let why = format!(
                    "the group coordinator still holds this member's group.instance.id from before it dropped its tasks ({code}); \
                     it releases it when that membership's session expires"
                );
                self.retry(now, why);
            }
            42 if message.contains("Topology updates") => {
                let message = format!(
                    "{message} (the topology this member declared differs from the group's in a field the coordinator does not \
                     describe: a co-partition group, say of a join renamed with Named.as, or a repartition topic's fixed partition \
                     count; set it in the topology JSON given with --topology)"
                );
                self.fatal(StreamsMemberError::Broker { code, message: Some(message), state: self.state });
            }
            _ => self.fatal(StreamsMemberError::Broker { code, message: r.error_message.clone(), state: self.state }),
        }
    }

    /// Whether a refused join of a static member is to be tried again: it dropped its tasks
    /// after no answer for `session.timeout.ms`, so the coordinator (restarted since, or it
    /// would have removed the member) may still hold its membership until that session expires.
    fn may_wait_for_release(&mut self, now: i64) -> bool {
        if !self.self_fenced || self.state != MemberState::Joining || self.config.group_instance_id.is_none() {
            return false;
        }
        let since = *self.unreleased_since.get_or_insert(now);
        now.saturating_sub(since) < 2 * i64::from(self.config.session_timeout_ms)
    }

    /// Loses every task and joins again at epoch 0, with the same member id (Java's `onFenced`).
    fn fence(&mut self, why: String) {
        if !self.owned.is_empty() || self.epoch > 0 {
            self.callbacks.on_all_tasks_lost();
        }
        self.events.push_back(StreamsEvent::Fenced { epoch: self.epoch, lost: self.owned.clone(), why });
        self.owned = MemberTasks::default();
        self.target = MemberTasks::default();
        self.last_sent = LastSent::default();
        self.epoch = JOIN_EPOCH;
        self.state = MemberState::Joining;
        self.last_heard = None;
    }

    fn fatal(&mut self, e: StreamsMemberError) {
        if !self.owned.is_empty() {
            self.callbacks.on_all_tasks_lost();
            self.owned = MemberTasks::default();
        }
        self.finish(Err(e), String::new());
    }

    /// Waits `retry.backoff.ms`, doubled after each failure up to `retry.backoff.max.ms`.
    fn retry(&mut self, now: i64, error: String) {
        let wait = self.backoff_ms;
        self.retry_at = now.saturating_add(i64::try_from(wait).unwrap_or(i64::MAX));
        self.next_heartbeat_at = self.retry_at;
        self.backoff_ms = (self.backoff_ms.saturating_mul(2)).min(self.config.retry_backoff_max_ms.max(self.config.retry_backoff_ms));
        self.events.push_back(StreamsEvent::Retrying { error, backoff_ms: wait });
    }

    /// A request that failed without an answer: the network, a timeout, a coordinator that
    /// cannot be found. The member finds the coordinator again after a backoff; a leave that
    /// cannot be sent ends the member (the session timeout removes it).
    pub(crate) fn handle_error(&mut self, error: String, retriable: bool, now: i64) {
        self.in_flight = false;
        self.last_sent = LastSent::default();
        if self.state == MemberState::Leaving {
            return self.finish(Ok(()), format!("the leave heartbeat could not be sent ({error}); the session timeout removes the member"));
        }
        if !retriable {
            return self.fatal(StreamsMemberError::Connection(error));
        }
        self.coordinator_known = false;
        self.retry(now, error);
    }
}
