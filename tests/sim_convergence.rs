//! Kafka's convergence bound for the high-availability assignor, in the model Kafka's own
//! `TaskAssignorConvergenceTest` uses: every client has one thread, every stateful task has an
//! end-offset sum of 150,000, `acceptable.recovery.lag` is 100, and between rebalances every task
//! a client was given (active, standby or warm-up) is reported fully caught up while the rest are
//! not reported. After every change the assignor must stop asking for probing rebalances within
//! Kafka's iteration limit, and the converged assignment must be valid and balanced.

use std::collections::{BTreeMap, BTreeSet};

use kstreams_assignor::rng::Rng;
use kstreams_assignor::engine::{
    Assignment, AssignmentConfigs, AssignmentInput, ClientInput, HighAvailabilityTaskAssignor, TaskAssignor,
};
use kstreams_assignor::wire::{ProcessId, TaskId};
use uuid::Uuid;

const END: i64 = 150_000;

#[derive(Clone, Default)]
struct ClientState {
    active: BTreeSet<TaskId>,
    standby: BTreeSet<TaskId>,
}

struct Harness {
    stateless: Vec<TaskId>,
    stateful: Vec<TaskId>,
    clients: BTreeMap<ProcessId, ClientState>,
    dropped: BTreeMap<ProcessId, ClientState>,
    next_id: u128,
}

impl Harness {
    /// Tasks are numbered as Kafka's harness numbers them: stateless sub-topologies first, then
    /// stateful ones, each with `partitions()` tasks (the last one fewer).
    fn new(stateless: usize, stateful: usize, clients: usize, mut partitions: impl FnMut() -> usize) -> Self {
        let mut subtopology = 0;
        let mut make = |n: usize| {
            let mut tasks = Vec::new();
            while tasks.len() < n {
                let count = partitions().min(n - tasks.len());
                tasks.extend((0..count).map(|p| TaskId::new(subtopology, p as i32)));
                subtopology += 1;
            }
            tasks
        };
        let stateless = make(stateless);
        let stateful = make(stateful);
        let mut h = Self { stateless, stateful, clients: BTreeMap::new(), dropped: BTreeMap::new(), next_id: 0 };
        for _ in 0..clients {
            h.add_client();
        }
        h
    }

    fn add_client(&mut self) {
        self.next_id += 1;
        self.clients.insert(ProcessId(Uuid::from_u128(self.next_id)), ClientState::default());
    }

    fn drop_client(&mut self, id: ProcessId) {
        let state = self.clients.remove(&id).expect("client");
        self.dropped.insert(id, state);
    }

    fn input(&self, configs: &AssignmentConfigs) -> AssignmentInput {
        let mut input = AssignmentInput::new()
            .with_configs(configs.clone())
            .with_stateful_tasks(self.stateful.iter().map(|t| (t.clone(), END)))
            .with_stateless_tasks(self.stateless.iter().cloned());
        for (id, state) in &self.clients {
            let sums = state.active.iter().chain(&state.standby).filter(|t| self.stateful.contains(t)).map(|t| (t.clone(), END));
            input = input.with_client(
                ClientInput::new(*id, 1).with_task_offset_sums(sums).with_owned_active_tasks(state.active.iter().cloned()),
            );
        }
        input
    }

    fn apply(&mut self, out: &Assignment) {
        for c in &out.clients {
            let state = self.clients.get_mut(&c.process_id).expect("assigned client exists");
            state.active = c.active_tasks.iter().cloned().collect();
            state.standby = c.standby_tasks.iter().cloned().collect();
        }
    }

    /// Rebalances until the assignor stops asking for a probing rebalance; fails past `limit`.
    fn converge(&mut self, configs: &AssignmentConfigs, limit: usize) -> Result<usize, String> {
        for iteration in 1..=limit {
            let out = HighAvailabilityTaskAssignor.assign(&self.input(configs)).map_err(|e| e.to_string())?;
            self.apply(&out);
            if !out.followup.probing_rebalance_needed {
                return Ok(iteration);
            }
        }
        Err(format!("not converged after {limit} rebalances"))
    }

    fn check_valid(&self, standbys: usize) -> Result<(), String> {
        let copies = standbys.min(self.clients.len() - 1) + 1;
        for t in &self.stateful {
            let actives = self.clients.values().filter(|c| c.active.contains(t)).count();
            let holders = self.clients.values().filter(|c| c.active.contains(t) || c.standby.contains(t)).count();
            if actives != 1 || holders != copies {
                return Err(format!("stateful {t}: {actives} actives, {holders} copies, want 1 and {copies}"));
            }
        }
        for t in &self.stateless {
            let actives = self.clients.values().filter(|c| c.active.contains(t)).count();
            if actives != 1 || self.clients.values().any(|c| c.standby.contains(t)) {
                return Err(format!("stateless {t}: {actives} actives or a standby"));
            }
        }
        Ok(())
    }

