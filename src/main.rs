//! `kstreams-assignor`: the command line over the library.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use base64::Engine as _;
use clap::{Parser, Subcommand, ValueEnum};
use kstreams_assignor::wire::inspect::{self, Kind};
use kstreams_assignor::wire::{self, json};
use kstreams_assignor::{engine, group, leader, sim};
use serde_json::Value;

#[derive(Parser)]
#[command(name = "kstreams-assignor", version, about = "Kafka Streams' rebalance protocol, byte for byte")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode rebalance metadata (hex, base64, a raw file or stdin) and print it as JSON.
    Decode(DecodeArgs),
    /// Encode rebalance metadata from the JSON that `decode` prints.
    Encode(EncodeArgs),
    /// Run a task assignor on a group described in JSON and print the assignment.
    Assign(AssignArgs),
    /// Simulate successive rebalances of a group until the assignment is stable.
    Simulate(SimulateArgs),
    /// Join a Kafka Streams group on a real broker and lead it, taking no tasks (leader-only);
    /// prints each generation's assignment as one line of JSON.
    Lead(LeadArgs),
    /// Describe a Kafka Streams group: each member's subscription and assignment, decoded.
    Describe(DescribeArgs),
}

#[derive(clap::Args)]
struct LeadArgs {
    /// A broker, `host:port` (repeat for more).
    #[arg(long, required = true)]
    bootstrap: Vec<String>,
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
    /// Leave the group and exit after this many seconds.
    #[arg(long)]
    exit_after: Option<f64>,
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
struct DescribeArgs {
    /// A broker, `host:port`.
    #[arg(long)]
    bootstrap: String,
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

#[derive(clap::Args)]
struct AssignArgs {
    /// The group: configs, clients with their offset sums, tasks and changelog end offsets
    /// (see README; `-`: standard input).
    #[arg(long)]
    input: PathBuf,
    /// The assignor (Kafka's class name, simple or qualified, or `optimized`).
    #[arg(long, default_value = "HighAvailabilityTaskAssignor")]
    assignor: String,
    /// One line of JSON instead of pretty-printed.
    #[arg(long)]
    compact: bool,
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// The scenario (default: scale-out, a running stateful app gaining an instance).
    scenario: Option<String>,
    /// List the built-in scenarios.
    #[arg(long)]
    list: bool,
    /// The assignor (Kafka's class name, or `optimized`).
    #[arg(long, default_value = "HighAvailabilityTaskAssignor")]
    assignor: String,
    /// Seed for `random-churn`.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Records per second a task restores.
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().restore_records_per_sec)]
    restore_rate: i64,
    /// Records per second appended to each changelog.
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().produce_records_per_sec)]
    produce_rate: i64,
    /// Kafka Streams' `state.cleanup.delay.ms`: how long a member keeps the local state of a task
    /// it no longer owns (0: forever).
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().state_cleanup_delay_ms)]
    state_cleanup_delay_ms: i64,
    /// Write the full report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an SVG plot of load spread and restoring lag per round to this file.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Compare Kafka's HighAvailabilityTaskAssignor with the optimized assignor: on SCENARIO, or
    /// (with `all` or no scenario) on every built-in scenario and `--seeds` random-churn seeds.
    #[arg(long)]
    compare: bool,
    /// Random-churn seeds for `--compare`: `N` runs seeds 1 to N after the other built-in
    /// scenarios (the suite); `FIRST..=LAST` runs only those seeds, e.g. `101..=400`, which the
    /// suite does not see.
    #[arg(long, default_value = "100", value_parser = parse_seeds)]
    seeds: Seeds,
    /// Write the input of every rebalance to this directory as `round-<n>.json`, in `assign
    /// --input` form (`round-0.json`: the starting assignment), to replay it with `assign`.
    #[arg(long, value_name = "DIR", conflicts_with = "compare")]
    inputs: Option<PathBuf>,
    /// A task assignor config (Kafka's key, or this crate's `stream.imbalance.percentage` or
    /// `max.spare.replicas`) that overrides the scenario's in every scenario run, e.g.
    /// `max.warmup.replicas=4`; repeatable.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// With `--compare`: a task assignor config that only the optimized assignor gets, on top of
    /// the scenario's and `--config` (in its own runs and where it is asked on the other's
    /// inputs), e.g. `max.warmup.replicas=8`; repeatable.
    #[arg(long = "candidate-config", value_name = "KEY=VALUE", requires = "compare")]
    candidate_configs: Vec<String>,
}

