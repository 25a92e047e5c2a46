//! The messages, field by field as Kafka's schemas give them, at the versions `kafka-protocol`
//! 0.18.0 decodes.

use crate::client::layout::Ty::*;
use crate::client::layout::{Layout, Message, f, tag};

/// `ApiVersionsResponse` (always read with header version 0).
pub const API_VERSIONS: Message = Message { body: &API_VERSIONS_RESPONSE, min_version: 0, max_version: 4, flexible: 3 };
/// `FindCoordinatorResponse`.
pub const FIND_COORDINATOR: Message = Message { body: &FIND_COORDINATOR_RESPONSE, min_version: 0, max_version: 6, flexible: 3 };
/// `JoinGroupResponse`.
pub const JOIN_GROUP: Message = Message { body: &JOIN_GROUP_RESPONSE, min_version: 0, max_version: 9, flexible: 6 };
/// `SyncGroupResponse`.
pub const SYNC_GROUP: Message = Message { body: &SYNC_GROUP_RESPONSE, min_version: 0, max_version: 5, flexible: 4 };
/// `HeartbeatResponse`.
pub const HEARTBEAT: Message = Message { body: &HEARTBEAT_RESPONSE, min_version: 0, max_version: 4, flexible: 4 };
/// `LeaveGroupResponse`.
pub const LEAVE_GROUP: Message = Message { body: &LEAVE_GROUP_RESPONSE, min_version: 0, max_version: 5, flexible: 4 };
/// `MetadataResponse`.
pub const METADATA: Message = Message { body: &METADATA_RESPONSE, min_version: 0, max_version: 13, flexible: 9 };
/// `CreateTopicsResponse`.
pub const CREATE_TOPICS: Message = Message { body: &CREATE_TOPICS_RESPONSE, min_version: 2, max_version: 7, flexible: 5 };
/// `ListOffsetsResponse`.
pub const LIST_OFFSETS: Message = Message { body: &LIST_OFFSETS_RESPONSE, min_version: 1, max_version: 10, flexible: 6 };
/// `DescribeGroupsResponse`.
pub const DESCRIBE_GROUPS: Message = Message { body: &DESCRIBE_GROUPS_RESPONSE, min_version: 0, max_version: 6, flexible: 5 };
/// `OffsetFetchResponse`.
pub const OFFSET_FETCH: Message = Message { body: &OFFSET_FETCH_RESPONSE, min_version: 1, max_version: 10, flexible: 6 };
/// `SaslHandshakeResponse` (never flexible).
pub const SASL_HANDSHAKE: Message = Message { body: &SASL_HANDSHAKE_RESPONSE, min_version: 0, max_version: 1, flexible: i16::MAX };
/// `SaslAuthenticateResponse`.
pub const SASL_AUTHENTICATE: Message = Message { body: &SASL_AUTHENTICATE_RESPONSE, min_version: 0, max_version: 2, flexible: 2 };
/// `ListGroupsResponse`.
pub const LIST_GROUPS: Message = Message { body: &LIST_GROUPS_RESPONSE, min_version: 0, max_version: 5, flexible: 3 };
/// `DescribeConfigsResponse`.
pub const DESCRIBE_CONFIGS: Message = Message { body: &DESCRIBE_CONFIGS_RESPONSE, min_version: 1, max_version: 4, flexible: 4 };


const API_VERSIONS_RESPONSE: Layout = Layout {
    name: "ApiVersionsResponse",
    fields: &[
        f("ErrorCode", 0, 4, I16),
        f("ApiKeys", 0, 4, Structs(&API_VERSION)),
        f("ThrottleTimeMs", 1, 4, I32),
    ],
    tags: &[
        tag(0, "SupportedFeatures", Structs(&SUPPORTED_FEATURE_KEY)),
        tag(1, "FinalizedFeaturesEpoch", I64),
        tag(2, "FinalizedFeatures", Structs(&FINALIZED_FEATURE_KEY)),
        tag(3, "ZkMigrationReady", Bool),
    ],
};

const API_VERSION: Layout = Layout {
    name: "ApiVersion",
    fields: &[
        f("ApiKey", 0, 4, I16),
        f("MinVersion", 0, 4, I16),
        f("MaxVersion", 0, 4, I16),
    ],
    tags: &[],
};

const SUPPORTED_FEATURE_KEY: Layout = Layout {
    name: "SupportedFeatureKey",
    fields: &[
        f("Name", 3, 4, Str),
        f("MinVersion", 3, 4, I16),
        f("MaxVersion", 3, 4, I16),
    ],
    tags: &[],
};

