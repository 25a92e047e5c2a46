//! A described streams group as text and as JSON, in the style of the classic `describe`
//! ([`describe::text`](crate::views::describe::text)): a header, one row per member under
//! column headers, then per member its identity, epochs, current and target assignment (active,
//! standby and warm-up tasks each on their own line) and its reported lags, in 100 columns
//! ([`WIDTH`]); the topology's subtopologies with their topics last. `--verbose` adds the client,
//! the raw offset sums and the authorized operations. The JSON is the group as Kafka's
//! `StreamsGroupDescribeResponseDataJsonConverter` writes it, plus `groupType` and, per member,
//! `taskLags` (`null` where the lag is unknown) and, when some are unknown, `taskLagsUnknown`
//! with the reason for each.

use std::fmt::Write as _;

use serde_json::Value;

use crate::views::streams::describe::{ReportedLag, StreamsGroupDescription, member_lags};
use crate::client::streams::describe_response::{AUTHORIZED_OPERATIONS_OMITTED, strip_v1};
use crate::client::streams::{Assignment, Member, TaskIds, TopicInfo};
use crate::views::describe::text::{LABEL, WIDTH, fit, wrapped};

/// Tasks as `subtopologyId_partition`, in the broker's order.
fn tasks(ids: &[TaskIds]) -> Vec<String> {
    ids.iter().flat_map(|t| t.partitions.iter().map(move |p| format!("{}_{p}", t.subtopology_id))).collect()
}

fn count(ids: &[TaskIds]) -> usize {
    ids.iter().map(|t| t.partitions.len()).sum()
}

fn topics_with_partitions(topics: &[TopicInfo]) -> Vec<String> {
    topics
        .iter()
        .map(|t| match t.partitions {
            0 => t.name.clone(),
            n => format!("{} ({n} partitions)", t.name),
        })
        .collect()
}

/// One labelled line, the value at the value column.
fn line(s: &mut String, label: &str, value: &str) {
    let _ = writeln!(s, "{}", fit(&format!("  {label:<w$}{value}", w = LABEL - 2), WIDTH));
}

fn assignment(s: &mut String, prefix: &str, a: &Assignment) {
    wrapped(s, &format!("{prefix}active ({})", count(&a.active_tasks)), &tasks(&a.active_tasks), " ");
    wrapped(s, &format!("{prefix}standby ({})", count(&a.standby_tasks)), &tasks(&a.standby_tasks), " ");
    wrapped(s, &format!("{prefix}warm-up ({})", count(&a.warmup_tasks)), &tasks(&a.warmup_tasks), " ");
}

impl StreamsGroupDescription {
    /// The group as JSON: Kafka's field names (see the [module docs](self)); `taskLags` maps
    /// each task to the lag the member reported ([`member_lags`]).
    pub fn to_json(&self) -> Value {
        let mut g = serde_json::to_value(&self.group).unwrap_or(Value::Null);
        if let Some(obj) = g.as_object_mut() {
            strip_v1(obj, self.version);
            obj.insert("groupType".into(), "streams".into());
        }
        if let Some(members) = g.get_mut("members").and_then(Value::as_array_mut) {
            for (json, m) in members.iter_mut().zip(&self.group.members) {
                let lags = member_lags(m);
                json["taskLags"] = lags.iter().map(|(t, l)| (t.clone(), l.records().map_or(Value::Null, Value::from))).collect::<serde_json::Map<_, _>>().into();
                let unknown: serde_json::Map<_, _> =
                    lags.iter().filter_map(|(t, l)| match l { ReportedLag::Unknown(why) => Some((t.clone(), Value::from(why.reason()))), ReportedLag::Records(_) => None }).collect();
                if !unknown.is_empty() {
                    json["taskLagsUnknown"] = unknown.into();
                }
            }
        }
        g
    }

    /// The group as text that fits [`WIDTH`] columns.
    pub fn table(&self) -> String {
        self.render(false)
    }

    /// [`table`](Self::table) with every detail.
    pub fn details(&self) -> String {
        self.render(true)
    }

