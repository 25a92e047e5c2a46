//! The client side of the SASL mechanisms Kafka brokers offer: `PLAIN` (RFC 4616),
//! `SCRAM-SHA-256` and `SCRAM-SHA-512` (RFC 5802, RFC 7677) and `OAUTHBEARER` (RFC 7628) with a
//! static or an unsecured token. Sans-IO: [`SaslSession`] turns the broker's challenges into the
//! client's responses, and the connection carries them in `SaslAuthenticate` requests.
//!
//! SCRAM checks the server's signature in its final message, so a server that does not know the
//! password cannot pretend it does; its nonce must extend the client's, and its iteration count
//! must be within Kafka's bounds for the mechanism (4096 to 16384), so a hostile server cannot
//! make the client hash for minutes.
//!
//! ```
//! use kstreams_assignor::client::net::sasl::{Credentials, SaslMechanism, SaslSession, Step};
//!
//! let credentials = Credentials::password(SaslMechanism::Plain, "alice", "secret");
//! let (mut session, first) = SaslSession::start(&credentials).unwrap();
//! assert_eq!(first, b"\0alice\0secret");
//! assert!(matches!(session.step(b""), Ok(Step::Done)));
//! ```

use std::fmt;
use std::num::NonZeroU32;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::{digest, hmac, pbkdf2, rand::SecureRandom};

/// A SASL mechanism (`sasl.mechanism`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaslMechanism {
    /// `PLAIN`: the password in the clear (under TLS).
    Plain,
    /// `SCRAM-SHA-256`.
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
    /// `OAUTHBEARER`.
    OAuthBearer,
}

impl SaslMechanism {
    /// Every mechanism.
    pub const ALL: [Self; 4] = [Self::Plain, Self::ScramSha256, Self::ScramSha512, Self::OAuthBearer];

    /// Kafka's name (`SCRAM-SHA-512`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::ScramSha256 => "SCRAM-SHA-256",
            Self::ScramSha512 => "SCRAM-SHA-512",
            Self::OAuthBearer => "OAUTHBEARER",
        }
    }

    /// The mechanism of Kafka name `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for SaslMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An OAUTHBEARER token.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Token {
    /// A token as it is (a JWT read from a file).
    Static(String),
    /// An unsecured JWS (`"alg":"none"`) made at each login, as Kafka's
    /// `OAuthBearerUnsecuredLoginCallbackHandler` makes it: these string claims (`sub` among
    /// them), `iat` now and `exp` `lifetime_s` later.
    Unsecured {
        /// The string claims, in order.
        claims: Vec<(String, String)>,
        /// `unsecuredLoginLifetimeSeconds` (3600).
        lifetime_s: u64,
    },
}

/// What a client proves itself with. `Debug` never prints a password or a token.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credentials {
    /// `PLAIN` or `SCRAM-*`: a user name and a password.
    Password {
        /// The mechanism, `PLAIN` or `SCRAM-*`.
        mechanism: SaslMechanism,
        /// `username`.
        username: String,
        /// `password`.
        password: String,
        /// SCRAM's `tokenauth=true`: the user name and password are a delegation token's id
        /// and HMAC.
        token_auth: bool,
    },
    /// `OAUTHBEARER`.
    OAuthBearer(Token),
}

impl Credentials {
    /// A user name and password for `mechanism` (`PLAIN` or `SCRAM-*`).
    pub fn password(mechanism: SaslMechanism, username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::Password { mechanism, username: username.into(), password: password.into(), token_auth: false }
    }

    /// The mechanism these credentials are for.
    pub fn mechanism(&self) -> SaslMechanism {
        match self {
            Self::Password { mechanism, .. } => *mechanism,
            Self::OAuthBearer(_) => SaslMechanism::OAuthBearer,
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Password { mechanism, username, token_auth, .. } => f
                .debug_struct("Password")
                .field("mechanism", mechanism)
                .field("username", username)
                .field("password", &"<redacted>")
                .field("token_auth", token_auth)
                .finish(),
            Self::OAuthBearer(_) => f.write_str("OAuthBearer(<redacted>)"),
        }
    }
}

