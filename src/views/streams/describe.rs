//! `describe` for a group of either rebalance protocol: which kind the group is, then
//! `StreamsGroupDescribe` for a streams group (KIP-1071) or the classic `describe_group`.
//!
//! # Which kind of group
//!
//! The group's coordinator is asked with `ListGroups`: from v5 (Kafka 3.8) each listed group has
//! its `GroupType` (`classic`, `consumer`, `streams`, `share`). A `streams` group is described
//! with `StreamsGroupDescribe`, a `classic` one as before; `consumer` and `share` groups are not
//! Kafka Streams groups and are refused with a message that says what they are. A group the
//! coordinator does not list (it does not exist, the caller may not describe it, or the broker
//! is older than ListGroups v5) is asked with `StreamsGroupDescribe` when the broker has it:
//! the answer tells a missing group (`GROUP_ID_NOT_FOUND`) from a forbidden one
//! (`GROUP_AUTHORIZATION_FAILED`); a group that is not a streams group then goes to the classic
//! path, where a `Dead` group without members does not exist.
//!
//! # What a streams group shows
//!
//! `StreamsGroupDescribe` answers per member with its current and its target assignment,
//! active, standby and warm-up tasks apart (this protocol names warm-ups; the classic one does
//! not), and with the changelog offset sums it last reported per task (`TaskOffsets`) next to the
//! end offset sums it reported (`TaskEndOffsets`). Their difference is the member's own lag per
//! task, as of its last heartbeat that carried them: [`member_lags`]. The coordinator holds no
//! end offsets of its own, so tasks the member did not report have no lag, and a sentinel the
//! member sent instead of an offset (Long.MAX_VALUE while it does not know a changelog's end)
//! is shown as an unknown lag ([`ReportedLag`]), never as a number.
//!
//! The errors ([`StreamsDescribeError`]) each say what happened in a sentence; the command line
//! exits with code 1 for all of them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, ListGroupsRequest};

use crate::client::streams::{
    API_KEY, DescribedGroup, MAX_VERSION, MIN_VERSION, REQUEST_HEADER_VERSION, RESPONSE_HEADER_VERSION, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
};
use crate::client::admin::{BrokerErrorCode, retry_coordinator};
use crate::client::connection::{Connection, ConnectionError, ErrorCode, check, find_coordinator};
use crate::views::describe::{self as classic, DescribeGroupError};
use crate::client::net::client_config::Security;
use crate::leader::Topology;
use crate::wire::{DecodeError, EncodeError, UNKNOWN_END_OFFSET_SUM};

/// `GROUP_AUTHORIZATION_FAILED`.
pub const GROUP_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(30);
/// `GROUP_ID_NOT_FOUND`.
pub const GROUP_ID_NOT_FOUND: ErrorCode = ErrorCode(69);

