//! Against a real broker (ignored by default): `compat/kafka/broker.sh start`, then
//! `KAFKA_BOOTSTRAP=127.0.0.1:19092 cargo test --test real_broker -- --ignored --nocapture`.
//!
//! The `lead` command joins first and leads leader-only; a second member (in this process, a
//! Java-like client of the assignment with a `StreamsMember` hook) joins next and gets every
//! task; then `describe` shows both. The topology is the word count of
//! `fixtures/leader/word-count.describe.txt`, whose internal topics the leader creates.
//!
//! The security tests need the broker's SSL and SASL_SSL listeners: start it with
//! `KAFKA_SECURITY=1 compat/kafka/broker.sh start`, and give the tests what it prints,
//! `KAFKA_SSL_BOOTSTRAP`, `KAFKA_SASL_SSL_BOOTSTRAP`, `KAFKA_MTLS_BOOTSTRAP` and
//! `KAFKA_SECURITY_DIR` (the certificates). Without `KAFKA_SECURITY_DIR` they say so and pass.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::CreateTopicsRequest;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kstreams_assignor::client::net::client_config::Security;
use kstreams_assignor::client::connection::Connection;
use kstreams_assignor::member::{GroupMember, MemberConfig, MemberEvent, StreamsMember};
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
    assert!(table.contains("standby, incl. warm-up"));
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

/// The SSL and SASL_SSL listeners and the directory of the CA certificates, when the broker has
/// them (`KAFKA_SECURITY=1`).
fn secured() -> Option<(String, String, std::path::PathBuf)> {
    let Ok(dir) = std::env::var("KAFKA_SECURITY_DIR") else {
        eprintln!("skipped: KAFKA_SECURITY_DIR is not set (start the broker with KAFKA_SECURITY=1)");
        return None;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("KAFKA_SECURITY_DIR is set, {name} must be too"));
    Some((var("KAFKA_SSL_BOOTSTRAP"), var("KAFKA_SASL_SSL_BOOTSTRAP"), dir.into()))
}

