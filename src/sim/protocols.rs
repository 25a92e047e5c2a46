//! The same scenarios on both rebalance protocols: the classic protocol with Kafka's
//! high-availability assignor and with `optimized`, the streams protocol with the broker's
//! `sticky` assignor and with `optimized`, and where each converges faster, moves less and
//! restores less.

use std::fmt::Write;

use serde::Serialize;

use super::config::SimConfig;
use super::report::{Report, SimError};
use super::run::run_world;
use super::scenario::Scenario;
use super::streams::{StreamsAssignor, StreamsConfig, run_streams};
use super::table::format_ms;
use crate::engine::AssignorKind;

/// The runs of a scenario, in this order: `streams/optimized+probe` is `optimized` with a prober
/// in the group (`kstreams-assignor probe`, [`StreamsConfig::probe_interval_ms`] 60 s when the
/// settings give none).
pub const PROTOCOL_RUNS: [&str; 5] =
    ["classic/HighAvailabilityTaskAssignor", "classic/optimized", "streams/sticky", "streams/optimized", "streams/optimized+probe"];

/// Short column names for [`PROTOCOL_RUNS`].
const SHORT: [&str; 5] = ["C-HA", "C-opt", "S-sticky", "S-opt", "S-opt+p"];

/// The prober's interval in the `+probe` run when the settings give none: the members'
/// `group.streams.task.offset.interval.ms` (60 s by default), as often as offsets change.
const DEFAULT_PROBE_INTERVAL_MS: i64 = 60_000;

/// What the cross-protocol table reports of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProtocolRun {
    /// One of [`PROTOCOL_RUNS`].
    pub run: String,
    /// Whether it ended stable (classic: no probing rebalance wanted; streams: every member
    /// reconciled with the last target).
    pub converged: bool,
    /// Rebalances (classic) or target assignments (streams) from the last event until stable.
    pub rounds_to_converge: usize,
    /// Simulated time from the last event until stable.
    pub time_to_converge_ms: i64,
    /// Active tasks that changed owner.
    pub tasks_moved: usize,
    /// Records active tasks restored before processing.
    pub restoring_lag: i64,
    /// From the last event until every active task runs (none restores): the restoration time.
    pub restored_ms: i64,
    /// Task-time active tasks did not process, unowned or restoring, tasks × ms
    /// ([`Report::task_downtime_ms`]).
    pub task_downtime_ms: i64,
    /// Final max − min active tasks per thread.
    pub final_spread: f64,
    /// Final max − min stateful active tasks per thread.
    pub final_stateful_spread: f64,
    /// Streams only: active tasks no member owned, task × ms ([`StreamsReport::unowned_task_ms`](super::StreamsReport::unowned_task_ms)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unowned_task_ms: Option<i64>,
    /// Streams only: warm-ups in the last target, waiting for a membership change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmups_waiting: Option<usize>,
    /// Target assignments a prober asked for (classic: probing rebalances).
    pub rounds_probed: usize,
    /// Streams `optimized` only: Kafka's `sticky` asked on each target's inputs
    /// ([`StreamsReport::sticky_on_same_inputs`](super::StreamsReport::sticky_on_same_inputs)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sticky_on_same_inputs: Option<super::StickyOnSameInputs>,
}

impl ProtocolRun {
    fn new(run: &str, r: &Report) -> Self {
        Self {
            run: run.to_owned(),
            converged: r.converged,
            rounds_to_converge: r.rounds_to_converge,
            time_to_converge_ms: r.time_to_converge_ms,
            tasks_moved: r.total_tasks_moved,
            restoring_lag: r.total_restoring_lag,
            restored_ms: 0,
            task_downtime_ms: r.task_downtime_ms,
            final_spread: r.final_load_spread,
            final_stateful_spread: r.final_stateful_load_spread,
            unowned_task_ms: None,
            warmups_waiting: None,
            rounds_probed: r.probing_rebalances,
            sticky_on_same_inputs: None,
        }
    }
}

/// One scenario on both protocols.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProtocolRow {
    /// Scenario name.
    pub scenario: String,
    /// The runs, in the order of [`PROTOCOL_RUNS`].
    pub runs: Vec<ProtocolRun>,
}

/// The scenarios on both protocols ([`compare_protocols`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProtocolComparison {
    /// One row per scenario.
    pub rows: Vec<ProtocolRow>,
    /// The broker's settings the streams runs used.
    pub streams_config: StreamsConfig,
}

