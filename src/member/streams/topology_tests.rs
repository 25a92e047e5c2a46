use super::*;

const JOIN: &str = include_str!("../../../fixtures/leader/stream-table-join.describe.txt");
const WORD_COUNT: &str = include_str!("../../../fixtures/leader/word-count.describe.txt");
const NAMED_JOIN: &str = include_str!("../../../fixtures/leader/named-stream-table-join.describe.txt");
const WINDOWED: &str = include_str!("../../../fixtures/leader/windowed.describe.txt");

fn config() -> MemberConfig {
    MemberConfig::new("localhost:9092", "app")
}

/// Counts that tell nothing apart: the member declares 0 for every count the file does not fix.
fn unknown() -> Counts {
    Counts { described: BTreeMap::new(), sources: Err("not asked".to_owned()) }
}

fn file(text: &str) -> Topology {
    Topology::from_describe(text, "app").expect("a valid topology")
}

/// What the coordinator describes of a group whose first member declared `declared`: the same
/// sub-topologies and topics, with no co-partition group, the partition counts it derived, and
/// every list in an order of its own (`described` then brings counts and configs back to a
/// member's form).
fn as_described(declared: &HeartbeatTopology) -> HeartbeatTopology {
    let mut t = declared.clone();
    for s in &mut t.subtopologies {
        s.copartition_groups.clear();
        s.source_topics.reverse();
        s.repartition_source_topics.reverse();
        for r in &mut s.repartition_source_topics {
            r.partitions = 0;
        }
    }
    t
}

#[test]
fn a_join_group_with_its_file_declares_exactly_what_kafka_streams_declares() {
    let file = file(JOIN);
    let java = from_file(&file, &config());
    assert!(java.subtopologies.iter().any(|s| !s.copartition_groups.is_empty()), "the fixture has a join");
    let declared = declare(Some(as_described(&java)), Some(&file), &unknown(), &config()).unwrap();
    // The group's lists sorted again, as Java sent them, the co-partition groups pointing into them.
    assert_eq!(declared.topology, java);
    assert!(declared.origin.contains("co-partition groups sub-topology 0: users + app-KSTREAM-KEY-SELECT-0000000005-repartition"), "{}", declared.origin);
}

#[test]
fn a_renamed_join_of_two_topics_declares_what_kafka_streams_declares() {
    // `Joined.as("enrich")`: the group's two source topics, described in another order, are
    // declared sorted, with the co-partition group the reader finds from the shared store.
    let file = file(NAMED_JOIN);
    let java = from_file(&file, &config());
    let sub = &java.subtopologies[0];
    assert_eq!(sub.source_topics, ["customers", "orders"]);
    assert_eq!(sub.copartition_groups.len(), 1, "the reader finds the renamed join");
    // As Java lists them: in the order it iterates the `HashSet` {orders, customers}.
    assert_eq!(sub.copartition_groups[0].source_topics, [1, 0]);
    let declared = declare(Some(as_described(&java)), Some(&file), &unknown(), &config()).unwrap();
    assert_eq!(declared.topology, java);
}

#[test]
fn a_fixed_count_the_file_does_not_show_is_told_from_the_coordinators() {
    // The describe() text of `Repartitioned.withNumberOfPartitions(3)` of a 6-partition topic:
    // the coordinator has 3, the source topic gives 6.
    let file = file(WINDOWED);
    let java = from_file(&file, &config());
    let counts = Counts {
        described: [("app-rekeyed-repartition".to_owned(), 3)].into_iter().collect(),
        sources: Ok([("events".to_owned(), 6)].into_iter().collect()),
    };
    for given in [Some(&file), None] {
        let declared = declare(Some(as_described(&java)), given, &counts, &config()).unwrap();
        let sub1 = declared.topology.subtopologies.iter().find(|s| s.subtopology_id == "1").unwrap();
        assert_eq!(sub1.repartition_source_topics[0].partitions, 3);
        assert!(declared.origin.contains("app-rekeyed-repartition (3, where the source topics give 6)"), "{}", declared.origin);
    }
}

#[test]
fn a_fixed_repartition_count_comes_from_the_file() {
    let mut file = file(JOIN);
    file.repartition_topics[0].partitions = Some(6);
    let java = from_file(&file, &config());
    let declared = declare(Some(as_described(&java)), Some(&file), &unknown(), &config()).unwrap();
    let sub0 = declared.topology.subtopologies.iter().find(|s| s.subtopology_id == "0").unwrap();
    assert_eq!(sub0.repartition_source_topics[0].partitions, 6);
    assert!(declared.origin.contains("app-KSTREAM-KEY-SELECT-0000000005-repartition (6)"), "{}", declared.origin);
}

#[test]
fn a_join_group_without_its_file_is_refused_before_joining() {
    let java = from_file(&file(JOIN), &config());
    let err = declare(Some(as_described(&java)), None, &unknown(), &config()).unwrap_err().to_string();
    assert!(err.contains("sub-topology 0 reads"), "{err}");
    assert!(err.contains("co-partition groups"), "{err}");
    assert!(err.contains("--topology FILE"), "{err}");
}

#[test]
fn a_join_free_group_needs_no_file() {
    let java = from_file(&file(WORD_COUNT), &config());
    assert!(java.subtopologies.iter().all(|s| s.copartition_groups.is_empty()));
    let declared = declare(Some(java.clone()), None, &unknown(), &config()).unwrap();
    assert_eq!(declared.topology, java);
    assert!(declared.origin.starts_with("group app's topology, as its coordinator describes it; repartition partition counts not told apart"), "{}", declared.origin);
}

#[test]
fn a_file_missing_a_subtopology_of_the_group_is_refused() {
    let java = from_file(&file(JOIN), &config());
    let cut = JOIN.split("  Sub-topology: 1 for global store").next().unwrap();
    let err = declare(Some(as_described(&java)), Some(&file(cut)), &unknown(), &config()).unwrap_err();
    assert!(matches!(err, StreamsMemberError::TopologyMismatch(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.starts_with("the topology file is not the one of group app: the group has sub-topology 2 (reading clicks), the file does not"), "{err}");
}

#[test]
fn a_file_reading_other_topics_is_refused() {
    let java = from_file(&file(JOIN), &config());
    let other = file(&JOIN.replace("[users]", "[customers]"));
    let err = declare(Some(as_described(&java)), Some(&other), &unknown(), &config()).unwrap_err().to_string();
    assert!(err.contains("sub-topology 0's source topics are users in the group, customers in the file"), "{err}");
}

#[test]
fn without_a_group_topology_the_file_is_declared_and_without_either_the_member_is_refused() {
    let file = file(JOIN);
    let declared = declare(None, Some(&file), &unknown(), &config()).unwrap();
    assert_eq!(declared.topology, from_file(&file, &config()));
    assert!(declared.origin.contains("first member of group app"));
    let err = declare(None, None, &unknown(), &config()).unwrap_err().to_string();
    assert!(err.contains("group app has no topology yet"), "{err}");
}
