//! The server: an accept loop on a [`TcpListener`], a thread per connection (at most
//! [`MAX_CONNECTIONS`] at once), one `GET` per connection, over TCP or TLS.
//!
//! A connection has [`HEAD_DEADLINE`] to send its request head (at most
//! [`MAX_HEAD_BYTES`](super::http::MAX_HEAD_BYTES)), else 408 or 431; a head that does not parse
//! is 400, another method than `GET` 405, a request [`Access`] refuses 401 or 403, a path not
//! served 404. What an allowed request gets is the [`Site`]'s to say: `ui`'s is [`GroupPage`],
//! one group's page at these paths:
//!
//! | path | what |
//! |---|---|
//! | `/` | the page (`index.html`, with `ui.css` and `ui.js`, all compiled into the binary) |
//! | `/state.json` | the whole [`LiveState`] |
//! | `/events` | server-sent events: `snapshot` (the whole state) at once, then an `update` per change, a comment every [`KEEP_ALIVE`] |
//!
//! The page names its files relatively, so that a site of several groups serves each one's page
//! under a prefix of its own ([`GroupPage::route_relative`]).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::http::{self, Access, HeadError, Request, Response, TOKEN_COOKIE, Verdict};
use super::state::{LiveState, Waited};

/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a connection may take to send its request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// How long one write to a browser may block.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an idle event stream gets a comment (which also finds browsers gone).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/ui.js");
/// The pages' shared style (`report/page.css`), then the live page's own.
pub const STYLE: &str = concat!(
    include_str!("../../report/page.css"),
    include_str!("assets/ui.css")
);

/// A stream of changes a page follows: its whole state, then each change after it.
pub trait Feed: Send + Sync {
    /// The whole state as JSON, with the sequence number of the last change in it.
    fn snapshot(&self) -> (u64, String);
    /// The changes after `after`, waiting up to `timeout` for one.
    fn wait(&self, after: u64, timeout: Duration) -> Waited;
}

impl Feed for LiveState {
    fn snapshot(&self) -> (u64, String) {
        LiveState::snapshot(self)
    }

    fn wait(&self, after: u64, timeout: Duration) -> Waited {
        LiveState::wait(self, after, timeout)
    }
}

/// What an allowed request gets.
#[non_exhaustive]
pub enum Route {
    /// A whole response.
    Answer(Response),
    /// An event stream of this feed, served until the browser goes away.
    Events(Arc<dyn Feed>),
}

/// What a server serves: a [`Route`] for each allowed `GET`.
pub trait Site: Send + Sync {
    /// The route of `request` (its method is `GET`, its access checked).
    fn route(&self, request: &Request) -> Route;
}

/// `ui`'s site: one group's page.
#[derive(Debug, Clone)]
pub struct GroupPage(pub Arc<LiveState>);

impl GroupPage {
    /// The route of `path`, relative to where the page is served (`""` is the page), or `None`
    /// for a path it does not serve.
    pub fn route_relative(&self, path: &str) -> Option<Route> {
        Some(match path {
            "" | "index.html" => {
                Route::Answer(Response::new(200, "text/html; charset=utf-8", INDEX))
            }
            "ui.js" => Route::Answer(Response::new(200, "text/javascript; charset=utf-8", SCRIPT)),
            "ui.css" => Route::Answer(Response::new(200, "text/css; charset=utf-8", STYLE)),
            "state.json" => {
                Route::Answer(Response::new(200, "application/json", self.0.snapshot().1))
            }
            "events" => Route::Events(self.0.clone()),
            _ => return None,
        })
    }
}

impl Site for GroupPage {
    fn route(&self, request: &Request) -> Route {
        request
            .path
            .strip_prefix('/')
            .and_then(|p| self.route_relative(p))
            .unwrap_or_else(|| {
                Route::Answer(Response::text(
                    404,
                    "not found: the page is at /, its state at /state.json",
                ))
            })
    }
}

/// What every connection shares.
struct Shared {
    site: Arc<dyn Site>,
    access: Access,
    tls: Option<Arc<rustls::ServerConfig>>,
    head_deadline: Duration,
    open: AtomicUsize,
}

/// Serves `state` on `listener` to whoever `access` lets in, from a thread of its own, until the
/// process ends.
pub fn spawn(
    listener: TcpListener,
    state: Arc<LiveState>,
    access: Access,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_with_deadline(listener, state, access, HEAD_DEADLINE)
}

/// [`spawn`] with another deadline for request heads than [`HEAD_DEADLINE`].
pub fn spawn_with_deadline(
    listener: TcpListener,
    state: Arc<LiveState>,
    access: Access,
    head_deadline: Duration,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_site(
        listener,
        Arc::new(GroupPage(state)),
        access,
        None,
        head_deadline,
    )
}

/// Serves `site` on `listener` to whoever `access` lets in, over TLS with `tls` (plain HTTP
/// without), each request head within `head_deadline`, from a thread of its own, until the
/// process ends.
pub fn spawn_site(
    listener: TcpListener,
    site: Arc<dyn Site>,
    access: Access,
    tls: Option<Arc<rustls::ServerConfig>>,
    head_deadline: Duration,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let shared = Arc::new(Shared {
        site,
        access,
        tls,
        head_deadline,
        open: AtomicUsize::new(0),
    });
    std::thread::Builder::new()
        .name("ui-accept".into())
        .spawn(move || accept(&listener, &shared))
}

