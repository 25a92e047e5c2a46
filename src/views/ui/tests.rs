//! The page's HTTP over a local listener, fed by the watcher on hand-made looks: who may see it,
//! what is refused and how, the state as JSON, and the event stream's framing as the group changes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::engine::AssignmentConfigs;
use crate::views::ui::http::{self, Access, HeadError, Verdict};
use crate::views::ui::state::{LiveState, MAX_PENDING, Waited};
use crate::views::ui::{UiError, access_for, bind, server};
use crate::views::watch::drive::Report;
use crate::views::watch::{Watcher, observe};

const TOKEN: &str = "0123456789abcdef-token";

/// A server on a free loopback port; its state and address.
fn serve(access: Access) -> (Arc<LiveState>, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(LiveState::new("app", "127.0.0.1:9092", 1_000, 100));
    server::spawn_with_deadline(listener, state.clone(), access, Duration::from_millis(300)).unwrap();
    (state, addr)
}

/// Sends `raw` and reads the whole answer: status, head, body.
fn exchange(addr: SocketAddr, raw: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(raw);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn get(addr: SocketAddr, path: &str, extra: &str) -> (u16, String, String) {
    exchange(addr, format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{extra}\r\n", addr.port()).as_bytes())
}

/// Reports of two generations of a streams group: two processes, then a third that joins and
/// takes a task and a warm-up.
fn two_generations() -> Vec<(Report, crate::views::watch::Summary)> {
    let mut w = Watcher::new(AssignmentConfigs::default());
    let first = observe::streams_look(1_000, 4, &[("m1", "p1", &["0_0", "0_1"], &[], &[]), ("m2", "p2", &["1_0", "1_1"], &[], &[])]);
    let second = observe::streams_look(
        2_000,
        5,
        &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["1_0", "1_1"], &[], &[]), ("m3", "p3", &["0_1"], &[], &["1_0"])],
    );
    [first, second].into_iter().map(|o| (Report::Event(w.observe(o)), w.summary().clone())).collect()
}

#[test]
fn accepts_a_get_head_and_refuses_what_is_not_one() {
    let r = http::parse_head(b"GET /events?a=1&token=x HTTP/1.1\r\nHost: h\r\nCookie: a=b; kstreams_ui_token=t\r\n\r\n").unwrap();
    assert_eq!((r.path.as_str(), r.query_param("token"), r.cookie(http::TOKEN_COOKIE)), ("/events", Some("x"), Some("t")));
    assert_eq!(r.location_without_token(), "/events?a=1");
    let bad_heads =
        [&b"\r\n\r\n"[..], b"GET / HTTP/2\r\n\r\n", b"GET  / HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\nno colon\r\n\r\n", b"G\xffT / HTTP/1.1\r\n\r\n"];
    for bad in bad_heads {
        assert!(matches!(http::parse_head(bad), Err(HeadError::Malformed(_))), "{bad:?}");
    }
    let many = format!("GET / HTTP/1.1\r\n{}\r\n", "a: b\r\n".repeat(http::MAX_HEADERS + 1));
    assert_eq!(http::parse_head(many.as_bytes()), Err(HeadError::TooLarge));
}

proptest::proptest! {
    #[test]
    fn any_bytes_are_a_head_or_a_refusal_never_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2_000)) {
        let _ = http::parse_head(&bytes);
        let _ = http::head_end(&bytes);
    }
}

#[test]
fn every_cut_of_a_head_parses_or_is_refused_and_the_server_goes_on() {
    let head = format!("GET /state.json?token={TOKEN} HTTP/1.1\r\nHost: localhost:1\r\nCookie: a=b; c\r\n\r\n");
    for n in 0..head.len() {
        let _ = http::parse_head(&head.as_bytes()[..n]);
    }
    let (_, addr) = serve(Access::loopback());
    for garbage in [&b"\0\0\0\0\r\n\r\n"[..], b"GET /\xff HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\nHost:\r\n\r\n", &[0xff; 9_000]] {
        let _ = exchange(addr, garbage);
    }
    assert_eq!(get(addr, "/", "").0, 200, "still serving");
}

#[test]
fn a_token_is_taken_from_the_query_once_then_the_cookie_or_a_bearer_header() {
    let access = Access::with_token(TOKEN);
    let req = |raw: String| http::parse_head(raw.as_bytes()).unwrap();
    assert_eq!(access.check(&req(format!("GET /?token={TOKEN} HTTP/1.1\r\n\r\n"))), Verdict::SetCookie("/".into()));
    assert_eq!(access.check(&req(format!("GET / HTTP/1.1\r\nCookie: kstreams_ui_token={TOKEN}\r\n\r\n"))), Verdict::Allowed);
    assert_eq!(access.check(&req(format!("GET / HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"))), Verdict::Allowed);
    assert_eq!(access.check(&req("GET /?token=0123456789abcdef-tokex HTTP/1.1\r\n\r\n".into())), Verdict::Unauthorized);
    assert_eq!(access.check(&req("GET / HTTP/1.1\r\nCookie: kstreams_ui_token=x\r\n\r\n".into())), Verdict::Unauthorized);
    assert_eq!(access.check(&req("GET / HTTP/1.1\r\n\r\n".into())), Verdict::Unauthorized);
}

