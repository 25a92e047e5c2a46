//! Invariants every assignor keeps, checked on generated inputs (proptest).
//!
//! * every task has exactly one active, and no client holds two copies of a task;
//! * stateless tasks have no standbys; each stateful task has `min(num.standby.replicas, N − 1)`
//!   standbys besides its warm-ups, and warm-ups stay within `max.warmup.replicas`;
//! * the high-availability assignor's target (a fresh group: nothing to move) is balanced within
//!   Kafka's bound (`TaskAssignorConvergenceTest`: actives per thread, and stateful tasks per
//!   thread, differ by at most 1 between clients);
//! * the output does not depend on the order of the clients in the input;
//! * the optimized assignor keeps Kafka's availability rule (an active task sits on a client that
//!   is not caught up only when no client is caught up and none has a smaller lag), balances any
//!   capacities within one task per thread, and returns a converged assignment unchanged; with
//!   `stream.imbalance.percentage`, it converges to counts within that percentage of each
//!   client's share (or within one task per thread) and then stays.

mod engine_common;

use std::collections::{BTreeMap, BTreeSet};

use kstreams_assignor::engine::testdata;
use kstreams_assignor::rng::Rng;
use kstreams_assignor::engine::{
    Assignment, AssignmentConfigs, AssignmentInput, AssignorKind, ClientInput, assign, effective_assignor,
};
use kstreams_assignor::engine::TaskLag;
use kstreams_assignor::wire::{LATEST_OFFSET, ProcessId, TaskId, UNKNOWN_OFFSET_SUM};
use engine_common::after_catching_up;
use proptest::prelude::*;

/// A small group drawn from shrinkable parameters.
#[derive(Debug, Clone)]
struct Params {
    capacities: Vec<u32>,
    subtopologies: Vec<(u8, bool)>,
    standbys: i32,
    max_warmups: i32,
    acceptable_lag: i64,
    tags: bool,
    seed: u64,
    fetch_failed: bool,
}