/// A client properties file `name` with `text`; its path.
fn client_properties(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("real-broker-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// SASL_SSL with `mechanism` as user `alice` with `password`, trusting the test CA.
fn sasl_ssl(dir: &std::path::Path, mechanism: &str, password: &str) -> String {
    let module = if mechanism == "PLAIN" { "plain.PlainLoginModule" } else { "scram.ScramLoginModule" };
    format!(
        "security.protocol=SASL_SSL\nsasl.mechanism={mechanism}\nssl.truststore.type=PEM\nssl.truststore.location={}\n\
         sasl.jaas.config=org.apache.kafka.common.security.{module} required username=\"alice\" password=\"{password}\";\n",
        dir.join("ca.pem").display()
    )
}

/// Runs `describe` with `--command-config config` through `bootstrap`: exit code, stdout, stderr.
fn describe_with(bootstrap: &str, group: &str, config: &str) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(["describe", "--bootstrap", bootstrap, "--group", group, "--json", "--timeout", "20s", "--command-config", config])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
#[ignore = "needs a broker with KAFKA_SECURITY=1: compat/kafka/broker.sh start"]
fn lead_over_sasl_ssl_and_describe_over_ssl_and_each_sasl_mechanism() {
    let Some((ssl, sasl, dir)) = secured() else { return };
    let app = format!("secure-{}", std::process::id());
    create_source_topic("text-lines", 4);
    let text = std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap();
    let topology_file = write_topology(&app, &text);

    // The leader over SASL_SSL with SCRAM-SHA-512: every connection it opens (bootstrap,
    // coordinator, partition leaders) authenticates.
    let lead_config = client_properties("lead.properties", &sasl_ssl(&dir, "SCRAM-SHA-512", "alice-secret"));
    let mut lead = Command::new(BIN)
        .args(["lead", "--bootstrap", &sasl, "--group", &app, "--command-config", &lead_config, "--timeout", "20s", "--exit-after", "40"])
        .arg("--topology")
        .arg(&topology_file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(lead.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().expect("a first generation").unwrap()).unwrap();
    println!("lead: {first}");
    assert_eq!(first["generationId"], 1, "{first}");

    let ca = dir.join("ca.pem");
    // A token file, as Kafka's sasl.oauthbearer.token.endpoint.url=file:// reads it: an
    // unsecured JWS that the broker's unsecured validator accepts.
    use base64::Engine as _;
    let b64 = |t: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(t);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let token = format!("{}.{}.", b64(r#"{"alg":"none"}"#), b64(&format!(r#"{{"sub":"alice","iat":{now},"exp":{}}}"#, now + 600)));
    let token_file = client_properties("token.jwt", &token);
    let oauth = "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nssl.truststore.location=CA\n\
                 sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required";
    let configs = [
        ("ssl", ssl.clone(), format!("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\n", ca.display())),
        // Several bootstrap servers: the first is down, the second answers.
        ("ssl-second-bootstrap", format!("127.0.0.1:1,{ssl}"), format!("security.protocol=SSL\nssl.truststore.location={}\n", ca.display())),
        ("ssl-inline-pem", ssl.clone(), {
            let pem = std::fs::read_to_string(&ca).unwrap().trim().replace('\n', "\\n\\\n");
            format!("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates={pem}\n")
        }),
        ("plain", sasl.clone(), sasl_ssl(&dir, "PLAIN", "alice-secret")),
        ("scram-sha-256", sasl.clone(), sasl_ssl(&dir, "SCRAM-SHA-256", "alice-secret")),
        ("scram-sha-512", sasl.clone(), sasl_ssl(&dir, "SCRAM-SHA-512", "alice-secret")),
        ("oauthbearer-unsecured", sasl.clone(), format!("{} unsecuredLoginStringClaim_sub=\"alice\";\n", oauth.replace("CA", &ca.display().to_string()))),
        (
            "oauthbearer-token-file",
            sasl.clone(),
            format!(
                "{} ;\nsasl.oauthbearer.token.endpoint.url=file://{token_file}\n\
                 sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n",
                oauth.replace("CA", &ca.display().to_string())
            ),
        ),
    ];
    for (name, bootstrap, text) in configs {
        let config = client_properties(&format!("{name}.properties"), &text);
        let (code, stdout, stderr) = describe_with(&bootstrap, &app, &config);
        assert_eq!(code, 0, "{name}: {stderr}");
        let json: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["members"].as_array().unwrap().len(), 1, "{name}: {json}");
        // The group record's limit as the broker reports it (compat/kafka/broker.sh sets
        // message.max.bytes=2000000, which __consumer_offsets inherits).
        let size = &json["groupRecordSize"];
        assert_eq!((size["limitBytes"].as_u64(), size["limitIsDefault"].as_bool()), (Some(2_000_000), Some(false)), "{name}: {size}");
        println!("describe over {name}: ok");
    }
    let _ = lead.kill();
    let _ = lead.wait();
}

#[test]
#[ignore = "needs a broker with KAFKA_SECURITY=1: compat/kafka/broker.sh start"]
fn a_wrong_password_and_an_untrusted_certificate_are_said_plainly() {
    let Some((ssl, sasl, dir)) = secured() else { return };
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let config = client_properties(&format!("wrong-{mechanism}.properties"), &sasl_ssl(&dir, mechanism, "not-the-password"));
        let (code, _, stderr) = describe_with(&sasl, "any", &config);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.starts_with(&format!("error: SASL authentication failed at {sasl} ({mechanism}): Authentication failed")), "{stderr}");
    }
    let untrusted = client_properties(
        "untrusted.properties",
        &format!("security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\n", dir.join("other-ca.pem").display()),
    );
    let (code, _, stderr) = describe_with(&ssl, "any", &untrusted);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("error: TLS with the broker at {ssl}: the broker's certificate is not trusted")), "{stderr}");

    // The certificate names 127.0.0.1 only: `localhost` fails the host name check, unless
    // ssl.endpoint.identification.algorithm is empty (the chain is still verified).
    let by_name = ssl.replace("127.0.0.1", "localhost");
    let trusted = format!("security.protocol=SSL\nssl.truststore.location={}\n", dir.join("ca.pem").display());
    let (code, _, stderr) = describe_with(&by_name, "any", &client_properties("by-name.properties", &trusted));
    assert_eq!(code, 1);
    assert!(stderr.contains("the broker's certificate is not valid for `localhost`"), "{stderr}");
    let no_check = client_properties("no-check.properties", &format!("{trusted}ssl.endpoint.identification.algorithm=\n"));
    let (_, _, stderr) = describe_with(&by_name, "any", &no_check);
    assert!(!stderr.contains("TLS"), "{stderr}");
    let no_check_untrusted = client_properties("no-check-untrusted.properties", &format!(
        "security.protocol=SSL\nssl.truststore.location={}\nssl.endpoint.identification.algorithm=\n",
        dir.join("other-ca.pem").display()
    ));
    let (_, _, stderr) = describe_with(&by_name, "any", &no_check_untrusted);
    assert!(stderr.contains("the broker's certificate is not trusted"), "{stderr}");
}

