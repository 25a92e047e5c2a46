use std::cmp::Ordering;

use super::*;
use super::holders::*;
use super::quotas::*;
use super::standbys::*;
use crate::engine::testdata;
use crate::wire::LATEST_OFFSET;

/// What a standby placement costs in the standby network: 0 for a caught-up copy kept, 1 for
/// another copy or a pending target, 2 elsewhere, and 1,000,000 per standby above a quota.
fn standby_cost(model: &Model<'_>, placement: &Placement, quotas: &[usize], targets: &[usize], pending: &[(Task, Client)]) -> i64 {
    let mut cost = 0;
    for c in 0..model.num_clients() {
        for &t in &placement.standby[c] {
            let copy = model.reported(c).contains(t);
            cost += if copy && lags_caught_up(model, c, t) {
                0
            } else if copy || pending.contains(&(t, c)) {
                1
            } else {
                2
            };
        }
        cost += 1_000_000 * placement.standby[c].len().saturating_sub(quotas[c].saturating_sub(targets[c])) as i64;
    }
    cost
}

#[test]
fn the_best_caught_up_client_is_the_one_a_scan_of_every_client_finds() {
    // Which kind of client won: the previous owner, a reporter, one that did not report.
    let mut won = [0usize; 3];
    for index in 0..300u64 {
        let s = testdata::random(3, index);
        let Ok(model) = Model::new(&s.input) else { continue };
        let (lags, owners, n) = (LagIndex::new(&model), previous_owners(&model), model.num_clients());
        for &t in &model.stateful_tasks {
            for except in std::iter::once(None).chain((0..n).map(Some)) {
                let scan = (0..n)
                    .filter(|&c| Some(c) != except && lags.is_caught_up(c, t))
                    .min_by_key(|&c| (owners[t as usize] != Some(c), effective_lag(&model, c, t), c));
                let best = best_caught_up(&model, &lags, t, except, &owners);
                assert_eq!(best, scan, "scenario {index}, task {t}, except {except:?}");
                if let Some(c) = best {
                    won[if owners[t as usize] == Some(c) { 0 } else if model.reported(c).contains(t) { 1 } else { 2 }] += 1;
                }
            }
        }
    }
    assert!(won.iter().all(|&w| w > 20), "{won:?}");
}

#[test]
fn standbys_through_the_shared_node_cost_what_the_full_network_does() {
    let (mut compared, mut dealt) = (0, 0);
    for index in 0..400u64 {
        let s = testdata::random(3, index);
        let Ok(model) = Model::new(&s.input) else { continue };
        let n = model.num_clients();
        if n < 2 || model.stateful_tasks.is_empty() {
            continue;
        }
        let wanted = (1 + index as usize % 3).min(n - 1);
        // Actives on the clients that report them running, else round-robin; a pending move
        // for every fifth task.
        let mut placement = Placement::new(&model);
        let mut targets = vec![0; n];
        let mut pending = Vec::new();
        for (k, &t) in model.stateful_tasks.iter().enumerate() {
            let c = (0..n).find(|&c| model.reported(c).get(t) == Some(LATEST_OFFSET)).unwrap_or(k % n);
            placement.assign_active(c, t);
            targets[c] += 1;
            if k % 5 == 0 {
                pending.push((t, (c + 1) % n));
            }
        }
        let caps: Vec<u64> = model.clients.iter().map(|c| u64::from(c.capacity.max(1))).collect();
        // The quotas and pending targets as `place_standbys` computes them, counted per pair.
        let claims: Vec<usize> = (0..n)
            .map(|c| targets[c] + model.stateful_tasks.iter().filter(|&&t| !placement.has_active(c, t) && model.reported(c).contains(t)).count())
            .collect();
        let quotas = sticky_quotas(model.stateful_tasks.len() * wanted, &caps, &targets, &claims, model.stateful_tasks.len(), 0);
        let mut target_of = vec![None; model.tasks.len()];
        pending.iter().for_each(|&(t, d)| target_of[t as usize] = Some(d));
        let (mut shared, mut full) = (placement.clone(), placement.clone());
        dealt += usize::from(place_standbys(&model, &mut shared, &caps, &targets, wanted, &pending).unwrap());
        place_standbys_full(&model, &mut full, &quotas, &targets, &target_of, wanted).unwrap();
        for &t in &model.stateful_tasks {
            let holders: Vec<Client> = (0..n).filter(|&c| shared.has_standby(c, t)).collect();
            assert_eq!(holders.len(), wanted, "scenario {index}: task {t}");
            assert!(holders.iter().all(|&c| !shared.has_active(c, t)), "scenario {index}: task {t}");
        }
        assert_eq!(
            standby_cost(&model, &shared, &quotas, &targets, &pending),
            standby_cost(&model, &full, &quotas, &targets, &pending),
            "scenario {index}"
        );
        compared += 1;
    }
    assert!(compared > 200 && dealt * 2 > compared, "{dealt} of {compared} dealt through the shared node");
}