/// Why a group cannot be described.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamsDescribeError {
    /// A broker request failed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The classic describe failed.
    #[error(transparent)]
    Classic(#[from] DescribeGroupError),
    /// The group does not exist.
    #[error("group `{group}` does not exist on {broker}{}", if *.streams_supported { "" } else {
        " (the broker has no StreamsGroupDescribe, so only classic groups were looked for)" })]
    NotFound {
        /// The group.
        group: String,
        /// The coordinator.
        broker: String,
        /// Whether the broker supports `StreamsGroupDescribe`.
        streams_supported: bool,
    },
    /// The group is of a kind that Kafka Streams does not use.
    #[error("group `{group}` is a {group_type} group{}, not a Kafka Streams group", kind_note(group_type))]
    NotStreams {
        /// The group.
        group: String,
        /// Its `GroupType` as `ListGroups` names it.
        group_type: String,
    },
    /// The caller may not describe the group.
    #[error("not authorized to describe group `{group}` on {broker} (GROUP_AUTHORIZATION_FAILED): the principal needs DESCRIBE on the group{}",
        message.as_deref().map(|m| format!("; the broker says: {m}")).unwrap_or_default())]
    Unauthorized {
        /// The group.
        group: String,
        /// The coordinator.
        broker: String,
        /// The broker's message.
        message: Option<String>,
    },
    /// The group is a streams group but the broker does not answer `StreamsGroupDescribe`.
    #[error("group `{group}` is a streams group, but {broker} does not support StreamsGroupDescribe (API key 89, versions {}; \
        this client {MIN_VERSION}..={MAX_VERSION}): Kafka 4.1 or later with the streams rebalance protocol enabled is needed",
        versions.map_or("none".to_owned(), |(a, b)| format!("{a}..={b}")))]
    UnsupportedBroker {
        /// The group.
        group: String,
        /// The coordinator.
        broker: String,
        /// The broker's version range of API key 89, if it lists it.
        versions: Option<(i16, i16)>,
    },
    /// `StreamsGroupDescribe` answered with another error code.
    #[error("StreamsGroupDescribe of `{group}` on {broker}: {code}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The group.
        group: String,
        /// The coordinator.
        broker: String,
        /// The error code.
        code: ErrorCode,
        /// The broker's message.
        message: Option<String>,
    },
    /// The response does not decode.
    #[error("StreamsGroupDescribe v{version} response from {broker}: {source}")]
    Decode {
        /// The coordinator.
        broker: String,
        /// The version.
        version: i16,
        /// The decoder's error.
        #[source]
        source: DecodeError,
    },
    /// The request cannot be encoded.
    #[error("StreamsGroupDescribe request: {0}")]
    Encode(#[from] EncodeError),
    /// The broker answered without the group.
    #[error("{broker} answered StreamsGroupDescribe without group `{group}`")]
    Missing {
        /// The group.
        group: String,
        /// The coordinator.
        broker: String,
    },
}

fn kind_note(group_type: &str) -> &'static str {
    match group_type {
        "consumer" => " (the consumer rebalance protocol of KIP-848, group.protocol=consumer)",
        "share" => " (a share group, KIP-932)",
        _ => "",
    }
}

