//! Reading the text Kafka Streams' `Topology#describe()` prints into a [`Topology`].
//!
//! The text lists, per sub-topology, its source nodes with their topics, its processors with the
//! stores they use, and its sink nodes with their topic:
//!
//! ```text
//! Topologies:
//!    Sub-topology: 0
//!     Source: KSTREAM-SOURCE-0000000000 (topics: [text-lines])
//!       --> words
//!     Processor: words (stores: [])
//!       --> words-repartition-sink
//!       <-- KSTREAM-SOURCE-0000000000
//!     Sink: words-repartition-sink (topic: words-repartition)
//!       <-- words
//!
//!   Sub-topology: 1
//!     Source: words-repartition-source (topics: [words-repartition])
//!       --> KSTREAM-AGGREGATE-0000000003
//!     Processor: KSTREAM-AGGREGATE-0000000003 (stores: [word-counts])
//!       --> none
//!       <-- words-repartition-source
//! ```
//!
//! The text does not say everything the leader needs. Where it is silent this parser assumes:
//!
//! * **Logging.** Every store is logged (Kafka's default), so every sub-topology with a store is
//!   stateful. A store built `withLoggingDisabled()` must be marked afterwards
//!   ([`Topology::store_mut`]); otherwise its sub-topology gets changelog partitions and standby
//!   tasks that Kafka would not give it.
//! * **Repartition topics.** A topic is a repartition topic when one sub-topology writes it,
//!   another reads it, and its name is one Kafka gives internal topics: it ends in
//!   `-repartition` (`groupBy`, `selectKey` before a join, `repartition()`), or it is a
//!   foreign-key join's subscription topic (`KTABLE-FK-JOIN-SUBSCRIPTION-{REGISTRATION,RESPONSE}-<n>-topic`,
//!   or `<name>-subscription-{registration,response}-topic` when the join is named). Any other
//!   topic is external: the cluster must have it.
//! * **Partition counts of repartition topics** are derived by the leader. A fixed count
//!   (`Repartitioned.withNumberOfPartitions`) is not printed and must be set afterwards in
//!   [`Topology::repartition_topics`].
//! * **Copartition groups** are not printed. A sub-topology that reads two or more topics and
//!   has a join gets one group made of all its source topics. That is Kafka's group for the
//!   DSL's joins (stream-stream, stream-table, table-table, foreign-key). A join is told by
//!   either of two marks:
//!   - a processor whose name contains `JOIN`, `LEFTTHIS`, `LEFTOTHER`, `OUTERTHIS` or
//!     `OUTEROTHER`, as the DSL names them; or
//!   - a state store used by processors fed by different source nodes: a processor's inputs are
//!     the source nodes it is reached from along the `-->` lines, and a store used by processors
//!     of two different sets of inputs joins them. Every DSL join reads the other side's store
//!     this way (a stream-table join reads the table's store, which the table's source processor
//!     writes; the two sides of a stream-stream or table-table join read each other's), so
//!     joins renamed with `Named.as`, `Joined.as`, `StreamJoined.withName` or `TableJoined.as`
//!     are found too. Merged streams are not a join: their processors after the merge are fed by
//!     both inputs alike, and a store of one processor has one set of inputs.
//!
//!   Limits: a store the Processor API connects to processors of two inputs
//!   (`addStateStore`, `process(…, "store")` on two streams) looks like a join, though Kafka
//!   copartitions only the DSL's joins; and a sub-topology that merges further streams into a
//!   join gets a larger group than Kafka's. Set [`Topology::copartition_groups`] by hand (the
//!   topology JSON) in those cases.
//! * **Changelog topics** are `<application.id>-<store>-changelog`. With
//!   `topology.optimization=reuse.ktable.source.topics` a source table's store uses its source
//!   topic instead, which the text does not show (set [`StateStore::changelog_topic`]).
//! * **Global stores** (`Sub-topology: N for global store`) make no tasks and are left out; their
//!   ids stay unused, as in Kafka.
//!
//! Not supported, and refused with [`TopologyTextError::PatternSource`] or
//! [`TopologyTextError::NamedTopology`]: sources subscribed by pattern, which Kafka prints as
//! `(topics: <regex>)` without brackets (older releases: `topicPattern: <regex>`), because the
//! text does not say which topics the pattern matches (a pattern such as `[ab]`, which reads as
//! a list of legal topic names, cannot be told from the topic `ab`); and named topologies
//! (`Topology: <name>:`). Sinks with a topic-name extractor are ignored (they cannot write
//! repartition topics).

