use super::*;

const JOIN: &str = include_str!("../../../fixtures/leader/stream-table-join.describe.txt");
const WORD_COUNT: &str = include_str!("../../../fixtures/leader/word-count.describe.txt");

fn config() -> MemberConfig {
    MemberConfig::new("localhost:9092", "app")
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
    let declared = declare(Some(as_described(&java)), Some(&file), &config()).unwrap();
    // The group's lists in the group's order, the co-partition groups pointing into them.
    let mut expected = as_described(&java);
    for (e, j) in expected.subtopologies.iter_mut().zip(&java.subtopologies) {
        for g in &j.copartition_groups {
            let flip = |indexes: &[i16], len: usize| indexes.iter().map(|&i| i16::try_from(len).unwrap() - 1 - i).collect::<Vec<_>>();
            e.copartition_groups.push(CopartitionGroup {
                source_topics: flip(&g.source_topics, j.source_topics.len()),
                source_topic_regex: Vec::new(),
                repartition_source_topics: flip(&g.repartition_source_topics, j.repartition_source_topics.len()),
            });
        }
    }
    assert_eq!(declared.topology, expected);
    assert!(declared.origin.contains("co-partition groups sub-topology 0: users + app-KSTREAM-KEY-SELECT-0000000005-repartition"), "{}", declared.origin);
}

#[test]
fn a_fixed_repartition_count_comes_from_the_file() {
    let mut file = file(JOIN);
    file.repartition_topics[0].partitions = Some(6);
    let java = from_file(&file, &config());
    let declared = declare(Some(as_described(&java)), Some(&file), &config()).unwrap();
    let sub0 = declared.topology.subtopologies.iter().find(|s| s.subtopology_id == "0").unwrap();
    assert_eq!(sub0.repartition_source_topics[0].partitions, 6);
    assert!(declared.origin.contains("app-KSTREAM-KEY-SELECT-0000000005-repartition (6)"), "{}", declared.origin);
}

#[test]
fn a_join_group_without_its_file_is_refused_before_joining() {
    let java = from_file(&file(JOIN), &config());
    let err = declare(Some(as_described(&java)), None, &config()).unwrap_err().to_string();
    assert!(err.contains("sub-topology 0 reads"), "{err}");
    assert!(err.contains("co-partition groups"), "{err}");
    assert!(err.contains("--topology FILE"), "{err}");
}

#[test]
fn a_join_free_group_needs_no_file() {
    let java = from_file(&file(WORD_COUNT), &config());
    assert!(java.subtopologies.iter().all(|s| s.copartition_groups.is_empty()));
    let declared = declare(Some(java.clone()), None, &config()).unwrap();
    assert_eq!(declared.topology, java);
    assert_eq!(declared.origin, "group app's topology, as its coordinator describes it");
}

#[test]
fn a_file_missing_a_subtopology_of_the_group_is_refused() {
    let java = from_file(&file(JOIN), &config());
    let cut = JOIN.split("  Sub-topology: 1 for global store").next().unwrap();
    let err = declare(Some(as_described(&java)), Some(&file(cut)), &config()).unwrap_err();
    assert!(matches!(err, StreamsMemberError::TopologyMismatch(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.starts_with("the topology file is not the one of group app: the group has sub-topology 2 (reading clicks), the file does not"), "{err}");
}

#[test]
fn a_file_reading_other_topics_is_refused() {
    let java = from_file(&file(JOIN), &config());
    let other = file(&JOIN.replace("[users]", "[customers]"));
    let err = declare(Some(as_described(&java)), Some(&other), &config()).unwrap_err().to_string();
    assert!(err.contains("sub-topology 0's source topics are users in the group, customers in the file"), "{err}");
}

#[test]
fn without_a_group_topology_the_file_is_declared_and_without_either_the_member_is_refused() {
    let file = file(JOIN);
    let declared = declare(None, Some(&file), &config()).unwrap();
    assert_eq!(declared.topology, from_file(&file, &config()));
    assert!(declared.origin.contains("first member of group app"));
    let err = declare(None, None, &config()).unwrap_err().to_string();
    assert!(err.contains("group app has no topology yet"), "{err}");
}
