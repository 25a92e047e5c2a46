//! A blocking consumer-group member over TCP that takes part in a Kafka Streams group through a
//! [`PartitionAssignorHook`], and leads it when the coordinator makes it the leader.
//!
//! # The member's loop
//!
//! 1. **Coordinator.** `FindCoordinator` (key type group) on the bootstrap brokers in turn, then
//!    a connection to the coordinator.
//! 2. **JoinGroup** with protocol type `consumer` and one protocol, the hook's
//!    [`name`](PartitionAssignorHook::name) (`stream`), whose metadata is a
//!    `ConsumerProtocolSubscription` around the hook's user data: the topology's source topics,
//!    the partitions this member owns and its generation. The user data is rebuilt for every
//!    join from the same hook, so the process id stays. `MEMBER_ID_REQUIRED` is answered by
//!    joining again with the id the coordinator gave.
//! 3. **Leading.** The member the coordinator names leader runs [`lead`](GroupMember::lead):
//!    `Metadata` for the topology's topics (partition counts, and replica racks from the
//!    brokers' racks), creation of missing internal topics as Kafka Streams'
//!    `InternalTopicManager` creates them (see [`internal_topic_configs`]), `ListOffsets`
//!    (latest) for the changelog partitions and `OffsetFetch` for source topics used as
//!    changelogs, then the hook's [`assign`](PartitionAssignorHook::assign). A member in
//!    leader-only mode ([`MemberConfig::leader_only`]) lists itself in
//!    [`LeaderInput::excluded_members`]: it gets no tasks.
//! 4. **SyncGroup** (the leader sends every member's bytes), then the hook's
//!    [`on_assignment`](PartitionAssignorHook::on_assignment).
//! 5. **Heartbeats** every `heartbeat.interval.ms`, until the coordinator asks for a rejoin, the
//!    assignment's follow-up time comes (`nextRebalanceMs`, a version upgrade or downgrade, a
//!    missing endpoint), the leader sees the partition counts of the source topics change
//!    (checked every `metadata.max.age.ms`), or the caller stops the member; then
//!    `LeaveGroup` (dynamic members only, as Java's consumer).
//!
//! # Errors during rebalances
//!
//! | error | what the member does |
//! |---|---|
//! | `REBALANCE_IN_PROGRESS` | joins again |
//! | `UNKNOWN_MEMBER_ID` | forgets its member id and generation (and owned partitions), joins again |
//! | `ILLEGAL_GENERATION` | forgets its generation (and owned partitions), keeps its member id, joins again |
//! | `NOT_COORDINATOR`, `COORDINATOR_NOT_AVAILABLE`, a broken connection | finds the coordinator again, then carries on where it was |
//! | `COORDINATOR_LOAD_IN_PROGRESS` | retries |
//! | anything else | stops with the error (after leaving the group) |
//!
//! Retries wait `retry.backoff.ms`, doubling up to `retry.backoff.max.ms`.
//!
//! # Probing rebalances
//!
//! Java members rejoin when the `nextRebalanceMs` of their own assignment comes; Kafka's leader
//! puts it on a member of the leader's own client. A leader-only member has no client in the
//! assignment, so [`leader::assign`](crate::leader::assign()) puts the deadline on its own
//! assignment; the leader also takes it from its assignment report, so that it rejoins at the
//! deadline even at versions below 7, which cannot carry it.
//!
//! Leader-only holds while this member leads: the coordinator makes the first member to join
//! the leader. If a Java member leads instead, this member is an ordinary client of its
//! assignment (with one thread's capacity) and may be given tasks.
//!
//! The loop is blocking: `stop` is polled between requests and while waiting, not during a
//! JoinGroup or SyncGroup the coordinator holds (up to the rebalance timeout).
//!
//! ```no_run
//! use kstreams_assignor::group::{GroupMember, MemberConfig, MemberEvent, StreamsMember};
//! use kstreams_assignor::leader::Topology;
//! use kstreams_assignor::wire::ProcessId;
//!
//! let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
//! let topology = Topology::from_describe(&text, "wc").unwrap();
//! let config = MemberConfig::new("127.0.0.1:19092", "wc").with_leader_only(true);
//! let mut member = GroupMember::new(config, topology, StreamsMember::new(ProcessId::random()));
//! let started = std::time::Instant::now();
//! let mut stop = || started.elapsed().as_secs() > 60;
//! member
//!     .run(&mut stop, &mut |event| {
//!         if let MemberEvent::Assigned(record) = event {
//!             println!("{}", serde_json::to_string(&record).unwrap());
//!         }
//!     })
//!     .unwrap();
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
    join_group_request::JoinGroupRequestProtocol, leave_group_request::MemberIdentity,
    sync_group_request::SyncGroupRequestAssignment,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::{cluster_metadata, create_topics, fetch_end_offsets, fetch_metadata, partition_counts};
