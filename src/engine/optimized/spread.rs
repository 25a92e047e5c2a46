//! How the tasks of each sub-topology spread over the clients.
//!
//! The partitions of one sub-topology usually carry similar load, while sub-topologies can
//! differ widely (KIP-441's "subtopology balance"). Kafka's high-availability assignor deals
//! tasks round-robin in task order, which spreads each sub-topology as a side effect. The
//! optimized assignor picks which tasks move by cost, and left alone it may hand a new member
//! only the tasks of the sub-topology that restores fastest. [`Mix`] counts a client's tasks
//! per sub-topology against its capacity-proportional share, and [`rebalance_mix`] trades
//! targets between clients where that evens the mix at no cost in movements or warm-ups.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use crate::engine::model::{Client, Model, Task};

/// Per client and sub-topology: the tasks held and the capacity-proportional share.
pub(crate) struct Mix {
    /// Per task (model index): its sub-topology's group, `u32::MAX` if not counted (4 bytes a
    /// task).
    group: Vec<u32>,
    /// Groups counted.
    groups: usize,
    /// `counts[c * groups + g]`: tasks of group `g` on client `c`.
    counts: Vec<i64>,
    /// `share[c * groups + g]`: group `g`'s size times client `c`'s share of the capacity.
    share: Vec<f64>,
}

impl Mix {
    /// An empty mix over `tasks`, grouped by sub-topology (named topologies apart).
    pub(crate) fn new(model: &Model<'_>, tasks: &[Task], caps: &[u64]) -> Self {
        let mut ids: BTreeMap<(Option<&str>, i32), usize> = BTreeMap::new();
        let mut group = vec![u32::MAX; model.tasks.len()];
        let mut sizes: Vec<usize> = Vec::new();
        for &t in tasks {
            let id = &model.tasks[t as usize];
            let next = ids.len();
            let g = *ids.entry((id.topology.as_deref(), id.subtopology)).or_insert(next);
            if g == sizes.len() {
                sizes.push(0);
            }
            sizes[g] += 1;
            group[t as usize] = u32::try_from(g).expect("Mix: 2^32 sub-topologies or more");
        }
        let total: f64 = caps.iter().map(|&c| c as f64).sum::<f64>().max(1.0);
        let share = caps.iter().flat_map(|&c| sizes.iter().map(move |&s| s as f64 * c as f64 / total)).collect();
        Self { group, groups: sizes.len(), counts: vec![0; sizes.len() * caps.len()], share }
    }

    /// The group of task `t`.
    pub(crate) fn group(&self, t: Task) -> usize {
        self.group[t as usize] as usize
    }

    /// Counts `t` on `c`.
    pub(crate) fn add(&mut self, c: Client, t: Task) {
        let g = self.group(t);
        self.counts[c * self.groups + g] += 1;
    }

    /// Stops counting `t` on `c`.
    pub(crate) fn remove(&mut self, c: Client, t: Task) {
        let g = self.group(t);
        self.counts[c * self.groups + g] -= 1;
    }

    /// How far `c` holds more of group `g` than its share (negative: fewer).
    pub(crate) fn excess(&self, c: Client, g: usize) -> f64 {
        let i = c * self.groups + g;
        self.counts[i] as f64 - self.share[i]
    }

    fn groups(&self) -> usize {
        if self.share.is_empty() { 0 } else { self.groups }
    }
}

/// What the trades compare: what moving a task adds to its cost.
pub(crate) trait Rise {
    /// Lays the costs out in the order the trades read them: `order` names every task once as
    /// (its position in `tasks`, its handle), and each task's handle is written here: its place
    /// in `order`, by which [`rise`](Self::rise) reads its costs from then on.
    fn arrange<'a>(&mut self, order: impl Iterator<Item = &'a mut (u32, u32)>);

    /// What moving the task with handle `at` from client `from` to client `to` adds to its
    /// cost, as (movements and warm-ups, restore time).
    fn rise(&self, at: u32, from: Client, to: Client) -> (i64, i64);
}

/// The cheapest task of a list to trade: the rise in (movements and warm-ups, restore time) of
/// its cost, and its position in the list; `None` where no task of the list qualifies.
type Cheapest = Option<(i64, i64, usize)>;

/// A question to the trades' search for the cheapest task: from which client, to which, of
/// which group, owned by whom (any owner if `None`).
type Question = (Client, Client, usize, Option<Client>);

