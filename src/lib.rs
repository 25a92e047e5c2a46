//! Kafka Streams' rebalance protocol, byte for byte, and its task assignors.
//!
//! Kafka Streams members put a private payload, `SubscriptionInfo`, in their consumer-group
//! JoinGroup metadata; the group leader answers each member with an `AssignmentInfo` in
//! SyncGroup. The [`wire`] module encodes and decodes every version of both, and the
//! consumer-protocol envelope around them, exactly as the Java classes do.
//!
//! ```
//! use kstreams_assignor::wire::{SubscriptionEnvelope, SubscriptionInfo};
//!
//! // JoinGroup member metadata as `tshark -e kafka.protocol_metadata` prints it.
//! let hex = "0003000000010005696e707574000000290000000b0000000b00112233445566778899aabbccddeeff\
//!            000000000000000001000000000000000000000000ffffffffffff";
//! let envelope = SubscriptionEnvelope::decode(&hex::decode(hex).unwrap()).unwrap();
//! assert_eq!((envelope.topics.as_slice(), envelope.rack()), (&["input".to_string()][..], None));
//! assert!(envelope.trailing_bytes.is_empty());
//! let info = SubscriptionInfo::decode(envelope.user_data.as_deref().unwrap()).unwrap();
//! assert_eq!(info.version, 11);
//! assert_eq!(info.process_id.to_string(), "00112233-4455-6677-8899-aabbccddeeff");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod engine;
pub mod flow;
pub mod interrupt;
#[cfg(feature = "net")]
pub mod client;
mod jdk;
pub mod leader;
#[cfg(feature = "net")]
pub mod member;
pub mod plugin;
pub mod report;
pub mod rng;
pub mod sim;
#[cfg(feature = "net")]
pub mod views;
pub mod wire;

#[doc(hidden)]
pub mod fuzzing;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
