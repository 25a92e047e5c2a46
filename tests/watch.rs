//! `watch` against scripted brokers: a classic group whose generations this crate's leader
//! assigned (a scale-out, warm-ups promoted, a member leaving), a broker that goes away and comes
//! back, and the groups it refuses as `describe` does; and `ui`, the same looks served as a page.

// The scripted broker of the command-line tests, of which these use a part.
#[allow(dead_code)]
mod cli_broker;
mod support;

use std::collections::BTreeMap;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;
use serde_json::Value;

use cli_broker::{Reply, Seen};
use kstreams_assignor::client::now_ms;
use kstreams_assignor::leader::{self, ChangelogEndOffsets, ClusterMetadata, JoinMember, LeaderInput, Topology};
use kstreams_assignor::wire::{ProcessId, SubscriptionEnvelope, SubscriptionInfo, TaskId, TopicPartition};

const TOPOLOGY: &str = r#"{"applicationId": "g", "subtopologies": [{"id": 0, "sourceTopics": ["in"], "stores": [{"name": "counts"}]}]}"#;
const END: i64 = 1_000_000;
const P1: &str = "11111111-1111-4111-8111-111111111111";
const P2: &str = "22222222-2222-4222-8222-222222222222";

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kstreams-assignor"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs")
}

/// Waits for `child` at most `secs`, then kills it.
fn wait_bounded(mut child: Child, secs: u64) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn interrupt(child: &Child) {
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_file(name: &str, content: &str) -> std::path::PathBuf {
    // One directory per call: tests run on parallel threads, and a file rewritten while another
    // test's child process reads it would be read half written.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kstreams-watch-{}-{call}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A member's subscription: its process, the generation it owned partitions in, its offset sums.
fn subscription(process: &str, generation: i32, sums: &[(i32, i64)]) -> Vec<u8> {
    let process: ProcessId = process.parse().unwrap();
    let sums = sums.iter().map(|&(p, s)| (TaskId::new(0, p), s));
    let info = SubscriptionInfo::new(11, process).with_task_offset_sums(sums);
    SubscriptionEnvelope::new(vec!["in".into()], Some(info.encode().unwrap())).with_generation_id(generation).encode().unwrap()
}

/// One generation as DescribeGroups shows it: (member id, subscription, assignment).
type Members = Vec<(String, Vec<u8>, Vec<u8>)>;

/// The assignment this crate's leader (led by `P1`, Kafka's high-availability assignor) makes of
/// these subscriptions, the probing deadline `now_ms` + 10 min.
fn generation(subscriptions: &[(&str, Vec<u8>)], now_ms: i64) -> Members {
    let topology = Topology::from_json(TOPOLOGY).unwrap();
    let metadata = ClusterMetadata::new().with_topic("in", 4);
    let ends = (0..4).map(|p| (TopicPartition::new("g-counts-changelog", p), END)).collect();
    let ends = ChangelogEndOffsets::Available(ends);
    let members: Vec<JoinMember> = subscriptions.iter().map(|(id, s)| JoinMember::new(*id, s.clone())).collect();
    let input = LeaderInput::new(&members, &topology, &metadata, &ends, P1.parse().unwrap()).with_now_ms(now_ms);
    let out = leader::assign(&input).unwrap();
    members.iter().map(|m| (m.member_id.clone(), m.subscription.clone(), out.members[&m.member_id].clone())).collect()
}

/// The scale-out: p1 alone runs the four tasks (generation 5); p2 joins and gets two warm-ups
/// (6); they have caught up at the probing rebalance and two tasks move (7); p2 leaves (8).
fn scale_out() -> Vec<(&'static str, Members)> {
    let all = [(0, -2), (1, -2), (2, -2), (3, -2)];
    let g5 = generation(&[("m1", subscription(P1, 4, &all))], 0);
    // The probing rebalance is due when generation 7 is seen.
    let probe = now_ms() - 600_000;
    let g6 = generation(&[("m1", subscription(P1, 5, &all)), ("m2", subscription(P2, -1, &[]))], probe);
    let warmups = assigned(&g6[1].2);
    let caught_up: Vec<(i32, i64)> = warmups.iter().map(|p| (*p, END)).collect();
    let g7 = generation(&[("m1", subscription(P1, 6, &all)), ("m2", subscription(P2, 6, &caught_up))], probe);
    let p1_now: Vec<(i32, i64)> = (0..4).map(|p| (p, if assigned(&g7[0].2).contains(&p) { -2 } else { END })).collect();
    let g8 = generation(&[("m1", subscription(P1, 7, &p1_now))], probe);
    let rebalancing: Members = g6.iter().map(|(m, s, _)| (m.clone(), s.clone(), Vec::new())).collect();
    vec![("Stable", g5), ("PreparingRebalance", rebalancing), ("Stable", g6), ("Stable", g7), ("Stable", g8)]
}

/// The partitions of the tasks in an assignment (active and standby).
fn assigned(assignment: &[u8]) -> Vec<i32> {
    let env = kstreams_assignor::wire::AssignmentEnvelope::decode(assignment).unwrap();
    let info = kstreams_assignor::wire::AssignmentInfo::decode(env.user_data.as_deref().unwrap()).unwrap();
    let mut out: Vec<i32> = info.active_tasks.iter().map(|t| t.partition).collect();
    out.extend(info.standby_tasks_map().keys().map(|t| t.partition));
    out
}

/// A coordinator that shows each phase of `phases` for `looks_each` DescribeGroups, the last
/// one from then on; its changelog partitions end at [`END`].
fn phased_broker(phases: Vec<(&'static str, Members)>, looks_each: usize) -> cli_broker::Broker {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let known: BTreeMap<String, i32> = [("in".to_owned(), 4), ("g-counts-changelog".to_owned(), 4)].into();
    let describes = Mutex::new(0usize);
    let script = move |_: &mut Seen, key: ApiKey, v: i16, id: i32, buf: &mut bytes::Bytes| match key {
        ApiKey::FindCoordinator => Reply::Frame(cli_broker::find_coordinator(port, v, id, 0)),
        ApiKey::DescribeGroups => {
            let mut n = describes.lock().unwrap();
            let (state, members) = &phases[(*n / looks_each).min(phases.len() - 1)];
            *n += 1;
            let ms = members.iter().map(|(m, s, a)| cli_broker::described_member(m, s.clone(), a.clone())).collect();
            Reply::Frame(cli_broker::describe_groups("g", state, ms, 0, v, id))
        }
        ApiKey::Metadata => Reply::Frame(cli_broker::metadata(port, &known, v, id, buf)),
        ApiKey::ListOffsets => Reply::Frame(cli_broker::list_offsets(END, v, id, buf)),
        other => panic!("unexpected {other:?}"),
    };
    cli_broker::start_on(listener, Arc::new(script))
}

#[test]
fn watch_names_the_causes_of_a_scale_out_and_each_generation_replays_as_the_leader_assigned() {
    let broker = phased_broker(scale_out(), 3);
    let topology = temp_file("topology.json", TOPOLOGY);
    let json = temp_file("watch.jsonl", "");
    let args = [
        "watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1", "--topology", topology.to_str().unwrap(),
        "--json", json.to_str().unwrap(),
    ];
    let child = spawn(&args);
    // Five phases of three looks each, 0.1 s apart, then a few more looks.
    std::thread::sleep(Duration::from_millis(2_500));
    interrupt(&child);
    let out = wait_bounded(child, 20);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "four generations and the summary:\n{stdout}\n{stderr}");
    assert!(lines[0].contains("generation 5: 1 process(es), 1 member(s); first look"), "{stdout}");
    let p2 = &P2[..8];
    assert!(lines[1].contains(&format!("generation 6: 2 process(es), 2 member(s); joined {p2} (m2); 2 move(s)")), "{stdout}");
    assert_eq!(lines[1].matches(&format!("- -> {p2} warm-up (member joined)")).count(), 2, "{stdout}");
    assert!(lines[2].contains("generation 7") && lines[2].contains("4 move(s)"), "{stdout}");
    assert_eq!(lines[2].matches("(warm-up caught up and promoted)").count(), 4, "{stdout}");
    assert_eq!(lines[2].matches(&format!("{} active -> {p2} active", &P1[..8])).count(), 2, "{stdout}");
    assert!(lines[3].contains("generation 8") && lines[3].contains("left 22222222 (m2)"), "{stdout}");
    assert_eq!(lines[3].matches("(member left)").count(), 2, "{stdout}");
    for l in &lines[..4] {
        assert!(l.contains("replay agrees (HighAvailabilityTaskAssignor"), "{l}");
        assert!(l.contains("group record ") && l.contains(" bytes of 1048588 (0.") && l.contains(" %, message.max.bytes default)"), "{l}");
    }
    assert!(lines[1].contains("warm-ups: 0_") && lines[1].contains(&format!("@{p2} lag {END}")), "{stdout}");
    assert!(lines[1].contains("probing rebalance at"), "{stdout}");
    assert_eq!(
        lines[4],
        "watched 17 look(s), 4 generation(s); 8 move(s): member joined 2, member left 2, warm-up caught up and promoted 4; \
         replay agreed on 4 of 4 generation(s)"
            .replace("17", lines[4].split(' ').nth(1).unwrap()),
        "{stdout}"
    );
    assert!(stderr.contains("rebalancing (state PreparingRebalance), 2 member(s)"), "{stderr}");
    assert!(stderr.contains("stopped by a signal"), "{stderr}");

    // One record per generation; each classic record's input is what `assign --input` takes, and
    // the assignor gives the assignment watch saw.
    let records: Vec<Value> = std::fs::read_to_string(&json).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.iter().map(|r| r["generationId"].as_i64().unwrap()).collect::<Vec<_>>(), [5, 6, 7, 8]);
    assert_eq!(records[1]["moves"][0]["cause"], "memberJoined");
    assert_eq!(records[2]["moves"][0]["cause"], "warmupPromoted");
    let input = temp_file("input.json", &records[1]["input"].to_string());
    let replayed = Command::new(env!("CARGO_BIN_EXE_kstreams-assignor")).args(["assign", "--input", input.to_str().unwrap()]).output().unwrap();
    assert!(replayed.status.success(), "{}", text(&replayed.stderr));
    let replayed: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    let warmups: Vec<String> = records[1]["warmups"].as_array().unwrap().iter().map(|w| w["task"].as_str().unwrap().to_owned()).collect();
    let replayed_warmups: Vec<String> =
        replayed["clients"][P2]["warmup"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    assert_eq!(warmups, replayed_warmups);
    assert_eq!(warmups.len(), 2);
}

#[test]
fn watch_says_when_the_broker_goes_away_and_goes_on_when_it_is_back() {
    let phases = scale_out().into_iter().take(1).collect::<Vec<_>>();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let broker = phased_broker_on(port, phases.clone(), None);
    let child = spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1", "--timeout", "2s"]);
    std::thread::sleep(Duration::from_millis(800));
    // The broker goes away: its listener and every connection close.
    broker.stop();
    std::thread::sleep(Duration::from_millis(1_500));
    let back = phased_broker_on(port, phases, None);
    std::thread::sleep(Duration::from_millis(2_000));
    interrupt(&child);
    let out = wait_bounded(child, 20);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.matches("the broker went away: ").count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    assert_eq!(stderr.matches("back after ").count(), 1, "{stderr}");
    let secs: f64 = stderr.split("back after ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect(&stderr);
    assert!((1.0..3.5).contains(&secs), "{stderr}");
    // The same generation before and after: one line, and the summary.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[1].starts_with("watched ") && lines[1].contains(", 1 generation(s); no task moved"), "{stdout}");
    assert!(back.describes() > 0);
}

/// A scripted broker on `port` that can be stopped: its listener closed, its connections shut.
struct Restartable {
    port: u16,
    stop: Arc<std::sync::atomic::AtomicBool>,
    describes: Arc<Mutex<usize>>,
}

impl Restartable {
    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so that it drops the listener.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        std::thread::sleep(Duration::from_millis(100));
    }

    fn describes(&self) -> usize {
        *self.describes.lock().unwrap()
    }
}

/// `listed`: the `GroupType` ListGroups v5 gives the group (`None`: the broker has no ListGroups).
fn phased_broker_on(port: u16, phases: Vec<(&'static str, Members)>, listed: Option<&'static str>) -> Restartable {
    use std::io::Write;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let describes = Arc::new(Mutex::new(0usize));
    let (stopped, counted) = (stop.clone(), describes.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let Ok(mut stream) = stream else { return };
            let (stopped, counted, phases) = (stopped.clone(), counted.clone(), phases.clone());
            stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            std::thread::spawn(move || {
                loop {
                    if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                        let _ = stream.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    let body = match kstreams_assignor::client::connection::read_frame(&mut stream) {
                        Ok(b) => b,
                        Err(_) if !stopped.load(std::sync::atomic::Ordering::SeqCst) => match stream.peek(&mut [0]) {
                            Ok(0) => return,
                            _ => continue,
                        },
                        Err(_) => return,
                    };
                    let (key, v, id) = support::request_header(body.clone());
                    let key = ApiKey::try_from(key).unwrap();
                    let out = match key {
                        ApiKey::ApiVersions => {
                            let mut apis = support::group_apis();
                            if listed.is_some() {
                                apis.push((ApiKey::ListGroups, kafka_protocol::protocol::VersionRange { min: 0, max: 5 }));
                            }
                            support::frame(&support::api_versions(&apis), v, id)
                        }
                        ApiKey::ListGroups => {
                            use kafka_protocol::messages::list_groups_response::ListedGroup;
                            let g = ListedGroup::default()
                                .with_group_id(kafka_protocol::messages::GroupId(cli_broker::s("g")))
                                .with_protocol_type(cli_broker::s("consumer"))
                                .with_group_state(cli_broker::s("Stable"))
                                .with_group_type(cli_broker::s(listed.unwrap_or("classic")));
                            support::frame(&kafka_protocol::messages::ListGroupsResponse::default().with_groups(vec![g]), v, id)
                        }
                        ApiKey::FindCoordinator => cli_broker::find_coordinator(port, v, id, 0),
                        ApiKey::DescribeGroups => {
                            *counted.lock().unwrap() += 1;
                            let (state, members) = &phases[0];
                            let ms = members.iter().map(|(m, s, a)| cli_broker::described_member(m, s.clone(), a.clone())).collect();
                            cli_broker::describe_groups("g", state, ms, 0, v, id)
                        }
                        other => panic!("unexpected {other:?}"),
                    };
                    if stream.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    Restartable { port, stop, describes }
}

/// A coordinator whose DescribeGroups answers `state`, no members, error `code`.
fn refusing_broker(state: &'static str, code: i16) -> cli_broker::Broker {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = move |_: &mut Seen, key: ApiKey, v: i16, id: i32, _: &mut bytes::Bytes| match key {
        ApiKey::FindCoordinator => Reply::Frame(cli_broker::find_coordinator(port, v, id, 0)),
        ApiKey::DescribeGroups => Reply::Frame(cli_broker::describe_groups("g", state, vec![], code, v, id)),
        other => panic!("unexpected {other:?}"),
    };
    cli_broker::start_on(listener, Arc::new(script))
}

#[test]
fn watch_refuses_a_missing_or_forbidden_group_as_describe_does() {
    for (state, code, expected) in [("Dead", 0, "group `g` does not exist on"), ("", 30, "GROUP_AUTHORIZATION_FAILED")] {
        let broker = refusing_broker(state, code);
        let watched = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1"]), 20);
        let described = wait_bounded(spawn(&["describe", "--bootstrap", &broker.address(), "--group", "g"]), 20);
        let error = |o: &Output| text(&o.stderr).lines().find(|l| l.starts_with("error: ")).unwrap_or_default().to_owned();
        assert_eq!(watched.status.code(), Some(1), "{}", text(&watched.stderr));
        assert_eq!(described.status.code(), Some(1));
        assert!(error(&watched).contains(expected), "{}", text(&watched.stderr));
        assert_eq!(error(&watched), error(&described));
        assert!(watched.stdout.is_empty(), "{}", text(&watched.stdout));
    }
}

#[test]
fn watch_refuses_a_group_that_is_not_a_kafka_streams_group_as_describe_does() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let broker = phased_broker_on(port, scale_out().into_iter().take(1).collect(), Some("consumer"));
    let watched = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g"]), 20);
    let described = wait_bounded(spawn(&["describe", "--bootstrap", &broker.address(), "--group", "g"]), 20);
    assert_eq!(watched.status.code(), Some(1), "{}", text(&watched.stderr));
    let error = |o: &Output| text(&o.stderr).lines().find(|l| l.starts_with("error: ")).unwrap_or_default().to_owned();
    assert_eq!(error(&watched), "error: group `g` is a consumer group (the consumer rebalance protocol of KIP-848, group.protocol=consumer), not a Kafka Streams group");
    assert_eq!(error(&watched), error(&described));
    broker.stop();
}

#[test]
fn watch_stops_at_exit_after_with_the_summary_and_refuses_bad_configs() {
    let broker = phased_broker(scale_out().into_iter().take(1).collect(), 1);
    let out = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1", "--exit-after", "0.5"]), 20);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.lines().last().unwrap().starts_with("watched "), "{stdout}");
    // Without a topology the replay infers the tasks and estimates the end offsets, and says so.
    assert!(stdout.lines().next().unwrap().contains("replay agrees (HighAvailabilityTaskAssignor, 1/1 processes, 4/4 tasks, end offsets estimated)"), "{stdout}");
    let bad = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--config", "max.warmup.replicas=0"]), 20);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("--config: "), "{}", text(&bad.stderr));
}

#[test]
fn describe_and_watch_show_the_metadata_bytes_and_warn_near_the_group_record_limit() {
    let mut members = scale_out().remove(0).1;
    // A member whose subscription alone is 900,000 bytes: 86 % of message.max.bytes' default.
    members.push(("m-big".into(), vec![0; 900_000], Vec::new()));
    let broker = phased_broker(vec![("Stable", members.clone())], 1);
    let described = wait_bounded(spawn(&["describe", "--bootstrap", &broker.address(), "--group", "g"]), 20);
    let out = text(&described.stdout);
    assert!(described.status.success(), "{}", text(&described.stderr));
    let total = members.iter().map(|(_, s, a)| s.len() + a.len()).sum::<usize>();
    let line = out.lines().find(|l| l.starts_with("group record ")).expect(&out);
    let bytes: usize = line.split(' ').nth(2).unwrap().parse().unwrap();
    assert!(bytes > total && bytes < total + 400, "{line}: ids, hosts and headers on top of {total}");
    let percent = format!("{:.1}", bytes as f64 * 100.0 / 1_048_588.0);
    assert!(line.ends_with(&format!(" of 1048588 ({percent} %, message.max.bytes default)")), "{line}");
    assert!(out.contains("warning: the group's metadata record is"), "{out}");
    let (_, sub, assignment) = &members[0];
    assert!(out.contains(&format!("  subscription {} bytes, assignment {} bytes", sub.len(), assignment.len())), "{out}");
    let json = wait_bounded(spawn(&["describe", "--bootstrap", &broker.address(), "--group", "g", "--json"]), 20);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    let size = &v["groupRecordSize"];
    assert_eq!(size["totalBytes"], bytes);
    assert_eq!(size["limitBytes"], 1_048_588);
    let big = size["members"].as_array().unwrap().iter().find(|m| m["memberId"] == "m-big").unwrap();
    assert_eq!((big["subscriptionBytes"].as_u64(), big["assignmentBytes"].as_u64()), (Some(900_000), Some(0)));
    // watch, while the group rebalances without end (no member has an assignment): the warning
    // on standard error, once.
    let watched = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1", "--exit-after", "1"]), 20);
    assert_eq!(text(&watched.stderr).matches("warning: the group's metadata record is").count(), 1, "{}", text(&watched.stderr));
    // Once it has a generation, the total is on its line.
    members[1].2 = members[0].2.clone();
    let broker = phased_broker(vec![("Stable", members.clone())], 1);
    let watched = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--exit-after", "0.5"]), 20);
    let bytes = bytes + members[1].2.len();
    assert!(text(&watched.stdout).contains(&format!("group record {bytes} bytes of 1048588")), "{}", text(&watched.stdout));
    assert!(text(&watched.stderr).contains("warning: the group's metadata record is"), "{}", text(&watched.stderr));
}

/// `GET path` from the `ui` on `port`: status and body (`None` while nothing listens).
fn ui_get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    Some((head.split(' ').nth(1)?.parse().ok()?, body.to_owned()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn ui_serves_the_generations_watch_sees_as_state_json() {
    let broker = phased_broker(scale_out(), 3);
    let topology = temp_file("ui-topology.json", TOPOLOGY);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let args = [
        "ui", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1", "--topology", topology.to_str().unwrap(),
        "--listen", &listen,
    ];
    let child = spawn(&args);
    let started = Instant::now();
    let mut state = Value::Null;
    while started.elapsed() < Duration::from_secs(20) {
        if let Some((200, body)) = ui_get(port, "/state.json") {
            state = serde_json::from_str(&body).unwrap();
            if state["generations"].as_array().is_some_and(|g| g.len() == 4) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ui_get(port, "/nothing").map(|r| r.0), Some(404));
    interrupt(&child);
    let out = wait_bounded(child, 20);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("on http://{listen}/, read-only")), "{stderr}");
    assert!(text(&out.stdout).starts_with("watched "), "the summary: {}", text(&out.stdout));
    // The generations watch names, as watch names them, with the grid of each.
    let generations = state["generations"].as_array().unwrap_or_else(|| panic!("{state}"));
    assert_eq!(generations.iter().map(|g| g["generationId"].as_i64().unwrap()).collect::<Vec<_>>(), [5, 6, 7, 8], "{state}");
    assert_eq!(state["groupType"], "classic");
    assert_eq!(generations[1]["moves"][0]["cause"], "memberJoined");
    assert_eq!(generations[2]["moves"][0]["cause"], "warmupPromoted");
    let members = generations[1]["members"].as_array().unwrap();
    let warmups: Vec<&str> = members.iter().flat_map(|m| m["warmupTasks"].as_array().unwrap()).map(|t| t.as_str().unwrap()).collect();
    assert_eq!(warmups.len(), 2, "the replay names the warm-ups: {}", generations[1]);
    assert_eq!(generations[1]["warmups"][0]["lag"], END);
    assert!(generations[0]["groupRecordSize"]["totalBytes"].as_u64().unwrap() > 0);
    assert_eq!(state["connection"]["state"], "connected");
}

#[test]
fn ui_refuses_a_missing_group_as_watch_does() {
    let broker = refusing_broker("Dead", 0);
    let listen = format!("127.0.0.1:{}", free_port());
    let served = wait_bounded(spawn(&["ui", "--bootstrap", &broker.address(), "--group", "g", "--listen", &listen]), 20);
    let watched = wait_bounded(spawn(&["watch", "--bootstrap", &broker.address(), "--group", "g", "--interval", "0.1"]), 20);
    let error = |o: &Output| text(&o.stderr).lines().find(|l| l.starts_with("error: ")).unwrap_or_default().to_owned();
    assert_eq!(served.status.code(), Some(1), "{}", text(&served.stderr));
    assert!(error(&served).contains("group `g` does not exist on"), "{}", text(&served.stderr));
    assert_eq!(error(&served), error(&watched));
}