impl BrokerErrorCode for StreamsDescribeError {
    fn broker_error_code(&self) -> Option<ErrorCode> {
        match self {
            Self::Connection(e) => e.code(),
            Self::Classic(e) => e.broker_error_code(),
            Self::Broker { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// A streams group as `StreamsGroupDescribe` describes it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamsGroupDescription {
    /// The version the response was read at.
    pub version: i16,
    /// The coordinator that answered (`host:port`).
    pub coordinator: String,
    /// The group, its members sorted by member id.
    pub group: DescribedGroup,
}

/// A described group of either protocol.
#[derive(Debug, Clone)]
pub enum Described {
    /// A classic group (`DescribeGroups`).
    Classic(classic::DescribedGroup),
    /// A streams group (`StreamsGroupDescribe`).
    Streams(StreamsGroupDescription),
}

/// The version of `StreamsGroupDescribe` to send: the highest both sides know, or `None`.
pub fn negotiate(broker: Option<(i16, i16)>) -> Option<i16> {
    let (min, max) = broker?;
    let v = max.min(MAX_VERSION);
    (v >= min.max(MIN_VERSION)).then_some(v)
}

/// Describes `group` through `bootstrap` (servers, comma-separated, tried in turn), whichever
/// its kind (see the [module docs](self)). `topology` is used for a classic group's lags;
/// `timeout` bounds the whole call, retries of coordinator errors included.
pub fn describe_any(
    bootstrap: &str,
    group: &str,
    topology: Option<&Topology>,
    security: &Security,
    timeout: Duration,
) -> Result<Described, StreamsDescribeError> {
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let client_id = "kstreams-assignor-describe";
    // One FindCoordinator: the kind is asked of the coordinator, which then describes the group
    // with the call its kind needs, on the same connections.
    let found = retry_coordinator(deadline, || {
        let mut conn = Connection::bootstrap(bootstrap, client_id, security, left())?;
        let address = find_coordinator(&mut conn, group)?;
        let mut coordinator = if address == conn.broker() { None } else { Some(conn.open(&address)?) };
        let coord = coordinator.as_mut().unwrap_or(&mut conn);
        let listed = group_type(coord, group)?;
        let versions = coord.broker_versions(API_KEY);
        let streams_supported = negotiate(versions).is_some();
        let broker = coord.broker().to_owned();
        let streams = match listed.as_deref() {
            Some("classic") => None,
            Some("streams") => Some(streams_describe(coord, group, versions, left())?),
            Some(other) => return Err(StreamsDescribeError::NotStreams { group: group.to_owned(), group_type: other.to_owned() }),
            None if streams_supported => match streams_describe(coord, group, versions, left()) {
                Err(StreamsDescribeError::Broker { code: GROUP_ID_NOT_FOUND, .. }) => None,
                other => Some(other?),
            },
            None => None,
        };
        let found = match streams {
            Some(d) => Found::Streams(Box::new(d)),
            None => {
                let not_found = || StreamsDescribeError::NotFound { group: group.to_owned(), broker: broker.clone(), streams_supported };
                match classic::describe_groups(coord, group, left()) {
                    Err(DescribeGroupError::Connection(e)) if e.code() == Some(GROUP_ID_NOT_FOUND) => return Err(not_found()),
                    Ok(g) if g.group_state.as_str() == "Dead" && g.members.is_empty() => return Err(not_found()),
                    Ok(g) => Found::Classic(Box::new((conn, coordinator, g))),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        Ok(found)
    })?;
    match found {
        Found::Streams(d) => Ok(Described::Streams(*d)),
        Found::Classic(found) => {
            let (conn, coordinator, g) = *found;
            Ok(Described::Classic(classic::describe_found(conn, coordinator, g, topology, deadline)?))
        }
    }
}

/// What the coordinator found: a streams group described, or a classic group's answer with the
/// connections to finish describing it on.
enum Found {
    Streams(Box<StreamsGroupDescription>),
    Classic(Box<(Connection, Option<Connection>, classic::DescribedGroupRaw)>),
}

/// The group's `GroupType` as its coordinator lists it (`ListGroups` v5+), or `None` when it is
/// not listed or the broker predates v5.
fn group_type(coord: &mut Connection, group: &str) -> Result<Option<String>, ConnectionError> {
    if coord.version::<ListGroupsRequest>().is_err() {
        return Ok(None);
    }
    let response = coord.call(&ListGroupsRequest::default())?;
    check(coord.broker(), ApiKey::ListGroups, response.error_code, None)?;
    let version = coord.version::<ListGroupsRequest>()?;
    Ok(response
        .groups
        .iter()
        .find(|g| g.group_id.0.as_str() == group)
        .filter(|_| version >= 5)
        .map(|g| g.group_type.to_ascii_lowercase()))
}

/// `StreamsGroupDescribe` of `group` at the coordinator `coord`, whose range of API key 89 is
/// `versions`.
pub fn streams_describe(
    coord: &mut Connection,
    group: &str,
    versions: Option<(i16, i16)>,
    timeout: Duration,
) -> Result<StreamsGroupDescription, StreamsDescribeError> {
    let broker = coord.broker().to_owned();
    let version = negotiate(versions)
        .ok_or_else(|| StreamsDescribeError::UnsupportedBroker { group: group.to_owned(), broker: broker.clone(), versions })?;
    let request = StreamsGroupDescribeRequest::new(vec![group.to_owned()]).encode(version)?;
    let body = coord.call_raw("StreamsGroupDescribe", API_KEY, version, REQUEST_HEADER_VERSION, &request, RESPONSE_HEADER_VERSION, timeout)?;
    let response = StreamsGroupDescribeResponse::decode(&body, version)
        .map_err(|source| StreamsDescribeError::Decode { broker: broker.clone(), version, source })?;
    let mut g = response
        .groups
        .into_iter()
        .find(|g| g.group_id == group)
        .ok_or_else(|| StreamsDescribeError::Missing { group: group.to_owned(), broker: broker.clone() })?;
    match ErrorCode(g.error_code) {
        ErrorCode::NONE => {}
        GROUP_AUTHORIZATION_FAILED => {
            return Err(StreamsDescribeError::Unauthorized { group: group.to_owned(), broker, message: g.error_message });
        }
        code => return Err(StreamsDescribeError::Broker { group: group.to_owned(), broker, code, message: g.error_message }),
    }
    g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    Ok(StreamsGroupDescription { version, coordinator: broker, group: g })
}

/// A member's lag on one task as it reported it: records, or unknown and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedLag {
    /// The end offset sum less the offset sum, at least 0.
    Records(i64),
    /// No number can be told from what the member reported.
    Unknown(UnknownLag),
}

/// Why a reported lag is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownLag {
    /// The member reported the end offset sum as Long.MAX_VALUE
    /// ([`UNKNOWN_END_OFFSET_SUM`]): it does not know a changelog's end offset yet.
    EndOffsetUnknown,
    /// The member reported its offset sum as Long.MAX_VALUE: the sum overflowed.
    OffsetSumOverflowed,
    /// The member reported a negative offset sum or end offset sum, which no changelog has.
    Negative,
}

impl UnknownLag {
    /// The reason in words, for text and JSON.
    pub fn reason(self) -> &'static str {
        match self {
            Self::EndOffsetUnknown => "the member does not know the changelog end offset yet (it reported Long.MAX_VALUE)",
            Self::OffsetSumOverflowed => "the member's offset sum overflowed (it reported Long.MAX_VALUE)",
            Self::Negative => "the member reported a negative offset",
        }
    }
}

impl ReportedLag {
    /// The lag of offset sum `offset` against end offset sum `end`, as a member reported them.
    pub fn of(offset: i64, end: i64) -> Self {
        match (offset, end) {
            (_, UNKNOWN_END_OFFSET_SUM) => Self::Unknown(UnknownLag::EndOffsetUnknown),
            (UNKNOWN_END_OFFSET_SUM, _) => Self::Unknown(UnknownLag::OffsetSumOverflowed),
            (o, e) if o < 0 || e < 0 => Self::Unknown(UnknownLag::Negative),
            (o, e) => Self::Records((e - o).max(0)),
        }
    }

    /// The records, when known.
    pub fn records(self) -> Option<i64> {
        match self {
            Self::Records(r) => Some(r),
            Self::Unknown(_) => None,
        }
    }
}

impl std::fmt::Display for ReportedLag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Records(r) => write!(f, "{r}"),
            Self::Unknown(_) => f.write_str("unknown"),
        }
    }
}