fn params() -> impl Strategy<Value = Params> {
    (
        prop::collection::vec(1u32..=4, 1..=12),
        prop::collection::vec((1u8..=12, any::<bool>()), 1..=5),
        0i32..=3,
        1i32..=4,
        prop::sample::select(vec![0i64, 100, 10_000, i64::MAX]),
        any::<bool>(),
        any::<u64>(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(capacities, subtopologies, standbys, max_warmups, acceptable_lag, tags, seed, fetch_failed)| Params {
            capacities,
            subtopologies,
            standbys,
            max_warmups,
            acceptable_lag,
            tags,
            seed,
            fetch_failed,
        })
}

/// Builds an input: random process ids, tags and offset sums from `seed`.
fn build(p: &Params, fresh: bool) -> AssignmentInput {
    let mut rng = Rng::new(p.seed);
    let mut configs = AssignmentConfigs::default()
        .with_num_standby_replicas(p.standbys)
        .with_max_warmup_replicas(p.max_warmups)
        .with_acceptable_recovery_lag(p.acceptable_lag);
    if p.tags {
        configs = configs.with_rack_aware_assignment_tags(["zone", "rack"]);
    }
    let mut input = AssignmentInput::new().with_configs(configs);
    let mut stateful = Vec::new();
    let mut stateless = Vec::new();
    for (s, &(partitions, is_stateful)) in p.subtopologies.iter().enumerate() {
        for q in 0..i32::from(partitions) {
            let task = TaskId::new(s as i32, q);
            if is_stateful { stateful.push(task) } else { stateless.push(task) }
        }
    }
    let ends: Vec<i64> = stateful.iter().map(|_| rng.range(0, 50_000)).collect();
    for &capacity in &p.capacities {
        let mut client = ClientInput::new(rng.process_id(), capacity);
        if p.tags {
            client = client.with_client_tags([
                ("zone", format!("z{}", rng.range(0, 2))),
                ("rack", format!("r{}", rng.range(0, 3))),
            ]);
        }
        if !fresh {
            for (task, &end) in stateful.iter().zip(&ends) {
                match rng.range(0, 9) {
                    0 => client.task_offset_sums.insert(task.clone(), LATEST_OFFSET),
                    1 => client.task_offset_sums.insert(task.clone(), UNKNOWN_OFFSET_SUM),
                    2 | 3 => client.task_offset_sums.insert(task.clone(), end - rng.range(0, 20_000)),
                    _ => None,
                };
            }
            for task in &stateless {
                if rng.chance(0.2) {
                    client.owned_active_tasks.insert(task.clone());
                }
            }
        }
        input = input.with_client(client);
    }
    let input = input.with_stateful_tasks(stateful.into_iter().zip(ends)).with_stateless_tasks(stateless);
    if p.fetch_failed { input.with_end_offsets_unavailable() } else { input }
}

/// Checks the invariants of every assignor; returns the assignment.
fn check_invariants(kind: AssignorKind, input: &AssignmentInput) -> Result<Assignment, TestCaseError> {
    let out = assign(kind, input).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let ran = effective_assignor(kind, input);
    prop_assert_eq!(&out.assignor, ran.name());
    let n = input.clients.len();
    prop_assert_eq!(out.clients.len(), n);

    let mut actives: BTreeMap<&TaskId, usize> = BTreeMap::new();
    let mut standbys: BTreeMap<&TaskId, usize> = BTreeMap::new();
    let mut warmups: BTreeMap<&TaskId, usize> = BTreeMap::new();
    let mut spares: BTreeMap<&TaskId, usize> = BTreeMap::new();
    for c in &out.clients {
        let a: BTreeSet<&TaskId> = c.active_tasks.iter().collect();
        let s: BTreeSet<&TaskId> = c.standby_tasks.iter().collect();
        prop_assert_eq!(a.len(), c.active_tasks.len(), "duplicate active on {}", c.process_id);
        prop_assert_eq!(s.len(), c.standby_tasks.len(), "duplicate standby on {}", c.process_id);
        prop_assert!(a.is_disjoint(&s), "client {} holds a task twice", c.process_id);
        for t in &c.active_tasks {
            *actives.entry(t).or_default() += 1;
        }
        for t in &c.standby_tasks {
            prop_assert!(input.stateful_tasks.contains(t), "standby of stateless or unknown task {}", t);
            *standbys.entry(t).or_default() += 1;
        }
        for t in &c.warmup_tasks {
            prop_assert!(s.contains(t), "warm-up {} is not a standby", t);
            *warmups.entry(t).or_default() += 1;
        }
        for t in &c.spare_tasks {
            prop_assert!(s.contains(t) && !c.warmup_tasks.contains(t), "spare {} is not a standby or is a warm-up", t);
            *spares.entry(t).or_default() += 1;
        }
    }
    let all: BTreeSet<&TaskId> = input.stateful_tasks.iter().chain(&input.stateless_tasks).collect();
    prop_assert_eq!(actives.keys().copied().collect::<BTreeSet<_>>(), all.clone());
    prop_assert!(actives.values().all(|&k| k == 1), "a task has several actives");

    let configs = &input.configs;
    // (Kafka accepts a negative num.standby.replicas; its tag-aware placement then still makes
    // one standby per task. Not an invariant worth stating.)
    let expected = (configs.num_standby_replicas.max(0) as usize).min(n - 1);
    for t in input.stateful_tasks.iter().filter(|_| configs.num_standby_replicas >= 0) {
        let extra = warmups.get(t).copied().unwrap_or(0) + spares.get(t).copied().unwrap_or(0);
        let copies = standbys.get(t).copied().unwrap_or(0) - extra;
        prop_assert_eq!(copies, expected, "standbys of {} besides warm-ups and spares", t);
    }
    let total_warmups: usize = warmups.values().sum();
    let total_spares: usize = spares.values().sum();
    prop_assert_eq!(total_warmups, out.followup.watch_list.len());
    // Spares: only the optimized assignor's. Per task, one from the warm-up budget (only where
    // no warm-up moves it and no standby is caught up) and one kept copy per standby still
    // restoring, each fresher than such a standby; in all, the budget and the kept copies.
    prop_assert!(total_spares == 0 || ran == AssignorKind::Optimized, "{} spares from {}", total_spares, ran.name());
    let mut kept_at_most = 0;
    for (t, &k) in &spares {
        let standbys: Vec<(bool, i64)> = out
            .clients
            .iter()
            .filter(|c| c.standby_tasks.contains(*t) && !c.spare_tasks.contains(*t))
            .map(|c| lag_of(input, &c.process_id, t))
            .collect();
        let restoring = standbys.iter().filter(|s| !s.0).count();
        let budgeted = usize::from(!warmups.contains_key(t) && standbys.iter().all(|s| !s.0));
        prop_assert!(k <= budgeted + restoring, "{} spares of {} beside {} standbys still restoring", k, t, restoring);
        if k > budgeted {
            // A kept copy is a copy the client reported, fresher than the stalest such standby.
            let stalest = standbys.iter().filter(|s| !s.0).map(|s| s.1).max().unwrap_or(i64::MIN);
            let fresher = out.clients.iter().filter(|c| c.spare_tasks.contains(*t)).filter(|c| lag_of(input, &c.process_id, t).1 < stalest).count();
            prop_assert!(fresher >= k - budgeted, "{} of {} spares of {} fresher than its stalest standby", fresher, k, t);
        }
        kept_at_most += restoring;
    }
    prop_assert!(total_warmups + total_spares <= (configs.max_warmup_replicas + configs.max_spare_replicas) as usize + kept_at_most);
    for w in &out.followup.watch_list {
        let client = input.clients.iter().find(|c| c.process_id == w.process_id).unwrap();
        let end = input.changelog_end_offset_sums.as_ref().unwrap()[&w.task_id];
        let lag = TaskLag::compute(client.task_offset_sums.get(&w.task_id).copied(), end);
        prop_assert!(!lag.is_caught_up(configs.acceptable_recovery_lag), "warm-up {} on a caught-up client", w.task_id);
    }
    match ran {
        AssignorKind::LegacySticky => prop_assert!(!out.followup.probing_rebalance_needed),
        AssignorKind::FallbackPrior => prop_assert!(out.followup.probing_rebalance_needed),
        _ => prop_assert!(out.followup.watch_list.is_empty() || out.followup.probing_rebalance_needed),
    }

    // The order of the clients in the input does not matter.
    let mut shuffled = input.clone();
    shuffled.clients.reverse();
    let mid = shuffled.clients.len() / 2;
    shuffled.clients.rotate_left(mid);
    prop_assert_eq!(&assign(kind, &shuffled).unwrap(), &out, "client order changed the result");
    Ok(out)
}

/// Kafka's balance assertions: max − min over clients of (tasks / capacity) ≤ 1 (spare replicas, which
/// are extra copies, aside).
fn assert_balanced(input: &AssignmentInput, out: &Assignment) -> Result<(), TestCaseError> {
    let capacity: BTreeMap<_, _> = input.clients.iter().map(|c| (c.process_id, f64::from(c.capacity))).collect();
    let spread = |load: &dyn Fn(&kstreams_assignor::engine::ClientAssignment) -> usize| {
        let loads: Vec<f64> = out.clients.iter().map(|c| load(c) as f64 / capacity[&c.process_id]).collect();
        loads.iter().cloned().fold(f64::MIN, f64::max) - loads.iter().cloned().fold(f64::MAX, f64::min)
    };
    let active = spread(&|c| c.active_tasks.len());
    let stateful = spread(&|c| {
        let standbys = c.standby_tasks.iter().filter(|t| !c.spare_tasks.contains(*t));
        c.active_tasks.iter().chain(standbys).filter(|t| input.stateful_tasks.contains(*t)).count()
    });
    prop_assert!(active <= 1.0, "active balance {active}");
    prop_assert!(stateful <= 1.0, "stateful balance {stateful}");
    Ok(())
}

/// The lag of a client on a task as the assignors read it, with an unknown lag (`-3`) last.
fn lag_of(input: &AssignmentInput, process_id: &ProcessId, task: &TaskId) -> (bool, i64) {
    let client = input.clients.iter().find(|c| c.process_id == *process_id).unwrap();
    let end = input.changelog_end_offset_sums.as_ref().unwrap()[task];
    let lag = TaskLag::compute(client.task_offset_sums.get(task).copied(), end);
    let caught_up = lag.is_caught_up(input.configs.acceptable_recovery_lag);
    let order = match lag.0 {
        LATEST_OFFSET => -1,
        l if l < 0 => i64::MAX,
        l => l,
    };
    (caught_up, order)
}

/// KIP-441's availability rule: an active stateful task is on a client that is not caught up
/// only if no client is caught up on it and none has a smaller lag.
fn check_availability(input: &AssignmentInput, out: &Assignment) -> Result<(), TestCaseError> {
    if input.changelog_end_offset_sums.is_none() {
        return Ok(());
    }
    for c in &out.clients {
        for t in c.active_tasks.iter().filter(|t| input.stateful_tasks.contains(*t)) {
            let (caught_up, lag) = lag_of(input, &c.process_id, t);
            if caught_up {
                continue;
            }
            for other in &input.clients {
                let (o_caught_up, o_lag) = lag_of(input, &other.process_id, t);
                prop_assert!(!o_caught_up, "{} runs on {} (not caught up) while {} is caught up", t, c.process_id, other.process_id);
                prop_assert!(o_lag >= lag, "{} runs on {} (lag {}) while {} has lag {}", t, c.process_id, lag, other.process_id, o_lag);
            }
        }
    }
    Ok(())
}

/// The optimized assignor moves standbys make-before-break: while a task has a standby still
/// restoring (a warm-up aside), its copies off the active's client include one at least as fresh
/// as the freshest copy any other client reported.
fn check_standbys_keep_the_freshest_copy(input: &AssignmentInput, out: &Assignment) -> Result<(), TestCaseError> {
    if input.changelog_end_offset_sums.is_none() {
        return Ok(());
    }
    for t in &input.stateful_tasks {
        let holders: Vec<&kstreams_assignor::engine::ClientAssignment> =
            out.clients.iter().filter(|c| c.standby_tasks.contains(t)).collect();
        let restoring = holders.iter().any(|c| !c.warmup_tasks.contains(t) && !lag_of(input, &c.process_id, t).0);
        if !restoring {
            continue;
        }
        let held = holders.iter().map(|c| lag_of(input, &c.process_id, t).1).min().unwrap_or(i64::MAX);
        let freshest = input
            .clients
            .iter()
            .filter(|c| c.task_offset_sums.contains_key(t) && !out.client(&c.process_id).unwrap().active_tasks.contains(t))
            .map(|c| lag_of(input, &c.process_id, t).1)
            .min()
            .unwrap_or(i64::MAX);
        prop_assert!(held <= freshest, "{}: its copies' best lag {} is staler than a reported copy's {}", t, held, freshest);
    }
    Ok(())
}

/// Max − min over clients of tasks per thread, for actives and for stateful actives.
fn active_spreads(input: &AssignmentInput, out: &Assignment) -> (f64, f64) {
    let capacity: BTreeMap<_, _> = input.clients.iter().map(|c| (c.process_id, f64::from(c.capacity))).collect();
    let spread = |count: &dyn Fn(&kstreams_assignor::engine::ClientAssignment) -> usize| {
        let loads: Vec<f64> = out.clients.iter().map(|c| count(c) as f64 / capacity[&c.process_id]).collect();
        loads.iter().cloned().fold(f64::MIN, f64::max) - loads.iter().cloned().fold(f64::MAX, f64::min)
    };
    (
        spread(&|c| c.active_tasks.len()),
        spread(&|c| c.active_tasks.iter().filter(|t| input.stateful_tasks.contains(*t)).count()),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn optimized_keeps_the_invariants(p in params(), extra_spares in prop::sample::select(vec![0, 0, 1, 3])) {
        let mut input = build(&p, false);
        input.configs = input.configs.clone().with_max_spare_replicas(extra_spares);
        let out = check_invariants(AssignorKind::Optimized, &input)?;
        check_availability(&input, &out)?;
        if effective_assignor(AssignorKind::Optimized, &input) == AssignorKind::Optimized {
            check_standbys_keep_the_freshest_copy(&input, &out)?;
            prop_assert_eq!(&out.assignor, "OptimizedTaskAssignor");
            let interval = input.configs.probing_rebalance_interval_ms;
            let after = out.followup.probing_rebalance_interval_ms;
            prop_assert!((1_000..=interval).contains(&after), "probing after {} ms", after);
        }
    }

    /// Any capacities: within one task per thread (actives, and stateful actives), and a
    /// converged assignment comes back unchanged (nothing moves without a membership change).
    #[test]
    fn optimized_target_is_balanced_and_stable(p in params()) {
        let p = Params { fetch_failed: false, ..p };
        let input = build(&p, true);
        let out = check_invariants(AssignorKind::Optimized, &input)?;
        prop_assert!(!out.followup.probing_rebalance_needed, "a fresh group needs no movement");
        let (active, stateful) = active_spreads(&input, &out);
        prop_assert!(active <= 1.0 + 1e-9, "active spread {active}");
        prop_assert!(stateful <= 1.0 + 1e-9, "stateful spread {stateful}");
        let next = after_catching_up(&input, &out);
        let again = check_invariants(AssignorKind::Optimized, &next)?;
        prop_assert!(!again.followup.probing_rebalance_needed);
        for (a, b) in out.clients.iter().zip(&again.clients) {
            prop_assert_eq!(&a.active_tasks, &b.active_tasks, "actives of {} moved", a.process_id);
            prop_assert_eq!(&a.standby_tasks, &b.standby_tasks, "standbys of {} moved", a.process_id);
        }
    }

    /// With `stream.imbalance.percentage` (0 included): every invariant but the strict balance;
    /// from any state, the warm-ups converge to stateful active counts within the percentage of
    /// each client's capacity-proportional share, or within one task per thread of the mean;
    /// then the actives stay, and after one more rebalance no copy has to be restored.
    #[test]
    fn optimized_with_an_imbalance_converges_within_it_and_stays(p in params(), imbalance in 0i32..=60) {
        let p = Params { fetch_failed: false, ..p };
        let mut input = build(&p, false);
        input.configs = input.configs.clone().with_stream_imbalance_percentage(imbalance);
        let mut out = check_invariants(AssignorKind::Optimized, &input)?;
        check_availability(&input, &out)?;
        let mut rounds = 0;
        while out.followup.probing_rebalance_needed {
            rounds += 1;
            prop_assert!(rounds <= 40, "no convergence in 40 rounds");
            input = after_catching_up(&input, &out);
            out = check_invariants(AssignorKind::Optimized, &input)?;
            check_availability(&input, &out)?;
        }
        let total = input.stateful_tasks.len() as f64;
        let threads: f64 = input.clients.iter().map(|c| f64::from(c.capacity)).sum();
        let percent = f64::from(imbalance) / 100.0;
        for c in &input.clients {
            let held = out.client(&c.process_id).unwrap().active_tasks.iter().filter(|t| input.stateful_tasks.contains(*t)).count() as f64;
            let (cap, share) = (f64::from(c.capacity), total * f64::from(c.capacity) / threads);
            let within_percent = (held - share).abs() <= share * percent + 1e-9;
            let within_a_task_per_thread = (held / cap - total / threads).abs() <= 1.0 + 1e-9;
            prop_assert!(within_percent || within_a_task_per_thread, "{} holds {} stateful actives; share {:.2}, {}%", c.process_id, held, share, imbalance);
        }
        // The actives stay. One more rebalance may settle the spares (a spare whose task's
        // standby has caught up goes, or becomes that standby while the other copy goes); from
        // then on no client gets a copy it does not have.
        let settled = after_catching_up(&input, &out);
        let again = check_invariants(AssignorKind::Optimized, &settled)?;
        prop_assert!(!again.followup.probing_rebalance_needed);
        for (a, b) in out.clients.iter().zip(&again.clients) {
            prop_assert_eq!(&a.active_tasks, &b.active_tasks, "actives of {} moved", a.process_id);
        }
        let third = check_invariants(AssignorKind::Optimized, &after_catching_up(&settled, &again))?;
        prop_assert!(!third.followup.probing_rebalance_needed);
        for (a, b) in again.clients.iter().zip(&third.clients) {
            prop_assert_eq!(&a.active_tasks, &b.active_tasks, "actives of {} moved", a.process_id);
            for t in &b.standby_tasks {
                prop_assert!(a.standby_tasks.contains(t), "{} gets a new standby {}", a.process_id, t);
            }
        }
    }

    /// With equal capacities, the optimized target is no less balanced than Kafka's.
    #[test]
    fn optimized_is_as_balanced_as_high_availability(p in params(), capacity in 1u32..=4) {
        let p = Params { capacities: vec![capacity; p.capacities.len()], tags: false, fetch_failed: false, ..p };
        let input = build(&p, true);
        let ours = check_invariants(AssignorKind::Optimized, &input)?;
        let kafka = check_invariants(AssignorKind::HighAvailability, &input)?;
        let (a, s) = active_spreads(&input, &ours);
        let (ka, ks) = active_spreads(&input, &kafka);
        prop_assert!(a <= ka + 1e-9 && s <= ks + 1e-9, "spreads {a}/{s} against Kafka's {ka}/{ks}");
        assert_balanced(&input, &ours)?;
    }

    #[test]
    fn high_availability_keeps_the_invariants(p in params()) {
        check_invariants(AssignorKind::HighAvailability, &build(&p, false))?;
    }

    #[test]
    fn legacy_sticky_keeps_the_invariants(p in params()) {
        check_invariants(AssignorKind::LegacySticky, &build(&p, false))?;
    }

    #[test]
    fn fallback_prior_keeps_the_invariants(p in params()) {
        check_invariants(AssignorKind::FallbackPrior, &build(&p, false))?;
    }

    /// A fresh group (no client has state) needs no movement, so the target is the answer: it
    /// must be balanced. Kafka asserts this with equal capacities and no tags.
    #[test]
    fn high_availability_target_is_balanced(p in params(), capacity in 1u32..=4) {
        let p = Params { capacities: vec![capacity; p.capacities.len()], tags: false, fetch_failed: false, ..p };
        let input = build(&p, true);
        let out = check_invariants(AssignorKind::HighAvailability, &input)?;
        prop_assert!(!out.followup.probing_rebalance_needed);
        assert_balanced(&input, &out)?;
    }

    /// The differential test's scenarios, for breadth.
    #[test]
    fn generated_scenarios_keep_the_invariants(seed in any::<u64>(), index in 0u64..1_000) {
        let s = testdata::random(seed, index);
        check_invariants(s.assignor, &s.input)?;
    }
}
