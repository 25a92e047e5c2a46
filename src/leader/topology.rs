//! The topology as the group leader needs it: sub-topologies with their topics and state stores,
//! the repartition topics between them, and the copartition groups.
//!
//! This is what Kafka Streams' `InternalTopologyBuilder` hands the leader as one `TopicsInfo` per
//! sub-topology (`subtopologyToTopicsInfo`) plus `copartitionGroups()`, stripped of everything
//! the assignment does not read (serdes, processors, topic configs).
//!
//! # JSON
//!
//! camelCase keys; unknown keys are refused. Internal topics are written with the names the
//! topology itself uses (those `Topology#describe()` prints) and get the application id prefix
//! when the leader resolves them, as Kafka does:
//!
//! | key | meaning |
//! |---|---|
//! | `applicationId` | `application.id`; prefixes every internal topic |
//! | `subtopologies[].id` | the sub-topology id (Kafka's `topicGroupId`), ≥ 0, unique; ids need not be contiguous (global stores take ids too) |
//! | `subtopologies[].sourceTopics` | topics it reads: external topics, and repartition topics by their raw name |
//! | `subtopologies[].sinkTopics` | topics it writes (default none); only repartition topics matter to the leader |
//! | `subtopologies[].stores[].name` | a state store connected to one of its processors |
//! | `subtopologies[].stores[].loggingEnabled` | default `true`; a store without logging has no changelog |
//! | `subtopologies[].stores[].changelogTopic` | optional: an existing topic used as the changelog instead of `<application.id>-<store>-changelog` (Kafka's source-topic reuse, `reuse.ktable.source.topics`); not prefixed |
//! | `repartitionTopics[].name` | a repartition topic's raw name, e.g. `words-repartition` |
//! | `repartitionTopics[].partitions` | optional fixed partition count (`Repartitioned.withNumberOfPartitions`); otherwise derived |
//! | `copartitionGroups` | lists of source topics (raw names) that must be copartitioned: the inputs of a join |
//!
//! Sources subscribed by pattern have no form here: a `sourceTopicPattern` (or `topicPattern`)
//! key is refused with [`TopologyError::PatternSource`]. The whole schema, with an example and
//! how `Topology#describe()` text maps to it, is in `docs/topology.md`.
//!
//! A repartition topic `words-repartition` of application `wc` is the Kafka topic
//! `wc-words-repartition`; the changelog of store `counts` is `wc-counts-changelog`. A
//! sub-topology is stateful when at least one of its stores has a changelog.
//!
//! ```
//! use kstreams_assignor::leader::Topology;
//!
//! let topology = Topology::from_json(r#"{
//!     "applicationId": "wc",
//!     "subtopologies": [
//!         {"id": 0, "sourceTopics": ["lines"], "sinkTopics": ["words-repartition"]},
//!         {"id": 1, "sourceTopics": ["words-repartition"],
//!          "stores": [{"name": "counts"}, {"name": "cache", "loggingEnabled": false}]}
//!     ],
//!     "repartitionTopics": [{"name": "words-repartition"}]
//! }"#).unwrap();
//! assert_eq!(topology.topic_name("words-repartition"), "wc-words-repartition");
//! assert_eq!(topology.topic_name("lines"), "lines");
//! let stores = &topology.subtopologies[1].stores;
//! assert_eq!(topology.changelog_topic(&stores[0]).as_deref(), Some("wc-counts-changelog"));
//! assert_eq!(topology.changelog_topic(&stores[1]), None);
//!
//! // A topic read by two sub-topologies is refused, as Kafka's builder refuses it.
//! let err = Topology::from_json(r#"{"applicationId": "a", "subtopologies": [
//!     {"id": 0, "sourceTopics": ["t"]}, {"id": 1, "sourceTopics": ["t"]}]}"#).unwrap_err();
//! assert!(err.to_string().contains("`t`"));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A topology: its sub-topologies, repartition topics and copartition groups.
///
/// Build one from JSON ([`Topology::from_json`]), from `Topology#describe()` text
/// ([`Topology::from_describe`](crate::leader::Topology::from_describe)) or with the `with_*`
/// builders; see the [module docs](self) for the format.
///
/// ```
/// use kstreams_assignor::leader::{StateStore, Subtopology, Topology};
///
/// let topology = Topology::new("wc")
///     .with_subtopology(Subtopology::new(0).with_source_topics(["lines"]).with_sink_topics(["words-repartition"]))
///     .with_subtopology(Subtopology::new(1).with_source_topics(["words-repartition"]).with_store(StateStore::new("counts")))
///     .with_repartition_topic("words-repartition", None);
/// assert!(topology.validate().is_ok());
/// assert_eq!(Topology::from_json(&topology.to_json()).unwrap(), topology);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Topology {
    /// `application.id`: the prefix of every internal topic.
    pub application_id: String,
    /// The sub-topologies that make tasks, in any order.
    pub subtopologies: Vec<Subtopology>,
    /// The repartition topics, by raw name.
    #[serde(default)]
    pub repartition_topics: Vec<RepartitionTopic>,
    /// Groups of source topics (raw names) that must have the same partition count.
    #[serde(default)]
    pub copartition_groups: Vec<Vec<String>>,
}