/// The random-churn seeds of `simulate --compare`.
#[derive(Debug, Clone)]
enum Seeds {
    /// The built-in scenarios and seeds `1..=N`.
    Suite(u64),
    /// Only these seeds.
    Only(std::ops::RangeInclusive<u64>),
}

fn parse_seeds(text: &str) -> Result<Seeds, String> {
    let number = |s: &str| s.trim().parse::<u64>().map_err(|_| format!("`{s}` is not a seed (a whole number ≥ 0)"));
    match text.split_once("..=") {
        None => number(text).map(Seeds::Suite),
        Some((first, last)) => {
            let (first, last) = (number(first)?, number(last)?);
            if first > last {
                return Err(format!("no seeds in {first}..={last}"));
            }
            Ok(Seeds::Only(first..=last))
        }
    }
}

/// An assignor that writes each input it is asked to `dir` as `round-<n>.json`, then runs
/// another.
struct Recording<'a> {
    inner: &'a dyn engine::TaskAssignor,
    dir: &'a std::path::Path,
    calls: std::cell::Cell<usize>,
}

impl engine::TaskAssignor for Recording<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn assign(&self, input: &engine::AssignmentInput) -> Result<engine::Assignment, engine::AssignError> {
        let path = self.dir.join(format!("round-{}.json", self.calls.get()));
        self.calls.set(self.calls.get() + 1);
        let text = serde_json::to_string_pretty(input).expect("JSON");
        std::fs::write(&path, text).map_err(|_| engine::AssignError::Internal("--inputs: cannot write a round's input"))?;
        self.inner.assign(input)
    }
}

/// An assignor that runs another with some task assignor configs overridden.
struct WithConfigs<'a> {
    inner: &'a dyn engine::TaskAssignor,
    overrides: &'a [String],
}

impl engine::TaskAssignor for WithConfigs<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn assign(&self, input: &engine::AssignmentInput) -> Result<engine::Assignment, engine::AssignError> {
        let mut input = input.clone();
        // Checked on every scenario before the runs start.
        input.configs = override_configs_as("--candidate-config", &input.configs, self.overrides)
            .map_err(|_| engine::AssignError::Internal("--candidate-config was rejected"))?;
        self.inner.assign(&input)
    }
}

#[derive(clap::Args)]
struct DecodeArgs {
    /// A file holding raw bytes, hex or base64 (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Hex given inline (`:` and whitespace allowed; several values separated by commas).
    #[arg(long, conflicts_with_all = ["file", "base64"])]
    hex: Option<String>,
    /// Base64 given inline.
    #[arg(long, conflicts_with = "file")]
    base64: Option<String>,
    /// What the bytes are; recognised when not given.
    #[arg(long, value_parser = parse_kind)]
    kind: Option<Kind>,
    /// One line of JSON per input instead of pretty-printed.
    #[arg(long)]
    compact: bool,
    /// Decode an embedded example: a Java member's JoinGroup metadata (envelope v3 around a v11
    /// subscription), as written by kafka-streams 4.4.0.
    #[arg(long, conflicts_with_all = ["file", "hex", "base64"])]
    example: bool,
}

/// JoinGroup member metadata written by the Java classes (`fixtures/wire`).
const EXAMPLE_METADATA: &[u8] = include_bytes!("../fixtures/wire/subscription-envelope/v3/streams-user-data.bin");

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormat {
    Hex,
    Base64,
    Raw,
}

#[derive(clap::Args)]
struct EncodeArgs {
    /// What to encode.
    #[arg(long, value_parser = parse_kind)]
    kind: Kind,
    /// The version to write (for an envelope, the envelope version); default: the JSON's own.
    #[arg(long)]
    version: Option<i32>,
    /// The JSON file (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "hex")]
    output: OutputFormat,
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    s.parse()
}

fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match file {
        Some(p) if p.as_os_str() != "-" => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display())),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(buf)
        }
    }
}