#[test]
fn refuses_a_non_loopback_listen_without_a_token_and_a_weak_token() {
    assert!(matches!(access_for("0.0.0.0:8088".parse().unwrap(), None), Err(UiError::NeedsToken(_))));
    assert!(matches!(access_for("[::]:8088".parse().unwrap(), None), Err(UiError::NeedsToken(_))));
    assert!(matches!(access_for("127.0.0.1:1".parse().unwrap(), Some("has a space in it, long")), Err(UiError::BadToken)));
    let loopback = access_for("[::1]:8088".parse().unwrap(), None).unwrap();
    assert!(loopback.token.is_none() && loopback.hosts.contains(&"localhost".to_owned()));
}

#[test]
fn a_port_in_use_is_a_sentence_not_a_panic() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let e = bind(taken.local_addr().unwrap()).unwrap_err();
    assert!(e.to_string().contains("another program has the port"), "{e}");
}

#[test]
fn serves_the_page_from_the_binary_and_refuses_the_rest() {
    let (_, addr) = serve(Access::loopback());
    let (status, head, body) = get(addr, "/", "");
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: text/html") && head.contains("Content-Security-Policy: default-src 'none'"), "{head}");
    assert!(body.contains("ui.js") && !body.contains("http://") && !body.contains("https://"), "nothing from elsewhere");
    assert_eq!(get(addr, "/ui.js", "").0, 200);
    assert_eq!(get(addr, "/ui.css", "").0, 200);
    assert_eq!(get(addr, "/nothing", "").0, 404);
    let post = format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 3\r\n\r\nabc", addr.port());
    let (status, head, _) = exchange(addr, post.as_bytes());
    assert_eq!(status, 405);
    assert!(head.contains("Allow: GET"), "{head}");
    assert_eq!(exchange(addr, b"\x16\x03\x01 hello\r\n\r\n").0, 400, "bytes of TLS or worse");
    assert_eq!(exchange(addr, format!("GET /{} HTTP/1.1\r\n", "a".repeat(9_000)).as_bytes()).0, 431);
    assert_eq!(exchange(addr, b"GET / HTTP/1.1\r\nHost: 127.0.0.1").0, 408, "a head that never ends");
    let (status, _, body) = exchange(addr, b"GET / HTTP/1.1\r\nHost: attacker.example:80\r\n\r\n");
    assert_eq!(status, 403, "another name for this address (DNS rebinding): {body}");
    assert_eq!(exchange(addr, b"GET / HTTP/1.1\r\nHost: localhost.attacker.example\r\n\r\n").0, 403);
    assert_eq!(exchange(addr, b"GET / HTTP/1.1\r\n\r\n").0, 403, "no Host at all");
    for tunnel in ["localhost:9999", "[::1]:1", "127.0.0.1"] {
        assert_eq!(exchange(addr, format!("GET / HTTP/1.1\r\nHost: {tunnel}\r\n\r\n").as_bytes()).0, 200, "{tunnel}");
    }
}

#[test]
fn with_a_token_every_request_needs_it() {
    let (_, addr) = serve(Access::with_token(TOKEN));
    let (status, _, body) = get(addr, "/state.json", "");
    assert_eq!(status, 401);
    assert!(body.contains("?token="), "{body}");
    assert_eq!(get(addr, "/events", "").0, 401);
    let (status, head, _) = get(addr, &format!("/?token={TOKEN}"), "");
    assert_eq!(status, 303);
    let cookie = format!("Set-Cookie: kstreams_ui_token={TOKEN}; Path=/; HttpOnly; SameSite=Strict");
    assert!(head.contains("Location: /\r\n") && head.contains(&cookie), "{head}");
    assert_eq!(get(addr, "/state.json", &format!("Cookie: kstreams_ui_token={TOKEN}\r\n")).0, 200);
    assert_eq!(get(addr, "/", "Cookie: kstreams_ui_token=wrong\r\n").0, 401);
}

