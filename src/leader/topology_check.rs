//! The leader's check that its topology is the members' own, before it assigns anything.
//!
//! Kafka Streams' leader never needs it: its topology is the application's by construction. A
//! leader given its topology as a file (`lead --topology`) can be given the wrong one: an old
//! version, another application's, a `Topology#describe()` text with a sub-topology cut off.
//! Assigning from it would give the members only the tasks the file knows, create only the
//! internal topics it knows, and leave the members waiting for the rest until they fail. So the
//! leader compares the file with what every member's subscription says of the members' own
//! topology, and refuses to assign on a mismatch ([`TopologyMismatch`]):
//!
//! * **Topics.** A Kafka Streams member subscribes its consumer to every source topic of its
//!   topology's sub-topologies (the `ConsumerProtocolSubscription` topics): external topics by
//!   name, repartition topics as `<application.id>-<name>` ([`Topology::topic_name`]). Topics of
//!   global stores are read by another consumer and are not in it, nor in the file's
//!   sub-topologies. Each member's topics must be the file's: a topic a member subscribes to
//!   that no sub-topology of the file reads, or one the file reads that a member does not
//!   subscribe to, is a mismatch.
//! * **Tasks.** Tasks the member ran as active tasks when it joined (its `SubscriptionInfo`'s
//!   previous tasks: `prevTasks` up to version 6, tasks with offset sum `-2` from version 7 on)
//!   name sub-topologies of its topology: one the file does not have, or a named topology (the
//!   file is one unnamed topology), is a mismatch. The other tasks a member reports (standby
//!   tasks, offset sums of state on disk) are not: a member reports every task directory it finds
//!   in its state directory, including those an earlier version of the application left behind
//!   until the state cleaner removes them, so they may name sub-topologies the application no
//!   longer has.
//!
//! Subscriptions that do not decode are left to the aggregation, which refuses them; a member
//! from the future (a `SubscriptionInfo` version above
//! [`LATEST_SUPPORTED_VERSION`](crate::wire::LATEST_SUPPORTED_VERSION)) is checked on its topics
//! only. Members that run different topologies (an application upgraded one instance at a time)
//! are refused too: the leader has one topology to assign from.
//!
//! ```
//! use kstreams_assignor::leader::{JoinMember, Topology, check_topology};
//! use kstreams_assignor::wire::{ProcessId, SubscriptionEnvelope, SubscriptionInfo};
//!
//! let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
//! let topology = Topology::from_describe(&text, "wc").unwrap();
//! let member = |topics: &[&str]| {
//!     let info = SubscriptionInfo::new(11, ProcessId::NIL).encode().unwrap();
//!     let topics = topics.iter().map(|t| t.to_string()).collect();
//!     JoinMember::new("m-1", SubscriptionEnvelope::new(topics, Some(info)).encode().unwrap())
//! };
//! assert!(check_topology(&[member(&["text-lines", "wc-words-repartition"])], &topology).is_ok());
//!
//! // A member of a longer topology also reads `wc-counts-by-length-repartition`.
//! let longer = member(&["text-lines", "wc-counts-by-length-repartition", "wc-words-repartition"]);
//! let err = check_topology(&[longer], &topology).unwrap_err();
//! assert!(err.to_string().contains("subscribe to `wc-counts-by-length-repartition`, which no sub-topology of the file reads"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::input::JoinMember;
use super::topology::Topology;
use crate::wire::{SubscriptionEnvelope, SubscriptionInfo, TaskId};

/// The members' subscriptions show a topology other than the leader's (see the
/// [module docs](self)). Every list names what was found and where; the message says it in
/// words, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.sentence())]
#[non_exhaustive]
pub struct TopologyMismatch {
    /// The members checked.
    pub members: usize,
    /// Topics members subscribe to that no sub-topology of the topology reads, each with the
    /// members that subscribe to it.
    pub unread: BTreeMap<String, Vec<String>>,
    /// Topics the topology reads that members do not subscribe to, each with the sub-topology
    /// that reads it and the members that do not subscribe to it.
    pub unsubscribed: BTreeMap<String, (i32, Vec<String>)>,
    /// Tasks members ran as active whose sub-topology the topology does not have (or of a named
    /// topology), each with the members that report it.
    pub unknown_tasks: BTreeMap<TaskId, Vec<String>>,
    /// Of the unread topics, those a sub-topology of the topology writes (topic → that
    /// sub-topology and the name it writes the topic by): the sub-topology that reads them is
    /// missing from the topology.
    pub written_not_read: BTreeMap<String, (i32, String)>,
}