    fn check_balanced(&self) -> Result<(), String> {
        let spread = |f: &dyn Fn(&ClientState) -> usize| {
            let v: Vec<usize> = self.clients.values().map(f).collect();
            v.iter().max().unwrap() - v.iter().min().unwrap()
        };
        let active = spread(&|c| c.active.len());
        let stateful = spread(&|c| c.active.iter().chain(&c.standby).filter(|t| self.stateful.contains(t)).count());
        if active > 1 || stateful > 1 {
            return Err(format!("active spread {active}, stateful spread {stateful}"));
        }
        let subtopologies: BTreeSet<i32> = self.stateless.iter().chain(&self.stateful).map(|t| t.subtopology).collect();
        for s in subtopologies {
            let skew = spread(&|c| c.active.iter().filter(|t| t.subtopology == s).count());
            if skew > 1 {
                return Err(format!("sub-topology {s} skew {skew}"));
            }
        }
        Ok(())
    }
}

fn configs(max_warmups: i32, standbys: i32) -> AssignmentConfigs {
    AssignmentConfigs::default()
        .with_acceptable_recovery_lag(100)
        .with_max_warmup_replicas(max_warmups)
        .with_num_standby_replicas(standbys)
        .with_probing_rebalance_interval_ms(60_000)
}

#[test]
fn static_assignment_converges_with_the_first_assignment() {
    let mut h = Harness::new(1, 1, 1, || 1);
    assert_eq!(h.converge(&configs(1, 0), 1), Ok(1));
    h.check_valid(0).unwrap();
    h.check_balanced().unwrap();
}

#[test]
fn assignment_converges_after_adding_a_node() {
    let (stateless, stateful, warmups) = (7, 11, 2);
    let mut h = Harness::new(stateless, stateful, 1, || 1);
    let c = configs(warmups, 0);
    h.converge(&c, 1).unwrap();
    h.add_client();
    let rounds = h.converge(&c, stateful / warmups as usize + 1).unwrap();
    h.check_valid(0).unwrap();
    h.check_balanced().unwrap();
    assert!(rounds > 1, "a new node must be warmed up first");
}

#[test]
fn dropping_a_node_converges() {
    let (stateless, stateful, warmups) = (11, 13, 2);
    let mut h = Harness::new(stateless, stateful, 7, || 1);
    let c = configs(warmups, 0);
    h.converge(&c, 1).unwrap();
    let first = *h.clients.keys().next().unwrap();
    h.drop_client(first);
    h.converge(&c, stateful / warmups as usize + 2).unwrap();
    h.check_valid(0).unwrap();
    h.check_balanced().unwrap();
}

#[test]
fn random_cluster_perturbations_converge_within_kafkas_bound() {
    for seed in 0..2_000u64 {
        let mut rng = Rng::new(seed);
        let initial = rng.range(1, 10) as usize;
        let stateless = rng.range(1, 10) as usize;
        let stateful = rng.range(1, 10) as usize;
        let warmups = rng.range(1, stateful as i64) as i32;
        let standbys = rng.range(0, initial as i64) as i32;
        let events = rng.range(1, 10);
        let mut partition_rng = Rng::new(seed ^ 0xabcdef);
        let mut h = Harness::new(stateless, stateful, initial, || partition_rng.range(1, 10) as usize);
        let c = configs(warmups, standbys);
        let context = |step: &str, e: String| format!("seed {seed}, {step}: {e}");
        h.converge(&c, 1).map_err(|e| context("initial", e)).unwrap();
        h.check_valid(standbys as usize).map_err(|e| context("initial", e)).unwrap();
        h.check_balanced().map_err(|e| context("initial", e)).unwrap();
        for event in 0..events {
            if rng.chance(0.5) {
                for _ in 0..rng.range(0, initial as i64 - 1) {
                    if h.clients.is_empty() {
                        break;
                    }
                    let ids: Vec<ProcessId> = h.clients.keys().copied().collect();
                    h.drop_client(*rng.pick(&ids));
                }
            } else {
                for _ in 0..rng.range(0, initial as i64 - 1) {
                    if rng.chance(0.5) || h.dropped.is_empty() {
                        h.add_client();
                    } else {
                        let ids: Vec<ProcessId> = h.dropped.keys().copied().collect();
                        let id = *rng.pick(&ids);
                        let state = h.dropped.remove(&id).unwrap();
                        h.clients.insert(id, state);
                    }
                }
            }
            if h.clients.is_empty() {
                continue;
            }
            let limit = 2 * (stateful + stateful * standbys as usize);
            let step = format!("event {event}");
            h.converge(&c, limit).map_err(|e| context(&step, e)).unwrap();
            h.check_valid(standbys as usize).map_err(|e| context(&step, e)).unwrap();
            h.check_balanced().map_err(|e| context(&step, e)).unwrap();
        }
    }
}
