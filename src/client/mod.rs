//! A Kafka protocol client, the room under the member and the operator's views: connections with
//! one deadline per request ([`connection`]), TLS and SASL and the client configuration that
//! chooses them ([`net`]), the broker messages' layouts ([`layout`]), the admin calls the leader
//! and `describe` make ([`admin`]), and the streams-group messages the `kafka-protocol` crate
//! lacks ([`streams`]). It knows nothing of the rooms that use it.

pub mod admin;
pub mod connection;
pub mod layout;
pub mod net;
pub mod streams;

use std::time::{SystemTime, UNIX_EPOCH};

/// The current epoch time in ms: the one reading of the OS clock for the blocking drivers (the
/// member's and `watch`'s); their sans-IO cores take the time as an argument.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
