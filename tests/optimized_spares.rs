//! The optimized assignor's spare replicas: the copies a moving standby leaves behind stay
//! while its replacement restores, and the `max.warmup.replicas` no warm-up needs (and
//! `max.spare.replicas` more) keep copies of the tasks whose loss would restore the most.

mod engine_common;

use engine_common::after_catching_up;
use kstreams_assignor::engine::{
    AssignmentConfigs, AssignmentInput, Assignment, ClientInput, OptimizedTaskAssignor, TaskAssignor,
};
use kstreams_assignor::wire::{LATEST_OFFSET, ProcessId, TaskId};

fn pid(n: u128) -> ProcessId {
    ProcessId(uuid::Uuid::from_u128(n))
}

fn t(s: i32, p: i32) -> TaskId {
    TaskId::new(s, p)
}

/// Three one-thread clients running two stateful tasks each: sub-topology 0's changelogs hold
/// 1,000,000 records per task, sub-topology 1's 10,000,000; `c3` runs both large tasks.
fn input(configs: AssignmentConfigs) -> AssignmentInput {
    let running = [(1, [t(0, 0), t(0, 1)]), (2, [t(0, 2), t(0, 3)]), (3, [t(1, 0), t(1, 1)])];
    let mut input = AssignmentInput::new().with_configs(configs);
    for (n, tasks) in &running {
        input = input.with_client(
            ClientInput::new(pid(*n), 1)
                .with_task_offset_sums(tasks.iter().map(|t| (t.clone(), LATEST_OFFSET)))
                .with_owned_active_tasks(tasks.iter().cloned()),
        );
    }
    let sizes = [(t(0, 0), 1_000_000), (t(0, 1), 1_000_000), (t(0, 2), 1_000_000), (t(0, 3), 1_000_000)];
    input.with_stateful_tasks(sizes.into_iter().chain([(t(1, 0), 10_000_000), (t(1, 1), 10_000_000)]))
}

fn spares(out: &Assignment) -> Vec<(ProcessId, TaskId)> {
    out.clients.iter().flat_map(|c| c.spare_tasks.iter().map(move |t| (c.process_id, t.clone()))).collect()
}

#[test]
fn idle_warm_up_budget_covers_the_client_whose_crash_would_restore_most() {
    let input = input(AssignmentConfigs::default());
    let out = OptimizedTaskAssignor.assign(&input).unwrap();
    // Nothing moves, nothing to probe for; both replicas of the budget cover `c3`'s tasks, each
    // on another client.
    assert!(!out.followup.probing_rebalance_needed);
    assert!(out.followup.watch_list.is_empty());
    let got = spares(&out);
    let mut tasks: Vec<TaskId> = got.iter().map(|(_, t)| t.clone()).collect();
    tasks.sort();
    assert_eq!(tasks, [t(1, 0), t(1, 1)], "{out:?}");
    for (p, task) in &got {
        assert_ne!(*p, pid(3));
        let client = out.client(p).unwrap();
        assert!(client.standby_tasks.contains(task) && !client.warmup_tasks.contains(task));
    }
    // Fed back caught up, the spares stay where they are.
    let again = OptimizedTaskAssignor.assign(&after_catching_up(&input, &out)).unwrap();
    assert_eq!(spares(&again), got);
    assert_eq!(again.clients, out.clients);
}

#[test]
fn a_caught_up_spare_stays_unless_a_task_twice_its_size_has_none() {
    // One replica of budget; `c1` holds a caught-up copy of `c2`'s 0_2 (1,000,000 records), but
    // `c3`'s tasks are ten times larger: the spare goes to one of them.
    let configs = AssignmentConfigs::default().with_max_warmup_replicas(1);
    let mut input = input(configs);
    input.clients[0].task_offset_sums.insert(t(0, 2), 1_000_000);
    let out = OptimizedTaskAssignor.assign(&input).unwrap();
    assert_eq!(spares(&out).len(), 1);
    assert_eq!(spares(&out)[0].1.subtopology, 1, "{out:?}");
    // With tasks of equal size the kept copy wins.
    let mut equal = input.clone();
    equal.changelog_end_offset_sums.as_mut().unwrap().iter_mut().for_each(|(_, end)| *end = 1_000_000);
    let out = OptimizedTaskAssignor.assign(&equal).unwrap();
    assert_eq!(spares(&out), [(pid(1), t(0, 2))], "{out:?}");
}