use super::connection::{Connection, ConnectionError, ErrorCode, check, find_coordinator};
use super::hook::{Followup, PartitionAssignorHook};
use super::member_config::{MemberConfig, internal_topic_configs};
use super::member_events::{GenerationRecord, MemberError, MemberEvent, MemberRecord};
use crate::leader::{ChangelogEndOffsets, JoinMember, LeaderInput, Tasks, Topology};
use crate::wire::{AssignmentEnvelope, PROTOCOL_TYPE, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TaskId, TopicPartition};

/// What the loop does after an error.
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
            None => match c {
                ConnectionError::Connect { .. } | ConnectionError::Io { .. } => Recovery::Refind,
                _ => Recovery::Fatal,
            },
        },
        MemberError::NoCoordinator { .. } => Recovery::Retry,
        _ => Recovery::Fatal,
    }
}

/// Where the member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// It must (re)join.
    Join,
    /// It has an assignment and heartbeats.
    Stable,
}

/// The current epoch time in ms.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A consumer-group member over TCP driven by a [`PartitionAssignorHook`] (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct GroupMember<H> {
    config: MemberConfig,
    topology: Topology,
    hook: H,
    process_id: ProcessId,
    coordinator: Option<Connection>,
    member_id: String,
    generation_id: i32,
    owned: Vec<TopicPartition>,
    phase: Phase,
    rejoin_reason: String,
    rejoin_at: Option<i64>,
    /// As leader: the source topics' partition counts the last assignment used.
    assigned_counts: Option<BTreeMap<String, i32>>,
    next_metadata_check: i64,
}

impl<H: PartitionAssignorHook> GroupMember<H> {
    /// A member of `config.group_id` with the hook `hook` (whose process id it keeps) for the
    /// application `topology`.
    pub fn new(config: MemberConfig, topology: Topology, hook: H) -> Self {
        let process_id = hook.process_id();
        Self {
            config,
            topology,
            hook,
            process_id,
            coordinator: None,
            member_id: String::new(),
            generation_id: -1,
            owned: Vec::new(),
            phase: Phase::Join,
            rejoin_reason: "initial join".into(),
            rejoin_at: None,
            assigned_counts: None,
            next_metadata_check: i64::MAX,
        }
    }

    /// The member id (empty before the first join).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The process id the member subscribes with.
    pub fn process_id(&self) -> ProcessId {
        self.process_id
    }

    /// The current generation (-1: none).
    pub fn generation_id(&self) -> i32 {
        self.generation_id
    }

    /// The hook.
    pub fn hook(&self) -> &H {
        &self.hook
    }

    /// Runs until `stop` returns true (polled at least every 100 ms) or a fatal error; leaves the
    /// group on the way out. Every step is reported to `on_event`.
    pub fn run(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(MemberEvent)) -> Result<(), MemberError> {
        let mut backoff = self.config.retry_backoff_ms;
        loop {
            if stop() {
                self.leave(on_event);
                return Ok(());
            }
            match self.step(stop, on_event) {
                Ok(()) => backoff = self.config.retry_backoff_ms,
                Err(e) => {
                    match recovery(&e) {
                        Recovery::Fatal => {
                            self.leave(on_event);
                            return Err(e);
                        }
                        Recovery::Rejoin { forget_member_id, forget_generation } => {
                            if forget_member_id {
                                self.member_id.clear();
                            }
                            if forget_generation {
                                self.generation_id = -1;
                                self.owned.clear();
                            }
                            self.request_rejoin(e.to_string(), on_event);
                            continue;
                        }
                        Recovery::Refind => self.coordinator = None,
                        Recovery::Retry => {}
                    }
                    on_event(MemberEvent::Retrying { error: e.to_string(), backoff_ms: backoff });
                    sleep_polling(Duration::from_millis(backoff), stop);
                    backoff = (backoff * 2).min(self.config.retry_backoff_max_ms.max(self.config.retry_backoff_ms));
                }
            }
        }
    }

