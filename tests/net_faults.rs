//! The connection against brokers that misbehave: scripted servers (a `TcpListener` thread each)
//! that trickle bytes, never answer, close mid-frame, answer TLS with garbage or refuse a SASL
//! login. Each test checks what the operator reads (the error text, through the CLI where it
//! can) and that a request ends by its deadline.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Message, StrBytes};
mod support;

use support::{api_versions, frame, request_header};
use kstreams_assignor::client::connection::{Connection, ConnectionError, read_frame};
use kstreams_assignor::client::net::client_config::Security;

/// A server that takes one connection and runs `script` on it; its address.
fn server(script: impl FnOnce(TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            script(stream);
        }
    });
    addr
}

fn versions() -> ApiVersionsResponse {
    api_versions(&[
        (ApiKey::ApiVersions, ApiVersionsRequest::VERSIONS),
        (ApiKey::FindCoordinator, FindCoordinatorRequest::VERSIONS),
        (ApiKey::DescribeGroups, DescribeGroupsRequest::VERSIONS),
        (ApiKey::SaslHandshake, SaslHandshakeRequest::VERSIONS),
        (ApiKey::SaslAuthenticate, SaslAuthenticateRequest::VERSIONS),
    ])
}

/// Runs the CLI, killed after `secs`; the output and how long it ran.
fn cli(args: &[&str], secs: u64) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kstreams-assignor"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    (out, started.elapsed())
}

fn describe(bootstrap: &str, extra: &[&str], secs: u64) -> (String, i32, Duration) {
    let mut args = vec!["describe", "--bootstrap", bootstrap, "--group", "g"];
    args.extend_from_slice(extra);
    let (out, took) = cli(&args, secs);
    (String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1), took)
}

/// Writes `command-config` text to a file of its own; its path.
fn properties(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kstreams-assignor-net-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_broker_that_trickles_one_byte_a_second_cannot_hold_describe_past_its_deadline() {
    let addr = server(|mut s| {
        let _ = read_frame(&mut s);
        // A frame of 1,000 bytes, one byte a second: each read gets something, the whole never
        // comes. Bounded: 30 bytes at most.
        for b in [0u8, 0, 3, 232].into_iter().chain(std::iter::repeat_n(0, 26)) {
            if s.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let (stderr, code, took) = describe(&addr, &["--timeout", "3s"], 20);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("timed out after 3 s waiting for the broker at {addr} (ApiVersions)")), "{stderr}");
    assert!(took < Duration::from_secs(4), "the deadline is 3 s, describe took {took:?}");
}

#[test]
fn lead_bounds_each_request_by_its_timeout() {
    // Every connection trickles: `lead` keeps trying to find the coordinator, each try ending by
    // its deadline with the timeout in words.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(10) {
            let Ok(mut s) = stream else { return };
            std::thread::spawn(move || {
                let _ = read_frame(&mut s);
                for b in [0u8, 0, 3, 232].into_iter().chain(std::iter::repeat_n(0, 10)) {
                    if s.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(400));
                }
            });
        }
    });
    let topology = properties("topology.txt", &std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap());
    let args = ["lead", "--bootstrap", &addr, "--group", "g", "--topology", &topology, "--timeout", "1s", "--exit-after", "3"];
    let (out, took) = cli(&args, 20);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("timed out after 1 s waiting for the broker at {addr} (ApiVersions)")), "{stderr}");
    assert!(took < Duration::from_secs(6), "--exit-after 3 with 1 s requests took {took:?}");

    // Several bootstrap servers, comma-separated: each one's failure is named.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let both = format!("{dead},{addr}");
    let args = ["lead", "--bootstrap", &both, "--group", "g", "--topology", &topology, "--timeout", "1s", "--exit-after", "1.5"];
    let (out, _) = cli(&args, 20);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("no coordinator found for group `g`: {dead}: cannot connect to {dead}: connection refused; {addr}: timed out after 1 s");
    assert!(stderr.contains(&want), "{stderr}");

    let args = ["lead", "--bootstrap", &addr, "--group", "g", "--topology", &topology, "--timeout", "1s", "--config", "request.timeout.ms=5"];
    let (out, _) = cli(&args, 20);
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --timeout or --config request.timeout.ms, not both"));
}

#[test]
fn a_broker_that_never_answers_times_out_in_words() {
    let addr = server(|mut s| {
        let _ = read_frame(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    let (stderr, code, took) = describe(&addr, &["--timeout", "500ms"], 20);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("error: timed out after 0.5 s waiting for the broker at {addr} (ApiVersions)")), "{stderr}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert!(!stderr.contains("os error") && !stderr.contains("Resource temporarily unavailable"), "{stderr}");
}

#[test]
fn a_broker_that_closes_mid_frame_is_said_to_have_closed_the_connection() {
    let addr = server(|mut s| {
        let _ = read_frame(&mut s);
        let _ = s.write_all(&[0, 0, 0, 50, 1, 2]);
    });
    let (stderr, code, _) = describe(&addr, &[], 20);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("the broker at {addr} closed the connection (ApiVersions)")), "{stderr}");
    assert!(!stderr.contains("failed to fill whole buffer"), "{stderr}");
}

