//! `serve` on hand-made looks: the metric families (names, labels, values), series removed with
//! what they describe, the discovery filter, and the site over TLS with a token.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::discover::{Discovery, Kind, Listed, is_streams_subscription, kind};
use super::fleet::{Fleet, FleetOptions};
use super::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};
use super::site::ServeSite;
use super::{Follow, RebalanceCause};
use crate::engine::AssignmentConfigs;
use crate::views::ui::{Access, server};
use crate::views::watch::{Cause, Protocol, observe};

/// The value of the series `name{labels}` in the text format, labels as written.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

fn follow() -> Follow {
    Follow::new(
        "app",
        Protocol::Streams,
        "127.0.0.1:9092",
        1_000,
        AssignmentConfigs::default(),
    )
}

/// Two processes, then a third that joins with a task and a warm-up restoring 0_0.
fn two_generations(f: &mut Follow, m: &Metrics) {
    let first = observe::streams_look(
        1_000,
        4,
        &[
            ("m1", "p1", &["0_0", "0_1"], &[], &[]),
            ("m2", "p2", &["1_0", "1_1"], &["0_0"], &[]),
        ],
    );
    m.record(&f.look(first));
    let mut second = observe::streams_look(
        2_000,
        5,
        &[
            ("m1", "p1", &["0_0"], &[], &[]),
            ("m2", "p2", &["1_0", "1_1"], &[], &[]),
            ("m3", "p3", &["0_1"], &[], &["0_0"]),
        ],
    );
    second.members[2].offset_sums.insert("0_0".into(), 40_000);
    second.members[2]
        .end_offset_sums
        .insert("0_0".into(), 100_000);
    let h = f.look(second);
    assert_eq!(
        h.rebalance.as_ref().map(|r| r.cause),
        Some(RebalanceCause::Moved(Cause::MemberJoined))
    );
    m.record(&h);
}

