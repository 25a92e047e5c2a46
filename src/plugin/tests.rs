use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::rng::Rng;
use super::testdata::kafka_lag;
use crate::engine::ClientInput;
use crate::wire::{LATEST_OFFSET, TaskId, UNKNOWN_OFFSET_SUM};

/// A group as Kafka Streams knows it before it computes lags: true end-offset sums, each
/// client's reported offset sums and the tasks whose partitions it owned.
fn world(rng: &mut Rng) -> AssignmentInput {
    let mut ends = BTreeMap::new();
    let mut stateless = Vec::new();
    for s in 0..rng.range(1, 3) as i32 {
        let stateful = rng.chance(0.7);
        for p in 0..rng.range(1, 8) as i32 {
            if stateful {
                ends.insert(TaskId::new(s, p), rng.range(0, 5_000));
            } else {
                stateless.push(TaskId::new(s, p));
            }
        }
    }
    let mut input = AssignmentInput::new().with_stateful_tasks(ends.clone()).with_stateless_tasks(stateless.clone());
    for _ in 0..rng.range(1, 6) {
        let mut sums = BTreeMap::new();
        let mut owned = BTreeSet::new();
        for (t, &end) in &ends {
            match rng.range(0, 9) {
                0 | 1 => {
                    sums.insert(t.clone(), LATEST_OFFSET);
                    owned.insert(t.clone());
                }
                2 => drop(sums.insert(t.clone(), UNKNOWN_OFFSET_SUM)),
                3 | 4 => drop(sums.insert(t.clone(), rng.range(0, end + 10))),
                _ => {}
            }
        }
        for t in &stateless {
            if rng.chance(0.3) {
                owned.insert(t.clone());
            }
        }
        let client = ClientInput::new(rng.process_id(), rng.range(1, 4) as u32).with_task_offset_sums(sums).with_owned_active_tasks(owned);
        input = input.with_client(client);
    }
    input
}

/// What the JVM host sends for a world, with the support dump asked for.
fn request_of(world: &AssignmentInput, now_ms: i64) -> Request {
    Request { dump: true, ..testdata::request_for(world, now_ms) }
}