#[test]
fn a_refused_connection_and_each_bootstrap_server_are_named() {
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let (stderr, code, _) = describe(&dead, &[], 20);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("cannot connect to {dead}: connection refused")), "{stderr}");
    assert!(!stderr.contains("os error"), "{stderr}");

    let closes = server(|mut s| {
        let _ = read_frame(&mut s);
    });
    let (stderr, _, _) = describe(&format!("{dead},{closes}"), &[], 20);
    assert!(
        stderr.contains(&format!(
            "no bootstrap server could be reached: {dead}: cannot connect to {dead}: connection refused; {closes}: the broker at {closes} closed the connection (ApiVersions)"
        )),
        "{stderr}"
    );
}

#[test]
fn a_second_bootstrap_server_is_tried_when_the_first_is_down() {
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let alive = server(|mut s| {
        let (_, v, id) = request_header(read_frame(&mut s).unwrap());
        let _ = s.write_all(&frame(&versions(), v, id));
    });
    let conn = Connection::bootstrap(&format!("{dead}, {alive}"), "t", &Security::plaintext(), Duration::from_secs(5)).unwrap();
    assert_eq!(conn.broker(), alive);
}

#[test]
fn the_connection_deadline_holds_for_every_request_not_each_read() {
    // The library as `lead` uses it: one request, one deadline, however the bytes come.
    let addr = server(|mut s| {
        let _ = read_frame(&mut s);
        for b in [0u8, 0, 3, 232].into_iter().chain(std::iter::repeat_n(0, 16)) {
            if s.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    let started = Instant::now();
    let err = Connection::connect(&addr, "t", &Security::plaintext(), Duration::from_secs(1)).unwrap_err();
    assert!(matches!(err, ConnectionError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(1800), "{:?}", started.elapsed());
}

/// Reads one TLS record (the ClientHello): five bytes of header, then its length.
fn read_client_hello(s: &mut TcpStream) {
    let mut head = [0u8; 5];
    if s.read_exact(&mut head).is_ok() {
        let mut body = vec![0u8; usize::from(u16::from_be_bytes([head[3], head[4]]))];
        let _ = s.read_exact(&mut body);
    }
}

#[test]
fn garbage_instead_of_tls_is_a_tls_error_in_words() {
    let config = properties("ssl.properties", "security.protocol=SSL\n");
    let garbage = server(|mut s| {
        read_client_hello(&mut s);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        std::thread::sleep(Duration::from_secs(1));
    });
    let (stderr, code, _) = describe(&garbage, &["--command-config", &config], 20);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("error: TLS with the broker at {garbage}: the broker's answer is not TLS")), "{stderr}");

    // A plaintext Kafka listener reads the ClientHello as a huge frame size and closes.
    let closes = server(|mut s| read_client_hello(&mut s));
    let (stderr, _, _) = describe(&closes, &["--command-config", &config], 20);
    assert!(stderr.contains("the broker closed the connection during the TLS handshake (is this a TLS listener"), "{stderr}");
}

#[test]
fn a_tls_answer_to_a_plaintext_client_says_to_set_the_security_protocol() {
    let addr = server(|mut s| {
        let _ = read_frame(&mut s);
        // A TLS alert record: content type 21, version 3.3.
        let _ = s.write_all(&[21, 3, 3, 0, 2, 2, 80]);
    });
    let (stderr, _, _) = describe(&addr, &[], 20);
    assert!(stderr.contains("the broker answered with TLS; set security.protocol=SSL or SASL_SSL"), "{stderr}");
}

/// A SASL broker: ApiVersions, then SaslHandshake offering `offered`, then SaslAuthenticate
/// answered with `authenticate`.
fn sasl_server(offered: &'static [&'static str], authenticate: SaslAuthenticateResponse) -> String {
    sasl_server_pointing_at(offered, authenticate, None)
}

/// As [`sasl_server`], answering FindCoordinator with `coordinator` when there is one.
fn sasl_server_pointing_at(offered: &'static [&'static str], authenticate: SaslAuthenticateResponse, coordinator: Option<String>) -> String {
    server(move |mut s| {
        while let Ok(body) = read_frame(&mut s) {
            let (key, v, id) = request_header(body);
            let out = match ApiKey::try_from(key).unwrap() {
                ApiKey::ApiVersions => frame(&versions(), v, id),
                ApiKey::SaslHandshake => {
                    let mechanisms = offered.iter().map(|m| StrBytes::from_static_str(m)).collect();
                    let code = if offered.contains(&"PLAIN") { 0 } else { 33 };
                    frame(&SaslHandshakeResponse::default().with_error_code(code).with_mechanisms(mechanisms), v, id)
                }
                ApiKey::SaslAuthenticate => frame(&authenticate, v, id),
                ApiKey::FindCoordinator if coordinator.is_some() => {
                    let (host, port) = coordinator.as_deref().unwrap().rsplit_once(':').unwrap();
                    let c = find_coordinator_response::Coordinator::default()
                        .with_key(StrBytes::from_static_str("g"))
                        .with_host(StrBytes::from_string(host.to_owned()))
                        .with_port(port.parse().unwrap());
                    // v4 and later: the coordinators array only.
                    assert!(v >= 4);
                    frame(&FindCoordinatorResponse::default().with_coordinators(vec![c]), v, id)
                }
                _ => return,
            };
            if s.write_all(&out).is_err() {
                return;
            }
        }
    })
}

