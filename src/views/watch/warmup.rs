//! Warm-up progress: each warm-up's remaining lag, the restore rate seen between two looks, and
//! when it should catch up.
//!
//! A copy's lag is its task's changelog end-offset sum less the offset sum the member reported
//! (a member reports -2 for a task it runs: no lag). Its restore rate is how much its offset sum
//! grew between two looks, per second, and the end offsets' own growth over the same time is
//! taken off: what is left is how fast the copy closes its lag. It has caught up once its lag
//! is at most `acceptable.recovery.lag`; the predicted time is the lag above that over the net
//! rate.
//!
//! What each protocol shows bounds this. A classic member reports offset sums only when it joins,
//! so a classic warm-up's lag and rate are as of each generation, the rate over the time between
//! the generations' first looks; its lag needs the changelogs' end offsets (fetched with a
//! topology). A streams member heartbeats its offsets and end offsets every
//! `task.offset.interval.ms`, so a streams warm-up is followed at every look, against the end
//! offsets it reported itself. Without a lag or a second look the figures are absent, never
//! guessed. A classic standby that lags more than `acceptable.recovery.lag` is shown too: the
//! protocol does not tell it from a warm-up unless the replay did.

use serde::Serialize;

use crate::views::watch::{MemberLook, Observation, Role};
use crate::engine::{AssignmentConfigs, TaskLag};
use crate::wire::UNKNOWN_END_OFFSET_SUM;

/// One restoring copy and how it progresses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WarmupProgress {
    /// The task.
    pub task: String,
    /// The process restoring it.
    pub process_id: String,
    /// A warm-up, or a classic standby that lags (see the [module docs](self)).
    pub role: Role,
    /// Records left to restore, when the end offsets are known.
    pub lag: Option<i64>,
    /// Net records per second closed since the previous look (restored less produced).
    pub restore_rate: Option<f64>,
    /// Whether the lag is within `acceptable.recovery.lag`.
    pub caught_up: bool,
    /// Milliseconds until it should be within `acceptable.recovery.lag`, at the net rate.
    pub eta_ms: Option<i64>,
}

/// The offset sum and end-offset sum of `task` on `process` in `o` (the largest over its members).
fn sums(o: &Observation, process: &str, task: &str) -> (Option<i64>, Option<i64>) {
    let members = || o.members.iter().filter(move |m: &&MemberLook| m.process_id == process);
    let offset = members().filter_map(|m| m.offset_sums.get(task).copied()).max();
    let end = members().filter_map(|m| m.end_offset_sums.get(task).copied()).max().or_else(|| o.end_offset_sums.get(task).copied());
    (offset, end)
}

/// The lag of an offset sum against an end-offset sum by Kafka's rule ([`TaskLag::compute`]: no
/// offset sum reported is a restore from scratch), 0 for a running task; unknown without the end
/// offsets or for an unknown offset sum (an overflowed sum, Long.MAX_VALUE, among them: it is no
/// position, so no lag follows from it).
fn lag(offset: Option<i64>, end: Option<i64>) -> Option<i64> {
    if offset == Some(UNKNOWN_END_OFFSET_SUM) {
        return None;
    }
    match TaskLag::compute(offset, end?) {
        TaskLag::RUNNING_ACTIVE => Some(0),
        TaskLag(l) => (l >= 0).then_some(l),
    }
}

/// The warm-ups of `look` (and its classic standbys that lag), with rates against `base`, an
/// earlier look of the same group.
///
/// ```
/// use kstreams_assignor::engine::AssignmentConfigs;
/// use kstreams_assignor::views::watch::{observe, warmup};
///
/// let mut before = observe::streams_look(0, 5, &[("m2", "p2", &[], &[], &["0_0"])]);
/// before.members[0].offset_sums.insert("0_0".into(), 0);
/// before.members[0].end_offset_sums.insert("0_0".into(), 100_000);
/// let mut now = before.clone();
/// now.at_ms = 10_000;
/// now.members[0].offset_sums.insert("0_0".into(), 50_000);
/// let p = &warmup::progress(&now, Some(&before), &AssignmentConfigs::default())[0];
/// assert_eq!(p.lag, Some(50_000));
/// assert_eq!(p.restore_rate, Some(5_000.0));
/// assert_eq!(p.eta_ms, Some(8_000), "40,000 records above the 10,000 acceptable at 5,000 a second");
/// ```
pub fn progress(look: &Observation, base: Option<&Observation>, configs: &AssignmentConfigs) -> Vec<WarmupProgress> {
    let acceptable = configs.acceptable_recovery_lag;
    let mut out = Vec::new();
    for (process, tasks) in look.roles() {
        for (task, role) in tasks {
            let (offset, end) = sums(look, process, task);
            let lag = lag(offset, end);
            let restoring = match role {
                Role::Warmup => true,
                Role::Standby => look.protocol == crate::views::watch::Protocol::Classic && lag.is_some_and(|l| l > acceptable),
                Role::Active => false,
            };
            if !restoring {
                continue;
            }
            let rate = base.and_then(|b| {
                let dt = look.at_ms.checked_sub(b.at_ms).filter(|&d| d > 0)? as f64 / 1_000.0;
                let (was, was_end) = sums(b, process, task);
                // Sentinels (negative, or an overflowed Long.MAX_VALUE) are no position to count from.
                let position = |o: Option<i64>| o.filter(|o| (0..UNKNOWN_END_OFFSET_SUM).contains(o));
                let restored = position(offset)? - position(was)?;
                let produced = match (end, was_end) {
                    (Some(e), Some(w)) => e - w,
                    _ => 0,
                };
                Some((restored - produced) as f64 / dt)
            });
            let caught_up = lag.is_some_and(|l| l <= acceptable);
            let eta_ms = match (lag, rate) {
                _ if caught_up => Some(0),
                (Some(l), Some(r)) if r > 0.0 => Some((((l - acceptable) as f64 / r) * 1_000.0).ceil() as i64),
                _ => None,
            };
            out.push(WarmupProgress { task: task.to_owned(), process_id: process.to_owned(), role, lag, restore_rate: rate, caught_up, eta_ms });
        }
    }
    out
}