use std::collections::{BTreeMap, BTreeSet};

use super::topology::{StateStore, Subtopology, Topology, TopologyError};

/// Text that is not `Topology#describe()` output this parser supports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyTextError {
    /// A line that is none of the forms `describe()` prints.
    #[error("line {line}: unexpected `{text}`")]
    UnexpectedLine {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// A node before any `Sub-topology:` line.
    #[error("line {line}: node outside a sub-topology")]
    NodeOutsideSubtopology {
        /// 1-based line number.
        line: usize,
    },
    /// A source subscribed by pattern: the matched topics are not in the text.
    #[error(
        "line {line}: source `{node}` subscribes to the topic pattern `{pattern}`; pattern sources are not supported, \
         because the leader needs the topics the pattern matches: list them instead, as `(topics: [a, b])` in the text \
         or in `sourceTopics` of the topology JSON (docs/topology.md)"
    )]
    PatternSource {
        /// 1-based line number.
        line: usize,
        /// The source node.
        node: String,
        /// The pattern, as printed.
        pattern: String,
    },
    /// A named topology (`Topology: <name>:`).
    #[error("line {line}: named topologies are not supported")]
    NamedTopology {
        /// 1-based line number.
        line: usize,
    },
    /// The parsed topology is not valid (for example, no sub-topology makes tasks).
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// One node line.
enum Node<'a> {
    Source(Vec<&'a str>),
    Processor(&'a str, Vec<&'a str>),
    Sink(Option<&'a str>),
}

#[derive(Default)]
struct Section<'a> {
    id: i32,
    global: bool,
    sources: BTreeSet<&'a str>,
    sinks: BTreeSet<&'a str>,
    stores: BTreeSet<&'a str>,
    has_join: bool,
    /// The source nodes, by name.
    source_nodes: Vec<&'a str>,
    /// Each processor with the stores it uses.
    processor_stores: Vec<(&'a str, Vec<&'a str>)>,
    /// Each node's successors (its `-->` line).
    successors: BTreeMap<&'a str, Vec<&'a str>>,
    /// The node whose `-->` and `<--` lines come next.
    last_node: Option<&'a str>,
}

impl Topology {
    /// Parses `Topology#describe()` output (see the [module docs](self) for what is assumed)
    /// into a topology of application `application_id`, then [validates](Self::validate) it.
    ///
    /// Lists come out sorted: source and sink topics, stores and repartition topics by name,
    /// copartition groups by sub-topology.
    ///
    /// ```
    /// use kstreams_assignor::leader::Topology;
    ///
    /// let text = "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n      --> KSTREAM-AGGREGATE-0000000001\n    Processor: KSTREAM-AGGREGATE-0000000001 (stores: [counts])\n      --> none\n      <-- KSTREAM-SOURCE-0000000000\n\n";
    /// let topology = Topology::from_describe(text, "app").unwrap();
    /// assert_eq!(topology.subtopologies[0].source_topics, ["input"]);
    /// assert_eq!(topology.changelog_topic(&topology.subtopologies[0].stores[0]).as_deref(), Some("app-counts-changelog"));
    ///
    /// // A pattern source is refused, and the error says so.
    /// let err = Topology::from_describe("Topologies:\n   Sub-topology: 0\n    Source: s (topics: in.*)\n", "app").unwrap_err();
    /// assert!(err.to_string().contains("subscribes to the topic pattern `in.*`"));
    /// ```
    pub fn from_describe(text: &str, application_id: &str) -> Result<Self, TopologyTextError> {
        let sections = parse_sections(text)?;
        let tasked: Vec<&Section<'_>> = sections.iter().filter(|s| !s.global).collect();

        let readers: BTreeMap<&str, i32> = tasked.iter().flat_map(|s| s.sources.iter().map(move |t| (*t, s.id))).collect();
        let mut repartition = BTreeSet::new();
        for section in &tasked {
            for sink in &section.sinks {
                if readers.get(sink).is_some_and(|&r| r != section.id) && is_internal_topic_name(sink) {
                    repartition.insert(*sink);
                }
            }
        }

        let mut topology = Topology::new(application_id);
        for section in &tasked {
            let mut sub = Subtopology::new(section.id)
                .with_source_topics(section.sources.iter().copied())
                .with_sink_topics(section.sinks.iter().copied());
            sub.stores = section.stores.iter().map(|s| StateStore::new(*s)).collect();
            topology.subtopologies.push(sub);
            if section.sources.len() >= 2 && (section.has_join || shares_a_store_across_inputs(section)) {
                topology = topology.with_copartition_group(section.sources.iter().copied());
            }
        }
        for topic in repartition {
            topology = topology.with_repartition_topic(topic, None);
        }
        topology.validate()?;
        Ok(topology)
    }
}