/// A sub-topology (Kafka's topic group): the unit tasks are made of, one task per input
/// partition number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Subtopology {
    /// The id (Kafka's `topicGroupId`, the first half of a task id).
    pub id: i32,
    /// The topics it reads: external topics and repartition topics (raw names).
    pub source_topics: Vec<String>,
    /// The topics it writes.
    #[serde(default)]
    pub sink_topics: Vec<String>,
    /// The state stores of its processors.
    #[serde(default)]
    pub stores: Vec<StateStore>,
}

/// A state store of a sub-topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct StateStore {
    /// The store name.
    pub name: String,
    /// Whether changes are logged to a changelog topic (Kafka's default: yes).
    #[serde(default = "yes")]
    pub logging_enabled: bool,
    /// An existing topic that serves as the changelog (Kafka's source-topic reuse). As in Kafka,
    /// such a store has this changelog whatever `logging_enabled` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_topic: Option<String>,
}

/// A repartition topic: written by some sub-topologies, read by one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct RepartitionTopic {
    /// Its raw name, as the topology writes it (`<name>-repartition` for the DSL).
    pub name: String,
    /// A fixed partition count; `None` lets the leader derive it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<i32>,
}

const fn yes() -> bool {
    true
}

/// A topology the leader cannot work with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A sub-topology subscribes by pattern (a `sourceTopicPattern` or `topicPattern` key):
    /// the leader needs the topics themselves.
    #[error(
        "topology JSON at `subtopologies[{index}].{key}`: pattern sources are not supported, because the leader needs \
         the topics the pattern matches: list them in `sourceTopics` instead (docs/topology.md)"
    )]
    PatternSource {
        /// The sub-topology's index in `subtopologies`.
        index: usize,
        /// The key used.
        key: String,
    },
    /// The JSON does not parse into the model.
    #[error("topology JSON at `{path}`: {source}")]
    Json {
        /// Where in the document.
        path: String,
        /// What is wrong.
        source: serde_json::Error,
    },
    /// `applicationId` is empty.
    #[error("the application id is empty")]
    EmptyApplicationId,
    /// There is no sub-topology.
    #[error("the topology has no sub-topology")]
    NoSubtopology,
    /// A sub-topology id is negative or used twice.
    #[error("sub-topology id {0} is negative or used twice")]
    BadSubtopologyId(i32),
    /// A sub-topology reads no topic.
    #[error("sub-topology {0} has no source topic")]
    NoSourceTopic(i32),
    /// A topic is read by two sub-topologies (Kafka: "Topic has already been registered by
    /// another source").
    #[error("topic `{0}` is a source topic of two sub-topologies")]
    SourceTopicTwice(String),
    /// A state store appears twice.
    #[error("state store `{0}` appears twice")]
    StoreTwice(String),
    /// A repartition topic is declared twice or has a fixed partition count below 1.
    #[error("repartition topic `{0}` is declared twice or has a partition count below 1")]
    BadRepartitionTopic(String),
    /// A copartition group names a topic that no sub-topology reads.
    #[error("copartition group topic `{0}` is not a source topic")]
    CopartitionTopicNotSource(String),
}