/// Answers to [`Question`]s, each with the version of the list it was read from, in a fixed
/// number of slots, two for each hash of a question (a new question replaces the older of the
/// two): enough for the questions of a sweep, which the next sweep asks again, and a fixed size
/// however large the group.
struct Answers {
    slots: Vec<Option<(Question, u32, Cheapest)>>,
}

impl Answers {
    /// Slots for twice the questions of one sweep over `groups` groups (at most `2·TRIES³` per
    /// group), within 256 and 16,384.
    fn new(groups: usize) -> Self {
        let len = groups.saturating_mul(4 * TRIES.pow(3)).next_power_of_two().clamp(1 << 8, 1 << 14);
        Self { slots: vec![None; len] }
    }

    /// The answer to `question` on the list at `version`: the one kept, else `answer()`'s, kept.
    fn get_or(&mut self, question: Question, version: u32, answer: impl FnOnce() -> Cheapest) -> Cheapest {
        // The pair of slots `at` and `at + 1`; the newer answer in the first.
        let at = FxBuildHasher.hash_one(question) as usize & (self.slots.len() - 2);
        for i in [at, at + 1] {
            if let Some((kept, seen, found)) = self.slots[i]
                && kept == question
            {
                if seen == version {
                    return found;
                }
                // An answer on an older list: replaced in place.
                let found = answer();
                self.slots[i] = Some((question, version, found));
                return found;
            }
        }
        let found = answer();
        self.slots[at + 1] = self.slots[at];
        self.slots[at] = Some((question, version, found));
        found
    }
}

/// Clients tried from each end of the order, and groups to take in return, per group and sweep.
const TRIES: usize = 4;