#[test]
fn the_state_has_each_generation_with_kafka_field_names_and_the_outage() {
    let (state, addr) = serve(Access::loopback());
    for (report, summary) in two_generations() {
        state.apply(&report, &summary);
    }
    let (status, _, body) = get(addr, "/state.json", "");
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["groupId"].as_str(), v["groupType"].as_str()), (Some("app"), Some("streams")));
    let g = &v["generations"][1];
    assert_eq!(g["groupEpoch"], 5);
    assert_eq!(g["members"][2]["memberId"], "m3");
    assert_eq!(g["members"][2]["activeTasks"], serde_json::json!(["0_1"]));
    assert_eq!(g["members"][2]["warmupTasks"], serde_json::json!(["1_0"]));
    assert_eq!(g["joined"][0]["processId"], "p3");
    assert_eq!(g["moves"][0]["cause"], "memberJoined");
    assert_eq!(v["live"]["groupEpoch"], 5);
    assert_eq!(v["connection"]["state"], "connected");
    state.apply(&Report::Lost { error: "connection refused".into(), unreachable: true, since_ms: 1_000 }, &Default::default());
    let v: serde_json::Value = serde_json::from_str(&state.snapshot().1).unwrap();
    assert_eq!((v["connection"]["state"].as_str(), v["connection"]["unreachable"].as_bool()), (Some("lost"), Some(true)));
    // Unreachable since the last successful look, not since the failed look that noticed it.
    assert_eq!(v["connection"]["sinceMs"], 1_000);
    state.apply(&Report::Back(Duration::from_millis(4_200)), &Default::default());
    let v: serde_json::Value = serde_json::from_str(&state.snapshot().1).unwrap();
    assert_eq!((v["connection"]["state"].as_str(), v["connection"]["outageMs"].as_u64()), (Some("connected"), Some(4_200)));
}

#[test]
fn the_event_stream_sends_the_state_then_each_change_as_it_comes() {
    let (state, addr) = serve(Access::loopback());
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: localhost:{}\r\n\r\n", addr.port()).unwrap();
    let mut lines = BufReader::new(s).lines().map(Result::unwrap);
    let mut next_event = || {
        let mut event = Vec::new();
        for line in lines.by_ref() {
            if line.is_empty() && !event.is_empty() {
                break;
            }
            if !line.is_empty() {
                event.push(line);
            }
        }
        event
    };
    let head = next_event();
    assert_eq!(head[0], "HTTP/1.1 200 OK");
    assert!(head.iter().any(|l| l.starts_with("Content-Type: text/event-stream")), "{head:?}");
    assert!(!head.iter().any(|l| l.starts_with("Content-Length")), "{head:?}");
    assert_eq!(next_event(), ["retry: 2000"]);
    let snapshot = next_event();
    assert_eq!(&snapshot[..2], ["id: 0", "event: snapshot"]);
    assert!(snapshot[2].starts_with("data: {") && snapshot.len() == 3, "one data line: {snapshot:?}");
    for (report, summary) in two_generations() {
        state.apply(&report, &summary);
    }
    for (id, epoch) in [(1, 4), (2, 5)] {
        let update = next_event();
        assert_eq!(&update[..2], [format!("id: {id}"), "event: update".to_owned()]);
        let data: serde_json::Value = serde_json::from_str(update[2].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["generation"]["groupEpoch"], epoch);
    }
}

#[test]
fn a_browser_too_far_behind_takes_the_whole_state_again() {
    let state = LiveState::new("app", "b", 1_000, 100);
    let reports = two_generations();
    for i in 0..=MAX_PENDING {
        let (r, s) = &reports[i % 2];
        state.apply(r, s);
    }
    assert_eq!(state.wait(0, Duration::ZERO), Waited::Behind);
    assert!(matches!(state.wait(MAX_PENDING as u64, Duration::ZERO), Waited::Changes(c) if c.len() == 1));
    assert_eq!(state.wait(state.snapshot().0, Duration::from_millis(10)), Waited::Nothing);
}

#[test]
fn a_warm_up_progresses_against_the_largest_lag_seen() {
    let state = LiveState::new("app", "b", 1_000, 100);
    let mut w = Watcher::new(AssignmentConfigs::default().with_overrides([("acceptable.recovery.lag", "100")]).unwrap());
    let mut look = observe::streams_look(0, 5, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &[], &[], &["0_0"])]);
    for (at, offset) in [(0, 0), (1_000, 5_000), (2_000, 10_000)] {
        look.at_ms = at;
        look.members[1].offset_sums.insert("0_0".into(), offset);
        look.members[1].end_offset_sums.insert("0_0".into(), 10_100);
        state.apply(&Report::Event(w.observe(look.clone())), w.summary());
        let v: serde_json::Value = serde_json::from_str(&state.snapshot().1).unwrap();
        let warmup = &v["live"]["warmups"][0];
        assert_eq!(warmup["firstLag"], 10_100);
        let expected = [0.0, 0.5, 1.0][at as usize / 1_000];
        assert_eq!(warmup["progress"].as_f64(), Some(expected), "{warmup}");
    }
}