/// Runs every scenario of `scenarios` five times: on the classic protocol with Kafka's
/// `HighAvailabilityTaskAssignor` and with `optimized`, on the streams protocol with the broker's
/// `sticky`, with `optimized` alone (`streams`' prober setting as given) and with `optimized` and
/// a prober.
///
/// ```
/// use kstreams_assignor::sim::{self, SimConfig, StreamsConfig};
///
/// let scenarios = vec![sim::builtin("scale-out", 0).unwrap()];
/// let cmp = sim::compare_protocols(&scenarios, &SimConfig::default(), &StreamsConfig::default()).unwrap();
/// let runs = &cmp.rows[0].runs;
/// assert_eq!(runs.len(), 5);
/// // The broker's sticky assignor moves the joiner's share at once, without warm-ups.
/// assert!(runs[2].converged && runs[2].time_to_converge_ms < runs[0].time_to_converge_ms);
/// assert!(cmp.table().contains("streams/sticky against classic/HighAvailabilityTaskAssignor"));
/// ```
///
/// # Errors
/// The first [`SimError`] of any run.
pub fn compare_protocols(scenarios: &[Scenario], config: &SimConfig, streams: &StreamsConfig) -> Result<ProtocolComparison, SimError> {
    let mut rows = Vec::with_capacity(scenarios.len());
    for scenario in scenarios {
        let mut runs = Vec::with_capacity(PROTOCOL_RUNS.len());
        let last_event = scenario.events.iter().map(|e| e.at_ms).max().unwrap_or(0);
        for (name, kind) in PROTOCOL_RUNS.iter().zip([AssignorKind::HighAvailability, AssignorKind::Optimized]) {
            let (report, world) = run_world(kind.assignor(), None, scenario, config)?;
            let mut p = ProtocolRun::new(name, &report);
            p.restored_ms = (world.all_restored_at() - last_event).max(0);
            runs.push(p);
        }
        let mut probed = *streams;
        if probed.probe_interval_ms == 0 {
            probed.probe_interval_ms = DEFAULT_PROBE_INTERVAL_MS;
        }
        let streams_runs = [(StreamsAssignor::Sticky, streams), (StreamsAssignor::Optimized, streams), (StreamsAssignor::Optimized, &probed)];
        for (name, (assignor, settings)) in PROTOCOL_RUNS[2..].iter().zip(streams_runs) {
            let r = run_streams(assignor, scenario, config, settings)?;
            let mut p = ProtocolRun::new(name, &r.report);
            p.restored_ms = r.restored_ms;
            p.unowned_task_ms = Some(r.unowned_task_ms);
            p.warmups_waiting = Some(r.warmups_waiting);
            p.sticky_on_same_inputs = r.sticky_on_same_inputs;
            runs.push(p);
        }
        rows.push(ProtocolRow { scenario: scenario.name.clone(), runs });
    }
    Ok(ProtocolComparison { rows, streams_config: *streams })
}

/// A metric the verdicts rank, lower is better.
struct Metric {
    what: &'static str,
    better: &'static str,
    worse: &'static str,
    value: fn(&ProtocolRun) -> f64,
}

const METRICS: [Metric; 5] = [
    Metric { what: "converges fastest", better: "converges faster", worse: "slower", value: |r| r.time_to_converge_ms as f64 },
    Metric { what: "moves least", better: "moves less", worse: "more", value: |r| r.tasks_moved as f64 },
    Metric { what: "restores least", better: "restores less", worse: "more", value: |r| r.restoring_lag as f64 },
    Metric { what: "runs every active soonest", better: "restores sooner", worse: "later", value: |r| r.restored_ms as f64 },
    Metric { what: "ends most even", better: "ends more even", worse: "less even", value: |r| r.final_stateful_spread },
];

/// Task downtime, ranked apart from [`METRICS`] (its best-of line comes after theirs).
const DOWNTIME: Metric =
    Metric { what: "least task downtime", better: "less downtime", worse: "more", value: |r| r.task_downtime_ms as f64 };

