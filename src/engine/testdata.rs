//! Seeded random scenarios for the assignors: the inputs of the Java differential test, the
//! property tests and the benchmarks.
//!
//! Generation is deterministic: the same `(seed, index)` gives the same scenario on every platform
//! and in every version of this crate that keeps [`GENERATOR_VERSION`]. The random source is
//! [`Rng`], a SplitMix64 stream written out in this crate so that no dependency can change it.
//!
//! Test data, not part of the API: compiled only with the cargo feature `testdata`, which this
//! crate's own tests and benchmarks turn on.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::config::{AssignmentConfigs, RackAwareStrategy};
use super::input::{AssignmentInput, ClientInput};
use super::registry::AssignorKind;
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId, UNKNOWN_OFFSET_SUM};
pub use crate::rng::Rng;

/// Bumped whenever the same seed starts giving different scenarios.
pub const GENERATOR_VERSION: u32 = 2;

/// One generated case: which assignor is configured, and its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Scenario {
    /// A name unique within a run: `s<seed>-<index>`.
    pub id: String,
    /// The configured assignor (the leader may fall back, see [`assign`](super::assign)).
    pub assignor: AssignorKind,
    /// The input.
    pub input: AssignmentInput,
}

/// The scenario `index` of the stream `seed`, as the differential test uses them: 1–50 clients
/// with 1–8 threads, up to 500 tasks in up to 8 sub-topologies (1.5 % have 2–8 clients and
/// 9–10 sub-topologies of 249–300 partitions, where Java's hash maps grow tree bins), 0–3 standbys (now and then -1,
/// which Kafka accepts), tags on about a third, rack-aware strategies on a fifth (they stay off:
/// inputs have no partition racks), offset sums around `acceptable.recovery.lag` with `-2`/`-3`
/// sentinels, unknown tasks and corrupt (too large) sums, previous owners for the sticky
/// assignors, and failed end-offset fetches now and then.
///
/// ```
/// use kstreams_assignor::engine::testdata;
///
/// let a = testdata::random(1, 7);
/// assert_eq!(a, testdata::random(1, 7));
/// assert!((1..=50).contains(&a.input.clients.len()));
/// ```
pub fn random(seed: u64, index: u64) -> Scenario {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let assignor = match rng.range(0, 99) {
        0..=59 => AssignorKind::HighAvailability,
        60..=84 => AssignorKind::LegacySticky,
        _ => AssignorKind::FallbackPrior,
    };
    let shape = if rng.chance(0.015) {
        // Large enough for Java's HashMaps of task ids to grow tree bins: 10 tasks (s, p) with
        // equal 31·s + p share a hash once there are ≥ 9 sub-topologies of ≥ 249 partitions.
        let subtopologies = rng.range(9, 10) as usize;
        let partitions = rng.range(249, 300);
        Shape {
            clients: rng.range(2, 8) as usize,
            max_capacity: 4,
            subtopologies,
            max_tasks: subtopologies as i64 * partitions,
            partitions: Some(partitions),
        }
    } else {
        Shape {
            clients: if rng.chance(0.5) { rng.range(1, 8) } else { rng.range(1, 50) } as usize,
            max_capacity: *rng.pick(&[1, 1, 2, 4, 8]),
            subtopologies: rng.range(1, 8) as usize,
            max_tasks: *rng.pick(&[4, 20, 60, 200, 500]),
            partitions: None,
        }
    };
    // Kafka has no validator on num.standby.replicas; -1 now and then exercises that too.
    let standbys = if rng.chance(0.03) { -1 } else { rng.range(0, 3) as i32 };
    let mut configs = AssignmentConfigs::default()
        .with_num_standby_replicas(standbys)
        .with_max_warmup_replicas(*rng.pick(&[1, 2, 2, 3, 5, 10]))
        .with_acceptable_recovery_lag(*rng.pick(&[0, 100, 10_000, 10_000, 50_000, i64::MAX]));
    if rng.chance(0.2) {
        // Partition racks are not part of the input, so Kafka cannot enable these.
        let strategy = *rng.pick(&[RackAwareStrategy::MinTraffic, RackAwareStrategy::BalanceSubtopology]);
        let cost = |rng: &mut Rng| rng.chance(0.5).then(|| rng.range(0, 20) as i32);
        let (traffic, non_overlap) = (cost(&mut rng), cost(&mut rng));
        configs = configs.with_rack_aware_assignment_strategy(strategy).with_rack_aware_costs(traffic, non_overlap);
    }
    if rng.chance(0.35) {
        let keys = ["zone", "rack", "host"];
        let n = rng.range(1, 3) as usize;
        configs = configs.with_rack_aware_assignment_tags(keys[..n].iter().copied());
    }
    let mut input = build(&mut rng, &shape, configs, assignor != AssignorKind::HighAvailability);
    if assignor == AssignorKind::FallbackPrior || rng.chance(0.03) {
        input.changelog_end_offset_sums = None;
    }
    // The fallback is what the leader runs for a failed fetch; configure the default assignor.
    let assignor = if assignor == AssignorKind::FallbackPrior { AssignorKind::HighAvailability } else { assignor };
    Scenario { id: format!("s{seed}-{index}"), assignor, input }
}