#[test]
#[ignore = "needs a broker with KAFKA_SECURITY=1: compat/kafka/broker.sh start"]
fn a_client_certificate_reaches_a_listener_that_requires_one() {
    let Some((_, _, dir)) = secured() else { return };
    let mtls = std::env::var("KAFKA_MTLS_BOOTSTRAP").expect("KAFKA_SECURITY_DIR is set, KAFKA_MTLS_BOOTSTRAP must be too");
    let ca = dir.join("ca.pem");
    let without = client_properties("mtls-without.properties", &format!("security.protocol=SSL\nssl.truststore.location={}\n", ca.display()));
    let (code, _, stderr) = describe_with(&mtls, "any", &without);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("error: TLS with the broker at {mtls}: the broker refused the client's certificate or its absence")), "{stderr}");
    // A group nobody joined: the answer is about the group, so the TLS session was accepted.
    let with = client_properties(
        "mtls.properties",
        &format!(
            "security.protocol=SSL\nssl.truststore.location={}\nssl.keystore.type=PEM\nssl.keystore.location={}\n",
            ca.display(),
            dir.join("client-keystore.pem").display()
        ),
    );
    let (_, _, stderr) = describe_with(&mtls, &format!("nobody-{}", std::process::id()), &with);
    assert!(!stderr.contains("TLS") && (stderr.contains("does not exist") || stderr.contains("COORDINATOR")), "{stderr}");
}

/// `StreamsGroupDescribe` (API key 89) of a group that does not exist: the broker lists the API,
/// answers `GROUP_ID_NOT_FOUND`, and the answer decodes and re-encodes byte for byte (those bytes
/// are `fixtures/streams-group/broker/v<N>/group-id-not-found.bin`; `STREAMS_GROUP_CAPTURE=DIR`
/// writes them to `DIR/v<N>/` again). `describe` then says the group does not exist, exit code 1.
#[test]
#[ignore = "needs a broker: compat/kafka/broker.sh start"]
fn streams_group_describe_of_a_missing_group_on_a_real_broker() {
    use kstreams_assignor::client::connection::find_coordinator;
    use kstreams_assignor::views::streams::describe::{GROUP_ID_NOT_FOUND, StreamsDescribeError, negotiate, streams_describe};
    use kstreams_assignor::client::streams::{
        API_KEY, REQUEST_HEADER_VERSION, RESPONSE_HEADER_VERSION, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
    };
    let group = "kstreams-assignor-no-such-group";
    let timeout = Duration::from_secs(10);
    let mut conn = Connection::connect(&bootstrap(), "real-broker-test", &Security::plaintext(), timeout).unwrap();
    let address = find_coordinator(&mut conn, group).unwrap();
    let mut coord = if address == conn.broker() { conn } else { conn.open(&address).unwrap() };
    let versions = coord.broker_versions(API_KEY);
    let version = negotiate(versions).unwrap_or_else(|| panic!("the broker lists StreamsGroupDescribe: {versions:?}"));
    let request = StreamsGroupDescribeRequest::new(vec![group.into()]).encode(version).unwrap();
    let body = coord.call_raw("StreamsGroupDescribe", API_KEY, version, REQUEST_HEADER_VERSION, &request, RESPONSE_HEADER_VERSION, timeout).unwrap();
    if let Ok(dir) = std::env::var("STREAMS_GROUP_CAPTURE") {
        let dir = std::path::Path::new(&dir).join(format!("v{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("group-id-not-found.bin"), &body).unwrap();
    }
    let response = StreamsGroupDescribeResponse::decode(&body, version).unwrap();
    assert_eq!(response.groups.len(), 1);
    assert_eq!((response.groups[0].group_id.as_str(), response.groups[0].error_code), (group, 69));
    assert_eq!(response.encode(version).unwrap(), body);
    match streams_describe(&mut coord, group, versions, timeout) {
        Err(StreamsDescribeError::Broker { code: GROUP_ID_NOT_FOUND, .. }) => {}
        other => panic!("expected GROUP_ID_NOT_FOUND, got {other:?}"),
    }

    let out = Command::new(BIN).args(["describe", "--bootstrap", &bootstrap(), "--group", group]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("error: group `{group}` does not exist on ")), "{stderr}");
    assert!(!stderr.contains("only classic groups"), "the broker has StreamsGroupDescribe: {stderr}");
}
