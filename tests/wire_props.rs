//! Properties: for every version, a value built in code encodes, and decodes back to itself;
//! encoding is deterministic; every strict prefix of an encoding is refused.

use std::collections::{BTreeMap, BTreeSet};

use kstreams_assignor::wire::{
    AssignmentEnvelope, AssignmentInfo, AssignorError, HostInfo, NextRebalance, ProcessId, SharedHostMaps, SubscriptionEnvelope,
    SubscriptionInfo, TaskId, TopicPartition,
};
use proptest::prelude::*;
use uuid::Uuid;

fn task(named: bool) -> impl Strategy<Value = TaskId> {
    let name = if named { prop_oneof![Just(None), Just(Some("alpha")), Just(Some("βeta"))].boxed() } else { Just(None).boxed() };
    (0..6i32, 0..64i32, name).prop_map(|(s, p, n)| match n {
        Some(n) => TaskId::named(n, s, p),
        None => TaskId::new(s, p),
    })
}

fn offset_sum() -> impl Strategy<Value = i64> {
    prop_oneof![Just(-2i64), Just(-3i64), 0..20_000i64, any::<i64>()]
}

fn subscription() -> impl Strategy<Value = SubscriptionInfo> {
    (1..=11i32).prop_flat_map(|v| {
        (
            Just(v),
            any::<u128>(),
            if v >= 2 { ".{0,20}".boxed() } else { Just(String::new()).boxed() },
            proptest::collection::vec((task(v >= 10), offset_sum()), 0..40),
            if v >= 8 { any::<i8>().boxed() } else { Just(0i8).boxed() },
            if v >= 9 { (0..6i32).boxed() } else { Just(0).boxed() },
            if v >= 11 { proptest::collection::btree_map("[a-z]{1,5}", ".{0,8}", 0..4).boxed() } else { Just(BTreeMap::new()).boxed() },
        )
    })
    .prop_map(|(v, pid, ep, sums, unique, err, tags)| {
        SubscriptionInfo::new(v, ProcessId(Uuid::from_u128(pid)))
            .with_user_end_point(&ep)
            .with_task_offset_sums(sums)
            .with_unique_field(unique)
            .with_error_code(AssignorError::from_code(err))
            .with_client_tags(tags)
    })
}

fn partitions() -> impl Strategy<Value = BTreeSet<TopicPartition>> {
    proptest::collection::btree_set(("[a-z]{1,3}|\\PC{1,4}", 0..16i32).prop_map(|(t, p)| TopicPartition::new(t, p)), 0..5)
}

fn host_map() -> impl Strategy<Value = BTreeMap<HostInfo, BTreeSet<TopicPartition>>> {
    proptest::collection::btree_map(("\\PC{0,6}", -1..70_000i32).prop_map(|(h, p)| HostInfo::new(h, p)), partitions(), 0..4)
}