fn parse_sections(text: &str) -> Result<Vec<Section<'_>>, TopologyTextError> {
    let mut sections: Vec<Section<'_>> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let unexpected = || TopologyTextError::UnexpectedLine { line, text: raw.to_owned() };
        let trimmed = raw.trim();
        if let Some(next) = trimmed.strip_prefix("-->") {
            if let Some(section) = sections.last_mut() {
                if let Some(node) = section.last_node {
                    section.successors.insert(node, next.trim().split(", ").collect());
                }
            }
            continue;
        }
        if trimmed.is_empty() || trimmed == "Topologies:" || trimmed.starts_with("<--") {
            continue;
        }
        if trimmed.starts_with("Topology: ") {
            return Err(TopologyTextError::NamedTopology { line });
        }
        if let Some(rest) = trimmed.strip_prefix("Sub-topology: ") {
            let (id, global) = match rest.split_once(' ') {
                Some((id, "for global store (will not generate tasks)")) => (id, true),
                Some(_) => return Err(unexpected()),
                None => (rest, false),
            };
            let id = id.parse().map_err(|_| unexpected())?;
            sections.push(Section { id, global, ..Section::default() });
            continue;
        }
        let (kind, rest) = trimmed.split_once(": ").ok_or_else(unexpected)?;
        let (name, detail) = rest.split_once(" (").ok_or_else(unexpected)?;
        let detail = detail.strip_suffix(')').ok_or_else(unexpected)?;
        let node = match kind {
            "Source" => match detail.strip_prefix("topics: ") {
                // Kafka prints a topic set in brackets and a pattern as the bare regex: anything
                // but a bracketed list of topic names is a pattern.
                Some(list) => match parse_list(list).filter(|topics| topics.iter().all(|t| is_topic_name(t))) {
                    Some(topics) => Node::Source(topics),
                    None => {
                        return Err(TopologyTextError::PatternSource { line, node: name.to_owned(), pattern: list.to_owned() });
                    }
                },
                None => match detail.strip_prefix("topicPattern: ").or_else(|| detail.strip_prefix("topic pattern: ")) {
                    Some(pattern) => {
                        return Err(TopologyTextError::PatternSource { line, node: name.to_owned(), pattern: pattern.to_owned() });
                    }
                    None => return Err(unexpected()),
                },
            },
            "Processor" => {
                let list = detail.strip_prefix("stores: ").ok_or_else(unexpected)?;
                Node::Processor(name, parse_list(list).ok_or_else(unexpected)?)
            }
            "Sink" => match detail.strip_prefix("topic: ") {
                Some(topic) => Node::Sink(Some(topic)),
                None if detail.starts_with("extractor class: ") => Node::Sink(None),
                None => return Err(unexpected()),
            },
            _ => return Err(unexpected()),
        };
        let section = sections.last_mut().ok_or(TopologyTextError::NodeOutsideSubtopology { line })?;
        section.last_node = Some(name);
        match node {
            Node::Source(topics) => {
                section.sources.extend(topics);
                section.source_nodes.push(name);
            }
            Node::Processor(name, stores) => {
                section.stores.extend(stores.iter().copied());
                section.has_join |= is_join_processor(name);
                section.processor_stores.push((name, stores));
            }
            Node::Sink(topic) => section.sinks.extend(topic),
        }
    }
    Ok(sections)
}

/// `[a, b]` (Java's `List.toString`) → `["a", "b"]`; `[]` → none.
fn parse_list(list: &str) -> Option<Vec<&str>> {
    let inner = list.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    Some(inner.split(", ").collect())
}