/// A steady-state group for benchmarks: `clients` clients with `threads` threads each,
/// `tasks` stateful tasks in 10 sub-topologies, `standbys` standbys; every client reports the
/// tasks of a previous balanced assignment (actives at `-2`, standbys caught up) and a fifth of the
/// clients are new, so the assignor has movements and warm-ups to plan.
///
/// ```
/// let s = kstreams_assignor::engine::testdata::steady_state(1, 10, 2, 100, 1);
/// assert_eq!(s.input.clients.len(), 10);
/// assert_eq!(s.input.stateful_tasks.len(), 100);
/// ```
pub fn steady_state(seed: u64, clients: usize, threads: u32, tasks: usize, standbys: i32) -> Scenario {
    let mut rng = Rng::new(seed);
    let ids: Vec<ProcessId> = (0..clients).map(|_| rng.process_id()).collect();
    let per_sub = tasks.div_ceil(10);
    let task_ids: Vec<TaskId> = (0..tasks).map(|i| TaskId::new((i / per_sub) as i32, (i % per_sub) as i32)).collect();
    let ends: Vec<i64> = task_ids.iter().map(|_| rng.range(0, 5_000_000)).collect();
    let old = clients - clients / 5;
    let mut sums: Vec<BTreeMap<TaskId, i64>> = vec![BTreeMap::new(); clients];
    for (i, task) in task_ids.iter().enumerate() {
        let owner = i % old.max(1);
        sums[owner].insert(task.clone(), LATEST_OFFSET);
        for k in 1..=standbys.max(0) as usize {
            let holder = (owner + k) % old.max(1);
            if holder != owner {
                sums[holder].insert(task.clone(), ends[i] - rng.range(0, 20_000));
            }
        }
    }
    let mut input = AssignmentInput::new().with_configs(AssignmentConfigs::default().with_num_standby_replicas(standbys));
    for (c, id) in ids.iter().enumerate() {
        input = input.with_client(ClientInput::new(*id, threads).with_task_offset_sums(std::mem::take(&mut sums[c])));
    }
    let input = input.with_stateful_tasks(task_ids.into_iter().zip(ends));
    Scenario { id: format!("steady-{clients}x{threads}-{tasks}-{standbys}"), assignor: AssignorKind::HighAvailability, input }
}

struct Shape {
    clients: usize,
    max_capacity: i64,
    subtopologies: usize,
    max_tasks: i64,
    /// Partitions of every sub-topology, or random.
    partitions: Option<i64>,
}

