//! The home page's state: a row per group followed, and the changes the browsers follow.
//!
//! A row holds what the home shows of a group: its protocol, state, members, processes, tasks
//! by kind, tasks without an active copy, its warm-ups with their lag and catch-up time, its last
//! rebalance and cause, and whether its last look failed.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::metrics::cause_label;
use super::{Health, RebalanceCause};
use crate::client::now_ms;
use crate::views::ui::server::Feed;
use crate::views::ui::state::{Change, MAX_PENDING, Waited};
use crate::views::watch::Protocol;

/// The home page's state (see the [module docs](self)).
#[derive(Debug)]
pub struct Home {
    inner: Mutex<HomeInner>,
    changed: Condvar,
}

#[derive(Debug)]
struct HomeInner {
    seq: u64,
    bootstrap: String,
    cluster: Value,
    rows: BTreeMap<String, Value>,
    changes: VecDeque<Change>,
}

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Classic => "classic",
        Protocol::Streams => "streams",
    }
}

/// `s` percent-encoded for a path segment (every byte but letters, digits and `-._~`).
pub fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A percent-encoded path segment decoded, or `None` when it is not valid UTF-8 or a `%` is not
/// followed by two hex digits.
///
/// ```
/// use kstreams_assignor::views::serve::home::{decode_segment, encode_segment};
///
/// assert_eq!(encode_segment("app 1/ü"), "app%201%2F%C3%BC");
/// assert_eq!(decode_segment("app%201%2F%C3%BC").as_deref(), Some("app 1/ü"));
/// assert_eq!(decode_segment("%zz"), None);
/// ```
pub fn decode_segment(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A group's row from its health.
pub fn row(h: &Health) -> Value {
    let mut v = json!({
        "group": h.group,
        "path": format!("groups/{}/", encode_segment(&h.group)),
        "groupType": protocol_name(h.protocol),
        "sinceStableMs": u64::try_from(h.since_stable.as_millis()).unwrap_or(u64::MAX),
        "error": h.error,
        "lastRebalance": h.last_rebalance.map(|(at, cause)| json!({
            "atMs": at,
            "cause": match cause { RebalanceCause::Moved(c) => cause_label(c), RebalanceCause::NoMove => "none" },
        })),
    });
    if let Some(l) = &h.look {
        let sum = |f: fn(&super::TaskCounts) -> usize| l.tasks.values().map(f).sum::<usize>();
        v["lastLookMs"] = l.at_ms.into();
        v["groupState"] = l.state.clone().into();
        v["epoch"] = l.epoch.into();
        v["members"] = l.members.into();
        v["processes"] = l.tasks.len().into();
        v["activeTasks"] = sum(|c| c.active).into();
        v["standbyTasks"] = sum(|c| c.standby).into();
        v["warmupTasks"] = sum(|c| c.warmup).into();
        v["withoutActive"] = l.without_active.iter().cloned().collect::<Vec<_>>().into();
        v["warmups"] = serde_json::to_value(&l.warmups).unwrap_or(Value::Null);
    }
    v
}

impl Home {
    /// No group yet, the cluster through `bootstrap` not looked at yet.
    pub fn new(bootstrap: &str) -> Self {
        let inner = HomeInner {
            seq: 0,
            bootstrap: bootstrap.to_owned(),
            cluster: json!({ "state": "connecting", "sinceMs": now_ms() }),
            rows: BTreeMap::new(),
            changes: VecDeque::new(),
        };
        Self {
            inner: Mutex::new(inner),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HomeInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, mut inner: MutexGuard<'_, HomeInner>, change: Value) {
        inner.seq += 1;
        let seq = inner.seq;
        inner.changes.push_back(Change {
            seq,
            data: Arc::from(change.to_string()),
        });
        while inner.changes.len() > MAX_PENDING {
            inner.changes.pop_front();
        }
        drop(inner);
        self.changed.notify_all();
    }

    /// A group found and not looked at yet.
    pub fn set_pending(&self, group: &str, protocol: Protocol) {
        let row = json!({
            "group": group,
            "path": format!("groups/{}/", encode_segment(group)),
            "groupType": protocol_name(protocol),
        });
        let mut inner = self.lock();
        inner.rows.insert(group.to_owned(), row.clone());
        self.push(inner, json!({ "set": row }));
    }

    /// A group's row after a look; a change only when the row changed.
    pub fn set(&self, h: &Health) {
        let row = row(h);
        let mut inner = self.lock();
        let same = inner.rows.get(&h.group).is_some_and(|old| {
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("lastLookMs");
                    m.remove("sinceStableMs");
                }
                v
            };
            strip(old) == strip(&row)
        });
        inner.rows.insert(h.group.clone(), row.clone());
        if !same {
            self.push(inner, json!({ "set": row }));
        }
    }

    /// A group no longer followed.
    pub fn remove(&self, group: &str) {
        let mut inner = self.lock();
        if inner.rows.remove(group).is_some() {
            self.push(inner, json!({ "remove": group }));
        }
    }

    /// Whether the last discovery reached the cluster, and its error.
    pub fn set_cluster(&self, reachable: bool, error: Option<String>) {
        let mut inner = self.lock();
        let state = if reachable { "connected" } else { "lost" };
        if inner.cluster["state"] == state && inner.cluster["error"] == json!(error) {
            return;
        }
        inner.cluster = json!({ "state": state, "sinceMs": now_ms(), "error": error });
        let c = inner.cluster.clone();
        self.push(inner, json!({ "cluster": c }));
    }
}

impl Feed for Home {
    fn snapshot(&self) -> (u64, String) {
        let inner = self.lock();
        let groups: Vec<&Value> = inner.rows.values().collect();
        (
            inner.seq,
            json!({ "bootstrap": inner.bootstrap, "cluster": inner.cluster, "groups": groups })
                .to_string(),
        )
    }

    fn wait(&self, after: u64, timeout: Duration) -> Waited {
        let until = Instant::now() + timeout;
        let mut inner = self.lock();
        loop {
            if inner.seq > after {
                return match inner.changes.front() {
                    Some(first) if first.seq <= after + 1 => Waited::Changes(
                        inner
                            .changes
                            .iter()
                            .filter(|c| c.seq > after)
                            .cloned()
                            .collect(),
                    ),
                    _ => Waited::Behind,
                };
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Waited::Nothing;
            }
            inner = self
                .changed
                .wait_timeout(inner, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}
