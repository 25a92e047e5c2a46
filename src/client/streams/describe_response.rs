//! `StreamsGroupDescribeResponse` (API key 89), versions 0–1, flexible from v0.
//!
//! The structs follow Kafka's `StreamsGroupDescribeResponse.json` field for field; their JSON
//! (serde) uses the spec's names in camelCase, as Kafka's generated `JsonConverter` writes them.
//! Version 1 added `TopologyDescription`, `TopologyDescriptionStatus` and `AssignorName` to each
//! group: [`StreamsGroupDescribeResponse::to_json`] leaves them out at v0, as Kafka does.

use serde::Serialize;
use serde_json::Value;

use crate::client::streams::check_version;
use crate::client::streams::compact::{
    Struct, array, boolean, i32s, nullable_array, nullable_string, nullable_struct, put_array, put_i32s, put_no_tags,
    put_nullable_array, put_nullable_string, put_nullable_struct, put_string, put_strings, string, strings, tagged_fields,
};
use crate::client::streams::topology_description::TopologyDescription;
use crate::wire::codec::{Reader, Writer};
use crate::wire::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};

const MSG: MessageKind = MessageKind::StreamsGroupDescribeResponse;

/// `AuthorizedOperations` when the request did not ask for them (`Integer.MIN_VALUE`).
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// A `StreamsGroupDescribeResponse`. Valid versions: 0–1.
///
/// ```
/// use kstreams_assignor::client::streams::StreamsGroupDescribeResponse;
///
/// // Throttle 0, one group: GROUP_ID_NOT_FOUND (69), message "no", group "g", state "",
/// // epochs 0 and 0, no topology, no members, operations -2^31, no tagged fields.
/// let mut body = vec![0, 0, 0, 0, 2, 0, 69, 3, b'n', b'o', 2, b'g', 1];
/// body.extend([0, 0, 0, 0, 0, 0, 0, 0, 0xff, 1, 0x80, 0, 0, 0, 0, 0]);
/// let response = StreamsGroupDescribeResponse::decode(&body, 0).unwrap();
/// assert_eq!(response.groups[0].error_code, 69);
/// assert_eq!(response.groups[0].error_message.as_deref(), Some("no"));
/// assert_eq!(response.encode(0).unwrap(), body);
/// // A count of 2^28 groups in 9 bytes is refused before anything is reserved.
/// let err = StreamsGroupDescribeResponse::decode(&[0, 0, 0, 0, 0x81, 0x80, 0x80, 0x80, 0x01], 0).unwrap_err();
/// assert_eq!((err.field, err.offset), ("Groups", 4));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamsGroupDescribeResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `Groups`: each described group.
    pub groups: Vec<DescribedGroup>,
}

/// One described group (`DescribedGroup`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DescribedGroup {
    /// `ErrorCode`: 0, or why the group is not described (`GROUP_ID_NOT_FOUND` 69 for a group
    /// that does not exist or is not a streams group, `GROUP_AUTHORIZATION_FAILED` 30, …).
    pub error_code: i16,
    /// `ErrorMessage` (nullable).
    pub error_message: Option<String>,
    /// `GroupId`.
    pub group_id: String,
    /// `GroupState` (`Empty`, `NotReady`, `Assigning`, `Reconciling`, `Stable`, `Dead`), or empty.
    pub group_state: String,
    /// `GroupEpoch`.
    pub group_epoch: i32,
    /// `AssignmentEpoch`: the epoch of the target assignment.
    pub assignment_epoch: i32,
    /// `Topology` (nullable: null on a describe error).
    pub topology: Option<Topology>,
    /// `Members`.
    pub members: Vec<Member>,
    /// `AuthorizedOperations`: a bit field, or [`AUTHORIZED_OPERATIONS_OMITTED`].
    pub authorized_operations: i32,
    /// `TopologyDescription` (since v1, nullable).
    pub topology_description: Option<TopologyDescription>,
    /// `TopologyDescriptionStatus` (since v1): 0 not requested, 1 not stored, 2 error, 3 available.
    pub topology_description_status: i8,
    /// `AssignorName` (since v1, nullable): the assignor of the next assignment.
    pub assignor_name: Option<String>,
}

impl Default for DescribedGroup {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            group_epoch: 0,
            assignment_epoch: 0,
            topology: None,
            members: Vec::new(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            topology_description: None,
            topology_description_status: 0,
            assignor_name: None,
        }
    }
}

/// `Topology`: the topology the group coordinator has initialized.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Topology {
    /// `Epoch`.
    pub epoch: i32,
    /// `Subtopologies` (nullable: null while the group is not initialized, or its source topics
    /// are missing or wrongly partitioned).
    pub subtopologies: Option<Vec<Subtopology>>,
}