/// Why an exchange failed on the client's side: what the broker answered does not follow the
/// mechanism.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaslError {
    /// The server's message does not have the mechanism's form.
    #[error("the broker's {step} message is not valid: {reason}")]
    Malformed {
        /// Which message (`server-first`).
        step: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// SCRAM: the server's nonce does not start with the client's.
    #[error("the broker's SCRAM nonce does not extend the client's")]
    Nonce,
    /// SCRAM: the iteration count is outside Kafka's bounds.
    #[error("the broker asks for {0} SCRAM iterations (accepted: 4096 to 16384)")]
    Iterations(u64),
    /// SCRAM: the server's signature is wrong (it does not know the password).
    #[error("the broker's SCRAM signature is wrong: it does not know this user's credentials")]
    ServerSignature,
    /// SCRAM: the server ended the exchange with an error attribute.
    #[error("the broker refused the credentials ({0})")]
    Refused(String),
    /// A challenge came after the exchange was over.
    #[error("the broker sent a challenge after the exchange ended")]
    Unexpected,
    /// The system's random source failed.
    #[error("no random bytes for the SCRAM nonce")]
    Random,
}

/// What to do after a challenge.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes in the next `SaslAuthenticate`.
    Send(Vec<u8>),
    /// The exchange succeeded (on the client's side: the broker's error code decides too).
    Done,
}

/// One client exchange of a mechanism.
#[derive(Debug)]
pub struct SaslSession {
    state: State,
}

#[derive(Debug)]
enum State {
    /// The broker's answer to the one message ends the exchange.
    Last,
    /// OAUTHBEARER: the broker's first answer (empty on success, a JSON error otherwise).
    BearerFirst,
    /// SCRAM, waiting for server-first.
    ScramFirst(Scram),
    /// SCRAM, waiting for server-final: the server key and the auth message it signs.
    ScramFinal(hmac::Key, String),
    Over,
}

struct Scram {
    algorithm: ScramHash,
    password: String,
    nonce: String,
    client_first_bare: String,
}

impl fmt::Debug for Scram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scram").field("client_first_bare", &self.client_first_bare).finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy)]
enum ScramHash {
    Sha256,
    Sha512,
}

impl ScramHash {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            Self::Sha256 => hmac::HMAC_SHA256,
            Self::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Self::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Self::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Self::Sha256 => &digest::SHA256,
            Self::Sha512 => &digest::SHA512,
        }
    }

    fn len(self) -> usize {
        self.digest().output_len()
    }
}

/// SCRAM's `saslname`: `=` as `=3D` and `,` as `=2C`.
fn sasl_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

impl SaslSession {
    /// Starts an exchange: the session, and the client's first message.
    pub fn start(credentials: &Credentials) -> Result<(Self, Vec<u8>), SaslError> {
        let mut nonce = [0u8; 24];
        ring::rand::SystemRandom::new().fill(&mut nonce).map_err(|_| SaslError::Random)?;
        Self::start_with_nonce(credentials, &STANDARD.encode(nonce), now_s())
    }