#[test]
fn no_spares_where_standbys_cover_every_task_or_warm_ups_take_the_budget() {
    // One standby per task: every task has a copy, no spare.
    let out = OptimizedTaskAssignor.assign(&input(AssignmentConfigs::default().with_num_standby_replicas(1))).unwrap();
    assert!(spares(&out).is_empty(), "{out:?}");
    assert!(out.clients.iter().all(|c| c.standby_tasks.len() == 2));
    // The budget bounds them (Kafka requires `max.warmup.replicas` ≥ 1).
    let out = OptimizedTaskAssignor.assign(&input(AssignmentConfigs::default().with_max_warmup_replicas(1))).unwrap();
    assert_eq!(spares(&out).len(), 1);
    assert_eq!(out.clients.iter().map(|c| c.standby_tasks.len()).sum::<usize>(), 1);
    // A new client: the warm-ups its share needs come first, the rest of the budget is spare.
    let mut joined = input(AssignmentConfigs::default().with_max_warmup_replicas(3));
    joined.clients.push(ClientInput::new(pid(4), 1));
    let out = OptimizedTaskAssignor.assign(&joined).unwrap();
    let warmups = out.followup.watch_list.len();
    assert!(warmups >= 1, "{out:?}");
    assert_eq!(warmups + spares(&out).len(), 3, "{out:?}");
    assert!(out.followup.probing_rebalance_needed);
}

#[test]
fn max_spare_replicas_adds_spares_but_no_warm_ups() {
    // With `max.spare.replicas` = 2 on top of a budget of 1: three spares, the largest tasks
    // first (`c3`'s two, then one of the others), none on its active's client.
    let configs = AssignmentConfigs::default().with_max_warmup_replicas(1).with_max_spare_replicas(2);
    let out = OptimizedTaskAssignor.assign(&input(configs.clone())).unwrap();
    let got = spares(&out);
    assert_eq!(got.len(), 3, "{out:?}");
    let large = got.iter().filter(|(_, t)| t.subtopology == 1).count();
    assert_eq!(large, 2, "{out:?}");
    for (p, task) in &got {
        assert!(!out.client(p).unwrap().active_tasks.contains(task));
    }
    // A new client still gets at most `max.warmup.replicas` warm-ups at once; the spares fill
    // the rest.
    let mut joined = input(configs);
    joined.clients.push(ClientInput::new(pid(4), 1));
    let out = OptimizedTaskAssignor.assign(&joined).unwrap();
    assert_eq!(out.followup.watch_list.len(), 1, "{out:?}");
    assert_eq!(spares(&out).len(), 2, "{out:?}");
}

#[test]
fn a_standby_that_moves_leaves_its_fresher_copy_as_a_spare_until_the_new_one_catches_up() {
    // One caught-up standby per task: sub-topology 0's on `c3`, sub-topology 1's on `c1`. `c4`
    // (three threads) joins with nothing, so standbys move to it and start from scratch. Kafka's
    // assignor would drop the old copies at once; here each stays as a spare beside the standby
    // that replaces it (unless its client now runs the task).
    let configs = AssignmentConfigs::default().with_num_standby_replicas(1).with_max_warmup_replicas(1);
    let mut before = input(configs);
    let ends = before.changelog_end_offset_sums.clone().unwrap();
    let standby_on = |task: &TaskId| if task.subtopology == 1 { 1 } else { 3 };
    for c in &mut before.clients {
        for task in ends.keys().filter(|task| standby_on(task) == (c.process_id.0.as_u128() as usize)) {
            c.task_offset_sums.insert(task.clone(), ends[task]);
        }
    }
    before.clients.push(ClientInput::new(pid(4), 3));
    let out = OptimizedTaskAssignor.assign(&before).unwrap();
    let c4 = out.client(&pid(4)).unwrap();
    let moved: Vec<&TaskId> = c4.standby_tasks.iter().filter(|t| !c4.warmup_tasks.contains(t) && !c4.spare_tasks.contains(t)).collect();
    assert!(!moved.is_empty(), "{out:?}");
    for task in &moved {
        let old = pid(standby_on(task) as u128);
        if out.client(&old).unwrap().active_tasks.contains(task) {
            continue;
        }
        assert!(out.client(&old).unwrap().spare_tasks.contains(task), "{task}: {out:?}");
    }
    // Once the new standbys have caught up, the kept copies go: one standby per task, and spares
    // only from the idle budget (one replica, none while a warm-up takes it).
    let mut next = out.clone();
    let mut input = before;
    for _ in 0..5 {
        input = after_catching_up(&input, &next);
        next = OptimizedTaskAssignor.assign(&input).unwrap();
    }
    assert!(!next.followup.probing_rebalance_needed, "{next:?}");
    assert!(spares(&next).len() <= 1, "{next:?}");
    for task in ends.keys() {
        let copies = next.clients.iter().filter(|c| c.standby_tasks.contains(task) && !c.spare_tasks.contains(task)).count();
        assert_eq!(copies, 1, "{task}: {next:?}");
    }
}
