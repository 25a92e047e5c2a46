//! The pages of `simulate --html`: one run round by round, two assignors side by side over
//! scenarios, and the scenarios on both rebalance protocols.

use std::fmt::Write;

use super::html::{bar, escape, figures, header_cells, inline_svg, num_cell, page, panel};
use crate::sim::{self, Comparison, ProtocolComparison, ProtocolRun, Report, StreamsReport, Summary, format_ms};

/// `x` with two decimals, as the text tables print spreads.
fn two(x: f64) -> String {
    format!("{x:.2}")
}

/// The figures of a run as a list, then `extra` ones.
fn run_figures(r: &Report, extra: &[(&str, &str, String)]) -> String {
    let mut items = vec![
        ("converged", "converged", if r.converged { "yes" } else { "NOT converged" }.to_owned()),
        ("rebalances", "rounds", r.rounds.len().to_string()),
        ("rebalances to converge", "roundsToConverge", r.rounds_to_converge.to_string()),
        ("time to converge", "timeToConverge", format_ms(r.time_to_converge_ms)),
        ("tasks moved", "totalTasksMoved", r.total_tasks_moved.to_string()),
        ("warm-ups", "totalWarmups", r.total_warmups.to_string()),
        ("probing rebalances", "probingRebalances", r.probing_rebalances.to_string()),
        ("restoring lag (records)", "totalRestoringLag", r.total_restoring_lag.to_string()),
        (
            "final spread (all / stateful / sub-topology)",
            "finalSpread",
            format!("{} / {} / {}", two(r.final_load_spread), two(r.final_stateful_load_spread), two(r.final_subtopology_spread)),
        ),
        (
            "movement lower bound (moved there)",
            "lowerBound",
            r.lower_bound.map_or("n/a".to_owned(), |lb| format!("{lb} ({})", r.bounded_tasks_moved)),
        ),
        ("changelog records read by copies", "changelogRecordsRead", r.changelog_records_read.to_string()),
        ("copy-hours beyond the actives", "localCopyHours", format!("{:.1}", r.local_copy_ms as f64 / 3_600_000.0)),
        ("task downtime (unowned or restoring)", "taskDowntimeMs", format_ms(r.task_downtime_ms)),
    ];
    items.extend(extra.iter().cloned());
    figures(&items)
}

/// The round-by-round table of a run, with the totals in its footer.
fn rounds_table(r: &Report) -> String {
    let mut out = String::from("<table class=\"data\" id=\"rounds\">\n<thead><tr>");
    header_cells(
        &mut out,
        &[
            "round",
            "time",
            "members",
            "moved",
            "stateful moved",
            "warm-ups",
            "spares",
            "spread",
            "stateful spread",
            "sub-topology spread",
            "restoring lag",
            "restoring tasks",
            "probe",
        ],
    );
    out.push_str("<th class=\"name\">trigger</th></tr></thead>\n<tbody>\n");
    let most_moved = r.rounds.iter().map(|x| x.tasks_moved).max().unwrap_or(0).max(1) as f64;
    let most_lag = r.rounds.iter().map(|x| x.restoring_lag).max().unwrap_or(0).max(1) as f64;
    for x in &r.rounds {
        let _ = write!(out, "<tr class=\"round{}\" data-round=\"{}\">", if x.probing_rebalance { " probe" } else { "" }, x.round);
        let _ = write!(out, "<td>{}</td><td>{}</td><td>{}</td>", x.round, escape(&format_ms(x.time_ms)), x.members);
        let moved = format!("{}{}", bar(x.tasks_moved as f64 / most_moved, ""), x.tasks_moved);
        let _ = write!(out, "<td data-key=\"moved\" data-value=\"{}\">{moved}</td>", x.tasks_moved);
        out.push_str(&num_cell("statefulMoved", x.stateful_tasks_moved, &x.stateful_tasks_moved.to_string(), ""));
        out.push_str(&num_cell("warmups", x.warmups, &x.warmups.to_string(), ""));
        out.push_str(&num_cell("spares", x.spares, &x.spares.to_string(), ""));
        out.push_str(&num_cell("spread", x.load_spread, &two(x.load_spread), ""));
        out.push_str(&num_cell("statefulSpread", x.stateful_load_spread, &two(x.stateful_load_spread), ""));
        out.push_str(&num_cell("subtopologySpread", x.subtopology_spread, &two(x.subtopology_spread), ""));
        let lag = format!("{}{}", bar(x.restoring_lag as f64 / most_lag, "lag"), x.restoring_lag);
        let _ = write!(out, "<td data-key=\"restoringLag\" data-value=\"{}\">{lag}</td>", x.restoring_lag);
        out.push_str(&num_cell("restoringTasks", x.restoring_tasks, &x.restoring_tasks.to_string(), ""));
        let _ = writeln!(
            out,
            "<td class=\"probe\">{}</td><td class=\"name\">{}</td></tr>",
            if x.probing_rebalance { "yes" } else { "no" },
            escape(&x.trigger)
        );
    }
    out.push_str("</tbody>\n<tfoot><tr class=\"sum\"><th class=\"name\" colspan=\"3\">total</th>");
    let stateful: usize = r.rounds.iter().map(|x| x.stateful_tasks_moved).sum();
    out.push_str(&num_cell("moved", r.total_tasks_moved, &r.total_tasks_moved.to_string(), ""));
    out.push_str(&num_cell("statefulMoved", stateful, &stateful.to_string(), ""));
    out.push_str(&num_cell("warmups", r.total_warmups, &r.total_warmups.to_string(), ""));
    out.push_str("<td></td><td></td><td></td><td></td>");
    out.push_str(&num_cell("restoringLag", r.total_restoring_lag, &r.total_restoring_lag.to_string(), ""));
    let tasks: usize = r.rounds.iter().map(|x| x.restoring_tasks).sum();
    out.push_str(&num_cell("restoringTasks", tasks, &tasks.to_string(), ""));
    let _ = writeln!(out, "<td data-key=\"probes\" data-value=\"{0}\">{0}</td><td></td></tr></tfoot>\n</table>", r.probing_rebalances);
    out
}