/// Whether Kafka accepts this as a topic name: 1 to 249 of `[a-zA-Z0-9._-]`.
fn is_topic_name(topic: &str) -> bool {
    (1..=249).contains(&topic.len()) && topic.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether Kafka names internal topics like this (see the module docs).
fn is_internal_topic_name(topic: &str) -> bool {
    const FK_PREFIXES: [&str; 2] = ["KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-", "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-"];
    topic.ends_with("-repartition")
        || topic.ends_with("-subscription-registration-topic")
        || topic.ends_with("-subscription-response-topic")
        || (topic.ends_with("-topic") && FK_PREFIXES.iter().any(|p| topic.starts_with(p)))
}

/// Whether the DSL names join processors like this (see the module docs).
fn is_join_processor(name: &str) -> bool {
    ["JOIN", "LEFTTHIS", "LEFTOTHER", "OUTERTHIS", "OUTEROTHER"].iter().any(|k| name.contains(k))
}

/// Whether processors fed by different source nodes use one store: the mark of a join (see the
/// module docs). A processor's inputs are the source nodes it is reached from along the `-->`
/// lines; a store read by processors of two different sets of inputs joins those inputs.
fn shares_a_store_across_inputs(section: &Section<'_>) -> bool {
    let mut inputs: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &source in &section.source_nodes {
        let mut seen = BTreeSet::new();
        let mut next = vec![source];
        while let Some(node) = next.pop() {
            if seen.insert(node) {
                inputs.entry(node).or_default().insert(source);
                next.extend(section.successors.get(node).into_iter().flatten().copied());
            }
        }
    }
    let mut readers: BTreeMap<&str, BTreeSet<&BTreeSet<&str>>> = BTreeMap::new();
    for (processor, stores) in &section.processor_stores {
        let Some(from) = inputs.get(processor) else { continue };
        for store in stores {
            readers.entry(store).or_default().insert(from);
        }
    }
    readers.values().any(|input_sets| input_sets.len() >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_topic_names_follow_kafka() {
        for yes in [
            "words-repartition",
            "KSTREAM-KEY-SELECT-0000000005-repartition",
            "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
            "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
            "orders-subscription-registration-topic",
        ] {
            assert!(is_internal_topic_name(yes), "{yes}");
        }
        for no in ["input", "repartition", "words-repartitioned", "KTABLE-FK-JOIN-OUTPUT-0000000018"] {
            assert!(!is_internal_topic_name(no), "{no}");
        }
    }

    /// A sub-topology of two inputs, `a` and `b`, whose nodes are `nodes` (after the sources
    /// `src-a` and `src-b`).
    fn two_inputs(nodes: &str) -> Topology {
        let text = format!(
            "Topologies:\n   Sub-topology: 0\n    Source: src-a (topics: [a])\n      --> {}\n    Source: src-b (topics: [b])\n      --> {}\n{nodes}\n",
            if nodes.contains("<-- src-a") { "p-a" } else { "none" },
            if nodes.contains("<-- src-b") { "p-b" } else { "none" },
        );
        Topology::from_describe(&text, "app").unwrap()
    }

    #[test]
    fn a_store_used_from_two_inputs_is_a_join() {
        // As `Joined.as("enrich")` prints a stream-table join: the table's source processor and
        // the join both use the table's store.
        let join = two_inputs(
            "    Processor: p-a (stores: [])\n      --> enrich\n      <-- src-a\n    Processor: enrich (stores: [t-store])\n      --> none\n      <-- p-a\n    Processor: p-b (stores: [t-store])\n      --> none\n      <-- src-b\n",
        );
        assert_eq!(join.copartition_groups, [vec!["a".to_owned(), "b".into()]]);
        // Each input with its own store: no join.
        let apart = two_inputs(
            "    Processor: p-a (stores: [s-a])\n      --> none\n      <-- src-a\n    Processor: p-b (stores: [s-b])\n      --> none\n      <-- src-b\n",
        );
        assert!(apart.copartition_groups.is_empty());
        // Merged, then one processor uses the store: the store has one set of inputs.
        let merged = two_inputs(
            "    Processor: p-a (stores: [])\n      --> count\n      <-- src-a\n    Processor: p-b (stores: [])\n      --> count\n      <-- src-b\n    Processor: count (stores: [counts])\n      --> none\n      <-- p-a, p-b\n",
        );
        assert!(merged.copartition_groups.is_empty());
        // A store of merged inputs also read by a processor of one of them: a join of a stream
        // with the table of the merge (Kafka's group: both inputs).
        let joined_to_merge = two_inputs(
            "    Processor: p-a (stores: [])\n      --> count, lookup\n      <-- src-a\n    Processor: p-b (stores: [])\n      --> count\n      <-- src-b\n    Processor: count (stores: [counts])\n      --> none\n      <-- p-a, p-b\n    Processor: lookup (stores: [counts])\n      --> none\n      <-- p-a\n",
        );
        assert_eq!(joined_to_merge.copartition_groups, [vec!["a".to_owned(), "b".into()]]);
    }

    #[test]
    fn lists_parse_as_java_prints_them() {
        assert_eq!(parse_list("[]"), Some(vec![]));
        assert_eq!(parse_list("[a, b-c]"), Some(vec!["a", "b-c"]));
        assert_eq!(parse_list("a, b"), None);
    }
}