fn assignment() -> impl Strategy<Value = AssignmentInfo> {
    (1..=11i32).prop_flat_map(|v| {
        (
            Just(v),
            proptest::collection::vec(task(v >= 10), 0..20),
            proptest::collection::btree_map(task(v >= 10), partitions(), 0..6),
            if v >= 2 { host_map().boxed() } else { Just(BTreeMap::new()).boxed() },
            if v >= 6 { host_map().boxed() } else { Just(BTreeMap::new()).boxed() },
            if v >= 4 { (0..5i32).boxed() } else { Just(0).boxed() },
            if v >= 7 { any::<i64>().boxed() } else { Just(i64::MAX).boxed() },
        )
    })
    .prop_map(|(v, active, standby, hosts, standby_hosts, err, next)| {
        let mut a = AssignmentInfo::new(v)
            .with_active_tasks(active)
            .with_standby_tasks(standby)
            .with_partitions_by_host(hosts)
            .with_error_code(AssignorError::from_code(err))
            .with_next_rebalance(NextRebalance(next));
        if !standby_hosts.is_empty() {
            a = a.with_standby_partitions_by_host(standby_hosts);
        }
        a
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn can_round_trip_subscriptions_at_every_version(info in subscription()) {
        let bytes = info.encode().unwrap();
        prop_assert_eq!(info.encode().unwrap(), bytes.clone());
        prop_assert_eq!(SubscriptionInfo::decode(&bytes).unwrap(), info);
        for cut in 0..bytes.len() {
            prop_assert!(SubscriptionInfo::decode(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn can_round_trip_assignments_at_every_version(info in assignment()) {
        let bytes = info.encode().unwrap();
        prop_assert_eq!(info.encode().unwrap(), bytes.clone());
        let back = AssignmentInfo::decode(&bytes).unwrap();
        prop_assert_eq!(back.partitions_by_host(), info.partitions_by_host());
        prop_assert_eq!(back.encode().unwrap(), bytes.clone());
        prop_assert_eq!(back, info);
        for cut in 0..bytes.len() {
            prop_assert!(AssignmentInfo::decode(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn shared_host_maps_encode_as_each_message_alone(a in assignment(), b in assignment(), to in 1..=11i32) {
        // b shares a's host maps, at its own version and at another; one cache serves all four
        // encodes, as it serves a leader's members.
        let mut b = b;
        b.host_maps = a.host_maps.clone();
        let other = b.clone().with_version(to);
        let mut shared = SharedHostMaps::default();
        for info in [&a, &b, &other, &a] {
            match info.encode() {
                Ok(bytes) => prop_assert_eq!(info.encode_shared(&mut shared).unwrap(), bytes),
                Err(e) => prop_assert_eq!(info.encode_shared(&mut shared).unwrap_err(), e),
            }
        }
    }

    #[test]
    fn an_envelope_written_around_its_info_is_the_envelope_of_its_encoding(a in assignment(), b in assignment(), partitions in 0..40i32) {
        // The leader writes each member's AssignmentInfo straight into its envelope; the bytes
        // must be those of encoding the info and then the envelope, errors included.
        let mut b = b;
        b.host_maps = a.host_maps.clone();
        let partitions: Vec<TopicPartition> = (0..partitions).map(|p| TopicPartition::new(format!("t{}", p % 3), p)).collect();
        let mut shared = SharedHostMaps::default();
        for info in [&a, &b, &a] {
            let separately = info.encode().map(|bytes| AssignmentEnvelope::new(&partitions, Some(bytes)).encode().unwrap());
            prop_assert_eq!(AssignmentEnvelope::encode_with_info(&partitions, info, &mut shared), separately);
        }
    }

    #[test]
    fn converting_versions_never_panics_and_refuses_rather_than_drops(info in subscription(), to in 1..=11i32) {
        let converted = info.clone().with_version(to);
        if let Ok(bytes) = converted.encode() {
            let back = SubscriptionInfo::decode(&bytes).unwrap();
            // Whatever the target version carries survives: who ran what as active, and which
            // tasks have state.
            prop_assert_eq!(back.prev_tasks(), info.prev_tasks());
            prop_assert_eq!(back.standby_tasks(), info.standby_tasks());
        }
    }

    #[test]
    fn can_round_trip_envelopes(
        topics in proptest::collection::vec("[a-z.-]{1,8}", 0..4),
        user_data in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..32)),
        owned in proptest::collection::vec(("[a-z]{1,3}", 0..8i32).prop_map(|(t, p)| TopicPartition::new(t, p)), 0..6),
        generation in -1..100i32,
        rack in proptest::option::of("[a-z0-9]{0,4}"),
    ) {
        let mut sub = SubscriptionEnvelope::new(topics, user_data.clone()).with_owned_partitions(&owned).with_generation_id(generation);
        if let Some(r) = &rack {
            sub = sub.with_rack_id(r);
        }
        let bytes = sub.encode().unwrap();
        prop_assert_eq!(SubscriptionEnvelope::decode(&bytes).unwrap(), sub);
        let asg = AssignmentEnvelope::new(&owned, user_data);
        let bytes = asg.encode().unwrap();
        prop_assert_eq!(AssignmentEnvelope::decode(&bytes).unwrap(), asg);
    }
}
