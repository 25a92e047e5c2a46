//! Rack-aware task assignment (KIP-925) end to end through the high-availability assignor, fixed
//! seed: 1,000 tasks × 30 clients and 10,000 tasks × 100 clients, 3 racks, one standby replica.
//!
//! Tasks are spread over 10 sub-topologies; each reads 1–4 input partitions and has one changelog
//! partition, every partition with replicas on 1 or 2 of the 3 racks; clients sit on racks round
//! robin with capacity 2; end offsets are 0 (everyone is caught up: no warm-ups). Measured per
//! `rack.aware.assignment.strategy`: `none` (the baseline assignor), `min_traffic` and
//! `balance_subtopology`, with the high-availability defaults (traffic 10, non-overlap 1).

use std::hint::black_box;

use kstreams_assignor::engine::scenario::Rng;

use criterion::{Criterion, criterion_group, criterion_main};
use kstreams_assignor::engine::{
    AssignmentConfigs, AssignmentInput, AssignorKind, ClientInput, RackAwareStrategy, TaskPartitions, assign,
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
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
