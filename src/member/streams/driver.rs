//! The blocking streams-protocol member: the machine over a [`client`](crate::client)
//! connection to the group coordinator.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::admin::{fetch_metadata, partition_counts};
use crate::client::connection::Connection;
use crate::client::now_ms;
use crate::client::streams::{
    self, Endpoint, HeartbeatTopology, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use crate::leader::Topology;
use crate::member::config::MemberConfig;
use crate::member::driver::connect_coordinator;
use crate::member::events::MemberError;
use crate::member::streams::events::{StreamsEvent, StreamsMemberError};
use crate::member::streams::events::MemberState;
use crate::member::streams::machine::{Declaration, Request, Response, StreamsMachine};
use crate::member::streams::topology;
use crate::member::tasks::{MemberTasks, NoCallbacks, TaskCallbacks};
use crate::wire::ProcessId;

/// Where the member's topology comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TopologySource {
    /// The group's own, read from its coordinator (`StreamsGroupDescribe`); the group must
    /// have one (a member of it has joined). Refused before joining when a sub-topology reads
    /// two topics or more: the coordinator compares its co-partition groups, which it does not
    /// describe (use [`GroupOr`](Self::GroupOr) with the application's topology).
    Group,
    /// The group's own, completed from this topology file with what the coordinator does not
    /// describe (co-partition groups, fixed repartition partition counts), once the file's
    /// sub-topologies read and write the group's topics (else refused before joining); the
    /// file's alone while the group has none.
    GroupOr(Box<Topology>),
    /// Exactly this declaration.
    Declared(HeartbeatTopology),
}

/// A member of a streams group (KIP-1071, `group.protocol=streams`) over TCP: it joins beside
/// Java Kafka Streams members, takes the tasks the coordinator's assignor gives it, and tells
/// [`TaskCallbacks`] as they change. It processes nothing itself: the program behind the
/// callbacks does, or the member only holds and reports.
///
/// ```no_run
/// use kstreams_assignor::member::{MemberConfig, StreamsGroupMember, TopologySource};
/// use kstreams_assignor::wire::ProcessId;
///
/// let config = MemberConfig::new("localhost:9092", "word-count");
/// let mut member = StreamsGroupMember::new(config, TopologySource::Group, ProcessId::random());
/// let mut stop = || false;
/// member.run(&mut stop, &mut |event| println!("{event:?}")).unwrap();
/// ```
pub struct StreamsGroupMember {
    config: MemberConfig,
    source: TopologySource,
    process_id: ProcessId,
    endpoint: Option<Endpoint>,
    callbacks: Option<Box<dyn TaskCallbacks + Send>>,
    machine: Option<StreamsMachine>,
    coordinator: Option<Connection>,
}

impl std::fmt::Debug for StreamsGroupMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsGroupMember").field("group", &self.config.group_id).field("machine", &self.machine).finish_non_exhaustive()
    }
}

/// The HTTP-less `host:port` of `application.server`, as Java's `HostInfo.buildFromEndpoint`.
pub fn parse_endpoint(text: &str) -> Result<Endpoint, String> {
    let bad = || format!("application.server {text:?} is not host:port");
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse::<u16>().map_err(|_| bad())?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok(Endpoint { host: host.trim_start_matches('[').trim_end_matches(']').to_owned(), port })
}

/// A member's client tags (`client.tag.*`), key to value.
pub type ClientTags = BTreeMap<String, String>;

impl StreamsGroupMember {
    /// A member of `config.group_id` with this process id, whose topology comes from `source`.
    pub fn new(config: MemberConfig, source: TopologySource, process_id: ProcessId) -> Self {
        Self { config, source, process_id, endpoint: None, callbacks: None, machine: None, coordinator: None }
    }

    /// The endpoint for Interactive Queries it declares (`application.server`).
    pub fn with_endpoint(mut self, endpoint: Endpoint) -> Self {
        self.endpoint = Some(endpoint);
        self
    }

    /// The callbacks to tell as tasks change (none by default).
    pub fn with_callbacks(mut self, callbacks: Box<dyn TaskCallbacks + Send>) -> Self {
        self.callbacks = Some(callbacks);
        self
    }

    /// The member id (empty before `run`).
    pub fn member_id(&self) -> &str {
        self.machine.as_ref().map_or("", StreamsMachine::member_id)
    }

    /// The member epoch (0 before the coordinator took the join).
    pub fn epoch(&self) -> i32 {
        self.machine.as_ref().map_or(0, StreamsMachine::epoch)
    }

    /// The tasks held.
    pub fn tasks(&self) -> MemberTasks {
        self.machine.as_ref().map(|m| m.owned().clone()).unwrap_or_default()
    }

    /// The member's state.
    pub fn state(&self) -> Option<MemberState> {
        self.machine.as_ref().map(StreamsMachine::state)
    }

    /// Runs until `stop` returns true (polled at least every 100 ms) or a fatal error; leaves the
    /// group on the way out (the active tasks are revoked first). Every step is reported to
    /// `on_event`.
    pub fn run(&mut self, stop: &mut dyn FnMut() -> bool, on_event: &mut dyn FnMut(StreamsEvent)) -> Result<(), StreamsMemberError> {
        self.run_with_tags(stop, on_event, &mut |_| None)
    }