#[test]
fn the_rebuilt_input_gives_every_client_the_lag_kafka_computed() {
    let mut rng = Rng::new(7);
    let mut checked = 0;
    for _ in 0..500 {
        let world = world(&mut rng);
        let request = request_of(&world, 1_000);
        let input = input::engine_input(&request, None).unwrap();
        let ends = input.changelog_end_offset_sums.as_ref().unwrap();
        for (c, original) in input.clients.iter().zip(&world.clients) {
            for (task, &true_end) in world.changelog_end_offset_sums.as_ref().unwrap() {
                let want = kafka_lag(original.task_offset_sums.get(task).copied(), true_end);
                assert_eq!(kafka_lag(c.task_offset_sums.get(task).copied(), ends[task]), want, "{task} on {}", c.process_id);
                checked += 1;
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
}

#[test]
fn requests_round_trip_and_every_truncation_is_a_typed_error() {
    let mut rng = Rng::new(3);
    for _ in 0..50 {
        let mut request = request_of(&world(&mut rng), 5);
        request.configs = vec![("num.standby.replicas".into(), "1".into())];
        request.tasks[0] = request.tasks[0].clone().with_partition(true, false, Some(vec!["r1".into()])).with_partition(false, true, None);
        request.clients[0].rack_id = Some("r1".into());
        request.clients[0].client_tags = vec![("zone".into(), "z1".into())];
        let bytes = request.encode();
        assert_eq!(Request::decode(&bytes).unwrap(), request);
        for cut in 0..bytes.len() {
            assert!(matches!(Request::decode(&bytes[..cut]), Err(PluginError::Malformed { .. })), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let err = Request::decode(&longer).unwrap_err();
        assert!(matches!(err, PluginError::Malformed { field: "end", offset, .. } if offset == bytes.len()), "{err}");
    }
}

#[test]
fn a_count_larger_than_the_input_is_refused_before_allocating() {
    let mut bytes = Request::default().encode();
    // The task count sits after version, the empty application id, nowMs, flags and 0 configs.
    let at = 4 + 4 + 8 + 1 + 4;
    bytes[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    let err = Request::decode(&bytes).unwrap_err();
    assert!(matches!(err, PluginError::Malformed { field: "tasks", offset, .. } if offset == at), "{err}");
    assert!(err.to_string().contains("exceeds the"), "{err}");
    bytes[..4].copy_from_slice(&2i32.to_be_bytes());
    assert!(matches!(Request::decode(&bytes), Err(PluginError::Version { version: 2 })));
}

#[test]
fn the_dump_replays_to_the_same_assignment() {
    let mut rng = Rng::new(11);
    let mut session = Session::new();
    for i in 0..200 {
        let world = world(&mut rng);
        let response = session.assign(&request_of(&world, 1_000 + i)).unwrap();
        let input: AssignmentInput = serde_json::from_str(response.dump.as_deref().unwrap()).unwrap();
        let replay = engine::assign(AssignorKind::Optimized, &input).unwrap();
        let tasks: Vec<_> = replay.clients.iter().map(|c| (c.process_id, c.active_tasks.clone(), c.standby_tasks.clone())).collect();
        let got: Vec<_> = response.clients.iter().map(|c| (c.process_id, c.active.clone(), c.standby.clone())).collect();
        assert_eq!(got, tasks);
        assert_eq!(response.followup.is_some(), replay.followup.probing_rebalance_needed);
    }
}

#[test]
fn memory_is_used_by_the_next_rebalance_of_the_same_application_only() {
    let mut rng = Rng::new(5);
    let world = world(&mut rng);
    let led_once = || {
        let mut session = Session::new();
        let first = session.assign(&request_of(&world, 1_000_000)).unwrap();
        assert!(first.summary.contains("restore rates unknown (no earlier rebalance led here)"), "{}", first.summary);
        session
    };

    let mut session = led_once();
    let later = session.prepare(&request_of(&world, 1_060_000)).unwrap();
    let previous = later.input.previous_rebalance.as_ref().expect("the snapshot is used");
    assert_eq!(previous.elapsed_ms, 60_000);
    assert_eq!(previous.task_offset_sums.len(), world.clients.len());
    // Taken, not copied: a rebalance that fails after this (no `finish`) makes the next one fresh.
    assert!(session.prepare(&request_of(&world, 1_120_000)).unwrap().input.previous_rebalance.is_none());

    let mut other = request_of(&world, 1_060_000);
    other.application_id = "another-app".into();
    assert!(led_once().prepare(&other).unwrap().input.previous_rebalance.is_none());
    // Three probing intervals (default 10 minutes) later, or with the clock gone back: fresh.
    assert!(led_once().prepare(&request_of(&world, 1_000_000 + 1_800_001)).unwrap().input.previous_rebalance.is_none());
    assert!(led_once().prepare(&request_of(&world, 999_000)).unwrap().input.previous_rebalance.is_none());
    // A process that never led (a new leader) starts fresh.
    assert!(Session::new().prepare(&request_of(&world, 1_060_000)).unwrap().input.previous_rebalance.is_none());
    // Within the window, with a client left, the same application's next rebalance uses it.
    assert!(led_once().prepare(&request_of(&world, 1_000_000 + 1_800_000)).unwrap().input.previous_rebalance.is_some());
}

#[test]
fn the_follow_up_goes_to_the_client_of_the_first_warm_up() {
    // One caught-up client with every stateful task, one new client: warm-ups and a probing rebalance.
    let tasks: Vec<TaskId> = (0..4).map(|p| TaskId::new(0, p)).collect();
    let old = ProcessId(uuid::Uuid::from_u128(1));
    let new = ProcessId(uuid::Uuid::from_u128(2));
    let mut a = ClientRecord::new(old, 1);
    a.previous_active = tasks.clone();
    a.lags = Some(tasks.iter().map(|t| (t.clone(), LATEST_OFFSET)).collect());
    let b = ClientRecord::new(new, 1);
    let request = Request {
        application_id: "app".into(),
        now_ms: 50_000,
        tasks: tasks.iter().map(|t| TaskRecord::new(t.clone(), true).with_unreported_lag(100_000)).collect(),
        clients: vec![a, b],
        ..Request::default()
    };
    let response = Session::new().assign(&request).unwrap();
    let (client, deadline) = response.followup.expect("a probing rebalance");
    assert_eq!(client, new);
    assert!(deadline > 50_000, "{deadline}");
    assert!(response.summary.contains("warm-ups") && response.summary.contains("probing rebalance in"), "{}", response.summary);
    assert!(response.dump.is_none());
}

#[test]
fn bad_values_are_refused_with_plain_messages() {
    let mut rng = Rng::new(9);
    let world = world(&mut rng);
    let mut request = request_of(&world, 1);
    request.configs = vec![("max.warmup.replicas".into(), "0".into())];
    let err = Session::new().assign(&request).unwrap_err();
    assert!(err.to_string().contains("Value must be at least 1"), "{err}");
    let mut request = request_of(&world, 1);
    request.clients[0].threads = -1;
    let err = Session::new().assign(&request).unwrap_err();
    assert!(err.to_string().contains("-1 stream threads"), "{err}");
    let mut request = request_of(&world, 1);
    request.tasks.push(request.tasks[0].clone());
    assert!(matches!(Session::new().assign(&request), Err(PluginError::Input(InputError::DuplicateTask(_)))));
    // KIP-924 has no named topologies (the host refuses them too): a task of one is not taken for
    // the unnamed task with the same numbers.
    let mut request = request_of(&world, 1);
    let task = request.tasks[0].id.clone();
    request.tasks[0].id = TaskId::named("orders", task.subtopology, task.partition);
    let err = Session::new().assign(&request).unwrap_err();
    assert!(err.to_string().contains("named topology 'orders'; named topologies are not supported"), "{err}");
}

#[test]
fn without_lags_the_fallback_assignor_keeps_previous_tasks() {
    let mut rng = Rng::new(13);
    let world = world(&mut rng);
    let mut request = request_of(&world, 1);
    request.clients.iter_mut().for_each(|c| c.lags = None);
    let prepared = Session::new().prepare(&request).unwrap();
    assert!(prepared.input.changelog_end_offset_sums.is_none());
    let assignment = prepared.run().unwrap();
    assert_eq!(assignment.assignor, "FallbackPriorTaskAssignor");
}