    fn render(&self, verbose: bool) -> String {
        let g = &self.group;
        let mut s = String::new();
        let header = format!("streams group {}: state {}, {} member(s)", g.group_id, g.group_state, g.members.len());
        let _ = writeln!(s, "{}", if verbose { header } else { fit(&header, WIDTH) });
        let assignor = match (self.version, &g.assignor_name) {
            (0, _) => "not in StreamsGroupDescribe v0".to_owned(),
            (_, None) => "-".to_owned(),
            (_, Some(a)) => a.clone(),
        };
        let epochs = format!("group epoch {}, target assignment epoch {}, assignor {assignor}", g.group_epoch, g.assignment_epoch);
        let _ = writeln!(s, "{}", fit(&epochs, WIDTH));
        let _ = writeln!(s, "{}", fit(&format!("StreamsGroupDescribe v{} from {}", self.version, self.coordinator), WIDTH));
        if verbose && g.authorized_operations != AUTHORIZED_OPERATIONS_OMITTED {
            let _ = writeln!(s, "authorized operations {:#x}", g.authorized_operations);
        }
        let reconciling = g.members.iter().filter(|m| m.member_epoch != g.assignment_epoch).count();
        if reconciling > 0 {
            let note = format!(
                "{reconciling} member(s) below the target assignment epoch {}: still moving to their target assignment",
                g.assignment_epoch
            );
            let _ = writeln!(s, "{}", fit(&note, WIDTH));
        }
        if !g.members.is_empty() {
            let _ = writeln!(s);
            let _ = writeln!(s, "{:<36}  {:<8}  {:>5}  {:>6}  {:>7}  {:>7}  CLIENT HOST", "MEMBER", "PROCESS", "EPOCH", "ACTIVE", "STANDBY", "WARM-UP");
            for m in &g.members {
                let a = &m.assignment;
                let _ = writeln!(
                    s,
                    "{:<36}  {:<8}  {:>5}  {:>6}  {:>7}  {:>7}  {}",
                    fit(&m.member_id, 36),
                    fit(&m.process_id, 8),
                    m.member_epoch,
                    count(&a.active_tasks),
                    count(&a.standby_tasks),
                    count(&a.warmup_tasks),
                    fit(&m.client_host, 17)
                );
            }
        }
        for m in &g.members {
            let _ = writeln!(s);
            self.member(&mut s, m, verbose);
        }
        self.topology(&mut s);
        s
    }

    fn member(&self, s: &mut String, m: &Member, verbose: bool) {
        let head = format!("member {}", m.member_id);
        let _ = writeln!(s, "{}", if verbose { head } else { fit(&head, WIDTH) });
        line(s, "process", &m.process_id);
        let instance = m.instance_id.as_deref().unwrap_or("-");
        line(s, "instance, rack", &format!("{instance}, {}", m.rack_id.as_deref().unwrap_or("-")));
        let endpoint = m.user_endpoint.as_ref().map_or("-".to_owned(), |e| format!("{}:{}", e.host, e.port));
        line(s, "endpoint", &endpoint);
        let tags: Vec<String> = m.client_tags.iter().map(|kv| format!("{}={}", kv.key, kv.value)).collect();
        wrapped(s, "client tags", &tags, ", ");
        let epochs = format!(
            "member {}, target assignment {}, topology {}{}",
            m.member_epoch,
            self.group.assignment_epoch,
            m.topology_epoch,
            if m.is_classic { " (a classic member, not upgraded yet)" } else { "" }
        );
        line(s, "epochs", &epochs);
        if verbose {
            line(s, "client", &format!("{}, host {}", m.client_id, m.client_host));
        }
        assignment(s, "", &m.assignment);
        if m.target_assignment == m.assignment {
            line(s, "target assignment", "the same");
        } else {
            assignment(s, "target ", &m.target_assignment);
        }
        let lags: Vec<String> = member_lags(m).into_iter().map(|(t, l)| format!("{t} {l}")).collect();
        if lags.is_empty() {
            line(s, "lag, records", "none reported");
        } else {
            wrapped(s, "lag (reported), records", &lags, ", ");
        }
        if verbose {
            let sums = |v: &[crate::client::streams::TaskOffset]| -> Vec<String> {
                v.iter().map(|t| format!("{}_{} {}", t.subtopology_id, t.partition, t.offset)).collect()
            };
            wrapped(s, "offset sums, records", &sums(&m.task_offsets), ", ");
            wrapped(s, "end offset sums, records", &sums(&m.task_end_offsets), ", ");
        }
    }

    fn topology(&self, s: &mut String) {
        let _ = writeln!(s);
        let Some(t) = &self.group.topology else {
            let _ = writeln!(s, "topology: none initialized");
            return;
        };
        let Some(subtopologies) = &t.subtopologies else {
            let _ = writeln!(s, "topology epoch {}: not initialized (source topics missing or partitioned wrongly)", t.epoch);
            return;
        };
        let _ = writeln!(s, "topology epoch {}, {} subtopology(ies)", t.epoch, subtopologies.len());
        for sub in subtopologies {
            let _ = writeln!(s, "{}", fit(&format!("subtopology {}", sub.subtopology_id), WIDTH));
            wrapped(s, "source topics", &sub.source_topics, ", ");
            wrapped(s, "repartition source topics", &topics_with_partitions(&sub.repartition_source_topics), ", ");
            wrapped(s, "repartition sink topics", &sub.repartition_sink_topics, ", ");
            wrapped(s, "changelog topics", &topics_with_partitions(&sub.state_changelog_topics), ", ");
        }
    }
}
