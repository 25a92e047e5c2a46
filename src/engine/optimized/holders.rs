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

/// Where `t` runs while its target `d` is not caught up: a caught-up client (the previous
/// owner first, then by lag), else the client with the smallest lag if strictly smaller than
/// `d`'s.
pub(super) fn better_holder(model: &Model<'_>, lags: &LagIndex, t: Task, d: Client, owners: &[Option<Client>]) -> Option<Client> {
    best_caught_up(model, lags, t, Some(d), owners).or_else(|| {
        let own = effective_lag(model, d, t);
        lag_candidates(model, lags, t, Some(d)).min().filter(|&(l, _)| l < own).map(|(_, c)| c)
    })
}

/// Whether client `c` is caught up on `t` (`-2`, or a lag within `acceptable.recovery.lag`).
pub(super) fn lags_caught_up(model: &Model<'_>, c: Client, t: Task) -> bool {
    TaskLag(model.lag(c, t)).is_caught_up(model.input.configs.acceptable_recovery_lag)
}