/// The page of one run: `kind` names the protocol and assignor, `extra` adds figures.
fn run_page(r: &Report, kind: &str, extra: &[(&str, &str, String)]) -> String {
    let mut body = panel("summary", "Summary", &run_figures(r, extra));
    body += &panel("chart", "Per rebalance", &inline_svg(&sim::render_svg(&[r])));
    let note = "<p class=\"note\">moved: active tasks that changed owner; restoring lag: records active tasks restore before \
                they process (each restore counted in the rebalance that starts it); spread: max − min active tasks per thread.</p>\n";
    body += &panel("rebalances", "Rebalances", &format!("{note}{}", rounds_table(r)));
    page(&format!("simulate {}", r.scenario), kind, &body)
}

/// `simulate --html`: one run on the classic protocol, round by round (the figures, a chart of
/// spread, restoring lag and warm-ups, and the table of [`Report::table`]).
pub fn simulate_html(report: &Report) -> String {
    run_page(report, &format!("classic · {}", report.assignor), &[])
}

/// `simulate --protocol streams --html`: one run on the streams protocol, with its own figures.
pub fn streams_html(run: &StreamsReport) -> String {
    let extra = [
        ("group epochs", "groupEpochs", run.group_epochs.to_string()),
        ("heartbeats", "heartbeats", run.heartbeats.to_string()),
        ("restoration time", "restoredMs", format_ms(run.restored_ms)),
        ("unowned task-time", "unownedTaskMs", format_ms(run.unowned_task_ms)),
        ("warm-ups waiting", "warmupsWaiting", run.warmups_waiting.to_string()),
        ("prober targets", "probes", run.probes.to_string()),
    ];
    run_page(&run.report, &format!("streams · {}", run.report.assignor), &extra)
}

/// The sums over the scenarios of a comparison that its page's total row shows, baseline and
/// candidate: moved, warm-ups, probing rebalances, time to converge, restoring lag, task
/// downtime, final sub-topology spread.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Sums {
    pub(super) moved: (usize, usize),
    pub(super) warmups: (usize, usize),
    pub(super) probing: (usize, usize),
    pub(super) converge_ms: (i64, i64),
    pub(super) restoring_lag: (i64, i64),
    pub(super) downtime_ms: (i64, i64),
    pub(super) subtopology_spread: (f64, f64),
}

