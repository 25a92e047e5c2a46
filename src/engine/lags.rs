//! The high-availability assignor's per-task lag tables: which clients are caught up on a task
//! (Kafka's `tasksToCaughtUpClients`) and all clients sorted by lag (`tasksToClientByLag`).
//!
//! Kafka builds both tables over every (task, client) pair. Here only the clients that reported an
//! offset sum for a task are stored: every other client has the same lag (the whole end-offset
//! sum), so it is caught up or not as a group and sits in the lag order as a block sorted by
//! process id, which a merge produces on demand.

use super::model::{Client, Model, Task};
use super::task_lag::TaskLag;

/// Lags per stateful task, each per-task list a range of one flat array (no allocation per task).
#[derive(Debug)]
pub(crate) struct LagIndex {
    /// Task `t`'s reporters are `reported[report_starts[t]..report_starts[t + 1]]`: the clients
    /// that reported it, sorted by (lag, client). (Positions are `u32`s: 4 bytes a task.)
    reported: Vec<(i64, Client)>,
    report_starts: Vec<u32>,
    /// Per task: the number of caught-up clients.
    caught_up_count: Vec<u32>,
    /// Per task: whether the clients that did not report it are caught up.
    others_caught_up: Vec<bool>,
    /// Task `t`'s exceptions are `exceptions[exception_starts[t]..exception_starts[t + 1]]`: the
    /// reporters whose caught-up state differs from the others', sorted.
    exceptions: Vec<Client>,
    exception_starts: Vec<u32>,
    num_clients: usize,
}

impl LagIndex {
    /// Builds the tables for the model's stateful tasks.
    ///
    /// Complexity: O(N + R log R) for N clients and R reported offset sums.
    pub(crate) fn new(model: &Model<'_>) -> Self {
        let acceptable_recovery_lag = model.input.configs.acceptable_recovery_lag;
        let tasks = model.tasks.len();
        // Counts, then a prefix sum, then each client's reports in its task's range.
        let mut report_starts = vec![0u32; tasks + 1];
        for c in 0..model.num_clients() {
            crate::interrupt::tick();
            for &t in model.reported(c).tasks() {
                if model.stateful[t as usize] {
                    report_starts[t as usize + 1] += 1;
                }
            }
        }
        for t in 0..tasks {
            report_starts[t + 1] = report_starts[t + 1].checked_add(report_starts[t]).expect("LagIndex: 2^32 reported offset sums or more");
        }
        let mut fill = report_starts[..tasks].to_vec();
        let mut reported = vec![(0i64, 0 as Client); report_starts[tasks] as usize];
        for c in 0..model.num_clients() {
            crate::interrupt::tick();
            for (t, sum) in model.reported(c).iter() {
                if model.stateful[t as usize] {
                    // `Model::lag` of `c` on `t`, from the offset sum at hand.
                    let lag = TaskLag::compute(Some(sum), model.end_offset_sums[t as usize]).0;
                    reported[fill[t as usize] as usize] = (lag, c);
                    fill[t as usize] += 1;
                }
            }
        }
        drop(fill);
        let n = model.num_clients();
        let mut caught_up_count = vec![0u32; tasks];
        let mut others_caught_up = vec![false; tasks];
        // At most one exception per report: reserved at once rather than grown by doubling
        // (the unused part is never touched, and is given back below).
        let mut exceptions = Vec::with_capacity(report_starts[tasks] as usize);
        let mut exception_starts = vec![0u32; tasks + 1];
        let mut next = 0;
        for t in 0..tasks {
            if model.stateful[t] {
                let list = &mut reported[report_starts[t] as usize..report_starts[t + 1] as usize];
                list.sort_unstable();
                let caught_up = |lag: i64| TaskLag(lag).is_caught_up(acceptable_recovery_lag);
                let reporters = list.iter().filter(|(lag, _)| caught_up(*lag)).count();
                others_caught_up[t] = caught_up(model.unreported_lag(t as Task));
                caught_up_count[t] = (reporters + if others_caught_up[t] { n - list.len() } else { 0 }) as u32;
                let from = exceptions.len();
                exceptions.extend(list.iter().filter(|(lag, _)| caught_up(*lag) != others_caught_up[t]).map(|&(_, c)| c));
                exceptions[from..].sort_unstable();
                // At most one exception per report, so this fits as `report_starts` does.
                next = exceptions.len() as u32;
            }
            exception_starts[t + 1] = next;
        }
        exceptions.shrink_to_fit();
        Self { reported, report_starts, caught_up_count, others_caught_up, exceptions, exception_starts, num_clients: n }
    }

    /// The number of offset sums reported for stateful tasks, over all tasks and clients.
    pub(crate) fn report_count(&self) -> usize {
        self.reported.len()
    }

    fn exceptions(&self, t: Task) -> &[Client] {
        &self.exceptions[self.exception_starts[t as usize] as usize..self.exception_starts[t as usize + 1] as usize]
    }

