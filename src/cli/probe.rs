//! `probe`: a member of a streams group that runs no task and makes the coordinator assign again
//! when a warm-up has caught up, for the broker's `optimized` assignor.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use kstreams_assignor::member::streams::{ProbeError, ProbeEvent, StreamsEvent, StreamsMemberError, StreamsProber, Verdict};

use super::CliError;
use super::io::read_topology;
use super::lead::{Stops, member_config_of, print_line};

#[derive(clap::Args)]
pub(crate) struct ProbeArgs {
    /// Brokers, `host:port`, comma-separated or repeated: tried in turn.
    #[arg(long, required = true)]
    bootstrap: Vec<String>,
    #[command(flatten)]
    net: super::NetArgs,
    /// The streams group (`application.id`); its assignor must be `optimized`
    /// (`streams.assignor.name`), and a member of the application must have joined.
    #[arg(long)]
    group: String,
    /// How often to look at the group (`10s`, `500ms`, `2m`, or seconds). Members report their
    /// offsets every `streams.task.offset.interval.ms` (a group config, 60 s by default), and a
    /// warm-up that has caught up at once.
    #[arg(long, value_name = "DURATION", value_parser = super::parse_duration, default_value = "10s")]
    interval: Duration,
    /// Member configs, `key=value` (repeatable): `session.timeout.ms`, `heartbeat.interval.ms`,
    /// `request.timeout.ms`, `retry.backoff.ms`, `retry.backoff.max.ms`, `client.id`, `client.rack`.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// Leave the group and exit after this many seconds (a number above 0, e.g. `90` or `0.5`).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, allow_negative_numbers = true)]
    exit_after: Option<Duration>,
    /// Leave the group and exit when standard input reaches its end.
    #[arg(long)]
    exit_on_stdin_close: bool,
    /// The application's topology (the topology JSON or `Topology#describe()` text), needed
    /// when a sub-topology reads two topics or more (a join): the prober declares the group's own
    /// topology, and takes from the file the co-partition groups the coordinator does not
    /// describe. A file that is not the group's topology is refused before joining.
    #[arg(long)]
    topology: Option<PathBuf>,
}

/// A line on standard error; a closed standard error is no panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Probes the group until stopped: one JSON line per look on standard output (`groupEpoch`,
/// `assignmentEpoch`, `members`, `standbyTasks`, `verdict`, and `probe`, the tag's value when
/// this look asked for an assignment). Exits 0 after leaving on a stop, 1 when it never joined,
/// the group's assignor is not `optimized`, or the coordinator gave it a task.
pub(crate) fn probe(args: ProbeArgs) -> Result<String, CliError> {
    let topology = args.topology.as_ref().map(|path| read_topology(path, &args.group)).transpose()?;
    let (config, endpoint) = member_config_of(&args.bootstrap, &args.net, &args.group, &args.configs, false)?;
    if endpoint.is_some() {
        return Err(CliError::Failed("--config application.server: a prober serves no queries".into()));
    }
    let stops = Stops::install_with(args.exit_after, args.exit_on_stdin_close)?;
    let (flag, reason) = (stops.flag.clone(), stops.reason.clone());
    let mut stop = || stops.due();
    say(&format!("probing group {} every {:.1} s", args.group, args.interval.as_secs_f64()));
    let mut joined = false;
    let mut last_failure: Option<String> = None;
    let mut pending: Option<serde_json::Value> = None;
    let mut on_event = |event: ProbeEvent| match event {
        ProbeEvent::Member(StreamsEvent::TopologyDeclared { origin }) => say(&format!("declaring {origin}")),
        ProbeEvent::Member(StreamsEvent::Joined { member_id, epoch }) => {
            joined = true;
            say(&format!("joined as {member_id} at epoch {epoch}"));
        }
        ProbeEvent::Member(StreamsEvent::Retrying { error, backoff_ms }) => {
            say(&format!("{error}; retrying in {backoff_ms} ms"));
            last_failure = Some(error);
        }
        ProbeEvent::Member(StreamsEvent::Fenced { why, .. }) => say(&format!("{why}; joining again")),
        ProbeEvent::Member(StreamsEvent::Left(what)) => say(&what),
        ProbeEvent::Member(_) => {}
        ProbeEvent::Looked(look) => {
            let line = serde_json::to_value(&look).expect("JSON");
            if look.verdict == Verdict::MovesWaiting {
                pending = Some(line);
            } else {
                print_line(&line.to_string(), &reason, &flag);
            }
        }
        ProbeEvent::Probed { value } => {
            let mut line = pending.take().unwrap_or_default();
            line["probe"] = value.into();
            say(&format!("a caught-up copy is waiting: asked the coordinator to assign again (probe {value})"));
            print_line(&line.to_string(), &reason, &flag);
        }
        ProbeEvent::Unanswered { wait } => say(&format!(
            "the last probe moved nothing: the assignor sees the group otherwise (set streams.acceptable.recovery.lag and streams.num.warmup.replicas on the broker, as group.streams.*, not per group); next look in {:.1} s",
            wait.as_secs_f64()
        )),
        ProbeEvent::LookFailed(why) => say(&format!("could not look at the group: {why}; trying again in {:.1} s", args.interval.as_secs_f64())),
        other => say(&format!("{other:?}")),
    };
    let mut prober = StreamsProber::new(config, args.interval);
    if let Some(topology) = topology {
        prober = prober.with_topology(topology);
    }
    let outcome = prober.run(&mut stop, &mut on_event);
    outcome.map_err(|e| match e {
        ProbeError::Member(StreamsMemberError::TopologyMismatch(m)) => CliError::TopologyMismatch(m),
        e => CliError::Failed(e.to_string()),
    })?;
    stops.report();
    if !joined {
        let last = last_failure.map(|e| format!(": {e}")).unwrap_or_default();
        return Err(format!("never joined group `{}` in {:.1} s{last}", args.group, stops.started.elapsed().as_secs_f64()).into());
    }
    Ok(String::new())
}
