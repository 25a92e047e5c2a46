//! `lead` and `describe`: a group on a real broker.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use kstreams_assignor::leader::LeaderError;
use kstreams_assignor::leader::config_keys::ConfigKeyError;
use kstreams_assignor::{client, engine, member, views, wire};

use super::CliError;
use super::io::{key_values, read_topology};

#[derive(clap::Args)]
pub(crate) struct LeadArgs {
    /// Brokers, `host:port`, comma-separated or repeated: tried in turn.
    #[arg(long, required = true)]
    bootstrap: Vec<String>,
    #[command(flatten)]
    net: super::NetArgs,
    /// The group (`application.id`).
    #[arg(long)]
    pub(crate) group: String,
    /// The rebalance protocol: `classic` (a consumer group; this member leads it) or `streams`
    /// (a KIP-1071 streams group: the coordinator assigns, this member takes tasks like a Java
    /// member).
    #[arg(long, value_enum, default_value = "classic")]
    pub(crate) protocol: Protocol,
    /// The topology: the crate's topology JSON or `Topology#describe()` text. Required on the
    /// classic protocol. On the streams protocol the member declares the group's own topology,
    /// and needs the file to be the group's first member, or when a sub-topology reads two topics
    /// or more (a join): the coordinator does not describe co-partition groups, so they come from
    /// the file. A file that is not the group's topology is refused before joining.
    #[arg(long)]
    pub(crate) topology: Option<PathBuf>,
    /// Streams and consumer configs, `key=value` (repeatable): the task assignor's
    /// (`num.standby.replicas`, `acceptable.recovery.lag`, `max.warmup.replicas`,
    /// `probing.rebalance.interval.ms`, `rack.aware.assignment.*`, `internal.task.assignor.class`,
    /// and for `optimized` `stream.imbalance.percentage` and `max.spare.replicas`),
    /// `replication.factor`, `topic.*`, `session.timeout.ms`, `max.poll.interval.ms`,
    /// `heartbeat.interval.ms`, `request.timeout.ms`, `retry.backoff.ms`, `retry.backoff.max.ms`,
    /// `metadata.max.age.ms`, `client.id`, `group.instance.id`, `application.server`.
    /// `client.rack`, `client.tag.<key>` (the streams protocol sends them).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub(crate) configs: Vec<String>,
    /// Leave the group and exit after this many seconds (a number above 0, e.g. `90` or `0.5`).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, allow_negative_numbers = true)]
    exit_after: Option<std::time::Duration>,
    /// Leave the group and exit when standard input reaches its end.
    #[arg(long)]
    exit_on_stdin_close: bool,
    /// Be a client of the task assignment like a Java member (it still processes nothing),
    /// instead of leader-only (classic protocol; on the streams protocol a member always takes
    /// tasks).
    #[arg(long)]
    with_tasks: bool,
    /// The process id to subscribe with (default: a random one).
    #[arg(long)]
    pub(crate) process_id: Option<String>,
}

/// The rebalance protocol `lead` (`join`) speaks.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Protocol {
    /// The consumer group protocol (JoinGroup/SyncGroup), Kafka Streams' classic one.
    Classic,
    /// KIP-1071's streams group protocol (StreamsGroupHeartbeat), Kafka 4.2 and later.
    Streams,
}

#[derive(clap::Args)]
pub(crate) struct DescribeArgs {
    #[command(flatten)]
    target: super::GroupArgs,
    /// The topology (JSON or `describe()` text) of a classic group: with it, lags per task from
    /// the changelogs' end offsets; without it, offset sums. A streams group's coordinator holds
    /// its topology and lags, so it needs none.
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Print every detail (client, host, endpoint, versions, sizes, offset sums); lines may be
    /// wider than 100 columns.
    #[arg(long, conflicts_with = "json")]
    verbose: bool,
}

/// The member configuration from `key=value` pairs, and `application.server`.
pub(crate) fn member_config(args: &LeadArgs) -> Result<(member::MemberConfig, Option<String>), String> {
    member_config_of(&args.bootstrap, &args.net, &args.group, &args.configs, !args.with_tasks)
}

/// The member's configuration from the options `lead` and `probe` share.
pub(crate) fn member_config_of(
    bootstrap: &[String],
    net: &super::NetArgs,
    group: &str,
    configs: &[String],
    leader_only: bool,
) -> Result<(member::MemberConfig, Option<String>), String> {
    let servers = super::split_servers(bootstrap);
    let first = servers.first().cloned().ok_or("--bootstrap names no server")?;
    let mut config = member::MemberConfig::new(first, group.to_owned());
    config.bootstrap = servers;
    config.security = net.security()?;
    config.leader_only = leader_only;
    let endpoint = config.set_all(key_values("--config", configs)?).map_err(|e| match e {
        ConfigKeyError::Assignor(_) => e.to_string(),
        ConfigKeyError::Assignment(engine::SetConfigError::Invalid(_)) => format!("--config: {e}"),
        _ => format!("--config {e}"),
    })?;
    if let Some(timeout) = net.timeout {
        if configs.iter().any(|kv| kv.starts_with("request.timeout.ms=")) {
            return Err("give --timeout or --config request.timeout.ms, not both".into());
        }
        config.request_timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    }
    Ok((config, endpoint))
}