    /// As [`run`](Self::run), and `client_tags` is asked, at least every 100 ms, with the tags
    /// the member declares: tags it returns replace them, sent to the coordinator at once. A
    /// change of a member's client tags is a change of the group, so the coordinator computes a
    /// new target assignment; a prober (`kstreams-assignor probe`) asks for one this way.
    pub fn run_with_tags(
        &mut self,
        stop: &mut dyn FnMut() -> bool,
        on_event: &mut dyn FnMut(StreamsEvent),
        client_tags: &mut dyn FnMut(&ClientTags) -> Option<ClientTags>,
    ) -> Result<(), StreamsMemberError> {
        if self.machine.is_none() {
            let declaration = Declaration { topology: self.topology(on_event)?, process_id: self.process_id, endpoint: self.endpoint.clone() };
            let callbacks = self.callbacks.take().unwrap_or_else(|| Box::new(NoCallbacks));
            self.machine = Some(StreamsMachine::new(self.config.clone(), declaration, callbacks));
        }
        loop {
            let machine = self.machine.as_mut().expect("set above");
            while let Some(event) = machine.poll_event() {
                on_event(event);
            }
            if stop() {
                machine.close();
            } else if let Some(tags) = client_tags(machine.client_tags()) {
                machine.set_client_tags(tags);
            }
            let now = now_ms();
            if let Some(request) = machine.poll_request(now) {
                let result = self.send(request);
                let machine = self.machine.as_mut().expect("set above");
                match result {
                    Ok(response) => machine.handle_response(response, now_ms()),
                    Err((error, retriable)) => {
                        self.coordinator = None;
                        machine.handle_error(error, retriable, now_ms());
                    }
                }
                if !machine.coordinator_known() {
                    // NOT_COORDINATOR and the like: the next lookup asks the brokers again.
                    self.coordinator = None;
                }
                continue;
            }
            if let Some(outcome) = machine.take_outcome() {
                while let Some(event) = machine.poll_event() {
                    on_event(event);
                }
                return outcome;
            }
            if let Some(deadline) = machine.poll_timeout() {
                let wait = deadline.saturating_sub(now).clamp(0, 100);
                if wait > 0 {
                    std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0)));
                }
            }
        }
    }

    /// The declaration's topology, by `source`.
    fn topology(&mut self, on_event: &mut dyn FnMut(StreamsEvent)) -> Result<HeartbeatTopology, StreamsMemberError> {
        let file = match &self.source {
            TopologySource::Declared(t) => return Ok(t.clone()),
            TopologySource::Group => None,
            TopologySource::GroupOr(t) => Some(t.clone()),
        };
        let mut conn = connect_coordinator(&self.config).map_err(|e| StreamsMemberError::Setup(e.to_string()))?;
        on_event(StreamsEvent::CoordinatorFound { broker: conn.broker().to_owned() });
        let described = topology::described(&mut conn, &self.config.group_id, self.config.request_timeout()).map_err(StreamsMemberError::Setup)?;
        let (described, counts) = match described {
            Some((t, described)) => {
                // The external source topics' partition counts, to tell fixed repartition
                // counts from derived ones.
                let topics: Vec<String> = t.subtopologies.iter().flat_map(|s| s.source_topics.iter().cloned()).collect();
                let sources = fetch_metadata(&mut conn, &topics).map(|m| partition_counts(&m, &topics)).map_err(|e| e.to_string());
                (Some(t), topology::Counts { described, sources })
            }
            None => (None, topology::Counts { described: BTreeMap::new(), sources: Err("the group has no topology".to_owned()) }),
        };
        self.coordinator = Some(conn);
        let declared = topology::declare(described, file.as_deref(), &counts, &self.config)?;
        on_event(StreamsEvent::TopologyDeclared { origin: declared.origin });
        Ok(declared.topology)
    }

    /// Sends one request; an error says whether it is worth retrying.
    fn send(&mut self, request: Request) -> Result<Response, (String, bool)> {
        match request {
            Request::FindCoordinator => {
                if let Some(conn) = &self.coordinator {
                    return Ok(Response::CoordinatorFound(conn.broker().to_owned()));
                }
                match connect_coordinator(&self.config) {
                    Ok(conn) => {
                        let broker = conn.broker().to_owned();
                        self.coordinator = Some(conn);
                        Ok(Response::CoordinatorFound(broker))
                    }
                    Err(e @ MemberError::NoCoordinator { .. }) => Err((e.to_string(), true)),
                    Err(e) => Err((e.to_string(), false)),
                }
            }
            Request::Heartbeat(r) => self.heartbeat(&r).map(|r| Response::Heartbeat(Box::new(r))),
        }
    }

    fn heartbeat(&mut self, request: &StreamsGroupHeartbeatRequest) -> Result<StreamsGroupHeartbeatResponse, (String, bool)> {
        let timeout = self.config.request_timeout();
        let conn = self.coordinator.as_mut().ok_or_else(|| ("no coordinator connection".to_owned(), true))?;
        let broker = conn.broker().to_owned();
        let Some((min, max)) = conn.broker_versions(streams::HEARTBEAT_API_KEY) else {
            let why = format!(
                "the broker at {broker} does not speak the streams group protocol (no StreamsGroupHeartbeat): it needs Kafka 4.2 or later with the streams protocol enabled"
            );
            return Err((why, false));
        };
        let version = max.min(streams::MAX_VERSION);
        if version < min.max(streams::MIN_VERSION) {
            return Err((format!("the broker at {broker} speaks StreamsGroupHeartbeat {min}..={max}, this member 0..=1"), false));
        }
        let body = request.encode(version).map_err(|e| (e.to_string(), false))?;
        let raw = conn
            .call_raw("StreamsGroupHeartbeat", streams::HEARTBEAT_API_KEY, version, streams::REQUEST_HEADER_VERSION, &body, streams::RESPONSE_HEADER_VERSION, timeout)
            .map_err(|e| {
                let retriable = e.is_network() || matches!(e, crate::client::connection::ConnectionError::Timeout { .. });
                (e.to_string(), retriable)
            })?;
        StreamsGroupHeartbeatResponse::decode(&raw, version).map_err(|e| (format!("the broker at {broker}: {e}"), false))
    }
}
