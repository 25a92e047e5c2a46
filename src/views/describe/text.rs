//! A described group as text and as JSON.
//!
//! The text is made for a terminal 100 columns wide ([`WIDTH`]): a header, one row per member
//! under column headers, then per member its tasks (lists wrapped to the width), its next
//! rebalance as an ISO 8601 timestamp with the time left, and its lags at the last join.
//! [`DescribedGroup::details`] adds the rest (client, host, endpoint, rack, versions, the sizes
//! of the raw metadata, the offset sums); the JSON has everything, with Kafka's field names.
//! Every figure carries its unit: `ms`, `s`, `bytes`, `KiB`, records for lags and offset sums.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::views::describe::{DescribedGroup, DescribedMember};
use crate::engine::TaskLag;
use crate::wire::{AssignmentInfo, TaskId};
use crate::wire::inspect::{self, Kind};

/// The width the text fits.
pub const WIDTH: usize = 100;

/// Where the values of a member's labelled lines start.
pub(crate) const LABEL: usize = 30;

/// An epoch time in ms as an ISO 8601 UTC timestamp, to the millisecond.
///
/// ```
/// use kstreams_assignor::views::describe::text::iso_millis;
///
/// assert_eq!(iso_millis(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(iso_millis(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
/// assert_eq!(iso_millis(-1), "1969-12-31T23:59:59.999Z");
/// ```
pub fn iso_millis(epoch_ms: i64) -> String {
    let (secs, ms) = (epoch_ms.div_euclid(1_000), epoch_ms.rem_euclid(1_000));
    let (days, day_secs) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (day_secs / 3_600, day_secs % 3_600 / 60, day_secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (the civil-from-days algorithm
/// of H. Hinnant's "chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A duration in ms, in the two largest units that matter: `250 ms`, `4 min 59 s`, `3 h 5 min`.
///
/// ```
/// use kstreams_assignor::views::describe::text::duration_text;
///
/// assert_eq!(duration_text(250), "250 ms");
/// assert_eq!(duration_text(299_000), "4 min 59 s");
/// assert_eq!(duration_text(90_061_000), "1 d 1 h");
/// ```
pub fn duration_text(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1_000 {
        return format!("{ms} ms");
    }
    let s = ms / 1_000;
    let units = [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")];
    let Some(i) = units.iter().position(|(n, _)| s >= *n) else { return format!("{s} s") };
    let (big, big_name) = units[i];
    match units.get(i + 1) {
        Some(&(small, small_name)) if s % big / small > 0 => format!("{} {big_name} {} {small_name}", s / big, s % big / small),
        _ => format!("{} {big_name}", s / big),
    }
}

/// A byte count with its unit: `812 bytes`, `1.5 KiB`, `2.0 MiB`.
fn bytes_text(n: usize) -> String {
    match n {
        0..1_024 => format!("{n} bytes"),
        1_024..1_048_576 => format!("{:.1} KiB", n as f64 / 1_024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// `text` cut to `width` characters, with `…` when cut.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `label` padded to the value column, then `items` separated by `sep`, wrapped to [`WIDTH`]
/// with continuation lines indented to the value column.
pub(crate) fn wrapped(out: &mut String, label: &str, items: &[String], sep: &str) {
    let mut line = format!("  {label:<w$}", w = LABEL - 2);
    if line.chars().count() > LABEL {
        line.push(' ');
    }
    if items.is_empty() {
        line.push('-');
    }
    let mut first = true;
    for item in items {
        let piece = if first { item.clone() } else { format!("{sep}{item}") };
        if !first && line.chars().count() + piece.chars().count() > WIDTH {
            let _ = writeln!(out, "{}", line.trim_end());
            line = format!("{:LABEL$}{item}", "");
        } else {
            line.push_str(&piece);
        }
        first = false;
    }
    let _ = writeln!(out, "{line}");
}

fn task_list<'a>(tasks: impl IntoIterator<Item = &'a TaskId>) -> Vec<String> {
    tasks.into_iter().map(TaskId::to_string).collect()
}

fn lag_text(l: TaskLag) -> String {
    match l {
        TaskLag::RUNNING_ACTIVE => "running".into(),
        TaskLag::UNKNOWN => "unknown".into(),
        TaskLag(n) => n.to_string(),
    }
}

/// The label of the lags at the last join, with the subscription's generation.
fn lag_label(m: &DescribedMember) -> String {
    match m.subscription_generation_id() {
        g if g >= 0 => format!("lag at last join (after generation {g}), records"),
        _ => "lag at last join, records".to_owned(),
    }
}

/// The first 8 hex digits of the process id, or `-`.
fn short_process(m: &DescribedMember) -> String {
    m.subscription.as_ref().map_or("-".into(), |(_, info)| info.process_id.to_string().chars().take(8).collect())
}

impl DescribedGroup {
    /// The group as JSON, with Kafka's field names (`memberId`, `memberMetadata` …; the decoded
    /// metadata as the `decode` command prints it). With a topology, each member has
    /// `reportedLagAtJoin` (task → lag; -2 running, -1 unknown) and `generationId`, the
    /// generation its subscription carries (see the [module docs](super#lags-at-the-last-join)).
    /// `lagNote` says why lags are missing, `rebalancing` holds the
    /// [rebalancing note](DescribedGroup::rebalancing_note) while the group rebalances.
    pub fn to_json(&self) -> Value {
        let members: Vec<Value> = self
            .members
            .iter()
            .map(|m| {
                let decoded = |bytes: &[u8], kind| {
                    if bytes.is_empty() {
                        return Value::Null;
                    }
                    inspect::decode(bytes, Some(kind))
                        .map_or_else(|e| json!({ "error": e.to_string(), "hex": hex::encode(bytes) }), |d| d.json)
                };
                let mut v = json!({
                    "memberId": m.member_id,
                    "groupInstanceId": m.group_instance_id,
                    "clientId": m.client_id,
                    "clientHost": m.client_host,
                    "memberMetadata": decoded(&m.member_metadata, Kind::SubscriptionEnvelope),
                    "memberAssignment": decoded(&m.member_assignment, Kind::AssignmentEnvelope),
                });
                if let Some(lags) = &m.reported_lag_at_join {
                    v["generationId"] = m.subscription_generation_id().into();
                    v["reportedLagAtJoin"] =
                        lags.iter().map(|(t, l)| (t.to_string(), Value::from(l.0))).collect::<serde_json::Map<_, _>>().into();
                }
                v
            })
            .collect();
        let mut out = json!({
            "groupId": self.group_id,
            "groupState": self.group_state,
            "protocolType": self.protocol_type,
            "protocolData": self.protocol_data,
            "members": members,
        });
        if let Some(n) = &self.lag_note {
            out["lagNote"] = Value::from(n.clone());
        }
        if let Some(n) = self.rebalancing_note() {
            out["rebalancing"] = Value::from(n);
        }
        out["groupRecordSize"] = serde_json::to_value(self.record_size()).expect("JSON");
        out
    }

    /// The group as text that fits [`WIDTH`] columns, at `now_ms` (epoch ms; for the time left
    /// to each next rebalance).
    pub fn table(&self, now_ms: i64) -> String {
        self.render(now_ms, false)
    }

    /// [`table`](Self::table) with every detail; lines may be longer than [`WIDTH`].
    pub fn details(&self, now_ms: i64) -> String {
        self.render(now_ms, true)
    }

    fn render(&self, now_ms: i64, verbose: bool) -> String {
        let mut s = String::new();
        let header = format!(
            "group {}: state {}, protocol {}/{}, {} member(s)",
            self.group_id,
            self.group_state,
            self.protocol_type,
            self.protocol_data,
            self.members.len()
        );
        let _ = writeln!(s, "{}", if verbose { header } else { fit(&header, WIDTH) });
        if let Some(n) = self.rebalancing_note() {
            let _ = writeln!(s, "{n}");
        }
        if let Some(n) = &self.lag_note {
            let _ = writeln!(s, "no lags: {n}");
        }
        let size = self.record_size();
        let _ = writeln!(s, "{}", size.summary());
        if let Some(w) = size.warning() {
            let _ = writeln!(s, "{w}");
        }
        if self.members.is_empty() {
            return s;
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "{:<36}  {:<8}  {:<22}  {:>12}  {:>13}", "MEMBER", "PROCESS", "CLIENT HOST", "ACTIVE TASKS", "STANDBY TASKS");
        for m in &self.members {
            let (active, standby) = match &m.assignment {
                // `active_tasks` has an entry per assigned partition: a task reading two
                // partitions (a join) is listed twice.
                Some(Ok((_, a))) => (active_task_set(a).len().to_string(), a.standby_task_ids().len().to_string()),
                Some(Err(_)) => ("?".into(), "?".into()),
                None => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                s,
                "{:<36}  {:<8}  {:<22}  {active:>12}  {standby:>13}",
                fit(&m.member_id, 36),
                short_process(m),
                fit(&m.client_host, 22)
            );
        }
        for m in &self.members {
            let _ = writeln!(s);
            self.member(&mut s, m, now_ms, verbose);
        }
        s
    }

    fn member(&self, s: &mut String, m: &DescribedMember, now_ms: i64, verbose: bool) {
        let line = format!("member {}", m.member_id);
        let _ = writeln!(s, "{}", if verbose { line } else { fit(&line, WIDTH) });
        if verbose {
            let instance = m.group_instance_id.as_deref().unwrap_or("-");
            let _ = writeln!(s, "  client {}, host {}, instance {instance}", m.client_id, m.client_host);
        }
        let assignment = if m.member_assignment.is_empty() { "none".into() } else { bytes_text(m.member_assignment.len()) };
        let _ = writeln!(s, "  subscription {}, assignment {assignment}", bytes_text(m.member_metadata.len()));
        match &m.subscription {
            Err(_) if m.member_metadata.is_empty() => {
                let _ = writeln!(s, "  metadata: none yet (the group is rebalancing)");
            }
            Err(e) => {
                let _ = writeln!(s, "  metadata: does not decode: {e}");
            }
            Ok((env, info)) => {
                let endpoint = info.user_end_point().filter(|e| !e.is_empty()).unwrap_or_else(|| "-".into());
                let _ = writeln!(s, "  process {}, endpoint {endpoint}, rack {}", info.process_id, env.rack().unwrap_or("-"));
                if verbose {
                    let _ = writeln!(
                        s,
                        "  subscription v{} (latest supported v{}), owned partitions of generation {}",
                        info.version, info.latest_supported_version, env.generation_id
                    );
                    let sums: Vec<String> = info.offset_sums().iter().map(|(t, v)| format!("{t} {v}")).collect();
                    wrapped(s, "offset sums at last join, records", &sums, ", ");
                }
                if let Some(lags) = &m.reported_lag_at_join {
                    let l: Vec<String> = lags.iter().map(|(t, l)| format!("{t} {}", lag_text(*l))).collect();
                    wrapped(s, &lag_label(m), &l, ", ");
                } else if !verbose {
                    let sums: Vec<String> = info.offset_sums().iter().map(|(t, v)| format!("{t} {v}")).collect();
                    wrapped(s, "offset sums at last join, records", &sums, ", ");
                }
            }
        }
        match &m.assignment {
            None => {
                let _ = writeln!(s, "  assignment: none yet");
            }
            Some(Err(e)) => {
                let _ = writeln!(s, "  assignment: does not decode: {e}");
            }
            Some(Ok((_, info))) => {
                let active = active_task_set(info);
                wrapped(s, &format!("active tasks ({})", active.len()), &task_list(active), " ");
                let standby = info.standby_task_ids();
                wrapped(s, &format!("standby, incl. warm-up ({})", standby.len()), &task_list(standby.iter()), " ");
                let next = match info.next_rebalance.deadline() {
                    None => "none".to_owned(),
                    Some(t) if t <= now_ms => format!("{} (due {} ago)", iso_millis(t), duration_text(now_ms - t)),
                    Some(t) => format!("{} (in {})", iso_millis(t), duration_text(t - now_ms)),
                };
                let _ = writeln!(s, "  {:<w$}{next}", "next rebalance", w = LABEL - 2);
                if !info.error_code.is_none() {
                    let _ = writeln!(s, "  {:<w$}{}", "error", info.error_code, w = LABEL - 2);
                }
                if verbose {
                    let _ = writeln!(s, "  assignment v{} (commonly supported v{})", info.version, info.commonly_supported_version);
                }
            }
        }
    }
}

/// A member's active tasks, each once (the `AssignmentInfo` lists a task once per partition).
fn active_task_set(info: &AssignmentInfo) -> BTreeSet<&TaskId> {
    info.active_tasks.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::describe::DescribedMember;
    use crate::wire::{AssignmentEnvelope, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TopicPartition};

    /// A member of a stream-table join: each of its three tasks reads two partitions.
    fn joined_member() -> DescribedMember {
        let tasks: Vec<TaskId> = (0..3).map(|p| TaskId::new(0, p)).collect();
        let partitions: Vec<TopicPartition> =
            ["customers", "orders"].iter().flat_map(|t| (0..3).map(move |p| TopicPartition::new(*t, p))).collect();
        // One entry per partition, in the order of the sorted partitions.
        let info = AssignmentInfo::new(11).with_active_tasks(partitions.iter().map(|p| TaskId::new(0, p.partition)).collect());
        let envelope = AssignmentEnvelope::new(&partitions, Some(info.encode().unwrap()));
        let sub = SubscriptionInfo::new(11, ProcessId::NIL);
        let sub_env = SubscriptionEnvelope::new(vec!["customers".into(), "orders".into()], Some(sub.encode().unwrap()));
        assert_eq!(info.active_tasks.len(), 6);
        assert_eq!(active_task_set(&info).len(), tasks.len());
        DescribedMember {
            member_id: "m-1".into(),
            group_instance_id: None,
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            member_metadata: sub_env.encode().unwrap(),
            member_assignment: envelope.encode().unwrap(),
            subscription: Ok((sub_env, sub)),
            assignment: Some(Ok((envelope, info))),
            reported_lag_at_join: None,
        }
    }

    #[test]
    fn the_table_counts_tasks_not_the_partitions_they_read() {
        let group = DescribedGroup {
            group_id: "g".into(),
            group_state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol_data: "stream".into(),
            members: vec![joined_member()],
            lag_note: None,
            tasks: None,
            record_limit_bytes: None,
        };
        let text = group.table(0);
        let row = text.lines().find(|l| l.starts_with("m-1 ")).unwrap();
        let counts: Vec<&str> = row.split_whitespace().rev().take(2).collect();
        assert_eq!(counts, ["0", "3"], "{text}");
        assert!(text.contains("active tasks (3)"), "{text}");
    }
}
