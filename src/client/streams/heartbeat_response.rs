//! `StreamsGroupHeartbeatResponse` (API key 88), versions 0–1, flexible from v0: the member's
//! epoch, its target tasks (null when unchanged), the group's statuses and settings.

use serde::Serialize;
use serde_json::Value;

use crate::client::streams::compact::{
    array, i32s, nullable_array, nullable_string, put_array, put_i32s, put_no_tags, put_nullable_array,
    put_nullable_string, put_string, string, tagged_fields, Struct,
};
use crate::client::streams::describe_response::{Endpoint, TaskIds};
use crate::client::streams::{check_version, refuse_trailing};
use crate::wire::codec::{Reader, Writer};
use crate::wire::{DecodeError, DecodeErrorKind, EncodeError, Lenience, MessageKind};

const MSG: MessageKind = MessageKind::StreamsGroupHeartbeatResponse;

/// The coordinator's answer to a [`StreamsGroupHeartbeatRequest`](super::StreamsGroupHeartbeatRequest).
///
/// ```
/// use kstreams_assignor::client::streams::StreamsGroupHeartbeatResponse;
///
/// let mut ok = StreamsGroupHeartbeatResponse::default();
/// ok.member_id = "m-1".into();
/// ok.member_epoch = 3;
/// ok.acceptable_recovery_lag = 10_000;
/// let bytes = ok.encode(1).unwrap();
/// assert_eq!(StreamsGroupHeartbeatResponse::decode(&bytes, 1).unwrap(), ok);
/// assert_eq!(ok.recovery_lag(), Some(10_000));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamsGroupHeartbeatResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `ErrorCode` (0: none).
    pub error_code: i16,
    /// `ErrorMessage` (nullable).
    pub error_message: Option<String>,
    /// `MemberId`.
    pub member_id: String,
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `HeartbeatIntervalMs`.
    pub heartbeat_interval_ms: i32,
    /// `AcceptableRecoveryLagLegacy` (v0 only).
    pub acceptable_recovery_lag_legacy: i32,
    /// `TaskOffsetIntervalMs`.
    pub task_offset_interval_ms: i32,
    /// `AcceptableRecoveryLag` (v1+, ignorable; -1: the broker does not say).
    pub acceptable_recovery_lag: i64,
    /// `Status`: zero or more statuses of the group (nullable).
    pub status: Option<Vec<Status>>,
    /// `ActiveTasks` to own (null if unchanged).
    pub active_tasks: Option<Vec<TaskIds>>,
    /// `StandbyTasks` to own (null if unchanged).
    pub standby_tasks: Option<Vec<TaskIds>>,
    /// `WarmupTasks` to own (null if unchanged).
    pub warmup_tasks: Option<Vec<TaskIds>>,
    /// `TopologyDescriptionRequired` (v1+).
    pub topology_description_required: bool,
    /// `EndpointInformationEpoch`.
    pub endpoint_information_epoch: i32,
    /// `PartitionsByUserEndpoint`: who serves which partitions, for Interactive Queries (null if
    /// unchanged).
    pub partitions_by_user_endpoint: Option<Vec<EndpointToPartitions>>,
}

impl Default for StreamsGroupHeartbeatResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            member_id: String::new(),
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            acceptable_recovery_lag_legacy: 0,
            task_offset_interval_ms: 0,
            acceptable_recovery_lag: -1,
            status: None,
            active_tasks: None,
            standby_tasks: None,
            warmup_tasks: None,
            topology_description_required: false,
            endpoint_information_epoch: 0,
            partitions_by_user_endpoint: None,
        }
    }
}

/// `Status`: a condition of the member's group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Status {
    /// `StatusCode` (see [`StatusCode`]).
    pub status_code: i8,
    /// `StatusDetail`, in words.
    pub status_detail: String,
}

/// The status codes of Kafka 4.4's `StreamsGroupHeartbeatResponse.Status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusCode {
    /// 0: the member's topology epoch is not the group's.
    StaleTopology,
    /// 1: source topics are missing, or a source topic regex matches none.
    MissingSourceTopics,
    /// 2: topics that must be co-partitioned are not.
    IncorrectlyPartitionedTopics,
    /// 3: internal topics are missing (the coordinator creates them).
    MissingInternalTopics,
    /// 4: a client asked the whole application to shut down.
    ShutdownApplication,
    /// 5: the coordinator delayed the assignment.
    AssignmentDelayed,
    /// 6: client tags the rack-aware standby assignment needs are missing.
    MissingClientTags,
    /// A code this version does not know.
    Other(i8),
}

