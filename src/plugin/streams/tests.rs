use std::sync::Arc;
use std::thread;

use super::*;
use crate::engine::streams::{StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology};

fn request(members: &[(&str, &str)], partitions: u32) -> StreamsRequest {
    let topology = StreamsTopology::new([StreamsSubtopology::new("0", partitions, true), StreamsSubtopology::new("1", 2, false)]);
    let members = members.iter().map(|(m, p)| {
        StreamsMemberSpec::new(*m, *p)
            .with_rack_id("r1")
            .with_instance_id("i")
            .with_client_tag("zone", "a")
            .with_active_task("0", 0, 0)
            .with_standby_task("0", 1)
            .with_warmup_task("0", 2)
            .with_task_offset("0", 1, 90)
            .with_task_end_offset("0", 0, 100)
    });
    let configs = StreamsAssignmentConfigs::default()
        .with_num_standby_replicas(1)
        .with_num_warmup_replicas(2)
        .with_acceptable_recovery_lag(10)
        .with_rack_aware_assignment_tags(["zone"]);
    StreamsRequest::new(1_000, StreamsGroupSpec::new(members).with_configs(configs), topology)
}

#[test]
fn a_request_round_trips() {
    let r = request(&[("m1", "p1"), ("m2", "p2")], 4);
    assert_eq!(StreamsRequest::decode(&r.encode()).unwrap(), r);
}

