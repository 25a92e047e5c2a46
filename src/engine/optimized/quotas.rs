//! Steps 1, 4 and 6, the quotas: per-client counts dealt capacity-proportionally, and as close
//! to what each client keeps as that balance allows (`stream.imbalance.percentage` widening it).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::engine::model::Model;

/// `stream.imbalance.percentage`, within 0 to 100.
pub(super) fn imbalance(model: &Model<'_>) -> u32 {
    model.input.configs.stream_imbalance_percentage.clamp(0, 100) as u32
}

/// Deals `total` units one at a time to the client with the least units per thread (with
/// `lowest_after`: the least after taking the unit, which keeps the maximum down rather than the
/// minimum up). Ties go to the other criterion, then to a client further below its `claims` (it
/// keeps a task instead of taking one), then to the lower index. No client goes above `limit`
/// (while any is below it).
///
/// Complexity: O(N · log total) to deal the units by whole units per thread at once, then
/// O((N + C) · log N) for the C ≤ sum of `caps` units left, one at a time: only the client that
/// takes a unit changes its place in that order.
pub(super) fn deal(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, lowest_after: bool) -> Vec<usize> {
    let mut q = start.to_vec();
    let mut left = total;
    // A client's keys rise with its units, so the units dealt are the `total` least keys of
    // all (client, units held) pairs, first by units per thread (after taking the unit, with
    // `lowest_after`): every key below a whole `t` units per thread is dealt before any other.
    // The most such keys that `total` covers are dealt at once, and the rest one at a time. (A
    // client without threads is last whatever its units: then all are dealt one at a time.)
    if caps.iter().all(|&c| c > 0) {
        let off = u128::from(lowest_after);
        // The units client `c` takes below `t` units per thread.
        let taken = |t: u128, c: usize| {
            if start[c] >= limit {
                0
            } else {
                ((t * u128::from(caps[c])).saturating_sub(off).min(limit as u128) as usize).max(start[c]) - start[c]
            }
        };
        let count = |t: u128| (0..start.len()).fold(0usize, |sum, c| sum.saturating_add(taken(t, c)));
        // Every client holds at least `t - 1` units below `t` per thread (or its limit).
        let (mut lo, mut hi) = (0u128, total as u128 + start.iter().max().map_or(0, |&s| s as u128) + 2);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if count(mid) <= total { lo = mid } else { hi = mid - 1 }
        }
        for (c, held) in q.iter_mut().enumerate() {
            *held += taken(lo, c);
        }
        left = total - count(lo);
    }
    let key = |c: usize, q: usize| DealKey { units: q, cap: caps[c], deficit: claims[c].saturating_sub(q), client: c, lowest_after };
    let mut heap: BinaryHeap<Reverse<DealKey>> = (0..q.len()).filter(|&c| q[c] < limit).map(|c| Reverse(key(c, q[c]))).collect();
    for _ in 0..left {
        let Some(Reverse(first)) = heap.pop() else { break };
        let c = first.client;
        q[c] += 1;
        if q[c] < limit {
            heap.push(Reverse(key(c, q[c])));
        }
    }
    q
}

/// A client's place in [`deal`]'s order, first to take the next unit first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DealKey {
    units: usize,
    cap: u64,
    deficit: usize,
    client: usize,
    lowest_after: bool,
}

impl Ord for DealKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // units / cap against the other's, exactly.
        let per_thread = |a: usize, b: usize| (a as u128 * u128::from(other.cap)).cmp(&(b as u128 * u128::from(self.cap)));
        let (now, after) = (per_thread(self.units, other.units), per_thread(self.units + 1, other.units + 1));
        let order = if self.lowest_after { after.then(now) } else { now.then(after) };
        order.then(other.deficit.cmp(&self.deficit)).then(self.client.cmp(&other.client))
    }
}

impl PartialOrd for DealKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Per-client counts for `total` more units on top of `start`, as balanced as [`deal`]'s
/// (every client's units per thread stay within its minimum and maximum) and as close to
/// `claims` as that allows: each client gets its claim clamped to that window, then the sum is
/// corrected on the most (least) loaded clients.
///
/// Complexity: O(N + total · log N) for the two deals, plus O(N) per unit by which the clamped
/// claims miss the deal's sum.
pub(crate) fn sticky_quotas(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, imbalance: u32) -> Vec<usize> {
    quota_window(total, caps, start, claims, limit, imbalance, None).0
}

