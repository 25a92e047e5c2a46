use super::*;
use crate::member::config::MemberConfig;
use crate::member::streams::topology::from_file;

const WINDOWED: &str = include_str!("../../../fixtures/leader/windowed.describe.txt");
const JOIN: &str = include_str!("../../../fixtures/leader/stream-table-join.describe.txt");

/// What a Java member of the `describe()` text declares: every repartition count 0.
fn declared(text: &str) -> HeartbeatTopology {
    from_file(&Topology::from_describe(text, "app").unwrap(), &MemberConfig::new("localhost:9092", "app"))
}

fn counts(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
    pairs.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect()
}

/// The declared count of each repartition topic.
fn declared_counts(t: &HeartbeatTopology) -> BTreeMap<String, i32> {
    t.subtopologies.iter().flat_map(|s| &s.repartition_source_topics).map(|r| (r.name.clone(), r.partitions)).collect()
}

#[test]
fn a_count_other_than_the_derived_one_was_fixed() {
    // `repartition(Repartitioned.numberOfPartitions(3))` of a 6-partition topic: the coordinator
    // has 3, the source topic gives 6.
    let mut t = declared(WINDOWED);
    let said = infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 3)]), &Ok(counts(&[("events", 6)])), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 3)]));
    assert!(said.contains("fixed, told from the coordinator's: app-rekeyed-repartition (3, where the source topics give 6)"), "{said}");
}

#[test]
fn a_count_equal_to_the_derived_one_is_declared_zero() {
    let mut t = declared(WINDOWED);
    let said = infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 6)]), &Ok(counts(&[("events", 6)])), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 0)]));
    assert!(said.contains("fixed, told from the coordinator's: none; declared 0 as derived"), "{said}");
    assert!(said.contains("app-rekeyed-repartition (6)"), "{said}");
}

#[test]
fn a_count_the_copartition_group_sets_is_derived() {
    // The re-keyed clicks join the users table: the repartition topic takes the table's 3
    // partitions, not the 6 of the clicks it is written from.
    let file = Topology::from_describe(JOIN, "app").unwrap();
    let mut t = from_file(&file, &MemberConfig::new("localhost:9092", "app"));
    let topic = "app-KSTREAM-KEY-SELECT-0000000005-repartition";
    infer_fixed_counts(&mut t, &counts(&[(topic, 3)]), &Ok(counts(&[("users", 3), ("clicks", 6)])), "app");
    assert_eq!(declared_counts(&t), counts(&[(topic, 0)]));
}

#[test]
fn a_fixed_count_upstream_is_not_taken_for_a_fixed_count_downstream() {
    // `a` (4 partitions) → r1 (fixed to 2) → r2 (derived from r1: 2).
    let text = "Topologies:\n   Sub-topology: 0\n    Source: s0 (topics: [a])\n      --> k0\n    Sink: k0 (topic: r1-repartition)\n      <-- s0\n\n  Sub-topology: 1\n    Source: s1 (topics: [r1-repartition])\n      --> k1\n    Sink: k1 (topic: r2-repartition)\n      <-- s1\n\n  Sub-topology: 2\n    Source: s2 (topics: [r2-repartition])\n      --> none\n\n";
    let mut t = declared(text);
    let described = counts(&[("app-r1-repartition", 2), ("app-r2-repartition", 2)]);
    let said = infer_fixed_counts(&mut t, &described, &Ok(counts(&[("a", 4)])), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-r1-repartition", 2), ("app-r2-repartition", 0)]), "{said}");
}

#[test]
fn without_the_source_counts_every_count_is_declared_zero_with_a_note() {
    let mut t = declared(WINDOWED);
    let said = infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 3)]), &Err("the broker is away".to_owned()), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 0)]));
    assert!(said.starts_with("repartition partition counts not told apart (the source topics' partition counts are unknown: the broker is away)"), "{said}");
    // A missing source topic: no derivation either.
    let said = infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 3)]), &Ok(BTreeMap::new()), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 0)]));
    assert!(said.contains("the counts cannot be derived: missing source topics `events`"), "{said}");
}

#[test]
fn a_count_the_file_fixes_stays_and_an_unconfigured_one_is_left_alone() {
    let mut t = declared(WINDOWED);
    t.subtopologies.iter_mut().flat_map(|s| s.repartition_source_topics.iter_mut()).for_each(|r| r.partitions = 5);
    infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 5)]), &Ok(counts(&[("events", 6)])), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 5)]));
    // The coordinator has configured nothing yet (0): nothing to tell.
    let mut t = declared(WINDOWED);
    infer_fixed_counts(&mut t, &counts(&[("app-rekeyed-repartition", 0)]), &Ok(counts(&[("events", 6)])), "app");
    assert_eq!(declared_counts(&t), counts(&[("app-rekeyed-repartition", 0)]));
}
