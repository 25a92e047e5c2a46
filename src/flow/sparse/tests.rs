use super::*;
use crate::flow::{CostMatrix, assign};
use crate::rng::Rng;

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// A random instance: up to 6 classes of clients, class costs in a narrow range (many
/// ties), a few cheaper candidates per task.
fn instance(rng: &mut Rng) -> (SparseCosts, Vec<usize>) {
    let n = 1 + below(rng, 12);
    let k = 1 + below(rng, n.min(6));
    let class_of: Vec<usize> = (0..n).map(|c| if c < k { c } else { below(rng, k) }).collect();
    let mut costs = SparseCosts::new(class_of.clone()).unwrap();
    let tasks = below(rng, 40);
    for _ in 0..tasks {
        let base = below(rng, 4) as i32 * 100;
        let class_costs: Vec<i32> = (0..k).map(|_| base + below(rng, 3) as i32).collect();
        let mut candidates: Vec<(usize, i32)> = Vec::new();
        for c in 0..n {
            if below(rng, 4) == 0 {
                let class_cost = class_costs[class_of[c]];
                candidates.push((c, class_cost - below(rng, 300) as i32));
            }
        }
        costs.push_task(&class_costs, &candidates).unwrap();
    }
    let mut capacities: Vec<usize> = (0..n).map(|_| below(rng, 6)).collect();
    while capacities.iter().sum::<usize>() < tasks {
        capacities[below(rng, n)] += 1 + below(rng, 3);
    }
    (costs, capacities)
}

/// The same optimum as the dense solver on the full matrix, a valid assignment of that cost,
/// and the same answer twice.
#[test]
fn reaches_the_dense_optimum() {
    let mut rng = Rng::new(0x5ca1e);
    for _ in 0..3_000 {
        let (costs, capacities) = instance(&mut rng);
        let matrix = CostMatrix::from_fn(costs.tasks(), costs.clients(), |t, c| costs.cost(t, c)).unwrap();
        let dense = assign(&matrix, &capacities).unwrap();
        let sparse = assign_sparse(&costs, &capacities).unwrap();
        assert_eq!(sparse.cost, dense.cost, "{costs:?} {capacities:?}");
        let mut count = vec![0; costs.clients()];
        for &c in &sparse.clients {
            count[c] += 1;
        }
        assert!(count.iter().zip(&capacities).all(|(n, cap)| n <= cap));
        let total: i64 = sparse.clients.iter().enumerate().map(|(t, &c)| i64::from(costs.cost(t, c))).sum();
        assert_eq!(total, sparse.cost);
        assert_eq!(assign_sparse(&costs, &capacities).unwrap(), sparse);
    }
}

/// Indexing a client's tasks only once a search first reads its moves places every task
/// where indexing each as it enters does.
#[test]
fn deferred_indexing_changes_no_placement() {
    let mut rng = Rng::new(0xdefe2);
    let mut with_tasks = 0;
    for _ in 0..3_000 {
        let (costs, mut capacities) = instance(&mut rng);
        // Tight capacities, so that clients fill up and searches move tasks off them.
        while capacities.iter().sum::<usize>() > costs.tasks() {
            let c = (0..capacities.len()).max_by_key(|&c| (capacities[c], c)).unwrap();
            capacities[c] -= 1;
        }
        let deferred = solve(&costs, &capacities, false).unwrap();
        assert_eq!(deferred, solve(&costs, &capacities, true).unwrap(), "{costs:?} {capacities:?}");
        with_tasks += usize::from(costs.tasks() > 0);
    }
    assert!(with_tasks > 2_000, "only {with_tasks} instances with tasks");
}

#[test]
fn refuses_malformed_costs() {
    let mut costs = SparseCosts::new(vec![0, 1]).unwrap();
    assert_eq!(costs.push_task(&[1], &[]).unwrap_err(), FlowError::ClassCostCount { task: 0, len: 1, classes: 2 });
    assert_eq!(costs.push_task(&[1, 1], &[(1, 0), (0, 0)]).unwrap_err(), FlowError::CandidateOrder { task: 0, client: 0, clients: 2 });
    assert_eq!(costs.push_task(&[1, 1], &[(2, 0)]).unwrap_err(), FlowError::CandidateOrder { task: 0, client: 2, clients: 2 });
    assert_eq!(costs.tasks(), 0);
    costs.push_task(&[1, 1], &[(1, 0)]).unwrap();
    assert_eq!(assign_sparse(&costs, &[1]).unwrap_err(), FlowError::CapacityCount { len: 1, clients: 2 });
    assert_eq!(assign_sparse(&costs, &[0, 0]).unwrap_err(), FlowError::Infeasible { required: 1, max_flow: 0 });
}
