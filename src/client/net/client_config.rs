//! How to reach brokers: the security part of a Kafka client configuration
//! (`client.properties`, as `--command-config` gives it to Kafka's tools), read into a
//! [`Security`]. `docs/security.md` lists every key.
//!
//! The keys are Kafka's: `security.protocol`, `sasl.mechanism`, `sasl.jaas.config`,
//! `sasl.oauthbearer.token.endpoint.url` (a `file:` URL), `ssl.truststore.location`,
//! `ssl.truststore.type`, `ssl.truststore.certificates`, `ssl.truststore.password`,
//! `ssl.endpoint.identification.algorithm`, and for a client certificate `ssl.keystore.*` in PEM. Other Kafka client keys (`client.id`,
//! `request.timeout.ms` ...) are ignored, as the keys of `ssl.*`, `sasl.*` that change nothing
//! here; a key of `security.*`, `ssl.*` or `sasl.*` that Kafka does not have is an error that
//! names it, and so is a Kafka key whose setting this client cannot honour (a JKS trust store, an
//! encrypted private key, a Kerberos login).
//!
//! ```
//! use kstreams_assignor::client::net::client_config::{Security, SecurityProtocol};
//!
//! let security = Security::from_properties(
//!     "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
//!      sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"secret\";\n",
//!     std::path::Path::new("."),
//! ).unwrap();
//! assert_eq!(security.protocol(), SecurityProtocol::SaslPlaintext);
//!
//! let err = Security::from_properties("security.protocol=SSL\nssl.truststore.locaton=/tmp/ca.pem\n", std::path::Path::new(".")).unwrap_err();
//! assert_eq!(err.to_string(), "line 2: unknown key `ssl.truststore.locaton` (did you mean `ssl.truststore.location`?)");
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::pki_types::pem::PemObject;

use crate::client::net::properties::{SyntaxError, parse_jaas, parse_properties};
use crate::client::net::sasl::{Credentials, SaslMechanism, Token};
use crate::client::net::transport::{ClientCertificate, tls_config};

/// `security.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SecurityProtocol {
    /// `PLAINTEXT`.
    #[default]
    Plaintext,
    /// `SSL`.
    Ssl,
    /// `SASL_PLAINTEXT`.
    SaslPlaintext,
    /// `SASL_SSL`.
    SaslSsl,
}

impl SecurityProtocol {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "PLAINTEXT" => Some(Self::Plaintext),
            "SSL" => Some(Self::Ssl),
            "SASL_PLAINTEXT" => Some(Self::SaslPlaintext),
            "SASL_SSL" => Some(Self::SaslSsl),
            _ => None,
        }
    }

    /// Whether the connection is TLS.
    pub fn tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether the client authenticates with SASL.
    pub fn sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// Why a client configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The text does not parse.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A key Kafka does not have, in the security namespaces.
    #[error("line {line}: unknown key `{key}`{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownKey {
        /// The key.
        key: String,
        /// The line.
        line: usize,
        /// The closest known key.
        suggestion: Option<String>,
    },
    /// A key's value is not valid, or cannot be honoured here.
    #[error("{key}: {reason}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// Why.
        reason: String,
    },
}

/// How connections are secured: TLS or not, and SASL credentials or none. Cheap to clone.
#[derive(Clone, Default)]
pub struct Security {
    protocol: SecurityProtocol,
    tls: Option<Arc<rustls::ClientConfig>>,
    sasl: Option<Credentials>,
    notes: Vec<String>,
}

impl fmt::Debug for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Security").field("protocol", &self.protocol).field("sasl", &self.sasl).finish_non_exhaustive()
    }
}

/// The keys read here.
const KEYS: &[&str] = &[
    "security.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.oauthbearer.token.endpoint.url",
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    "ssl.endpoint.identification.algorithm",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.password",
    "ssl.key.password",
];

