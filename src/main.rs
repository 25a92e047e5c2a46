//! `kstreams-assignor`: the command line over the library.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use base64::Engine as _;
use clap::{Parser, Subcommand, ValueEnum};
use kstreams_assignor::wire::inspect::{self, Kind};
use kstreams_assignor::wire::{self, json};
use kstreams_assignor::{engine, sim};
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
    /// Random-churn seeds for `--compare` (seeds 1..=N).
    #[arg(long, default_value_t = 100)]
    seeds: u64,
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
            (c.process_id.to_string(), serde_json::json!({
                "active": ids(&c.active_tasks),
                "standby": ids(&c.standby_tasks),
                "warmup": ids(&c.warmup_tasks),
            }))
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
    let scenario = sim::builtin(name, args.seed).ok_or_else(|| {
        let names: Vec<&str> = sim::BUILTIN_SCENARIOS.iter().map(|(n, _)| *n).collect();
        format!("unknown scenario `{name}` (built-in: {})", names.join(", "))
    })?;
    let kind: engine::AssignorKind = args.assignor.parse().map_err(|e: engine::UnknownAssignor| e.to_string())?;
    let config = sim_config(&args)?;
    eprintln!("simulating {} ({}) with {kind}", scenario.name, scenario.description);
    let report = sim::run(kind.assignor(), &scenario, &config).map_err(|e| e.to_string())?;
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
    Ok(config)
}

fn simulate_compare(args: &SimulateArgs) -> Result<String, String> {
    let config = sim_config(args)?;
    let scenarios = match args.scenario.as_deref() {
        None | Some("all") => sim::suite_scenarios(args.seeds),
        Some(name) => vec![sim::builtin(name, args.seed).ok_or_else(|| format!("unknown scenario `{name}`"))?],
    };
    eprintln!("comparing over {} scenario(s)", scenarios.len());
    let baseline = engine::AssignorKind::HighAvailability.assignor();
    let candidate = engine::AssignorKind::Optimized.assignor();
    let cmp = sim::compare(baseline, candidate, &scenarios, &config).map_err(|e| e.to_string())?;
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
