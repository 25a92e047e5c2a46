//! The `TopologyDescription` of a `StreamsGroupDescribeResponse` group (since v1): the
//! processor graph the application registered, as Kafka's topology description plugin stores it.

use serde::Serialize;

use crate::client::streams::compact::{
    Struct, array, nullable_string, put_array, put_no_tags, put_nullable_string, put_string, put_strings, string, strings, tagged_fields,
};
use crate::wire::codec::{Reader, Writer};
use crate::wire::{DecodeError, EncodeError};

/// `TopologyDescription` (since v1).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopologyDescription {
    /// `Subtopologies`.
    pub subtopologies: Vec<TopologyDescriptionSubtopology>,
    /// `GlobalStores`.
    pub global_stores: Vec<TopologyDescriptionGlobalStore>,
}

/// `TopologyDescriptionSubtopology`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopologyDescriptionSubtopology {
    /// `SubtopologyId`.
    pub subtopology_id: String,
    /// `Nodes`.
    pub nodes: Vec<TopologyDescriptionNode>,
}

/// `TopologyDescriptionNode`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopologyDescriptionNode {
    /// `Name`.
    pub name: String,
    /// `NodeType`: 1 source, 2 processor, 3 sink.
    pub node_type: i8,
    /// `SourceTopics`.
    pub source_topics: Vec<String>,
    /// `SinkTopic` (nullable).
    pub sink_topic: Option<String>,
    /// `Stores`.
    pub stores: Vec<String>,
    /// `Successors`.
    pub successors: Vec<String>,
}

/// `TopologyDescriptionGlobalStore`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopologyDescriptionGlobalStore {
    /// `Source`.
    pub source: TopologyDescriptionNode,
    /// `Processor`.
    pub processor: TopologyDescriptionNode,
}

impl Struct for TopologyDescription {
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let t = Self {
            subtopologies: array(r, "TopologyDescription.Subtopologies", version)?,
            global_stores: array(r, "GlobalStores", version)?,
        };
        tagged_fields(r, "TopologyDescription._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_array(w, "TopologyDescription.Subtopologies", &self.subtopologies, version)?;
        put_array(w, "GlobalStores", &self.global_stores, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TopologyDescriptionSubtopology {
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let s = Self { subtopology_id: string(r, "TopologyDescriptionSubtopology.SubtopologyId")?, nodes: array(r, "Nodes", version)? };
        tagged_fields(r, "TopologyDescriptionSubtopology._tagged_fields")?;
        Ok(s)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_string(w, "TopologyDescriptionSubtopology.SubtopologyId", &self.subtopology_id)?;
        put_array(w, "Nodes", &self.nodes, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TopologyDescriptionNode {
    const MIN_SIZE: usize = 7;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let n = Self {
            name: string(r, "Node.Name")?,
            node_type: r.i8("Node.NodeType")?,
            source_topics: strings(r, "Node.SourceTopics")?,
            sink_topic: nullable_string(r, "Node.SinkTopic")?,
            stores: strings(r, "Node.Stores")?,
            successors: strings(r, "Node.Successors")?,
        };
        tagged_fields(r, "Node._tagged_fields")?;
        Ok(n)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "Node.Name", &self.name)?;
        w.i8(self.node_type);
        put_strings(w, "Node.SourceTopics", &self.source_topics)?;
        put_nullable_string(w, "Node.SinkTopic", self.sink_topic.as_deref())?;
        put_strings(w, "Node.Stores", &self.stores)?;
        put_strings(w, "Node.Successors", &self.successors)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TopologyDescriptionGlobalStore {
    const MIN_SIZE: usize = 15;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let g = Self { source: TopologyDescriptionNode::read(r, version)?, processor: TopologyDescriptionNode::read(r, version)? };
        tagged_fields(r, "GlobalStore._tagged_fields")?;
        Ok(g)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        self.source.write(w, version)?;
        self.processor.write(w, version)?;
        put_no_tags(w);
        Ok(())
    }
}