/// The deal as a scan over every client per unit: the order [`deal`] keeps in a heap.
fn deal_by_scan(total: usize, caps: &[u64], start: &[usize], claims: &[usize], limit: usize, lowest_after: bool) -> Vec<usize> {
    let mut q = start.to_vec();
    for _ in 0..total {
        let Some(mut best) = (0..q.len()).find(|&c| q[c] < limit) else { break };
        for c in best + 1..q.len() {
            if q[c] >= limit {
                continue;
            }
            let cmp = |x: usize, y: usize| (x as u128 * u128::from(caps[best])).cmp(&(y as u128 * u128::from(caps[c])));
            let deficit = |k: usize| claims[k].saturating_sub(q[k]);
            let (now, after) = (cmp(q[c], q[best]), cmp(q[c] + 1, q[best] + 1));
            let order = if lowest_after { after.then(now) } else { now.then(after) };
            if order.then_with(|| deficit(best).cmp(&deficit(c))) == Ordering::Less {
                best = c;
            }
        }
        q[best] += 1;
    }
    q
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    #[test]
    fn the_heap_deals_as_the_scan_does(
        clients in proptest::collection::vec((1u64..6, 0usize..8, 0usize..12), 1..12),
        total in 0usize..400,
        limit in proptest::option::of(1usize..14),
        lowest_after: bool,
    ) {
        let caps: Vec<u64> = clients.iter().map(|c| c.0).collect();
        let start: Vec<usize> = clients.iter().map(|c| c.1).collect();
        let claims: Vec<usize> = clients.iter().map(|c| c.2).collect();
        let limit = limit.unwrap_or(usize::MAX);
        proptest::prop_assert_eq!(
            deal(total, &caps, &start, &claims, limit, lowest_after),
            deal_by_scan(total, &caps, &start, &claims, limit, lowest_after)
        );
    }
}

/// Whether the shared units can be dealt at all: a max flow from the tasks' wants through
/// every allowed (task, client) pair to the clients' units.
fn deal_exists(units: &[i64], wants: &[i64], actives: &[Option<Client>], own: &[Vec<Client>]) -> bool {
    let (n, tasks) = (units.len(), wants.len());
    let own = Chosen::from_lists(own, n);
    let mut graph = crate::flow::Graph::new(2 + tasks + n);
    for (k, &want) in wants.iter().enumerate() {
        graph.add_edge(0, 2 + k, want, 0).unwrap();
        for c in (0..n).filter(|&c| may_take(actives, &own, k, c)) {
            graph.add_edge(2 + k, 2 + tasks + c, 1, 0).unwrap();
        }
    }
    for (c, &u) in units.iter().enumerate() {
        graph.add_edge(2 + tasks + c, 1, u, 0).unwrap();
    }
    graph.min_cost_max_flow(0, 1).unwrap().flow == wants.iter().sum::<i64>()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
    /// The deal completes exactly when some deal exists, and then gives each task its units
    /// on distinct clients it may take, using each client's units exactly.
    #[test]
    fn the_shared_units_are_dealt_whenever_they_can_be(
        n in 2usize..7,
        tasks in proptest::collection::vec((0usize..8, proptest::collection::vec(0usize..7, 0..3), 0usize..4), 1..14),
        spread in proptest::collection::vec(0usize..7, 0..40),
    ) {
        // Task k: its active (none when out of range), the copies of its own edges, its wants.
        let actives: Vec<Option<Client>> = tasks.iter().map(|t| (t.0 < n).then_some(t.0)).collect();
        let own: Vec<Vec<Client>> = tasks.iter().zip(&actives).map(|(t, &a)| {
            let mut own: Vec<Client> = t.1.iter().copied().filter(|&c| c < n && Some(c) != a).collect();
            own.sort_unstable();
            own.dedup();
            own
        }).collect();
        let wants: Vec<i64> = tasks.iter().map(|t| t.2 as i64).collect();
        // As many units as wanted, spread over the clients by the drawn sequence.
        let total: i64 = wants.iter().sum();
        let mut units = vec![0i64; n];
        for u in 0..total as usize {
            units[spread.get(u).map_or(u % n, |&c| c % n)] += 1;
        }
        // Room for the copies and the wants of each task (a deal never gives a task more).
        let width = own.iter().zip(&wants).map(|(o, &w)| o.len() + w as usize).max().unwrap_or(0);
        let mut chosen = Chosen::from_lists(&own, width);
        let dealt = deal_shared(units.clone(), &wants, &actives, &mut chosen);
        proptest::prop_assert_eq!(dealt, deal_exists(&units, &wants, &actives, &own));
        if dealt {
            let mut used = vec![0i64; n];
            for k in 0..wants.len() {
                proptest::prop_assert_eq!(&chosen.of(k)[..own[k].len()], &own[k][..]);
                let extra = &chosen.of(k)[own[k].len()..];
                proptest::prop_assert_eq!(extra.len() as i64, wants[k]);
                let mut all = chosen.of(k).to_vec();
                all.sort_unstable();
                all.dedup();
                proptest::prop_assert_eq!(all.len(), chosen.of(k).len(), "task {} holds a client twice", k);
                proptest::prop_assert!(extra.iter().all(|&c| Some(c) != actives[k]));
                extra.iter().for_each(|&c| used[c] += 1);
            }
            proptest::prop_assert_eq!(used, units);
        }
    }
}