/// `Subtopology`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Subtopology {
    /// `SubtopologyId`.
    pub subtopology_id: String,
    /// `SourceTopics`.
    pub source_topics: Vec<String>,
    /// `RepartitionSinkTopics`.
    pub repartition_sink_topics: Vec<String>,
    /// `StateChangelogTopics`.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// `RepartitionSourceTopics`.
    pub repartition_source_topics: Vec<TopicInfo>,
}

/// `TopicInfo`: an internal topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopicInfo {
    /// `Name`.
    pub name: String,
    /// `Partitions` (0: not enforced; always 0 for changelogs).
    pub partitions: i32,
    /// `ReplicationFactor` (0: the broker's default).
    pub replication_factor: i16,
    /// `TopicConfigs`.
    pub topic_configs: Vec<KeyValue>,
}

/// `KeyValue`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct KeyValue {
    /// `Key`.
    pub key: String,
    /// `Value`.
    pub value: String,
}

/// `Member`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Member {
    /// `MemberId`.
    pub member_id: String,
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `InstanceId` (nullable).
    pub instance_id: Option<String>,
    /// `RackId` (nullable).
    pub rack_id: Option<String>,
    /// `ClientId`.
    pub client_id: String,
    /// `ClientHost`.
    pub client_host: String,
    /// `TopologyEpoch`: the topology epoch of the client.
    pub topology_epoch: i32,
    /// `ProcessId`.
    pub process_id: String,
    /// `UserEndpoint` (nullable): the endpoint for Interactive Queries.
    pub user_endpoint: Option<Endpoint>,
    /// `ClientTags`.
    pub client_tags: Vec<KeyValue>,
    /// `TaskOffsets`: the cumulative changelog offsets the member reported per task.
    pub task_offsets: Vec<TaskOffset>,
    /// `TaskEndOffsets`: the cumulative changelog end offsets the member reported per task.
    pub task_end_offsets: Vec<TaskOffset>,
    /// `Assignment`: the current assignment.
    pub assignment: Assignment,
    /// `TargetAssignment`.
    pub target_assignment: Assignment,
    /// `IsClassic`: a classic member not upgraded yet.
    pub is_classic: bool,
}

/// `Endpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Endpoint {
    /// `Host`.
    pub host: String,
    /// `Port`.
    pub port: u16,
}

/// `TaskOffset`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskOffset {
    /// `SubtopologyId`.
    pub subtopology_id: String,
    /// `Partition`.
    pub partition: i32,
    /// `Offset`.
    pub offset: i64,
}

/// `Assignment`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Assignment {
    /// `ActiveTasks`.
    pub active_tasks: Vec<TaskIds>,
    /// `StandbyTasks`.
    pub standby_tasks: Vec<TaskIds>,
    /// `WarmupTasks`.
    pub warmup_tasks: Vec<TaskIds>,
}

/// `TaskIds`: the partitions of one subtopology.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIds {
    /// `SubtopologyId`.
    pub subtopology_id: String,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

/// The fields added in v1, refused when encoding at v0 with a value other than the default.
fn refuse_v1_fields(g: &DescribedGroup, version: i16) -> Result<(), EncodeError> {
    let set = [
        ("TopologyDescription", g.topology_description.is_some()),
        ("TopologyDescriptionStatus", g.topology_description_status != 0),
        ("AssignorName", g.assignor_name.is_some()),
    ];
    match set.into_iter().find(|&(_, set)| set && version < 1) {
        Some((field, _)) => Err(EncodeError::FieldNotInVersion { message: MSG, field, version: version.into(), since: 1 }),
        None => Ok(()),
    }
}