const PLAIN: &str = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
    sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"wrong\";\n";

#[test]
fn a_sasl_broker_that_rejects_the_password_is_quoted() {
    let config = properties("plain.properties", PLAIN);
    let rejected = SaslAuthenticateResponse::default()
        .with_error_code(58)
        .with_error_message(Some(StrBytes::from_static_str("Authentication failed: Invalid username or password")));
    let addr = sasl_server(&["PLAIN"], rejected);
    let (stderr, code, _) = describe(&addr, &["--command-config", &config], 20);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!("error: SASL authentication failed at {addr} (PLAIN): Authentication failed: Invalid username or password")),
        "{stderr}"
    );
}

#[test]
fn lead_stops_at_once_when_its_login_is_refused() {
    // Kafka's clients treat a failed authentication as fatal: trying again cannot help.
    let config = properties("plain-lead.properties", PLAIN);
    let rejected = SaslAuthenticateResponse::default()
        .with_error_code(58)
        .with_error_message(Some(StrBytes::from_static_str("Authentication failed: Invalid username or password")));
    let addr = sasl_server(&["PLAIN"], rejected);
    let topology = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/leader/word-count.describe.txt");
    let args = ["lead", "--bootstrap", &addr, "--group", "g", "--topology", topology, "--command-config", &config, "--exit-after", "30"];
    let (out, took) = cli(&args, 40);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("SASL authentication failed") && stderr.contains("Invalid username or password"), "{stderr}");
    assert!(took < Duration::from_secs(10), "lead went on trying for {took:?}");
}

#[test]
fn the_coordinator_connection_authenticates_too() {
    // The bootstrap broker takes the login and names another broker as the coordinator, which
    // refuses it: the refusal shows that the second connection authenticated as well.
    let config = properties("plain-coordinator.properties", PLAIN);
    let refused = SaslAuthenticateResponse::default()
        .with_error_code(58)
        .with_error_message(Some(StrBytes::from_static_str("coordinator says no")));
    let coordinator = sasl_server(&["PLAIN"], refused);
    let bootstrap = sasl_server_pointing_at(&["PLAIN"], SaslAuthenticateResponse::default(), Some(coordinator.clone()));
    let (stderr, code, _) = describe(&bootstrap, &["--command-config", &config], 20);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("SASL authentication failed at {coordinator} (PLAIN): coordinator says no")), "{stderr}");
}

#[test]
fn a_sasl_broker_without_the_mechanism_names_what_it_offers() {
    let config = properties(
        "scram.properties",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" password=\"b\";\n",
    );
    let addr = sasl_server(&["GSSAPI", "OAUTHBEARER"], SaslAuthenticateResponse::default());
    let (stderr, _, _) = describe(&addr, &["--command-config", &config], 20);
    assert!(
        stderr.contains(&format!("SASL authentication failed at {addr} (SCRAM-SHA-512): the broker does not offer SCRAM-SHA-512 (it offers: GSSAPI, OAUTHBEARER)")),
        "{stderr}"
    );
}

#[test]
fn a_misspelled_security_key_is_an_error_that_names_it() {
    let config = properties("typo.properties", "security.protocol=SSL\nssl.endpoint.identification.algoritm=\n");
    let (stderr, code, _) = describe("127.0.0.1:9", &["--command-config", &config], 20);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("line 2: unknown key `ssl.endpoint.identification.algoritm` (did you mean `ssl.endpoint.identification.algorithm`?)"),
        "{stderr}"
    );
}

#[test]
fn timeout_values_are_checked() {
    for bad in ["0", "-1s", "soon", "inf"] {
        let (out, _) = cli(&["describe", "--bootstrap", "127.0.0.1:9", "--group", "g", &format!("--timeout={bad}")], 20);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not a duration above 0"), "{bad}");
    }
}