#[test]
fn a_deal_stuck_on_the_last_task_trades_along_a_path() {
    // One unit on each of clients 0, 1 and 2. In order, task 0 (active on 2) takes client 0
    // and task 1 (active on 0) client 1; task 2 (active on 2, a copy of its own on 1) finds
    // only client 2 left. No single swap helps (task 0 cannot take 2, and task 1 holds a
    // client task 2 has): task 1 moves 1 → 2, task 0 moves 0 → 1, and task 2 takes 0.
    let actives = [Some(2), Some(0), Some(2)];
    let mut chosen = Chosen::from_lists(&[vec![], vec![], vec![1]], 2);
    assert!(deal_shared(vec![1, 1, 1], &[1, 1, 1], &actives, &mut chosen));
    assert_eq!([chosen.of(0), chosen.of(1), chosen.of(2)], [&[1][..], &[2][..], &[1, 0][..]]);
    // With task 2 also running on the client task 1 needs, no deal exists.
    let mut chosen = Chosen::from_lists(&[vec![], vec![], vec![1]], 2);
    assert!(!deal_shared(vec![1, 1, 1], &[1, 1, 1], &[Some(2), Some(2), Some(2)], &mut chosen));
}

#[test]
fn dealing_is_capacity_proportional_and_sticky_on_ties() {
    assert_eq!(deal(3, &[1, 4], &[0, 0], &[0, 0], usize::MAX, false), [1, 2]);
    assert_eq!(deal(16, &[2, 2, 2, 2], &[0; 4], &[0; 4], usize::MAX, false), [4, 4, 4, 4]);
    // 16 over 3: one client gets 6; the one that runs more keeps it.
    assert_eq!(deal(16, &[2, 2, 2], &[0; 3], &[5, 5, 6], usize::MAX, false), [5, 5, 6]);
    assert_eq!(deal(16, &[2, 2, 2], &[0; 3], &[0; 3], usize::MAX, false), [6, 5, 5]);
    // Equal loads: the larger capacity takes the unit (3.25 rather than 4 per thread).
    assert_eq!(deal(30, &[2, 2, 1, 4], &[0; 4], &[12, 12, 6, 0], usize::MAX, false), [7, 7, 3, 13]);
}

#[test]
fn sticky_quotas_keep_claims_within_the_balanced_window() {
    // Loads 0.5..1 per thread: every claim is kept.
    assert_eq!(sticky_quotas(11, &[4, 4, 3, 2, 1, 4], &[0; 6], &[2, 3, 1, 1, 1, 1], usize::MAX, 0), [2, 3, 2, 1, 1, 2]);
    assert_eq!(sticky_quotas(16, &[2, 2, 2, 2], &[0; 4], &[6, 5, 5, 0], usize::MAX, 0), [4, 4, 4, 4]);
    // Units on top of a start never go below it.
    assert_eq!(sticky_quotas(2, &[1, 1], &[3, 0], &[5, 0], usize::MAX, 0), [3, 2]);
    assert_eq!(deal(2, &[1, 1], &[3, 0], &[0, 0], usize::MAX, false), [3, 2]);
}

