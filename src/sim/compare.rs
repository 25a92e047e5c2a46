//! Two assignors side by side over the built-in scenarios and random churn, with the targets the
//! optimized assignor must meet against Kafka's high-availability assignor.

use std::fmt::Write;

use serde::Serialize;

use super::config::SimConfig;
use super::report::{Report, Round, SimError};
use super::run::run_world;
use super::scenario::{BUILTIN_SCENARIOS, Scenario, builtin};
use super::table::format_ms;
use crate::engine::TaskAssignor;

/// The figures of one run that the comparison reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Summary {
    /// Whether the run ended stable.
    pub converged: bool,
    /// Active tasks that changed owner, over all rebalances.
    pub tasks_moved: usize,
    /// Warm-up replicas, over all rebalances.
    pub warmups: usize,
    /// Rebalances that asked for a probing rebalance.
    pub probing_rebalances: usize,
    /// Rebalances from the last event until stable.
    pub rounds_to_converge: usize,
    /// Simulated time from the last event until stable.
    pub time_to_converge_ms: i64,
    /// Records active tasks had to restore before processing, over all rebalances.
    pub restoring_lag: i64,
    /// Final max − min active tasks per thread.
    pub final_spread: f64,
    /// Final max − min stateful active tasks per thread.
    pub final_stateful_spread: f64,
    /// Final sub-topology spread ([`Round::subtopology_spread`]).
    pub final_subtopology_spread: f64,
    /// The movement lower bound where it applies ([`Report::lower_bound`]).
    pub lower_bound: Option<usize>,
    /// Tasks moved where the lower bound applies.
    pub bounded_tasks_moved: usize,
    /// What departures cost whoever departs ([`Report::expected_departure_restore`]).
    pub expected_departure_restore: i64,
    /// Changelog records fetched by copies that are not running actives
    /// ([`Report::changelog_records_read`]).
    pub changelog_records_read: i64,
    /// State held beyond the actives, copies × ms ([`Report::local_copy_ms`]).
    pub local_copy_ms: i64,
    /// Spare copies the last assignment keeps ([`Round::spares`]): held on
    /// after the run, until the next rebalance.
    pub final_spares: usize,
    /// Task-time active tasks did not process, tasks × ms ([`Report::task_downtime_ms`]).
    pub task_downtime_ms: i64,
}

impl From<&Report> for Summary {
    fn from(r: &Report) -> Self {
        Self {
            converged: r.converged,
            tasks_moved: r.total_tasks_moved,
            warmups: r.total_warmups,
            probing_rebalances: r.probing_rebalances,
            rounds_to_converge: r.rounds_to_converge,
            time_to_converge_ms: r.time_to_converge_ms,
            restoring_lag: r.total_restoring_lag,
            final_spread: r.final_load_spread,
            final_stateful_spread: r.final_stateful_load_spread,
            final_subtopology_spread: r.final_subtopology_spread,
            lower_bound: r.lower_bound,
            bounded_tasks_moved: r.bounded_tasks_moved,
            expected_departure_restore: r.expected_departure_restore,
            changelog_records_read: r.changelog_records_read,
            local_copy_ms: r.local_copy_ms,
            final_spares: r.rounds.last().map_or(0, |x| x.spares),
            task_downtime_ms: r.task_downtime_ms,
        }
    }
}

/// One scenario under both assignors.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ComparisonRow {
    /// Scenario name.
    pub scenario: String,
    /// The reference assignor's run.
    pub baseline: Summary,
    /// The candidate's run.
    pub candidate: Summary,
    /// Both assignors asked on the same inputs.
    pub same_inputs: SameInputs,
}

/// Restoring on the same inputs: at every rebalance of both runs (each run follows its own
/// assignor), both assignors are asked and what each answer would have active tasks restore is
/// counted on that rebalance's state. The runs' own totals also reflect the copies each
/// assignor's earlier moves left behind; these pairs do not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SameInputs {
    /// Rebalances asked (both runs, the starting assignment excepted).
    pub rebalances: usize,
    /// What the baseline's answers would restore, summed.
    pub baseline_restoring_lag: i64,
    /// What the candidate's answers would restore, summed.
    pub candidate_restoring_lag: i64,
    /// Rebalances where the candidate's answer would restore more than the baseline's.
    pub candidate_restores_more: usize,
    /// The most the candidate's answer would restore beyond the baseline's in one rebalance.
    pub candidate_most_extra: i64,
    /// Rebalances where the candidate's answer would restore more than the baseline's on
    /// clients not caught up (beyond `acceptable.recovery.lag`): the rest of its extra restores
    /// replay copies within that lag.
    pub candidate_restores_more_not_caught_up: usize,
}

