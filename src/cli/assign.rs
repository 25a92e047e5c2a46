//! `assign`: a task assignor on a group described in JSON.

use std::path::PathBuf;

use kstreams_assignor::{engine, report};
use serde_json::Value;

use super::io::{OutputPath, check_output, read_input, read_json};
use super::{AssignorParser, CliError, usage};

#[derive(clap::Args)]
pub(crate) struct AssignArgs {
    /// The group: configs, clients with their offset sums, tasks and changelog end offsets
    /// (see README; `-`: standard input).
    #[arg(long)]
    input: PathBuf,
    /// The assignor (Kafka's class name, simple or fully qualified, or `optimized`).
    #[arg(long, value_parser = AssignorParser, default_value = "HighAvailabilityTaskAssignor")]
    assignor: engine::AssignorKind,
    /// One line of JSON instead of pretty-printed.
    #[arg(long)]
    compact: bool,
    /// Also write the assignment as a self-contained HTML page to this file: clients by tasks,
    /// each cell active, standby or warm-up, what moved against the input's previous owners
    /// marked (`-`: standard output, and the JSON then goes to standard error).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// A client listed twice, reported with its place in the file (the library refuses it too,
/// by process id; a task listed twice the library reports with its place).
fn check_duplicate_clients(view: &Value) -> Result<(), String> {
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

/// `assign`: the assignment as JSON (and, with `--html`, as a page).
pub(crate) fn assign(args: AssignArgs) -> Result<String, CliError> {
    let kind = args.assignor;
    let html = args.html.as_deref().map(|p| check_output("--html", p)).transpose().map_err(usage)?;
    eprintln!("reading {}", args.input.display());
    let text = read_input(Some(&args.input))?;
    let view: Value = serde_json::from_slice(&text).map_err(|e| format!("input is not JSON: {e}"))?;
    check_duplicate_clients(&view)?;
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
    let summary = out.summary();
    let json = if args.compact { serde_json::to_string(&summary) } else { serde_json::to_string_pretty(&summary) };
    let json = format!("{}\n", json.map_err(|e| format!("cannot write the assignment as JSON: {e}"))?);
    match html {
        None => Ok(json),
        Some(OutputPath::Stdout) => {
            eprint!("{json}");
            Ok(report::assign_html(&input, &out))
        }
        Some(OutputPath::File(path)) => {
            std::fs::write(&path, report::assign_html(&input, &out)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
            Ok(json)
        }
    }
}