#[test]
fn the_group_families_carry_the_looks_values() {
    let (mut f, m) = (follow(), Metrics::new(false));
    two_generations(&mut f, &m);
    let (text, content_type) = m.encode(None);
    assert_eq!(content_type, TEXT_CONTENT_TYPE);
    let g = r#"group="app""#;
    for (series, want) in [
        (format!("kstreams_group_members{{{g}}}"), 3.0),
        (format!("kstreams_group_processes{{{g}}}"), 3.0),
        (format!("kstreams_group_epoch{{{g}}}"), 5.0),
        (
            format!(r#"kstreams_group_state{{{g},state="Stable"}}"#),
            1.0,
        ),
        (
            format!(r#"kstreams_group_tasks{{{g},process="p1",kind="active"}}"#),
            1.0,
        ),
        (
            format!(r#"kstreams_group_tasks{{{g},process="p2",kind="active"}}"#),
            2.0,
        ),
        (
            format!(r#"kstreams_group_tasks{{{g},process="p2",kind="standby"}}"#),
            0.0,
        ),
        (
            format!(r#"kstreams_group_tasks{{{g},process="p3",kind="warmup"}}"#),
            1.0,
        ),
        (format!("kstreams_group_tasks_without_active{{{g}}}"), 0.0),
        (
            format!(r#"kstreams_group_warmup_lag_records{{{g},process="p3",task="0_0"}}"#),
            60_000.0,
        ),
        (
            format!(r#"kstreams_group_rebalances_total{{{g},cause="member_joined"}}"#),
            1.0,
        ),
        // 0_1 to the new process, and 0_0's standby copy with it as a warm-up there.
        (
            format!(r#"kstreams_group_task_moves_total{{{g},cause="member_joined"}}"#),
            2.0,
        ),
        (format!("kstreams_group_since_stable_seconds{{{g}}}"), 0.0),
        (format!("kstreams_group_look_success{{{g}}}"), 1.0),
    ] {
        assert_eq!(value(&text, &series), Some(want), "{series} in\n{text}");
    }
    assert!(
        !text.contains("kstreams_task_replica"),
        "per-task series only when asked"
    );
    assert!(
        !text.contains("kstreams_group_metadata_record_bytes"),
        "a streams group has no metadata record"
    );
}

#[test]
fn series_of_what_is_gone_are_removed_and_tasks_without_an_active_are_counted() {
    let (mut f, m) = (follow(), Metrics::new(true));
    two_generations(&mut f, &m);
    assert!(
        m.encode(None).0.contains(
            r#"kstreams_task_replica{group="app",task="0_0",process="p3",kind="warmup"} 1"#
        )
    );
    // Every member gone: the group's four tasks have no active copy; no process is left.
    let mut empty = observe::streams_look(3_000, 6, &[]);
    empty.settled = false;
    let h = f.look(empty);
    m.record(&h);
    let text = m.encode(None).0;
    assert_eq!(
        value(&text, r#"kstreams_group_tasks_without_active{group="app"}"#),
        Some(4.0),
        "{text}"
    );
    assert!(
        !text.contains(r#"process="p1""#) && !text.contains("kstreams_group_warmup_lag_records{"),
        "{text}"
    );
    // A failed look keeps the last look's series and says it failed.
    m.record(&f.failed("the broker went away", true, 4_000));
    let text = m.encode(None).0;
    assert_eq!(
        value(&text, r#"kstreams_group_look_success{group="app"}"#),
        Some(0.0)
    );
    assert_eq!(
        value(&text, r#"kstreams_group_tasks_without_active{group="app"}"#),
        Some(4.0)
    );
    m.forget("app");
    assert!(
        !m.encode(None).0.contains(r#"group="app""#),
        "a group no longer followed has no series"
    );
}

#[test]
fn the_exporter_counts_looks_and_discoveries_and_speaks_openmetrics_when_asked() {
    let m = Metrics::new(false);
    m.look(true, Duration::from_millis(20));
    m.look(false, Duration::from_millis(3_000));
    m.discovery(false, 0);
    let (text, content_type) = m.encode(Some(
        "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
    ));
    assert_eq!(content_type, OPENMETRICS_CONTENT_TYPE);
    assert!(text.ends_with("# EOF\n"), "{text}");
    let text = m.encode(Some("text/plain")).0;
    assert_eq!(
        value(&text, r#"kstreams_looks_total{result="failed"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            r#"kstreams_look_duration_seconds_bucket{le="0.025"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&text, "kstreams_look_duration_seconds_count"),
        Some(2.0)
    );
    assert_eq!(value(&text, "kstreams_cluster_reachable"), Some(0.0));
    assert_eq!(
        value(&text, r#"kstreams_discoveries_total{result="failed"}"#),
        Some(1.0)
    );
}

#[test]
fn a_group_not_stable_counts_the_seconds_since_it_was() {
    let mut f = follow();
    f.look(observe::streams_look(
        1_000,
        1,
        &[("m1", "p1", &["0_0"], &[], &[])],
    ));
    let mut o = observe::streams_look(31_000, 2, &[("m1", "p1", &["0_0"], &[], &[])]);
    o.state = "Reconciling".into();
    assert_eq!(f.look(o).since_stable, Duration::from_secs(30));
}

#[test]
fn discovery_keeps_streams_groups_and_classic_groups_of_streams_members() {
    let l = |t: &str, p: &str| kind(&Listed::new("g", p, t));
    assert_eq!(
        (
            l("streams", "streams"),
            l("Classic", "consumer"),
            l("consumer", "consumer"),
            l("share", "share")
        ),
        (
            Kind::Streams,
            Kind::ClassicConsumer,
            Kind::Other,
            Kind::Other
        )
    );
    let streams =
        std::fs::read("fixtures/wire/subscription-envelope/v3/streams-user-data.bin").unwrap();
    let plain =
        std::fs::read("fixtures/wire/subscription-envelope/v3/null-user-data-no-rack.bin").unwrap();
    assert!(is_streams_subscription(&streams));
    assert!(
        !is_streams_subscription(&plain),
        "a plain consumer's subscription"
    );
    assert!(
        !is_streams_subscription(&streams[..streams.len() - 3]),
        "truncated"
    );
    let mut d = Discovery::default();
    d.streams.insert("s".into(), Protocol::Streams);
    d.listed.insert("c".into(), Kind::ClassicConsumer);
    assert!(
        d.keep("s", Protocol::Streams) && d.keep("c", Protocol::Classic),
        "a classic group whose members are all gone is kept"
    );
    assert!(!d.keep("c", Protocol::Streams) && !d.keep("gone", Protocol::Classic));
}

/// A TLS client that trusts the test certificate; sends `head` and reads the whole answer.
fn tls_get(addr: std::net::SocketAddr, head: &str) -> (u16, String) {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_file_iter("fixtures/serve/cert.pem").unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn =
        rustls::ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, sock);
    tls.write_all(head.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[test]
fn the_site_serves_metrics_and_groups_over_tls_to_the_token_only() {
    let tls = super::tls::server_config(
        std::path::Path::new("fixtures/serve/cert.pem"),
        std::path::Path::new("fixtures/serve/key.pem"),
    )
    .unwrap();
    let fleet = Fleet::new(FleetOptions::new("127.0.0.1:1"), false);
    let mut d = Discovery::default();
    d.streams.insert("app 1".into(), Protocol::Streams);
    fleet.apply_discovery(&d);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let token = "0123456789abcdef-token";
    server::spawn_site(
        listener,
        Arc::new(ServeSite(fleet.clone())),
        Access::with_token(token),
        Some(tls),
        Duration::from_secs(2),
    )
    .unwrap();
    let get = |path: &str, extra: &str| {
        tls_get(
            addr,
            &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n"),
        )
    };
    let bearer = format!("Authorization: Bearer {token}\r\n");
    assert_eq!(get("/metrics", "").0, 401);
    assert_eq!(
        get(
            "/metrics",
            "Authorization: Bearer wrong-0123456789abcdef\r\n"
        )
        .0,
        401
    );
    let (status, text) = get("/metrics", &bearer);
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("kstreams_groups 1") && text.contains(TEXT_CONTENT_TYPE),
        "{text}"
    );
    let (status, text) = get("/groups.json", &bearer);
    assert!(
        status == 200
            && text.contains(r#""group":"app 1""#)
            && text.contains(r#""path":"groups/app%201/""#),
        "{text}"
    );
    assert_eq!(get("/groups/app%201/state.json", &bearer).0, 200);
    assert!(
        get("/groups/app%201", &bearer)
            .1
            .contains("Location: /groups/app%201/")
    );
    assert_eq!(get("/groups/other/", &bearer).0, 404);
    // Plain HTTP to the TLS port gets no answer in clear text.
    let mut plain = TcpStream::connect(addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    plain
        .write_all(format!("GET /metrics HTTP/1.1\r\nHost: localhost\r\n{bearer}\r\n").as_bytes())
        .unwrap();
    let mut out = Vec::new();
    let _ = plain.read_to_end(&mut out);
    assert!(
        !String::from_utf8_lossy(&out).contains("kstreams_"),
        "metrics leaked over plain HTTP"
    );
    // The group deleted: gone from the site and the metrics.
    fleet.apply_discovery(&Discovery::default());
    assert_eq!(get("/groups/app%201/state.json", &bearer).0, 404);
    assert!(get("/metrics", &bearer).1.contains("kstreams_groups 0"));
}

#[test]
fn refuses_a_key_that_is_not_the_certificates_and_files_that_are_not_pem() {
    let cert = std::fs::read("fixtures/serve/cert.pem").unwrap();
    let other_key = b"-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\nOF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r\n1RTwjmYSi9R/zJ6SPgQ7Cgf/PCMHj+c1hAJPNpa5+qJE71rtcjUX8Jyd\n-----END PRIVATE KEY-----\n";
    let e =
        super::tls::server_config_from_pem(&cert, "cert.pem", other_key, "key.pem").unwrap_err();
    assert!(
        e.to_string().contains("cannot serve TLS") || e.to_string().contains("key.pem"),
        "{e}"
    );
    let e =
        super::tls::server_config_from_pem(&cert, "cert.pem", b"nothing", "key.pem").unwrap_err();
    assert!(
        e.to_string()
            .contains("key.pem: no unencrypted private key"),
        "{e}"
    );
    let e = super::tls::server_config(
        std::path::Path::new("/nonexistent/cert.pem"),
        std::path::Path::new("k"),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot read /nonexistent/cert.pem"),
        "{e}"
    );
}