/// A connection, plain or TLS, with its socket for the deadlines.
trait Conn: Read + Write {
    /// The TCP socket under it.
    fn socket(&self) -> &TcpStream;
    /// Ends the connection's writing side (TLS: with its close_notify first).
    fn finish(&mut self);
}

impl Conn for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }

    fn finish(&mut self) {
        let _ = self.flush();
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Conn for rustls::StreamOwned<rustls::ServerConnection, TcpStream> {
    fn socket(&self) -> &TcpStream {
        &self.sock
    }

    fn finish(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush();
        let _ = self.sock.shutdown(std::net::Shutdown::Write);
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            // Out of descriptors, or a connection reset before it was taken: breathe, go on.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        if shared.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.open.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.write_all(&Response::text(503, "too many connections").bytes());
            continue;
        }
        let slot = Slot(shared.clone());
        // A thread that cannot be made drops its closure, and the slot with it.
        let _ = std::thread::Builder::new()
            .name("ui-conn".into())
            .spawn(move || match &slot.0.tls {
                None => serve(&mut stream, &slot.0),
                Some(config) => {
                    // The handshake happens on the first read, within the head's deadline.
                    let Ok(tls) = rustls::ServerConnection::new(config.clone()) else {
                        return;
                    };
                    serve(&mut rustls::StreamOwned::new(tls, stream), &slot.0);
                }
            });
    }
}

/// A connection's place among the [`MAX_CONNECTIONS`], given back when it ends (or panics).
struct Slot(Arc<Shared>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads a request head within `deadline`.
fn read_head(stream: &mut dyn Conn, deadline: Duration) -> Result<Vec<u8>, Response> {
    let until = Instant::now() + deadline;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Response::text(408, "the request head did not come in time"));
        }
        let _ = stream.socket().set_read_timeout(Some(left));
        match stream.read(&mut chunk) {
            Ok(0) => {
                return Err(Response::text(
                    400,
                    "the connection closed before the request head ended",
                ));
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Response::text(408, "the request head did not come in time"));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(Response::text(400, "the connection failed")),
        }
        if let Some(end) = http::head_end(&buf) {
            buf.truncate(end);
            return Ok(buf);
        }
        if buf.len() > http::MAX_HEAD_BYTES {
            return Err(Response::text(431, &HeadError::TooLarge.to_string()));
        }
    }
}

/// Serves one connection.
fn serve(stream: &mut dyn Conn, shared: &Shared) {
    let response = match answer(stream, shared) {
        Ok(Some(r)) | Err(r) => r,
        // An event stream, served to its end.
        Ok(None) => return,
    };
    let _ = stream.write_all(&response.bytes());
    // Any bytes left unread (a body nobody asked for) would make the close a reset.
    stream.finish();
}

fn answer(stream: &mut dyn Conn, shared: &Shared) -> Result<Option<Response>, Response> {
    let head = read_head(stream, shared.head_deadline)?;
    let request = http::parse_head(&head).map_err(|e| match e {
        HeadError::TooLarge => Response::text(431, &e.to_string()),
        HeadError::Malformed(_) => Response::text(400, &e.to_string()),
    })?;
    if request.method != "GET" {
        return Err(
            Response::text(405, "the page is read-only: GET only").with_header("Allow", "GET")
        );
    }
    match shared.access.check(&request) {
        Verdict::Allowed => {}
        Verdict::SetCookie(location) => {
            let token = shared.access.token.as_deref().unwrap_or_default();
            return Ok(Some(
                Response::text(303, "token accepted")
                    .with_header("Location", location)
                    .with_header(
                        "Set-Cookie",
                        format!("{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"),
                    ),
            ));
        }
        Verdict::Unauthorized => {
            return Err(Response::text(401, "a token is needed: open the page once with ?token=TOKEN (or send Authorization: Bearer TOKEN)")
                .with_header("WWW-Authenticate", "Bearer"));
        }
        Verdict::ForeignHost => {
            return Err(Response::text(
                403,
                "this server answers only to its loopback names (127.0.0.1, localhost, [::1]) without --token",
            ));
        }
    }
    Ok(match shared.site.route(&request) {
        Route::Answer(r) => Some(r),
        Route::Events(feed) => {
            events(stream, &*feed);
            None
        }
    })
}

/// The event stream: the whole state, then each change, until the browser goes away.
fn events(stream: &mut dyn Conn, state: &dyn Feed) {
    let snapshot = |stream: &mut dyn Conn| {
        let (seq, json) = state.snapshot();
        stream
            .write_all(http::sse_event(seq, "snapshot", &json).as_bytes())
            .map(|()| seq)
    };
    let start = stream
        .write_all(http::event_stream_head().as_bytes())
        .and_then(|()| stream.write_all(b"retry: 2000\n\n"));
    let Ok(mut seq) = start.and_then(|()| snapshot(stream)) else {
        return;
    };
    loop {
        let sent = match state.wait(seq, KEEP_ALIVE) {
            Waited::Changes(changes) => changes.iter().try_for_each(|c| {
                seq = c.seq;
                stream.write_all(http::sse_event(c.seq, "update", &c.data).as_bytes())
            }),
            Waited::Behind => snapshot(stream).map(|s| seq = s),
            Waited::Nothing => stream.write_all(b": keep-alive\n\n"),
        };
        if sent.and_then(|()| stream.flush()).is_err() {
            return;
        }
    }
}