#[test]
fn an_imbalance_keeps_the_claims_within_that_percentage_of_each_share() {
    // The KIP-441 draft's example: threads 5, 10, 10 and 15 share 80 tasks as 10, 20, 20
    // and 30; with 20 %, a group running 12, 18, 23 and 27 stays as it is.
    let caps = [5, 10, 10, 15];
    assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[12, 18, 23, 27], usize::MAX, 20), [12, 18, 23, 27]);
    assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[12, 18, 23, 27], usize::MAX, 0), [10, 20, 20, 30]);
    // 13 is beyond 12 (10 + 20 %): it gives one up, which goes to the client that is then the
    // least loaded per thread (28 / 15 against 19 / 10).
    assert_eq!(sticky_quotas(80, &caps, &[0; 4], &[13, 18, 22, 27], usize::MAX, 20), [12, 18, 22, 28]);
    // Whole tasks within the percentage: 10 % of a share of 6 is not a task, so 5 or 7 is
    // outside it and only the balanced window (6 each) remains.
    assert_eq!(sticky_quotas(24, &[1; 4], &[0; 4], &[7, 7, 5, 5], usize::MAX, 10), [6, 6, 6, 6]);
    assert_eq!(sticky_quotas(24, &[1; 4], &[0; 4], &[7, 7, 5, 5], usize::MAX, 17), [7, 7, 5, 5]);
    // A fifth member joins four that run 10 each: with 25 % of a share of 8 it takes 6, the
    // least the percentage allows, and the others give up 8 rather than 10.
    assert_eq!(sticky_quotas(40, &[1; 5], &[0; 5], &[10, 10, 10, 10, 0], usize::MAX, 25), [8, 8, 9, 9, 6]);
    assert_eq!(sticky_quotas(40, &[1; 5], &[0; 5], &[10, 10, 10, 10, 0], usize::MAX, 0), [8, 8, 8, 8, 8]);
}

#[test]
fn at_equal_spreads_the_window_that_keeps_other_tasks_wins() {
    // 3 units over 1, 2 and 3 threads: (1, 1, 1) and (0, 1, 2) both spread 2/3 per thread.
    // The claims fit both; only the second leaves the 1-thread client the other task it
    // runs.
    assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 1, 1], usize::MAX, 0, None).0, [1, 1, 1]);
    assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 1, 1], usize::MAX, 0, Some(&[0, 1, 1])).0, [0, 1, 2]);
    // A claim the first window cannot keep decides.
    assert_eq!(quota_window(3, &[1, 2, 3], &[0; 3], &[0, 0, 2], usize::MAX, 0, None).0, [0, 1, 2]);
}

/// The target's sparse costs are what its dense matrix was (no candidate dearer than its
/// class, even for unknown offset sums), and the sparse solver finds the dense one's least cost.
#[test]
fn the_sparse_target_costs_what_the_dense_one_does() {
    use crate::flow::{self, CostMatrix};
    let mut solved = 0;
    for index in 0..200u64 {
        let s = testdata::random(7, index);
        let Ok(model) = Model::new(&s.input) else { continue };
        let (lags, rates, owners) = (LagIndex::new(&model), RestoreRates::new(&model), previous_owners(&model));
        let (costs, _) = target::target_costs(&model, &lags, &rates, &owners).unwrap();
        let (tasks, n) = (model.stateful_tasks.len(), model.num_clients());
        let quotas = vec![tasks.div_ceil(n); n];
        let matrix = CostMatrix::from_fn(tasks, n, |k, c| costs.cost(k, c)).unwrap();
        let dense = flow::assign(&matrix, &quotas).unwrap();
        assert_eq!(flow::assign_sparse(&costs, &quotas).unwrap().cost, dense.cost, "scenario {index}");
        solved += usize::from(tasks > 0);
    }
    assert!(solved > 100, "only {solved} scenarios had stateful tasks");
}

/// The previous owner of a task is the first client (in client order) that reports it running,
/// else the first that owned it; a stateless task's owner is the first that owned it.
#[test]
fn a_client_running_a_task_is_its_previous_owner_before_the_clients_that_owned_it() {
    let mut checked = 0;
    for index in 0..200u64 {
        let s = testdata::random(7, index);
        let Ok(model) = Model::new(&s.input) else { continue };
        let (owners, stateless) = (previous_owners(&model), stateless_owners(&model));
        for t in 0..model.tasks.len() {
            let id = model.tasks[t];
            let clients = || model.clients.iter().enumerate();
            let running = clients().find(|(_, c)| c.input.task_offset_sums.get(id) == Some(&LATEST_OFFSET));
            let owned = clients().find(|(_, c)| c.input.owned_active_tasks.contains(id)).map(|(c, _)| c);
            assert_eq!(owners[t], running.map(|(c, _)| c).or(owned), "scenario {index}, task {id}");
            assert_eq!(stateless[t], owned.filter(|_| !model.stateful[t]), "scenario {index}, task {id}");
            checked += usize::from(running.is_some() && owned.is_some_and(|o| o < running.unwrap().0));
        }
    }
    assert!(checked > 0, "no task ran on a client after one that owned it");
}
