//! Rack-aware task assignment (KIP-925) end to end through the high-availability assignor and the
//! optimized one (`optimized_<strategy>`), fixed seed: 1,000 tasks × 30 clients and 10,000 tasks ×
//! 100 clients, 3 racks, one standby replica.
//!
//! Tasks are spread over 10 sub-topologies; each reads 1–4 input partitions and has one changelog
//! partition, every partition with replicas on 1 or 2 of the 3 racks; clients sit on racks round
//! robin with capacity 2; end offsets are 0 (everyone is caught up: no warm-ups). Measured per
//! `rack.aware.assignment.strategy`: `none` (the baseline assignor), `min_traffic` and
//! `balance_subtopology`, with the high-availability defaults (traffic 10, non-overlap 1).
//!
//! `rack_step/…` measures Kafka's two rack-aware optimisations alone ([`optimize_rack_aware`]) on
//! the same groups from a fixed placement: the `k`-th task's active on client `k mod clients` (the
//! assignor's round robin) and its standby on a seeded-random other client. `active_<strategy>`
//! is `optimizeActiveTasks` on the actives (no standbys placed yet, as in Kafka), `standby` is
//! `optimizeStandbyTasks` on actives and standbys. The timing includes building the model from the
//! input and converting the placement in and out. With `RACK_BENCH_DIR` set, each of these instances is
//! first written there as `<tasks>x<clients>-<strategy>.json` and read back, and the bench runs on
//! what it read, and the costs both steps reach are written next to it (`….rust.json`):
//! `compat/bench-rack.sh` times Kafka's `RackAwareTaskAssignor` on the same files.

use std::hint::black_box;

use kstreams_assignor::rng::Rng;

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{
    AssignmentConfigs, AssignmentInput, AssignorKind, ClientInput, RackAwareStrategy, TaskPartitions, TaskPlacement,
    RackAwareStep, assign, optimize_rack_aware,
};
use kstreams_assignor::wire::{ProcessId, TaskId};

const RNG_SEED: u64 = 0x0072_6163_6b39_3235;
const RACKS: u64 = 3;

/// A number below `n` from the engine's seeded splitmix64 stream.
trait Below {
    fn below(&mut self, n: u64) -> u64;
}

impl Below for Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

fn partition(rng: &mut Rng) -> Vec<String> {
    let first = rng.below(RACKS);
    let mut racks = vec![format!("r{first}")];
    if rng.below(2) == 0 {
        racks.push(format!("r{}", (first + 1 + rng.below(RACKS - 1)) % RACKS));
    }
    racks
}

fn instance(tasks: usize, clients: usize, strategy: RackAwareStrategy) -> AssignmentInput {
    let mut rng = Rng::new(RNG_SEED ^ ((tasks as u64) << 20) ^ clients as u64);
    let configs =
        AssignmentConfigs::default().with_num_standby_replicas(1).with_rack_aware_assignment_strategy(strategy);
    let mut input = AssignmentInput::new().with_configs(configs);
    for c in 0..clients {
        let id = ProcessId(uuid::Uuid::from_u128(0x1000 + c as u128));
        input = input.with_client(ClientInput::new(id, 2).with_rack_id(format!("r{}", c as u64 % RACKS)));
    }
    for i in 0..tasks {
        let task = TaskId::new((i % 10) as i32, (i / 10) as i32);
        let inputs: Vec<Vec<String>> = (0..1 + rng.below(4)).map(|_| partition(&mut rng)).collect();
        let partitions = TaskPartitions::new(inputs).with_changelog([partition(&mut rng)]);
        input = input.with_stateful_tasks([(task.clone(), 0)]).with_task_partitions(task, partitions);
    }
    input
}