const FINALIZED_FEATURE_KEY: Layout = Layout {
    name: "FinalizedFeatureKey",
    fields: &[
        f("Name", 3, 4, Str),
        f("MaxVersionLevel", 3, 4, I16),
        f("MinVersionLevel", 3, 4, I16),
    ],
    tags: &[],
};

const FIND_COORDINATOR_RESPONSE: Layout = Layout {
    name: "FindCoordinatorResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 6, I32),
        f("ErrorCode", 0, 3, I16),
        f("ErrorMessage", 1, 3, Str),
        f("NodeId", 0, 3, I32),
        f("Host", 0, 3, Str),
        f("Port", 0, 3, I32),
        f("Coordinators", 4, 6, Structs(&COORDINATOR)),
    ],
    tags: &[],
};

const COORDINATOR: Layout = Layout {
    name: "Coordinator",
    fields: &[
        f("Key", 4, 6, Str),
        f("NodeId", 4, 6, I32),
        f("Host", 4, 6, Str),
        f("Port", 4, 6, I32),
        f("ErrorCode", 4, 6, I16),
        f("ErrorMessage", 4, 6, Str),
    ],
    tags: &[],
};

const JOIN_GROUP_RESPONSE: Layout = Layout {
    name: "JoinGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 9, I32),
        f("ErrorCode", 0, 9, I16),
        f("GenerationId", 0, 9, I32),
        f("ProtocolType", 7, 9, Str),
        f("ProtocolName", 0, 9, Str),
        f("Leader", 0, 9, Str),
        f("SkipAssignment", 9, 9, Bool),
        f("MemberId", 0, 9, Str),
        f("Members", 0, 9, Structs(&JOIN_GROUP_RESPONSE_MEMBER)),
    ],
    tags: &[],
};

const JOIN_GROUP_RESPONSE_MEMBER: Layout = Layout {
    name: "JoinGroupResponseMember",
    fields: &[
        f("MemberId", 0, 9, Str),
        f("GroupInstanceId", 5, 9, Str),
        f("Metadata", 0, 9, Bytes),
    ],
    tags: &[],
};

const SYNC_GROUP_RESPONSE: Layout = Layout {
    name: "SyncGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 5, I32),
        f("ErrorCode", 0, 5, I16),
        f("ProtocolType", 5, 5, Str),
        f("ProtocolName", 5, 5, Str),
        f("Assignment", 0, 5, Bytes),
    ],
    tags: &[],
};

const HEARTBEAT_RESPONSE: Layout = Layout {
    name: "HeartbeatResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 4, I32),
        f("ErrorCode", 0, 4, I16),
    ],
    tags: &[],
};

const LEAVE_GROUP_RESPONSE: Layout = Layout {
    name: "LeaveGroupResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 5, I32),
        f("ErrorCode", 0, 5, I16),
        f("Members", 3, 5, Structs(&MEMBER_RESPONSE)),
    ],
    tags: &[],
};

const MEMBER_RESPONSE: Layout = Layout {
    name: "MemberResponse",
    fields: &[
        f("MemberId", 3, 5, Str),
        f("GroupInstanceId", 3, 5, Str),
        f("ErrorCode", 3, 5, I16),
    ],
    tags: &[],
};

const METADATA_RESPONSE: Layout = Layout {
    name: "MetadataResponse",
    fields: &[
        f("ThrottleTimeMs", 3, 13, I32),
        f("Brokers", 0, 13, Structs(&METADATA_RESPONSE_BROKER)),
        f("ClusterId", 2, 13, Str),
        f("ControllerId", 1, 13, I32),
        f("Topics", 0, 13, Structs(&METADATA_RESPONSE_TOPIC)),
        f("ClusterAuthorizedOperations", 8, 10, I32),
        f("ErrorCode", 13, 13, I16),
    ],
    tags: &[],
};

const METADATA_RESPONSE_BROKER: Layout = Layout {
    name: "MetadataResponseBroker",
    fields: &[
        f("NodeId", 0, 13, I32),
        f("Host", 0, 13, Str),
        f("Port", 0, 13, I32),
        f("Rack", 1, 13, Str),
    ],
    tags: &[],
};

const METADATA_RESPONSE_TOPIC: Layout = Layout {
    name: "MetadataResponseTopic",
    fields: &[
        f("ErrorCode", 0, 13, I16),
        f("Name", 0, 13, Str),
        f("TopicId", 10, 13, Uuid),
        f("IsInternal", 1, 13, Bool),
        f("Partitions", 0, 13, Structs(&METADATA_RESPONSE_PARTITION)),
        f("TopicAuthorizedOperations", 8, 13, I32),
    ],
    tags: &[],
};

