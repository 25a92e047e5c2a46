//! An unknown offset is not a lag: the sentinels a streams-protocol member reports instead of an
//! offset (Long.MAX_VALUE as the end offset sum while it does not know a changelog's end, or as
//! an overflowed offset sum) through every path that turns offsets into a lag: `describe`'s
//! lags, `watch`'s warm-up progress and the broker assignor `optimized`.

use std::collections::BTreeMap;

use kstreams_assignor::client::streams::{Member, TaskOffset};
use kstreams_assignor::engine::AssignmentConfigs;
use kstreams_assignor::engine::streams::testdata::{CaseSize, random_case};
use kstreams_assignor::engine::streams::{StreamsMemory, assign_optimized};
use kstreams_assignor::views::streams::describe::{ReportedLag, UnknownLag, member_lags};
use kstreams_assignor::views::watch::{Observation, observe, warmup};
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000_000;

fn offset(partition: i32, offset: i64) -> TaskOffset {
    let mut t = TaskOffset::default();
    t.subtopology_id = "0".into();
    t.partition = partition;
    t.offset = offset;
    t
}

#[test]
fn each_sentinel_is_an_unknown_lag_with_its_reason() {
    let mut m = Member::default();
    m.task_offsets = vec![offset(0, 5), offset(1, i64::MAX), offset(2, -2), offset(3, 7)];
    m.task_end_offsets = vec![offset(0, i64::MAX), offset(1, 100), offset(2, 100), offset(3, 10)];
    let lags = member_lags(&m);
    assert_eq!(lags["0_0"], ReportedLag::Unknown(UnknownLag::EndOffsetUnknown));
    assert_eq!(lags["0_1"], ReportedLag::Unknown(UnknownLag::OffsetSumOverflowed));
    assert_eq!(lags["0_2"], ReportedLag::Unknown(UnknownLag::Negative));
    assert_eq!(lags["0_3"], ReportedLag::Records(3));
    assert_eq!(lags["0_0"].to_string(), "unknown");
    assert!(UnknownLag::EndOffsetUnknown.reason().contains("Long.MAX_VALUE"));
}

fn any_offset() -> impl Strategy<Value = i64> {
    prop_oneof![0..1_000_000i64, Just(i64::MAX), Just(-1i64), Just(-2i64), Just(-3i64), any::<i64>()]
}

proptest! {
    #[test]
    fn no_lag_shown_exceeds_the_end_offset_it_came_from(pairs in proptest::collection::vec((any_offset(), any_offset()), 1..20)) {
        let mut m = Member::default();
        for (p, &(o, e)) in pairs.iter().enumerate() {
            m.task_offsets.push(offset(p as i32, o));
            m.task_end_offsets.push(offset(p as i32, e));
        }
        for (p, &(o, e)) in pairs.iter().enumerate() {
            match member_lags(&m)[&format!("0_{p}")] {
                ReportedLag::Records(r) => {
                    prop_assert!(0 <= r && r <= e, "lag {} from offset {} and end {}", r, o, e);
                    prop_assert!(e != i64::MAX && o != i64::MAX);
                }
                ReportedLag::Unknown(_) => prop_assert!(e == i64::MAX || o == i64::MAX || o < 0 || e < 0),
            }
        }
    }
}

/// A streams look of one process restoring `0_0` as a warm-up.
fn look(at_ms: i64, offset_sum: i64, end: i64) -> Observation {
    let mut o = observe::streams_look(at_ms, 5, &[("m-1", "p-1", &[], &[], &["0_0"])]);
    o.members[0].offset_sums.insert("0_0".into(), offset_sum);
    o.members[0].end_offset_sums.insert("0_0".into(), end);
    o
}

#[test]
fn a_warmup_with_an_overflowed_offset_sum_has_no_lag_and_no_restore_rate() {
    let configs = AssignmentConfigs::default();
    let base = look(NOW, 1_000, 50_000);
    let now = look(NOW + 10_000, i64::MAX, 60_000);
    let p = &warmup::progress(&now, Some(&base), &configs)[0];
    assert_eq!((p.lag, p.restore_rate, p.eta_ms, p.caught_up), (None, None, None, false), "{p:?}");
}

/// The same group whether or not members also report Long.MAX_VALUE end offset sums for tasks
/// they report no end for: an end the member does not know is no end.
#[test]
fn optimized_decides_alike_without_the_unknown_end_offsets() {
    let mut changed_input = 0;
    for i in 0..300 {
        let case = random_case(38, i, CaseSize::Small);
        let mut with_unknown = case.spec.clone();
        for (m, member) in with_unknown.members.iter_mut().enumerate() {
            for s in &case.topology.subtopologies {
                for p in 0..s.partitions as i32 {
                    let known = member.task_end_offsets.get(&s.id).is_some_and(|e| e.contains_key(&p));
                    if !known && (m + p as usize) % 2 == 0 {
                        member.task_end_offsets.entry(s.id.clone()).or_insert_with(BTreeMap::new).insert(p, i64::MAX);
                        changed_input += 1;
                    }
                }
            }
        }
        let plain = assign_optimized(&case.spec, &case.topology, &mut StreamsMemory::new(), NOW);
        let unknown = assign_optimized(&with_unknown, &case.topology, &mut StreamsMemory::new(), NOW);
        assert_eq!(plain.ok(), unknown.ok(), "{}", case.id);
    }
    assert!(changed_input > 1_000, "{changed_input} unknown end offsets added");
}