/// Why `lead` is asked to stop, set once by whichever comes first.
pub(crate) const RUNNING: u8 = 0;
pub(crate) const SIGNALLED: u8 = 1;
pub(crate) const STDOUT_CLOSED: u8 = 2;
const STDIN_CLOSED: u8 = 3;

/// How long a stopped `lead` has to leave the group before it exits anyway.
const STOP_BUDGET: Duration = Duration::from_secs(1);

/// A line on standard error; a closed standard error (`lead … 2>&1 | head -1`) is no panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Asks the member to stop for `why` (the first reason wins) and raises its interrupt flag.
pub(crate) fn request_stop(reason: &AtomicU8, flag: &AtomicBool, why: u8) {
    let _ = reason.compare_exchange(RUNNING, why, Ordering::SeqCst, Ordering::SeqCst);
    flag.store(true, Ordering::SeqCst);
}

/// Writes one line to standard output; a closed standard output stops the member.
pub(crate) fn print_line(line: &str, reason: &AtomicU8, flag: &AtomicBool) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        request_stop(reason, flag, STDOUT_CLOSED);
    }
}

/// Watches standard output for a reader that went away (`lead … | head -1`): a pipe whose
/// reader closed reports `POLLERR`, without a write.
#[cfg(unix)]
pub(crate) fn watch_stdout(reason: Arc<AtomicU8>, flag: Arc<AtomicBool>) {
    use nix::poll::{PollFd, PollFlags, poll};
    use std::os::fd::AsFd;
    std::thread::spawn(move || {
        let stdout = std::io::stdout();
        loop {
            let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
            match poll(&mut fds, 200u16) {
                Ok(_) if fds[0].revents().is_some_and(|r| r.contains(PollFlags::POLLNVAL)) => return, // no standard output at all
                Ok(_) if fds[0].revents().is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)) => {
                    request_stop(&reason, &flag, STDOUT_CLOSED);
                    return;
                }
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    });
}

#[cfg(not(unix))]
pub(crate) fn watch_stdout(_reason: Arc<AtomicU8>, _flag: Arc<AtomicBool>) {}

/// The process id of `--process-id`, or a random one.
pub(crate) fn parse_process_id(args: &LeadArgs) -> Result<wire::ProcessId, String> {
    match &args.process_id {
        Some(p) => p.parse::<wire::ProcessId>().map_err(|e| format!("--process-id: {e}")),
        None => Ok(wire::ProcessId::random()),
    }
}

/// What stops a joined member: a signal, `--exit-after`, the end of standard input
/// (`--exit-on-stdin-close`) or a closed standard output; and the process's own end should the
/// member not leave within [`STOP_BUDGET`] of it.
pub(crate) struct Stops {
    pub(crate) flag: Arc<AtomicBool>,
    pub(crate) reason: Arc<AtomicU8>,
    pub(crate) started: Instant,
    deadline: Option<Instant>,
}

impl Stops {
    pub(crate) fn install(args: &LeadArgs) -> Result<Self, String> {
        Self::install_with(args.exit_after, args.exit_on_stdin_close)
    }

    /// As [`install`](Self::install), from `--exit-after` and `--exit-on-stdin-close`.
    pub(crate) fn install_with(exit_after: Option<Duration>, exit_on_stdin_close: bool) -> Result<Self, String> {
        let flag = Arc::new(AtomicBool::new(false));
        let reason = Arc::new(AtomicU8::new(RUNNING));
        {
            let (flag, reason) = (flag.clone(), reason.clone());
            ctrlc::set_handler(move || request_stop(&reason, &flag, SIGNALLED))
                .map_err(|e| format!("cannot install the signal handler: {e}"))?;
        }
        if exit_on_stdin_close {
            let (flag, reason) = (flag.clone(), reason.clone());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                request_stop(&reason, &flag, STDIN_CLOSED);
            });
        }
        watch_stdout(reason.clone(), flag.clone());
        {
            // Once asked to stop, the member leaves within about a second; should it not (a
            // connect that hangs), the process ends anyway.
            let flag = flag.clone();
            std::thread::spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                std::thread::sleep(STOP_BUDGET);
                say!("error: did not leave the group within {} ms of the stop; exiting", STOP_BUDGET.as_millis());
                std::process::exit(1);
            });
        }
        let started = Instant::now();
        let deadline = exit_after.and_then(|d| started.checked_add(d));
        Ok(Self { flag, reason, started, deadline })
    }

    /// Whether the member is to stop now.
    pub(crate) fn due(&self) -> bool {
        self.flag.load(Ordering::SeqCst) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Says why the member stopped, if something stopped it.
    pub(crate) fn report(&self) {
        match self.reason.load(Ordering::SeqCst) {
            SIGNALLED => say!("stopped by a signal"),
            STDOUT_CLOSED => say!("standard output closed: stopped"),
            STDIN_CLOSED => say!("standard input ended: stopped"),
            _ => {}
        }
    }
}