const METADATA_RESPONSE_PARTITION: Layout = Layout {
    name: "MetadataResponsePartition",
    fields: &[
        f("ErrorCode", 0, 13, I16),
        f("PartitionIndex", 0, 13, I32),
        f("LeaderId", 0, 13, I32),
        f("LeaderEpoch", 7, 13, I32),
        f("ReplicaNodes", 0, 13, I32s),
        f("IsrNodes", 0, 13, I32s),
        f("OfflineReplicas", 5, 13, I32s),
    ],
    tags: &[],
};

const CREATE_TOPICS_RESPONSE: Layout = Layout {
    name: "CreateTopicsResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 7, I32),
        f("Topics", 2, 7, Structs(&CREATABLE_TOPIC_RESULT)),
    ],
    tags: &[],
};

const CREATABLE_TOPIC_RESULT: Layout = Layout {
    name: "CreatableTopicResult",
    fields: &[
        f("Name", 2, 7, Str),
        f("TopicId", 7, 7, Uuid),
        f("ErrorCode", 2, 7, I16),
        f("ErrorMessage", 2, 7, Str),
        f("NumPartitions", 5, 7, I32),
        f("ReplicationFactor", 5, 7, I16),
        f("Configs", 5, 7, Structs(&CREATABLE_TOPIC_CONFIGS)),
    ],
    tags: &[
        tag(0, "TopicConfigErrorCode", I16),
    ],
};

const CREATABLE_TOPIC_CONFIGS: Layout = Layout {
    name: "CreatableTopicConfigs",
    fields: &[
        f("Name", 5, 7, Str),
        f("Value", 5, 7, Str),
        f("ReadOnly", 5, 7, Bool),
        f("ConfigSource", 5, 7, I8),
        f("IsSensitive", 5, 7, Bool),
    ],
    tags: &[],
};

const LIST_OFFSETS_RESPONSE: Layout = Layout {
    name: "ListOffsetsResponse",
    fields: &[
        f("ThrottleTimeMs", 2, 10, I32),
        f("Topics", 1, 10, Structs(&LIST_OFFSETS_TOPIC_RESPONSE)),
    ],
    tags: &[],
};

const LIST_OFFSETS_TOPIC_RESPONSE: Layout = Layout {
    name: "ListOffsetsTopicResponse",
    fields: &[
        f("Name", 1, 10, Str),
        f("Partitions", 1, 10, Structs(&LIST_OFFSETS_PARTITION_RESPONSE)),
    ],
    tags: &[],
};

const LIST_OFFSETS_PARTITION_RESPONSE: Layout = Layout {
    name: "ListOffsetsPartitionResponse",
    fields: &[
        f("PartitionIndex", 1, 10, I32),
        f("ErrorCode", 1, 10, I16),
        f("Timestamp", 1, 10, I64),
        f("Offset", 1, 10, I64),
        f("LeaderEpoch", 4, 10, I32),
    ],
    tags: &[],
};

const LIST_GROUPS_RESPONSE: Layout = Layout {
    name: "ListGroupsResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 5, I32),
        f("ErrorCode", 0, 5, I16),
        f("Groups", 0, 5, Structs(&LISTED_GROUP)),
    ],
    tags: &[],
};

const LISTED_GROUP: Layout = Layout {
    name: "ListedGroup",
    fields: &[
        f("GroupId", 0, 5, Str),
        f("ProtocolType", 0, 5, Str),
        f("GroupState", 4, 5, Str),
        f("GroupType", 5, 5, Str),
    ],
    tags: &[],
};

const DESCRIBE_CONFIGS_RESPONSE: Layout = Layout {
    name: "DescribeConfigsResponse",
    fields: &[f("ThrottleTimeMs", 1, 4, I32), f("Results", 1, 4, Structs(&DESCRIBE_CONFIGS_RESULT))],
    tags: &[],
};

const DESCRIBE_CONFIGS_RESULT: Layout = Layout {
    name: "DescribeConfigsResult",
    fields: &[
        f("ErrorCode", 1, 4, I16),
        f("ErrorMessage", 1, 4, Str),
        f("ResourceType", 1, 4, I8),
        f("ResourceName", 1, 4, Str),
        f("Configs", 1, 4, Structs(&DESCRIBE_CONFIGS_RESOURCE_RESULT)),
    ],
    tags: &[],
};

const DESCRIBE_CONFIGS_RESOURCE_RESULT: Layout = Layout {
    name: "DescribeConfigsResourceResult",
    fields: &[
        f("Name", 1, 4, Str),
        f("Value", 1, 4, Str),
        f("ReadOnly", 1, 4, Bool),
        f("ConfigSource", 1, 4, I8),
        f("IsSensitive", 1, 4, Bool),
        f("Synonyms", 1, 4, Structs(&DESCRIBE_CONFIGS_SYNONYM)),
        f("ConfigType", 3, 4, I8),
        f("Documentation", 3, 4, Str),
    ],
    tags: &[],
};

