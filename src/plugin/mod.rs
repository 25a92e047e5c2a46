//! The engine as a plugin of a JVM host: Kafka Streams' KIP-924 `task.assignor.class` (the Java
//! side is the Maven module `plugin/`, the JNI crossing the workspace crate `bridge/`).
//!
//! Sans-IO: the host sends one [`Request`] per rebalance (KIP-924's `ApplicationState` in the
//! compact layout of `docs/plugin.md`); a [`Session`] turns it into the same
//! [`AssignmentInput`] that `kstreams-assignor assign --input`
//! reads, with the restore-rate memory of earlier rebalances ([`Memory`]), runs `optimized`, and
//! answers with a [`Response`]: tasks per client and the follow-up rebalance.
//!
//! ```
//! use kstreams_assignor::plugin::{ClientRecord, Request, Session, TaskRecord};
//! use kstreams_assignor::wire::{ProcessId, TaskId};
//! # use uuid::Uuid;
//!
//! let request = Request {
//!     application_id: "word-count".into(),
//!     now_ms: 1_700_000_000_000,
//!     tasks: vec![TaskRecord::new(TaskId::new(0, 0), true), TaskRecord::new(TaskId::new(0, 1), false)],
//!     clients: vec![ClientRecord::new(ProcessId(Uuid::from_u128(1)), 2)],
//!     ..Request::default()
//! };
//! let mut session = Session::new();
//! let response = session.assign(&request).unwrap();
//! assert_eq!(response.clients[0].active, [TaskId::new(0, 0), TaskId::new(0, 1)]);
//! assert!(response.followup.is_none());
//! assert!(response.summary.starts_with("OptimizedTaskAssignor: 2 active tasks"), "{}", response.summary);
//! ```

mod input;
mod memory;
mod request;
mod response;
pub mod streams;
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;

pub use memory::{Leftovers, Memory, Recall};
pub use request::{ClientRecord, PartitionRecord, Request, TaskRecord, VERSION};
pub use response::{ClientTasks, Response};

use crate::engine::{self, Assignment, AssignmentInput, AssignorKind, InputError, SetConfigError};
use crate::wire::ProcessId;