    /// Whether client `c` is caught up on task `t` (lag `-2`, an unbounded acceptable lag, or
    /// `0 ≤ lag ≤ acceptable.recovery.lag`).
    pub(crate) fn is_caught_up(&self, c: Client, t: Task) -> bool {
        self.others_caught_up[t as usize] != self.exceptions(t).binary_search(&c).is_ok()
    }

    /// The clients caught up on `t`, sorted, when the clients that did not report it are not
    /// caught up (then they are the reporters that are); `None` otherwise.
    pub(crate) fn caught_up_clients(&self, t: Task) -> Option<&[Client]> {
        (!self.others_caught_up[t as usize]).then(|| self.exceptions(t))
    }

    /// The number of clients caught up on `t`.
    pub(crate) fn caught_up_count(&self, t: Task) -> usize {
        self.caught_up_count[t as usize] as usize
    }

    /// The clients that reported an offset sum for `t`, with their lags, sorted by (lag, client).
    pub(crate) fn reporters(&self, t: Task) -> &[(i64, Client)] {
        &self.reported[self.report_starts[t as usize] as usize..self.report_starts[t as usize + 1] as usize]
    }

    /// [`Model::lag`] of client `c` on stateful task `t`, read from `t`'s reporters (where `c` is
    /// not one, the lag of every client that did not report `t`).
    pub(crate) fn lag(&self, model: &Model<'_>, c: Client, t: Task) -> i64 {
        debug_assert!(model.stateful[t as usize], "task {t} is stateless");
        self.reporters(t).iter().find(|&&(_, r)| r == c).map_or_else(|| model.unreported_lag(t), |&(lag, _)| lag)
    }

    /// The lag of the first client in `t`'s lag order.
    pub(crate) fn smallest_lag(&self, model: &Model<'_>, t: Task) -> i64 {
        let list = self.reporters(t);
        let first_reported = list.first().map(|&(lag, _)| lag);
        if list.len() < self.num_clients {
            let others = model.unreported_lag(t);
            first_reported.map_or(others, |lag| lag.min(others))
        } else {
            first_reported.expect("a task with clients has a lag order")
        }
    }

    /// Kafka's `mostCaughtUpEligibleClient`: the first client in `t`'s (lag, process id) order
    /// that `eligible` accepts, looking only at clients before `destination`.
    ///
    /// Complexity: O(k + r) for k clients visited and r reporters skipped in the unreported block.
    pub(crate) fn most_caught_up_eligible(
        &self,
        model: &Model<'_>,
        t: Task,
        destination: Client,
        mut eligible: impl FnMut(Client) -> bool,
    ) -> Option<Client> {
        let list = self.reporters(t);
        let others_lag = model.unreported_lag(t);
        let is_reporter = |c: Client| model.reported(c).contains(t);
        let advance_other = |from: usize| (from..self.num_clients).find(|&c| !is_reporter(c));
        let mut other = advance_other(0);
        let mut i = 0usize;
        loop {
            let from_list = list.get(i).copied();
            let pick = match (from_list, other) {
                (None, None) => return None,
                (Some(entry), None) => {
                    i += 1;
                    entry.1
                }
                (None, Some(c)) => {
                    other = advance_other(c + 1);
                    c
                }
                (Some(entry), Some(c)) => {
                    if entry <= (others_lag, c) {
                        i += 1;
                        entry.1
                    } else {
                        other = advance_other(c + 1);
                        c
                    }
                }
            };
            if pick == destination {
                return None;
            }
            if eligible(pick) {
                return Some(pick);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testdata;

    /// The index answers as Kafka's full tables would (every client, sorted by (lag, process id)).
    #[test]
    fn agrees_with_the_full_tables() {
        for index in 0..60 {
            let s = testdata::random(5, index);
            if s.input.changelog_end_offset_sums.is_none() {
                continue;
            }
            let model = Model::new(&s.input).unwrap();
            let lags = LagIndex::new(&model);
            let acceptable = s.input.configs.acceptable_recovery_lag;
            for &t in &model.stateful_tasks {
                let mut order: Vec<(i64, Client)> = (0..model.num_clients()).map(|c| (model.lag(c, t), c)).collect();
                order.sort_unstable();
                assert_eq!(lags.smallest_lag(&model, t), order[0].0);
                let caught_up: Vec<bool> =
                    (0..model.num_clients()).map(|c| TaskLag(model.lag(c, t)).is_caught_up(acceptable)).collect();
                assert_eq!(lags.caught_up_count(t), caught_up.iter().filter(|&&b| b).count());
                for (c, &expected) in caught_up.iter().enumerate() {
                    assert_eq!(lags.is_caught_up(c, t), expected);
                    assert_eq!(lags.lag(&model, c, t), model.lag(c, t));
                }
                for (position, &(_, destination)) in order.iter().enumerate() {
                    let before = &order[..position];
                    let odd = |c: Client| c % 2 == 1;
                    assert_eq!(lags.most_caught_up_eligible(&model, t, destination, |_| true), before.first().map(|e| e.1));
                    assert_eq!(
                        lags.most_caught_up_eligible(&model, t, destination, odd),
                        before.iter().map(|e| e.1).find(|&c| odd(c))
                    );
                }
            }
        }
    }
}
