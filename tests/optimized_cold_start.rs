//! The optimized assignor when no client is caught up on a task: restoration is spread over the
//! clients unless a client with less to restore would process the task sooner.
//!
//! The cold start of a new deployment: one instance joins first and takes every task, the others
//! join seconds later while it is still restoring from the changelogs. Keeping every task on it
//! (it has the smallest lag) makes it restore them all alone while the others warm up copies;
//! spreading them makes the three restore in parallel.

use kstreams_assignor::engine::{AssignmentConfigs, AssignmentInput, ClientInput, OptimizedTaskAssignor, TaskAssignor};
use kstreams_assignor::wire::{ProcessId, TaskId};

const END: i64 = 1_000_000;

fn pid(n: u128) -> ProcessId {
    ProcessId(uuid::Uuid::from_u128(n))
}

/// Three one-thread clients and eight stateful tasks of `END` records each; client 1 owns every
/// task and has restored `restored` records of each, clients 2 and 3 have no state.
fn cold_start(restored: i64) -> AssignmentInput {
    let tasks: Vec<TaskId> = (0..8).map(|p| TaskId::new(0, p)).collect();
    AssignmentInput::new()
        .with_configs(AssignmentConfigs::default().with_num_standby_replicas(0))
        .with_client(
            ClientInput::new(pid(1), 1)
                .with_task_offset_sums(tasks.iter().map(|t| (t.clone(), restored)))
                .with_owned_active_tasks(tasks.iter().cloned()),
        )
        .with_client(ClientInput::new(pid(2), 1))
        .with_client(ClientInput::new(pid(3), 1))
        .with_stateful_tasks(tasks.iter().map(|t| (t.clone(), END)))
}

fn actives(out: &kstreams_assignor::engine::Assignment, n: u128) -> usize {
    out.client(&pid(n)).unwrap().active_tasks.len()
}

#[test]
fn a_cold_start_spreads_restoration_over_the_members() {
    // Client 1 restored 5 % of each task before the others joined: 95 % of eight tasks alone
    // take it longer than 100 % of three take each of the others.
    let out = OptimizedTaskAssignor.assign(&cold_start(END / 20)).unwrap();
    let counts = [actives(&out, 1), actives(&out, 2), actives(&out, 3)];
    assert_eq!(counts.iter().sum::<usize>(), 8);
    assert!(counts.iter().all(|&n| (2..=3).contains(&n)), "actives per client {counts:?}: restoration not spread");
    // Nothing waits for a warm-up: every task restores where it will run.
    assert!(out.clients.iter().all(|c| c.warmup_tasks.is_empty()));
    assert!(!out.followup.probing_rebalance_needed);
    // Client 1 keeps a full share of the tasks it has started restoring.
    assert_eq!(actives(&out, 1), 3);
}

#[test]
fn a_member_nearly_caught_up_keeps_its_tasks_while_the_others_warm_up() {
    // Client 1 has 1 % left of each task (10,000 records, above acceptable.recovery.lag): all
    // eight finish on it long before three full restorations do elsewhere.
    let out = OptimizedTaskAssignor.assign(&cold_start(END - END / 100)).unwrap();
    assert_eq!(actives(&out, 1), 8);
    let warmups: usize = out.clients.iter().map(|c| c.warmup_tasks.len()).sum();
    assert_eq!(warmups, 2, "max.warmup.replicas warm-ups toward the balanced target");
    assert!(out.followup.probing_rebalance_needed);
}