    /// As [`start`](Self::start) with a given SCRAM nonce and clock (epoch seconds, for an
    /// unsecured token), for tests against known vectors.
    pub fn start_with_nonce(credentials: &Credentials, nonce: &str, now_s: u64) -> Result<(Self, Vec<u8>), SaslError> {
        match credentials {
            Credentials::Password { mechanism: SaslMechanism::Plain, username, password, .. } => {
                Ok((Self { state: State::Last }, format!("\0{username}\0{password}").into_bytes()))
            }
            Credentials::Password { mechanism, username, password, token_auth } => {
                let algorithm = if *mechanism == SaslMechanism::ScramSha512 { ScramHash::Sha512 } else { ScramHash::Sha256 };
                let extension = if *token_auth { ",tokenauth=true" } else { "" };
                let client_first_bare = format!("n={},r={nonce}{extension}", sasl_name(username));
                let first = format!("n,,{client_first_bare}").into_bytes();
                let scram = Scram { algorithm, password: password.clone(), nonce: nonce.to_owned(), client_first_bare };
                Ok((Self { state: State::ScramFirst(scram) }, first))
            }
            Credentials::OAuthBearer(token) => {
                let value = match token {
                    Token::Static(t) => t.clone(),
                    Token::Unsecured { claims, lifetime_s } => unsecured_jws(claims, now_s, *lifetime_s),
                };
                Ok((Self { state: State::BearerFirst }, format!("n,,\x01auth=Bearer {value}\x01\x01").into_bytes()))
            }
        }
    }

    /// The broker's challenge (its `SaslAuthenticate` answer's bytes) → what to send next.
    pub fn step(&mut self, challenge: &[u8]) -> Result<Step, SaslError> {
        match std::mem::replace(&mut self.state, State::Over) {
            State::Last => Ok(Step::Done),
            // An error in JSON: RFC 7628 has the client answer %x01, and the broker then fails
            // the exchange with its message.
            State::BearerFirst if !challenge.is_empty() => Ok(Step::Send(vec![1])),
            State::BearerFirst => Ok(Step::Done),
            State::ScramFirst(scram) => {
                let (reply, server_key, auth_message) = scram.client_final(challenge)?;
                self.state = State::ScramFinal(server_key, auth_message);
                Ok(Step::Send(reply))
            }
            State::ScramFinal(server_key, auth_message) => {
                let text = utf8("server-final", challenge)?;
                let attrs = attributes("server-final", text)?;
                if let Some(e) = attrs.iter().find(|(k, _)| *k == 'e') {
                    return Err(SaslError::Refused(e.1.to_owned()));
                }
                let v = attrs
                    .iter()
                    .find(|(k, _)| *k == 'v')
                    .ok_or_else(|| malformed("server-final", "no verifier (v=)"))?;
                let got = STANDARD.decode(v.1).map_err(|_| malformed("server-final", "the verifier is not base64"))?;
                // In constant time.
                hmac::verify(&server_key, auth_message.as_bytes(), &got).map_err(|_| SaslError::ServerSignature)?;
                Ok(Step::Done)
            }
            State::Over => Err(SaslError::Unexpected),
        }
    }
}

fn malformed(step: &'static str, reason: &str) -> SaslError {
    SaslError::Malformed { step, reason: reason.to_owned() }
}

fn utf8<'a>(step: &'static str, bytes: &'a [u8]) -> Result<&'a str, SaslError> {
    std::str::from_utf8(bytes).map_err(|_| malformed(step, "not UTF-8"))
}

/// `a=1,b=2` → `[('a', "1"), ('b', "2")]`; each attribute is one letter.
fn attributes<'a>(step: &'static str, text: &'a str) -> Result<Vec<(char, &'a str)>, SaslError> {
    text.split(',')
        .map(|part| {
            let mut chars = part.chars();
            match (chars.next(), chars.next()) {
                (Some(k), Some('=')) if k.is_ascii_alphabetic() => Ok((k, &part[2..])),
                _ => Err(malformed(step, &format!("`{}` is not an attribute", part.chars().take(40).collect::<String>()))),
            }
        })
        .collect()
}