/// `lead`: the assignments go to standard output as they happen, progress and warnings to
/// standard error. It exits 0 after leaving the group at `--exit-after`, on SIGINT or SIGTERM,
/// when standard input ends (`--exit-on-stdin-close`) or when standard output closes; 3 when the
/// topology is not the members' own (after leaving, without assigning); 1 when it never joined
/// the group or stopped on another error.
pub(crate) fn lead(args: LeadArgs) -> Result<String, CliError> {
    let Some(topology_path) = &args.topology else {
        return Err(CliError::Failed("--topology is required on the classic protocol (the leader assigns the topology's tasks)".into()));
    };
    let topology = read_topology(topology_path, &args.group)?;
    let repartition: Vec<String> = topology.repartition_topics.iter().map(|r| topology.topic_name(&r.name)).collect();
    let (config, endpoint) = member_config(&args)?;
    let process_id = parse_process_id(&args)?;
    let mut hook = member::StreamsMember::new(process_id).with_client_tags(config.client_tags.clone());
    if let Some(e) = endpoint {
        hook = hook.with_endpoint(e);
    }
    let stops = Stops::install(&args)?;
    let (flag, reason, started) = (stops.flag.clone(), stops.reason.clone(), stops.started);
    let mut stop = || stops.due();
    say!("process id {process_id}, group {}, {}", args.group, if config.leader_only { "leader-only" } else { "with tasks" });
    let mut member = member::GroupMember::new(config, topology, hook).with_interrupt(flag.clone());
    let mut joined = false;
    let mut leader = false;
    // The first error of an outage and when it began; the coordinator last connected to.
    let mut outage: Option<(Instant, String)> = None;
    let mut coordinator = String::new();
    let mut on_event = |event: member::MemberEvent| match event {
        member::MemberEvent::Assigned(record) => {
            if let Some(code) = record.error_code {
                let reason = record.error.as_deref().unwrap_or("no reason given");
                say!(
                    "warning: generation {}: the leader's assignment carries error {} to every member: {reason}",
                    record.generation_id,
                    wire::AssignorError::from_code(code)
                );
            }
            print_line(&serde_json::to_string(&record).expect("JSON"), &reason, &flag);
        }
        member::MemberEvent::CoordinatorFound { broker } => {
            if let Some((since, _)) = outage.take() {
                say!("reconnected to {broker} after {:.1} s", since.elapsed().as_secs_f64());
            }
            coordinator = broker;
        }
        member::MemberEvent::Joined { generation_id, member_id, leader_id, members } => {
            if let Some((since, _)) = outage.take() {
                say!("rejoined through {coordinator} after {:.1} s", since.elapsed().as_secs_f64());
            }
            joined = true;
            leader = leader_id == member_id;
            let role = if leader { "leader" } else { "follower" };
            say!("joined generation {generation_id} as {member_id} ({role}, {members} members)");
        }
        member::MemberEvent::Received { generation_id, assignment, rejoin_at } => {
            let code = assignment.info.error_code;
            if !code.is_none() && !leader {
                say!("warning: generation {generation_id}: the leader's assignment carries error {code}");
            }
            let line = serde_json::json!({
                "generationId": generation_id,
                "received": {
                    "activeTasks": assignment.active_tasks.keys().map(ToString::to_string).collect::<Vec<_>>(),
                    "standbyTasks": assignment.standby_tasks.keys().map(ToString::to_string).collect::<Vec<_>>(),
                    "errorCode": code,
                },
                "rejoinAtMs": rejoin_at,
            });
            print_line(&line.to_string(), &reason, &flag);
            say!(
                "generation {generation_id}: {} active, {} standby tasks; rejoin at {}",
                assignment.active_tasks.len(),
                assignment.standby_tasks.len(),
                rejoin_at.map_or("never".to_owned(), views::describe::text::iso_millis)
            );
        }
        member::MemberEvent::TopicsCreated(topics) => say!("created {}", topics.join(", ")),
        member::MemberEvent::Rejoining(why) => say!("rejoining: {why}"),
        member::MemberEvent::Retrying { error, backoff_ms } => {
            // Once per outage: the error when it begins, then the recovery.
            if outage.is_none() {
                say!("{error}; retrying (first in {backoff_ms} ms)");
                outage = Some((Instant::now(), error));
            }
        }
        member::MemberEvent::Left(what) => say!("{what}"),
        other => say!("{other:?}"),
    };
    let outcome = member.run(&mut stop, &mut on_event);
    outcome.map_err(|e| refusal(e, &repartition))?;
    stops.report();
    if !joined {
        let last = outage.map(|(_, e)| format!(": {e}")).unwrap_or_default();
        return Err(format!("never joined group `{}` in {:.1} s{last}", args.group, started.elapsed().as_secs_f64()).into());
    }
    Ok(String::new())
}