impl StatusCode {
    /// The code's meaning.
    pub fn from_code(code: i8) -> Self {
        match code {
            0 => Self::StaleTopology,
            1 => Self::MissingSourceTopics,
            2 => Self::IncorrectlyPartitionedTopics,
            3 => Self::MissingInternalTopics,
            4 => Self::ShutdownApplication,
            5 => Self::AssignmentDelayed,
            6 => Self::MissingClientTags,
            other => Self::Other(other),
        }
    }

    /// Whether the group can run its tasks under this status (Java's `isGroupReady`): not
    /// while topics are missing or wrongly partitioned, or the assignment is delayed.
    pub fn group_ready(self) -> bool {
        !matches!(
            self,
            Self::MissingSourceTopics | Self::MissingInternalTopics | Self::IncorrectlyPartitionedTopics | Self::AssignmentDelayed
        )
    }
}

/// `EndpointToPartitions`: the partitions one endpoint serves.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EndpointToPartitions {
    /// `UserEndpoint`.
    pub user_endpoint: Endpoint,
    /// `ActivePartitions`.
    pub active_partitions: Vec<TopicPartitions>,
    /// `StandbyPartitions` (standby and warm-up tasks).
    pub standby_partitions: Vec<TopicPartitions>,
}

/// `TopicPartition`: some partitions of a topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopicPartitions {
    /// `Topic`.
    pub topic: String,
    /// `Partitions`.
    pub partitions: Vec<i32>,
}

impl Struct for Status {
    // Code 1, detail 1, tags 1.
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let s = Self { status_code: r.i8("Status.StatusCode")?, status_detail: string(r, "Status.StatusDetail")? };
        tagged_fields(r, "Status._tagged_fields")?;
        Ok(s)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        w.i8(self.status_code);
        put_string(w, "Status.StatusDetail", &self.status_detail)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for EndpointToPartitions {
    // Endpoint 4, two arrays 1 each, tags 1.
    const MIN_SIZE: usize = 7;

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let e = Self {
            user_endpoint: Endpoint::read(r, version)?,
            active_partitions: array(r, "ActivePartitions", version)?,
            standby_partitions: array(r, "StandbyPartitions", version)?,
        };
        tagged_fields(r, "EndpointToPartitions._tagged_fields")?;
        Ok(e)
    }

    fn write(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        self.user_endpoint.write(w, version)?;
        put_array(w, "ActivePartitions", &self.active_partitions, version)?;
        put_array(w, "StandbyPartitions", &self.standby_partitions, version)?;
        put_no_tags(w);
        Ok(())
    }
}

impl Struct for TopicPartitions {
    // Topic 1, partitions 1, tags 1.
    const MIN_SIZE: usize = 3;

    fn read(r: &mut Reader<'_>, _: i16) -> Result<Self, DecodeError> {
        let t = Self { topic: string(r, "TopicPartition.Topic")?, partitions: i32s(r, "TopicPartition.Partitions")? };
        tagged_fields(r, "TopicPartition._tagged_fields")?;
        Ok(t)
    }

    fn write(&self, w: &mut Writer, _: i16) -> Result<(), EncodeError> {
        put_string(w, "TopicPartition.Topic", &self.topic)?;
        put_i32s(w, "TopicPartition.Partitions", &self.partitions)?;
        put_no_tags(w);
        Ok(())
    }
}

impl StreamsGroupHeartbeatResponse {
    /// The acceptable recovery lag the coordinator gave: v1's `AcceptableRecoveryLag`, else
    /// v0's legacy field; `None` when neither says (-1, or a negative legacy value).
    pub fn recovery_lag(&self) -> Option<i64> {
        [self.acceptable_recovery_lag, self.acceptable_recovery_lag_legacy.into()].into_iter().find(|&v| v >= 0)
    }