impl Sums {
    pub(super) fn of(cmp: &Comparison) -> Self {
        let mut s = Sums::default();
        for r in &cmp.rows {
            let (a, b) = (&r.baseline, &r.candidate);
            s.moved = (s.moved.0 + a.tasks_moved, s.moved.1 + b.tasks_moved);
            s.warmups = (s.warmups.0 + a.warmups, s.warmups.1 + b.warmups);
            s.probing = (s.probing.0 + a.probing_rebalances, s.probing.1 + b.probing_rebalances);
            s.converge_ms = (s.converge_ms.0 + a.time_to_converge_ms, s.converge_ms.1 + b.time_to_converge_ms);
            s.restoring_lag = (s.restoring_lag.0 + a.restoring_lag, s.restoring_lag.1 + b.restoring_lag);
            s.downtime_ms = (s.downtime_ms.0 + a.task_downtime_ms, s.downtime_ms.1 + b.task_downtime_ms);
            s.subtopology_spread =
                (s.subtopology_spread.0 + a.final_subtopology_spread, s.subtopology_spread.1 + b.final_subtopology_spread);
        }
        s
    }
}

/// `better` when B's figure is below A's, `worse` when above (lower is better for all).
fn verdict(a: f64, b: f64) -> &'static str {
    if b < a - 1e-9 {
        "better"
    } else if b > a + 1e-9 {
        "worse"
    } else {
        ""
    }
}

/// The two cells of a figure, A then B, B's marked against A's.
fn pair(out: &mut String, key: &str, a: f64, b: f64, text: &dyn Fn(f64) -> String) {
    out.push_str(&num_cell(&format!("{key}A"), a, &text(a), ""));
    out.push_str(&num_cell(&format!("{key}B"), b, &text(b), verdict(a, b)));
}

fn count(x: f64) -> String {
    format!("{x:.0}")
}

fn time(x: f64) -> String {
    format_ms(x as i64)
}

fn converge_text(s: &Summary) -> String {
    let t = format_ms(s.time_to_converge_ms);
    if s.converged { t } else { format!("{t} (not converged)") }
}

/// The side-by-side table of a comparison: a row per scenario and the total row.
fn compare_table(cmp: &Comparison) -> String {
    let mut out = String::from("<table class=\"data\" id=\"compare\">\n<thead><tr><th class=\"name\">scenario</th>");
    header_cells(
        &mut out,
        &[
            "moved A",
            "moved B",
            "lower bound (B moved)",
            "warm-ups A",
            "warm-ups B",
            "probing A",
            "probing B",
            "converge A",
            "converge B",
            "restoring lag A",
            "restoring lag B",
            "task downtime A",
            "task downtime B",
            "final spread A",
            "final spread B",
        ],
    );
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &cmp.rows {
        let (a, b) = (&r.baseline, &r.candidate);
        let _ = write!(out, "<tr class=\"scenario\" data-scenario=\"{0}\"><td class=\"name\">{0}</td>", escape(&r.scenario));
        pair(&mut out, "moved", a.tasks_moved as f64, b.tasks_moved as f64, &count);
        let bound = b.lower_bound.map_or("n/a".to_owned(), |lb| format!("{lb} ({})", b.bounded_tasks_moved));
        let _ = write!(out, "<td data-key=\"lowerBound\">{}</td>", escape(&bound));
        pair(&mut out, "warmups", a.warmups as f64, b.warmups as f64, &count);
        pair(&mut out, "probing", a.probing_rebalances as f64, b.probing_rebalances as f64, &count);
        out.push_str(&num_cell("convergeA", a.time_to_converge_ms, &converge_text(a), if a.converged { "" } else { "worse" }));
        let class = if b.converged { verdict(a.time_to_converge_ms as f64, b.time_to_converge_ms as f64) } else { "worse" };
        out.push_str(&num_cell("convergeB", b.time_to_converge_ms, &converge_text(b), class));
        pair(&mut out, "restoringLag", a.restoring_lag as f64, b.restoring_lag as f64, &count);
        pair(&mut out, "downtime", a.task_downtime_ms as f64, b.task_downtime_ms as f64, &time);
        let spread = |s: &Summary| format!("{:.2}/{:.2}/{:.2}", s.final_spread, s.final_stateful_spread, s.final_subtopology_spread);
        out.push_str(&num_cell("spreadA", a.final_stateful_spread, &spread(a), ""));
        let class = verdict(a.final_stateful_spread, b.final_stateful_spread);
        out.push_str(&num_cell("spreadB", b.final_stateful_spread, &spread(b), class));
        out.push_str("</tr>\n");
    }
    let s = Sums::of(cmp);
    let _ = write!(out, "</tbody>\n<tfoot><tr class=\"sum\"><th class=\"name\">total ({} scenarios)</th>", cmp.rows.len());
    pair(&mut out, "moved", s.moved.0 as f64, s.moved.1 as f64, &count);
    let bound: usize = cmp.rows.iter().filter_map(|r| r.candidate.lower_bound).sum();
    let bounded: usize = cmp.rows.iter().filter(|r| r.candidate.lower_bound.is_some()).map(|r| r.candidate.bounded_tasks_moved).sum();
    let _ = write!(out, "<td data-key=\"lowerBound\">{bound} ({bounded})</td>");
    pair(&mut out, "warmups", s.warmups.0 as f64, s.warmups.1 as f64, &count);
    pair(&mut out, "probing", s.probing.0 as f64, s.probing.1 as f64, &count);
    pair(&mut out, "converge", s.converge_ms.0 as f64, s.converge_ms.1 as f64, &time);
    pair(&mut out, "restoringLag", s.restoring_lag.0 as f64, s.restoring_lag.1 as f64, &count);
    pair(&mut out, "downtime", s.downtime_ms.0 as f64, s.downtime_ms.1 as f64, &time);
    let spread = |x: f64| format!("sub-topology {x:.2}");
    pair(&mut out, "subtopologySpread", s.subtopology_spread.0, s.subtopology_spread.1, &spread);
    out.push_str("</tr></tfoot>\n</table>\n");
    out
}

