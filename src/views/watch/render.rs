//! Lines and JSON records: one line per generation, a progress line while waiting, the summary
//! at the end, and the `--json` record of each generation.
//!
//! Process ids are shortened to their first 8 characters in lines (the records keep them
//! whole); lags are records, rates records per second, times as `describe` writes them.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::views::watch::{Generation, Move, Protocol, Replica, Summary, Waiting, WarmupProgress};
use crate::views::describe::text::{duration_text, iso_millis};

/// The first 8 characters of a process id.
fn short(process: &str) -> &str {
    process.get(..8).unwrap_or(process)
}

fn replica(r: &Option<Replica>) -> String {
    r.as_ref().map_or_else(|| "-".to_owned(), |r| format!("{} {}", short(&r.process_id), r.role.name()))
}

fn move_text(m: &Move) -> String {
    format!("{} {} -> {} ({})", m.task, replica(&m.from), replica(&m.to), m.cause.text())
}

fn warmup_text(w: &WarmupProgress) -> String {
    let mut s = format!("{}@{}", w.task, short(&w.process_id));
    match w.lag {
        Some(l) => {
            let _ = write!(s, " lag {l}");
        }
        None => s.push_str(" lag unknown"),
    }
    if let Some(r) = w.restore_rate {
        let _ = write!(s, " {r:.0}/s");
    }
    match (w.caught_up, w.eta_ms) {
        (true, _) => s.push_str(" caught up"),
        (false, Some(eta)) => {
            let _ = write!(s, " ~{}", duration_text(eta));
        }
        (false, None) => {}
    }
    s
}

fn epoch_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Classic => "generation",
        Protocol::Streams => "epoch",
    }
}

fn epoch_text(protocol: Protocol, epoch: Option<i32>) -> String {
    match epoch {
        Some(e) => format!("{} {e}", epoch_name(protocol)),
        None => format!("{} ?", epoch_name(protocol)),
    }
}

impl Generation {
    /// The generation in one line: members, who joined and left, every move with its cause,
    /// the warm-ups, the replay and the metadata size.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} {}: {} process(es), {} member(s)",
            iso_millis(self.at_ms),
            epoch_text(self.protocol, self.epoch),
            self.processes,
            self.members
        );
        // By process: a process's members (one per stream thread) come and go together.
        let names = |c: &[crate::views::watch::MemberChange]| {
            let mut by: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
            for m in c {
                by.entry(m.process_id.as_str()).or_default().push(m.member_id.as_str());
            }
            by.iter()
                .map(|(p, ms)| match ms.as_slice() {
                    [one] => format!("{} ({one})", short(p)),
                    many => format!("{} ({} members)", short(p), many.len()),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.first {
            s.push_str("; first look");
        }
        if !self.joined.is_empty() {
            let _ = write!(s, "; joined {}", names(&self.joined));
        }
        if !self.left.is_empty() {
            let _ = write!(s, "; left {}", names(&self.left));
        }
        if !self.first {
            match self.moves.len() {
                0 => s.push_str("; no task moved"),
                n => {
                    let _ = write!(s, "; {n} move(s): {}", self.moves.iter().map(move_text).collect::<Vec<_>>().join(", "));
                }
            }
        }
        if !self.warmups.is_empty() {
            let _ = write!(s, "; warm-ups: {}", self.warmups.iter().map(warmup_text).collect::<Vec<_>>().join(", "));
        }
        if let Some(r) = &self.replay {
            match &r.error {
                Some(e) => {
                    let _ = write!(s, "; replay failed: {e}");
                }
                None => {
                    let verdict = if r.agrees() { "agrees" } else { "differs" };
                    let estimated = if r.end_offsets_estimated { ", end offsets estimated" } else { "" };
                    let excluded = match r.excluded.len() {
                        0 => String::new(),
                        n => format!(", {n} process(es) without tasks left out"),
                    };
                    let _ = write!(
                        s,
                        "; replay {verdict} ({}, {}/{} processes, {}/{} tasks{estimated}{excluded})",
                        r.assignor, r.processes_agreeing, r.processes, r.tasks_agreeing, r.tasks
                    );
                }
            }
        }
        if let Some(t) = self.probing_rebalance_at_ms {
            let _ = write!(s, "; probing rebalance at {}", iso_millis(t));
        }
        if let Some(size) = &self.record_size {
            let _ = write!(s, "; {}", size.summary());
        }
        s
    }

    /// The `--json` record: the generation as [`Generation`] serialises it, its epoch named as
    /// Kafka names it (`generationId`, `groupEpoch`), and, for a classic generation, `input`: the
    /// replay's input, which `kstreams-assignor assign --input` takes.
    pub fn record(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("JSON");
        if let Some(map) = v.as_object_mut() {
            let epoch = map.remove("epoch").unwrap_or(Value::Null);
            let key = match self.protocol {
                Protocol::Classic => "generationId",
                Protocol::Streams => "groupEpoch",
            };
            map.insert(key.to_owned(), epoch);
            map.insert("input".to_owned(), self.input.as_ref().map_or(Value::Null, |i| serde_json::to_value(i).expect("JSON")));
        }
        v
    }
}

impl Waiting {
    /// The progress line while no new generation comes (`protocol` names the epoch).
    pub fn line(&self, protocol: Protocol) -> String {
        let mut s = if self.members == 0 {
            format!("no members (state {})", self.state)
        } else if self.rebalancing {
            format!("rebalancing (state {}), {} member(s)", self.state, self.members)
        } else {
            format!("{}, state {}, {} member(s)", epoch_text(protocol, self.epoch), self.state, self.members)
        };
        let restoring: Vec<String> = self.warmups.iter().filter(|w| !w.caught_up).map(warmup_text).collect();
        if !restoring.is_empty() {
            let _ = write!(s, "; restoring {}", restoring.join(", "));
        }
        if let Some(t) = self.probing_rebalance_at_ms {
            let left = t - self.at_ms;
            if left > 0 {
                let _ = write!(s, "; probing rebalance in {}", duration_text(left));
            } else {
                let _ = write!(s, "; probing rebalance due {} ago", duration_text(-left));
            }
        }
        s
    }
}

impl Summary {
    /// The summary line at the end.
    pub fn line(&self) -> String {
        let mut s = format!("watched {} look(s), {} generation(s)", self.looks, self.generations);
        let moves: usize = self.moves_by_cause.values().sum();
        if moves == 0 {
            s.push_str("; no task moved");
        } else {
            let by: Vec<String> = self.moves_by_cause.iter().map(|(c, n)| format!("{} {n}", c.text())).collect();
            let _ = write!(s, "; {moves} move(s): {}", by.join(", "));
        }
        if self.replays > 0 {
            let _ = write!(s, "; replay agreed on {} of {} generation(s)", self.replays_agreeing, self.replays);
        }
        s
    }

    /// The summary as JSON.
    pub fn record(&self) -> Value {
        json!({ "summary": serde_json::to_value(self).expect("JSON") })
    }
}
