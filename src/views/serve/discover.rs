//! Which groups of a cluster are Kafka Streams groups.
//!
//! Every broker is asked with `ListGroups` (each lists the groups it coordinates): a group of
//! type `streams` (KIP-1071, `ListGroups` v5) is one; a classic group (type `classic`, or no type
//! from a broker older than v5) of protocol type `consumer` is one when a member's metadata
//! decodes as a Kafka Streams `SubscriptionInfo` in its consumer envelope, which `DescribeGroups`
//! to the same broker tells, all such groups of a broker in one request. A classic group without
//! members has no metadata to tell by: it is not found here, but one already followed is kept
//! while it is listed ([`Discovery::keep`]). Consumer groups of KIP-848 (type `consumer`) and
//! share groups are not Kafka Streams groups.
//!
//! Every request has the discovery's deadline; a broker that does not answer within it makes
//! the discovery fail (the groups it coordinates cannot be told from deleted ones), and the
//! followed groups are kept until a discovery succeeds.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, DescribeGroupsRequest, GroupId, ListGroupsRequest};
use kafka_protocol::protocol::StrBytes;

use crate::client::admin::fetch_metadata;
use crate::client::connection::{Connection, ConnectionError, check};
use crate::client::net::client_config::Security;
use crate::views::watch::Protocol;
use crate::wire::{SubscriptionEnvelope, SubscriptionInfo};

/// What `ListGroups` says of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// The group id.
    pub group: String,
    /// Its protocol type (`consumer` for Kafka Streams' classic groups).
    pub protocol_type: String,
    /// Its type, lower case (`classic`, `consumer`, `streams`, `share`), empty before v5.
    pub group_type: String,
}

/// What a listed group may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A streams group (KIP-1071).
    Streams,
    /// A classic group of the consumer protocol: a Kafka Streams group when a member's metadata
    /// is Kafka Streams' ([`is_streams_subscription`]).
    ClassicConsumer,
    /// Not a Kafka Streams group.
    Other,
}

/// The kind of `listed` (see the [module docs](self)).
///
/// ```
/// use kstreams_assignor::views::serve::discover::{Kind, Listed, kind};
///
/// let l = |t: &str, p: &str| Listed::new("g", p, t);
/// assert_eq!(kind(&l("streams", "streams")), Kind::Streams);
/// assert_eq!(kind(&l("classic", "consumer")), Kind::ClassicConsumer);
/// assert_eq!(kind(&l("", "consumer")), Kind::ClassicConsumer, "a broker before ListGroups v5");
/// assert_eq!(kind(&l("consumer", "consumer")), Kind::Other, "KIP-848 consumer group");
/// assert_eq!(kind(&l("classic", "connect")), Kind::Other);
/// ```
pub fn kind(listed: &Listed) -> Kind {
    match (listed.group_type.as_str(), listed.protocol_type.as_str()) {
        ("streams", _) => Kind::Streams,
        ("classic" | "", "consumer") => Kind::ClassicConsumer,
        _ => Kind::Other,
    }
}

impl Listed {
    /// A listed group.
    pub fn new(group: &str, protocol_type: &str, group_type: &str) -> Self {
        Self {
            group: group.to_owned(),
            protocol_type: protocol_type.to_owned(),
            group_type: group_type.to_ascii_lowercase(),
        }
    }
}

/// Whether `metadata`, a classic member's JoinGroup metadata, is a consumer subscription whose
/// user data decodes as Kafka Streams' `SubscriptionInfo`.
///
/// ```
/// use kstreams_assignor::views::serve::discover::is_streams_subscription;
///
/// assert!(!is_streams_subscription(b""));
/// assert!(!is_streams_subscription(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0]), "a plain consumer: no user data");
/// ```
pub fn is_streams_subscription(metadata: &[u8]) -> bool {
    SubscriptionEnvelope::decode(metadata)
        .ok()
        .and_then(|env| env.user_data)
        .is_some_and(|user_data| SubscriptionInfo::decode(&user_data).is_ok())
}