/// Kafka's client keys of these namespaces that change nothing for this client (they tune
/// token refresh, Java's providers, or the server side), accepted and ignored.
const IGNORED: &[&str] = &[
    "sasl.login.callback.handler.class",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.login.retry.backoff.max.ms",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.header.urlencode",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
    "ssl.provider",
];

/// Kafka's client keys whose settings would change the connection in ways this client does
/// not do: with a value, an error (rustls's choices hold for protocols and ciphers, and they are
/// noted).
const UNSUPPORTED: &[(&str, &str)] = &[
    ("ssl.engine.factory.class", "a Java SSL engine factory cannot be loaded"),
    ("sasl.client.callback.handler.class", "a Java callback handler cannot be loaded"),
    ("sasl.login.class", "a Java login class cannot be loaded"),
    ("sasl.kerberos.service.name", "GSSAPI (Kerberos) is not supported"),
    ("sasl.kerberos.kinit.cmd", "GSSAPI (Kerberos) is not supported"),
    ("sasl.kerberos.ticket.renew.window.factor", "GSSAPI (Kerberos) is not supported"),
    ("sasl.kerberos.ticket.renew.jitter", "GSSAPI (Kerberos) is not supported"),
    ("sasl.kerberos.min.time.before.relogin", "GSSAPI (Kerberos) is not supported"),
];

/// Noted and otherwise ignored: rustls's TLS 1.2 and 1.3 and its cipher suites are used.
const NOTED: &[&str] = &["ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites"];

const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const OAUTH_MODULE: &str = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

impl Security {
    /// `PLAINTEXT`: no TLS, no SASL.
    pub fn plaintext() -> Self {
        Self::default()
    }

    /// `security.protocol`.
    pub fn protocol(&self) -> SecurityProtocol {
        self.protocol
    }

    /// The TLS configuration (for `SSL` and `SASL_SSL`).
    pub fn tls(&self) -> Option<&Arc<rustls::ClientConfig>> {
        self.tls.as_ref()
    }

    /// The SASL credentials (for `SASL_PLAINTEXT` and `SASL_SSL`).
    pub fn sasl(&self) -> Option<&Credentials> {
        self.sasl.as_ref()
    }

    /// What was accepted but does not act as it would in Kafka's Java client (one line each),
    /// for the operator to read.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Reads `path`, a Kafka client properties file; relative paths in it are relative to the
    /// current directory, as in Kafka.
    pub fn load(path: &Path) -> Result<Self, ClientConfigError> {
        let read = |reason: String| ClientConfigError::Read { path: path.to_owned(), reason };
        let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
        Self::from_properties(&text, Path::new("."))
    }

