//! `simulate`: successive rebalances of a scenario, or the comparison of two assignors.

use std::path::PathBuf;

use kstreams_assignor::{engine, report, sim};

use super::io::{OutputPath, check_output, check_output_dir, key_values};
use super::{AssignorParser, CliError, usage};

#[derive(clap::Args)]
pub(crate) struct SimulateArgs {
    /// The scenario (default: scale-out, a running stateful app gaining an instance; with
    /// `--compare`, `all` or nothing: every one, `availability`: the availability benchmark's).
    #[arg(value_parser = scenario_names())]
    scenario: Option<String>,
    /// List the built-in scenarios.
    #[arg(long)]
    list: bool,
    /// The assignor (Kafka's class name, simple or fully qualified, or `optimized`) [default:
    /// HighAvailabilityTaskAssignor]; `--compare` always runs Kafka's and `optimized`.
    #[arg(long, value_parser = AssignorParser, conflicts_with = "compare")]
    assignor: Option<engine::AssignorKind>,
    /// Seed for `random-churn` [default: 1]; the other scenarios take none.
    #[arg(long)]
    seed: Option<u64>,
    /// Records per second a task restores.
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().restore_records_per_sec, value_parser = clap::value_parser!(i64).range(1..), allow_negative_numbers = true)]
    restore_rate: i64,
    /// Records per second appended to each changelog (below `--restore-rate`).
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().produce_records_per_sec, value_parser = clap::value_parser!(i64).range(0..), allow_negative_numbers = true)]
    produce_rate: i64,
    /// Kafka Streams' `state.cleanup.delay.ms`: how long a member keeps the local state of a task
    /// it no longer owns (0: forever).
    #[arg(long, default_value_t = kstreams_assignor::sim::SimConfig::default().state_cleanup_delay_ms, value_parser = clap::value_parser!(i64).range(0..), allow_negative_numbers = true)]
    state_cleanup_delay_ms: i64,
    /// Write the full report as JSON to this file (`-`: standard output, instead of the table,
    /// which then goes to standard error).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write an SVG plot of load spread and restoring lag per round to this file (`-`: standard
    /// output, as for `--json`).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Write a self-contained HTML report to this file (`-`: standard output, as for `--json`):
    /// the run round by round with charts, or with `--compare` the scenarios side by side and
    /// their sum. It opens from disk and loads nothing from elsewhere.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Compare Kafka's HighAvailabilityTaskAssignor with the optimized assignor: on SCENARIO, or
    /// (with `all` or no scenario) on every built-in scenario and `--seeds` random-churn seeds.
    #[arg(long)]
    compare: bool,
    /// Random-churn seeds for `--compare`: `N` runs seeds 1 to N after the other built-in
    /// scenarios (the suite); `FIRST..=LAST` runs only those seeds, e.g. `101..=400`, which the
    /// suite does not see.
    #[arg(long, default_value = "100", value_parser = parse_seeds, requires = "compare")]
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
    /// The rebalance protocol: `classic` (JoinGroup/SyncGroup, the leader's assignor, probing
    /// rebalances), `streams` (KIP-1071: the coordinator's assignor, heartbeats, epochs) or, with
    /// `--compare`, `both`: each scenario with classic HighAvailabilityTaskAssignor, classic
    /// optimized, streams sticky and streams optimized in one table. The broker's settings go in
    /// `--config`, e.g. `--config group.streams.heartbeat.interval.ms=5000`.
    #[arg(long, default_value = "classic", value_parser = ["classic", "streams", "both"])]
    protocol: String,
    /// With `--protocol streams`: the broker's assignor for the group (`streams.assignor.name`):
    /// `sticky` (Kafka's default) or `optimized`.
    #[arg(long, value_name = "NAME", value_parser = ["sticky", "optimized"])]
    streams_assignor: Option<String>,
}

/// The scenario names, for `--help`, the completions and the check.
fn scenario_names() -> clap::builder::PossibleValuesParser {
    let mut values: Vec<clap::builder::PossibleValue> =
        sim::BUILTIN_SCENARIOS.iter().chain(sim::AVAILABILITY_SCENARIOS).map(|(n, d)| clap::builder::PossibleValue::new(*n).help(*d)).collect();
    values.push(clap::builder::PossibleValue::new("all").help("with --compare: every scenario and --seeds random-churn seeds"));
    values.push(clap::builder::PossibleValue::new("availability").help("with --compare: the availability benchmark's scenarios"));
    clap::builder::PossibleValuesParser::new(values)
}

/// Where `--json`, `--svg` and `--html` go, checked before the run.
struct Outputs {
    json: Option<OutputPath>,
    svg: Option<OutputPath>,
    html: Option<OutputPath>,
}

