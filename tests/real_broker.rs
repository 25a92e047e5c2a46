//! Against a real broker (ignored by default): `compat/kafka/broker.sh start`, then
//! `KAFKA_BOOTSTRAP=127.0.0.1:19092 cargo test --test real_broker -- --ignored --nocapture`.
//!
//! The `lead` command joins first and leads leader-only; a second member (in this process, a
//! Java-like client of the assignment with a `StreamsMember` hook) joins next and gets every
//! task; then `describe` shows both. The topology is the word count of
//! `fixtures/leader/word-count.describe.txt`, whose internal topics the leader creates.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::CreateTopicsRequest;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kstreams_assignor::group::net::client_config::Security;
use kstreams_assignor::group::connection::Connection;
use kstreams_assignor::group::{GroupMember, MemberConfig, MemberEvent, StreamsMember};
use kstreams_assignor::leader::Topology;
use kstreams_assignor::wire::ProcessId;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_kstreams-assignor");

fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:19092".into())
}

fn create_source_topic(topic: &str, partitions: i32) {
    let mut conn = Connection::connect(&bootstrap(), "real-broker-test", &Security::plaintext(), Duration::from_secs(10)).unwrap();
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_num_partitions(partitions)
                .with_replication_factor(1),
        ])
        .with_timeout_ms(10_000);
    let response = conn.call(&request).unwrap();
    let code = response.topics[0].error_code;
    assert!(code == 0 || code == 36, "create {topic}: {code}");
    let _ = conn.call(&MetadataRequest::default().with_topics(None)).unwrap();
}

/// Writes the topology text for `app` to a fresh file and returns its path.
fn write_topology(app: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(app);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("topology.txt");
    std::fs::write(&file, text).unwrap();
    file
}

/// Starts `lead` (leader-only) for `app` with `extra` arguments, its standard output piped.
fn spawn_lead(app: &str, topology_file: &std::path::Path, extra: &[&str]) -> std::process::Child {
    Command::new(BIN)
        .args(["lead", "--bootstrap", &bootstrap(), "--group", app, "--topology"])
        .arg(topology_file)
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
#[ignore = "needs a broker: compat/kafka/broker.sh start"]
fn lead_a_group_on_a_real_broker() {
    let app = format!("wc-{}", std::process::id());
    create_source_topic("text-lines", 4);
    let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
    let topology_file = write_topology(&app, &text);

    // The leader-only member, joining first.
    let mut lead = spawn_lead(
        &app,
        &topology_file,
        &[
            "--config", "heartbeat.interval.ms=500", "--config", "session.timeout.ms=10000",
            "--config", "max.poll.interval.ms=15000", "--config", "probing.rebalance.interval.ms=60000",
            "--exit-after", "40",
        ],
    );
    let (tx, rx) = mpsc::channel::<Value>();
    let stdout = lead.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            println!("lead: {line}");
            let value: Value = serde_json::from_str(&line).unwrap();
            // Generation records only (the member's own received assignments are lines too).
            if value.get("members").is_some() {
                let _ = tx.send(value);
            }
        }
    });
    // Wait for the leader's first generation (alone).
    let first = rx.recv_timeout(Duration::from_secs(30)).expect("first generation");
    assert_eq!(first["members"].as_array().unwrap().len(), 1);
    assert_eq!(first["members"][0]["excluded"], true);

    // A Java-like member with tasks, in this process.
    let topology = Topology::from_describe(&text, &app).unwrap();
    let process = ProcessId::random();
    let hook = StreamsMember::new(process).with_endpoint("member-2:8080");
    let mut config = MemberConfig::new(bootstrap(), app.clone()).with_client_id("member-2");
    config.heartbeat_interval_ms = 500;
    config.session_timeout_ms = 10_000;
    config.rebalance_timeout_ms = 15_000;
    let mut member = GroupMember::new(config, topology, hook);
    let started = Instant::now();
    let (etx, erx) = mpsc::channel::<String>();
    let handle = std::thread::spawn(move || {
        let mut stop = || started.elapsed() > Duration::from_secs(25);
        let mut on_event = |e: MemberEvent| {
            let line = format!("{e:?}");
            println!("member-2: {}", &line[..line.len().min(300)]);
            let _ = etx.send(line);
        };
        member.run(&mut stop, &mut on_event).map(|()| member.process_id())
    });
    // The leader assigns every task to the member.
    let mut got = None;
    while let Ok(generation) = rx.recv_timeout(Duration::from_secs(30)) {
        let members = generation["members"].as_array().unwrap();
        if members.len() == 2 {
            got = Some(generation);
            break;
        }
    }
    let generation = got.expect("a generation with both members");
    let worker = generation["members"].as_array().unwrap().iter().find(|m| m["excluded"] == false).unwrap().clone();
    assert_eq!(worker["processId"], process.to_string());
    assert_eq!(worker["activeTasks"].as_array().unwrap().len(), 8, "{generation}");

    // describe sees both members and their assignments.
    std::thread::sleep(Duration::from_secs(2));
    let out = Command::new(BIN)
        .args(["describe", "--bootstrap", &bootstrap(), "--group", &app, "--topology"])
        .arg(&topology_file)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    println!("{table}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());
    assert!(table.contains(&process.to_string()));
    assert!(table.contains("standby (incl. warm-up)"));
    let out = Command::new(BIN).args(["describe", "--bootstrap", &bootstrap(), "--group", &app, "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["members"].as_array().unwrap().len(), 2);
    assert_eq!(json["protocolData"], "stream");

    let pid = handle.join().unwrap().unwrap();
    assert_eq!(pid, process);
    assert!(erx.try_iter().any(|e| e.starts_with("Left")));
    let status = lead.wait().unwrap();
    assert!(status.success());
}

#[test]
#[ignore = "needs a broker: compat/kafka/broker.sh start"]
fn the_leader_rejoins_when_a_missing_source_topic_appears() {
    let app = format!("late-{}", std::process::id());
    let source = format!("{app}-lines");
    let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap().replace("text-lines", &source);
    let topology_file = write_topology(&app, &text);
    let mut lead = spawn_lead(
        &app,
        &topology_file,
        &["--config", "heartbeat.interval.ms=300", "--config", "metadata.max.age.ms=1000", "--exit-after", "20"],
    );
    let mut lines = BufReader::new(lead.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap())
        .filter(|v| v.get("members").is_some());
    let first = lines.next().unwrap();
    println!("lead: {first}");
    assert_eq!(first["errorCode"], 1, "INCOMPLETE_SOURCE_TOPIC_METADATA");
    create_source_topic(&source, 2);
    let second = lines.next().unwrap();
    println!("lead: {second}");
    assert_eq!(second["generationId"], 2);
    assert!(second.get("errorCode").is_none());
    let _ = lead.kill();
    let _ = lead.wait();
}
