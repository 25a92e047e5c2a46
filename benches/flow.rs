//! Min-cost flow on rack-aware assignment instances (KIP-925's `min_traffic` graph), fixed seed:
//! 1,000 tasks × 30 clients and 10,000 tasks × 100 clients, 3 racks.
//!
//! Each task reads 1–4 input partitions, each with replicas on 1 or 2 of the 3 racks; clients sit
//! on racks round robin. `cost(task, client) = 10 × #(partitions with no replica on the client's
//! rack) + 1 if the task is not currently on the client` (Kafka's `min_traffic` defaults:
//! `traffic_cost` 10, `non_overlap_cost` 1). The current assignment is balanced round robin
//! (task *i* on client *i* mod *N*), and the optimum must keep each client's count.
//!
//! Measured, each on the same instance:
//! * `reassign`: the client-level fast path (`flow::reassign`), cost matrix built beforehand;
//! * `cost_matrix+reassign`: the same including building the cost matrix;
//! * `graph_circulation`: the general solver's `Graph::min_cost_circulation` from the current
//!   assignment as a flow (the graph is cloned outside the timing);
//! * `graph_min_cost_flow`: the general solver from zero flow, `required` = all tasks.

use std::hint::black_box;

use kstreams_assignor::rng::Rng;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kstreams_assignor::flow::{self, CostMatrix, Graph};

const RNG_SEED: u64 = 0x6b69_7039_3235;
const RACKS: usize = 3;
const TRAFFIC_COST: i64 = 10;
const NON_OVERLAP_COST: i64 = 1;

/// A number below `n` from the engine's seeded splitmix64 stream.
trait Below {
    fn below(&mut self, n: usize) -> usize;
}

impl Below for Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

struct Instance {
    tasks: usize,
    clients: usize,
    /// `missing[t][r]`: input partitions of task `t` with no replica on rack `r`.
    missing: Vec<[i64; RACKS]>,
    current: Vec<usize>,
}

impl Instance {
    fn new(tasks: usize, clients: usize) -> Self {
        let mut rng = Rng::new(RNG_SEED ^ (tasks as u64) << 20 ^ clients as u64);
        let missing = (0..tasks)
            .map(|_| {
                let mut missing = [0; RACKS];
                for _ in 0..1 + rng.below(4) {
                    let replicas = 1 + rng.below(2);
                    let first = rng.below(RACKS);
                    let second = (first + 1 + rng.below(RACKS - 1)) % RACKS;
                    for (r, m) in missing.iter_mut().enumerate() {
                        if r != first && (replicas == 1 || r != second) {
                            *m += 1;
                        }
                    }
                }
                missing
            })
            .collect();
        Self { tasks, clients, missing, current: (0..tasks).map(|t| t % clients).collect() }
    }

    fn cost(&self, task: usize, client: usize) -> i64 {
        TRAFFIC_COST * self.missing[task][client % RACKS]
            + if self.current[task] == client { 0 } else { NON_OVERLAP_COST }
    }

    fn matrix(&self) -> CostMatrix {
        CostMatrix::from_fn(self.tasks, self.clients, |t, c| self.cost(t, c) as i32).unwrap()
    }

    /// Kafka's graph: source, tasks, clients, sink; edge flows set to the current assignment
    /// when `with_flow`, client → sink capacities = the current counts.
    fn graph(&self, with_flow: bool) -> Graph {
        let (t, n) = (self.tasks, self.clients);
        let (source, sink) = (t + n, t + n + 1);
        let mut g = Graph::new(t + n + 2);
        let mut count = vec![0; n];
        for task in 0..t {
            let e = g.add_edge(source, task, 1, 0).unwrap();
            if with_flow {
                g.set_flow(e, 1).unwrap();
            }
            for client in 0..n {
                let e = g.add_edge(task, t + client, 1, self.cost(task, client)).unwrap();
                if with_flow && self.current[task] == client {
                    g.set_flow(e, 1).unwrap();
                }
            }
            count[self.current[task]] += 1;
        }
        for (client, &c) in count.iter().enumerate() {
            let e = g.add_edge(t + client, sink, c, 0).unwrap();
            if with_flow {
                g.set_flow(e, c).unwrap();
            }
        }
        g
    }
}

fn rack_aware(c: &mut Criterion) {
    for (tasks, clients) in [(1_000, 30), (10_000, 100)] {
        let instance = Instance::new(tasks, clients);
        let matrix = instance.matrix();
        let fast = flow::reassign(&matrix, &instance.current).unwrap();
        let circulation = instance.graph(true);
        let mut check = circulation.clone();
        let start = check.total_cost().unwrap();
        assert_eq!(check.min_cost_circulation().unwrap(), fast.cost, "both solvers reach the optimum");
        let from_zero = instance.graph(false);
        let (source, sink) = (tasks + clients, tasks + clients + 1);
        assert_eq!(from_zero.clone().min_cost_flow(source, sink, tasks as i64).unwrap().cost, fast.cost);
        let moved = fast.clients.iter().zip(&instance.current).filter(|(a, b)| a != b).count();
        eprintln!("{tasks}×{clients}: cost {start} → {}, {moved} task(s) moved", fast.cost);

        let mut g = c.benchmark_group(format!("rack_aware_{tasks}x{clients}"));
        if tasks >= 10_000 {
            g.sample_size(10);
        }
        g.bench_function("reassign", |b| b.iter(|| flow::reassign(black_box(&matrix), &instance.current).unwrap()));
        g.bench_function("cost_matrix+reassign", |b| {
            b.iter(|| flow::reassign(&black_box(&instance).matrix(), &instance.current).unwrap())
        });
        g.bench_function("graph_circulation", |b| {
            b.iter_batched_ref(|| circulation.clone(), |g| g.min_cost_circulation().unwrap(), BatchSize::LargeInput)
        });
        g.bench_function("graph_min_cost_flow", |b| {
            b.iter_batched_ref(
                || from_zero.clone(),
                |g| g.min_cost_flow(source, sink, tasks as i64).unwrap(),
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, rack_aware);
criterion_main!(benches);