fn decode(args: DecodeArgs) -> Result<String, String> {
    let buffers = if args.example {
        vec![EXAMPLE_METADATA.to_vec()]
    } else if let Some(h) = &args.hex {
        inspect::parse_text(h).map_err(|e| e.to_string())?
    } else if let Some(b) = &args.base64 {
        inspect::parse_text(b).map_err(|e| e.to_string())?
    } else {
        let bytes = read_input(args.file.as_ref())?;
        if inspect::looks_like_text(&bytes) {
            inspect::parse_text(std::str::from_utf8(&bytes).expect("checked")).map_err(|e| e.to_string())?
        } else {
            vec![bytes]
        }
    };
    if buffers.is_empty() {
        return Err("no input".into());
    }
    let mut out = String::new();
    for (i, bytes) in buffers.iter().enumerate() {
        let decoded = inspect::decode(bytes, args.kind).map_err(|e| {
            if buffers.len() > 1 { format!("input {}: {e}", i + 1) } else { e.to_string() }
        })?;
        let text = if args.compact { decoded.json.to_string() } else { serde_json::to_string_pretty(&decoded.json).expect("JSON") };
        out.push_str(&text);
        out.push('\n');
    }
    Ok(out)
}

fn encode_value(kind: Kind, view: &Value, version: Option<i32>) -> Result<Vec<u8>, String> {
    let envelope_version = |v: i32| i16::try_from(v).map_err(|_| format!("envelope version {v} is out of range"));
    let nested = |key: &str, inner: Kind| -> Result<Value, String> {
        let mut view = view.clone();
        if let Some(ud @ Value::Object(_)) = view.get(key) {
            let bytes = encode_value(inner, ud, None).map_err(|e| format!("userData: {e}"))?;
            view[key] = Value::String(hex::encode(bytes));
        }
        Ok(view)
    };
    let result = match kind {
        Kind::Subscription => {
            let mut m = json::subscription_from_view(view).map_err(|e| e.to_string())?;
            if let Some(v) = version {
                m = m.with_version(v);
            }
            m.encode()
        }
        Kind::Assignment => {
            let mut m = json::assignment_from_view(view).map_err(|e| e.to_string())?;
            if let Some(v) = version {
                m = m.with_version(v);
            }
            m.encode()
        }
        Kind::SubscriptionEnvelope => {
            let mut m = json::subscription_envelope_from_view(&nested("userData", Kind::Subscription)?).map_err(|e| e.to_string())?;
            if let Some(v) = version {
                m.version = envelope_version(v)?;
            }
            m.encode()
        }
        Kind::AssignmentEnvelope => {
            let mut m = json::assignment_envelope_from_view(&nested("userData", Kind::Assignment)?).map_err(|e| e.to_string())?;
            if let Some(v) = version {
                m.version = envelope_version(v)?;
            }
            m.encode()
        }
    };
    result.map_err(|e: wire::EncodeError| e.to_string())
}

fn encode(args: EncodeArgs) -> Result<Vec<u8>, String> {
    let text = read_input(args.file.as_ref())?;
    let view: Value = serde_json::from_slice(&text).map_err(|e| format!("input is not JSON: {e}"))?;
    let bytes = encode_value(args.kind, &view, args.version)?;
    Ok(match args.output {
        OutputFormat::Hex => format!("{}\n", hex::encode(&bytes)).into_bytes(),
        OutputFormat::Base64 => format!("{}\n", base64::engine::general_purpose::STANDARD.encode(&bytes)).into_bytes(),
        OutputFormat::Raw => bytes,
    })
}

/// Reads JSON into `T`, reporting the path of a bad value (`clients[2].capacity`) and the line.
fn read_json<T: serde::de::DeserializeOwned>(text: &[u8], what: &str) -> Result<T, String> {
    let de = &mut serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." { format!("{what}: {inner}") } else { format!("{what}: at `{path}`: {inner}") }
    })
}

/// Duplicates that a set would silently swallow: a task listed twice, a client listed twice.
fn check_duplicates(view: &Value) -> Result<(), String> {
    for key in ["statefulTasks", "statelessTasks"] {
        if let Some(items) = view.get(key).and_then(Value::as_array) {
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                if !seen.insert(item.to_string()) {
                    return Err(format!("input: at `{key}[{i}]`: task {item} is listed twice"));
                }
            }
        }
    }
    if let Some(clients) = view.get("clients").and_then(Value::as_array) {
        let mut seen = std::collections::BTreeMap::new();
        for (i, c) in clients.iter().enumerate() {
            if let Some(id) = c.get("processId") {
                if let Some(first) = seen.insert(id.to_string(), i) {
                    return Err(format!("input: at `clients[{i}].processId`: client {id} is listed twice (first at clients[{first}])"));
                }
            }
        }
    }
    Ok(())
}

