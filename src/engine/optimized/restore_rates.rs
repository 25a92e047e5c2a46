//! The restore-rate estimate behind the warm-up order (step 3), the target's costs (step 2) and
//! the probing deadline (step 7): rates observed since the previous rebalance.

use crate::engine::model::{Client, Model, Task};
use crate::engine::task_lag::TaskLag;
use crate::wire::LATEST_OFFSET;

/// Restore rate assumed, for ranking only, where none has been observed (records per second).
pub(super) const NOMINAL_RECORDS_PER_SEC: i64 = 1_000;

/// Restore rates observed between the previous rebalance and this one.
pub(super) struct RestoreRates {
    /// Per client: mean restore rate of its restoring tasks (records per ms), if observed.
    client: Vec<Option<f64>>,
    /// Mean over all observations.
    group: Option<f64>,
    /// Per task: changelog growth (records per ms); empty (all 0) without a previous
    /// rebalance to compare with.
    produce: Vec<f64>,
}

impl RestoreRates {
    pub(super) fn new(model: &Model<'_>) -> Self {
        let n = model.num_clients();
        let mut out = Self { client: vec![None; n], group: None, produce: Vec::new() };
        let Some(prev) = model.input.previous_rebalance.as_ref().filter(|p| p.elapsed_ms > 0) else {
            return out;
        };
        out.produce = vec![0.0; model.tasks.len()];
        let elapsed = prev.elapsed_ms as f64;
        for (task, &before) in &prev.changelog_end_offset_sums {
            if let Some(t) = model.task(task) {
                let now = model.end_offset_sums[t as usize];
                if before >= 0 && now >= before {
                    out.produce[t as usize] = (now - before) as f64 / elapsed;
                }
            }
        }
        let (mut sum, mut count) = (0.0, 0usize);
        for (c, client) in model.clients.iter().enumerate() {
            let Some(before) = prev.task_offset_sums.get(&client.process_id) else { continue };
            let (mut s, mut k) = (0.0, 0usize);
            // In task order, as the reports are kept (a floating-point sum depends on the order).
            for (t, now) in model.reported(c).iter() {
                if !model.stateful[t as usize] {
                    continue;
                }
                // A task it had no state for then has been restored from 0.
                let then = before.get(model.tasks[t as usize]).copied().unwrap_or(0);
                // Only tasks still restoring: a caught-up copy only follows the producers.
                let end = model.end_offset_sums[t as usize];
                if then >= 0 && now > then && now < end {
                    s += (now - then) as f64 / elapsed;
                    k += 1;
                }
            }
            if k > 0 {
                out.client[c] = Some(s / k as f64);
                sum += s;
                count += k;
            }
        }
        if count > 0 {
            out.group = Some(sum / count as f64);
        }
        out
    }

    /// The restore rate assumed for client `c` (records per ms): its own, else the group's. Two
    /// clients with the same one have the same [`net_rate`](Self::net_rate) on every task.
    pub(super) fn gross_rate(&self, c: Client) -> Option<f64> {
        self.client[c].or(self.group)
    }

    /// Net catch-up rate of client `c` on task `t` (records per ms), if known and positive.
    pub(super) fn net_rate(&self, c: Client, t: Task) -> Option<f64> {
        let gross = self.gross_rate(c)?;
        let net = gross - self.produce.get(t as usize).copied().unwrap_or(0.0);
        (net > 0.0).then_some(net)
    }

    /// Estimated time for client `c` to restore task `t` fully (ms); `None` for an unknown lag.
    pub(super) fn restore_ms(&self, model: &Model<'_>, c: Client, t: Task) -> Option<i64> {
        self.restore_ms_at(model.lag(c, t), c, t)
    }

    /// [`restore_ms`](Self::restore_ms) for `c`'s lag on `t`.
    pub(super) fn restore_ms_at(&self, lag: i64, c: Client, t: Task) -> Option<i64> {
        if lag == LATEST_OFFSET {
            return Some(0);
        }
        if TaskLag(lag) == TaskLag::UNKNOWN || lag < 0 {
            return None;
        }
        let rate = self.net_rate(c, t).unwrap_or(NOMINAL_RECORDS_PER_SEC as f64 / 1000.0);
        Some((lag as f64 / rate).min(i64::MAX as f64 / 2.0) as i64)
    }
}