    fn request_rejoin(&mut self, reason: String, on_event: &mut dyn FnMut(MemberEvent)) {
        on_event(MemberEvent::Rejoining(reason.clone()));
        self.rejoin_reason = reason;
        self.phase = Phase::Join;
        self.rejoin_at = None;
    }

    /// One step: make sure of the coordinator, then join and sync, or heartbeat once.
    fn step(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(MemberEvent)) -> Result<(), MemberError> {
        if self.coordinator.is_none() {
            self.coordinator = Some(self.find_coordinator()?);
        }
        match self.phase {
            Phase::Join => self.join_and_sync(on_event),
            Phase::Stable => self.heartbeat_once(stop, on_event),
        }
    }

    fn coordinator(&mut self) -> &mut Connection {
        self.coordinator.as_mut().expect("step() connects first")
    }

    fn find_coordinator(&self) -> Result<Connection, MemberError> {
        let mut last = String::from("no bootstrap broker");
        for broker in &self.config.bootstrap {
            match self.find_coordinator_via(broker) {
                Ok(c) => return Ok(c),
                Err(e) => last = e.to_string(),
            }
        }
        Err(MemberError::NoCoordinator { group: self.config.group_id.clone(), last })
    }

    fn find_coordinator_via(&self, broker: &str) -> Result<Connection, ConnectionError> {
        let mut conn = Connection::connect(broker, &self.config.client_id, self.config.request_timeout())?;
        let address = find_coordinator(&mut conn, &self.config.group_id)?;
        if address == broker {
            return Ok(conn);
        }
        Connection::connect(&address, &self.config.client_id, self.config.request_timeout())
    }

    /// The topics the member subscribes to: every source topic of the topology, sorted.
    fn subscribed_topics(&self) -> Vec<String> {
        let topics: BTreeSet<String> =
            self.topology.subtopologies.iter().flat_map(|s| s.source_topics.iter()).map(|t| self.topology.topic_name(t)).collect();
        topics.into_iter().collect()
    }

