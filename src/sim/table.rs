//! The round-by-round table of a run, and the simulated times in it.

use super::report::Report;

impl Report {
    /// The round-by-round table the command line prints.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "scenario {} · assignor {}", self.scenario, self.assignor);
        let _ = writeln!(
            out,
            "{:>5} {:>9} {:>7} {:>6} {:>7} {:>7} {:>8} {:>12} {:>13} {:>6}  trigger",
            "round", "time", "members", "moved", "warmups", "spread", "stateful", "sub-topology", "restoring lag", "probe"
        );
        for r in &self.rounds {
            let _ = writeln!(
                out,
                "{:>5} {:>9} {:>7} {:>6} {:>7} {:>7.2} {:>8.2} {:>12.2} {:>13} {:>6}  {}",
                r.round,
                format_ms(r.time_ms),
                r.members,
                r.tasks_moved,
                r.warmups,
                r.load_spread,
                r.stateful_load_spread,
                r.subtopology_spread,
                r.restoring_lag,
                if r.probing_rebalance { "yes" } else { "no" },
                r.trigger
            );
        }
        let _ = writeln!(
            out,
            "{} after {} rebalance(s) and {} from the last event; moved {}, warm-ups {}, probing rebalances {}, restoring lag {}, final spread {:.2}; changelog records read {}, copy-hours beyond the actives {:.1}",
            if self.converged { "converged" } else { "NOT converged" },
            self.rounds_to_converge,
            format_ms(self.time_to_converge_ms),
            self.total_tasks_moved,
            self.total_warmups,
            self.probing_rebalances,
            self.total_restoring_lag,
            self.final_load_spread,
            self.changelog_records_read,
            self.local_copy_ms as f64 / 3_600_000.0
        );
        out
    }
}

/// `ms` as the tables print a simulated time: `1h02m03s`, `2m03s` or `3.045s`.
pub fn format_ms(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s % 3600 / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}.{:03}s", ms % 1000)
    }
}