impl ProtocolComparison {
    /// The table: a row per scenario with each run's time to converge, moves, restored records,
    /// restoration time and final stateful spread, the totals, and a verdict line per metric.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let n = self.rows.len();
        let columns: Vec<String> = SHORT.iter().zip(PROTOCOL_RUNS).map(|(s, l)| format!("{s} = {l}")).collect();
        let _ = writeln!(out, "{}", columns.join(", "));
        let s = &self.streams_config;
        let _ = writeln!(
            out,
            "streams: group.streams.heartbeat.interval.ms={}, group.streams.num.warmup.replicas={}, group.streams.acceptable.recovery.lag={}",
            s.heartbeat_interval_ms, s.num_warmup_replicas, s.acceptable_recovery_lag
        );
        let _ = writeln!(
            out,
            "converge: from the last event until stable (rebalances, or targets, after it); restored: records active tasks restored; restore time: from the last event until every active task runs; downtime: task-time active tasks did not process (unowned or restoring), over the whole run; spread: final max - min stateful active tasks per thread"
        );
        let head = |what: &str| SHORT.iter().map(|c| format!("{what} {c}")).collect::<Vec<_>>().join(" | ");
        let _ = writeln!(
            out,
            "| scenario | {} | {} | {} | {} | {} | {} |",
            head("converge"),
            head("moved"),
            head("restored"),
            head("restore time"),
            head("downtime"),
            head("spread")
        );
        let _ = writeln!(out, "|---{}|", "|---".repeat(6 * SHORT.len()));
        let mark = |r: &ProtocolRun, text: String| if r.converged { text } else { format!("{text}*") };
        for row in &self.rows {
            let cells = |f: &dyn Fn(&ProtocolRun) -> String| row.runs.iter().map(f).collect::<Vec<_>>().join(" | ");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.scenario,
                cells(&|r| mark(r, format!("{} ({})", format_ms(r.time_to_converge_ms), r.rounds_to_converge))),
                cells(&|r| r.tasks_moved.to_string()),
                cells(&|r| r.restoring_lag.to_string()),
                cells(&|r| format_ms(r.restored_ms)),
                cells(&|r| format_ms(r.task_downtime_ms)),
                cells(&|r| format!("{:.2}", r.final_stateful_spread))
            );
        }
        let total = |i: usize, f: fn(&ProtocolRun) -> f64| self.rows.iter().map(|r| f(&r.runs[i])).sum::<f64>();
        let totals =
            |f: fn(&ProtocolRun) -> f64, show: &dyn Fn(f64) -> String| (0..SHORT.len()).map(|i| show(total(i, f))).collect::<Vec<_>>().join(" | ");
        let _ = writeln!(
            out,
            "| total ({n}) | {} | {} | {} | {} | {} | {} |",
            totals(|r| r.time_to_converge_ms as f64, &|v| format_ms(v as i64)),
            totals(|r| r.tasks_moved as f64, &|v| format!("{v:.0}")),
            totals(|r| r.restoring_lag as f64, &|v| format!("{v:.0}")),
            totals(|r| r.restored_ms as f64, &|v| format_ms(v as i64)),
            totals(|r| r.task_downtime_ms as f64, &|v| format_ms(v as i64)),
            totals(|r| r.final_stateful_spread, &|v| format!("{v:.2}"))
        );
        let not_converged: Vec<String> = (0..SHORT.len())
            .map(|i| (SHORT[i], self.rows.iter().filter(|r| !r.runs[i].converged).count()))
            .filter(|&(_, c)| c > 0)
            .map(|(name, c)| format!("{name} {c}"))
            .collect();
        if !not_converged.is_empty() {
            let _ = writeln!(out, "* not converged: {} scenario(s)", not_converged.join(", "));
        }
        let _ = writeln!(out, "\nOver the {n} scenario(s) (ties count for each):");
        for m in METRICS.iter().chain([&DOWNTIME]) {
            let best: Vec<String> = (0..SHORT.len())
                .map(|i| {
                    let wins = self
                        .rows
                        .iter()
                        .filter(|row| {
                            let v = (m.value)(&row.runs[i]);
                            row.runs.iter().all(|o| v <= (m.value)(o) + 1e-9)
                        })
                        .count();
                    format!("{} on {wins}", SHORT[i])
                })
                .collect();
            let _ = writeln!(out, "- {}: {}", m.what, best.join(", "));
        }
        let mut ranked: Vec<(i64, &str)> =
            (0..SHORT.len()).map(|i| (self.rows.iter().map(|r| r.runs[i].task_downtime_ms).sum(), SHORT[i])).collect();
        ranked.sort();
        let ranked: Vec<String> = ranked.iter().map(|(ms, name)| format!("{name} {}", format_ms(*ms))).collect();
        let _ = writeln!(out, "- task downtime in all, least first: {}", ranked.join(", "));
        for (a, b) in [(2, 0), (3, 1), (3, 2), (4, 1), (4, 2)] {
            let lines: Vec<String> = METRICS
                .iter()
                .map(|m| {
                    let (mut wins, mut losses) = (0, 0);
                    for row in &self.rows {
                        let (x, y) = ((m.value)(&row.runs[a]), (m.value)(&row.runs[b]));
                        wins += usize::from(x + 1e-9 < y);
                        losses += usize::from(y + 1e-9 < x);
                    }
                    format!("{} on {wins} of {n} ({} on {losses})", m.better, m.worse)
                })
                .collect();
            let _ = writeln!(out, "- {} against {}: {}", PROTOCOL_RUNS[a], PROTOCOL_RUNS[b], lines.join("; "));
        }
        let gap = |i: usize| self.rows.iter().filter_map(|r| r.runs[i].unowned_task_ms).sum::<i64>();
        let waiting = |i: usize| self.rows.iter().filter(|r| r.runs[i].warmups_waiting.unwrap_or(0) > 0).count();
        let probes: usize = self.rows.iter().map(|r| r.runs[4].rounds_probed).sum();
        let _ = writeln!(
            out,
            "\nStreams protocol: tasks wait unowned between their revocation and their new owner's next heartbeat ({} task-time S-sticky, {} S-opt, {} S-opt+p). Kafka 4.4.0's coordinator refines no warm-ups (AssignmentRefiner returns the target unchanged) and task offsets alone make no new target: without a prober, warm-ups in the last target wait for the next membership change ({} scenario(s) S-sticky, {} S-opt). S-opt+p's prober made {probes} target(s); {} scenario(s) end with warm-ups waiting.",
            format_ms(gap(2)),
            format_ms(gap(3)),
            format_ms(gap(4)),
            waiting(2),
            waiting(3),
            waiting(4),
        );
        for i in [3, 4] {
            let mut same = super::StickyOnSameInputs::default();
            for row in &self.rows {
                if let Some(s) = &row.runs[i].sticky_on_same_inputs {
                    same.merge(s);
                }
            }
            let _ = writeln!(
                out,
                "{} on the same inputs (each target's group spec also given to S-sticky): {} target(s), {} active task(s) moved where S-sticky would move {}; more than S-sticky at {} target(s): {} with a narrower stateful spread, {} restoring fewer records, {} neither.",
                PROTOCOL_RUNS[i],
                same.targets,
                same.moves,
                same.sticky_moves,
                same.more_moves,
                same.more_moves_narrower,
                same.more_moves_less_restored,
                same.more_moves_unexplained(),
            );
        }
        for i in [3, 4] {
            let _ = writeln!(out, "{}", self.more_moves_than_sticky(i));
        }
        out
    }

    /// The scenarios where run `i` moves more active tasks than streams `sticky`, split by why:
    /// `sticky` ends with a wider stateful spread, else how the two runs' first different target
    /// differs ([`FirstDifference`](super::FirstDifference); until that target they are one run).
    fn more_moves_than_sticky(&self, i: usize) -> String {
        use super::FirstDifference as D;
        let more: Vec<&ProtocolRow> = self.rows.iter().filter(|r| r.runs[i].tasks_moved > r.runs[2].tasks_moved).collect();
        let wider = |r: &&&ProtocolRow| r.runs[2].final_stateful_spread > r.runs[i].final_stateful_spread + 1e-9;
        let rest: Vec<&&ProtocolRow> = more.iter().filter(|r| !wider(r)).collect();
        let first_of = |r: &&&ProtocolRow| r.runs[i].sticky_on_same_inputs.and_then(|s| s.first_difference);
        let of_kind = |kind: Option<D>| rest.iter().filter(move |r| first_of(r).map(|f| f.1) == kind);
        let first = |kind: Option<D>| of_kind(kind).count();
        let names = |kind: D| -> String {
            let names: Vec<&str> = of_kind(Some(kind)).map(|r| r.scenario.as_str()).collect();
            if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
        };
        let at_start = rest.iter().filter(|r| first_of(r).is_some_and(|f| f.0 == 1)).count();
        format!(
            "{} moves more active tasks than S-sticky on {} scenario(s): {} where S-sticky ends with a wider stateful spread; on the other {}, the two runs first part at a target where {} leaves a narrower stateful spread on {}, restores fewer records on {}, moves as many tasks on {}{} (another answer of as few moves; later departures decide which costs more), fewer on {}, none of these on {}{}, never on {}; {} of them part at the starting assignment (made from nothing, no move either way).",
            PROTOCOL_RUNS[i],
            more.len(),
            more.len() - rest.len(),
            rest.len(),
            SHORT[i],
            first(Some(D::MoreMovesNarrower)),
            first(Some(D::MoreMovesLessRestored)),
            first(Some(D::AsManyMoves)),
            names(D::AsManyMoves),
            first(Some(D::FewerMoves)),
            first(Some(D::MoreMovesUnexplained)),
            names(D::MoreMovesUnexplained),
            first(None),
            at_start,
        )
    }
}