/// Why a request got no response. The host logs the message and falls back to its own assignor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The request's bytes do not follow the layout.
    #[error("the request from the JVM is malformed: field `{field}` at byte {offset}: {reason}")]
    Malformed {
        /// The field being read.
        field: &'static str,
        /// Its byte offset.
        offset: usize,
        /// What was wrong.
        reason: String,
    },
    /// A request layout this library does not speak (the jar and the native library differ).
    #[error("the request has layout version {version}, this native library speaks only version {VERSION}: the jar and its native library do not match")]
    Version {
        /// The version read.
        version: i32,
    },
    /// A config the engine refuses.
    #[error("task assignor config refused: {0}")]
    Config(SetConfigError),
    /// An input the engine refuses.
    #[error("invalid application state: {0}")]
    Input(InputError),
    /// A value Kafka Streams never sends.
    #[error("invalid application state: {0}")]
    Invalid(String),
    /// The engine failed.
    #[error("the assignor failed: {0}")]
    Engine(#[from] engine::AssignError),
    /// The streams assignor refused the group ([`streams`]).
    #[error("the streams assignor refused the group: {0}")]
    Streams(#[from] engine::streams::StreamsAssignError),
    /// The call's deadline passed: the engine stopped at its next checkpoint, and nothing of
    /// the call is left running ([`streams::StreamsSessions::assign_until`]).
    #[error("the assignment was stopped at its deadline, {budget_ms} ms after it started: nothing of it runs on")]
    Interrupted {
        /// The time the call was given.
        budget_ms: u64,
    },
}

/// A request made ready for the engine: its input and what the response needs.
#[derive(Debug)]
pub struct Prepared {
    /// The engine input (what the support dump writes).
    pub input: AssignmentInput,
    application_id: String,
    now_ms: i64,
    dump: bool,
    recall: Recall,
}

impl Prepared {
    /// Runs the optimized assignor on the input.
    pub fn run(&self) -> Result<Assignment, PluginError> {
        Ok(engine::assign(AssignorKind::Optimized, &self.input)?)
    }
}

/// The state a host keeps across rebalances: the [`Memory`] of the rebalances it led.
#[derive(Debug, Default)]
pub struct Session {
    memory: Memory,
}

impl Session {
    /// A session with an empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the engine input of a request, with the previous rebalance when it may be used.
    /// The previous rebalance's snapshot, when used, moves from the memory into the input.
    pub fn prepare(&mut self, request: &Request) -> Result<Prepared, PluginError> {
        let mut input = input::engine_input(request, None)?;
        let (previous, recall) = self.memory.recall(&request.application_id, request.now_ms, &input);
        input.previous_rebalance = previous;
        Ok(Prepared { input, application_id: request.application_id.clone(), now_ms: request.now_ms, dump: request.dump, recall })
    }

    /// Remembers this rebalance and builds the response; `engine_nanos` is the time the caller
    /// measured around [`Prepared::run`] (0 if it did not).
    pub fn finish(&mut self, prepared: Prepared, assignment: Assignment, engine_nanos: i64) -> Result<Response, PluginError> {
        self.finish_with_leftovers(prepared, assignment, engine_nanos).map(|(response, _freed_here)| response)
    }

    /// [`finish`](Self::finish), handing back what the rebalance leaves to free, for a host
    /// that frees it after it answered (the JVM bridge drops it on a thread of its own).
    pub fn finish_with_leftovers(&mut self, prepared: Prepared, assignment: Assignment, engine_nanos: i64) -> Result<(Response, Leftovers), PluginError> {
        let followup = followup(&assignment, prepared.now_ms);
        let summary = summary(&prepared, &assignment, followup.as_ref());
        let dump = match prepared.dump {
            false => None,
            true => Some(serde_json::to_string_pretty(&prepared.input).map_err(|e| PluginError::Invalid(format!("cannot write the dump: {e}")))?),
        };
        let clients = assignment
            .clients
            .into_iter()
            .map(|c| ClientTasks { process_id: c.process_id, active: c.active_tasks, standby: c.standby_tasks })
            .collect();
        let leftovers = self.memory.remember(&prepared.application_id, prepared.now_ms, prepared.input);
        Ok((Response { clients, followup, summary, dump, engine_nanos }, leftovers))
    }

    /// Prepares, runs and finishes in one call.
    pub fn assign(&mut self, request: &Request) -> Result<Response, PluginError> {
        let prepared = self.prepare(request)?;
        let assignment = prepared.run()?;
        self.finish(prepared, assignment, 0)
    }
}

/// The follow-up rebalance: on the client of the first warm-up waited for, else the first client.
fn followup(assignment: &Assignment, now_ms: i64) -> Option<(ProcessId, i64)> {
    let f = &assignment.followup;
    if !f.probing_rebalance_needed {
        return None;
    }
    let client = f.watch_list.first().map(|w| w.process_id).or_else(|| assignment.clients.first().map(|c| c.process_id))?;
    Some((client, now_ms.saturating_add(f.probing_rebalance_interval_ms)))
}

fn summary(prepared: &Prepared, assignment: &Assignment, followup: Option<&(ProcessId, i64)>) -> String {
    let count = |f: fn(&engine::ClientAssignment) -> usize| assignment.clients.iter().map(f).sum::<usize>();
    let mut line = format!(
        "{}: {} active tasks and {} standbys ({} warm-ups, {} spares) over {} clients",
        assignment.assignor,
        count(|c| c.active_tasks.len()),
        count(|c| c.standby_tasks.len()),
        count(|c| c.warmup_tasks.len()),
        count(|c| c.spare_tasks.len()),
        assignment.clients.len(),
    );
    match &prepared.recall {
        Recall::Used { elapsed_ms } => line += &format!("; restore rates from the rebalance {:.1} s ago", *elapsed_ms as f64 / 1e3),
        Recall::Fresh(why) => line += &format!("; restore rates unknown ({why})"),
    }
    if let Some((client, deadline)) = followup {
        let wait = (deadline - prepared.now_ms) as f64 / 1e3;
        line += &format!("; probing rebalance in {wait:.0} s, triggered by {client}");
    }
    line
}

#[cfg(test)]
mod tests;