impl TopologyMismatch {
    fn sentence(&self) -> String {
        let mut s = String::from("the topology file is not the application's: ");
        let mut parts = Vec::new();
        let who = |members: &[String], verb_all: &str, verb_some: &str| {
            if members.len() >= self.members {
                format!("the members {verb_all}")
            } else if members.len() == 1 {
                format!("member `{}` {verb_some}", members[0])
            } else {
                format!("{} of {} members {verb_all}", members.len(), self.members)
            }
        };
        for (members, topics) in grouped(self.unread.iter().map(|(t, m)| (m, t))) {
            let mut part = format!(
                "{} to {}, which no sub-topology of the file reads",
                who(members, "subscribe", "subscribes"),
                ticked(&topics)
            );
            let written: Vec<String> = topics
                .iter()
                .filter_map(|t| self.written_not_read.get(*t))
                .map(|(id, raw)| format!("the file's sub-topology {id} writes `{raw}`"))
                .collect();
            if !written.is_empty() {
                let them = if written.len() == 1 { "it" } else { "them" };
                let _ = write!(part, " ({}: the sub-topology that reads {them} is missing from the file)", written.join(", "));
            }
            parts.push(part);
        }
        for (topic, (subtopology, members)) in &self.unsubscribed {
            let subject = if members.len() >= self.members {
                "no member subscribes to".to_owned()
            } else {
                let names = members.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
                format!("{names} {} not subscribe to", if members.len() == 1 { "does" } else { "do" })
            };
            parts.push(format!("the file's sub-topology {subtopology} reads `{topic}`, which {subject}"));
        }
        if !self.unknown_tasks.is_empty() {
            let tasks: Vec<String> = self.unknown_tasks.keys().map(ToString::to_string).collect();
            let subtopologies: BTreeSet<String> = self.unknown_tasks.keys().map(subtopology_name).collect();
            parts.push(format!(
                "members ran task(s) {} of sub-topology {}, which the file does not have",
                tasks.join(", "),
                subtopologies.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        s.push_str(&parts.join("; "));
        s.push_str("; give the application's current Topology#describe() text");
        s
    }
}

/// A task's sub-topology as the message names it.
fn subtopology_name(t: &TaskId) -> String {
    match &t.topology {
        Some(name) => format!("{} of named topology `{name}`", t.subtopology),
        None => t.subtopology.to_string(),
    }
}

/// `a`, `b` in backticks.
fn ticked(topics: &[&String]) -> String {
    topics.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
}

/// The keys grouped by the members they share, so that one sentence names them together.
fn grouped<'a>(items: impl Iterator<Item = (&'a Vec<String>, &'a String)>) -> Vec<(&'a [String], Vec<&'a String>)> {
    let mut groups: Vec<(&[String], Vec<&String>)> = Vec::new();
    for (members, key) in items {
        match groups.iter_mut().find(|(m, _)| *m == members.as_slice()) {
            Some((_, keys)) => keys.push(key),
            None => groups.push((members.as_slice(), vec![key])),
        }
    }
    groups
}

/// Checks `topology` against every member's subscription (see the [module docs](self)).
///
/// # Arguments
///
/// * `members`: the JoinGroup members, as the coordinator gives them to the leader.
/// * `topology`: the topology the leader would assign from.
///
/// # Returns
///
/// `Ok(())` when every member's subscribed topics are the topology's source topics and every
/// task it ran is of one of its sub-topologies; otherwise the whole [`TopologyMismatch`].
///
/// # Complexity
///
/// O(m · (t + k) · log) for m members subscribing to t topics and reporting k tasks.
pub fn check_topology(members: &[JoinMember], topology: &Topology) -> Result<(), TopologyMismatch> {
    let reads: BTreeMap<String, i32> =
        topology.subtopologies.iter().flat_map(|s| s.source_topics.iter().map(|t| (topology.topic_name(t), s.id))).collect();
    let known: BTreeSet<i32> = topology.subtopologies.iter().map(|s| s.id).collect();
    let mut mismatch = TopologyMismatch {
        members: 0,
        unread: BTreeMap::new(),
        unsubscribed: BTreeMap::new(),
        unknown_tasks: BTreeMap::new(),
        written_not_read: BTreeMap::new(),
    };
    for member in members {
        // A subscription that does not decode is the aggregation's to refuse.
        let Ok(envelope) = SubscriptionEnvelope::decode(&member.subscription) else { continue };
        mismatch.members += 1;
        let id = &member.member_id;
        let topics: BTreeSet<&String> = envelope.topics.iter().collect();
        for topic in topics.iter().filter(|t| !reads.contains_key(**t)) {
            mismatch.unread.entry((*topic).clone()).or_default().push(id.clone());
        }
        for (topic, subtopology) in reads.iter().filter(|(t, _)| !topics.contains(t)) {
            mismatch.unsubscribed.entry(topic.clone()).or_insert_with(|| (*subtopology, Vec::new())).1.push(id.clone());
        }
        let info = envelope.user_data.as_deref().and_then(|bytes| SubscriptionInfo::decode(bytes).ok());
        for task in info.iter().flat_map(SubscriptionInfo::prev_tasks) {
            if task.topology.is_some() || !known.contains(&task.subtopology) {
                mismatch.unknown_tasks.entry(task).or_default().push(id.clone());
            }
        }
    }
    if mismatch.unread.is_empty() && mismatch.unsubscribed.is_empty() && mismatch.unknown_tasks.is_empty() {
        return Ok(());
    }
    for s in &topology.subtopologies {
        for sink in &s.sink_topics {
            for name in [sink.clone(), format!("{}-{sink}", topology.application_id)] {
                if mismatch.unread.contains_key(&name) {
                    mismatch.written_not_read.insert(name, (s.id, sink.clone()));
                }
            }
        }
    }
    Err(mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{LATEST_OFFSET, ProcessId};

    /// The issue's application with its last sub-topology cut off: orders re-keyed by customer
    /// (0), joined with the customers table and re-keyed by region (1); the sum by region (2) is
    /// missing.
    fn cut_topology() -> Topology {
        let text = "\
Topologies:
   Sub-topology: 0
    Source: orders-source (topics: [orders])
      --> by-customer
    Processor: by-customer (stores: [])
      --> orders-by-customer-repartition-sink
      <-- orders-source
    Sink: orders-by-customer-repartition-sink (topic: orders-by-customer-repartition)
      <-- by-customer

  Sub-topology: 1
    Source: orders-by-customer-repartition-source (topics: [orders-by-customer-repartition])
      --> join
    Source: customers-source (topics: [customers])
      --> customers-table
    Processor: join (stores: [customers-store])
      --> by-region
      <-- orders-by-customer-repartition-source
    Processor: customers-table (stores: [customers-store])
      --> none
      <-- customers-source
    Processor: by-region (stores: [])
      --> orders-by-region-repartition-sink
      <-- join
    Sink: orders-by-region-repartition-sink (topic: orders-by-region-repartition)
      <-- by-region
";
        Topology::from_describe(text, "shop").unwrap()
    }

    /// What the application's members subscribe to: every sub-topology's sources.
    const APP_TOPICS: [&str; 4] =
        ["customers", "orders", "shop-orders-by-customer-repartition", "shop-orders-by-region-repartition"];
    /// What the cut file reads.
    const FILE_TOPICS: [&str; 3] = ["customers", "orders", "shop-orders-by-customer-repartition"];

    fn member(id: &str, topics: &[&str], info: SubscriptionInfo) -> JoinMember {
        let topics = topics.iter().map(|t| (*t).to_owned()).collect();
        JoinMember::new(id, SubscriptionEnvelope::new(topics, Some(info.encode().unwrap())).encode().unwrap())
    }

    fn v11() -> SubscriptionInfo {
        SubscriptionInfo::new(11, ProcessId::NIL)
    }

    #[test]
    fn accepts_members_that_subscribe_to_what_the_file_reads() {
        let sums = [(TaskId::new(1, 0), LATEST_OFFSET), (TaskId::new(0, 2), 17)];
        let members = [member("a", &FILE_TOPICS, v11().with_task_offset_sums(sums)), member("b", &FILE_TOPICS, v11())];
        assert_eq!(check_topology(&members, &cut_topology()), Ok(()));
    }

    #[test]
    fn refuses_a_repartition_topic_the_members_subscribe_to_and_the_file_does_not_read() {
        let members = [member("a", &APP_TOPICS, v11()), member("b", &APP_TOPICS, v11())];
        let err = check_topology(&members, &cut_topology()).unwrap_err();
        assert_eq!(err.unread.keys().collect::<Vec<_>>(), ["shop-orders-by-region-repartition"]);
        assert_eq!(err.written_not_read["shop-orders-by-region-repartition"], (1, "orders-by-region-repartition".to_owned()));
        assert!(err.unsubscribed.is_empty());
        assert_eq!(
            err.to_string(),
            "the topology file is not the application's: the members subscribe to `shop-orders-by-region-repartition`, which no \
             sub-topology of the file reads (the file's sub-topology 1 writes `orders-by-region-repartition`: the sub-topology that \
             reads it is missing from the file); give the application's current Topology#describe() text"
        );
    }

    #[test]
    fn refuses_a_topic_the_file_reads_and_a_member_does_not_subscribe_to() {
        let members = [member("a", &FILE_TOPICS, v11()), member("b", &["orders", "shop-orders-by-customer-repartition"], v11())];
        let err = check_topology(&members, &cut_topology()).unwrap_err();
        assert_eq!(err.unsubscribed["customers"], (1, vec!["b".to_owned()]));
        assert!(err.unread.is_empty());
        assert!(
            err.to_string().contains("the file's sub-topology 1 reads `customers`, which `b` does not subscribe to"),
            "{err}"
        );
        // No member at all.
        let members = [member("a", &["orders", "shop-orders-by-customer-repartition"], v11())];
        let err = check_topology(&members, &cut_topology()).unwrap_err();
        assert!(err.to_string().contains("reads `customers`, which no member subscribes to"), "{err}");
    }

    #[test]
    fn refuses_a_task_the_members_ran_of_a_subtopology_the_file_does_not_have() {
        // Version 11: a task reported running (-2).
        let running = v11().with_task_offset_sums([(TaskId::new(2, 3), LATEST_OFFSET), (TaskId::new(1, 3), 5)]);
        let err = check_topology(&[member("a", &FILE_TOPICS, running)], &cut_topology()).unwrap_err();
        assert_eq!(err.unknown_tasks.keys().cloned().collect::<Vec<_>>(), [TaskId::new(2, 3)]);
        assert!(err.to_string().contains("members ran task(s) 2_3 of sub-topology 2, which the file does not have"), "{err}");
        // Version 6: a previous active task.
        let prev = SubscriptionInfo::new(6, ProcessId::NIL).with_task_offset_sums([(TaskId::new(2, 0), LATEST_OFFSET)]);
        assert!(matches!(prev.tasks, crate::wire::TaskStates::Sets { .. }));
        let err = check_topology(&[member("a", &FILE_TOPICS, prev)], &cut_topology()).unwrap_err();
        assert_eq!(err.unknown_tasks.keys().cloned().collect::<Vec<_>>(), [TaskId::new(2, 0)]);
    }

    #[test]
    fn accepts_state_on_disk_of_a_subtopology_the_file_does_not_have() {
        // Standby tasks and offset sums of task directories may be left by an earlier version
        // of the application.
        let on_disk = v11().with_task_offset_sums([(TaskId::new(2, 3), 1_000), (TaskId::new(5, 0), 0)]);
        let v6 = SubscriptionInfo::new(6, ProcessId::NIL).with_task_offset_sums([(TaskId::new(2, 1), 10)]);
        let members = [member("a", &FILE_TOPICS, on_disk), member("b", &FILE_TOPICS, v6)];
        assert_eq!(check_topology(&members, &cut_topology()), Ok(()));
    }

    #[test]
    fn leaves_an_undecodable_subscription_to_the_aggregation() {
        let members = [member("a", &FILE_TOPICS, v11()), JoinMember::new("bad", vec![0, 9, 9])];
        assert_eq!(check_topology(&members, &cut_topology()), Ok(()));
    }
}
