//! `lead --protocol streams` (also `join`): a member of a streams group that takes tasks as
//! the coordinator gives them, one JSON line per member epoch.

use std::io::Write;
use std::time::Instant;

use kstreams_assignor::member::streams::{StreamsEvent, StreamsGroupMember, StreamsMemberError, TopologySource, parse_endpoint, status_text};
use kstreams_assignor::member::MemberTasks;

use super::CliError;
use super::io::read_topology;
use super::lead::{LeadArgs, Stops, member_config, parse_process_id, print_line};

/// A line on standard error; a closed standard error is no panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The JSON line of one member epoch: Kafka's field names (`memberId`, `memberEpoch`,
/// `activeTasks`, …), task ids as `<subtopology>_<partition>`.
fn epoch_line(member_id: &str, epoch: i32, tasks: &MemberTasks, group_ready: bool, statuses: &[String]) -> String {
    let names = |set: &std::collections::BTreeSet<kstreams_assignor::wire::TaskId>| set.iter().map(ToString::to_string).collect::<Vec<_>>();
    serde_json::json!({
        "memberId": member_id,
        "memberEpoch": epoch,
        "activeTasks": names(&tasks.active),
        "standbyTasks": names(&tasks.standby),
        "warmupTasks": names(&tasks.warmup),
        "groupReady": group_ready,
        "status": statuses,
    })
    .to_string()
}

/// Joins the streams group of `args`: stops and exits as the classic `lead` does (0 after
/// leaving on a stop; 1 when it never joined or stopped on an error).
pub(crate) fn join(args: LeadArgs) -> Result<String, CliError> {
    let (config, endpoint) = member_config(&args)?;
    let source = match &args.topology {
        Some(path) => TopologySource::GroupOr(Box::new(read_topology(path, &args.group)?)),
        None => TopologySource::Group,
    };
    let process_id = parse_process_id(&args)?;
    let mut member = StreamsGroupMember::new(config, source, process_id);
    if let Some(e) = endpoint {
        member = member.with_endpoint(parse_endpoint(&e).map_err(|e| format!("--config {e}"))?);
    }
    let stops = Stops::install(&args)?;
    let (flag, reason) = (stops.flag.clone(), stops.reason.clone());
    let mut stop = || stops.due();
    say(&format!("process id {process_id}, group {}, streams protocol", args.group));
    let mut joined = false;
    let mut member_id = String::new();
    let mut outage: Option<(Instant, String)> = None;
    let mut on_event = |event: StreamsEvent| match event {
        StreamsEvent::CoordinatorFound { broker } => {
            if let Some((since, _)) = outage.take() {
                say(&format!("reconnected to {broker} after {:.1} s", since.elapsed().as_secs_f64()));
            }
        }
        StreamsEvent::TopologyDeclared { origin } => say(&format!("declaring {origin}")),
        StreamsEvent::Joined { member_id: id, epoch } => {
            joined = true;
            say(&format!("joined as {id} at epoch {epoch}"));
            member_id = id;
        }
        StreamsEvent::Reconciled { epoch, revoked, tasks } => {
            let revoked: Vec<String> = revoked.iter().map(ToString::to_string).collect();
            let gave_up = if revoked.is_empty() { String::new() } else { format!(" after revoking {}", revoked.join(" ")) };
            say(&format!("epoch {epoch}: {tasks}{gave_up}"));
        }
        StreamsEvent::Epoch { epoch, tasks, group_ready, statuses } => {
            let statuses: Vec<String> = statuses.iter().map(status_text).collect();
            print_line(&epoch_line(&member_id, epoch, &tasks, group_ready, &statuses), &reason, &flag);
        }
        StreamsEvent::Status(statuses) => {
            for s in &statuses {
                say(&format!("group status: {}", status_text(s)));
            }
        }
        StreamsEvent::Fenced { epoch, lost, why } => {
            say(&format!("{why}; at epoch {epoch} lost {lost}; joining again"));
            // Standard output's last line must not claim tasks the member no longer holds.
            let line = epoch_line(&member_id, 0, &MemberTasks::default(), false, &[format!("fenced: {why}")]);
            print_line(&line, &reason, &flag);
        }
        StreamsEvent::Retrying { error, backoff_ms } => {
            if outage.is_none() {
                say(&format!("{error}; retrying (first in {backoff_ms} ms)"));
                outage = Some((Instant::now(), error));
            }
        }
        StreamsEvent::Left(what) => say(&what),
        other => say(&format!("{other:?}")),
    };
    let outcome = member.run(&mut stop, &mut on_event);
    outcome.map_err(|e| match e {
        StreamsMemberError::TopologyMismatch(m) => CliError::TopologyMismatch(m),
        e => CliError::Failed(e.to_string()),
    })?;
    stops.report();
    if !joined {
        let last = outage.map(|(_, e)| format!(": {e}")).unwrap_or_default();
        return Err(format!("never joined group `{}` in {:.1} s{last}", args.group, stops.started.elapsed().as_secs_f64()).into());
    }
    Ok(String::new())
}