impl Outputs {
    fn check(args: &SimulateArgs) -> Result<Self, CliError> {
        if let Some(dir) = &args.inputs {
            check_output_dir("--inputs", dir).map_err(usage)?;
        }
        let json = args.json.as_deref().map(|p| check_output("--json", p)).transpose().map_err(usage)?;
        let svg = args.svg.as_deref().map(|p| check_output("--svg", p)).transpose().map_err(usage)?;
        let html = args.html.as_deref().map(|p| check_output("--html", p)).transpose().map_err(usage)?;
        let outputs = Outputs { json, svg, html };
        let to_stdout: Vec<&str> = outputs.flags().into_iter().filter(|(_, o)| matches!(o, Some(OutputPath::Stdout))).map(|(f, _)| f).collect();
        if let [first, second, ..] = to_stdout[..] {
            return Err(usage(format!("{first} - and {second} - cannot both go to standard output")));
        }
        Ok(outputs)
    }

    /// Each report's flag and where it goes.
    fn flags(&self) -> [(&'static str, Option<&OutputPath>); 3] {
        [("--json", self.json.as_ref()), ("--svg", self.svg.as_ref()), ("--html", self.html.as_ref())]
    }

    /// Whether the table goes to standard error (a report took standard output).
    fn table_to_stderr(&self) -> bool {
        self.flags().iter().any(|(_, o)| matches!(o, Some(OutputPath::Stdout)))
    }

    /// Writes `text` to `out`; what goes to standard output is returned.
    fn write(out: Option<&OutputPath>, text: String, what: &str) -> Result<String, String> {
        match out {
            None => Ok(String::new()),
            Some(OutputPath::Stdout) => Ok(text),
            Some(OutputPath::File(path)) => {
                std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                eprintln!("wrote {}{what}", path.display());
                Ok(String::new())
            }
        }
    }

    /// The command's standard output: the table, or the report that asked for it.
    fn finish(&self, table: String, mut stdout: String) -> String {
        if self.table_to_stderr() {
            eprint!("{table}");
            if !stdout.ends_with('\n') {
                stdout.push('\n');
            }
            stdout
        } else {
            table
        }
    }
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
    /// The first write that failed: the simulation stops there and reports it.
    failed: std::cell::RefCell<Option<String>>,
}

impl engine::TaskAssignor for Recording<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn assign(&self, input: &engine::AssignmentInput) -> Result<engine::Assignment, engine::AssignError> {
        let path = self.dir.join(format!("round-{}.json", self.calls.get()));
        self.calls.set(self.calls.get() + 1);
        let text = serde_json::to_string_pretty(input).expect("JSON");
        if let Err(e) = std::fs::write(&path, text) {
            self.failed.replace(Some(format!("--inputs: cannot write {}: {e}", path.display())));
            return Err(engine::AssignError::Internal("--inputs: cannot write a round's input"));
        }
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

/// `simulate`: the report table.
pub(crate) fn simulate(args: SimulateArgs) -> Result<String, CliError> {
    if args.list {
        let mut out: String = sim::BUILTIN_SCENARIOS.iter().map(|(n, d)| format!("{n:20} {d}\n")).collect();
        out.push_str("\nthe availability benchmark's (`--compare availability` runs them all):\n");
        out.extend(sim::AVAILABILITY_SCENARIOS.iter().map(|(n, d)| format!("{n:28} {d}\n")));
        return Ok(out);
    }
    let name = match args.scenario.as_deref() {
        None | Some("all") if args.compare => None,
        Some(set @ ("all" | "availability")) if !args.compare => {
            return Err(usage(format!("scenario `{set}` is for --compare; simulate runs one scenario")));
        }
        other => Some(other.unwrap_or(sim::BUILTIN_SCENARIOS[0].0)),
    };
    if args.seed.is_some() && name != Some("random-churn") {
        return Err(usage(match name {
            Some(n) => format!("--seed shapes random-churn only; scenario `{n}` is fixed"),
            None => "--seed shapes one random-churn run; --compare over every scenario takes --seeds".to_owned(),
        }));
    }
    let config = sim_config(&args)?;
    let (streams, classic_configs) = streams_config(&args.configs)?;
    let outputs = Outputs::check(&args)?;
    check_protocol(&args)?;
    if args.compare && args.protocol == "both" {
        return simulate_protocols(&args, name, config, &streams, &classic_configs, &outputs);
    }
    if args.compare {
        return simulate_compare(&args, name, config, &outputs);
    }
    if args.protocol == "streams" {
        let name = name.expect("a scenario without --compare");
        return simulate_streams(&args, name, config, &streams, &classic_configs, &outputs);
    }
    let name = name.expect("a scenario without --compare");
    let mut scenario = sim::builtin(name, args.seed.unwrap_or(1)).ok_or_else(|| usage(format!("unknown scenario `{name}`")))?;
    scenario.configs = override_assignment_configs(&scenario.configs, &args.configs).map_err(usage)?;
    let kind = args.assignor.unwrap_or(engine::AssignorKind::HighAvailability);
    eprintln!("simulating {} ({}) with {kind}", scenario.name, scenario.description);
    let report = match &args.inputs {
        None => sim::run(kind.assignor(), &scenario, &config),
        Some(dir) => {
            let recording = Recording { inner: kind.assignor(), dir, calls: std::cell::Cell::new(0), failed: Default::default() };
            let report = sim::run(&recording, &scenario, &config);
            if let Some(e) = recording.failed.take() {
                return Err(e.into());
            }
            eprintln!("wrote {} round input(s) to {}", recording.calls.get(), dir.display());
            report
        }
    }
    .map_err(|e| e.to_string())?;
    let mut stdout = Outputs::write(outputs.json.as_ref(), serde_json::to_string_pretty(&report).expect("JSON"), "")?;
    stdout += &Outputs::write(outputs.svg.as_ref(), sim::render_svg(&[&report]), "")?;
    if outputs.html.is_some() {
        stdout += &Outputs::write(outputs.html.as_ref(), report::simulate_html(&report), "")?;
    }
    Ok(outputs.finish(report.table(), stdout))
}

/// The `--protocol` combinations that make sense.
fn check_protocol(args: &SimulateArgs) -> Result<(), CliError> {
    let streams = args.protocol != "classic";
    if args.protocol == "both" && !args.compare {
        return Err(usage("--protocol both is for --compare; simulate runs one protocol (classic or streams)"));
    }
    if args.protocol == "streams" && args.compare {
        return Err(usage("--compare on the streams protocol: use --protocol both (both protocols, four runs a scenario)"));
    }
    if args.streams_assignor.is_some() && args.protocol != "streams" {
        return Err(usage("--streams-assignor names the broker's assignor of --protocol streams"));
    }
    if streams && args.assignor.is_some() {
        return Err(usage("--assignor names a classic assignor; on the streams protocol use --streams-assignor"));
    }
    if streams && args.inputs.is_some() {
        return Err(usage("--inputs writes classic assign inputs; it is for --protocol classic"));
    }
    if args.protocol == "both" && !args.candidate_configs.is_empty() {
        return Err(usage("--candidate-config is for the two-assignor --compare of --protocol classic"));
    }
    Ok(())
}

/// The broker's streams settings among `--config` (keys `group.streams.*`, and the prober's
/// `probe.interval.ms`), and the other
/// `--config` values.
fn streams_config(configs: &[String]) -> Result<(sim::StreamsConfig, Vec<String>), CliError> {
    let mut streams = sim::StreamsConfig::default();
    let mut rest = Vec::new();
    for kv in configs {
        match kv.split_once('=') {
            Some((key, value)) if key.trim().starts_with("group.streams.") || key.trim() == "probe.interval.ms" => {
                streams.set(key.trim(), value.trim()).map_err(|e| usage(format!("--config {e}")))?;
            }
            _ => rest.push(kv.clone()),
        }
    }
    Ok((streams, rest))
}

/// `simulate --protocol streams`: one scenario on the streams protocol.
fn simulate_streams(
    args: &SimulateArgs,
    name: &str,
    config: sim::SimConfig,
    streams: &sim::StreamsConfig,
    classic_configs: &[String],
    outputs: &Outputs,
) -> Result<String, CliError> {
    let mut scenario = sim::builtin(name, args.seed.unwrap_or(1)).ok_or_else(|| usage(format!("unknown scenario `{name}`")))?;
    scenario.configs = override_assignment_configs(&scenario.configs, classic_configs).map_err(usage)?;
    let assignor = sim::StreamsAssignor::from_name(args.streams_assignor.as_deref().unwrap_or("sticky")).expect("a checked name");
    eprintln!("simulating {} ({}) on the streams protocol with {}", scenario.name, scenario.description, assignor.name());
    let run = sim::run_streams(assignor, &scenario, &config, streams).map_err(|e| e.to_string())?;
    let mut stdout = Outputs::write(outputs.json.as_ref(), serde_json::to_string_pretty(&run).expect("JSON"), "")?;
    stdout += &Outputs::write(outputs.svg.as_ref(), sim::render_svg(&[&run.report]), "")?;
    if outputs.html.is_some() {
        stdout += &Outputs::write(outputs.html.as_ref(), report::streams_html(&run), "")?;
    }
    Ok(outputs.finish(run.table(), stdout))
}

/// `simulate --compare --protocol both`: the scenarios on both protocols.
fn simulate_protocols(
    args: &SimulateArgs,
    name: Option<&str>,
    config: sim::SimConfig,
    streams: &sim::StreamsConfig,
    classic_configs: &[String],
    outputs: &Outputs,
) -> Result<String, CliError> {
    if outputs.svg.is_some() {
        return Err(usage("--svg plots one or two runs; --protocol both prints a table (use --json for the figures)"));
    }
    let mut scenarios = compare_scenarios(args, name)?;
    for scenario in &mut scenarios {
        scenario.configs = override_assignment_configs(&scenario.configs, classic_configs).map_err(usage)?;
    }
    eprintln!("comparing both protocols over {} scenario(s)", scenarios.len());
    let cmp = sim::compare_protocols(&scenarios, &config, streams).map_err(|e| e.to_string())?;
    let mut stdout = Outputs::write(outputs.json.as_ref(), serde_json::to_string_pretty(&cmp).expect("JSON"), "")?;
    if outputs.html.is_some() {
        stdout += &Outputs::write(outputs.html.as_ref(), report::protocols_html(&cmp), "")?;
    }
    Ok(outputs.finish(cmp.table(), stdout))
}

/// The scenarios of `--compare`: SCENARIO, or the suite, or `--seeds FIRST..=LAST`.
fn compare_scenarios(args: &SimulateArgs, name: Option<&str>) -> Result<Vec<sim::Scenario>, CliError> {
    Ok(match name {
        None => match &args.seeds {
            Seeds::Suite(n) => sim::suite_scenarios(*n),
            Seeds::Only(range) => sim::churn_scenarios(range.clone()),
        },
        Some("availability") => sim::availability_scenarios(),
        Some(name) => vec![sim::builtin(name, args.seed.unwrap_or(1)).ok_or_else(|| usage(format!("unknown scenario `{name}`")))?],
    })
}

/// The task assignor configs of `base` with `key=value` overrides (Kafka's keys).
fn override_assignment_configs(base: &engine::AssignmentConfigs, overrides: &[String]) -> Result<engine::AssignmentConfigs, String> {
    override_configs_as("--config", base, overrides)
}

/// `base` with `key=value` overrides (Kafka's keys); errors name `flag`.
fn override_configs_as(flag: &str, base: &engine::AssignmentConfigs, overrides: &[String]) -> Result<engine::AssignmentConfigs, String> {
    base.with_overrides(key_values(flag, overrides)?).map_err(|e| match e {
        engine::SetConfigError::UnknownKey(_) => format!("{flag} {e}"),
        _ => format!("{flag}: {e}"),
    })
}

fn sim_config(args: &SimulateArgs) -> Result<sim::SimConfig, CliError> {
    if args.restore_rate <= 0 || args.produce_rate < 0 || args.produce_rate >= args.restore_rate {
        return Err(usage(format!(
            "--restore-rate ({}) must be positive and above --produce-rate ({}), or restoration never catches up",
            args.restore_rate, args.produce_rate
        )));
    }
    let mut config = sim::SimConfig::default();
    config.restore_records_per_sec = args.restore_rate;
    config.produce_records_per_sec = args.produce_rate;
    config.state_cleanup_delay_ms = args.state_cleanup_delay_ms;
    Ok(config)
}

fn simulate_compare(args: &SimulateArgs, name: Option<&str>, config: sim::SimConfig, outputs: &Outputs) -> Result<String, CliError> {
    let mut scenarios = compare_scenarios(args, name)?;
    for scenario in &mut scenarios {
        scenario.configs = override_assignment_configs(&scenario.configs, &args.configs).map_err(usage)?;
        override_configs_as("--candidate-config", &scenario.configs, &args.candidate_configs).map_err(usage)?;
    }
    eprintln!("comparing over {} scenario(s)", scenarios.len());
    let baseline = engine::AssignorKind::HighAvailability.assignor();
    let candidate = WithConfigs { inner: engine::AssignorKind::Optimized.assignor(), overrides: &args.candidate_configs };
    let mut cmp = sim::compare(baseline, &candidate, &scenarios, &config).map_err(|e| e.to_string())?;
    if !args.candidate_configs.is_empty() {
        cmp.candidate = format!("{} ({})", cmp.candidate, args.candidate_configs.join(", "));
    }
    let mut stdout = Outputs::write(outputs.json.as_ref(), serde_json::to_string_pretty(&cmp).expect("JSON"), "")?;
    if let Some((a, b)) = &cmp.first_reports {
        stdout += &Outputs::write(outputs.svg.as_ref(), sim::render_svg(&[a, b]), &format!(" ({})", a.scenario))?;
    }
    if outputs.html.is_some() {
        stdout += &Outputs::write(outputs.html.as_ref(), report::compare_html(&cmp), "")?;
    }
    Ok(outputs.finish(cmp.table(), stdout))
}
