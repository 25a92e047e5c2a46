//! The operator's views of a group, over a [`client`](crate::client) connection and read-only:
//! [`describe`] of a classic group (its members' subscriptions and assignments decoded, the
//! metadata record's size), [`streams`] for a KIP-1071 streams group, and [`watch`], which
//! follows a group of either protocol and explains each rebalance, and [`ui`], the same watch as a
//! live web page.

pub mod describe;
pub mod serve;
pub mod streams;
pub mod ui;
pub mod watch;