/// Evens the mix of `target` (client per task of `tasks`; `mix` empty on entry, made over the
/// same tasks, and counting `target` on return) by trading targets: a task of group
/// `g1` on `c1` for one of group `g2` on `c2`, where the first part of the two placements' cost
/// does not rise. `costs.rise(at, from, to)` is what moving the task with handle `at` (given by
/// `costs.arrange`) from `from` to `to` adds to its cost in movements and warm-ups, then in
/// restore time: a trade never adds a movement or a warm-up, and of the tasks that qualify it
/// moves those whose restore grows least. The target's quotas are unchanged. A trade is made
/// when it lowers the sum of squared excesses (`c1` holds more of `g1` beyond its share than
/// `c2` does, and `c2` more of `g2` than `c1` does, by more than 2 in all), or leaves it equal
/// while one client exchanges which of its own tasks (`owner`) it gives up for one it holds
/// less of: the excess then passes to the receiving client, from where a later trade with
/// another giver can cancel it (a new member fed by several others).
///
/// Per sweep and group `g1`: the [`TRIES`] clients holding most of it beyond their shares, the
/// [`TRIES`] holding least, and for each such pair the [`TRIES`] groups the second holds most of
/// relative to the first; at most one trade. Sweeps until one makes no trade, at most
/// `tasks.len()` trades, and stops after about 64·(T + N·G) steps of work for T tasks, N clients
/// and G groups, so that it stays a small part of the assignment on any group; a mix it cannot
/// even out within that stays as the flow left it. (A search for the cheapest task counts the
/// length of its list as work whether it reads the list or an earlier answer on the same list.)
pub(crate) fn rebalance_mix(
    mix: &mut Mix,
    tasks: &[Task],
    owner: &[Option<Client>],
    target: &mut [Client],
    n: usize,
    costs: &mut impl Rise,
) {
    let groups = mix.groups();
    if groups < 2 || n < 2 {
        return;
    }
    for (k, &t) in tasks.iter().enumerate() {
        crate::interrupt::checkpoint();
        mix.add(target[k], t);
    }
    // Tasks per client and group: their positions in `tasks` and the handles to their costs
    // (as `u32`s: 8 bytes a task; the handles are given by `costs.arrange`), each list made at
    // its size. A search reads the costs of a whole list; laid out in the lists' order, they are
    // read from consecutive memory rather than a cache miss a task.
    let mut sizes = vec![0usize; n * groups];
    for (k, &t) in tasks.iter().enumerate() {
        crate::interrupt::checkpoint();
        sizes[target[k] * groups + mix.group(t)] += 1;
    }
    let mut held: Vec<Vec<Vec<(u32, u32)>>> =
        sizes.chunks(groups).map(|client| client.iter().map(|&size| Vec::with_capacity(size)).collect()).collect();
    drop(sizes);
    for (k, &t) in tasks.iter().enumerate() {
        crate::interrupt::checkpoint();
        held[target[k]][mix.group(t)].push((u32::try_from(k).expect("rebalance_mix: 2^32 tasks or more"), 0));
    }
    costs.arrange(held.iter_mut().flatten().flatten());
    let mut work = 64usize.saturating_mul(tasks.len().saturating_add(n.saturating_mul(groups)));
    let mut spend = |steps: usize| {
        work = work.saturating_sub(steps);
        work > 0
    };
    // The cheapest task of group `g` to leave `from` for `to` (owned by `by`, if given): the
    // rise in both parts of its cost, and its position in `held[from][g]`.
    let cheapest = |held: &[Vec<Vec<(u32, u32)>>], from: Client, to: Client, g: usize, by: Option<Client>| {
        held[from][g]
            .iter()
            .map(|&(k, handle)| (k as usize, handle))
            .enumerate()
            .filter(|&(_, (k, _))| by.is_none_or(|o| owner[tasks[k] as usize] == Some(o)))
            .map(|(at, (_, handle))| {
                let (a, b) = costs.rise(handle, from, to);
                (a, b, at)
            })
            .min()
    };
    // Sweeps ask the same questions again and again (most pairs trade nothing, and on a large
    // group nearly every answer is asked for many times), and each answer reads the costs of a
    // whole list of tasks scattered over memory. An answer depends only on `held[from][g]`, so
    // it is kept with the list's version (`versions[from * groups + g]`, raised on every change
    // of the list) and read back while that is unchanged. The work counted is the same either
    // way, so the trades made are too.
    let mut versions: Vec<u32> = vec![0; n * groups];
    let mut answers = Answers::new(groups);
    let mut cheapest = |held: &[Vec<Vec<(u32, u32)>>], versions: &[u32], from: Client, to: Client, g: usize, by: Option<Client>| {
        answers.get_or((from, to, g, by), versions[from * groups + g], || cheapest(held, from, to, g, by))
    };
    let mut budget = tasks.len();
    let mut returns: Vec<(f64, usize)> = Vec::with_capacity(groups);
    // Per group, the clients by decreasing excess (ties by index). A client's excess of a group
    // changes only when a trade moves a task of the group on or off it, so the order is kept
    // up to date trade by trade rather than sorted again for every group of every sweep.
    let rank = |mix: &Mix, c: Client, g: usize| (Reverse(total_order_key(mix.excess(c, g))), c);
    let mut by_excess: Vec<BTreeSet<(Reverse<i64>, Client)>> = (0..groups)
        .map(|g| {
            crate::interrupt::checkpoint();
            (0..n).map(|c| rank(mix, c, g)).collect()
        })
        .collect();
    let (mut most, mut least) = (Vec::with_capacity(TRIES), Vec::with_capacity(TRIES));
    loop {
        crate::interrupt::checkpoint();
        let mut traded = false;
        'groups: for g1 in 0..groups {
            crate::interrupt::checkpoint();
            if !spend(n) {
                return;
            }
            // The TRIES clients first and last by decreasing excess of g1 (ties by index).
            most.clear();
            most.extend(by_excess[g1].iter().take(TRIES).map(|&(_, c)| c));
            least.clear();
            least.extend(by_excess[g1].iter().rev().take(TRIES).map(|&(_, c)| c));
            for &c1 in &most {
                for &c2 in &least {
                    let over = mix.excess(c1, g1) - mix.excess(c2, g1);
                    if c1 == c2 || over <= 1e-9 {
                        continue;
                    }
                    // The groups `c2` holds most of relative to `c1`.
                    if !spend(groups) {
                        return;
                    }
                    returns.clear();
                    returns.extend((0..groups).filter(|&g| g != g1).map(|g| (mix.excess(c2, g) - mix.excess(c1, g), g)));
                    let keep = TRIES.min(returns.len());
                    if keep < returns.len() {
                        returns.select_nth_unstable_by(keep, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                        returns.truncate(keep);
                    }
                    returns.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    for &(back, g2) in &returns {
                        // Lowers the squared excesses above 2, moves one of them at exactly 2.
                        let gap = over + back;
                        if gap < 2.0 - 1e-9 {
                            break;
                        }
                        if !spend(held[c1][g1].len() + held[c2][g2].len()) {
                            return;
                        }
                        let lean = |c: Client| mix.excess(c, g1) - mix.excess(c, g2);
                        let picks = if gap > 2.0 + 1e-9 {
                            cheapest(&held, &versions, c1, c2, g1, None).zip(cheapest(&held, &versions, c2, c1, g2, None))
                        } else if lean(c1) > 1.0 + 1e-9 {
                            // `c1` takes back a task of g2 it owns and gives up one of g1.
                            cheapest(&held, &versions, c1, c2, g1, Some(c1)).zip(cheapest(&held, &versions, c2, c1, g2, Some(c1)))
                        } else if lean(c2) < -1.0 - 1e-9 {
                            cheapest(&held, &versions, c1, c2, g1, Some(c2)).zip(cheapest(&held, &versions, c2, c1, g2, Some(c2)))
                        } else {
                            None
                        };
                        let Some(((d1, _, a1), (d2, _, a2))) = picks else { continue };
                        if d1.saturating_add(d2) > 0 {
                            continue;
                        }
                        let (k1, k2) = (held[c1][g1].swap_remove(a1), held[c2][g2].swap_remove(a2));
                        held[c2][g1].push(k1);
                        held[c1][g2].push(k2);
                        let (k1, k2) = (k1.0 as usize, k2.0 as usize);
                        for (c, g) in [(c1, g1), (c2, g2), (c2, g1), (c1, g2)] {
                            // (A list changes once a trade at most, and there are fewer trades than tasks:
                            // a version never wraps back to one kept.)
                            versions[c * groups + g] = versions[c * groups + g].wrapping_add(1);
                        }
                        let changed = [(c1, g1), (c2, g1), (c1, g2), (c2, g2)];
                        for (c, g) in changed {
                            by_excess[g].remove(&rank(mix, c, g));
                        }
                        mix.remove(c1, tasks[k1]);
                        mix.add(c2, tasks[k1]);
                        mix.remove(c2, tasks[k2]);
                        mix.add(c1, tasks[k2]);
                        for (c, g) in changed {
                            by_excess[g].insert(rank(mix, c, g));
                        }
                        target[k1] = c2;
                        target[k2] = c1;
                        traded = true;
                        budget -= 1;
                        if budget == 0 {
                            return;
                        }
                        continue 'groups;
                    }
                }
            }
        }
        if !traded {
            return;
        }
    }
}