    /// Reads the text of a client properties file; relative file paths in it are taken from
    /// `base`.
    pub fn from_properties(text: &str, base: &Path) -> Result<Self, ClientConfigError> {
        let mut values: Vec<(&'static str, String)> = Vec::new();
        let mut notes = Vec::new();
        for (key, value, line) in parse_properties(text)? {
            if let Some(&known) = KEYS.iter().find(|k| **k == key) {
                values.retain(|(k, _)| *k != known);
                values.push((known, value));
            } else if let Some((k, why)) = UNSUPPORTED.iter().find(|(k, _)| *k == key) {
                if !value.trim().is_empty() {
                    return Err(ClientConfigError::Invalid { key: k, reason: why.to_string() });
                }
            } else if NOTED.contains(&key.as_str()) {
                notes.push(format!("{key} is ignored: TLS 1.2 and 1.3 with rustls's cipher suites are used"));
            } else if IGNORED.contains(&key.as_str()) {
            } else if ["security.", "ssl.", "sasl."].iter().any(|p| key.starts_with(p)) {
                return Err(ClientConfigError::UnknownKey { suggestion: closest(&key), key, line });
            }
        }
        let get = |k: &str| values.iter().find(|(key, _)| *key == k).map(|(_, v)| v.trim()).filter(|v| !v.is_empty());
        let invalid = |key: &'static str, reason: String| ClientConfigError::Invalid { key, reason };

        let protocol = match get("security.protocol") {
            None => SecurityProtocol::Plaintext,
            Some(p) => SecurityProtocol::from_name(&p.to_ascii_uppercase())
                .ok_or_else(|| invalid("security.protocol", format!("`{p}` is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")))?,
        };
        let tls = if protocol.tls() {
            let verify_hostname = match get("ssl.endpoint.identification.algorithm").map(str::to_ascii_lowercase).as_deref() {
                None => values.iter().all(|(k, _)| *k != "ssl.endpoint.identification.algorithm"),
                Some("https") => true,
                Some(other) => {
                    return Err(invalid("ssl.endpoint.identification.algorithm", format!("`{other}` is not `https` or empty")));
                }
            };
            let client = client_certificate(&get, base)?;
            Some(tls_config(trust_roots(&get, base)?, verify_hostname, client).map_err(|e| invalid("ssl.keystore.location", e))?)
        } else {
            None
        };
        let sasl = if protocol.sasl() {
            Some(credentials(&get, base)?)
        } else {
            None
        };
        Ok(Self { protocol, tls, sasl, notes })
    }
}

type Get<'a> = dyn Fn(&str) -> Option<&'a str> + 'a;

/// The trust store: Mozilla's roots without one; PEM certificates from a file or inline.
fn trust_roots(get: &Get<'_>, base: &Path) -> Result<RootCertStore, ClientConfigError> {
    let invalid = |key: &'static str, reason: String| ClientConfigError::Invalid { key, reason };
    let kind = get("ssl.truststore.type").map(str::to_ascii_uppercase);
    let location = get("ssl.truststore.location");
    let inline = get("ssl.truststore.certificates");
    let pem = match (location, inline) {
        (None, None) => {
            return Ok(RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() });
        }
        (Some(_), Some(_)) => {
            return Err(invalid("ssl.truststore.certificates", "set either ssl.truststore.location or ssl.truststore.certificates".into()));
        }
        (None, Some(text)) => {
            if kind.as_deref().is_some_and(|k| k != "PEM") {
                return Err(invalid("ssl.truststore.certificates", "needs ssl.truststore.type=PEM".into()));
            }
            text.as_bytes().to_vec()
        }
        (Some(path), None) => {
            let path = base.join(path);
            let bytes = std::fs::read(&path).map_err(|e| invalid("ssl.truststore.location", format!("cannot read {}: {e}", path.display())))?;
            let is_pem = bytes.windows(11).any(|w| w == b"-----BEGIN ");
            match kind.as_deref() {
                Some("PEM") => bytes,
                // Kafka's default type is JKS; a PEM file is taken for what it is.
                None if is_pem => bytes,
                Some("PKCS12") => {
                    return Err(invalid(
                        "ssl.truststore.type",
                        format!(
                            "PKCS12 trust stores are not read; convert it to PEM with `openssl pkcs12 -in {} -nokeys -out truststore.pem` and set ssl.truststore.type=PEM",
                            path.display()
                        ),
                    ));
                }
                Some("JKS") | None => {
                    return Err(invalid(
                        "ssl.truststore.type",
                        format!(
                            "JKS trust stores are not read; export its certificates as PEM with `keytool -list -rfc -keystore {} > truststore.pem` (keep the -----BEGIN/END CERTIFICATE----- blocks) and set ssl.truststore.type=PEM",
                            path.display()
                        ),
                    ));
                }
                Some(other) => return Err(invalid("ssl.truststore.type", format!("`{other}` is not PEM, JKS or PKCS12"))),
            }
        }
    };
    if get("ssl.truststore.password").is_some() {
        return Err(invalid("ssl.truststore.password", "a PEM trust store has no password (as in Kafka)".into()));
    }
    let mut roots = RootCertStore::empty();
    let key = if location.is_some() { "ssl.truststore.location" } else { "ssl.truststore.certificates" };
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| invalid(key, format!("not valid PEM: {e}")))?;
        roots.add(cert).map_err(|e| invalid(key, format!("a certificate is not valid: {e}")))?;
    }
    if roots.is_empty() {
        return Err(invalid(key, "no CERTIFICATE in the PEM".into()));
    }
    Ok(roots)
}