fn assignment_json(out: &engine::Assignment) -> Value {
    let clients: serde_json::Map<String, Value> = out
        .clients
        .iter()
        .map(|c| {
            let ids = |tasks: &[wire::TaskId]| Value::Array(tasks.iter().map(|t| Value::String(t.to_string())).collect());
            let mut client = serde_json::json!({
                "active": ids(&c.active_tasks),
                "standby": ids(&c.standby_tasks),
                "warmup": ids(&c.warmup_tasks),
            });
            if !c.spare_tasks.is_empty() {
                client["spare"] = ids(&c.spare_tasks);
            }
            (c.process_id.to_string(), client)
        })
        .collect();
    let watch: Vec<Value> = out
        .followup
        .watch_list
        .iter()
        .map(|w| serde_json::json!({ "taskId": w.task_id.to_string(), "processId": w.process_id.to_string() }))
        .collect();
    serde_json::json!({
        "assignor": out.assignor,
        "clients": clients,
        "probingRebalance": {
            "needed": out.followup.probing_rebalance_needed,
            "afterMs": out.followup.probing_rebalance_interval_ms,
        },
        "watchList": watch,
    })
}

fn assign(args: AssignArgs) -> Result<String, String> {
    let kind: engine::AssignorKind = args.assignor.parse().map_err(|e: engine::UnknownAssignor| e.to_string())?;
    eprintln!("reading {}", args.input.display());
    let text = read_input(Some(&args.input))?;
    let view: Value = serde_json::from_slice(&text).map_err(|e| format!("input is not JSON: {e}"))?;
    check_duplicates(&view)?;
    let input: engine::AssignmentInput = read_json(&text, "input")?;
    let effective = engine::effective_assignor(kind, &input);
    eprintln!(
        "assigning {} stateful and {} stateless tasks over {} clients with {effective}",
        input.stateful_tasks.len(),
        input.stateless_tasks.len(),
        input.clients.len()
    );
    let started = std::time::Instant::now();
    let out = engine::assign(kind, &input).map_err(|e| e.to_string())?;
    eprintln!("done in {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    let json = assignment_json(&out);
    Ok(if args.compact { format!("{json}\n") } else { format!("{}\n", serde_json::to_string_pretty(&json).expect("JSON")) })
}

fn simulate(args: SimulateArgs) -> Result<String, String> {
    if args.list {
        return Ok(sim::BUILTIN_SCENARIOS.iter().map(|(n, d)| format!("{n:20} {d}\n")).collect());
    }
    if args.compare {
        return simulate_compare(&args);
    }
    let name = args.scenario.as_deref().unwrap_or(sim::BUILTIN_SCENARIOS[0].0);
    let mut scenario = sim::builtin(name, args.seed).ok_or_else(|| {
        let names: Vec<&str> = sim::BUILTIN_SCENARIOS.iter().map(|(n, _)| *n).collect();
        format!("unknown scenario `{name}` (built-in: {})", names.join(", "))
    })?;
    scenario.configs = override_assignment_configs(&scenario.configs, &args.configs)?;
    let kind: engine::AssignorKind = args.assignor.parse().map_err(|e: engine::UnknownAssignor| e.to_string())?;
    let config = sim_config(&args)?;
    eprintln!("simulating {} ({}) with {kind}", scenario.name, scenario.description);
    let report = match &args.inputs {
        None => sim::run(kind.assignor(), &scenario, &config),
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let recording = Recording { inner: kind.assignor(), dir, calls: std::cell::Cell::new(0) };
            let report = sim::run(&recording, &scenario, &config);
            eprintln!("wrote {} round input(s) to {}", recording.calls.get(), dir.display());
            report
        }
    }
    .map_err(|e| e.to_string())?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("JSON");
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        std::fs::write(path, sim::render_svg(&[&report])).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(report.table())
}