impl SameInputs {
    fn add(&mut self, baseline: (i64, i64), candidate: (i64, i64)) {
        self.candidate_restores_more_not_caught_up += usize::from(candidate.1 > baseline.1);
        let (baseline, candidate) = (baseline.0, candidate.0);
        self.rebalances += 1;
        self.baseline_restoring_lag += baseline;
        self.candidate_restoring_lag += candidate;
        if candidate > baseline {
            self.candidate_restores_more += 1;
            self.candidate_most_extra = self.candidate_most_extra.max(candidate - baseline);
        }
    }

    fn merge(&mut self, other: &Self) {
        self.rebalances += other.rebalances;
        self.baseline_restoring_lag += other.baseline_restoring_lag;
        self.candidate_restoring_lag += other.candidate_restoring_lag;
        self.candidate_restores_more += other.candidate_restores_more;
        self.candidate_most_extra = self.candidate_most_extra.max(other.candidate_most_extra);
        self.candidate_restores_more_not_caught_up += other.candidate_restores_more_not_caught_up;
    }
}

/// One target and whether it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Target {
    /// What is required.
    pub name: String,
    /// Whether it holds.
    pub holds: bool,
    /// The figures, or the scenarios where it fails.
    pub detail: String,
}

/// A comparison of two assignors.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Comparison {
    /// The reference assignor.
    pub baseline: String,
    /// The candidate assignor.
    pub candidate: String,
    /// One row per scenario.
    pub rows: Vec<ComparisonRow>,
    /// The full reports of the first scenario (for a plot).
    #[serde(skip)]
    pub first_reports: Option<(Report, Report)>,
}

/// The suite: every built-in scenario but `random-churn`, then `random-churn` with seeds
/// `1..=seeds`.
pub fn suite_scenarios(seeds: u64) -> Vec<Scenario> {
    let mut out: Vec<Scenario> =
        BUILTIN_SCENARIOS.iter().filter(|(n, _)| *n != "random-churn").filter_map(|(n, _)| builtin(n, 0)).collect();
    out.extend(churn_scenarios(1..=seeds));
    out
}

/// `random-churn` with each seed of `seeds`, e.g. seeds the suite does not run.
///
/// ```
/// let held_out = kstreams_assignor::sim::churn_scenarios(101..=103);
/// let names: Vec<&str> = held_out.iter().map(|s| s.name.as_str()).collect();
/// assert_eq!(names, ["random-churn-101", "random-churn-102", "random-churn-103"]);
/// ```
pub fn churn_scenarios(seeds: std::ops::RangeInclusive<u64>) -> Vec<Scenario> {
    seeds.filter_map(|seed| builtin("random-churn", seed)).collect()
}

/// Runs `baseline` and `candidate` on each scenario.
///
/// # Errors
/// The first [`SimError`] of either run.
pub fn compare(
    baseline: &dyn TaskAssignor,
    candidate: &dyn TaskAssignor,
    scenarios: &[Scenario],
    config: &SimConfig,
) -> Result<Comparison, SimError> {
    let mut rows = Vec::with_capacity(scenarios.len());
    let mut first_reports = None;
    for scenario in scenarios {
        let (mut a, mut world_a) = run_world(baseline, Some(candidate), scenario, config)?;
        let (mut b, mut world_b) = run_world(candidate, Some(baseline), scenario, config)?;
        // The copies cost both runs up to the same moment: the later of their ends.
        let horizon = world_a.now.max(world_b.now);
        world_a.observe_until(horizon, &mut a);
        world_b.observe_until(horizon, &mut b);
        let mut same_inputs = SameInputs::default();
        let own = |r: &Round| (r.restoring_lag, r.restoring_lag_not_caught_up);
        let shadow = |r: &Round| (r.shadow_restoring_lag.unwrap_or(0), r.shadow_restoring_lag_not_caught_up.unwrap_or(0));
        for r in &a.rounds {
            same_inputs.add(own(r), shadow(r));
        }
        for r in &b.rounds {
            same_inputs.add(shadow(r), own(r));
        }
        rows.push(ComparisonRow { scenario: scenario.name.clone(), baseline: (&a).into(), candidate: (&b).into(), same_inputs });
        if first_reports.is_none() {
            first_reports = Some((a, b));
        }
    }
    Ok(Comparison { baseline: baseline.name().to_owned(), candidate: candidate.name().to_owned(), rows, first_reports })
}