/// The client's certificate and key (mutual TLS), from a PEM key store: a file holding the
/// private key and the certificate chain, or both inline. Kafka's encrypted keys
/// (`ssl.key.password`) and JKS or PKCS12 key stores are refused, saying how to convert them.
fn client_certificate(get: &Get<'_>, base: &Path) -> Result<Option<ClientCertificate>, ClientConfigError> {
    let invalid = |key: &'static str, reason: String| ClientConfigError::Invalid { key, reason };
    let (location, chain, key) = (get("ssl.keystore.location"), get("ssl.keystore.certificate.chain"), get("ssl.keystore.key"));
    if location.is_none() && chain.is_none() && key.is_none() {
        return Ok(None);
    }
    if get("ssl.key.password").is_some() {
        return Err(invalid(
            "ssl.key.password",
            "encrypted private keys are not read; decrypt it with `openssl pkcs8 -in key.pem -out plain-key.pem` (the file is then secret as it is) and leave ssl.key.password out".into(),
        ));
    }
    let kind = get("ssl.keystore.type").map(str::to_ascii_uppercase);
    let (what, pem, key_pem) = match (location, chain, key) {
        (Some(path), None, None) => {
            let path = base.join(path);
            let bytes = std::fs::read(&path).map_err(|e| invalid("ssl.keystore.location", format!("cannot read {}: {e}", path.display())))?;
            let is_pem = bytes.windows(11).any(|w| w == b"-----BEGIN ");
            match kind.as_deref() {
                Some("PEM") => {}
                None if is_pem => {}
                Some("JKS" | "PKCS12") | None => {
                    return Err(invalid(
                        "ssl.keystore.type",
                        format!(
                            "only PEM key stores are read; convert it with `openssl pkcs12 -in {} -nodes -out keystore.pem` (for JKS first `keytool -importkeystore -srckeystore {0} -destkeystore keystore.p12 -deststoretype PKCS12`) and set ssl.keystore.type=PEM",
                            path.display()
                        ),
                    ));
                }
                Some(other) => return Err(invalid("ssl.keystore.type", format!("`{other}` is not PEM, JKS or PKCS12"))),
            }
            if get("ssl.keystore.password").is_some() {
                return Err(invalid("ssl.keystore.password", "a PEM key store has no password (as in Kafka)".into()));
            }
            ("ssl.keystore.location", bytes.clone(), bytes)
        }
        (None, Some(chain), Some(key)) => ("ssl.keystore.certificate.chain", chain.as_bytes().to_vec(), key.as_bytes().to_vec()),
        _ => {
            return Err(invalid(
                "ssl.keystore.location",
                "set either ssl.keystore.location, or both ssl.keystore.certificate.chain and ssl.keystore.key".into(),
            ));
        }
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid(what, format!("not valid PEM: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(what, "no CERTIFICATE in the PEM".into()));
    }
    let key_name = if what == "ssl.keystore.location" { what } else { "ssl.keystore.key" };
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        invalid(key_name, format!("no unencrypted private key (PKCS#8, PKCS#1 or SEC1) in the PEM: {e}"))
    })?;
    Ok(Some((chain, key)))
}

