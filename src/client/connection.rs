//! A blocking connection to one Kafka broker: size-prefixed frames over TCP or TLS, request
//! headers with correlation ids, `ApiVersions` negotiation and SASL authentication. Messages are
//! the [`kafka_protocol`] crate's.
//!
//! [`Connection::connect`] opens the socket, runs the TLS handshake when the [`Security`] says
//! `SSL` or `SASL_SSL`, asks the broker for its version ranges (`ApiVersions` v3, falling back to
//! the version the broker says it supports) and, for `SASL_*`, authenticates (`SaslHandshake`,
//! then `SaslAuthenticate` rounds). Every later [`call`](Connection::call) sends its request at
//! the highest version that both the broker and the `kafka-protocol` crate know, and checks that
//! the answer carries the request's correlation id. [`Connection::bootstrap`] tries each server
//! of a list in turn, and [`Connection::open`] reaches another broker (a coordinator, a
//! partition leader) the same way.
//!
//! Each request has one deadline (its timeout from when it is sent), which bounds every read and
//! write of it, TLS included ([`transport`](crate::client::net::transport)); what went wrong is said in
//! words ([`ConnectionError`]).
//!
//! Frames larger than [`MAX_FRAME_BYTES`] are refused before anything is read into memory, and a
//! response that does not decode is a [`ConnectionError::Decode`], never a panic. Each response's
//! layout is checked ([`layout::check`]) before the `kafka-protocol` crate decodes it: that crate
//! reserves an array's capacity from the count it reads, and the check refuses any count the
//! frame cannot hold, so what is allocated is proportional to the frame's size.
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_protocol::messages::MetadataRequest;
//! use kstreams_assignor::client::connection::Connection;
//!
//! use kstreams_assignor::client::net::client_config::Security;
//!
//! let mut conn = Connection::bootstrap("127.0.0.1:9092,127.0.0.1:9093", "my-client", &Security::plaintext(), Duration::from_secs(10)).unwrap();
//! let metadata = conn.call(&MetadataRequest::default().with_topics(Some(vec![]))).unwrap();
//! println!("{} brokers", metadata.brokers.len());
//! ```

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{self, ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, StrBytes};

use crate::client::layout;
use crate::client::net::client_config::Security;
use crate::client::net::error::plain_io;
pub use crate::client::net::error::{ConnectionError, ErrorCode, MAX_FRAME_BYTES};
use crate::client::net::sasl::{Credentials, SaslSession, Step};
use crate::client::net::transport::{Socket, TlsFailure, Transport, tls_reason};

/// A request this connection can send, with its API key and response type.
pub trait Call: Encodable + Message + HeaderVersion {
    /// The API key.
    const KEY: ApiKey;
    /// The response.
    type Response: Decodable + Message + HeaderVersion;
    /// The response's layout, checked before it is decoded.
    const LAYOUT: &'static layout::Message;
}

macro_rules! calls {
    ($($req:ident => $resp:ident, $key:ident, $layout:ident;)*) => {
        $(impl Call for messages::$req {
            const KEY: ApiKey = ApiKey::$key;
            type Response = messages::$resp;
            const LAYOUT: &'static layout::Message = &layout::$layout;
        })*

        /// Every call's API key with [`decode_response`] for its response (the header and body
        /// checked and decoded, the value dropped): what the fuzz target feeds bytes to.
        pub const RESPONSE_DECODERS: &[(ApiKey, fn(Vec<u8>, i16) -> Result<(), String>)] =
            &[$((ApiKey::$key, |body, version| decode_response::<messages::$req>(body, version).map(|_| ()))),*];
    };
}

