//! The response the engine sends back (layout in `docs/plugin.md`).

use super::request::{VERSION, Writer};
use crate::wire::{ProcessId, TaskId};

/// The tasks of one client; warm-ups and spares are among the standbys.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientTasks {
    /// The client.
    pub process_id: ProcessId,
    /// Its active tasks.
    pub active: Vec<TaskId>,
    /// Its standby tasks.
    pub standby: Vec<TaskId>,
}

/// The engine's answer for one rebalance.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Response {
    /// Every client's tasks, in process-id order.
    pub clients: Vec<ClientTasks>,
    /// The client that triggers the follow-up (probing) rebalance, and when (epoch ms).
    pub followup: Option<(ProcessId, i64)>,
    /// One line for the host's log.
    pub summary: String,
    /// The engine input as `assign --input` JSON, when the request asked for it.
    pub dump: Option<String>,
    /// Time spent in the engine (nanoseconds), as the caller measured it (0: not measured).
    pub engine_nanos: i64,
}

impl Response {
    /// Encodes the response for the host.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.i32(VERSION);
        w.count(self.clients.len());
        for c in &self.clients {
            w.uuid(&c.process_id.0);
            w.tasks(&c.active);
            w.tasks(&c.standby);
        }
        match &self.followup {
            None => w.i8(0),
            Some((client, deadline)) => {
                w.i8(1);
                w.uuid(&client.0);
                w.i64(*deadline);
            }
        }
        w.string(&self.summary);
        match &self.dump {
            None => w.i32(-1),
            Some(json) => w.string(json),
        }
        w.i64(self.engine_nanos);
        w.buf
    }
}