/// A key whose integer order is [`f64::total_cmp`]'s order of `x`.
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // Negative numbers (sign bit set) are ordered by reversed magnitude.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_order_keys_sort_as_total_cmp() {
        let mut values = vec![f64::NEG_INFINITY, -1e300, -2.5, -1.0, -f64::MIN_POSITIVE, -0.0, 0.0, f64::MIN_POSITIVE, 1e-9, 0.5, 1.0, 2.0, 1e300, f64::INFINITY];
        let mut rng = crate::rng::Rng::new(0x0e1);
        values.extend((0..2_000).map(|_| (rng.next_u64() as i64 as f64) / (1u64 << (rng.next_u64() % 64)) as f64));
        for a in &values {
            for b in values.iter().step_by(7) {
                assert_eq!(total_order_key(*a).cmp(&total_order_key(*b)), a.total_cmp(b), "{a} {b}");
            }
        }
    }
    use crate::engine::{AssignmentInput, ClientInput};
    use crate::wire::{ProcessId, TaskId};

    /// Costs given by a function of (task, from, to), the task by its position in `tasks`: the
    /// handles are places in the order `arrange` was given, which is kept to read them back as
    /// tasks.
    struct ByTask<F> {
        rise: F,
        order: Vec<usize>,
    }

    fn by_task<F: Fn(usize, Client, Client) -> (i64, i64)>(rise: F) -> ByTask<F> {
        ByTask { rise, order: Vec::new() }
    }

    impl<F: Fn(usize, Client, Client) -> (i64, i64)> Rise for ByTask<F> {
        fn arrange<'a>(&mut self, order: impl Iterator<Item = &'a mut (u32, u32)>) {
            self.order.clear();
            for task in order {
                task.1 = self.order.len() as u32;
                self.order.push(task.0 as usize);
            }
        }

        fn rise(&self, at: u32, from: Client, to: Client) -> (i64, i64) {
            (self.rise)(self.order[at as usize], from, to)
        }
    }

    fn model_input(clients: usize, groups: i32, partitions: i32) -> AssignmentInput {
        let mut input = AssignmentInput::new();
        for c in 0..clients {
            let id: ProcessId = format!("00000000-0000-0000-0000-{:012}", c + 1).parse().unwrap();
            input = input.with_client(ClientInput::new(id, 1));
        }
        input.with_stateless_tasks((0..groups).flat_map(|g| (0..partitions).map(move |p| TaskId::new(g, p))))
    }

    #[test]
    fn trades_even_the_mix_without_raising_the_cost() {
        let input = model_input(2, 2, 4);
        let model = Model::new(&input).unwrap();
        let tasks = model.stateless_tasks.clone();
        // Client 0 holds all of sub-topology 0, client 1 all of sub-topology 1.
        let mut target: Vec<Client> = tasks.iter().map(|&t| model.tasks[t as usize].subtopology as usize).collect();
        let mut mix = Mix::new(&model, &tasks, &[1, 1]);
        rebalance_mix(&mut mix, &tasks, &[None; 8], &mut target, 2, &mut by_task(|_, _, _| (0, 0)));
        for c in 0..2 {
            for g in 0..2 {
                assert!(mix.excess(c, g).abs() < 1e-9, "client {c} group {g}: {target:?}");
            }
        }
        assert_eq!(target.iter().filter(|&&c| c == 0).count(), 4, "quotas kept");
        // A trade that would cost more is not made.
        let mut target: Vec<Client> = tasks.iter().map(|&t| model.tasks[t as usize].subtopology as usize).collect();
        let before = target.clone();
        let mut mix = Mix::new(&model, &tasks, &[1, 1]);
        let sticky = |k: usize, from: Client, to: Client| (i64::from(before[k] != to) - i64::from(before[k] != from), 0);
        rebalance_mix(&mut mix, &tasks, &[None; 8], &mut target, 2, &mut by_task(sticky));
        assert_eq!(target, before);
        assert!((mix.excess(0, 0) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_new_member_fed_by_two_givers_ends_with_an_even_mix() {
        // Clients 0 and 1 run three tasks each; client 2 (twice the threads) is new and gets two
        // orphans (a3, b3). The first target sends b0 from client 0 and a2 from client 1, which
        // leaves client 0 with only sub-topology a and client 1 with only b. Each giver sending
        // the other task instead costs no extra movement: one exchange leaves the sum of squared
        // excesses equal (client 0's excess passes to client 2), the next one lowers it.
        let input = model_input(3, 2, 4);
        let model = Model::new(&input).unwrap();
        let tasks = model.stateless_tasks.clone();
        let id = |g: i32, p: i32| tasks.iter().position(|&t| *model.tasks[t as usize] == TaskId::new(g, p)).unwrap();
        let mut owner: Vec<Option<Client>> = vec![None; model.tasks.len()];
        for (k, c) in [(id(0, 0), 0), (id(0, 1), 0), (id(1, 0), 0), (id(1, 1), 1), (id(1, 2), 1), (id(0, 2), 1)] {
            owner[tasks[k] as usize] = Some(c);
        }
        let mut target = vec![2; tasks.len()];
        for (k, c) in [(id(0, 0), 0), (id(0, 1), 0), (id(1, 1), 1), (id(1, 2), 1)] {
            target[k] = c;
        }
        let moves = |target: &[Client]| (0..tasks.len()).filter(|&k| owner[tasks[k] as usize] != Some(target[k])).count();
        let before = moves(&target);
        let mut mix = Mix::new(&model, &tasks, &[1, 1, 2]);
        let cost = |k: usize, c: Client| i64::from(owner[tasks[k] as usize] != Some(c));
        rebalance_mix(&mut mix, &tasks, &owner, &mut target, 3, &mut by_task(|k, from, to| (cost(k, to) - cost(k, from), 0)));
        for c in 0..3 {
            for g in 0..2 {
                assert!(mix.excess(c, g).abs() < 1e-9, "client {c} group {g}: {target:?}");
            }
        }
        assert_eq!(moves(&target), before);
        assert_eq!([0, 1, 2].map(|c| target.iter().filter(|&&t| t == c).count()), [2, 2, 4], "quotas kept");
    }

    #[test]
    fn shares_follow_capacity() {
        let input = model_input(2, 1, 6);
        let model = Model::new(&input).unwrap();
        let mut mix = Mix::new(&model, &model.stateless_tasks, &[1, 2]);
        for &t in &model.stateless_tasks[..4] {
            mix.add(1, t);
        }
        assert!(mix.excess(1, 0).abs() < 1e-9);
        assert!((mix.excess(0, 0) + 2.0).abs() < 1e-9);
    }
}