/// The SASL credentials from `sasl.mechanism` and `sasl.jaas.config`.
fn credentials(get: &Get<'_>, base: &Path) -> Result<Credentials, ClientConfigError> {
    let invalid = |key: &'static str, reason: String| ClientConfigError::Invalid { key, reason };
    let name = get("sasl.mechanism").unwrap_or("GSSAPI");
    let mechanism = SaslMechanism::from_name(name).ok_or_else(|| {
        invalid("sasl.mechanism", format!("`{name}` is not supported (supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)"))
    })?;
    let jaas = get("sasl.jaas.config")
        .map(parse_jaas)
        .transpose()?
        .ok_or_else(|| invalid("sasl.jaas.config", format!("is required for {mechanism} (a JAAS file through java.security.auth.login.config is not read)")))?;
    let option = |k: &str| jaas.options.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    if mechanism == SaslMechanism::OAuthBearer {
        if jaas.module != OAUTH_MODULE {
            return Err(invalid("sasl.jaas.config", format!("OAUTHBEARER needs {OAUTH_MODULE}, not {}", jaas.module)));
        }
        if let Some(url) = get("sasl.oauthbearer.token.endpoint.url") {
            let path = url.strip_prefix("file://").ok_or_else(|| {
                invalid("sasl.oauthbearer.token.endpoint.url", format!("only a file:// URL holding the token is supported, not `{url}`"))
            })?;
            let path = base.join(path);
            let token = std::fs::read_to_string(&path)
                .map_err(|e| invalid("sasl.oauthbearer.token.endpoint.url", format!("cannot read {}: {e}", path.display())))?;
            let token = token.trim();
            if token.is_empty() {
                return Err(invalid("sasl.oauthbearer.token.endpoint.url", format!("{} is empty", path.display())));
            }
            return Ok(Credentials::OAuthBearer(Token::Static(token.to_owned())));
        }
        let mut claims = Vec::new();
        let mut lifetime_s = 3600;
        for (k, v) in &jaas.options {
            if let Some(claim) = k.strip_prefix("unsecuredLoginStringClaim_") {
                if claim == "iat" || claim == "exp" {
                    return Err(invalid("sasl.jaas.config", format!("the claim `{claim}` is set by the login itself")));
                }
                claims.push((claim.to_owned(), v.clone()));
            } else if k == "unsecuredLoginLifetimeSeconds" {
                lifetime_s = v.parse().map_err(|_| invalid("sasl.jaas.config", format!("unsecuredLoginLifetimeSeconds `{v}` is not a number")))?;
            } else if k.starts_with("unsecuredLogin") {
                return Err(invalid("sasl.jaas.config", format!("`{k}` is not supported (unsecuredLoginStringClaim_* and unsecuredLoginLifetimeSeconds are)")));
            }
        }
        if !claims.iter().any(|(k, _)| k == "sub") {
            return Err(invalid(
                "sasl.oauthbearer.token.endpoint.url",
                "OAUTHBEARER needs a token: a file:// URL holding it, or unsecuredLoginStringClaim_sub in sasl.jaas.config for an unsecured token".into(),
            ));
        }
        return Ok(Credentials::OAuthBearer(Token::Unsecured { claims, lifetime_s }));
    }
    if jaas.module != PLAIN_MODULE && jaas.module != SCRAM_MODULE {
        return Err(invalid("sasl.jaas.config", format!("{mechanism} needs {PLAIN_MODULE} or {SCRAM_MODULE}, not {}", jaas.module)));
    }
    let username = option("username").ok_or_else(|| invalid("sasl.jaas.config", "no username=\"...\"".into()))?;
    let password = option("password").ok_or_else(|| invalid("sasl.jaas.config", "no password=\"...\"".into()))?;
    let token_auth = option("tokenauth").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    Ok(Credentials::Password { mechanism, username, password, token_auth })
}

