//! The `describe` of a KIP-1071 streams group ([`describe`]: the group's kind from ListGroups
//! and either path) over the [`StreamsGroupDescribe`](crate::client::streams) messages, and its
//! text ([`text`]).

pub mod describe;
pub mod text;