impl Scram {
    /// server-first → (client-final, the server key and the auth message whose HMAC is the
    /// server's signature).
    fn client_final(self, challenge: &[u8]) -> Result<(Vec<u8>, hmac::Key, String), SaslError> {
        const STEP: &str = "server-first";
        let server_first = utf8(STEP, challenge)?;
        let attrs = attributes(STEP, server_first)?;
        let get = |k: char| attrs.iter().find(|(a, _)| *a == k).map(|(_, v)| *v);
        if let Some(e) = get('e') {
            return Err(SaslError::Refused(e.to_owned()));
        }
        let nonce = get('r').ok_or_else(|| malformed(STEP, "no nonce (r=)"))?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err(SaslError::Nonce);
        }
        let salt = STANDARD.decode(get('s').ok_or_else(|| malformed(STEP, "no salt (s=)"))?).map_err(|_| malformed(STEP, "the salt is not base64"))?;
        let iterations: u64 = get('i').ok_or_else(|| malformed(STEP, "no iteration count (i=)"))?.parse().map_err(|_| malformed(STEP, "the iteration count is not a number"))?;
        let rounds = u32::try_from(iterations).ok().filter(|n| (4096..=16384).contains(n)).and_then(NonZeroU32::new).ok_or(SaslError::Iterations(iterations))?;

        let h = self.algorithm;
        let mut salted = vec![0u8; h.len()];
        pbkdf2::derive(h.pbkdf2(), rounds, &salt, self.password.as_bytes(), &mut salted);
        let salted = hmac::Key::new(h.hmac(), &salted);
        let client_key = hmac::sign(&salted, b"Client Key");
        let stored_key = digest::digest(h.digest(), client_key.as_ref());
        // c=biws: base64 of the GS2 header `n,,`.
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_signature = hmac::sign(&hmac::Key::new(h.hmac(), stored_key.as_ref()), auth_message.as_bytes());
        let proof: Vec<u8> = client_key.as_ref().iter().zip(client_signature.as_ref()).map(|(k, s)| k ^ s).collect();
        let server_key = hmac::Key::new(h.hmac(), hmac::sign(&salted, b"Server Key").as_ref());
        let reply = format!("{without_proof},p={}", STANDARD.encode(proof));
        Ok((reply.into_bytes(), server_key, auth_message))
    }
}