/// How `lead` ends on a member's error: a topology that is not the members' own, or an internal
/// topic that exists with other partitions than the topology file gives it (`repartition`: the
/// repartition topics' Kafka names), is refused (exit code 3), as Kafka Streams' leader fails
/// on an existing internal topic of another partition count; anything else failed (1).
fn refusal(e: member::MemberError, repartition: &[String]) -> CliError {
    match e {
        member::MemberError::Leader(LeaderError::TopologyMismatch(m)) => CliError::TopologyMismatch(m.to_string()),
        member::MemberError::InternalTopic { topic, expected, actual, .. } if repartition.contains(&topic) => {
            CliError::TopologyMismatch(format!(
                "the repartition topic `{topic}` exists with {actual} partitions, but the topology file gives it {expected}, \
                 so the leader assigned nothing and left the group: either the application fixes its count \
                 (Repartitioned.withNumberOfPartitions({actual})), which a Topology#describe() text does not show, so give \
                 the topology JSON with \"partitions\": {actual} for it in repartitionTopics (docs/topology.md); or the topic \
                 is left from another version of the application, and must be deleted"
            ))
        }
        member::MemberError::InternalTopic { topic, expected, actual, .. } => CliError::TopologyMismatch(format!(
            "the changelog topic `{topic}` exists with {actual} partitions, but the topology needs {expected} (one per task \
             of its sub-topology), so the leader assigned nothing and left the group: the partition counts of the \
             application's source topics changed, or the topic is left from another version of the application"
        )),
        e => CliError::Failed(e.to_string()),
    }
}

/// `describe`: a classic group's members decoded, or a streams group as `StreamsGroupDescribe`
/// describes it.
pub(crate) fn describe(args: DescribeArgs) -> Result<String, String> {
    use views::streams::describe::{Described, describe_any};
    let target = &args.target;
    let topology = args.topology.as_ref().map(|p| read_topology(p, &target.group)).transpose()?;
    let security = target.net.security()?;
    let timeout = target.net.timeout_or_default();
    let described = describe_any(&target.bootstrap, &target.group, topology.as_ref(), &security, timeout).map_err(|e| e.to_string())?;
    let now = client::now_ms();
    Ok(match described {
        Described::Classic(g) if args.json => format!("{}\n", serde_json::to_string_pretty(&g.to_json()).expect("JSON")),
        Described::Classic(g) if args.verbose => g.details(now),
        Described::Classic(g) => g.table(now),
        Described::Streams(g) if args.json => format!("{}\n", serde_json::to_string_pretty(&g.to_json()).expect("JSON")),
        Described::Streams(g) if args.verbose => g.details(),
        Described::Streams(g) => g.table(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_topic_of_other_partitions_is_refused_in_words_with_exit_code_3() {
        let repartition = vec!["app-by-value-repartition".to_owned()];
        let internal = |topic: &str| member::MemberError::InternalTopic { topic: topic.to_owned(), expected: 4, actual: 2 };
        let CliError::TopologyMismatch(m) = refusal(internal("app-by-value-repartition"), &repartition) else { panic!("not refused") };
        assert!(m.starts_with("the repartition topic `app-by-value-repartition` exists with 2 partitions, but the topology file gives it 4"), "{m}");
        assert!(m.contains("\"partitions\": 2"), "{m}");
        let CliError::TopologyMismatch(m) = refusal(internal("app-counts-changelog"), &repartition) else { panic!("not refused") };
        assert!(m.starts_with("the changelog topic `app-counts-changelog` exists with 2 partitions, but the topology needs 4"), "{m}");
        assert!(matches!(refusal(member::MemberError::NotLeading { leader_id: "j".into(), tasks: Vec::new() }, &repartition), CliError::Failed(_)));
    }
}
