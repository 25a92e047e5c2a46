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
//!    changelogs, then the hook's [`assign`](PartitionAssignorHook::assign). First of all the
//!    topology is checked against the members' subscriptions ([`check_topology`]): on a mismatch
//!    the member creates no topic, assigns nothing and stops with
//!    [`LeaderError::TopologyMismatch`] (after leaving the group). A member in leader-only mode
//!    ([`MemberConfig::leader_only`]) lists itself in
//!    [`LeaderInput::excluded_members`](crate::leader::LeaderInput::excluded_members): it gets no tasks.
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
//! The protocol's decisions (what to send next, when, and what an answer or an error leads
//! to) are made by a state machine without I/O in `machine.rs`; `GroupMember` is its driver:
//! it owns the connection to the coordinator, the clock and the sleeps, does the leader's
//! metadata and admin calls, and feeds every answer or error back.
//!
//! The loop is blocking: `stop` is polled between requests and while waiting, not during a
//! JoinGroup or SyncGroup the coordinator holds (up to the rebalance timeout). An interrupt flag
//! ([`GroupMember::with_interrupt`]) acts within about 100 ms even then: a watcher thread
//! shuts the coordinator connection's socket down, so that the request in flight returns at
//! once, and the member leaves the group over a fresh connection (an 800 ms budget) instead of
//! going on with the rebalance. Once the flag is set no other request is sent.
//!
//! ```no_run
//! use kstreams_assignor::member::{GroupMember, MemberConfig, MemberEvent, StreamsMember};
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
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, GroupId, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
    join_group_request::JoinGroupRequestProtocol, leave_group_request::MemberIdentity,
    sync_group_request::SyncGroupRequestAssignment,
};
use kafka_protocol::protocol::StrBytes;

use crate::client::admin::{cluster_metadata, create_topics, fetch_end_offsets, fetch_metadata, partition_counts};
use crate::client::connection::{Connection, ConnectionError, ErrorCode, check, find_coordinator};
use crate::member::hook::PartitionAssignorHook;
use crate::member::machine::{MemberMachine, Request, Response};
use crate::member::config::{MemberConfig, internal_topic_configs};
use crate::member::events::{GenerationRecord, MemberError, MemberEvent};
use crate::leader::{ChangelogEndOffsets, JoinMember, LeaderError, Tasks, Topology, check_topology};
use crate::client::now_ms;
use crate::wire::{PROTOCOL_TYPE, ProcessId};

/// A consumer-group member over TCP driven by a [`PartitionAssignorHook`] (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct GroupMember<H> {
    machine: MemberMachine<H>,
    coordinator: Option<Connection>,
    /// Set by the caller to stop even while a request is out.
    interrupt: Option<Arc<AtomicBool>>,
    /// The coordinator connection's socket was shut down under a request.
    interrupted: bool,
}

/// How long a member stopped by its interrupt flag gives its `LeaveGroup` (connect included).
const LEAVE_BUDGET: Duration = Duration::from_millis(800);

/// The socket of the request in flight, which the interrupt watcher may shut down.
type InFlight = Mutex<Option<TcpStream>>;

impl<H: PartitionAssignorHook> GroupMember<H> {
    /// A member of `config.group_id` with the hook `hook` (whose process id it keeps) for the
    /// application `topology`.
    pub fn new(config: MemberConfig, topology: Topology, hook: H) -> Self {
        Self { machine: MemberMachine::new(config, topology, hook), coordinator: None, interrupt: None, interrupted: false }
    }

    /// A flag that stops the member within about 100 ms once set, even while the coordinator
    /// holds a JoinGroup or SyncGroup: the request in flight is abandoned and the member leaves
    /// the group (see the [module docs](self)). `run`'s `stop` still ends it between requests.
    pub fn with_interrupt(mut self, flag: Arc<AtomicBool>) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// The callbacks to tell as the member's tasks change: the same
    /// [`TaskCallbacks`](crate::member::TaskCallbacks) as the streams-protocol member's (the
    /// classic protocol has no warm-ups on the wire: its standbys are standbys).
    pub fn with_callbacks(mut self, callbacks: Box<dyn crate::member::TaskCallbacks + Send>) -> Self {
        self.machine.set_callbacks(callbacks);
        self
    }

    /// The member id (empty before the first join).
    pub fn member_id(&self) -> &str {
        self.machine.member_id()
    }