/// The Kafka Streams groups found, each with its protocol.
pub type Found = BTreeMap<String, Protocol>;

/// What a discovery saw: the Kafka Streams groups, and every group listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Discovery {
    /// The Kafka Streams groups.
    pub streams: Found,
    /// Every group listed, of any kind, with its kind.
    pub listed: BTreeMap<String, Kind>,
}

impl Discovery {
    /// Whether a group followed as `protocol` is still to be followed: found again, or a classic
    /// group still listed as one of the consumer protocol (its members may all be gone for now).
    pub fn keep(&self, group: &str, protocol: Protocol) -> bool {
        self.streams.contains_key(group)
            || (protocol == Protocol::Classic
                && self.listed.get(group) == Some(&Kind::ClassicConsumer))
    }
}

const CLIENT_ID: &str = "kstreams-assignor-serve";

/// Lists every group of the cluster through `bootstrap` and finds the Kafka Streams ones (see the
/// [module docs](self)), every request within `timeout` of the start.
pub fn discover(
    bootstrap: &str,
    security: &Security,
    timeout: Duration,
) -> Result<Discovery, ConnectionError> {
    let deadline = Instant::now() + timeout;
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    let mut conn = Connection::bootstrap(bootstrap, CLIENT_ID, security, left())?;
    let metadata = fetch_metadata(&mut conn, &[])?;
    let mut brokers: Vec<String> = metadata
        .brokers
        .iter()
        .map(|b| format!("{}:{}", b.host, b.port))
        .collect();
    brokers.sort();
    brokers.dedup();
    let mut out = Discovery::default();
    for broker in &brokers {
        let mut other = if broker == conn.broker() {
            None
        } else {
            Some(Connection::connect(broker, CLIENT_ID, security, left())?)
        };
        let coord = other.as_mut().unwrap_or(&mut conn);
        let listed = list_groups(coord, left())?;
        let mut candidates = Vec::new();
        for l in listed {
            let k = kind(&l);
            match k {
                Kind::Streams => {
                    out.streams.insert(l.group.clone(), Protocol::Streams);
                }
                Kind::ClassicConsumer => candidates.push(l.group.clone()),
                Kind::Other => {}
            }
            out.listed.insert(l.group, k);
        }
        for group in streams_members(coord, &candidates, left())? {
            out.streams.insert(group, Protocol::Classic);
        }
    }
    Ok(out)
}

/// Every group `coord` coordinates.
fn list_groups(coord: &mut Connection, timeout: Duration) -> Result<Vec<Listed>, ConnectionError> {
    let response = coord.call_with_timeout(&ListGroupsRequest::default(), timeout)?;
    check(
        coord.broker(),
        ApiKey::ListGroups,
        response.error_code,
        None,
    )?;
    Ok(response
        .groups
        .iter()
        .map(|g| {
            Listed::new(
                g.group_id.0.as_str(),
                g.protocol_type.as_str(),
                g.group_type.as_str(),
            )
        })
        .collect())
}

/// Those of `groups` (classic, of the consumer protocol, coordinated by `coord`) with a member
/// whose metadata is Kafka Streams' subscription. A group gone since it was listed is not one.
fn streams_members(
    coord: &mut Connection,
    groups: &[String],
    timeout: Duration,
) -> Result<Vec<String>, ConnectionError> {
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let ids = groups
        .iter()
        .map(|g| GroupId(StrBytes::from_string(g.clone())))
        .collect();
    let response =
        coord.call_with_timeout(&DescribeGroupsRequest::default().with_groups(ids), timeout)?;
    Ok(response
        .groups
        .iter()
        .filter(|g| {
            g.error_code == 0
                && g.members
                    .iter()
                    .any(|m| is_streams_subscription(&m.member_metadata))
        })
        .map(|g| g.group_id.0.to_string())
        .collect())
}