    fn join_and_sync(&mut self, on_event: &mut dyn FnMut(MemberEvent)) -> Result<(), MemberError> {
        let user_data = self.hook.subscription_user_data()?;
        let mut envelope = SubscriptionEnvelope::new(self.subscribed_topics(), Some(user_data)).with_owned_partitions(&self.owned);
        if !self.owned.is_empty() {
            envelope = envelope.with_generation_id(self.generation_id);
        }
        let metadata = envelope.encode()?;
        let group = GroupId(StrBytes::from_string(self.config.group_id.clone()));
        let instance = self.config.group_instance_id.clone().map(StrBytes::from_string);
        let timeout = self.config.group_timeout();
        let version = self.coordinator().version::<JoinGroupRequest>()?;
        let response = loop {
            let request = JoinGroupRequest::default()
                .with_group_id(group.clone())
                .with_session_timeout_ms(self.config.session_timeout_ms)
                .with_rebalance_timeout_ms(self.config.rebalance_timeout_ms)
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_group_instance_id(if version >= 5 { instance.clone() } else { None })
                .with_protocol_type(StrBytes::from_static_str(PROTOCOL_TYPE))
                .with_protocols(vec![
                    JoinGroupRequestProtocol::default()
                        .with_name(StrBytes::from_static_str(self.hook.name()))
                        .with_metadata(Bytes::from(metadata.clone())),
                ])
                .with_reason((version >= 8).then(|| StrBytes::from_string(self.rejoin_reason.clone())));
            let conn = self.coordinator();
            let broker = conn.broker().to_owned();
            let response = conn.call_at(&request, version, timeout)?;
            if ErrorCode(response.error_code) == ErrorCode::MEMBER_ID_REQUIRED {
                self.member_id = response.member_id.to_string();
                continue;
            }
            check(&broker, ApiKey::JoinGroup, response.error_code, None)?;
            break response;
        };
        if let Some(name) = response.protocol_name.as_ref().filter(|n| n.as_str() != self.hook.name()) {
            return Err(MemberError::Protocol { expected: self.hook.name().into(), got: name.to_string() });
        }
        self.member_id = response.member_id.to_string();
        self.generation_id = response.generation_id;
        let leader_id = response.leader.to_string();
        on_event(MemberEvent::Joined {
            generation_id: self.generation_id,
            member_id: self.member_id.clone(),
            leader_id: leader_id.clone(),
            members: response.members.len(),
        });

        let is_leader = leader_id == self.member_id && !response.skip_assignment;
        let mut assignments = Vec::new();
        let mut probing_at = None;
        if is_leader {
            let members: Vec<JoinMember> = response
                .members
                .iter()
                .map(|m| JoinMember {
                    member_id: m.member_id.to_string(),
                    group_instance_id: m.group_instance_id.as_ref().map(|s| s.to_string()),
                    subscription: m.metadata.to_vec(),
                })
                .collect();
            let record = self.lead(&members, on_event)?;
            probing_at = record.1.probing_rebalance_at_ms;
            assignments = record
                .0
                .into_iter()
                .map(|(member, bytes)| {
                    SyncGroupRequestAssignment::default()
                        .with_member_id(StrBytes::from_string(member))
                        .with_assignment(Bytes::from(bytes))
                })
                .collect();
            on_event(MemberEvent::Assigned(record.1));
        } else {
            self.assigned_counts = None;
        }

        let version = self.coordinator().version::<SyncGroupRequest>()?;
        let request = SyncGroupRequest::default()
            .with_group_id(group)
            .with_generation_id(self.generation_id)
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_group_instance_id(if version >= 3 { instance } else { None })
            .with_protocol_type((version >= 5).then(|| StrBytes::from_static_str(PROTOCOL_TYPE)))
            .with_protocol_name((version >= 5).then(|| StrBytes::from_static_str(self.hook.name())))
            .with_assignments(assignments);
        let conn = self.coordinator();
        let broker = conn.broker().to_owned();
        let response = conn.call_at(&request, version, timeout)?;
        check(&broker, ApiKey::SyncGroup, response.error_code, None)?;
        let envelope = AssignmentEnvelope::decode(&response.assignment).map_err(MemberError::AssignmentDecode)?;
        let received = self.hook.on_assignment(&envelope)?;
        self.owned = envelope.partitions();
        let now = now_ms();
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
        on_event(MemberEvent::Received { generation_id: self.generation_id, assignment: Box::new(received), rejoin_at });
        if self.config.leader_only && !is_leader && !given.is_empty() {
            // Another member leads and gave this member tasks it will never run: leave, so
            // that the leader's next assignment gives them to members that do.
            return Err(MemberError::NotLeading { leader_id, tasks: given });
        }
        self.phase = Phase::Stable;
        Ok(())
    }

