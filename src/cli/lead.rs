//! `lead` and `describe`: a group on a real broker.

use std::io::Write;
use std::path::PathBuf;

use kstreams_assignor::leader::config_keys::ConfigKeyError;
use kstreams_assignor::{engine, group, wire};

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
    group: String,
    /// The topology: the crate's topology JSON or `Topology#describe()` text.
    #[arg(long)]
    topology: PathBuf,
    /// Streams and consumer configs, `key=value` (repeatable): the task assignor's
    /// (`num.standby.replicas`, `acceptable.recovery.lag`, `max.warmup.replicas`,
    /// `probing.rebalance.interval.ms`, `rack.aware.assignment.*`, `internal.task.assignor.class`,
    /// and for `optimized` `stream.imbalance.percentage` and `max.spare.replicas`),
    /// `replication.factor`, `topic.*`, `session.timeout.ms`, `max.poll.interval.ms`,
    /// `heartbeat.interval.ms`, `request.timeout.ms`, `retry.backoff.ms`, `retry.backoff.max.ms`,
    /// `metadata.max.age.ms`, `client.id`, `group.instance.id`, `application.server`.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// Leave the group and exit after this many seconds (a number above 0, e.g. `90` or `0.5`).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, allow_negative_numbers = true)]
    exit_after: Option<std::time::Duration>,
    /// Leave the group and exit when standard input reaches its end.
    #[arg(long)]
    exit_on_stdin_close: bool,
    /// Be a client of the task assignment like a Java member (it still processes nothing),
    /// instead of leader-only.
    #[arg(long)]
    with_tasks: bool,
    /// The process id to subscribe with (default: a random one).
    #[arg(long)]
    process_id: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct DescribeArgs {
    /// Brokers, `host:port`, comma-separated (`a:9092,b:9092`): tried in turn.
    #[arg(long)]
    bootstrap: String,
    #[command(flatten)]
    net: super::NetArgs,
    /// The group (`application.id`).
    #[arg(long)]
    group: String,
    /// The topology (JSON or `describe()` text): with it, lags per task from the changelogs' end
    /// offsets; without it, offset sums.
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// The member configuration from `key=value` pairs, and `application.server`.
fn member_config(args: &LeadArgs) -> Result<(group::MemberConfig, Option<String>), String> {
    let mut config = group::MemberConfig::new(args.bootstrap[0].clone(), args.group.clone());
    config.bootstrap = super::split_servers(&args.bootstrap);
    config.security = args.net.security()?;
    config.leader_only = !args.with_tasks;
    let endpoint = config.set_all(key_values("--config", &args.configs)?).map_err(|e| match e {
        ConfigKeyError::Assignor(_) => e.to_string(),
        ConfigKeyError::Assignment(engine::SetConfigError::Invalid(_)) => format!("--config: {e}"),
        _ => format!("--config {e}"),
    })?;
    if let Some(timeout) = args.net.timeout {
        if args.configs.iter().any(|kv| kv.starts_with("request.timeout.ms=")) {
            return Err("give --timeout or --config request.timeout.ms, not both".into());
        }
        config.request_timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    }
    Ok((config, endpoint))
}

/// `lead`: the assignments go to standard output as they happen.
pub(crate) fn lead(args: LeadArgs) -> Result<String, String> {
    let topology = read_topology(&args.topology, &args.group)?;
    let (config, endpoint) = member_config(&args)?;
    let process_id = match &args.process_id {
        Some(p) => p.parse::<wire::ProcessId>().map_err(|e| format!("--process-id: {e}"))?,
        None => wire::ProcessId::random(),
    };
    let mut hook = group::StreamsMember::new(process_id);
    if let Some(e) = endpoint {
        hook = hook.with_endpoint(e);
    }
    let stopping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let s = stopping.clone();
        ctrlc::set_handler(move || s.store(true, std::sync::atomic::Ordering::SeqCst))
            .map_err(|e| format!("cannot install the signal handler: {e}"))?;
    }
    if args.exit_on_stdin_close {
        let s = stopping.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            s.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
    let deadline = args.exit_after.and_then(|d| std::time::Instant::now().checked_add(d));
    let mut stop = || stopping.load(std::sync::atomic::Ordering::SeqCst) || deadline.is_some_and(|d| std::time::Instant::now() >= d);
    eprintln!("process id {process_id}, group {}, {}", args.group, if config.leader_only { "leader-only" } else { "with tasks" });
    let mut member = group::GroupMember::new(config, topology, hook);
    let mut on_event = |event: group::MemberEvent| match event {
        group::MemberEvent::Assigned(record) => {
            let line = serde_json::to_string(&record).expect("JSON");
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}").and_then(|()| out.flush());
        }
        group::MemberEvent::Joined { generation_id, member_id, leader_id, members } => {
            let role = if leader_id == member_id { "leader" } else { "follower" };
            eprintln!("joined generation {generation_id} as {member_id} ({role}, {members} members)");
        }
        group::MemberEvent::Received { generation_id, assignment, rejoin_at } => {
            let line = serde_json::json!({
                "generationId": generation_id,
                "received": {
                    "activeTasks": assignment.active_tasks.keys().map(ToString::to_string).collect::<Vec<_>>(),
                    "standbyTasks": assignment.standby_tasks.keys().map(ToString::to_string).collect::<Vec<_>>(),
                    "errorCode": assignment.info.error_code,
                },
                "rejoinAtMs": rejoin_at,
            });
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}").and_then(|()| out.flush());
            eprintln!(
                "generation {generation_id}: {} active, {} standby tasks; rejoin at {}",
                assignment.active_tasks.len(),
                assignment.standby_tasks.len(),
                rejoin_at.map_or("never".to_owned(), |t| t.to_string())
            );
        }
        group::MemberEvent::TopicsCreated(topics) => eprintln!("created {}", topics.join(", ")),
        group::MemberEvent::Rejoining(why) => eprintln!("rejoining: {why}"),
        group::MemberEvent::Retrying { error, backoff_ms } => eprintln!("retrying in {backoff_ms} ms: {error}"),
        group::MemberEvent::Left(what) => eprintln!("{what}"),
        other => eprintln!("{other:?}"),
    };
    member.run(&mut stop, &mut on_event).map_err(|e| e.to_string())?;
    Ok(String::new())
}

/// `describe`: each member, decoded.
pub(crate) fn describe(args: DescribeArgs) -> Result<String, String> {
    let topology = args.topology.as_ref().map(|p| read_topology(p, &args.group)).transpose()?;
    let security = args.net.security()?;
    let timeout = args.net.timeout.unwrap_or(super::DEFAULT_TIMEOUT);
    let described = group::describe::describe_group(&args.bootstrap, &args.group, topology.as_ref(), &security, timeout)
        .map_err(|e| e.to_string())?;
    Ok(if args.json {
        format!("{}\n", serde_json::to_string_pretty(&described.to_json()).expect("JSON"))
    } else {
        described.table()
    })
}