/// The known key nearest to `key` (at most two edits away).
fn closest(key: &str) -> Option<String> {
    let all = KEYS.iter().chain(IGNORED).chain(UNSUPPORTED.iter().map(|(k, _)| k)).chain(NOTED);
    all.map(|k| (edit_distance(key, k), k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| (*k).to_owned())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j])).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Security, String> {
        Security::from_properties(text, Path::new(".")).map_err(|e| e.to_string())
    }

    const SCRAM: &str = "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";\n";

    #[test]
    fn reads_each_mechanism() {
        let s = parse(&format!("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n{SCRAM}")).unwrap();
        assert_eq!(s.sasl(), Some(&Credentials::password(SaslMechanism::ScramSha256, "u", "p")));
        let plain = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\";";
        assert_eq!(parse(plain).unwrap().sasl(), Some(&Credentials::password(SaslMechanism::Plain, "a", "b")));
        let oauth = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"alice\";";
        let token = Token::Unsecured { claims: vec![("sub".into(), "alice".into())], lifetime_s: 3600 };
        assert_eq!(parse(oauth).unwrap().sasl(), Some(&Credentials::OAuthBearer(token)));
        // Other Kafka client keys are no business of this client's.
        let s = parse("bootstrap.servers=x:9092\nclient.id=me\nrequest.timeout.ms=5\nsasl.login.refresh.buffer.seconds=1\n").unwrap();
        assert_eq!((s.protocol(), s.tls().is_none(), s.sasl().is_none()), (SecurityProtocol::Plaintext, true, true));
    }

    #[test]
    fn reads_a_token_file_and_a_pem_trust_store() {
        let dir = std::env::temp_dir().join(format!("kstreams-assignor-client-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("token"), "eyJhbGciOiJub25lIn0.e30.\n").unwrap();
        let text = format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=file://{}\nsasl.jaas.config={OAUTH_MODULE} required ;\n",
            dir.join("token").display()
        );
        assert_eq!(parse(&text).unwrap().sasl(), Some(&Credentials::OAuthBearer(Token::Static("eyJhbGciOiJub25lIn0.e30.".into()))));
        std::fs::write(dir.join("not-a-cert.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
        let err = parse(&format!("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}", dir.join("not-a-cert.pem").display()));
        assert!(err.unwrap_err().starts_with("ssl.truststore.location: "));
        std::fs::write(dir.join("store.jks"), [0xfe, 0xed, 0xfe, 0xed]).unwrap();
        let err = parse(&format!("security.protocol=SSL\nssl.truststore.location={}", dir.join("store.jks").display())).unwrap_err();
        assert!(err.contains("keytool -list -rfc"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        let cases = [
            ("security.protocol=TLS", "security.protocol: `TLS` is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
            ("security.protocol=SASL_SSL\nsasl.mecanism=PLAIN", "line 2: unknown key `sasl.mecanism` (did you mean `sasl.mechanism`?)"),
            ("ssl.truststore.fish=1", "line 1: unknown key `ssl.truststore.fish`"),
            ("security.protocol=SASL_PLAINTEXT", "sasl.mechanism: `GSSAPI` is not supported (supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)"),
            ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN", "sasl.jaas.config: is required for PLAIN (a JAAS file through java.security.auth.login.config is not read)"),
            ("security.protocol=SSL\nssl.keystore.location=/k.pem\nssl.key.password=x", "ssl.key.password: encrypted private keys are not read; decrypt it with `openssl pkcs8 -in key.pem -out plain-key.pem` (the file is then secret as it is) and leave ssl.key.password out"),
            ("security.protocol=SSL\nssl.keystore.key=x", "ssl.keystore.location: set either ssl.keystore.location, or both ssl.keystore.certificate.chain and ssl.keystore.key"),
            ("security.protocol=SSL\nssl.endpoint.identification.algorithm=none", "ssl.endpoint.identification.algorithm: `none` is not `https` or empty"),
            ("security.protocol=SSL\nssl.truststore.certificates=x\nssl.truststore.type=JKS", "ssl.truststore.certificates: needs ssl.truststore.type=PEM"),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).unwrap_err(), want, "{text}");
        }
        let no_sub = format!("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config={OAUTH_MODULE} required;");
        assert!(parse(&no_sub).unwrap_err().contains("needs a token"));
        let wrong_module = format!("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n{SCRAM}");
        assert!(parse(&wrong_module).unwrap_err().contains("OAUTHBEARER needs"));
        let noted = parse("security.protocol=SSL\nssl.enabled.protocols=TLSv1.3").unwrap();
        assert_eq!(noted.notes().len(), 1);
    }
}
