//! What the page shows, kept between looks: the watch driver's [`Report`]s folded into one state
//! that `/state.json` serves whole and `/events` pushes as it changes.
//!
//! The state holds the connection to the brokers (connecting, connected, lost), the live view of
//! the last look (the group's state, its warm-ups and how far each has come), the last
//! [`MAX_GENERATIONS`] generations with their grids, joins, leaves and moves, and the watch's
//! summary. Every change has a sequence number; the last [`MAX_PENDING`] changes are kept, so a
//! browser that reconnects or falls behind gets what it missed, or the whole state again when
//! it fell further behind than that.
//!
//! A warm-up's progress is measured against the largest lag seen for it since it appeared: the
//! share of that lag above `acceptable.recovery.lag` restored so far (1 once caught up).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::client::now_ms;
use crate::views::watch::drive::Report;
use crate::views::watch::{Event, Generation, Protocol, Summary, Waiting, WarmupProgress};

/// Generations kept for the timeline; older ones are dropped (and counted).
pub const MAX_GENERATIONS: usize = 200;
/// Changes kept for browsers that catch up.
pub const MAX_PENDING: usize = 64;

/// One change, as pushed to the browsers: its sequence number and its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// Its sequence number (the first change is 1).
    pub seq: u64,
    /// The JSON object of what changed (`generation`, `live`, `connection`, `summary`).
    pub data: Arc<str>,
}

/// What [`LiveState::wait`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Waited {
    /// The changes after the one asked for, in order.
    Changes(Vec<Change>),
    /// The changes after the one asked for are no longer kept: take the whole state again.
    Behind,
    /// Nothing changed within the time given.
    Nothing,
}

/// The page's state, shared between the driver (which [`apply`](LiveState::apply)s reports) and
/// the server's connections.
///
/// ```
/// use kstreams_assignor::views::ui::LiveState;
///
/// let state = LiveState::new("app", "127.0.0.1:9092", 2_000, 10_000);
/// let (seq, json) = state.snapshot();
/// assert_eq!(seq, 0);
/// assert!(json.contains(r#""groupId":"app""#), "{json}");
/// ```
#[derive(Debug)]
pub struct LiveState {
    inner: Mutex<Inner>,
    changed: Condvar,
}

#[derive(Debug)]
struct Inner {
    seq: u64,
    group: String,
    bootstrap: String,
    interval_ms: u64,
    acceptable_lag: i64,
    protocol: Option<Protocol>,
    generations: VecDeque<Value>,
    dropped: u64,
    next_index: u64,
    live: Value,
    connection: Value,
    summary: Value,
    /// The largest lag seen per (process, warm-up task) since it appeared.
    first_lags: BTreeMap<(String, String), i64>,
    changes: VecDeque<Change>,
}

/// `generationId` (classic) or `groupEpoch` (streams), as Kafka names them.
fn epoch_key(protocol: Option<Protocol>) -> &'static str {
    match protocol {
        Some(Protocol::Classic) => "generationId",
        Some(Protocol::Streams) => "groupEpoch",
        None => "epoch",
    }
}

fn group_type(protocol: Option<Protocol>) -> Value {
    match protocol {
        Some(Protocol::Classic) => "classic".into(),
        Some(Protocol::Streams) => "streams".into(),
        None => Value::Null,
    }
}

impl Inner {
    /// The warm-ups with `firstLag` and `progress` (see the [module docs](self)), the largest lags
    /// seen updated and those of warm-ups gone forgotten.
    fn warmups(&mut self, warmups: &[WarmupProgress]) -> Value {
        let mut seen = BTreeMap::new();
        let list = warmups
            .iter()
            .map(|w| {
                let key = (w.process_id.clone(), w.task.clone());
                let first = match (w.lag, self.first_lags.get(&key).copied()) {
                    (Some(l), Some(f)) => Some(l.max(f)),
                    (l, f) => l.or(f),
                };
                if let Some(f) = first {
                    seen.insert(key, f);
                }
                let progress = match (w.lag, first) {
                    _ if w.caught_up => Some(1.0),
                    (Some(l), Some(f)) => {
                        let span = (f - self.acceptable_lag).max(1) as f64;
                        Some(((f - l) as f64 / span).clamp(0.0, 1.0))
                    }
                    _ => None,
                };
                let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
                v["firstLag"] = first.into();
                v["progress"] = progress.into();
                v
            })
            .collect();
        self.first_lags = seen;
        Value::Array(list)
    }

    fn live_of_waiting(&mut self, w: &Waiting) -> Value {
        let mut v = json!({
            "lastLookMs": w.at_ms,
            "groupState": w.state,
            "rebalancing": w.rebalancing,
            "members": w.members,
            "warmups": self.warmups(&w.warmups),
            "probingRebalanceAtMs": w.probing_rebalance_at_ms,
            "groupRecordSize": w.record_size,
        });
        v[epoch_key(self.protocol)] = w.epoch.into();
        v
    }