    /// Waits until the next heartbeat is due (or a rejoin or stop is wanted), then heartbeats.
    fn heartbeat_once(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(MemberEvent)) -> Result<(), MemberError> {
        let due = now_ms().saturating_add(self.config.heartbeat_interval_ms);
        loop {
            if stop() {
                return Ok(());
            }
            let now = now_ms();
            if let Some(t) = self.rejoin_at.filter(|&t| t <= now) {
                let reason = format!("{} due at {t}", self.rejoin_reason);
                self.request_rejoin(reason, on_event);
                return Ok(());
            }
            if self.assigned_counts.is_some() && now >= self.next_metadata_check {
                self.next_metadata_check = now.saturating_add(self.config.metadata_max_age_ms);
                if let Some(reason) = self.source_metadata_changed()? {
                    self.request_rejoin(reason, on_event);
                    return Ok(());
                }
            }
            if now >= due {
                break;
            }
            let wait = (due - now).min(100);
            std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0)));
        }
        let instance = self.config.group_instance_id.clone().map(StrBytes::from_string);
        let version = self.coordinator().version::<HeartbeatRequest>()?;
        let request = HeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(self.config.group_id.clone())))
            .with_generation_id(self.generation_id)
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_group_instance_id(if version >= 3 { instance } else { None });
        let conn = self.coordinator();
        let broker = conn.broker().to_owned();
        let response = conn.call(&request)?;
        check(&broker, ApiKey::Heartbeat, response.error_code, None)?;
        Ok(())
    }

    /// As leader: whether the source topics' partition counts differ from those assigned with.
    fn source_metadata_changed(&mut self) -> Result<Option<String>, MemberError> {
        let Some(assigned) = self.assigned_counts.clone() else { return Ok(None) };
        let topics: Vec<String> = self.external_source_topics().into_iter().collect();
        let conn = self.coordinator();
        let metadata = fetch_metadata(conn, &topics)?;
        let now = partition_counts(&metadata, &topics);
        Ok((now != assigned).then(|| format!("source topic partitions changed from {assigned:?} to {now:?}")))
    }

    fn leave(&mut self, on_event: &mut dyn FnMut(MemberEvent)) {
        if self.member_id.is_empty() || self.config.group_instance_id.is_some() {
            return;
        }
        let Some(conn) = self.coordinator.as_mut() else { return };
        let member_id = StrBytes::from_string(self.member_id.clone());
        let version = match conn.version::<LeaveGroupRequest>() {
            Ok(v) => v,
            Err(e) => return on_event(MemberEvent::Left(format!("{} leaving: {e}", self.member_id))),
        };
        let request = LeaveGroupRequest::default().with_group_id(GroupId(StrBytes::from_string(self.config.group_id.clone())));
        let request = if version >= 3 {
            request.with_members(vec![
                MemberIdentity::default()
                    .with_member_id(member_id)
                    .with_reason((version >= 5).then(|| StrBytes::from_static_str("the member is closing"))),
            ])
        } else {
            request.with_member_id(member_id)
        };
        let outcome = match conn.call(&request) {
            Ok(r) => check(conn.broker(), ApiKey::LeaveGroup, r.error_code, None).map(|()| "left".to_owned()),
            Err(e) => Err(e),
        };
        on_event(MemberEvent::Left(match outcome {
            Ok(s) => format!("{} {s}", self.member_id),
            Err(e) => format!("{} leaving: {e}", self.member_id),
        }));
        self.member_id.clear();
        self.generation_id = -1;
    }

    /// Source topics that are not repartition topics.
    fn external_source_topics(&self) -> BTreeSet<String> {
        self.topology
            .subtopologies
            .iter()
            .flat_map(|s| s.source_topics.iter())
            .filter(|t| !self.topology.is_repartition_topic(t))
            .cloned()
            .collect()
    }

    /// The leader's work for one generation: metadata, internal topics, end offsets, then the
    /// hook's assignment. Returns each member's bytes and the record of the generation.
    pub fn lead(
        &mut self,
        members: &[JoinMember],
        on_event: &mut dyn FnMut(MemberEvent),
    ) -> Result<(BTreeMap<String, Vec<u8>>, GenerationRecord), MemberError> {
        let external: Vec<String> = self.external_source_topics().into_iter().collect();
        let mut wanted: BTreeSet<String> = external.iter().cloned().collect();
        for s in &self.topology.subtopologies {
            wanted.extend(s.stores.iter().filter_map(|st| self.topology.changelog_topic(st)));
        }
        wanted.extend(self.topology.repartition_topics.iter().map(|r| self.topology.topic_name(&r.name)));
        let wanted: Vec<String> = wanted.into_iter().collect();

        let group_id = self.config.group_id.clone();
        let replication_factor = self.config.replication_factor;
        let topic_configs = self.config.topic_configs.clone();
        let timeout = self.config.request_timeout();
        let client_id = self.config.client_id.clone();
        let topology = self.topology.clone();

        let conn = self.coordinator();
        let metadata = fetch_metadata(conn, &wanted)?;
        let cluster = cluster_metadata(&metadata, &external);
        let counts = partition_counts(&metadata, &external);

        let end_offsets = match Tasks::build(&topology, &cluster) {
            Err(_) => ChangelogEndOffsets::Unavailable, // the leader's assignment reports it
            Ok(tasks) => {
                let existing = partition_counts(&metadata, &wanted);
                let mut create = Vec::new();
                let needed = tasks
                    .repartition_topic_partitions
                    .iter()
                    .map(|(t, n)| (t, *n, true))
                    .chain(tasks.changelog_topic_partitions.iter().map(|(t, n)| (t, *n, false)));
                for (topic, n, repartition) in needed {
                    match existing.get(topic) {
                        Some(&actual) if actual != n => {
                            return Err(MemberError::InternalTopic { topic: topic.clone(), expected: n, actual });
                        }
                        Some(_) => {}
                        None => create.push((topic.clone(), n, internal_topic_configs(repartition, &topic_configs))),
                    }
                }
                if !create.is_empty() {
                    let names = create_topics(conn, &create, replication_factor, timeout)?;
                    on_event(MemberEvent::TopicsCreated(names));
                }
                let changelog_topics: BTreeSet<String> = tasks.changelog_topic_partitions.keys().cloned().collect();
                fetch_end_offsets(conn, &tasks, &changelog_topics, &group_id, &client_id, timeout)
            }
        };

        let excluded = if self.config.leader_only { vec![self.member_id.clone()] } else { Vec::new() };
        let now = now_ms();
        let input = LeaderInput::new(members, &topology, &cluster, &end_offsets, self.process_id)
            .with_config(&self.config.leader)
            .with_excluded_members(&excluded)
            .with_now_ms(now);
        let out = self.hook.assign(&input)?;
        self.assigned_counts = Some(counts);
        self.next_metadata_check = now.saturating_add(self.config.metadata_max_age_ms);

        let report = &out.report;
        let probing_at = report
            .assignment
            .as_ref()
            .filter(|a| a.followup.probing_rebalance_needed)
            .map(|_| now.saturating_add(self.config.leader.assignment.probing_rebalance_interval_ms));
        let process_of: BTreeMap<&str, ProcessId> = members
            .iter()
            .filter_map(|m| {
                let env = SubscriptionEnvelope::decode(&m.subscription).ok()?;
                let info = SubscriptionInfo::decode(env.user_data.as_deref()?).ok()?;
                Some((m.member_id.as_str(), info.process_id))
            })
            .collect();
        let records = out
            .members
            .keys()
            .map(|id| {
                let info = &report.infos[id];
                let process_id = process_of.get(id.as_str()).copied().unwrap_or(ProcessId::NIL);
                let kinds = report.replica_kinds(&process_id);
                let (warm, spare) = (kinds.warmup, kinds.spare);
                let (warmup, rest): (Vec<TaskId>, Vec<TaskId>) =
                    info.standby_tasks_map().into_keys().partition(|t| warm.contains(t));
                let (spare_tasks, standby): (Vec<TaskId>, Vec<TaskId>) = rest.into_iter().partition(|t| spare.contains(t));
                MemberRecord {
                    member_id: id.clone(),
                    process_id,
                    excluded: excluded.contains(id),
                    active_tasks: info.active_tasks.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect(),
                    standby_tasks: standby,
                    warmup_tasks: warmup,
                    spare_tasks,
                    next_rebalance_ms: info.next_rebalance.as_millis(),
                }
            })
            .collect();
        let record = GenerationRecord {
            generation_id: self.generation_id,
            leader_id: self.member_id.clone(),
            assigned_at_ms: now,
            error_code: report.error.as_ref().map(|(c, _)| c.code()),
            error: report.error.as_ref().map(|(_, why)| why.clone()),
            probing_rebalance_at_ms: probing_at,
            members: records,
        };
        Ok((out.members, record))
    }
}

/// Sleeps `d`, returning early when `stop` says so (polled every 100 ms).
fn sleep_polling(d: Duration, stop: &mut dyn FnMut() -> bool) {
    let end = std::time::Instant::now() + d;
    while !stop() {
        let now = std::time::Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
}