/// Reads a topology: JSON when the file starts with `{`, else `Topology#describe()` text.
fn read_topology(path: &PathBuf, group: &str) -> Result<leader::Topology, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let topology = if text.trim_start().starts_with('{') {
        leader::Topology::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        leader::Topology::from_describe(&text, group).map_err(|e| format!("{}: {e}", path.display()))?
    };
    if topology.application_id != group {
        return Err(format!("{}: application id `{}` is not the group `{group}`", path.display(), topology.application_id));
    }
    Ok(topology)
}

const ASSIGNMENT_KEYS: [&str; 10] = [
    "num.standby.replicas",
    "acceptable.recovery.lag",
    "max.warmup.replicas",
    "probing.rebalance.interval.ms",
    "rack.aware.assignment.tags",
    "rack.aware.assignment.strategy",
    "rack.aware.assignment.traffic_cost",
    "rack.aware.assignment.non_overlap_cost",
    "stream.imbalance.percentage",
    "max.spare.replicas",
];

/// The JSON value of a task assignor config given as text: a list for
/// `rack.aware.assignment.tags`, a number where the text is one, else a string.
fn assignment_config_value(key: &str, value: &str) -> Value {
    if key == "rack.aware.assignment.tags" {
        Value::Array(value.split(',').filter(|t| !t.is_empty()).map(|t| Value::String(t.trim().to_owned())).collect())
    } else {
        serde_json::from_str::<Value>(value).ok().filter(Value::is_number).unwrap_or_else(|| Value::String(value.to_owned()))
    }
}

/// The task assignor configs of `base` with `key=value` overrides (Kafka's keys).
fn override_assignment_configs(base: &engine::AssignmentConfigs, overrides: &[String]) -> Result<engine::AssignmentConfigs, String> {
    override_configs_as("--config", base, overrides)
}

/// `base` with `key=value` overrides (Kafka's keys); errors name `flag`.
fn override_configs_as(flag: &str, base: &engine::AssignmentConfigs, overrides: &[String]) -> Result<engine::AssignmentConfigs, String> {
    let mut map = match serde_json::to_value(base).expect("configs serialize") {
        Value::Object(map) => map,
        other => unreachable!("configs serialize to an object, not {other}"),
    };
    for kv in overrides {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{flag} `{kv}`: expected key=value"))?;
        if !ASSIGNMENT_KEYS.contains(&k) {
            return Err(format!("{flag} {k}: not a task assignor config (known: {})", ASSIGNMENT_KEYS.join(", ")));
        }
        map.insert(k.to_owned(), assignment_config_value(k, v));
    }
    serde_json::from_value(Value::Object(map)).map_err(|e| format!("{flag}: {e}"))
}

/// The member configuration from `key=value` pairs.
fn member_config(args: &LeadArgs) -> Result<(group::MemberConfig, Option<String>), String> {
    let mut config = group::MemberConfig::new(args.bootstrap[0].clone(), args.group.clone());
    config.bootstrap = args.bootstrap.clone();
    config.leader_only = !args.with_tasks;
    let mut assignment = Vec::new();
    let mut endpoint = None;
    for kv in &args.configs {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("--config `{kv}`: expected key=value"))?;
        let num = |what: &str| -> Result<i64, String> { v.parse().map_err(|_| format!("--config {k}: `{v}` is not {what}")) };
        let int = |what| num(what).and_then(|n| i32::try_from(n).map_err(|_| format!("--config {k}: {v} is out of range")));
        let uint = |what| num(what).and_then(|n| u64::try_from(n).map_err(|_| format!("--config {k}: {v} is out of range")));
        match k {
            _ if ASSIGNMENT_KEYS.contains(&k) => assignment.push(kv.clone()),
            "internal.task.assignor.class" => {
                config.leader.assignor = v.parse().map_err(|e: engine::UnknownAssignor| e.to_string())?;
            }
            "replication.factor" => {
                config.replication_factor =
                    i16::try_from(num("a number")?).map_err(|_| format!("--config {k}: {v} is out of range"))?;
            }
            "session.timeout.ms" => config.session_timeout_ms = int("a number")?,
            "max.poll.interval.ms" => config.rebalance_timeout_ms = int("a number")?,
            "heartbeat.interval.ms" => config.heartbeat_interval_ms = num("a number")?,
            "request.timeout.ms" => config.request_timeout_ms = uint("a number")?,
            "retry.backoff.ms" => config.retry_backoff_ms = uint("a number")?,
            "retry.backoff.max.ms" => config.retry_backoff_max_ms = uint("a number")?,
            "metadata.max.age.ms" => config.metadata_max_age_ms = num("a number")?,
            "client.id" => config.client_id = v.to_owned(),
            "group.instance.id" => config.group_instance_id = Some(v.to_owned()),
            "application.server" => endpoint = Some(v.to_owned()),
            _ if k.starts_with("topic.") => {
                config.topic_configs.insert(k["topic.".len()..].to_owned(), v.to_owned());
            }
            _ => return Err(format!("--config {k}: unknown config")),
        }
    }
    config.leader.assignment = override_assignment_configs(&engine::AssignmentConfigs::default(), &assignment)?;
    Ok((config, endpoint))
}