/// The current epoch time in seconds.
fn now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// An unsecured JWS: `{"alg":"none"}`, the claims with `iat` and `exp`, no signature.
fn unsecured_jws(claims: &[(String, String)], now_s: u64, lifetime_s: u64) -> String {
    let mut body = serde_json::Map::new();
    body.insert("iat".into(), now_s.into());
    body.insert("exp".into(), now_s.saturating_add(lifetime_s).into());
    for (k, v) in claims {
        body.insert(k.clone(), v.clone().into());
    }
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
    let body = URL_SAFE_NO_PAD.encode(serde_json::Value::Object(body).to_string());
    format!("{header}.{body}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3: user `user`, password `pencil`.
    #[test]
    fn scram_sha_256_matches_rfc_7677() {
        let credentials = Credentials::password(SaslMechanism::ScramSha256, "user", "pencil");
        let (mut session, first) = SaslSession::start_with_nonce(&credentials, "rOprNGfwEbeRWgbNEkqO", 0).unwrap();
        assert_eq!(first, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let Step::Send(client_final) = session.step(server_first).unwrap() else { panic!("client-final expected") };
        assert_eq!(
            String::from_utf8(client_final).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(session.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").unwrap(), Step::Done);
    }

    #[test]
    fn refuses_a_server_that_does_not_know_the_password() {
        let credentials = Credentials::password(SaslMechanism::ScramSha256, "user", "pencil");
        let start = || SaslSession::start_with_nonce(&credentials, "rOprNGfwEbeRWgbNEkqO", 0).unwrap().0;
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let mut s = start();
        s.step(server_first).unwrap();
        assert_eq!(s.step(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="), Err(SaslError::ServerSignature));
        let mut s = start();
        s.step(server_first).unwrap();
        assert_eq!(s.step(b"e=invalid-proof"), Err(SaslError::Refused("invalid-proof".into())));
        // A nonce that does not extend the client's, too many iterations, garbage.
        assert_eq!(start().step(b"r=other,s=AAAA,i=4096"), Err(SaslError::Nonce));
        assert_eq!(start().step(b"r=rOprNGfwEbeRWgbNEkqOx,s=AAAA,i=4000000000"), Err(SaslError::Iterations(4_000_000_000)));
        assert!(matches!(start().step(b"\xff\xfe"), Err(SaslError::Malformed { .. })));
        assert!(matches!(start().step(b"hello"), Err(SaslError::Malformed { .. })));
    }

    #[test]
    fn refuses_every_cut_and_mutated_server_message_without_panicking() {
        let credentials = Credentials::password(SaslMechanism::ScramSha512, "user", "pencil");
        let server_first: &[u8] = b"r=rOprNGfwEbeRWgbNEkqO%hvY,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        for n in 0..server_first.len() {
            let mut s = SaslSession::start_with_nonce(&credentials, "rOprNGfwEbeRWgbNEkqO", 0).unwrap().0;
            assert!(s.step(&server_first[..n]).is_err(), "prefix {n}");
        }
        for i in 0..server_first.len() {
            for b in [0u8, b',', b'=', 0xff, b'a'] {
                let mut bytes = server_first.to_vec();
                bytes[i] = b;
                let mut s = SaslSession::start_with_nonce(&credentials, "rOprNGfwEbeRWgbNEkqO", 0).unwrap().0;
                if let Ok(Step::Send(_)) = s.step(&bytes) {
                    assert!(s.step(&bytes).is_err(), "a mutated server-first is no server-final");
                }
            }
        }
    }

    #[test]
    fn scram_escapes_the_user_name_and_sends_tokenauth() {
        let credentials = Credentials::Password {
            mechanism: SaslMechanism::ScramSha512,
            username: "a=b,c".into(),
            password: "p".into(),
            token_auth: true,
        };
        let (_, first) = SaslSession::start_with_nonce(&credentials, "N", 0).unwrap();
        assert_eq!(first, b"n,,n=a=3Db=2Cc,r=N,tokenauth=true");
    }

    #[test]
    fn oauthbearer_sends_the_token_and_answers_an_error_with_control_a() {
        let credentials = Credentials::OAuthBearer(Token::Static("eyJ.x.y".into()));
        let (mut s, first) = SaslSession::start(&credentials).unwrap();
        assert_eq!(first, b"n,,\x01auth=Bearer eyJ.x.y\x01\x01");
        assert_eq!(s.step(br#"{"status":"invalid_token"}"#).unwrap(), Step::Send(vec![1]));
        let (mut s, _) = SaslSession::start(&credentials).unwrap();
        assert_eq!(s.step(b"").unwrap(), Step::Done);
        assert_eq!(s.step(b""), Err(SaslError::Unexpected));
    }

    #[test]
    fn an_unsecured_token_carries_its_claims_and_lifetime() {
        let token = Token::Unsecured { claims: vec![("sub".into(), "alice".into())], lifetime_s: 60 };
        let (_, first) = SaslSession::start_with_nonce(&Credentials::OAuthBearer(token), "", 1000).unwrap();
        let text = String::from_utf8(first).unwrap();
        let jws = text.strip_prefix("n,,\x01auth=Bearer ").unwrap().strip_suffix("\x01\x01").unwrap();
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(URL_SAFE_NO_PAD.decode(parts[0]).unwrap(), br#"{"alg":"none"}"#);
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims, serde_json::json!({"sub": "alice", "iat": 1000, "exp": 1060}));
        assert_eq!(parts[2], "");
    }

    #[test]
    fn debug_never_prints_secrets() {
        let text = format!("{:?}", Credentials::password(SaslMechanism::Plain, "alice", "hunter2"));
        assert!(text.contains("alice") && !text.contains("hunter2"), "{text}");
        let text = format!("{:?}", Credentials::OAuthBearer(Token::Static("sekrit".into())));
        assert!(!text.contains("sekrit"));
    }
}