#[test]
fn every_truncation_is_refused_with_an_offset_inside_the_request() {
    let bytes = request(&[("m1", "p1"), ("m2", "p2")], 4).encode();
    for len in 0..bytes.len() {
        match StreamsRequest::decode(&bytes[..len]) {
            Err(PluginError::Malformed { offset, .. }) => assert!(offset <= len, "{offset} > {len}"),
            other => panic!("truncated at {len}: {other:?}"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    let err = StreamsRequest::decode(&longer).unwrap_err().to_string();
    assert!(err.contains("`end`") && err.contains(&format!("at byte {}", bytes.len())), "{err}");
}

#[test]
fn bad_values_are_refused_with_their_field() {
    let mut bytes = request(&[("m1", "p1")], 4).encode();
    bytes[3] = 9;
    let err = StreamsRequest::decode(&bytes).unwrap_err().to_string();
    assert!(err.contains("version 9") && err.contains("at byte 0"), "{err}");
    let mut bytes = request(&[("m1", "p1")], 4).encode();
    bytes[12..16].copy_from_slice(&(-1i32).to_be_bytes());
    let err = StreamsRequest::decode(&bytes).unwrap_err().to_string();
    assert!(err.contains("`num_standby_replicas` at byte 12") && err.contains("negative"), "{err}");
    // A count far past the bytes left is refused before anything is allocated.
    let mut bytes = request(&[("m1", "p1")], 4).encode();
    let at = 4 + 8 + 4 + 4 + 8;
    bytes[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    let err = StreamsRequest::decode(&bytes).unwrap_err().to_string();
    assert!(err.contains("rack_aware_assignment_tags") && err.contains("exceeds"), "{err}");
}

#[test]
fn every_task_is_assigned_once_and_the_response_encodes_it() {
    let sessions = StreamsSessions::new();
    let r = request(&[("m1", "p1"), ("m2", "p2"), ("m3", "p2")], 6);
    let response = sessions.assign(&r).unwrap();
    let mut active: Vec<(String, i32)> = response
        .assignment
        .members
        .values()
        .flat_map(|m| m.active_tasks.iter().flat_map(|(s, p)| p.iter().map(move |&p| (s.clone(), p))))
        .collect();
    active.sort();
    let want: Vec<(String, i32)> = (0..6).map(|p| ("0".to_owned(), p)).chain((0..2).map(|p| ("1".to_owned(), p))).collect();
    assert_eq!(active, want);
    assert!(response.engine_nanos > 0);
    let bytes = response.encode();
    assert_eq!(&bytes[..8], &[0, 0, 0, 1, 0, 0, 0, 3]);
    assert_eq!(i64::from_be_bytes(bytes[bytes.len() - 8..].try_into().unwrap()), response.engine_nanos);
}

#[test]
fn a_group_without_members_is_an_error() {
    let sessions = StreamsSessions::new();
    let err = sessions.assign(&request(&[], 4)).unwrap_err();
    assert!(matches!(err, PluginError::Streams(_)), "{err}");
    assert_eq!(sessions.remembered(), 0);
}

#[test]
fn a_group_is_remembered_by_topology_and_shared_processes() {
    let sessions = StreamsSessions::new();
    sessions.assign(&request(&[("m1", "p1")], 4)).unwrap();
    sessions.assign(&request(&[("m1", "p1"), ("m2", "p2")], 4)).unwrap();
    assert_eq!(sessions.remembered(), 1, "the scaled-out group is the same group");
    sessions.assign(&request(&[("x1", "q1")], 4)).unwrap();
    assert_eq!(sessions.remembered(), 2, "no shared process: another group");
    sessions.assign(&request(&[("m1", "p1")], 5)).unwrap();
    assert_eq!(sessions.remembered(), 3, "another topology: another group");
    let refused = request(&[("m1", "p1"), ("m1", "p1")], 5);
    assert!(matches!(sessions.assign(&refused), Err(PluginError::Streams(_))));
    assert_eq!(sessions.remembered(), 3, "a refused call keeps the group's memory");
}

#[test]
fn threads_share_the_sessions() {
    let sessions = Arc::new(StreamsSessions::new());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let sessions = Arc::clone(&sessions);
            thread::spawn(move || {
                let (m, p) = (format!("m{t}"), format!("p{t}"));
                for _ in 0..20 {
                    sessions.assign(&request(&[(&m, &p)], 4)).unwrap();
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(sessions.remembered(), 4);
}

#[test]
fn every_single_byte_mutation_decodes_or_is_refused_and_assigns_or_fails_without_panic() {
    let bytes = request(&[("m1", "p1"), ("m2", "p2")], 4).encode();
    let mut decoded = 0;
    for i in 0..bytes.len() {
        for v in [0x00, 0x01, 0x7f, 0x80, 0xff] {
            let mut m = bytes.clone();
            m[i] = v;
            crate::fuzzing::streams_request(&m);
            decoded += usize::from(StreamsRequest::decode(&m).is_ok());
        }
    }
    assert!(decoded > bytes.len(), "{decoded} mutations decoded");
}

/// A call past its deadline stops at a checkpoint, forgets its group and leaves the other
/// threads' calls alone: two threads assign side by side, one with a deadline that has passed.
#[test]
fn a_call_past_its_deadline_is_interrupted_and_the_others_go_on() {
    let sessions = Arc::new(StreamsSessions::new());
    sessions.assign(&request(&[("m1", "p1")], 4)).unwrap();
    assert_eq!(sessions.remembered(), 1);
    let late = sessions.assign_until(&request(&[("m1", "p1")], 4), Some(std::time::Instant::now()));
    assert!(matches!(late, Err(PluginError::Interrupted { .. })), "{late:?}");
    assert_eq!(sessions.remembered(), 0, "a stopped call forgets its group's memory");
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let sessions = Arc::clone(&sessions);
            thread::spawn(move || {
                let (m, p) = (format!("m{t}"), format!("p{t}"));
                let deadline = (t % 2 == 0).then(std::time::Instant::now);
                (0..10).map(|_| sessions.assign_until(&request(&[(&m, &p)], 4), deadline).is_ok()).collect::<Vec<bool>>()
            })
        })
        .collect();
    let outcomes: Vec<Vec<bool>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outcomes[0].iter().chain(&outcomes[2]).all(|ok| !ok), "past their deadline: every call stopped");
    assert!(outcomes[1].iter().chain(&outcomes[3]).all(|&ok| ok), "no deadline: every call answered");
    assert_eq!(sessions.remembered(), 2);
}