impl Struct for DescribedGroup {
    // Error code 2, message 1, id 1, state 1, epochs 8, topology 1, members 1, operations 4, tags 1.
    const MIN_SIZE: usize = 20;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut g = Self {
            error_code: r.i16("ErrorCode")?,
            error_message: nullable_string(r, "ErrorMessage")?,
            group_id: string(r, "GroupId")?,
            group_state: string(r, "GroupState")?,
            group_epoch: r.i32("GroupEpoch")?,
            assignment_epoch: r.i32("AssignmentEpoch")?,
            topology: nullable_struct(r, "Topology", version)?,
            members: array(r, "Members", version)?,
            authorized_operations: r.i32("AuthorizedOperations")?,
            ..Self::default()
        };
        if version >= 1 {
            g.topology_description = nullable_struct(r, "TopologyDescription", version)?;
            g.topology_description_status = r.i8("TopologyDescriptionStatus")?;
            g.assignor_name = nullable_string(r, "AssignorName")?;
        }
        tagged_fields(r, "DescribedGroup._tagged_fields")?;
        Ok(g)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        refuse_v1_fields(self, version)?;
        w.i16(self.error_code);
        put_nullable_string(w, "ErrorMessage", self.error_message.as_deref())?;
        put_string(w, "GroupId", &self.group_id)?;
        put_string(w, "GroupState", &self.group_state)?;
        w.i32(self.group_epoch);
        w.i32(self.assignment_epoch);
        put_nullable_struct(w, self.topology.as_ref(), version)?;
        put_array(w, "Members", &self.members, version)?;
        w.i32(self.authorized_operations);
        if version >= 1 {
            put_nullable_struct(w, self.topology_description.as_ref(), version)?;
            w.i8(self.topology_description_status);
            put_nullable_string(w, "AssignorName", self.assignor_name.as_deref())?;
        }
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for Topology {
    const MIN_SIZE: usize = 6;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let t = Self { epoch: r.i32("Topology.Epoch")?, subtopologies: nullable_array(r, "Subtopologies", version)? };
        tagged_fields(r, "Topology._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        w.i32(self.epoch);
        put_nullable_array(w, "Subtopologies", self.subtopologies.as_deref(), version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for Subtopology {
    const MIN_SIZE: usize = 6;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let s = Self {
            subtopology_id: string(r, "Subtopology.SubtopologyId")?,
            source_topics: strings(r, "SourceTopics")?,
            repartition_sink_topics: strings(r, "RepartitionSinkTopics")?,
            state_changelog_topics: array(r, "StateChangelogTopics", version)?,
            repartition_source_topics: array(r, "RepartitionSourceTopics", version)?,
        };
        tagged_fields(r, "Subtopology._tagged_fields")?;
        Ok(s)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_string(w, "Subtopology.SubtopologyId", &self.subtopology_id)?;
        put_strings(w, "SourceTopics", &self.source_topics)?;
        put_strings(w, "RepartitionSinkTopics", &self.repartition_sink_topics)?;
        put_array(w, "StateChangelogTopics", &self.state_changelog_topics, version)?;
        put_array(w, "RepartitionSourceTopics", &self.repartition_source_topics, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TopicInfo {
    const MIN_SIZE: usize = 9;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let t = Self {
            name: string(r, "TopicInfo.Name")?,
            partitions: r.i32("TopicInfo.Partitions")?,
            replication_factor: r.i16("TopicInfo.ReplicationFactor")?,
            topic_configs: array(r, "TopicConfigs", version)?,
        };
        tagged_fields(r, "TopicInfo._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_string(w, "TopicInfo.Name", &self.name)?;
        w.i32(self.partitions);
        w.i16(self.replication_factor);
        put_array(w, "TopicConfigs", &self.topic_configs, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for KeyValue {
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let kv = Self { key: string(r, "KeyValue.Key")?, value: string(r, "KeyValue.Value")? };
        tagged_fields(r, "KeyValue._tagged_fields")?;
        Ok(kv)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "KeyValue.Key", &self.key)?;
        put_string(w, "KeyValue.Value", &self.value)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for Member {
    // Ids and strings 1 each (6), epochs 8, endpoint 1, arrays 3, assignments 2 × 4, classic 1, tags 1.
    const MIN_SIZE: usize = 28;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let m = Self {
            member_id: string(r, "MemberId")?,
            member_epoch: r.i32("MemberEpoch")?,
            instance_id: nullable_string(r, "InstanceId")?,
            rack_id: nullable_string(r, "RackId")?,
            client_id: string(r, "ClientId")?,
            client_host: string(r, "ClientHost")?,
            topology_epoch: r.i32("TopologyEpoch")?,
            process_id: string(r, "ProcessId")?,
            user_endpoint: nullable_struct(r, "UserEndpoint", version)?,
            client_tags: array(r, "ClientTags", version)?,
            task_offsets: array(r, "TaskOffsets", version)?,
            task_end_offsets: array(r, "TaskEndOffsets", version)?,
            assignment: Assignment::read(r, version)?,
            target_assignment: Assignment::read(r, version)?,
            is_classic: boolean(r, "IsClassic")?,
        };
        tagged_fields(r, "Member._tagged_fields")?;
        Ok(m)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_string(w, "MemberId", &self.member_id)?;
        w.i32(self.member_epoch);
        put_nullable_string(w, "InstanceId", self.instance_id.as_deref())?;
        put_nullable_string(w, "RackId", self.rack_id.as_deref())?;
        put_string(w, "ClientId", &self.client_id)?;
        put_string(w, "ClientHost", &self.client_host)?;
        w.i32(self.topology_epoch);
        put_string(w, "ProcessId", &self.process_id)?;
        put_nullable_struct(w, self.user_endpoint.as_ref(), version)?;
        put_array(w, "ClientTags", &self.client_tags, version)?;
        put_array(w, "TaskOffsets", &self.task_offsets, version)?;
        put_array(w, "TaskEndOffsets", &self.task_end_offsets, version)?;
        self.assignment.write(w, version)?;
        self.target_assignment.write(w, version)?;
        w.i8(i8::from(self.is_classic));
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for Endpoint {
    const MIN_SIZE: usize = 4;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let e = Self { host: string(r, "Endpoint.Host")?, port: r.u16("Endpoint.Port")? };
        tagged_fields(r, "Endpoint._tagged_fields")?;
        Ok(e)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "Endpoint.Host", &self.host)?;
        w.u16(self.port);
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TaskOffset {
    const MIN_SIZE: usize = 14;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let t = Self {
            subtopology_id: string(r, "TaskOffset.SubtopologyId")?,
            partition: r.i32("TaskOffset.Partition")?,
            offset: r.i64("TaskOffset.Offset")?,
        };
        tagged_fields(r, "TaskOffset._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "TaskOffset.SubtopologyId", &self.subtopology_id)?;
        w.i32(self.partition);
        w.i64(self.offset);
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for Assignment {
    const MIN_SIZE: usize = 4;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let a = Self {
            active_tasks: array(r, "ActiveTasks", version)?,
            standby_tasks: array(r, "StandbyTasks", version)?,
            warmup_tasks: array(r, "WarmupTasks", version)?,
        };
        tagged_fields(r, "Assignment._tagged_fields")?;
        Ok(a)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        put_array(w, "ActiveTasks", &self.active_tasks, version)?;
        put_array(w, "StandbyTasks", &self.standby_tasks, version)?;
        put_array(w, "WarmupTasks", &self.warmup_tasks, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TaskIds {
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let t = Self { subtopology_id: string(r, "TaskIds.SubtopologyId")?, partitions: i32s(r, "TaskIds.Partitions")? };
        tagged_fields(r, "TaskIds._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "TaskIds.SubtopologyId", &self.subtopology_id)?;
        put_i32s(w, "TaskIds.Partitions", &self.partitions)?;
        put_no_tags(w);
        Ok(())
    }
}

impl StreamsGroupDescribeResponse {
    /// Decodes a body (after the response header) at `version`; every byte must be used.
    pub fn decode(bytes: &[u8], version: i16) -> Result<Self, DecodeError> {
        Self::decode_reporting(bytes, version).map(|(r, _)| r)
    }

    /// As [`decode`](Self::decode), with the strings whose invalid UTF-8 was replaced.
    pub fn decode_reporting(bytes: &[u8], version: i16) -> Result<(Self, Vec<Lenience>), DecodeError> {
        let mut r = Reader::new(bytes, MSG);
        if let Err((min, max)) = check_version(version) {
            return Err(r.error_at(0, "version", DecodeErrorKind::UnsupportedVersion { version: version.into(), min, max }));
        }
        let throttle_time_ms = r.i32("ThrottleTimeMs")?;
        let groups = array(&mut r, "Groups", version)?;
        tagged_fields(&mut r, "_tagged_fields")?;
        crate::client::streams::refuse_trailing(&r)?;
        Ok((Self { throttle_time_ms, groups }, r.finish()))
    }

    /// Encodes the body at `version`; a v1 field set at v0 is an error.
    pub fn encode(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        check_version(version).map_err(|(min, max)| EncodeError::UnsupportedVersion { message: MSG, version: version.into(), min, max })?;
        let mut w = Writer::new(MSG, 64);
        w.i32(self.throttle_time_ms);
        put_array(&mut w, "Groups", &self.groups, version)?;
        put_no_tags(&mut w);
        Ok(w.finish())
    }

    /// The JSON that Kafka's `StreamsGroupDescribeResponseDataJsonConverter` writes for this
    /// response at `version`: the spec's field names, v1 fields only from v1.
    pub fn to_json(&self, version: i16) -> Value {
        let mut json = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(groups) = json.get_mut("groups").and_then(Value::as_array_mut) {
            for g in groups.iter_mut().filter_map(Value::as_object_mut) {
                strip_v1(g, version);
            }
        }
        json
    }
}

/// Removes the v1 keys of one group's JSON at versions before 1.
pub(crate) fn strip_v1(group: &mut serde_json::Map<String, Value>, version: i16) {
    if version < 1 {
        for key in ["topologyDescription", "topologyDescriptionStatus", "assignorName"] {
            group.remove(key);
        }
    }
}