/// How much less B is than A, in words.
fn change(a: f64, b: f64, fewer: &str, more: &str) -> String {
    if a == 0.0 {
        return if b == 0.0 { "the same".to_owned() } else { more.to_owned() };
    }
    let p = 100.0 * (a - b) / a;
    if p >= 0.0 { format!("{p:.1}% {fewer}") } else { format!("{:.1}% {more}", -p) }
}

/// `simulate --compare --html`: A (Kafka's) against B (the optimized assignor) per scenario and
/// in sum, B's figures marked better or worse than A's, the targets, and a chart of the first
/// scenario's two runs.
pub fn compare_html(cmp: &Comparison) -> String {
    let s = Sums::of(cmp);
    let mut legend = format!(
        "<div class=\"legend\"><b>A</b> = {} · <b>B</b> = {} · <span class=\"better\">B better</span> · \
         <span class=\"worse\">B worse</span> (lower is better in every column)</div>\n",
        escape(&cmp.baseline),
        escape(&cmp.candidate)
    );
    let _ = writeln!(
        legend,
        "<p class=\"note\" id=\"verdict\">B against A over the {} scenario(s): {} task movements, {} warm-ups, {} probing rebalances, \
         {} time to converge, {} restoring lag, {} task downtime.</p>",
        cmp.rows.len(),
        escape(&change(s.moved.0 as f64, s.moved.1 as f64, "fewer", "more")),
        escape(&change(s.warmups.0 as f64, s.warmups.1 as f64, "fewer", "more")),
        escape(&change(s.probing.0 as f64, s.probing.1 as f64, "fewer", "more")),
        escape(&change(s.converge_ms.0 as f64, s.converge_ms.1 as f64, "less", "more")),
        escape(&change(s.restoring_lag.0 as f64, s.restoring_lag.1 as f64, "less", "more")),
        escape(&change(s.downtime_ms.0 as f64, s.downtime_ms.1 as f64, "less", "more")),
    );
    let mut body = panel("scenarios", "A against B", &format!("{legend}{}", compare_table(cmp)));
    let mut targets = String::from("<ul class=\"targets\">\n");
    for t in cmp.targets() {
        let _ = writeln!(
            targets,
            "<li data-holds=\"{}\"><span class=\"{}\">{}</span> {}: {}</li>",
            t.holds,
            if t.holds { "holds" } else { "fails" },
            if t.holds { "✓" } else { "✗" },
            escape(&t.name),
            escape(&t.detail)
        );
    }
    targets.push_str("</ul>\n");
    body += &panel("targets", "Targets (B against A)", &targets);
    if let Some((a, b)) = &cmp.first_reports {
        body += &panel("chart", &format!("Per rebalance, scenario {}", a.scenario), &inline_svg(&sim::render_svg(&[a, b])));
    }
    page("simulate --compare", &format!("{} scenario(s)", cmp.rows.len()), &body)
}