/// [`compare`] over [`suite_scenarios`].
///
/// ```
/// use kstreams_assignor::engine::AssignorKind;
/// use kstreams_assignor::sim::{compare_suite, SimConfig};
///
/// let cmp = compare_suite(AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor(), 2, &SimConfig::default()).unwrap();
/// assert_eq!(cmp.rows.len(), 6 + 2);
/// let fewer_moves = &cmp.targets()[0];
/// assert!(fewer_moves.name.contains("fewer task movements") && fewer_moves.holds, "{}", fewer_moves.detail);
/// ```
///
/// # Errors
/// The first [`SimError`] of any run.
pub fn compare_suite(
    baseline: &dyn TaskAssignor,
    candidate: &dyn TaskAssignor,
    seeds: u64,
    config: &SimConfig,
) -> Result<Comparison, SimError> {
    compare(baseline, candidate, &suite_scenarios(seeds), config)
}

fn percent_less(base: f64, cand: f64) -> f64 {
    if base == 0.0 { 0.0 } else { 100.0 * (base - cand) / base }
}

impl Comparison {
    /// [`SameInputs`] over every scenario.
    pub fn same_inputs(&self) -> SameInputs {
        let mut all = SameInputs::default();
        self.rows.iter().for_each(|r| all.merge(&r.same_inputs));
        all
    }

    fn total(&self, f: impl Fn(&Summary) -> f64) -> (f64, f64) {
        self.rows.iter().fold((0.0, 0.0), |(a, b), r| (a + f(&r.baseline), b + f(&r.candidate)))
    }

    /// The issue's targets for the candidate against the baseline:
    /// * ≥ 30 % fewer task movements over the suite;
    /// * ≥ 30 % fewer probing rebalances, or ≥ 30 % less time to converge, over the suite;
    /// * in every scenario: no more restoring lag, no worse final spread (all actives and
    ///   stateful actives), and convergence;
    /// * less restoring lag over the suite, and on the same inputs ([`SameInputs`]) never more
    ///   restoring on a client that is not caught up: the form of the restoring target that does
    ///   not depend on the copies each run's own history left behind;
    /// * no movement on the rolling bounce;
    /// * moves within 10 % of the lower bound in every scenario where it applies.
    pub fn targets(&self) -> Vec<Target> {
        let mut out = Vec::new();
        let (mb, mc) = self.total(|s| s.tasks_moved as f64);
        out.push(Target {
            name: "≥ 30% fewer task movements (suite)".into(),
            holds: mc <= 0.7 * mb,
            detail: format!("{mb:.0} → {mc:.0} ({:.1}% fewer)", percent_less(mb, mc)),
        });
        let (pb, pc) = self.total(|s| s.probing_rebalances as f64);
        let (tb, tc) = self.total(|s| s.time_to_converge_ms as f64);
        out.push(Target {
            name: "≥ 30% fewer probing rebalances or less time to converge (suite)".into(),
            holds: pc <= 0.7 * pb || tc <= 0.7 * tb,
            detail: format!(
                "probing {pb:.0} → {pc:.0} ({:.1}% fewer); time {} → {} ({:.1}% less)",
                percent_less(pb, pc),
                format_ms(tb as i64),
                format_ms(tc as i64),
                percent_less(tb, tc)
            ),
        });
        let failing = |pred: &dyn Fn(&ComparisonRow) -> bool| -> Vec<String> {
            self.rows.iter().filter(|r| !pred(r)).map(|r| r.scenario.clone()).collect()
        };
        let push = |out: &mut Vec<Target>, name: &str, bad: Vec<String>| {
            let detail = if bad.is_empty() { "every scenario".into() } else { format!("fails in {}", bad.join(", ")) };
            out.push(Target { name: name.into(), holds: bad.is_empty(), detail });
        };
        push(&mut out, "converges in every scenario", failing(&|r| r.candidate.converged));
        push(&mut out, "never more restoring lag on actives", failing(&|r| r.candidate.restoring_lag <= r.baseline.restoring_lag));
        let (rb, rc) = self.total(|s| s.restoring_lag as f64);
        let same = self.same_inputs();
        out.push(Target {
            name: "less restoring lag on actives (suite), and on the same inputs never more on a client not caught up".into(),
            holds: rc < rb && same.candidate_restores_more_not_caught_up == 0,
            detail: format!(
                "{rb:.0} → {rc:.0} ({:.1}% less); more on a client not caught up in {} of {} rebalances",
                percent_less(rb, rc),
                same.candidate_restores_more_not_caught_up,
                same.rebalances
            ),
        });
        push(
            &mut out,
            "never a worse final spread",
            failing(&|r| {
                r.candidate.final_spread <= r.baseline.final_spread + 1e-9
                    && r.candidate.final_stateful_spread <= r.baseline.final_stateful_spread + 1e-9
            }),
        );
        push(
            &mut out,
            "zero movements on the rolling bounce",
            failing(&|r| !r.scenario.starts_with("rolling-bounce") || r.candidate.tasks_moved == 0),
        );
        let applies = self.rows.iter().filter(|r| r.candidate.lower_bound.is_some()).count();
        let bad = failing(&|r| {
            r.candidate.lower_bound.is_none_or(|lb| r.candidate.bounded_tasks_moved as f64 <= 1.1 * lb as f64)
        });
        let name = format!("moves within 10% of the lower bound (applies in {applies} of {})", self.rows.len());
        push(&mut out, &name, bad);
        out
    }