    fn generation(&mut self, g: &Generation) -> (Value, Value) {
        self.protocol = Some(g.protocol);
        let key = epoch_key(self.protocol);
        let warmups = self.warmups(&g.warmups);
        let mut v = serde_json::to_value(g).unwrap_or_else(|_| json!({}));
        if let Some(map) = v.as_object_mut() {
            map.remove("epoch");
            map.remove("assignment");
            if let Some(size) = map.remove("recordSize") {
                map.insert("groupRecordSize".to_owned(), size);
            }
            map.insert(key.to_owned(), g.epoch.into());
            map.insert("index".to_owned(), self.next_index.into());
            map.insert("groupState".to_owned(), g.state.clone().into());
            map.insert("warmups".to_owned(), warmups.clone());
            map.insert("tasks".to_owned(), g.tasks.iter().cloned().collect::<Vec<_>>().into());
            let members: Vec<Value> = g
                .member_tasks
                .iter()
                .map(|m| {
                    json!({
                        "memberId": m.member_id,
                        "processId": m.process_id,
                        "activeTasks": m.tasks.active,
                        "standbyTasks": m.tasks.standby,
                        "warmupTasks": m.tasks.warmup,
                    })
                })
                .collect();
            map.insert("members".to_owned(), members.into());
        }
        self.next_index += 1;
        let mut live = json!({
            "lastLookMs": g.at_ms,
            "groupState": g.state,
            "rebalancing": false,
            "members": g.members,
            "warmups": warmups,
            "probingRebalanceAtMs": g.probing_rebalance_at_ms,
            "groupRecordSize": g.record_size,
        });
        live[key] = g.epoch.into();
        (v, live)
    }

    fn push(&mut self, data: Value) {
        self.seq += 1;
        let data: Arc<str> = Arc::from(data.to_string());
        self.changes.push_back(Change { seq: self.seq, data });
        while self.changes.len() > MAX_PENDING {
            self.changes.pop_front();
        }
    }

    fn snapshot(&self) -> Value {
        json!({
            "groupId": self.group,
            "bootstrap": self.bootstrap,
            "groupType": group_type(self.protocol),
            "intervalMs": self.interval_ms,
            "acceptableRecoveryLag": self.acceptable_lag,
            "connection": self.connection,
            "live": self.live,
            "generations": self.generations,
            "droppedGenerations": self.dropped,
            "summary": self.summary,
        })
    }
}

impl LiveState {
    /// The state of `group` looked at through `bootstrap` every `interval_ms`, warm-ups caught up
    /// at `acceptable_lag` records: connecting, nothing seen yet.
    pub fn new(group: &str, bootstrap: &str, interval_ms: u64, acceptable_lag: i64) -> Self {
        let inner = Inner {
            seq: 0,
            group: group.to_owned(),
            bootstrap: bootstrap.to_owned(),
            interval_ms,
            acceptable_lag,
            protocol: None,
            generations: VecDeque::new(),
            dropped: 0,
            next_index: 0,
            live: Value::Null,
            connection: json!({ "state": "connecting", "sinceMs": now_ms() }),
            summary: serde_json::to_value(Summary::default()).unwrap_or(Value::Null),
            first_lags: BTreeMap::new(),
            changes: VecDeque::new(),
        };
        Self { inner: Mutex::new(inner), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A connection thread that panicked holding the lock leaves a state that is still whole.
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Folds one report of the watch driver in, with the summary so far, and wakes the waiting
    /// connections.
    pub fn apply(&self, report: &Report, summary: &Summary) {
        let mut inner = self.lock();
        let summary = serde_json::to_value(summary).unwrap_or(Value::Null);
        let mut change = Map::new();
        if inner.summary != summary {
            inner.summary = summary.clone();
            change.insert("summary".to_owned(), summary);
        }
        let connected = json!({ "state": "connected", "sinceMs": now_ms() });
        match report {
            Report::Event(event) => {
                if inner.connection["state"] != "connected" {
                    inner.connection = connected.clone();
                    change.insert("connection".to_owned(), connected);
                }
                let live = match event {
                    Event::Generation(g) => {
                        let (generation, live) = inner.generation(g);
                        inner.generations.push_back(generation.clone());
                        if inner.generations.len() > MAX_GENERATIONS {
                            inner.generations.pop_front();
                            inner.dropped += 1;
                        }
                        change.insert("generation".to_owned(), generation);
                        change.insert("groupType".to_owned(), group_type(inner.protocol));
                        change.insert("droppedGenerations".to_owned(), inner.dropped.into());
                        live
                    }
                    Event::Waiting(w) => inner.live_of_waiting(w),
                };
                inner.live = live.clone();
                change.insert("live".to_owned(), live);
            }
            Report::Lost { error, unreachable, since_ms } => {
                let c = json!({ "state": "lost", "sinceMs": since_ms, "error": error, "unreachable": unreachable });
                inner.connection = c.clone();
                change.insert("connection".to_owned(), c);
            }
            Report::Back(after) => {
                let mut c = connected;
                c["outageMs"] = u64::try_from(after.as_millis()).unwrap_or(u64::MAX).into();
                inner.connection = c.clone();
                change.insert("connection".to_owned(), c);
            }
        }
        if !change.is_empty() {
            inner.push(Value::Object(change));
            self.changed.notify_all();
        }
    }

    /// The whole state as JSON, with the sequence number of the last change in it.
    pub fn snapshot(&self) -> (u64, String) {
        let inner = self.lock();
        (inner.seq, inner.snapshot().to_string())
    }

    /// The changes after `after`, waiting up to `timeout` for one.
    pub fn wait(&self, after: u64, timeout: Duration) -> Waited {
        let until = Instant::now() + timeout;
        let mut inner = self.lock();
        loop {
            if inner.seq > after {
                return match inner.changes.front() {
                    Some(first) if first.seq <= after + 1 => {
                        Waited::Changes(inner.changes.iter().filter(|c| c.seq > after).cloned().collect())
                    }
                    _ => Waited::Behind,
                };
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Waited::Nothing;
            }
            inner = match self.changed.wait_timeout(inner, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}