calls! {
    ApiVersionsRequest => ApiVersionsResponse, ApiVersions, API_VERSIONS;
    FindCoordinatorRequest => FindCoordinatorResponse, FindCoordinator, FIND_COORDINATOR;
    JoinGroupRequest => JoinGroupResponse, JoinGroup, JOIN_GROUP;
    SyncGroupRequest => SyncGroupResponse, SyncGroup, SYNC_GROUP;
    HeartbeatRequest => HeartbeatResponse, Heartbeat, HEARTBEAT;
    LeaveGroupRequest => LeaveGroupResponse, LeaveGroup, LEAVE_GROUP;
    MetadataRequest => MetadataResponse, Metadata, METADATA;
    CreateTopicsRequest => CreateTopicsResponse, CreateTopics, CREATE_TOPICS;
    ListOffsetsRequest => ListOffsetsResponse, ListOffsets, LIST_OFFSETS;
    DescribeGroupsRequest => DescribeGroupsResponse, DescribeGroups, DESCRIBE_GROUPS;
    OffsetFetchRequest => OffsetFetchResponse, OffsetFetch, OFFSET_FETCH;
    SaslHandshakeRequest => SaslHandshakeResponse, SaslHandshake, SASL_HANDSHAKE;
    SaslAuthenticateRequest => SaslAuthenticateResponse, SaslAuthenticate, SASL_AUTHENTICATE;
    ListGroupsRequest => ListGroupsResponse, ListGroups, LIST_GROUPS;
    DescribeConfigsRequest => DescribeConfigsResponse, DescribeConfigs, DESCRIBE_CONFIGS;
}

/// One open connection to a broker.
#[derive(Debug)]
pub struct Connection {
    stream: Transport,
    broker: String,
    client_id: String,
    correlation_id: i32,
    timeout: Duration,
    security: Security,
    /// API key → the broker's (min, max).
    broker_versions: BTreeMap<i16, (i16, i16)>,
}

/// `now + timeout`, or a day from now when that does not fit an `Instant`.
fn deadline(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or_else(|| now + Duration::from_secs(86_400))
}

/// The host of `host:port` (`[::1]:9092` → `::1`).
fn host(broker: &str) -> &str {
    let host = broker.rsplit_once(':').map_or(broker, |(h, _)| h);
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
}