    /// The process id the member subscribes with.
    pub fn process_id(&self) -> ProcessId {
        self.machine.process_id()
    }

    /// The current generation (-1: none).
    pub fn generation_id(&self) -> i32 {
        self.machine.generation_id()
    }

    /// The hook.
    pub fn hook(&self) -> &H {
        self.machine.hook()
    }

    fn config(&self) -> &MemberConfig {
        self.machine.config()
    }

    /// Runs until `stop` returns true (polled at least every 100 ms) or a fatal error; leaves the
    /// group on the way out. Every step is reported to `on_event`.
    pub fn run(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(MemberEvent)) -> Result<(), MemberError> {
        let Some(flag) = self.interrupt.clone() else { return self.drive(stop, on_event, None) };
        let in_flight: InFlight = Mutex::new(None);
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if flag.load(Ordering::SeqCst) {
                        if let Some(socket) = in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
                            let _ = socket.shutdown(Shutdown::Both);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let outcome = self.drive(stop, on_event, Some((&flag, &in_flight)));
            done.store(true, Ordering::SeqCst);
            outcome
        })
    }

    /// The loop of [`run`](Self::run); with an interrupt, the flag and the slot its watcher reads.
    fn drive(
        &mut self,
        stop: &mut dyn FnMut() -> bool,
        on_event: &mut dyn FnMut(MemberEvent),
        interrupt: Option<(&AtomicBool, &InFlight)>,
    ) -> Result<(), MemberError> {
        let interrupted = || interrupt.is_some_and(|(flag, _)| flag.load(Ordering::SeqCst));
        loop {
            while let Some(event) = self.machine.poll_event() {
                on_event(event);
            }
            if self.machine.stoppable() && stop() {
                self.machine.close();
            }
            let now = now_ms();
            if let Some(request) = self.machine.poll_request(now) {
                let leaving = matches!(request, Request::LeaveGroup { .. });
                if interrupted() && !leaving {
                    // The caller stops: this request is not sent; the member leaves instead.
                    self.machine.abandon();
                    continue;
                }
                if let (Some((_, slot)), Some(conn), false) = (interrupt, &self.coordinator, leaving) {
                    *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = conn.socket().ok();
                }
                let result = self.send(request, on_event);
                if let Some((_, slot)) = interrupt {
                    slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                }
                match result {
                    Err(_) if interrupted() && !leaving => {
                        // Most likely the watcher shut the socket down under the request.
                        self.interrupted = true;
                        self.machine.abandon();
                    }
                    Ok(response) => self.machine.handle_response(response, now_ms()),
                    Err(e) => self.machine.handle_error(e, now_ms()),
                }
                if !self.machine.coordinator_known() {
                    self.coordinator = None;
                }
                continue;
            }
            if let Some(outcome) = self.machine.take_outcome() {
                while let Some(event) = self.machine.poll_event() {
                    on_event(event);
                }
                return outcome;
            }
            if let Some(deadline) = self.machine.poll_timeout() {
                let wait = deadline.saturating_sub(now).clamp(0, 100);
                if wait > 0 {
                    std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0)));
                }
            }
        }
    }

    /// Sends one request of the machine and reads its answer.
    fn send(&mut self, request: Request, on_event: &mut dyn FnMut(MemberEvent)) -> Result<Response, MemberError> {
        match request {
            Request::FindCoordinator => {
                let conn = self.find_coordinator()?;
                on_event(MemberEvent::CoordinatorFound { broker: conn.broker().to_owned() });
                self.coordinator = Some(conn);
                Ok(Response::CoordinatorFound)
            }
            Request::JoinGroup { member_id, metadata, reason } => self.join_group(member_id, metadata, reason),
            Request::Lead { members } => {
                let (assignments, record) = self.lead(&members, on_event)?;
                Ok(Response::Led { assignments, record })
            }
            Request::SyncGroup { generation_id, member_id, assignments } => self.sync_group(generation_id, member_id, assignments),
            Request::Heartbeat { generation_id, member_id } => self.heartbeat(generation_id, member_id),
            Request::CheckMetadata { topics } => {
                let metadata = fetch_metadata(self.coordinator(), &topics)?;
                Ok(Response::Metadata { counts: partition_counts(&metadata, &topics) })
            }
            Request::LeaveGroup { member_id } => Ok(self.leave(member_id)),
        }
    }

    fn coordinator(&mut self) -> &mut Connection {
        self.coordinator.as_mut().expect("the machine finds the coordinator first")
    }

    fn find_coordinator(&self) -> Result<Connection, MemberError> {
        connect_coordinator(self.config())
    }

    fn group(&self) -> GroupId {
        GroupId(StrBytes::from_string(self.config().group_id.clone()))
    }

    fn instance(&self) -> Option<StrBytes> {
        self.config().group_instance_id.clone().map(StrBytes::from_string)
    }

    fn join_group(&mut self, member_id: String, metadata: Vec<u8>, reason: String) -> Result<Response, MemberError> {
        let config = self.config();
        let (session, rebalance, timeout) = (config.session_timeout_ms, config.rebalance_timeout_ms, config.group_timeout());
        let (group, instance, name) = (self.group(), self.instance(), self.machine.hook().name());
        let version = self.coordinator().version::<JoinGroupRequest>()?;
        let request = JoinGroupRequest::default()
            .with_group_id(group)
            .with_session_timeout_ms(session)
            .with_rebalance_timeout_ms(rebalance)
            .with_member_id(StrBytes::from_string(member_id))
            .with_group_instance_id(if version >= 5 { instance } else { None })
            .with_protocol_type(StrBytes::from_static_str(PROTOCOL_TYPE))
            .with_protocols(vec![
                JoinGroupRequestProtocol::default().with_name(StrBytes::from_static_str(name)).with_metadata(Bytes::from(metadata)),
            ])
            .with_reason((version >= 8).then(|| StrBytes::from_string(reason)));
        let conn = self.coordinator();
        let broker = conn.broker().to_owned();
        let response = conn.call_at(&request, version, timeout)?;
        if ErrorCode(response.error_code) == ErrorCode::MEMBER_ID_REQUIRED {
            return Ok(Response::MemberIdRequired { member_id: response.member_id.to_string() });
        }
        check(&broker, ApiKey::JoinGroup, response.error_code, None)?;
        Ok(Response::Joined {
            member_id: response.member_id.to_string(),
            generation_id: response.generation_id,
            leader_id: response.leader.to_string(),
            protocol_name: response.protocol_name.as_ref().map(ToString::to_string),
            skip_assignment: response.skip_assignment,
            members: response
                .members
                .iter()
                .map(|m| JoinMember {
                    member_id: m.member_id.to_string(),
                    group_instance_id: m.group_instance_id.as_ref().map(|s| s.to_string()),
                    subscription: m.metadata.to_vec(),
                })
                .collect(),
        })
    }

    fn sync_group(
        &mut self,
        generation_id: i32,
        member_id: String,
        assignments: BTreeMap<String, Vec<u8>>,
    ) -> Result<Response, MemberError> {
        let timeout = self.config().group_timeout();
        let (group, instance, name) = (self.group(), self.instance(), self.machine.hook().name());
        let version = self.coordinator().version::<SyncGroupRequest>()?;
        let assignments = assignments
            .into_iter()
            .map(|(member, bytes)| {
                SyncGroupRequestAssignment::default().with_member_id(StrBytes::from_string(member)).with_assignment(Bytes::from(bytes))
            })
            .collect();
        let request = SyncGroupRequest::default()
            .with_group_id(group)
            .with_generation_id(generation_id)
            .with_member_id(StrBytes::from_string(member_id))
            .with_group_instance_id(if version >= 3 { instance } else { None })
            .with_protocol_type((version >= 5).then(|| StrBytes::from_static_str(PROTOCOL_TYPE)))
            .with_protocol_name((version >= 5).then(|| StrBytes::from_static_str(name)))
            .with_assignments(assignments);
        let conn = self.coordinator();
        let broker = conn.broker().to_owned();
        let response = conn.call_at(&request, version, timeout)?;
        check(&broker, ApiKey::SyncGroup, response.error_code, None)?;
        Ok(Response::Synced { assignment: response.assignment.to_vec() })
    }

    fn heartbeat(&mut self, generation_id: i32, member_id: String) -> Result<Response, MemberError> {
        let (group, instance) = (self.group(), self.instance());
        let version = self.coordinator().version::<HeartbeatRequest>()?;
        let request = HeartbeatRequest::default()
            .with_group_id(group)
            .with_generation_id(generation_id)
            .with_member_id(StrBytes::from_string(member_id))
            .with_group_instance_id(if version >= 3 { instance } else { None });
        let conn = self.coordinator();
        let broker = conn.broker().to_owned();
        let response = conn.call(&request)?;
        check(&broker, ApiKey::Heartbeat, response.error_code, None)?;
        Ok(Response::HeartbeatOk)
    }

    fn leave(&mut self, member_id: String) -> Response {
        let group = self.group();
        let stopping = self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::SeqCst));
        if self.interrupted {
            // The old socket is shut down: leave over a fresh connection to the coordinator.
            let address = self.coordinator().broker().to_owned();
            match Connection::connect(&address, &self.config().client_id, &self.config().security, LEAVE_BUDGET / 2) {
                Ok(c) => self.coordinator = Some(c),
                Err(e) => return Response::Left { outcome: Err(e.to_string()), sent: false },
            }
        }
        let timeout = if stopping { LEAVE_BUDGET / 2 } else { self.config().request_timeout() };
        let conn = self.coordinator();
        let version = match conn.version::<LeaveGroupRequest>() {
            Ok(v) => v,
            Err(e) => return Response::Left { outcome: Err(e.to_string()), sent: false },
        };
        let member_id = StrBytes::from_string(member_id);
        let request = LeaveGroupRequest::default().with_group_id(group);
        let request = if version >= 3 {
            request.with_members(vec![
                MemberIdentity::default()
                    .with_member_id(member_id)
                    .with_reason((version >= 5).then(|| StrBytes::from_static_str("the member is closing"))),
            ])
        } else {
            request.with_member_id(member_id)
        };
        let outcome = match conn.call_with_timeout(&request, timeout) {
            Ok(r) => check(conn.broker(), ApiKey::LeaveGroup, r.error_code, None),
            Err(e) => Err(e),
        };
        Response::Left { outcome: outcome.map_err(|e| e.to_string()), sent: true }
    }

    /// The leader's work for one generation: metadata, internal topics, end offsets, then the
    /// hook's assignment. Returns each member's bytes and the record of the generation.
    pub fn lead(
        &mut self,
        members: &[JoinMember],
        on_event: &mut dyn FnMut(MemberEvent),
    ) -> Result<(BTreeMap<String, Vec<u8>>, GenerationRecord), MemberError> {
        let topology = self.machine.topology().clone();
        // Before any topic is created: a topology that is not the members' own is refused.
        check_topology(members, &topology).map_err(LeaderError::from)?;
        let external: Vec<String> = self.machine.external_source_topics().into_iter().collect();
        let mut wanted: BTreeSet<String> = external.iter().cloned().collect();
        for s in &topology.subtopologies {
            wanted.extend(s.stores.iter().filter_map(|st| topology.changelog_topic(st)));
        }
        wanted.extend(topology.repartition_topics.iter().map(|r| topology.topic_name(&r.name)));
        let wanted: Vec<String> = wanted.into_iter().collect();

        let config = self.config();
        let group_id = config.group_id.clone();
        let replication_factor = config.replication_factor;
        let topic_configs = config.topic_configs.clone();
        let timeout = config.request_timeout();

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
                fetch_end_offsets(conn, &tasks, &changelog_topics, &group_id, timeout)
            }
        };
        self.machine.assign(members, &cluster, &end_offsets, counts, now_ms())
    }
}