fn build(rng: &mut Rng, shape: &Shape, configs: AssignmentConfigs, sticky: bool) -> AssignmentInput {
    let acceptable = configs.acceptable_recovery_lag.min(1_000_000);
    let tag_keys = configs.rack_aware_assignment_tags.clone();

    // Tasks: sub-topologies 0..k, each stateful or not, partitions 0..p.
    let mut remaining = shape.max_tasks;
    let mut stateful = Vec::new();
    let mut stateless = Vec::new();
    for s in 0..shape.subtopologies {
        if remaining <= 0 {
            break;
        }
        let partitions = shape
            .partitions
            .unwrap_or_else(|| rng.range(1, remaining.min(shape.max_tasks / shape.subtopologies as i64 * 2).max(1)));
        remaining -= partitions;
        let is_stateful = rng.chance(0.65);
        for p in 0..partitions {
            let task = TaskId::new(s as i32, p as i32);
            if is_stateful { stateful.push(task) } else { stateless.push(task) }
        }
    }
    let ends: Vec<i64> = stateful
        .iter()
        .map(|_| match rng.range(0, 9) {
            0 => 0,
            1 => rng.range(0, acceptable.max(1)),
            2 => i64::MAX - rng.range(0, 10),
            _ => rng.range(0, 2_000_000),
        })
        .collect();

    // Clients with tags.
    let ids: Vec<ProcessId> = (0..shape.clients).map(|_| rng.process_id()).collect();
    let value_pools: Vec<i64> = tag_keys.iter().map(|_| rng.range(1, 4)).collect();
    let mut clients: Vec<ClientInput> = ids
        .iter()
        .map(|&id| {
            let mut client = ClientInput::new(id, rng.range(1, shape.max_capacity) as u32);
            for (k, key) in tag_keys.iter().enumerate() {
                if rng.chance(0.95) {
                    client.client_tags.insert(key.clone(), format!("{key}-{}", rng.range(1, value_pools[k])));
                }
            }
            if !tag_keys.is_empty() && rng.chance(0.1) {
                client.client_tags.insert("other".to_owned(), format!("o{}", rng.range(1, 2)));
            }
            if rng.chance(0.3) {
                client.rack_id = Some(format!("rack-{}", rng.range(1, 3)));
            }
            client
        })
        .collect();

    // A previous assignment: who ran what, who kept state for what.
    let history = rng.chance(0.85);
    let n = clients.len() as i64;
    for (i, task) in stateful.iter().enumerate() {
        if !history {
            break;
        }
        let end = ends[i];
        let lag_near = |rng: &mut Rng| {
            let lag = match rng.range(0, 5) {
                0 => acceptable,
                1 => acceptable + 1,
                2 => rng.range(0, acceptable.max(1)),
                _ => rng.range(0, acceptable.saturating_mul(3).max(3)),
            };
            end.saturating_sub(lag)
        };
        if rng.chance(0.8) {
            let c = rng.range(0, n - 1) as usize;
            let sum = if rng.chance(0.7) { LATEST_OFFSET } else { lag_near(rng) };
            clients[c].task_offset_sums.insert(task.clone(), sum);
            if sticky && rng.chance(0.5) {
                clients[c].owned_active_tasks.insert(task.clone());
            }
        }
        for _ in 0..rng.range(0, 3) {
            let c = rng.range(0, n - 1) as usize;
            let sum = match rng.range(0, 19) {
                0 => UNKNOWN_OFFSET_SUM,
                1 => LATEST_OFFSET,
                2 => end.saturating_add(rng.range(1, 1000)),
                _ => lag_near(rng),
            };
            clients[c].task_offset_sums.entry(task.clone()).or_insert(sum);
        }
    }
    if history {
        for task in &stateless {
            if rng.chance(0.7) {
                let c = rng.range(0, n - 1) as usize;
                clients[c].owned_active_tasks.insert(task.clone());
            }
        }
        for client in &mut clients {
            if rng.chance(0.1) {
                let gone = TaskId::new(shape.subtopologies as i32 + rng.range(0, 3) as i32, rng.range(0, 9) as i32);
                let sum = if rng.chance(0.5) { LATEST_OFFSET } else { rng.range(0, 1000) };
                client.task_offset_sums.insert(gone, sum);
            }
        }
    }

    let mut input = AssignmentInput::new().with_configs(configs);
    input.clients = clients;
    input.stateful_tasks = stateful.iter().cloned().collect::<BTreeSet<_>>();
    input.stateless_tasks = stateless.into_iter().collect();
    input.changelog_end_offset_sums = Some(stateful.into_iter().zip(ends).collect());
    input
}
