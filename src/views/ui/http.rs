//! The little HTTP/1.1 the page needs, sans-IO: a request head parsed from bytes (bounded, never
//! a panic), who may see the page ([`Access`]), responses and server-sent events as bytes.
//!
//! Only `GET` is served, one request per connection (`Connection: close`), no body. A head is at
//! most [`MAX_HEAD_BYTES`]; its target is a path (`/x?y`), never a full URL.

use std::fmt::Write as _;

/// The most bytes a request head (request line and headers) may have.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
/// The most header lines a request may have.
pub const MAX_HEADERS: usize = 64;
/// The cookie that carries the token once given in the query.
pub const TOKEN_COOKIE: &str = "kstreams_ui_token";
/// The fewest characters a token may have.
pub const MIN_TOKEN_LEN: usize = 16;

/// Why a request head is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// Larger than [`MAX_HEAD_BYTES`] or with more than [`MAX_HEADERS`] lines.
    #[error("the request head is larger than {MAX_HEAD_BYTES} bytes or {MAX_HEADERS} headers")]
    TooLarge,
    /// Not an HTTP/1.x request head.
    #[error("bad request: {0}")]
    Malformed(&'static str),
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Request {
    /// The method, as sent.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query, without the `?`.
    pub query: Option<String>,
    /// The headers, names in lower case, in order.
    pub headers: Vec<(String, String)>,
}

/// Where the head in `buf` ends (after its blank line), if it has ended.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Parses a request head (the bytes up to and with its blank line).
///
/// ```
/// use kstreams_assignor::views::ui::http::{HeadError, parse_head};
///
/// let r = parse_head(b"GET /state.json?token=abc HTTP/1.1\r\nHost: localhost:8088\r\n\r\n").unwrap();
/// assert_eq!((r.path.as_str(), r.query.as_deref(), r.header("host")), ("/state.json", Some("token=abc"), Some("localhost:8088")));
/// assert!(matches!(parse_head(b"GET http://evil/ HTTP/1.1\r\n\r\n"), Err(HeadError::Malformed(_))));
/// ```
pub fn parse_head(head: &[u8]) -> Result<Request, HeadError> {
    if head.len() > MAX_HEAD_BYTES {
        return Err(HeadError::TooLarge);
    }
    let text = std::str::from_utf8(head).map_err(|_| HeadError::Malformed("the head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(HeadError::Malformed("the request line is not `METHOD TARGET VERSION`"));
    };
    if method.is_empty() || !method.bytes().all(is_token_char) {
        return Err(HeadError::Malformed("the method is not a token"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HeadError::Malformed("not HTTP/1.0 or HTTP/1.1"));
    }
    if !target.starts_with('/') || target.bytes().any(|b| !(0x21..0x7f).contains(&b)) {
        return Err(HeadError::Malformed("the target is not a path"));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (target, None),
    };
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if headers.len() == MAX_HEADERS {
            return Err(HeadError::TooLarge);
        }
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed("a header line without `:`"))?;
        if name.is_empty() || !name.bytes().all(is_token_char) {
            return Err(HeadError::Malformed("a header name is not a token"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(Request { method: method.to_owned(), path: path.to_owned(), query, headers })
}

impl Request {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The query parameter `name`, as sent (tokens need no decoding).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query.as_deref()?.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// The cookie `name`, from every `Cookie` header.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == "cookie")
            .flat_map(|(_, v)| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// The query without the `token` parameter: where to send a browser once its cookie is set.
    pub fn location_without_token(&self) -> String {
        let query = self.query.as_deref().unwrap_or("");
        let rest: Vec<&str> = query.split('&').filter(|kv| !kv.is_empty() && !kv.starts_with("token=")).collect();
        if rest.is_empty() { self.path.clone() } else { format!("{}?{}", self.path, rest.join("&")) }
    }
}

/// Whether `token` may be used: at least [`MIN_TOKEN_LEN`] characters, each a letter, a digit or
/// one of `-._~` (so that it travels in a query and a cookie as it is).
pub fn valid_token(token: &str) -> bool {
    token.len() >= MIN_TOKEN_LEN && token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// Equal bytes, in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Who may see the page: everyone who reaches it by a loopback name, or whoever has the token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Access {
    /// The token every request must carry, if any.
    pub token: Option<String>,
    /// Without a token: the host names a request's `Host` may have (the loopback names, on any
    /// port, so that a tunnel's port works), against another site's page reaching this one by a
    /// name of its own (DNS rebinding).
    pub hosts: Vec<String>,
}

/// What [`Access::check`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Serve it.
    Allowed,
    /// The token came in the query and is right: set the cookie and send the browser to
    /// this location.
    SetCookie(String),
    /// No token, or a wrong one: 401.
    Unauthorized,
    /// A `Host` that is not a loopback name of this server: 403.
    ForeignHost,
}

impl Access {
    /// Access on a loopback address, without a token.
    pub fn loopback() -> Self {
        Self { token: None, hosts: ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| (*h).to_owned()).collect() }
    }

    /// Access by `token` only.
    pub fn with_token(token: impl Into<String>) -> Self {
        Self { token: Some(token.into()), hosts: Vec::new() }
    }

    /// Whether `r` may be served.
    pub fn check(&self, r: &Request) -> Verdict {
        let Some(token) = &self.token else {
            let host = r.header("host").unwrap_or("");
            // `name:port`, `[v6]:port`, or a name alone.
            let name = match host.rsplit_once(':') {
                Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
                _ => host,
            };
            return if self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name)) { Verdict::Allowed } else { Verdict::ForeignHost };
        };
        let token = token.as_bytes();
        if let Some(q) = r.query_param("token") {
            return if same(q.as_bytes(), token) { Verdict::SetCookie(r.location_without_token()) } else { Verdict::Unauthorized };
        }
        let bearer = r.header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        if bearer.or(r.cookie(TOKEN_COOKIE)).is_some_and(|t| same(t.as_bytes(), token)) { Verdict::Allowed } else { Verdict::Unauthorized }
    }
}

/// A response, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers besides those every response has.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// The headers every response has: no caching, no sniffing, no framing, nothing but this origin.
pub const COMMON_HEADERS: &str = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\
X-Frame-Options: DENY\r\nContent-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\nConnection: close\r\n";

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

impl Response {
    /// `status` with a body of `content_type`.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self { status, headers: vec![("Content-Type", content_type.to_owned())], body: body.into() }
    }

    /// `status` with a line of plain text.
    pub fn text(status: u16, text: &str) -> Self {
        Self::new(status, "text/plain; charset=utf-8", format!("{text}\n"))
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The response as bytes, `Content-Length` counted.
    pub fn bytes(&self) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n{COMMON_HEADERS}", self.status, reason(self.status));
        for (n, v) in &self.headers {
            let _ = write!(head, "{n}: {v}\r\n");
        }
        let _ = write!(head, "Content-Length: {}\r\n\r\n", self.body.len());
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// The head of an event stream (no length: it lasts as long as the connection).
pub fn event_stream_head() -> String {
    format!("HTTP/1.1 200 OK\r\n{COMMON_HEADERS}Content-Type: text/event-stream; charset=utf-8\r\nX-Accel-Buffering: no\r\n\r\n")
}

/// One server-sent event: its id, its name and its data, each line of the data on a `data:`
/// line of its own.
///
/// ```
/// use kstreams_assignor::views::ui::http::sse_event;
///
/// assert_eq!(sse_event(7, "update", "{\"a\":1}\nx"), "id: 7\nevent: update\ndata: {\"a\":1}\ndata: x\n\n");
/// ```
pub fn sse_event(id: u64, event: &str, data: &str) -> String {
    let mut s = format!("id: {id}\nevent: {event}\n");
    for line in data.split('\n') {
        let _ = writeln!(s, "data: {}", line.trim_end_matches('\r'));
    }
    s.push('\n');
    s
}