impl Topology {
    /// A topology without sub-topologies yet.
    pub fn new(application_id: impl Into<String>) -> Self {
        Self {
            application_id: application_id.into(),
            subtopologies: Vec::new(),
            repartition_topics: Vec::new(),
            copartition_groups: Vec::new(),
        }
    }

    /// Adds a sub-topology.
    pub fn with_subtopology(mut self, subtopology: Subtopology) -> Self {
        self.subtopologies.push(subtopology);
        self
    }

    /// Declares a repartition topic (raw name), with a fixed partition count or none.
    pub fn with_repartition_topic(mut self, name: impl Into<String>, partitions: Option<i32>) -> Self {
        self.repartition_topics.push(RepartitionTopic { name: name.into(), partitions });
        self
    }

    /// Adds a copartition group (raw names).
    pub fn with_copartition_group<S: Into<String>>(mut self, topics: impl IntoIterator<Item = S>) -> Self {
        self.copartition_groups.push(topics.into_iter().map(Into::into).collect());
        self
    }

    /// Parses the JSON format of the [module docs](self) and [validates](Self::validate) it.
    pub fn from_json(text: &str) -> Result<Self, TopologyError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let topology: Self = serde_path_to_error::deserialize(de).map_err(|e| {
            pattern_source(text).unwrap_or_else(|| TopologyError::Json { path: e.path().to_string(), source: e.into_inner() })
        })?;
        topology.validate()?;
        Ok(topology)
    }

    /// The JSON format, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Checks what Kafka's topology builder guarantees: a non-empty application id, unique
    /// non-negative sub-topology ids, every sub-topology reading at least one topic, no topic
    /// read by two sub-topologies, unique store and repartition topic names, fixed partition
    /// counts ≥ 1, and copartition groups made of source topics.
    pub fn validate(&self) -> Result<(), TopologyError> {
        if self.application_id.is_empty() {
            return Err(TopologyError::EmptyApplicationId);
        }
        if self.subtopologies.is_empty() {
            return Err(TopologyError::NoSubtopology);
        }
        let mut ids = BTreeSet::new();
        let mut sources = BTreeSet::new();
        let mut stores = BTreeSet::new();
        for sub in &self.subtopologies {
            if sub.id < 0 || !ids.insert(sub.id) {
                return Err(TopologyError::BadSubtopologyId(sub.id));
            }
            if sub.source_topics.is_empty() {
                return Err(TopologyError::NoSourceTopic(sub.id));
            }
            let mut own = BTreeSet::new();
            for topic in &sub.source_topics {
                if own.insert(topic.as_str()) && !sources.insert(topic.as_str()) {
                    return Err(TopologyError::SourceTopicTwice(topic.clone()));
                }
            }
            for store in &sub.stores {
                if !stores.insert(store.name.as_str()) {
                    return Err(TopologyError::StoreTwice(store.name.clone()));
                }
            }
        }
        let mut repartition = BTreeSet::new();
        for topic in &self.repartition_topics {
            if !repartition.insert(topic.name.as_str()) || topic.partitions.is_some_and(|n| n < 1) {
                return Err(TopologyError::BadRepartitionTopic(topic.name.clone()));
            }
        }
        for topic in self.copartition_groups.iter().flatten() {
            if !sources.contains(topic.as_str()) {
                return Err(TopologyError::CopartitionTopicNotSource(topic.clone()));
            }
        }
        Ok(())
    }

    /// Whether `raw` is a declared repartition topic.
    pub fn is_repartition_topic(&self, raw: &str) -> bool {
        self.repartition_topics.iter().any(|t| t.name == raw)
    }

    /// The Kafka topic name of a topic as the topology writes it: repartition topics get the
    /// `<application.id>-` prefix, other topics keep their name.
    pub fn topic_name(&self, raw: &str) -> String {
        if self.is_repartition_topic(raw) { format!("{}-{raw}", self.application_id) } else { raw.to_owned() }
    }

    /// The changelog topic of a store: its `changelog_topic` if set, otherwise
    /// `<application.id>-<store>-changelog` when logging is enabled, otherwise none.
    pub fn changelog_topic(&self, store: &StateStore) -> Option<String> {
        match (&store.changelog_topic, store.logging_enabled) {
            (Some(topic), _) => Some(topic.clone()),
            (None, true) => Some(format!("{}-{}-changelog", self.application_id, store.name)),
            (None, false) => None,
        }
    }

    /// The sub-topology with this id.
    pub fn subtopology(&self, id: i32) -> Option<&Subtopology> {
        self.subtopologies.iter().find(|s| s.id == id)
    }

    /// A store by name, to change it (say, to mark a store parsed from `describe()` text as not
    /// logged).
    pub fn store_mut(&mut self, name: &str) -> Option<&mut StateStore> {
        self.subtopologies.iter_mut().flat_map(|s| s.stores.iter_mut()).find(|s| s.name == name)
    }

    /// The repartition topics' fixed partition counts, by raw name (`None` = derived).
    pub(crate) fn repartition_partitions(&self) -> BTreeMap<&str, Option<i32>> {
        self.repartition_topics.iter().map(|t| (t.name.as_str(), t.partitions)).collect()
    }
}