const DESCRIBE_CONFIGS_SYNONYM: Layout = Layout {
    name: "DescribeConfigsSynonym",
    fields: &[f("Name", 1, 4, Str), f("Value", 1, 4, Str), f("Source", 1, 4, I8)],
    tags: &[],
};

const DESCRIBE_GROUPS_RESPONSE: Layout = Layout {
    name: "DescribeGroupsResponse",
    fields: &[
        f("ThrottleTimeMs", 1, 6, I32),
        f("Groups", 0, 6, Structs(&DESCRIBED_GROUP)),
    ],
    tags: &[],
};

const DESCRIBED_GROUP: Layout = Layout {
    name: "DescribedGroup",
    fields: &[
        f("ErrorCode", 0, 6, I16),
        f("ErrorMessage", 6, 6, Str),
        f("GroupId", 0, 6, Str),
        f("GroupState", 0, 6, Str),
        f("ProtocolType", 0, 6, Str),
        f("ProtocolData", 0, 6, Str),
        f("Members", 0, 6, Structs(&DESCRIBED_GROUP_MEMBER)),
        f("AuthorizedOperations", 3, 6, I32),
    ],
    tags: &[],
};

const DESCRIBED_GROUP_MEMBER: Layout = Layout {
    name: "DescribedGroupMember",
    fields: &[
        f("MemberId", 0, 6, Str),
        f("GroupInstanceId", 4, 6, Str),
        f("ClientId", 0, 6, Str),
        f("ClientHost", 0, 6, Str),
        f("MemberMetadata", 0, 6, Bytes),
        f("MemberAssignment", 0, 6, Bytes),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE: Layout = Layout {
    name: "OffsetFetchResponse",
    fields: &[
        f("ThrottleTimeMs", 3, 10, I32),
        f("Topics", 1, 7, Structs(&OFFSET_FETCH_RESPONSE_TOPIC)),
        f("ErrorCode", 2, 7, I16),
        f("Groups", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_GROUP)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_TOPIC: Layout = Layout {
    name: "OffsetFetchResponseTopic",
    fields: &[
        f("Name", 1, 7, Str),
        f("Partitions", 1, 7, Structs(&OFFSET_FETCH_RESPONSE_PARTITION)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_PARTITION: Layout = Layout {
    name: "OffsetFetchResponsePartition",
    fields: &[
        f("PartitionIndex", 1, 7, I32),
        f("CommittedOffset", 1, 7, I64),
        f("CommittedLeaderEpoch", 5, 7, I32),
        f("Metadata", 1, 7, Str),
        f("ErrorCode", 1, 7, I16),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_GROUP: Layout = Layout {
    name: "OffsetFetchResponseGroup",
    fields: &[
        f("GroupId", 8, 10, Str),
        f("Topics", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_TOPICS)),
        f("ErrorCode", 8, 10, I16),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_TOPICS: Layout = Layout {
    name: "OffsetFetchResponseTopics",
    fields: &[
        f("Name", 8, 9, Str),
        f("TopicId", 10, 10, Uuid),
        f("Partitions", 8, 10, Structs(&OFFSET_FETCH_RESPONSE_PARTITIONS)),
    ],
    tags: &[],
};

const OFFSET_FETCH_RESPONSE_PARTITIONS: Layout = Layout {
    name: "OffsetFetchResponsePartitions",
    fields: &[
        f("PartitionIndex", 8, 10, I32),
        f("CommittedOffset", 8, 10, I64),
        f("CommittedLeaderEpoch", 8, 10, I32),
        f("Metadata", 8, 10, Str),
        f("ErrorCode", 8, 10, I16),
    ],
    tags: &[],
};

const SASL_HANDSHAKE_RESPONSE: Layout = Layout {
    name: "SaslHandshakeResponse",
    fields: &[
        f("ErrorCode", 0, 1, I16),
        // An array of strings: a message that is never flexible has no tagged fields, so each
        // element is one string, as an array of one-string structs is.
        f("Mechanisms", 0, 1, Structs(&MECHANISM)),
    ],
    tags: &[],
};

const MECHANISM: Layout = Layout {
    name: "Mechanism",
    fields: &[
        f("Name", 0, 1, Str),
    ],
    tags: &[],
};

const SASL_AUTHENTICATE_RESPONSE: Layout = Layout {
    name: "SaslAuthenticateResponse",
    fields: &[
        f("ErrorCode", 0, 2, I16),
        f("ErrorMessage", 0, 2, Str),
        f("AuthBytes", 0, 2, Bytes),
        f("SessionLifetimeMs", 1, 2, I64),
    ],
    tags: &[],
};