/// The rack-aware step's starting placement for `input` (see the module documentation).
fn placement(input: &AssignmentInput) -> TaskPlacement {
    let mut rng = Rng::new(RNG_SEED ^ 0x5354_414e_4442_5953);
    let clients: Vec<ProcessId> = input.clients.iter().map(|c| c.process_id).collect();
    let n = clients.len();
    let mut placement = TaskPlacement::default();
    for (k, task) in input.stateful_tasks.iter().enumerate() {
        placement.active.insert(task.clone(), clients[k % n]);
        let other = (k + 1 + rng.below(n as u64 - 1) as usize) % n;
        placement.standby.insert(task.clone(), [clients[other]].into());
    }
    placement
}

/// The instance of one `rack_step` case, through `RACK_BENCH_DIR` if that is set.
fn step_instance(tasks: usize, clients: usize, strategy: RackAwareStrategy) -> (AssignmentInput, TaskPlacement) {
    let input = instance(tasks, clients, strategy);
    let placement = placement(&input);
    let Some(dir) = std::env::var_os("RACK_BENCH_DIR") else { return (input, placement) };
    let path = std::path::Path::new(&dir).join(format!("{tasks}x{clients}-{}.json", strategy.name()));
    let json = serde_json::json!({"input": input, "placement": placement});
    std::fs::create_dir_all(&dir).expect("RACK_BENCH_DIR");
    std::fs::write(&path, serde_json::to_vec(&json).expect("serialisable")).expect("instance written");
    let read: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).expect("instance read")).expect("JSON");
    let back: AssignmentInput = serde_json::from_value(read["input"].clone()).expect("input");
    let back_placement: TaskPlacement = serde_json::from_value(read["placement"].clone()).expect("placement");
    assert_eq!((&back, &back_placement), (&input, &placement), "{} does not round-trip", path.display());
    // The costs each step reaches, for the script to compare with Kafka's.
    let actives = TaskPlacement { active: back_placement.active.clone(), ..Default::default() };
    let active = optimize_rack_aware(&back, &actives, RackAwareStep::ActiveTasks).expect("rack-aware instance");
    let standby = optimize_rack_aware(&back, &back_placement, RackAwareStep::StandbyTasks).expect("rack-aware instance");
    let costs = serde_json::json!({"active": active.active_cost, "standby": standby.standby_cost});
    std::fs::write(path.with_extension("rust.json"), costs.to_string()).expect("costs written");
    (back, back_placement)
}

fn bench(c: &mut Criterion) {
    for (tasks, clients, samples) in [(1_000, 30, 20), (10_000, 100, 10)] {
        let mut group = c.benchmark_group(format!("rack/{tasks}x{clients}"));
        group.sample_size(samples);
        for strategy in [RackAwareStrategy::None, RackAwareStrategy::MinTraffic, RackAwareStrategy::BalanceSubtopology]
        {
            let input = instance(tasks, clients, strategy);
            group.bench_function(strategy.name(), |b| {
                b.iter(|| assign(AssignorKind::HighAvailability, black_box(&input)).unwrap())
            });
            group.bench_function(format!("optimized_{}", strategy.name()), |b| {
                b.iter(|| assign(AssignorKind::Optimized, black_box(&input)).unwrap())
            });
        }
        group.finish();
    }
    for (tasks, clients, samples) in [(1_000, 30, 20), (10_000, 100, 10)] {
        let mut group = c.benchmark_group(format!("rack_step/{tasks}x{clients}"));
        group.sample_size(samples);
        for strategy in [RackAwareStrategy::MinTraffic, RackAwareStrategy::BalanceSubtopology] {
            let (input, placement) = step_instance(tasks, clients, strategy);
            let actives = TaskPlacement { active: placement.active.clone(), ..Default::default() };
            group.bench_function(format!("active_{}", strategy.name()), |b| {
                b.iter(|| optimize_rack_aware(black_box(&input), black_box(&actives), RackAwareStep::ActiveTasks).unwrap())
            });
            if strategy == RackAwareStrategy::MinTraffic {
                group.bench_function("standby", |b| {
                    b.iter(|| {
                        optimize_rack_aware(black_box(&input), black_box(&placement), RackAwareStep::StandbyTasks).unwrap()
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