    /// Whether the statuses let the group run its tasks (Java's `isGroupReady`).
    pub fn group_ready(&self) -> bool {
        self.status.iter().flatten().all(|s| StatusCode::from_code(s.status_code).group_ready())
    }

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
        let mut out = Self {
            throttle_time_ms: r.i32("ThrottleTimeMs")?,
            error_code: r.i16("ErrorCode")?,
            error_message: nullable_string(&mut r, "ErrorMessage")?,
            member_id: string(&mut r, "MemberId")?,
            member_epoch: r.i32("MemberEpoch")?,
            heartbeat_interval_ms: r.i32("HeartbeatIntervalMs")?,
            ..Self::default()
        };
        if version == 0 {
            out.acceptable_recovery_lag_legacy = r.i32("AcceptableRecoveryLagLegacy")?;
        }
        out.task_offset_interval_ms = r.i32("TaskOffsetIntervalMs")?;
        if version >= 1 {
            out.acceptable_recovery_lag = r.i64("AcceptableRecoveryLag")?;
        }
        out.status = nullable_array(&mut r, "Status", version)?;
        out.active_tasks = nullable_array(&mut r, "ActiveTasks", version)?;
        out.standby_tasks = nullable_array(&mut r, "StandbyTasks", version)?;
        out.warmup_tasks = nullable_array(&mut r, "WarmupTasks", version)?;
        if version >= 1 {
            out.topology_description_required = super::compact::boolean(&mut r, "TopologyDescriptionRequired")?;
        }
        out.endpoint_information_epoch = r.i32("EndpointInformationEpoch")?;
        out.partitions_by_user_endpoint = nullable_array(&mut r, "PartitionsByUserEndpoint", version)?;
        tagged_fields(&mut r, "_tagged_fields")?;
        refuse_trailing(&r)?;
        Ok((out, r.finish()))
    }

    /// Encodes the body at `version`. At v0, v1's ignorable `AcceptableRecoveryLag` is left
    /// out, and `TopologyDescriptionRequired` set is an error; at v1 the legacy field is.
    pub fn encode(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        check_version(version).map_err(|(min, max)| EncodeError::UnsupportedVersion { message: MSG, version: version.into(), min, max })?;
        if version < 1 && self.topology_description_required {
            let field = "TopologyDescriptionRequired";
            return Err(EncodeError::FieldNotInVersion { message: MSG, field, version: version.into(), since: 1 });
        }
        let mut w = Writer::new(MSG, 64);
        w.i32(self.throttle_time_ms);
        w.i16(self.error_code);
        put_nullable_string(&mut w, "ErrorMessage", self.error_message.as_deref())?;
        put_string(&mut w, "MemberId", &self.member_id)?;
        w.i32(self.member_epoch);
        w.i32(self.heartbeat_interval_ms);
        if version == 0 {
            w.i32(self.acceptable_recovery_lag_legacy);
        }
        w.i32(self.task_offset_interval_ms);
        if version >= 1 {
            w.i64(self.acceptable_recovery_lag);
        }
        put_nullable_array(&mut w, "Status", self.status.as_deref(), version)?;
        put_nullable_array(&mut w, "ActiveTasks", self.active_tasks.as_deref(), version)?;
        put_nullable_array(&mut w, "StandbyTasks", self.standby_tasks.as_deref(), version)?;
        put_nullable_array(&mut w, "WarmupTasks", self.warmup_tasks.as_deref(), version)?;
        if version >= 1 {
            w.i8(i8::from(self.topology_description_required));
        }
        w.i32(self.endpoint_information_epoch);
        put_nullable_array(&mut w, "PartitionsByUserEndpoint", self.partitions_by_user_endpoint.as_deref(), version)?;
        put_no_tags(&mut w);
        Ok(w.finish())
    }

    /// The JSON Kafka's `StreamsGroupHeartbeatResponseDataJsonConverter` writes at `version`:
    /// `acceptableRecoveryLagLegacy` at v0 only, `acceptableRecoveryLag` and
    /// `topologyDescriptionRequired` from v1.
    pub fn to_json(&self, version: i16) -> Value {
        let mut json = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(obj) = json.as_object_mut() {
            let drop: &[&str] =
                if version < 1 { &["acceptableRecoveryLag", "topologyDescriptionRequired"] } else { &["acceptableRecoveryLagLegacy"] };
            for key in drop {
                obj.remove(*key);
            }
        }
        json
    }
}
