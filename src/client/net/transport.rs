//! The byte stream under a [`Connection`](crate::client::connection::Connection): plain TCP, or
//! TLS (rustls) over TCP, and a deadline that bounds every read and write.
//!
//! A request has one deadline, not one timeout per read: before each read or write of the socket
//! the socket's timeout is set to the time left, and once the deadline has passed the next read
//! fails with `TimedOut` at once. So a broker that trickles one byte a second holds a request no
//! longer than its deadline. TLS reads go through the same socket, so they keep the deadline
//! too.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{AlertDescription, CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme, StreamOwned};

/// A TCP socket whose reads and writes end at a deadline.
#[derive(Debug)]
pub struct Socket {
    tcp: TcpStream,
    deadline: Instant,
}

impl Socket {
    /// Connects to `addr`, waiting until `deadline` at most.
    pub fn connect(addr: &SocketAddr, deadline: Instant) -> io::Result<Self> {
        let left = left(deadline)?;
        let tcp = TcpStream::connect_timeout(addr, left)?;
        let _ = tcp.set_nodelay(true);
        Ok(Self { tcp, deadline })
    }

    fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }
}

/// The time left until `deadline`, or `TimedOut` when it has passed.
fn left(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "the request's deadline passed"));
    }
    Ok(left)
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.tcp.set_read_timeout(Some(left(self.deadline)?))?;
        self.tcp.read(buf)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.set_write_timeout(Some(left(self.deadline)?))?;
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

/// Plain TCP or TLS over TCP.
#[derive(Debug)]
pub enum Transport {
    /// `PLAINTEXT` and `SASL_PLAINTEXT`.
    Plain(Socket),
    /// `SSL` and `SASL_SSL`.
    Tls(Box<StreamOwned<ClientConnection, Socket>>),
}

impl Transport {
    /// A handle on the TCP socket under this transport (`TcpStream::try_clone`), plain or TLS:
    /// shutting it down from another thread ends a read or write in progress.
    pub fn try_clone_tcp(&self) -> io::Result<TcpStream> {
        match self {
            Self::Plain(s) => s.tcp.try_clone(),
            Self::Tls(t) => t.sock.tcp.try_clone(),
        }
    }

    /// Sets the deadline of the reads and writes that follow.
    pub fn set_deadline(&mut self, deadline: Instant) {
        match self {
            Self::Plain(s) => s.set_deadline(deadline),
            Self::Tls(t) => t.sock.set_deadline(deadline),
        }
    }

    /// Runs the TLS handshake over `socket` for the broker `host` (a DNS name or an IP
    /// address), by the socket's deadline.
    pub fn tls(mut socket: Socket, config: Arc<ClientConfig>, host: &str) -> Result<Self, TlsFailure> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| TlsFailure::Refused(format!("`{host}` is neither a host name nor an IP address")))?;
        let mut conn = ClientConnection::new(config, name).map_err(|e| TlsFailure::Refused(e.to_string()))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut socket).map_err(|e| classify(e, host))?;
        }
        Ok(Self::Tls(Box::new(StreamOwned::new(conn, socket))))
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.read(buf),
            Self::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.write(buf),
            Self::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(s) => s.flush(),
            Self::Tls(t) => t.flush(),
        }
    }
}

/// Why a TLS handshake failed.
#[derive(Debug)]
pub enum TlsFailure {
    /// The socket failed (timeout, closed, reset): sorted as any socket error.
    Io(io::Error),
    /// TLS itself failed, in words.
    Refused(String),
}

/// Sorts a handshake error: the TLS errors an operator meets, in words; the socket's own
/// errors as they are.
fn classify(e: io::Error, host: &str) -> TlsFailure {
    if let Some(reason) = tls_reason(&e, host) {
        return TlsFailure::Refused(reason);
    }
    if matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset) {
        return TlsFailure::Refused(
            "the broker closed the connection during the TLS handshake (is this a TLS listener, SSL or SASL_SSL?)".into(),
        );
    }
    TlsFailure::Io(e)
}

/// The TLS error inside `e`, in words, or `None` when `e` is a socket error. A TLS 1.3 broker
/// that refuses the client's certificate says so after the handshake, with an alert that the
/// first read meets: this names it too.
pub fn tls_reason(e: &io::Error, host: &str) -> Option<String> {
    let tls = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>())?;
    Some(match tls {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "the broker's certificate is not trusted (its issuer is not in the trust store: set ssl.truststore.location or ssl.truststore.certificates)".into()
        }
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }) => {
            format!(
                "the broker's certificate is not valid for `{host}` (ssl.endpoint.identification.algorithm= with an empty value skips the host name check)"
            )
        }
        rustls::Error::InvalidCertificate(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => {
            "the broker's certificate has expired".into()
        }
        rustls::Error::InvalidCertificate(other) => format!("the broker's certificate is not trusted ({other:?})"),
        rustls::Error::AlertReceived(alert @ (AlertDescription::CertificateRequired | AlertDescription::BadCertificate | AlertDescription::UnknownCA)) => {
            format!("the broker refused the client's certificate or its absence (TLS alert {alert:?}; ssl.keystore.* gives one)")
        }
        rustls::Error::AlertReceived(alert) => format!("the broker refused the handshake (TLS alert {alert:?})"),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } | rustls::Error::InappropriateHandshakeMessage { .. } => {
            format!("the broker's answer is not TLS ({tls}); is this a TLS listener, SSL or SASL_SSL?")
        }
        other => other.to_string(),
    })
}

/// A client's certificate chain and private key (mutual TLS).
pub type ClientCertificate = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// A rustls client configuration that trusts `roots` and, with `client`, presents that
/// certificate; with `verify_hostname` false the certificate chain is still verified, only the
/// host name is not checked against it.
pub fn tls_config(roots: RootCertStore, verify_hostname: bool, client: Option<ClientCertificate>) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions().map_err(|e| e.to_string())?;
    let builder = if verify_hostname {
        builder.with_root_certificates(roots)
    } else {
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build().map_err(|e| e.to_string())?;
        builder.dangerous().with_custom_certificate_verifier(Arc::new(ChainOnly(inner)))
    };
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => builder.with_client_auth_cert(chain, key).map_err(|e| format!("the client certificate cannot be used: {e}"))?,
    };
    Ok(Arc::new(config))
}

/// Verifies the chain as WebPKI does and accepts a certificate whose names do not match
/// (`ssl.endpoint.identification.algorithm=` empty, as Kafka).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // WebPKI checks the chain first and the name last: a name error means a trusted chain.
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