/// A figure of the protocol table: its heading, its `data-key`, its value and how it prints.
type Column = (&'static str, &'static str, fn(&ProtocolRun) -> f64, fn(f64) -> String);

/// `simulate --compare --protocol both --html`: every scenario's five runs (both protocols),
/// a column group per figure, the best run of a row marked, and the totals.
pub fn protocols_html(cmp: &ProtocolComparison) -> String {
    let runs = sim::PROTOCOL_RUNS;
    let mut legend = String::from("<div class=\"legend\">");
    for (i, name) in runs.iter().enumerate() {
        let _ = write!(legend, "<span><b>{}</b> = {}</span> · ", i + 1, escape(name));
    }
    legend.push_str("<span class=\"better\">best of the row</span> · * not converged</div>\n");
    let metrics: [Column; 6] = [
        ("converge", "converge", |r| r.time_to_converge_ms as f64, time),
        ("moved", "moved", |r| r.tasks_moved as f64, count),
        ("restored records", "restored", |r| r.restoring_lag as f64, count),
        ("restore time", "restoreTime", |r| r.restored_ms as f64, time),
        ("task downtime", "downtime", |r| r.task_downtime_ms as f64, time),
        ("final stateful spread", "spread", |r| r.final_stateful_spread, two),
    ];
    let mut t = String::from("<table class=\"data\" id=\"protocols\">\n<thead><tr><th class=\"name\" rowspan=\"2\">scenario</th>");
    for (head, ..) in &metrics {
        let _ = write!(t, "<th colspan=\"{}\">{}</th>", runs.len(), escape(head));
    }
    t.push_str("</tr><tr>");
    for _ in &metrics {
        for (i, name) in runs.iter().enumerate() {
            let _ = write!(t, "<th title=\"{}\">{}</th>", escape(name), i + 1);
        }
    }
    t.push_str("</tr></thead>\n<tbody>\n");
    for row in &cmp.rows {
        let _ = write!(t, "<tr class=\"scenario\" data-scenario=\"{0}\"><td class=\"name\">{0}</td>", escape(&row.scenario));
        for (_, key, value, text) in &metrics {
            let best = row.runs.iter().map(value).fold(f64::INFINITY, f64::min);
            for (i, r) in row.runs.iter().enumerate() {
                let v = value(r);
                let shown = if r.converged { text(v) } else { format!("{}*", text(v)) };
                t.push_str(&num_cell(&format!("{key}.{i}"), v, &shown, if v <= best + 1e-9 { "better" } else { "" }));
            }
        }
        t.push_str("</tr>\n");
    }
    let _ = write!(t, "</tbody>\n<tfoot><tr class=\"sum\"><th class=\"name\">total ({})</th>", cmp.rows.len());
    for (_, key, value, text) in &metrics {
        for i in 0..runs.len() {
            let v: f64 = cmp.rows.iter().filter_map(|r| r.runs.get(i)).map(value).sum();
            t.push_str(&num_cell(&format!("{key}.{i}"), v, &text(v), ""));
        }
    }
    t.push_str("</tr></tfoot>\n</table>\n");
    let s = &cmp.streams_config;
    let note = format!(
        "<p class=\"note\">streams: group.streams.heartbeat.interval.ms={}, group.streams.num.warmup.replicas={}, \
         group.streams.acceptable.recovery.lag={}. converge: from the last event until stable; restored: records active tasks \
         restored; restore time: from the last event until every active task runs; task downtime: task-time active tasks \
         did not process (unowned or restoring), over the whole run.</p>\n",
        s.heartbeat_interval_ms, s.num_warmup_replicas, s.acceptable_recovery_lag
    );
    let body = panel("scenarios", "Both protocols", &format!("{legend}{note}{t}"));
    page("simulate --compare --protocol both", &format!("{} scenario(s) × {} runs", cmp.rows.len(), runs.len()), &body)
}