/// Per task (`subtopologyId_partition`), the member's lag as it reported it: its end offset sum
/// (`TaskEndOffsets`) minus its offset sum (`TaskOffsets`), at least 0, for the tasks it
/// reported both for; unknown where either is a sentinel rather than an offset
/// ([`ReportedLag::of`]): Kafka Streams reports Long.MAX_VALUE as the end offset sum of a task
/// while it does not know a changelog's end offset.
///
/// ```
/// use kstreams_assignor::client::streams::{Member, TaskOffset};
/// use kstreams_assignor::views::streams::describe::{ReportedLag, UnknownLag, member_lags};
///
/// let t = |p, offset| { let mut t = TaskOffset::default(); t.subtopology_id = "0".into(); t.partition = p; t.offset = offset; t };
/// let mut m = Member::default();
/// m.task_offsets = vec![t(0, 90), t(1, 5), t(3, 5)];
/// m.task_end_offsets = vec![t(0, 100), t(2, 7), t(3, i64::MAX)];
/// assert_eq!(
///     member_lags(&m).into_iter().collect::<Vec<_>>(),
///     [("0_0".to_owned(), ReportedLag::Records(10)), ("0_3".to_owned(), ReportedLag::Unknown(UnknownLag::EndOffsetUnknown))]
/// );
/// ```
pub fn member_lags(m: &crate::client::streams::Member) -> BTreeMap<String, ReportedLag> {
    let key = |t: &crate::client::streams::TaskOffset| format!("{}_{}", t.subtopology_id, t.partition);
    let ends: BTreeMap<String, i64> = m.task_end_offsets.iter().map(|t| (key(t), t.offset)).collect();
    m.task_offsets
        .iter()
        .filter_map(|t| {
            let k = key(t);
            let end = *ends.get(&k)?;
            Some((k, ReportedLag::of(t.offset, end)))
        })
        .collect()
}