impl Connection {
    /// Connects to `broker` (`host:port`) as `security` says (TLS, SASL), and negotiates API
    /// versions. `timeout` bounds the connect, the TLS handshake, and each request from its
    /// first byte written to its answer's last byte read.
    pub fn connect(broker: &str, client_id: &str, security: &Security, timeout: Duration) -> Result<Self, ConnectionError> {
        let until = deadline(timeout);
        let addrs = broker.to_socket_addrs().map_err(|e| ConnectionError::Connect {
            broker: broker.to_owned(),
            reason: format!("cannot resolve the address ({})", plain_io(&e)),
        })?;
        let mut last = None;
        let mut socket = None;
        for addr in addrs {
            match Socket::connect(&addr, until) {
                Ok(s) => {
                    socket = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let socket = match (socket, last) {
            (Some(s), _) => s,
            (None, Some(e)) => return Err(ConnectionError::connect(broker, timeout, &e)),
            (None, None) => return Err(ConnectionError::Connect { broker: broker.to_owned(), reason: "the name has no address".into() }),
        };
        let stream = match security.tls() {
            None => Transport::Plain(socket),
            Some(config) => Transport::tls(socket, config.clone(), host(broker)).map_err(|e| match e {
                TlsFailure::Io(e) => ConnectionError::from_io(broker, "the TLS handshake", timeout, e),
                TlsFailure::Refused(reason) => ConnectionError::Tls { broker: broker.to_owned(), reason },
            })?,
        };
        let mut conn = Self {
            stream,
            broker: broker.to_owned(),
            client_id: client_id.to_owned(),
            correlation_id: 0,
            timeout,
            security: security.clone(),
            broker_versions: BTreeMap::new(),
        };
        conn.negotiate()?;
        if let Some(credentials) = security.sasl() {
            conn.authenticate(credentials)?;
        }
        Ok(conn)
    }

    /// Connects to the first of `servers` that answers: a comma-separated list
    /// (`a:9092,b:9092`, Kafka's `bootstrap.servers`) tried in order. With one server its
    /// error is returned as it is; with more, [`ConnectionError::Bootstrap`] lists each one's.
    pub fn bootstrap(servers: &str, client_id: &str, security: &Security, timeout: Duration) -> Result<Self, ConnectionError> {
        let list: Vec<&str> = servers.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if let [one] = list[..] {
            return Self::connect(one, client_id, security, timeout);
        }
        let mut failures = Vec::new();
        for server in list {
            match Self::connect(server, client_id, security, timeout) {
                Ok(conn) => return Ok(conn),
                Err(e) => failures.push((server.to_owned(), e)),
            }
        }
        Err(ConnectionError::Bootstrap { failures })
    }

    /// Connects to another broker (`host:port`) with this connection's client id, security and
    /// timeout.
    pub fn open(&self, broker: &str) -> Result<Self, ConnectionError> {
        Self::connect(broker, &self.client_id, &self.security, self.timeout)
    }

    /// The timeout of each request ([`call`](Self::call)).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The broker (`host:port`) this connection is to.
    pub fn broker(&self) -> &str {
        &self.broker
    }

    /// A handle on this connection's socket (`TcpStream::try_clone`): shutting it down from
    /// another thread makes a request waiting for its answer return at once, with an error.
    pub fn socket(&self) -> std::io::Result<std::net::TcpStream> {
        self.stream.try_clone_tcp()
    }

    fn negotiate(&mut self) -> Result<(), ConnectionError> {
        type Req = messages::ApiVersionsRequest;
        let request = Req::default()
            .with_client_software_name(StrBytes::from_static_str("kstreams-assignor"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let ours = Req::VERSIONS.max;
        let (id, body) = self.exchange(&request, ours, self.timeout)?;
        let response = match decode_response::<Req>(body.clone(), ours) {
            Ok((got, r)) if ErrorCode(r.error_code) != ErrorCode::UNSUPPORTED_VERSION => {
                self.check_correlation(ApiKey::ApiVersions, id, got)?;
                r
            }
            first => {
                // A broker that does not know our version answers in v0 form with its range.
                let (got, v0) = decode_response::<Req>(body, 0).map_err(|reason| {
                    let reason = match first {
                        Err(e) => e,
                        Ok(_) => reason,
                    };
                    ConnectionError::Decode { broker: self.broker.clone(), api: ApiKey::ApiVersions, version: ours, reason }
                })?;
                self.check_correlation(ApiKey::ApiVersions, id, got)?;
                let theirs = v0.api_keys.iter().find(|k| k.api_key == ApiKey::ApiVersions as i16).map(|k| k.max_version);
                match theirs {
                    Some(v) if v < ours && v >= Req::VERSIONS.min => self.call_at(&request, v, self.timeout)?,
                    _ => v0,
                }
            }
        };
        check(&self.broker, ApiKey::ApiVersions, response.error_code, None)?;
        self.broker_versions = response.api_keys.iter().map(|k| (k.api_key, (k.min_version, k.max_version))).collect();
        Ok(())
    }

    /// SASL: `SaslHandshake` with the mechanism, then `SaslAuthenticate` rounds until the
    /// mechanism is done (three at most: SCRAM has two, PLAIN one, OAUTHBEARER one or two).
    fn authenticate(&mut self, credentials: &Credentials) -> Result<(), ConnectionError> {
        let mechanism = credentials.mechanism();
        let failed = |broker: &str, reason: String| ConnectionError::Sasl { broker: broker.to_owned(), mechanism: mechanism.name().to_owned(), reason };
        let request = messages::SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism.name()));
        let handshake = self.call(&request)?;
        match ErrorCode(handshake.error_code) {
            ErrorCode::NONE => {}
            ErrorCode::UNSUPPORTED_SASL_MECHANISM => {
                let offered: Vec<String> = handshake.mechanisms.iter().map(ToString::to_string).collect();
                let offered = if offered.is_empty() { "none".to_owned() } else { offered.join(", ") };
                return Err(failed(&self.broker, format!("the broker does not offer {mechanism} (it offers: {offered})")));
            }
            code => return Err(failed(&self.broker, format!("SaslHandshake: {code} (is this a SASL listener, SASL_PLAINTEXT or SASL_SSL?)"))),
        }
        let (mut session, mut message) = SaslSession::start(credentials).map_err(|e| failed(&self.broker, e.to_string()))?;
        for _ in 0..3 {
            let response = self.call(&messages::SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(message)))?;
            if response.error_code != 0 {
                let text = response.error_message.as_ref().map(ToString::to_string).filter(|m| !m.is_empty());
                return Err(failed(&self.broker, text.unwrap_or_else(|| ErrorCode(response.error_code).to_string())));
            }
            match session.step(&response.auth_bytes).map_err(|e| failed(&self.broker, e.to_string()))? {
                Step::Done => return Ok(()),
                Step::Send(next) => message = next,
            }
        }
        Err(failed(&self.broker, "the exchange did not end after three rounds".into()))
    }

    fn check_correlation(&self, api: ApiKey, expected: i32, got: i32) -> Result<(), ConnectionError> {
        if got != expected {
            return Err(ConnectionError::Correlation { broker: self.broker.clone(), api, expected, got });
        }
        Ok(())
    }

    /// Writes the request frame and reads the response frame, both by one deadline `timeout`
    /// from now; returns the correlation id sent.
    fn exchange<R: Call>(&mut self, request: &R, version: i16, timeout: Duration) -> Result<(i32, Vec<u8>), ConnectionError> {
        let api = R::KEY;
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let correlation_id = self.correlation_id;
        let frame = encode_request(request, version, correlation_id, &self.client_id)
            .map_err(|reason| ConnectionError::Encode { broker: self.broker.clone(), api, version, reason })?;
        let io = |broker: &str, e: std::io::Error| match tls_reason(&e, host(broker)) {
            Some(reason) => ConnectionError::Tls { broker: broker.to_owned(), reason },
            None => ConnectionError::from_io(broker, &format!("{api:?}"), timeout, e),
        };
        self.stream.set_deadline(deadline(timeout));
        self.stream.write_all(&frame).and_then(|()| self.stream.flush()).map_err(|e| io(&self.broker, e))?;
        let body = read_frame(&mut self.stream).map_err(|e| match e {
            FrameError::Io(e) => io(&self.broker, e),
            FrameError::Size(size) => ConnectionError::FrameSize { broker: self.broker.clone(), api, size },
        })?;
        Ok((correlation_id, body))
    }

    /// The version `R` is sent at: the highest both sides support.
    pub fn version<R: Call>(&self) -> Result<i16, ConnectionError> {
        let ours = R::VERSIONS;
        let unsupported = |theirs: String| ConnectionError::UnsupportedApi {
            broker: self.broker.clone(),
            api: R::KEY,
            broker_versions: theirs,
            client_versions: format!("{}..={}", ours.min, ours.max),
        };
        let &(min, max) = self.broker_versions.get(&(R::KEY as i16)).ok_or_else(|| unsupported("none".into()))?;
        let v = max.min(ours.max);
        if v < min.max(ours.min) {
            return Err(unsupported(format!("{min}..={max}")));
        }
        Ok(v)
    }

    /// The broker's version range of `api_key` (from `ApiVersions`), `None` when it does not
    /// list the API.
    pub fn broker_versions(&self, api_key: i16) -> Option<(i16, i16)> {
        self.broker_versions.get(&api_key).copied()
    }

    /// Sends a request whose body this crate encodes itself (an API the `kafka-protocol` crate
    /// does not know, `name` in errors): `body` of `api_key` at `version` under a request header
    /// of `header_version`, and returns the response body after its header of
    /// `response_header_version` (v1: with tagged fields, skipped), by one deadline `timeout`.
    #[allow(clippy::too_many_arguments)]
    pub fn call_raw(
        &mut self,
        name: &str,
        api_key: i16,
        version: i16,
        header_version: i16,
        body: &[u8],
        response_header_version: i16,
        timeout: Duration,
    ) -> Result<Vec<u8>, ConnectionError> {
        let invalid = |broker: &str, reason: String| ConnectionError::Io { broker: broker.to_owned(), during: name.to_owned(), reason };
        let io = |broker: &str, e: std::io::Error| match tls_reason(&e, host(broker)) {
            Some(reason) => ConnectionError::Tls { broker: broker.to_owned(), reason },
            None => ConnectionError::from_io(broker, name, timeout, e),
        };
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(api_key)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation_id)
            .with_client_id(Some(StrBytes::from_string(self.client_id.clone())));
        let mut frame = BytesMut::new();
        frame.extend_from_slice(&[0; 4]);
        header.encode(&mut frame, header_version).map_err(|e| invalid(&self.broker, format!("request header: {e}")))?;
        frame.extend_from_slice(body);
        let size = i32::try_from(frame.len() - 4).map_err(|_| invalid(&self.broker, "request too large".into()))?;
        frame[..4].copy_from_slice(&size.to_be_bytes());
        self.stream.set_deadline(deadline(timeout));
        self.stream.write_all(&frame).and_then(|()| self.stream.flush()).map_err(|e| io(&self.broker, e))?;
        let response = read_frame(&mut self.stream).map_err(|e| match e {
            FrameError::Io(e) => io(&self.broker, e),
            FrameError::Size(size) => invalid(&self.broker, format!("a frame of {size} bytes (accepted: 0 to {MAX_FRAME_BYTES})")),
        })?;
        let mut buf = Bytes::from(response);
        let got = ResponseHeader::decode(&mut buf, response_header_version)
            .map_err(|e| invalid(&self.broker, format!("response header: {e}")))?;
        if got.correlation_id != self.correlation_id {
            return Err(invalid(&self.broker, format!("correlation id {}, expected {}", got.correlation_id, self.correlation_id)));
        }
        Ok(buf.to_vec())
    }

    /// Sends `request` at the negotiated version and reads its response.
    pub fn call<R: Call>(&mut self, request: &R) -> Result<R::Response, ConnectionError> {
        self.call_with_timeout(request, self.timeout)
    }

    /// As [`call`](Self::call), waiting up to `timeout` for the response (JoinGroup and SyncGroup
    /// wait for the whole group).
    pub fn call_with_timeout<R: Call>(&mut self, request: &R, timeout: Duration) -> Result<R::Response, ConnectionError> {
        let version = self.version::<R>()?;
        self.call_at(request, version, timeout)
    }

    /// Sends `request` at `version` and reads its response.
    pub fn call_at<R: Call>(&mut self, request: &R, version: i16, timeout: Duration) -> Result<R::Response, ConnectionError> {
        let (id, body) = self.exchange(request, version, timeout)?;
        let (got, response) = decode_response::<R>(body, version)
            .map_err(|reason| ConnectionError::Decode { broker: self.broker.clone(), api: R::KEY, version, reason })?;
        self.check_correlation(R::KEY, id, got)?;
        Ok(response)
    }
}

/// Asks `conn`'s broker for the coordinator of `group` (`FindCoordinator`, key type group) and
/// returns its address, `host:port`.
pub fn find_coordinator(conn: &mut Connection, group: &str) -> Result<String, ConnectionError> {
    let key = StrBytes::from_string(group.to_owned());
    let version = conn.version::<messages::FindCoordinatorRequest>()?;
    let request = messages::FindCoordinatorRequest::default().with_key_type(0);
    let request = if version >= 4 { request.with_coordinator_keys(vec![key]) } else { request.with_key(key) };
    let response = conn.call_at(&request, version, conn.timeout)?;
    let broker = conn.broker().to_owned();
    let (host, port) = if version >= 4 {
        let c = response.coordinators.first().ok_or_else(|| ConnectionError::Broker {
            broker: broker.clone(),
            api: ApiKey::FindCoordinator,
            code: ErrorCode::COORDINATOR_NOT_AVAILABLE,
            message: Some("no coordinator in the response".into()),
        })?;
        check(&broker, ApiKey::FindCoordinator, c.error_code, c.error_message.as_ref())?;
        (c.host.to_string(), c.port)
    } else {
        check(&broker, ApiKey::FindCoordinator, response.error_code, response.error_message.as_ref())?;
        (response.host.to_string(), response.port)
    };
    Ok(format!("{host}:{port}"))
}

/// Returns `Ok` for error code 0, else [`ConnectionError::Broker`].
pub fn check(broker: &str, api: ApiKey, code: i16, message: Option<&StrBytes>) -> Result<(), ConnectionError> {
    if code == 0 {
        return Ok(());
    }
    Err(ConnectionError::Broker {
        broker: broker.to_owned(),
        api,
        code: ErrorCode(code),
        message: message.map(|m| m.to_string()).filter(|m| !m.is_empty()),
    })
}

/// A whole request frame: size, header, body.
pub fn encode_request<R: Call>(request: &R, version: i16, correlation_id: i32, client_id: &str) -> Result<Vec<u8>, String> {
    let header = RequestHeader::default()
        .with_request_api_key(R::KEY as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_string(client_id.to_owned())));
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    header.encode(&mut buf, R::header_version(version)).map_err(|e| format!("header: {e}"))?;
    request.encode(&mut buf, version).map_err(|e| e.to_string())?;
    let size = i32::try_from(buf.len() - 4).map_err(|_| "request too large".to_owned())?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf.to_vec())
}