    /// The side-by-side table: one line per scenario, totals, improvements and targets.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "A = {}, B = {}", self.baseline, self.candidate);
        let _ = writeln!(
            out,
            "| scenario | moved A | moved B | lower bound (B moved) | warm-ups A | warm-ups B | probing A | probing B | converge A | converge B | restored lag A | restored lag B | downtime A | downtime B | spread A | spread B |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let line = |out: &mut String, name: &str, a: &Summary, b: &Summary| {
            let bound = b.lower_bound.map_or("n/a".to_owned(), |lb| format!("{lb} ({})", b.bounded_tasks_moved));
            let conv = |s: &Summary| {
                let t = format_ms(s.time_to_converge_ms);
                if s.converged { t } else { format!("{t} (not converged)") }
            };
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {bound} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2}/{:.2}/{:.2} | {:.2}/{:.2}/{:.2} |",
                a.tasks_moved,
                b.tasks_moved,
                a.warmups,
                b.warmups,
                a.probing_rebalances,
                b.probing_rebalances,
                conv(a),
                conv(b),
                a.restoring_lag,
                b.restoring_lag,
                format_ms(a.task_downtime_ms),
                format_ms(b.task_downtime_ms),
                a.final_spread,
                a.final_stateful_spread,
                a.final_subtopology_spread,
                b.final_spread,
                b.final_stateful_spread,
                b.final_subtopology_spread
            );
        };
        for r in &self.rows {
            line(&mut out, &r.scenario, &r.baseline, &r.candidate);
        }
        let sum = |f: &dyn Fn(&Summary) -> f64| self.total(f);
        let (mb, mc) = sum(&|s| s.tasks_moved as f64);
        let (wb, wc) = sum(&|s| s.warmups as f64);
        let (pb, pc) = sum(&|s| s.probing_rebalances as f64);
        let (tb, tc) = sum(&|s| s.time_to_converge_ms as f64);
        let (lb, lc) = sum(&|s| s.restoring_lag as f64);
        let (eb, ec) = sum(&|s| s.expected_departure_restore as f64);
        let (sb, sc) = sum(&|s| s.final_subtopology_spread);
        let (db, dc) = sum(&|s| s.task_downtime_ms as f64);
        let bound: usize = self.rows.iter().filter_map(|r| r.candidate.lower_bound).sum();
        let bounded: usize = self.rows.iter().filter(|r| r.candidate.lower_bound.is_some()).map(|r| r.candidate.bounded_tasks_moved).sum();
        let _ = writeln!(
            out,
            "| **total ({} scenarios)** | {mb:.0} | {mc:.0} | {bound} ({bounded}) | {wb:.0} | {wc:.0} | {pb:.0} | {pc:.0} | {} | {} | {lb:.0} | {lc:.0} | {} | {} | sub-topology {sb:.2} | sub-topology {sc:.2} |",
            self.rows.len(),
            format_ms(tb as i64),
            format_ms(tc as i64),
            format_ms(db as i64),
            format_ms(dc as i64)
        );
        let change = |base: f64, cand: f64, fewer: &str, more: &str, what: &str| {
            let p = percent_less(base, cand);
            if p >= 0.0 { format!("{p:.1}% {fewer} {what}") } else { format!("{:.1}% {more} {what}", -p) }
        };
        let _ = writeln!(
            out,
            "\nB against A over the suite: {}, {}, {}, {}, {} ({} whoever departs: {eb:.0} → {ec:.0}).",
            change(mb, mc, "fewer", "more", "task movements"),
            change(wb, wc, "fewer", "more", "warm-ups"),
            change(pb, pc, "fewer", "more", "probing rebalances"),
            change(tb, tc, "less", "more", "time to converge"),
            change(lb, lc, "less", "more", "restored lag"),
            change(eb, ec, "less", "more", "on average")
        );
        let (less, more) = self.rows.iter().fold((0, 0), |(l, m), r| {
            let (a, b) = (r.baseline.task_downtime_ms, r.candidate.task_downtime_ms);
            (l + usize::from(b < a), m + usize::from(b > a))
        });
        let _ = writeln!(
            out,
            "Task downtime (task-time active tasks did not process: unowned, or restoring their state): A {}, B {}, {}; B's is less in {less} scenario(s), more in {more}.",
            format_ms(db as i64),
            format_ms(dc as i64),
            change(db, dc, "less", "more", "for B")
        );
        let (smaller, larger) = self.rows.iter().fold((0, 0), |(s, l), r| {
            let (a, b) = (r.baseline.final_subtopology_spread, r.candidate.final_subtopology_spread);
            (s + usize::from(b < a - 1e-9), l + usize::from(b > a + 1e-9))
        });
        let _ = writeln!(
            out,
            "Final sub-topology spread: B's is smaller in {smaller} scenario(s), larger in {larger}, equal in {}; summed {sb:.2} → {sc:.2}.",
            self.rows.len() - smaller - larger
        );
        let (rb, rc) = sum(&|s| s.changelog_records_read as f64);
        let (cb, cc) = sum(&|s| s.local_copy_ms as f64 / 3_600_000.0);
        let restores_more: Vec<&ComparisonRow> =
            self.rows.iter().filter(|r| r.candidate.restoring_lag > r.baseline.restoring_lag).collect();
        let fewer_reads = restores_more.iter().filter(|r| r.candidate.changelog_records_read < r.baseline.changelog_records_read).count();
        let fewer_copies = restores_more.iter().filter(|r| r.candidate.local_copy_ms < r.baseline.local_copy_ms).count();
        let (fa, fb) = sum(&|s| s.final_spares as f64);
        let _ = writeln!(
            out,
            "What the copies cost, both runs counted up to the later one's last rebalance: B's runs read {} than A's ({rb:.0} → {rc:.0}) and keep {} beyond the actives ({cb:.0} → {cc:.0}). In the {} scenario(s) where B restores more, B reads fewer records in {fewer_reads} and keeps fewer copy-hours in {fewer_copies}. Once stable, A keeps {fa:.0} spare copies and B {fb:.0} in all, until the next rebalance.",
            change(rb, rc, "fewer", "more", "changelog records"),
            change(cb, cc, "fewer", "more", "copy-hours of state"),
            restores_more.len()
        );
        let same = self.same_inputs();
        let _ = writeln!(
            out,
            "On the same inputs (both assignors asked at each of the {} rebalances of both runs): B's answers would restore {} ({:.0} → {:.0}); B's would restore more in {} rebalance(s), by at most {} records, and more on clients not caught up in {}.",
            same.rebalances,
            change(same.baseline_restoring_lag as f64, same.candidate_restoring_lag as f64, "less", "more", "than A's"),
            same.baseline_restoring_lag as f64,
            same.candidate_restoring_lag as f64,
            same.candidate_restores_more,
            same.candidate_most_extra,
            same.candidate_restores_more_not_caught_up
        );
        let _ = writeln!(out, "\nTargets:");
        for t in self.targets() {
            let _ = writeln!(out, "- [{}] {}: {}", if t.holds { "x" } else { " " }, t.name, t.detail);
        }
        out
    }
}
