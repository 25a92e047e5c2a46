//! What is under a [`Connection`](crate::client::connection::Connection): the transport (TCP or TLS
//! with a per-request deadline), SASL, the client configuration that chooses them, and the
//! errors in words.

pub mod client_config;
pub mod error;
pub mod properties;
pub mod sasl;
pub mod transport;
