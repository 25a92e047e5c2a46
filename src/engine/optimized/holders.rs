//! Who holds which copy: previous owners, the best caught-up holders and lags as the assignor
//! compares them (used by steps 1 to 5).

use crate::engine::lags::LagIndex;
use crate::engine::model::{Client, Model, Task};
use crate::engine::task_lag::TaskLag;
use crate::wire::LATEST_OFFSET;

/// Lag as the assignor compares it: `-2` (running) before everything, unknown (`-3`) last.
pub(super) fn effective_lag(model: &Model<'_>, c: Client, t: Task) -> i64 {
    effective(model.lag(c, t))
}

/// [`effective_lag`] of a lag.
pub(super) fn effective(lag: i64) -> i64 {
    match lag {
        LATEST_OFFSET => -1,
        lag if lag < 0 => i64::MAX,
        lag => lag,
    }
}

/// The previous owner of each task: the client that reported it running (`-2`), else one that
/// owned its partitions (lowest index first).
pub(super) fn previous_owners(model: &Model<'_>) -> Vec<Option<Client>> {
    let mut owners = model.first_owners();
    // Running comes before owning: overwrite with the clients that report a task running,
    // visited from the last so that the lowest index is written last.
    for c in (0..model.num_clients()).rev() {
        for (t, sum) in model.reported(c).iter() {
            if sum == LATEST_OFFSET {
                owners[t as usize] = Some(c);
            }
        }
    }
    owners
}

/// The best caught-up client for `t` other than `except`: its previous owner, else the one
/// with the smallest lag (by [`effective_lag`], then index).
///
/// Complexity: O(R·log M) for the R clients that reported `t` (M: the most tasks a client
/// reported); the others all have the same lag, so only the first of them counts.
pub(super) fn best_caught_up(model: &Model<'_>, lags: &LagIndex, t: Task, except: Option<Client>, owners: &[Option<Client>]) -> Option<Client> {
    if let Some(owner) = owners[t as usize].filter(|&o| Some(o) != except && lags.is_caught_up(o, t)) {
        return Some(owner);
    }
    lag_candidates(model, lags, t, except).filter(|&(_, c)| lags.is_caught_up(c, t)).min().map(|(_, c)| c)
}

/// The clients that can come first in `t`'s order by (lag as [`effective_lag`] compares it,
/// index), `except` aside: those that reported `t`, and the first of the others, which all have
/// the same lag (and are caught up or not alike).
///
/// Complexity: O(R) for the R clients that reported `t`, plus the scan for the first other.
pub(super) fn lag_candidates<'a>(model: &'a Model<'_>, lags: &'a LagIndex, t: Task, except: Option<Client>) -> impl Iterator<Item = (i64, Client)> + 'a {
    let reported = lags.reporters(t).iter().filter(move |&&(_, c)| Some(c) != except).map(|&(lag, c)| (effective(lag), c));
    let reported_by = |c: Client| model.reported(c).contains(t);
    let other = (0..model.num_clients()).find(|&c| Some(c) != except && !reported_by(c)).map(|c| (effective(model.unreported_lag(t)), c));
    reported.chain(other)
}

/// Where each stateful task (in `model.stateful_tasks` order) runs while its target
/// (`target`, same order) is not caught up: the target when it is caught up; else a caught-up
/// client (the previous owner first, then by lag); else, when no client is caught up, the client
/// with the smallest lag if that is strictly smaller than the target's and that client would
/// process the task sooner or is well ahead on it, else the target.
///
/// "Sooner" compares restoring backlogs: a client restores the tasks it holds without being
/// caught up on them in parallel over its threads, so it processes the last of them after about
/// (sum of their lags) / threads at equal restore rates. The backlogs start as if every such
/// task restored on its target; a task then stays on the smaller-lag client only if that
/// client's backlog with it, per thread, is smaller than the target's (with it), or its head
/// start is a tenth of the task or more (its lag at most 90 % of the target's): spreading then
/// never restores more than a tenth of a task again. A member that restored a little of every
/// task before the others joined (the one that took them all on a cold start) so keeps its
/// share, and the rest restore in parallel elsewhere; a client well ahead on a task keeps it.
///
/// Complexity: O(T·R) for T stateful tasks and R reporters per task.
pub(super) fn active_holders(model: &Model<'_>, lags: &LagIndex, owners: &[Option<Client>], target: &[Client], caps: &[u64]) -> Vec<Client> {
    // A lag as restoring work: unknown counts as more than any known lag.
    let work = |c: Client, t: Task| -> i128 { i128::from(effective_lag(model, c, t).max(0)) };
    let mut holders = Vec::with_capacity(target.len());
    let mut backlog = vec![0i128; model.num_clients()];
    let mut closer: Vec<(usize, Client)> = Vec::new();
    for (k, (&t, &d)) in model.stateful_tasks.iter().zip(target).enumerate() {
        crate::interrupt::tick();
        if lags.is_caught_up(d, t) {
            holders.push(d);
        } else if let Some(c) = best_caught_up(model, lags, t, Some(d), owners) {
            holders.push(c);
        } else {
            holders.push(d);
            backlog[d] += work(d, t);
            let own = effective_lag(model, d, t);
            if let Some((_, c)) = lag_candidates(model, lags, t, Some(d)).min().filter(|&(l, _)| l < own) {
                closer.push((k, c));
            }
        }
    }
    for (k, c) in closer {
        let (t, d) = (model.stateful_tasks[k], target[k]);
        let (here, there) = (work(c, t), work(d, t));
        // The target restores the task when `c`'s head start is under a tenth of it (spreading
        // then restores at most that much more) and `c` would process it later:
        // (backlog[c] + here) / caps[c] ≥ backlog[d] / caps[d], without dividing.
        let small_head_start = here * 10 >= there * 9;
        let later = (backlog[c] + here) * i128::from(caps[d]) >= backlog[d] * i128::from(caps[c]);
        if !(small_head_start && later) {
            holders[k] = c;
            backlog[c] += here;
            backlog[d] -= there;
        }
    }
    holders
}

/// Whether client `c` is caught up on `t` (`-2`, or a lag within `acceptable.recovery.lag`).
pub(super) fn lags_caught_up(model: &Model<'_>, c: Client, t: Task) -> bool {
    TaskLag(model.lag(c, t)).is_caught_up(model.input.configs.acceptable_recovery_lag)
}