/// [`sticky_quotas`], and the most each client may hold without leaving the window. `room`:
/// per client, how many more units of another kind it could take within the balance of all
/// units (negative: how many it must give up), to break ties between windows.
pub(super) fn quota_window(
    total: usize,
    caps: &[u64],
    start: &[usize],
    claims: &[usize],
    limit: usize,
    imbalance: u32,
    room: Option<&[i64]>,
) -> (Vec<usize>, Vec<usize>) {
    // The window does not depend on the claims' placement, so a placement inside it stays
    // inside it. Of the two ways of dealing, the one with the smaller spread sets it; at equal
    // spreads, the one whose quotas make the clients give up fewer of the units they claim,
    // then fewer units of another kind (per `room`), the first on a tie: balance then does not
    // force a move that another window avoids.
    let zeros = vec![0; start.len()];
    let spread = |q: &[usize]| {
        let loads = q.iter().zip(caps).map(|(&q, &c)| q as f64 / c as f64);
        loads.clone().fold(f64::MIN, f64::max) - loads.fold(f64::MAX, f64::min)
    };
    let raise_min = deal(total, caps, start, &zeros, limit, false);
    let lower_max = deal(total, caps, start, &zeros, limit, true);
    let (a, b) = (spread(&raise_min), spread(&lower_max));
    if b < a - 1e-12 {
        return fit_window(&lower_max, caps, start, claims, limit, imbalance);
    }
    let first = fit_window(&raise_min, caps, start, claims, limit, imbalance);
    if b > a + 1e-12 || lower_max == raise_min {
        return first;
    }
    let second = fit_window(&lower_max, caps, start, claims, limit, imbalance);
    let given_up = |q: &[usize]| -> (usize, i64) {
        let own: usize = claims.iter().zip(q).map(|(&c, &q)| c.saturating_sub(q)).sum();
        let other: i64 = room.map_or(0, |room| {
            // Units gained beyond the room: each makes the client give up one of another kind.
            (0..q.len()).map(|c| (q[c] as i64 - claims[c] as i64 - room[c].max(0)).max(0)).sum()
        });
        (own, other)
    };
    if given_up(&second.0) < given_up(&first.0) { second } else { first }
}

/// The quotas inside the window that `filled` (a deal) spans: every client's units per thread
/// between the deal's minimum and maximum, each client as close to its claim as that allows,
/// the sum corrected on the most (least) loaded clients; and the most each client may hold.
///
/// With an `imbalance` (`stream.imbalance.percentage`), the window also spans, per client, the
/// whole counts within its capacity-proportional share of the total ± that percentage: a
/// client within it keeps its claim.
pub(super) fn fit_window(filled: &[usize], caps: &[u64], start: &[usize], claims: &[usize], limit: usize, imbalance: u32) -> (Vec<usize>, Vec<usize>) {
    let n = filled.len();
    let load_lt = |a: (usize, usize), b: (usize, usize)| (a.0 as u128 * u128::from(caps[b.1])) < (b.0 as u128 * u128::from(caps[a.1]));
    let lo_at = (0..n).fold(0, |m, c| if load_lt((filled[c], c), (filled[m], m)) { c } else { m });
    let hi_at = (0..n).fold(0, |m, c| if load_lt((filled[m], m), (filled[c], c)) { c } else { m });
    let (lo_q, lo_cap) = (filled[lo_at] as u128, u128::from(caps[lo_at]));
    let (hi_q, hi_cap) = (filled[hi_at] as u128, u128::from(caps[hi_at]));
    let want: usize = filled.iter().sum();
    // With an imbalance, the whole counts within share × (100 ± imbalance) / 100 (none without).
    let per = caps.iter().map(|&c| u128::from(c)).sum::<u128>() * 100;
    let scaled = |c: usize, percent: u32| want as u128 * u128::from(caps[c]) * u128::from(percent);
    let tolerated = |c: usize| match imbalance {
        0 => (usize::MAX, 0),
        p => (scaled(c, 100 - p.min(100)).div_ceil(per) as usize, (scaled(c, 100 + p) / per) as usize),
    };
    let lo: Vec<usize> = (0..n)
        .map(|c| ((lo_q * u128::from(caps[c])).div_ceil(lo_cap) as usize).min(tolerated(c).0).max(start[c]).min(filled[c]))
        .collect();
    let hi: Vec<usize> =
        (0..n).map(|c| (((hi_q * u128::from(caps[c])) / hi_cap) as usize).max(tolerated(c).1).min(limit).max(filled[c])).collect();
    let mut q: Vec<usize> = (0..n).map(|c| claims[c].clamp(lo[c], hi[c].max(lo[c]))).collect();
    let mut sum: usize = q.iter().sum();
    while sum > want {
        let c = (0..n).filter(|&c| q[c] > lo[c]).fold(None, |m: Option<usize>, c| match m {
            Some(m) if !load_lt((q[m], m), (q[c], c)) => Some(m),
            _ => Some(c),
        });
        let Some(c) = c else { return (filled.to_vec(), hi) };
        q[c] -= 1;
        sum -= 1;
    }
    while sum < want {
        let c = (0..n).filter(|&c| q[c] < hi[c]).fold(None, |m: Option<usize>, c| match m {
            Some(m) if !load_lt((q[c] + 1, c), (q[m] + 1, m)) => Some(m),
            _ => Some(c),
        });
        let Some(c) = c else { return (filled.to_vec(), hi) };
        q[c] += 1;
        sum += 1;
    }
    (q, hi)
}
