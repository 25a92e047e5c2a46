//! `ui`: a live page of a group of either protocol, fed by the [`watch`](crate::views::watch)
//! driver and served over HTTP from this process, read-only.
//!
//! The driver's reports fold into a [`LiveState`] ([`state`]); the [`server`] serves the page
//! (HTML, CSS and JavaScript compiled into the binary: nothing from elsewhere), the state as JSON
//! and a stream of server-sent events with each change; [`http`] is the little HTTP it speaks,
//! sans-IO, and who may see the page ([`Access`]).
//!
//! # Who may see the page
//!
//! Without a token the server listens only on a loopback address ([`access_for`] refuses
//! another) and answers only requests whose `Host` is a loopback name (`127.0.0.1`, `localhost`,
//! `[::1]`, any port: a tunnel's works), so that a page of another site cannot read it through a
//! name of its own (DNS rebinding). With a token, every request
//! carries it: once in the query (`/?token=…`, answered with a cookie and a redirect that drops
//! it from the address bar), then in the cookie, or in an `Authorization: Bearer` header. The
//! server only reads: it answers `GET` and nothing else, and the driver only describes the group.

pub mod http;
pub mod server;
pub mod state;

use std::net::{SocketAddr, TcpListener};

pub use http::Access;
pub use state::LiveState;

/// The address `ui` listens on when not told.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8088";

/// Why the page cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UiError {
    /// A non-loopback address without a token.
    #[error(
        "--listen {0} is not a loopback address: a page other hosts can reach needs --token (at least {min} letters, digits \
         or `-._~`, e.g. from `openssl rand -hex 16`); without one, listen on 127.0.0.1 or [::1]",
        min = http::MIN_TOKEN_LEN
    )]
    NeedsToken(SocketAddr),
    /// A token too short or with characters that do not travel in a query or a cookie as they are.
    #[error(
        "--token: at least {min} characters, each a letter, a digit or one of `-._~` (e.g. from `openssl rand -hex 16`)",
        min = http::MIN_TOKEN_LEN
    )]
    BadToken,
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}{}", if source.kind() == std::io::ErrorKind::AddrInUse {
        " (another program has the port: choose another with --listen)" } else { "" })]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Who may see a page served on `addr` (the port bound) with `token` (see the
/// [module docs](self#who-may-see-the-page)).
///
/// ```
/// use kstreams_assignor::views::ui::{UiError, access_for};
///
/// assert!(access_for("127.0.0.1:8088".parse().unwrap(), None).is_ok());
/// assert!(matches!(access_for("0.0.0.0:8088".parse().unwrap(), None), Err(UiError::NeedsToken(_))));
/// assert!(matches!(access_for("0.0.0.0:8088".parse().unwrap(), Some("short")), Err(UiError::BadToken)));
/// assert!(access_for("0.0.0.0:8088".parse().unwrap(), Some("0123456789abcdef0123")).is_ok());
/// ```
pub fn access_for(addr: SocketAddr, token: Option<&str>) -> Result<Access, UiError> {
    match token {
        Some(t) if !http::valid_token(t) => Err(UiError::BadToken),
        Some(t) => Ok(Access::with_token(t)),
        None if addr.ip().is_loopback() => Ok(Access::loopback()),
        None => Err(UiError::NeedsToken(addr)),
    }
}

/// Listens on `addr`.
pub fn bind(addr: SocketAddr) -> Result<TcpListener, UiError> {
    TcpListener::bind(addr).map_err(|source| UiError::Listen { addr, source })
}

#[cfg(test)]
mod tests;