fn lead(args: LeadArgs) -> Result<String, String> {
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
    let deadline = args.exit_after.map(|s| std::time::Instant::now() + std::time::Duration::from_secs_f64(s.max(0.0)));
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

fn describe(args: DescribeArgs) -> Result<String, String> {
    let topology = args.topology.as_ref().map(|p| read_topology(p, &args.group)).transpose()?;
    let described = group::describe::describe_group(&args.bootstrap, &args.group, topology.as_ref(), std::time::Duration::from_secs(30))
        .map_err(|e| e.to_string())?;
    Ok(if args.json {
        format!("{}\n", serde_json::to_string_pretty(&described.to_json()).expect("JSON"))
    } else {
        described.table()
    })
}

fn sim_config(args: &SimulateArgs) -> Result<sim::SimConfig, String> {
    if args.restore_rate <= 0 || args.produce_rate < 0 || args.produce_rate >= args.restore_rate {
        return Err(format!(
            "--restore-rate ({}) must be positive and above --produce-rate ({}), or restoration never catches up",
            args.restore_rate, args.produce_rate
        ));
    }
    let mut config = sim::SimConfig::default();
    config.restore_records_per_sec = args.restore_rate;
    config.produce_records_per_sec = args.produce_rate;
    config.state_cleanup_delay_ms = args.state_cleanup_delay_ms;
    Ok(config)
}

fn simulate_compare(args: &SimulateArgs) -> Result<String, String> {
    let config = sim_config(args)?;
    let mut scenarios = match args.scenario.as_deref() {
        None | Some("all") => match &args.seeds {
            Seeds::Suite(n) => sim::suite_scenarios(*n),
            Seeds::Only(range) => sim::churn_scenarios(range.clone()),
        },
        Some(name) => vec![sim::builtin(name, args.seed).ok_or_else(|| format!("unknown scenario `{name}`"))?],
    };
    for scenario in &mut scenarios {
        scenario.configs = override_assignment_configs(&scenario.configs, &args.configs)?;
        override_configs_as("--candidate-config", &scenario.configs, &args.candidate_configs)?;
    }
    eprintln!("comparing over {} scenario(s)", scenarios.len());
    let baseline = engine::AssignorKind::HighAvailability.assignor();
    let candidate = WithConfigs { inner: engine::AssignorKind::Optimized.assignor(), overrides: &args.candidate_configs };
    let mut cmp = sim::compare(baseline, &candidate, &scenarios, &config).map_err(|e| e.to_string())?;
    if !args.candidate_configs.is_empty() {
        cmp.candidate = format!("{} ({})", cmp.candidate, args.candidate_configs.join(", "));
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&cmp).expect("JSON");
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let (Some(path), Some((a, b))) = (&args.svg, &cmp.first_reports) {
        std::fs::write(path, sim::render_svg(&[a, b])).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {} ({})", path.display(), a.scenario);
    }
    Ok(cmp.table())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decode(args) => decode(args).map(String::into_bytes),
        Command::Encode(args) => encode(args),
        Command::Assign(args) => assign(args).map(String::into_bytes),
        Command::Simulate(args) => simulate(args).map(String::into_bytes),
        Command::Lead(args) => lead(args).map(String::into_bytes),
        Command::Describe(args) => describe(args).map(String::into_bytes),
    };
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(&out).and_then(|()| stdout.flush()).is_err() {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