/// Finds `config.group_id`'s coordinator on the bootstrap brokers in turn and connects to it. A
/// refused login or an untrusted certificate does not go away by trying again: fatal
/// ([`MemberError::Connection`]), as in Kafka's clients; the rest is
/// [`MemberError::NoCoordinator`].
pub(crate) fn connect_coordinator(config: &MemberConfig) -> Result<Connection, MemberError> {
    let via = |broker: &str| -> Result<Connection, ConnectionError> {
        let mut conn = Connection::connect(broker, &config.client_id, &config.security, config.request_timeout())?;
        let address = find_coordinator(&mut conn, &config.group_id)?;
        if address == broker {
            return Ok(conn);
        }
        conn.open(&address)
    };
    let mut failures = Vec::new();
    for broker in &config.bootstrap {
        match via(broker) {
            Ok(c) => return Ok(c),
            Err(e) if !e.is_network() && e.code().is_none() => return Err(MemberError::Connection(e)),
            Err(e) if config.bootstrap.len() > 1 => failures.push(format!("{broker}: {e}")),
            Err(e) => failures.push(e.to_string()),
        }
    }
    let last = if failures.is_empty() { "no bootstrap broker".to_owned() } else { failures.join("; ") };
    Err(MemberError::NoCoordinator { group: config.group_id.clone(), last })
}