impl Subtopology {
    /// A sub-topology with no topics and no stores yet.
    pub fn new(id: i32) -> Self {
        Self { id, source_topics: Vec::new(), sink_topics: Vec::new(), stores: Vec::new() }
    }

    /// Adds source topics (raw names).
    pub fn with_source_topics<S: Into<String>>(mut self, topics: impl IntoIterator<Item = S>) -> Self {
        self.source_topics.extend(topics.into_iter().map(Into::into));
        self
    }

    /// Adds sink topics (raw names).
    pub fn with_sink_topics<S: Into<String>>(mut self, topics: impl IntoIterator<Item = S>) -> Self {
        self.sink_topics.extend(topics.into_iter().map(Into::into));
        self
    }

    /// Adds a state store.
    pub fn with_store(mut self, store: StateStore) -> Self {
        self.stores.push(store);
        self
    }
}

impl StateStore {
    /// A logged store (Kafka's default).
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), logging_enabled: true, changelog_topic: None }
    }

    /// A store with logging disabled: no changelog.
    pub fn unlogged(name: impl Into<String>) -> Self {
        Self { logging_enabled: false, ..Self::new(name) }
    }

    /// A store whose changelog is an existing topic (Kafka's source-topic reuse).
    pub fn with_changelog_topic(mut self, topic: impl Into<String>) -> Self {
        self.changelog_topic = Some(topic.into());
        self
    }
}

/// The keys a pattern subscription might be written with in the JSON.
const PATTERN_KEYS: [&str; 4] = ["sourceTopicPattern", "topicPattern", "sourcePattern", "pattern"];

/// When JSON that does not parse has a sub-topology with a pattern key: the error that says so.
fn pattern_source(text: &str) -> Option<TopologyError> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value.get("subtopologies")?.as_array()?.iter().enumerate().find_map(|(index, s)| {
        let key = PATTERN_KEYS.iter().find(|k| s.get(**k).is_some())?;
        Some(TopologyError::PatternSource { index, key: (*key).to_owned() })
    })
}