/// Decodes a response frame body (without its size): header, then the body at `version`. Every
/// byte must be used. The body's layout is checked first ([`layout::check`]), so the decoder
/// never reserves room for elements the frame does not hold.
pub fn decode_response<R: Call>(body: Vec<u8>, version: i16) -> Result<(i32, R::Response), String> {
    layout::check(R::LAYOUT, R::Response::header_version(version), version, &body).map_err(|e| e.to_string())?;
    let mut buf = Bytes::from(body);
    let header = ResponseHeader::decode(&mut buf, R::Response::header_version(version)).map_err(|e| format!("header: {e}"))?;
    let response = R::Response::decode(&mut buf, version).map_err(|e| e.to_string())?;
    if !buf.is_empty() {
        return Err(format!("{} bytes after the response", buf.len()));
    }
    Ok((header.correlation_id, response))
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The socket failed.
    Io(std::io::Error),
    /// The size prefix is negative or above [`MAX_FRAME_BYTES`].
    Size(i64),
}

/// Reads one size-prefixed frame, refusing sizes outside `0..=MAX_FRAME_BYTES` before
/// allocating.
pub fn read_frame(stream: &mut impl Read) -> Result<Vec<u8>, FrameError> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).map_err(FrameError::Io)?;
    let size = i32::from_be_bytes(size);
    let len = usize::try_from(size).ok().filter(|&n| n <= MAX_FRAME_BYTES).ok_or(FrameError::Size(size.into()))?;
    let mut body = Vec::new();
    stream.take(len as u64).read_to_end(&mut body).map_err(FrameError::Io)?;
    if body.len() != len {
        return Err(FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("frame of {len} bytes ended after {}", body.len()),
        )));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse};

    #[test]
    fn error_codes_print_kafka_names() {
        assert_eq!(ErrorCode::REBALANCE_IN_PROGRESS.to_string(), "REBALANCE_IN_PROGRESS (27)");
        assert_eq!(ErrorCode::MEMBER_ID_REQUIRED.to_string(), "MEMBER_ID_REQUIRED (79)");
        assert_eq!(ErrorCode(-1).to_string(), "UNKNOWN_SERVER_ERROR (-1)");
        assert_eq!(ErrorCode(30_000).to_string(), "error code 30000");
    }

    #[test]
    fn request_frame_carries_size_header_and_body() {
        let req = HeartbeatRequest::default().with_generation_id(7);
        let frame = encode_request(&req, 4, 42, "c").unwrap();
        let size = i32::from_be_bytes(frame[..4].try_into().unwrap());
        assert_eq!(size as usize, frame.len() - 4);
        // api key 12, version 4, correlation id 42
        assert_eq!(&frame[4..12], &[0, 12, 0, 4, 0, 0, 0, 42]);
    }

    #[test]
    fn refuses_bad_frame_sizes() {
        for size in [-1i32, (MAX_FRAME_BYTES + 1) as i32] {
            let bytes = size.to_be_bytes();
            assert!(matches!(read_frame(&mut &bytes[..]), Err(FrameError::Size(s)) if s == size as i64));
        }
        let mut truncated = 10i32.to_be_bytes().to_vec();
        truncated.extend_from_slice(&[1, 2, 3]);
        assert!(matches!(read_frame(&mut &truncated[..]), Err(FrameError::Io(_))));
        let mut ok = 2i32.to_be_bytes().to_vec();
        ok.extend_from_slice(&[9, 8]);
        assert_eq!(read_frame(&mut &ok[..]).unwrap(), vec![9, 8]);
    }

    #[test]
    fn refuses_truncated_and_trailing_responses() {
        // Heartbeat v4: flexible header (correlation id + tags), throttle, error code, tags.
        let body = vec![0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 27, 0];
        let (id, resp) = decode_response::<HeartbeatRequest>(body.clone(), 4).unwrap();
        assert_eq!((id, resp.error_code), (5, 27));
        let _: HeartbeatResponse = resp;
        for n in 0..body.len() {
            assert!(decode_response::<HeartbeatRequest>(body[..n].to_vec(), 4).is_err(), "prefix {n}");
        }
        let mut longer = body;
        longer.push(0);
        assert!(decode_response::<HeartbeatRequest>(longer, 4).unwrap_err().contains("1 byte(s) after the message"));
    }
}
