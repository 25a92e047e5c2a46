//! The command line, run as a user runs it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary with `args`, its standard streams piped.
fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kstreams-assignor"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs")
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = spawn(args);
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn json_out(out: &Output) -> Value {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

const SUB_V11: &str = "0000000b0000000b00112233445566778899aabbccddeeff00000003683a31000000030000000000000000fffffffffffffffeffff00000000000000010000000000000064ffff0000000100000000fffffffffffffffdffff01000000000000000100000002617a0000000162";

#[test]
fn decodes_inline_hex_and_recognises_a_subscription() {
    let v = json_out(&run(&["decode", "--hex", SUB_V11], b""));
    assert_eq!(v["kind"], "subscription");
    assert_eq!(v["taskOffsetSums"]["0_1"], 100);
    assert_eq!(v["clientTags"]["az"], "b");
    assert_eq!(v["userEndPoint"], "h:1");
}

#[test]
fn decodes_tshark_style_hex_from_stdin_one_value_per_member() {
    // tshark prints repeated fields comma-separated; some versions separate bytes with colons.
    let colons: Vec<String> = hex::decode(SUB_V11).unwrap().iter().map(|b| format!("{b:02x}")).collect();
    let input = format!("{},{SUB_V11}\n", colons.join(":"));
    let out = run(&["decode", "--compact"], input.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1]);
}

#[test]
fn decodes_a_raw_envelope_file_with_its_user_data() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/wire/assignment-envelope/v3/streams-user-data.bin");
    let v = json_out(&run(&["decode", file], b""));
    assert_eq!(v["kind"], "assignment-envelope");
    assert_eq!(v["userData"]["kind"], serde_json::Value::Null); // the nested view has no kind key
    assert!(v["userData"]["activeTasks"].is_array());
}

#[test]
fn decodes_base64() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(hex::decode(SUB_V11).unwrap());
    let v = json_out(&run(&["decode", "--base64", &b64], b""));
    assert_eq!(v["version"], 11);
}

#[test]
fn encode_reverses_decode_and_converts_versions() {
    let view = run(&["decode", "--hex", SUB_V11], b"").stdout;
    let out = run(&["encode", "--kind", "subscription"], &view);
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), SUB_V11);

    let mut v: Value = serde_json::from_slice(&view).unwrap();
    v["clientTags"] = serde_json::json!({});
    v["uniqueField"] = serde_json::json!(0);
    let out = run(&["encode", "--kind", "subscription", "--version", "6"], v.to_string().as_bytes());
    let hex_v6 = String::from_utf8(out.stdout).unwrap();
    let back = json_out(&run(&["decode", "--hex", hex_v6.trim()], b""));
    assert_eq!(back["version"], 6);
    assert_eq!(back["prevTasks"], serde_json::json!(["0_0"]));
    assert_eq!(back["taskOffsetSums"], serde_json::json!({"0_0": -2, "0_1": -3, "1_0": -3}));
}

#[test]
fn encode_refuses_fields_the_version_cannot_carry() {
    let view = br#"{"version": 6, "clientTags": {"zone": "a"}}"#;
    let out = run(&["encode", "--kind", "subscription"], view);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing half-printed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("clientTags") && err.contains("since v11"), "{err}");
}

#[test]
fn refuses_garbage_with_every_kinds_reason() {
    let out = run(&["decode", "--hex", "00ff"], b"");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("as subscription:") && err.contains("at byte"), "{err}");
}

#[test]
fn forced_kind_reports_field_and_offset() {
    let out = run(&["decode", "--kind", "assignment", "--hex", "0000000100000005"], b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("activeTasks") && err.contains("byte 4"), "{err}");
}

#[test]
fn main_job_example_runs() {
    let v = json_out(&run(&["decode", "--example"], b""));
    assert_eq!(v["kind"], "subscription-envelope");
    assert_eq!(v["userData"]["version"], 11);
}

const GROUP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/assign/group.json");

#[test]
fn assign_prints_each_clients_tasks_and_the_follow_up() {
    let v = json_out(&run(&["assign", "--input", GROUP], b""));
    let clients = v["clients"].as_object().unwrap();
    assert_eq!(clients.len(), 3);
    let actives: usize = clients.values().map(|c| c["active"].as_array().unwrap().len()).sum();
    assert_eq!(actives, 9);
    assert!(v["probingRebalance"]["needed"].is_boolean());
    assert!(v["watchList"].is_array());
}

fn assign_error(input: &str) -> String {
    let out = run(&["assign", "--input", "-"], input.as_bytes());
    assert!(!out.status.success(), "accepted: {input}");
    assert!(out.stdout.is_empty(), "nothing half-printed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn assign_explains_bad_input() {
    let group: Value = serde_json::from_str(&std::fs::read_to_string(GROUP).unwrap()).unwrap();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut g = group.clone();
        f(&mut g);
        g.to_string()
    };
    let err = assign_error(&with(&|g| g["configs"]["num.standby.replica"] = 1.into()));
    assert!(err.contains("num.standby.replica") && err.contains("configs"), "{err}");
    let err = assign_error(&with(&|g| g["statefulTasks"].as_array_mut().unwrap().push("0_1".into())));
    assert!(err.contains("statefulTasks[6]") && err.contains("listed twice"), "{err}");
    let err = assign_error(&with(&|g| g["clients"][1]["capacity"] = (-2).into()));
    assert!(err.contains("clients[1].capacity"), "{err}");
    let err = assign_error(&with(&|g| g["clients"][2]["processId"] = g["clients"][0]["processId"].clone()));
    assert!(err.contains("clients[2].processId") && err.contains("twice"), "{err}");
    let err = assign_error(&with(&|g| g["configs"]["probing.rebalance.interval.ms"] = 5.into()));
    assert!(err.contains("probing.rebalance.interval.ms"), "{err}");
}

#[test]
fn simulate_runs_the_default_scenario_and_writes_json_and_svg() {
    let dir = std::env::temp_dir().join(format!("ksa-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("r.json"), dir.join("r.svg"));
    let out = run(&["simulate", "--json", json.to_str().unwrap(), "--svg", svg.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("scale-out") && table.contains("converged"), "{table}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["converged"], true);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn simulate_rejects_unknown_scenarios_and_assignors() {
    let out = run(&["simulate", "no-such"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("scale-out"));
    let out = run(&["simulate", "--assignor", "Nope"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("unknown task assignor"));
}

#[test]
fn assign_runs_the_optimized_assignor_by_its_short_name() {
    let v = json_out(&run(&["assign", "--input", GROUP, "--assignor", "optimized"], b""));
    assert_eq!(v["assignor"], "OptimizedTaskAssignor");
    let actives: usize = v["clients"].as_object().unwrap().values().map(|c| c["active"].as_array().unwrap().len()).sum();
    assert_eq!(actives, 9);
}

#[test]
fn assign_lists_the_optimized_assignors_spares_where_tasks_have_no_standby() {
    let mut group: Value = serde_json::from_str(&std::fs::read_to_string(GROUP).unwrap()).unwrap();
    group["configs"]["num.standby.replicas"] = 0.into();
    group["configs"]["max.warmup.replicas"] = 4.into();
    let input = serde_json::to_vec(&group).unwrap();
    let v = json_out(&run(&["assign", "--input", "-", "--assignor", "optimized"], &input));
    let clients = v["clients"].as_object().unwrap();
    let ids = |c: &Value, key: &str| -> Vec<String> {
        c.get(key).map_or(Vec::new(), |a| a.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect())
    };
    let spares: Vec<String> = clients.values().flat_map(|c| ids(c, "spare")).collect();
    // Two warm-ups for the client that joined; the other two replicas of the budget are spares,
    // each a standby that is not a warm-up.
    assert_eq!(v["watchList"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(spares.len(), 2, "{v}");
    for c in clients.values() {
        let standby = ids(c, "standby");
        assert!(ids(c, "spare").iter().all(|t| standby.contains(t)), "{v}");
        assert_eq!(standby.len(), ids(c, "spare").len() + ids(c, "warmup").len(), "{v}");
    }
    // Kafka's assignor has none.
    let v = json_out(&run(&["assign", "--input", "-"], &input));
    assert!(v["clients"].as_object().unwrap().values().all(|c| c.get("spare").is_none()), "{v}");
}

#[test]
fn simulate_overrides_the_scenarios_assignor_configs() {
    // scale-out warms up two tasks at a time by default, at most one with the override.
    let warmups = |args: &[&str]| -> Vec<u64> {
        let json = std::env::temp_dir().join(format!("ksa-sim-{}-{}.json", std::process::id(), args.len()));
        let mut all = vec!["simulate", "scale-out", "--json", json.to_str().unwrap()];
        all.extend_from_slice(args);
        assert!(run(&all, b"").status.success());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).unwrap();
        v["rounds"].as_array().unwrap().iter().map(|r| r["warmups"].as_u64().unwrap()).collect()
    };
    assert_eq!(warmups(&[]).iter().max(), Some(&2));
    assert_eq!(warmups(&["--config", "max.warmup.replicas=1"]).iter().max(), Some(&1));
    // Kafka's keys only, and Kafka's bounds.
    let out = run(&["simulate", "--config", "max.warmups=1"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not a task assignor config"));
    let out = run(&["simulate", "--compare", "--config", "max.warmup.replicas=0"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("at least 1"));
}

#[test]
fn simulate_compare_can_give_the_optimized_assignor_its_own_configs() {
    let table = |extra: &[&str]| {
        let out = run(&[&["simulate", "--compare", "scale-out"], extra].concat(), b"");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let row = |t: &str| t.lines().find(|l| l.starts_with("| scale-out |")).unwrap().split(" | ").map(str::to_owned).collect::<Vec<_>>();
    let (plain, one) = (table(&[]), table(&["--candidate-config", "max.warmup.replicas=1"]));
    assert!(one.starts_with("A = HighAvailabilityTaskAssignor, B = OptimizedTaskAssignor (max.warmup.replicas=1)\n"), "{one}");
    // Columns: scenario, moved A, moved B, bound, warm-ups A, warm-ups B, probing A, probing B,
    // converge A, converge B. Kafka's run is untouched; one warm-up at a time takes B longer.
    let (p, o) = (row(&plain), row(&one));
    for a in [1, 4, 6, 8] {
        assert_eq!(p[a], o[a], "column {a}:\n{plain}\n{one}");
    }
    assert!(o[7].parse::<u32>().unwrap() > p[7].parse::<u32>().unwrap(), "{plain}\n{one}");
    // Kafka's keys and bounds, and only with --compare.
    let out = run(&["simulate", "--compare", "--candidate-config", "max.warmups=1"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--candidate-config max.warmups: not a task assignor config"));
    let out = run(&["simulate", "--compare", "--candidate-config", "max.warmup.replicas=0"], b"");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("at least 1"));
    let out = run(&["simulate", "--candidate-config", "max.warmup.replicas=2"], b"");
    assert!(!out.status.success());
}

#[test]
fn simulate_compare_prints_both_assignors_and_writes_json_and_svg() {
    let dir = std::env::temp_dir().join(format!("ksa-cmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("c.json"), dir.join("c.svg"));
    let args = ["simulate", "--compare", "all", "--seeds", "2", "--json", json.to_str().unwrap(), "--svg", svg.to_str().unwrap()];
    let out = run(&args, b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    for needle in ["HighAvailabilityTaskAssignor", "OptimizedTaskAssignor", "| scale-out |", "| random-churn-2 |", "total (8 scenarios)", "Targets:"] {
        assert!(table.contains(needle), "no `{needle}` in\n{table}");
    }
    let cmp: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(cmp["rows"].as_array().unwrap().len(), 8);
    assert!(cmp["rows"][0]["candidate"]["tasksMoved"].is_u64());
    assert_eq!(std::fs::read_to_string(&svg).unwrap().matches("<polyline").count(), 6, "two runs, three panels");
    // One scenario.
    let out = run(&["simulate", "--compare", "rolling-bounce"], b"");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("| rolling-bounce | 0 | 0 |") && table.contains("total (1 scenarios)"), "{table}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn simulate_compare_runs_a_range_of_seeds_alone() {
    let out = run(&["simulate", "--compare", "--seeds", "101..=102"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    for needle in ["| random-churn-101 |", "| random-churn-102 |", "total (2 scenarios)"] {
        assert!(table.contains(needle), "no `{needle}` in\n{table}");
    }
    assert!(!table.contains("| scale-out |"), "{table}");
    for bad in ["3..=1", "1..5", "x"] {
        let out = run(&["simulate", "--compare", "--seeds", bad], b"");
        assert!(!out.status.success(), "--seeds {bad} accepted");
    }
}

#[test]
fn simulate_writes_each_rounds_input_for_assign_to_replay() {
    let dir = std::env::temp_dir().join(format!("ksa-inputs-{}", std::process::id()));
    let out = run(&["simulate", "--assignor", "optimized", "--inputs", dir.to_str().unwrap(), "--json", dir.join("r.json").to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let rounds = report["rounds"].as_array().unwrap();
    // The start, then one input per round; replaying a round's input moves what the round did.
    for (n, round) in rounds.iter().enumerate() {
        let input = dir.join(format!("round-{}.json", n + 1));
        let replay = json_out(&run(&["assign", "--assignor", "optimized", "--input", input.to_str().unwrap()], b""));
        let owned: Value = serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
        let mut moved = 0;
        for client in owned["clients"].as_array().unwrap() {
            let id = client["processId"].as_str().unwrap();
            let before: Vec<&str> = client["ownedActiveTasks"].as_array().map_or(vec![], |ts| ts.iter().map(|t| t.as_str().unwrap()).collect());
            let now = &replay["clients"][id]["active"];
            moved += now.as_array().unwrap().iter().filter(|t| !before.contains(&t.as_str().unwrap())).count();
        }
        assert_eq!(moved as u64, round["tasksMoved"].as_u64().unwrap(), "round {}", n + 1);
    }
    assert!(dir.join("round-0.json").exists() && !dir.join(format!("round-{}.json", rounds.len() + 1)).exists());
    let out = run(&["simulate", "--compare", "--inputs", dir.to_str().unwrap()], b"");
    assert!(!out.status.success());
    std::fs::remove_dir_all(dir).ok();
}

/// Runs the binary and kills it after `secs` (a hang or a run-away read fails the test instead
/// of holding it).
fn run_bounded(args: &[&str], stdin: &[u8], secs: u64) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn decode_prints_one_line_per_value_and_names_the_line_of_each_failure() {
    // As `tshark -T fields -e kafka.protocol_metadata` prints packets: one line each, a
    // repeated field comma-separated; a blank line for a packet without it.
    let input = format!("{SUB_V11}\nnothex\n\n00ff,{SUB_V11}\n");
    let out = run(&["decode"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines: Vec<Value> = String::from_utf8(out.stdout.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0]["processId"], "00112233-4455-6677-8899-aabbccddeeff");
    assert_eq!((&lines[1], &lines[2]), (&Value::Null, &Value::Null));
    assert_eq!(lines[3], lines[0]);
    let err = stderr(&out);
    assert!(err.contains("line 2:") && err.contains("line 4, value 1:") && !err.contains("line 1:"), "{err}");
    assert!(err.contains("2 of 4 values did not decode"), "{err}");
    // Every value decodes: success, one line each.
    let out = run(&["decode"], format!("{SUB_V11}\n{SUB_V11}\n").as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 2);
}

#[test]
fn decode_hex_means_hex_and_base64_means_base64() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(hex::decode(SUB_V11).unwrap());
    let out = run(&["decode", "--hex", &b64], b"");
    assert!(!out.status.success() && stderr(&out).contains("is not hex"), "{}", stderr(&out));
    // Hex digits are base64 too: with --base64 they are read as base64, and these 8 are no message.
    let out = run(&["decode", "--base64", SUB_V11], b"");
    assert!(!out.status.success(), "hex read as hex under --base64");
    let out = run(&["decode", "--hex", SUB_V11], b"");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn decode_refuses_bytes_that_read_only_as_a_future_version() {
    // Nearly any bytes read as a subscription "from the future" with every field but the two
    // versions made up: recognition refuses that, and says why.
    let out = run(&["decode", "--hex", "57dd18486fb098eb"], b"");
    assert!(!out.status.success() && out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("none of the known messages") && err.contains("newer than this tool reads"), "{err}");
    // An assignment from a future version is not reported as a subscription.
    let out = run(&["decode", "--hex", "0000000c0000000c00000000"], b"");
    assert!(!out.status.success() && out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr(&out).contains("as assignment:"), "{}", stderr(&out));
    // Asked for, the versions are shown, with the lenience that says only they were read.
    let v = json_out(&run(&["decode", "--kind", "subscription", "--hex", "0000000c0000000c"], b""));
    assert_eq!(v["version"], 12);
    assert_eq!(v["lenience"][0], serde_json::json!({"type": "futureVersion", "version": 12}));
}

#[test]
fn decode_prints_lenience_as_json_objects() {
    // An assignment v1 and six bytes Java ignores.
    let v = json_out(&run(&["decode", "--hex", "00000001000000000000000000000000ffff"], b""));
    assert_eq!(v["kind"], "assignment");
    assert_eq!(v["lenience"], serde_json::json!([{"type": "trailingBytes", "offset": 12, "len": 6}]));
}

#[test]
fn the_leaders_error_names_missing_source_topics_in_plain_words() {
    // `lead` prints this reason as the `error` field of its error assignment.
    use kstreams_assignor::leader::{ClusterMetadata, Subtopology, Tasks, Topology};
    let topology = Topology::new("app").with_subtopology(Subtopology::new(0).with_source_topics(["orders", "payments"]));
    let err = Tasks::build(&topology, &ClusterMetadata::new().with_topic("payments", 2)).unwrap_err();
    assert_eq!(err.to_string(), "missing source topics `orders`");
}

#[test]
fn encode_refuses_unknown_keys_and_missing_fields() {
    let view: Value = serde_json::from_slice(&run(&["decode", "--hex", SUB_V11], b"").stdout).unwrap();
    let encode_error = |v: &Value, kind: &str| {
        let out = run(&["encode", "--kind", kind], v.to_string().as_bytes());
        assert!(!out.status.success() && out.stdout.is_empty(), "accepted: {v}");
        stderr(&out)
    };
    let mut misspelt = view.clone();
    misspelt["clientTag"] = misspelt["clientTags"].take();
    misspelt.as_object_mut().unwrap().remove("clientTags");
    let err = encode_error(&misspelt, "subscription");
    assert!(err.contains("unknown key(s) `clientTag`") && err.contains("clientTags"), "{err}");
    let mut missing = view.clone();
    missing.as_object_mut().unwrap().remove("processId");
    let err = encode_error(&missing, "subscription");
    assert!(err.contains("missing key(s) `processId`"), "{err}");
    // Inside an envelope's decoded user data too.
    let mut envelope: Value = serde_json::from_slice(&run(&["decode", "--example"], b"").stdout).unwrap();
    envelope["userData"]["uniqueFeild"] = 0.into();
    let err = encode_error(&envelope, "subscription-envelope");
    assert!(err.contains("userData: unknown key(s) `uniqueFeild`"), "{err}");
    // The JSON's own kind must agree with --kind.
    let err = encode_error(&view, "assignment");
    assert!(err.contains("`kind` is `subscription`, but --kind is assignment"), "{err}");
    // What decode prints still encodes as it is.
    let out = run(&["encode", "--kind", "subscription"], view.to_string().as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), SUB_V11);
}

#[test]
fn encode_accepts_next_rebalance_ms_as_a_string() {
    // 2^63 - 1 (no follow-up rebalance) survives no tool that reads numbers as doubles; as a
    // string it does.
    let mut view = serde_json::json!({
        "version": 11, "commonlySupportedVersion": 11, "activeTasks": ["0_0"], "standbyTasks": {},
        "partitionsByHost": {}, "standbyPartitionsByHost": {}, "errorCode": 0,
        "nextRebalanceMs": 9_223_372_036_854_775_807_i64,
    });
    let number = run(&["encode", "--kind", "assignment"], view.to_string().as_bytes());
    assert!(number.status.success(), "{}", stderr(&number));
    let mut as_string = view.clone();
    as_string["nextRebalanceMs"] = "9223372036854775807".into();
    let out = run(&["encode", "--kind", "assignment"], as_string.to_string().as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, number.stdout);
    let back = json_out(&run(&["decode", "--hex", String::from_utf8(out.stdout).unwrap().trim()], b""));
    view["kind"] = "assignment".into();
    view["lenience"] = serde_json::json!([]);
    assert_eq!(back, view);
    as_string["nextRebalanceMs"] = "soon".into();
    let out = run(&["encode", "--kind", "assignment"], as_string.to_string().as_bytes());
    assert!(!out.status.success() && stderr(&out).contains("nextRebalanceMs"), "{}", stderr(&out));
}

#[test]
fn every_reader_stops_at_the_input_size_cap() {
    let out = run_bounded(&["decode", "/dev/zero"], b"", 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/zero is larger than 67108864 bytes"), "{}", stderr(&out));
    let big = vec![b'0'; 100];
    for args in [&["decode", "--max-input-bytes", "64"][..], &["encode", "--kind", "assignment", "--max-input-bytes", "64"], &["assign", "--input", "-", "--max-input-bytes", "64"]] {
        let out = run_bounded(args, &big, 30);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("standard input is larger than 64 bytes"), "{args:?}: {}", stderr(&out));
    }
    let out = run_bounded(&["lead", "--bootstrap", "127.0.0.1:9", "--group", "g", "--topology", "/dev/zero", "--max-input-bytes", "64"], b"", 30);
    assert!(stderr(&out).contains("/dev/zero is larger than 64 bytes"), "{}", stderr(&out));
}

#[test]
fn every_number_is_validated() {
    let lead = |secs: &str| {
        let flag = format!("--exit-after={secs}");
        run_bounded(&["lead", "--bootstrap", "127.0.0.1:9", "--group", "g", "--topology", "/dev/null", &flag], b"", 30)
    };
    for bad in ["inf", "nan", "-1", "0", "1e300", "soon"] {
        let out = lead(bad);
        assert_eq!(out.status.code(), Some(2), "--exit-after {bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("not a number of seconds above 0"), "{bad}: {}", stderr(&out));
    }
    for args in [&["simulate", "--state-cleanup-delay-ms", "-5"][..], &["simulate", "--restore-rate", "0"], &["simulate", "--produce-rate=-1"]] {
        let out = run_bounded(args, b"", 30);
        assert_eq!(out.status.code(), Some(2), "{args:?} accepted: {}", stderr(&out));
    }
}

#[test]
fn options_that_do_not_apply_are_refused() {
    for (args, needle) in [
        (&["simulate", "--compare", "--assignor", "optimized"][..], "--assignor"),
        (&["simulate", "scale-out", "--seed", "3"], "--seed"),
        (&["simulate", "--compare", "--seed", "3"], "--seed"),
        (&["simulate", "--seeds", "5"], "--seeds"),
        (&["simulate", "all"], "all"),
    ] {
        let out = run_bounded(args, b"", 30);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty() && stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn simulate_checks_output_paths_first_and_json_dash_is_standard_output() {
    let started = std::time::Instant::now();
    let out = run_bounded(&["simulate", "--compare", "--json", "/no/such/dir/c.json"], b"", 30);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the directory /no/such/dir does not exist"), "{}", stderr(&out));
    let dir = std::env::temp_dir();
    let out = run_bounded(&["simulate", "--svg", dir.to_str().unwrap()], b"", 30);
    assert!(out.status.code() == Some(2) && stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "checked after the run");
    let out = run(&["simulate", "--json", "-"], b"");
    let report = json_out(&out);
    assert_eq!(report["converged"], true);
    assert!(stderr(&out).contains("converged after"), "the table goes to standard error: {}", stderr(&out));
    assert!(!std::path::Path::new("-").exists());
}

/// An HTML report that opens from disk: the doctype first, no address anywhere, and every
/// `src`/`href` a `data:` one (nothing to fetch).
fn assert_self_contained(html: &str, what: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{what}: {}", &html[..60.min(html.len())]);
    assert!(!html.contains("http://") && !html.contains("https://"), "{what} names an address");
    assert!(!html.contains("<script"), "{what} has a script");
    for attr in ["src=", "href="] {
        for (i, _) in html.match_indices(attr) {
            let value = html[i + attr.len()..].trim_start_matches(['"', '\'']);
            assert!(value.starts_with("data:"), "{what} loads {}", &html[i..(i + 60).min(html.len())]);
        }
    }
    assert!(html.trim_end().ends_with("</html>"), "{what} is whole");
}

#[test]
fn simulate_and_assign_write_html_reports_that_load_nothing() {
    let dir = std::env::temp_dir().join(format!("ksa-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();

    let plain = run(&["simulate"], b"");
    let out = run(&["simulate", "--html", &file("run.html")], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, plain.stdout, "the table is the same with --html");
    let html = read("run.html");
    assert_self_contained(&html, "simulate --html");
    assert!(html.contains("scale-out") && html.contains("id=\"rounds\"") && html.contains("<svg"), "{html}");

    let out = run(&["simulate", "--compare", "--seeds", "2", "--html", &file("compare.html")], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let html = read("compare.html");
    assert_self_contained(&html, "simulate --compare --html");
    assert_eq!(html.matches("<tr class=\"scenario\"").count(), 8, "six scenarios and two seeds");
    assert!(html.contains("total (8 scenarios)") && html.contains("id=\"targets\""));

    let out = run(&["simulate", "--compare", "--protocol", "both", "--seeds", "1", "--html", "-"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let html = String::from_utf8(out.stdout.clone()).unwrap();
    assert_self_contained(&html, "simulate --compare --protocol both --html -");
    assert!(stderr(&out).contains("C-HA = classic/HighAvailabilityTaskAssignor"), "the table goes to standard error");

    let out = run(&["simulate", "--protocol", "streams", "--html", &file("streams.html")], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_self_contained(&read("streams.html"), "simulate --protocol streams --html");

    let plain = run(&["assign", "--input", GROUP], b"");
    let out = run(&["assign", "--input", GROUP, "--html", &file("assign.html")], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, plain.stdout, "the JSON is the same with --html");
    let html = read("assign.html");
    assert_self_contained(&html, "assign --html");
    let clients = json_out(&plain)["clients"].as_object().unwrap().len();
    assert_eq!(html.matches("<tr class=\"member\"").count(), clients, "a row per client");
    let out = run(&["assign", "--input", GROUP, "--html", "-"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_self_contained(&String::from_utf8_lossy(&out.stdout), "assign --html -");
    assert!(stderr(&out).contains(&String::from_utf8(plain.stdout).unwrap()), "the JSON goes to standard error");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn html_to_a_bad_path_or_beside_another_report_on_standard_output_is_refused() {
    let started = std::time::Instant::now();
    let dir = std::env::temp_dir();
    for args in [
        vec!["simulate", "--html", "/no/such/dir/r.html"],
        vec!["simulate", "--compare", "--html", "/no/such/dir/r.html"],
        vec!["assign", "--input", GROUP, "--html", "/no/such/dir/a.html"],
    ] {
        let out = run_bounded(&args, b"", 30);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("--html /no/such/dir/") && stderr(&out).contains("the directory /no/such/dir does not exist"), "{}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: nothing printed");
    }
    for cmd in [vec!["simulate"], vec!["assign", "--input", GROUP]] {
        let args = [&cmd[..], &["--html", dir.to_str().unwrap()]].concat();
        let out = run_bounded(&args, b"", 30);
        assert!(out.status.code() == Some(2) && stderr(&out).contains("is a directory"), "{args:?}: {}", stderr(&out));
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "checked before the run");
    for (args, words) in [
        (vec!["simulate", "--html", "-", "--json", "-"], "--json - and --html - cannot both go to standard output"),
        (vec!["simulate", "--compare", "--svg", "-", "--html", "-"], "--svg - and --html - cannot both go to standard output"),
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words) && out.stdout.is_empty(), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn completions_and_the_man_page_come_from_the_cli_definition() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell], b"");
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("kstreams-assignor") && script.contains("simulate"), "{shell}");
        // The shells that complete values get the assignors from `--assignor`'s parser.
        if matches!(shell, "bash" | "zsh" | "fish") {
            assert!(script.contains("LegacyStickyTaskAssignor"), "{shell}");
        }
    }
    let out = run(&["man"], b"");
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with(".ie") || page.contains(".TH kstreams-assignor"), "{}", &page[..200.min(page.len())]);
    assert!(page.contains("simulate") && page.contains("Exit codes"), "{page}");
}

#[test]
fn usage_errors_exit_2_and_failures_exit_1() {
    assert_eq!(run(&["decode", "--no-such-option"], b"").status.code(), Some(2));
    assert_eq!(run(&["decode", "--kind", "subscriptions", "--hex", SUB_V11], b"").status.code(), Some(2));
    assert_eq!(run(&["assign", "--input", GROUP, "--assignor", "Nope"], b"").status.code(), Some(2));
    assert_eq!(run(&["decode"], b"").status.code(), Some(2), "no input");
    assert_eq!(run(&["decode", "--hex", "00ff"], b"").status.code(), Some(1));
    assert_eq!(run(&["assign", "--input", "/no/such/group.json"], b"").status.code(), Some(1));
    assert_eq!(run(&["decode", "--hex", SUB_V11], b"").status.code(), Some(0));
}

#[test]
fn help_lists_the_values_of_kind_assignor_and_scenarios() {
    let help = |args: &[&str]| String::from_utf8(run(args, b"").stdout).unwrap();
    let decode = help(&["decode", "--help"]);
    for kind in ["subscription", "assignment", "subscription-envelope", "assignment-envelope"] {
        assert!(decode.contains(&format!("- {kind}:")), "no {kind} in\n{decode}");
    }
    assert!(help(&["encode", "--help"]).contains("assignment-envelope"));
    for args in [&["assign", "--help"][..], &["simulate", "--help"]] {
        let text = help(args);
        for name in ["HighAvailabilityTaskAssignor", "LegacyStickyTaskAssignor", "FallbackPriorTaskAssignor", "optimized"] {
            assert!(text.contains(name), "no {name} in {args:?}:\n{text}");
        }
    }
    let simulate = help(&["simulate", "--help"]);
    for (name, _) in kstreams_assignor::sim::BUILTIN_SCENARIOS {
        assert!(simulate.contains(&format!("- {name}:")), "no {name} in\n{simulate}");
    }
    // A fully qualified class name still works.
    let v = json_out(&run(&["assign", "--input", GROUP, "--assignor", "org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor"], b""));
    assert_eq!(v["assignor"], "LegacyStickyTaskAssignor");
}

mod support;
mod cli_broker;

use cli_broker::{GroupScript, Reply, Seen};
use kafka_protocol::messages::ApiKey;
use kstreams_assignor::wire::{AssignmentEnvelope, AssignmentInfo, NextRebalance, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TaskId, TopicPartition};

/// A file in a fresh temporary directory with `text` in it.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    // One directory per call: tests run on parallel threads, and a file rewritten while another
    // test's child process reads it would be read half written.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ksa-cli-{}-{call}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// One stateless sub-topology reading `in`, of application `g`.
fn stateless_topology() -> std::path::PathBuf {
    temp_file("stateless.json", r#"{"applicationId": "g", "subtopologies": [{"id": 0, "sourceTopics": ["in"]}]}"#)
}

fn topics(list: &[(&str, i32)]) -> std::collections::BTreeMap<String, i32> {
    list.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect()
}

/// `lead` of group `g` on `bootstrap` with `extra` arguments, its streams piped.
fn spawn_lead(bootstrap: &str, extra: &[&str]) -> std::process::Child {
    let topology = stateless_topology();
    let mut args = vec!["lead", "--bootstrap", bootstrap, "--group", "g", "--topology", topology.to_str().unwrap()];
    args.extend_from_slice(extra);
    spawn(&args)
}

/// Waits up to `secs` for `child` to exit; kills it after that. Returns its output and how long
/// it took from the call.
fn wait_bounded(mut child: std::process::Child, secs: u64) -> (Output, std::time::Duration) {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < std::time::Duration::from_secs(secs) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = started.elapsed();
    let _ = child.kill();
    (child.wait_with_output().unwrap(), took)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn lead_leaves_the_group_within_a_second_of_a_signal_while_the_coordinator_holds_its_join() {
    for signal in ["-TERM", "-INT"] {
        let broker = cli_broker::start_group(GroupScript { topics: topics(&[("in", 2)]), hold_join: true, ..GroupScript::default() });
        let child = spawn_lead(&broker.address(), &[]);
        wait_for("the held JoinGroup", || broker.count(ApiKey::JoinGroup) >= 2);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
        let (out, took) = wait_bounded(child, 10);
        assert!(took < std::time::Duration::from_secs(1), "{signal}: exited after {took:?}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(1), "{signal}: never joined: {}", stderr(&out));
        assert_eq!(broker.leaves(), ["m-1"], "{signal}: it left the group first: {}", stderr(&out));
        assert!(stderr(&out).contains("stopped by a signal"), "{}", stderr(&out));
    }
}

#[test]
fn lead_leaves_and_exits_when_its_standard_output_closes() {
    use std::io::BufRead as _;
    // As `lead … | head -1`, and as `lead … 2>&1 | head -1` (standard error closes too).
    for close_stderr in [false, true] {
        let broker = cli_broker::start_group(GroupScript { topics: topics(&[("in", 2)]), hold_join: false, ..GroupScript::default() });
        let mut child = spawn_lead(&broker.address(), &["--exit-after", "60"]);
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let record: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(record["generationId"], 1);
        if close_stderr {
            drop(child.stderr.take());
        }
        drop(stdout);
        let (out, took) = wait_bounded(child, 10);
        assert!(took < std::time::Duration::from_secs(3), "exited after {took:?}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(broker.leaves(), ["m-1"], "{}", stderr(&out));
        if !close_stderr {
            assert!(stderr(&out).contains("standard output closed"), "{}", stderr(&out));
        }
    }
}

#[test]
fn lead_exits_1_when_it_never_joined_and_says_the_error_once() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let child = spawn_lead(&closed, &["--exit-after", "1.5"]);
    let (out, _) = wait_bounded(child, 20);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("never joined group `g`"), "{err}");
    assert_eq!(err.matches("no coordinator found").count(), 2, "once when the outage begins, once in the final error: {err}");
}

#[test]
fn lead_says_once_that_it_reconnected_after_an_outage() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let child = spawn_lead(&format!("127.0.0.1:{port}"), &["--exit-after", "4"]);
    std::thread::sleep(std::time::Duration::from_millis(1_500));
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let script = GroupScript { topics: topics(&[("in", 2)]), hold_join: false, ..GroupScript::default() };
    let broker = cli_broker::start_on(listener, cli_broker::group(std::sync::Arc::new(std::sync::Mutex::new(port)), script));
    let (out, _) = wait_bounded(child, 20);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("no coordinator found").count(), 1, "{err}");
    assert_eq!(err.matches("reconnected to").count(), 1, "{err}");
    // The outage lasted from the first attempt to the first retry after the broker came back
    // (the backoff doubles up to 1 s).
    let prefix = format!("reconnected to 127.0.0.1:{port} after ");
    let secs: f64 = err.split(&prefix).nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect(&err);
    assert!((1.4..4.0).contains(&secs), "{err}");
    assert!(err.contains("joined generation 1"), "{err}");
    assert_eq!(broker.leaves(), ["m-1"]);
}

#[test]
fn lead_warns_of_the_error_assignments_reason_on_standard_error() {
    // The source topic `in` does not exist: the leader sends every member an error code.
    let broker = cli_broker::start_group(GroupScript::default());
    let (out, _) = wait_bounded(spawn_lead(&broker.address(), &["--exit-after", "1.5"]), 20);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: generation 1: the leader's assignment carries error INCOMPLETE_SOURCE_TOPIC_METADATA to every member: missing source topics `in`"),
        "{err}"
    );
    let record: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(record["error"], "missing source topics `in`");
}

#[test]
fn lead_exits_3_without_assigning_when_the_members_subscribe_to_another_topology() {
    // A Java member whose topology has a second sub-topology, reading `g-by-region-repartition`.
    let info = SubscriptionInfo::new(11, ProcessId::random()).encode().unwrap();
    let java = SubscriptionEnvelope::new(vec!["g-by-region-repartition".into(), "in".into()], Some(info)).encode().unwrap();
    let script = GroupScript { topics: topics(&[("in", 2)]), others: vec![("java-1".into(), java)], ..GroupScript::default() };
    let broker = cli_broker::start_group(script);
    let (out, _) = wait_bounded(spawn_lead(&broker.address(), &["--exit-after", "30"]), 20);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "error: the topology file is not the application's: member `java-1` subscribes to `g-by-region-repartition`, which no \
             sub-topology of the file reads; give the application's current Topology#describe() text"
        ),
        "{err}"
    );
    assert_eq!(broker.count(ApiKey::SyncGroup), 0, "nothing assigned: {err}");
    assert_eq!(broker.count(ApiKey::Metadata), 0, "no topic looked up nor created: {err}");
    assert_eq!(broker.leaves(), ["m-1"], "it left the group first: {err}");
    assert!(out.stdout.is_empty(), "no assignment printed");
}

fn sub_bytes(generation: i32, sums: &[(TaskId, i64)]) -> Vec<u8> {
    let process: ProcessId = "33333333-3333-4333-8333-333333333333".parse().unwrap();
    let info = SubscriptionInfo::new(11, process).with_user_end_point("wc-1:8080").with_task_offset_sums(sums.iter().cloned());
    SubscriptionEnvelope::new(vec!["in".into()], Some(info.encode().unwrap())).with_generation_id(generation).encode().unwrap()
}

fn assignment_bytes(active: Vec<TaskId>, standby: &[TaskId], next: NextRebalance) -> Vec<u8> {
    let partitions: Vec<TopicPartition> = active.iter().map(|t| TopicPartition::new("in", t.partition)).collect();
    let standby = standby.iter().map(|t| (t.clone(), [TopicPartition::new("in", t.partition)].into())).collect();
    let info = AssignmentInfo::new(11).with_active_tasks(active).with_standby_tasks(standby).with_next_rebalance(next);
    AssignmentEnvelope::new(&partitions, Some(info.encode().unwrap())).encode().unwrap()
}

/// A coordinator whose DescribeGroups answers `state` with `members`, after the coordinator
/// errors of `find_errors` (FindCoordinator) and `describe_errors` (DescribeGroups).
fn describe_broker(
    state: &'static str,
    members: Vec<(String, Vec<u8>, Vec<u8>)>,
    find_errors: Vec<i16>,
    describe_errors: Vec<i16>,
) -> cli_broker::Broker {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (finds, describes) = (std::sync::Mutex::new(find_errors.into_iter()), std::sync::Mutex::new(describe_errors.into_iter()));
    let known = topics(&[("in", 2), ("g-counts-changelog", 2)]);
    let script = move |_: &mut Seen, key: ApiKey, v: i16, id: i32, buf: &mut bytes::Bytes| match key {
        ApiKey::FindCoordinator => Reply::Frame(cli_broker::find_coordinator(port, v, id, finds.lock().unwrap().next().unwrap_or(0))),
        ApiKey::DescribeGroups => {
            let code = describes.lock().unwrap().next().unwrap_or(0);
            let ms = members.iter().map(|(m, meta, a)| cli_broker::described_member(m, meta.clone(), a.clone())).collect();
            Reply::Frame(cli_broker::describe_groups("g", state, ms, code, v, id))
        }
        ApiKey::Metadata => Reply::Frame(cli_broker::metadata(port, &known, v, id, buf)),
        ApiKey::ListOffsets => Reply::Frame(cli_broker::list_offsets(1_000, v, id, buf)),
        other => panic!("unexpected {other:?}"),
    };
    cli_broker::start_on(listener, std::sync::Arc::new(script))
}

fn one_member() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let (t0, t1) = (TaskId::new(0, 0), TaskId::new(0, 1));
    let sub = sub_bytes(3, &[(t0.clone(), 900), (t1.clone(), -2)]);
    vec![("wc-client-1-0a1b".into(), sub, assignment_bytes(vec![t1], &[t0], NextRebalance::NONE))]
}

#[test]
fn describe_retries_coordinator_errors_as_kafkas_admin_client() {
    // COORDINATOR_NOT_AVAILABLE twice from FindCoordinator, then COORDINATOR_LOAD_IN_PROGRESS and
    // NOT_COORDINATOR from DescribeGroups: each time the coordinator is found again.
    let broker = describe_broker("Stable", one_member(), vec![15, 15], vec![14, 16]);
    let out = run_bounded(&["describe", "--bootstrap", &broker.address(), "--group", "g"], b"", 30);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("state Stable"));
    // Three to find it (two errors), one more after each of DescribeGroups' errors: the group's
    // kind and its description are asked of the coordinator found, with no second search.
    assert_eq!(broker.count(ApiKey::FindCoordinator), 5);
    assert_eq!(broker.count(ApiKey::DescribeGroups), 3);
}

#[test]
fn describe_says_the_group_is_rebalancing_instead_of_a_decode_error() {
    let members = vec![("wc-client-1-0a1b".to_owned(), Vec::new(), Vec::new())];
    let broker = describe_broker("PreparingRebalance", members, vec![], vec![]);
    let out = run_bounded(&["describe", "--bootstrap", &broker.address(), "--group", "g"], b"", 30);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let note = "the group is rebalancing (state PreparingRebalance): member metadata is not available yet; try again in a few seconds";
    assert!(text.contains(note), "{text}");
    assert!(!text.contains("decode"), "{text}");
    let v = json_out(&run_bounded(&["describe", "--bootstrap", &broker.address(), "--group", "g", "--json"], b"", 30));
    assert_eq!(v["rebalancing"], note);
    assert_eq!(v["members"][0]["memberMetadata"], Value::Null);
}

#[test]
fn describe_topology_shows_lags_as_of_the_last_join_with_its_generation() {
    let broker = describe_broker("Stable", one_member(), vec![], vec![]);
    let topology = temp_file(
        "stateful.json",
        r#"{"applicationId": "g", "subtopologies": [{"id": 0, "sourceTopics": ["in"], "stores": [{"name": "counts"}]}]}"#,
    );
    let args = ["describe", "--bootstrap", &broker.address(), "--group", "g", "--topology", topology.to_str().unwrap()];
    let out = run_bounded(&args, b"", 30);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.contains("lag")).unwrap_or_default();
    assert!(line.starts_with("  lag at last join (after generation 3), records"), "{text}");
    assert!(line.ends_with("0_0 100, 0_1 running"), "{text}");
    let v = json_out(&run_bounded(&[&args[..], &["--json"]].concat(), b"", 30));
    let member = &v["members"][0];
    assert_eq!(member["generationId"], 3);
    assert_eq!(member["reportedLagAtJoin"], serde_json::json!({"0_0": 100, "0_1": -2}));
    assert!(member.get("taskLags").is_none(), "{member}");
}

#[test]
fn describe_fits_100_columns_with_units_and_timestamps() {
    // A Java member: a long member id, 48 active tasks, a probing rebalance in 5 minutes.
    let uuid = "0a1b2c3d-4e5f-4789-abcd-ef0123456789";
    let member = format!("wc-{uuid}-StreamThread-1-consumer-{uuid}");
    let active: Vec<TaskId> = (0..48).map(|p| TaskId::new(0, p)).collect();
    let next = kstreams_assignor::client::now_ms() + 300_000;
    let sums: Vec<(TaskId, i64)> = (0..48).map(|p| (TaskId::new(0, p), 123_456_789)).collect();
    let members = vec![(member.clone(), sub_bytes(3, &sums), assignment_bytes(active, &[], NextRebalance::at(next)))];
    let broker = describe_broker("Stable", members, vec![], vec![]);
    let out = run_bounded(&["describe", "--bootstrap", &broker.address(), "--group", "g"], b"", 30);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{} columns: {line}\n{text}", line.chars().count());
    }
    let header = text.lines().find(|l| l.starts_with("MEMBER")).unwrap_or_else(|| panic!("no column headers:\n{text}"));
    for column in ["PROCESS", "CLIENT HOST", "ACTIVE TASKS", "STANDBY TASKS"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(text.contains("active tasks (48)") && text.contains("0_47"), "{text}");
    let next_line = text.lines().find(|l| l.trim_start().starts_with("next rebalance")).unwrap();
    let stamp = kstreams_assignor::views::describe::text::iso_millis(next);
    assert!(next_line.contains(&stamp[..16]) && next_line.contains("(in 4 min"), "{next_line}");
    assert!(!text.contains("nextRebalanceMs"), "{text}");
    // --verbose has the details, with their units.
    let out = run_bounded(&["describe", "--bootstrap", &broker.address(), "--group", "g", "--verbose"], b"", 30);
    let verbose = String::from_utf8(out.stdout).unwrap();
    assert!(verbose.contains(&format!("member {member}")), "{verbose}");
    assert!(verbose.contains("client wc-client, host /10.0.0.7") && verbose.contains(" bytes"), "{verbose}");
}

#[test]
fn pattern_sources_are_refused_with_a_message_that_says_so() {
    // Kafka prints a pattern source as the bare regex; the JSON has no form for one.
    let text = temp_file("pattern.txt", "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: orders-.*)\n      --> none\n\n");
    let json = temp_file("pattern.json", r#"{"applicationId": "g", "subtopologies": [{"id": 0, "sourceTopicPattern": "orders-.*"}]}"#);
    for (file, needles) in [
        (&text, &["line 3: source `KSTREAM-SOURCE-0000000000` subscribes to the topic pattern `orders-.*`", "list them instead"][..]),
        (&json, &["subtopologies[0].sourceTopicPattern", "pattern sources are not supported", "sourceTopics"]),
    ] {
        let out = run_bounded(&["lead", "--bootstrap", "127.0.0.1:9", "--group", "g", "--topology", file.to_str().unwrap()], b"", 30);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        for needle in needles {
            assert!(stderr(&out).contains(needle), "no `{needle}` in {}", stderr(&out));
        }
    }
}

#[test]
fn the_topology_docs_example_is_the_word_count_text() {
    use kstreams_assignor::leader::Topology;
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/topology.md")).unwrap();
    let json = docs.split("```json\n").nth(1).and_then(|b| b.split("```").next()).expect("a JSON example");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/leader/word-count.describe.txt")).unwrap();
    assert_eq!(Topology::from_json(json).unwrap(), Topology::from_describe(&text, "wc").unwrap());
}

#[test]
fn each_limitation_the_readme_states_is_what_the_tool_does() {
    // The README's Limitations section, held to the behaviour it describes: when one of these
    // becomes supported, this test fails until the section says so.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme.split("## Limitations").nth(1).and_then(|s| s.split("\n## ").next()).expect("a Limitations section");
    for claim in ["PEM trust and key stores only", "no Kerberos", "subscribed by pattern are refused", "--max-input-bytes"] {
        assert!(section.contains(claim), "the Limitations section no longer says `{claim}`:\n{section}");
    }
    let refused = |name: &str, properties: &str, needle: &str| {
        let config = temp_file(name, properties);
        let out = run_bounded(&["describe", "--bootstrap", "127.0.0.1:9", "--group", "g", "--command-config", config.to_str().unwrap()], b"", 30);
        assert_ne!(out.status.code(), Some(0), "{properties}");
        assert!(stderr(&out).contains(needle), "no `{needle}` in {}", stderr(&out));
    };
    let jks = temp_file("store.jks", "not read");
    let jks = format!("security.protocol=SSL\nssl.truststore.location={}\nssl.truststore.type=JKS\n", jks.display());
    refused("jks.properties", &jks, "JKS trust stores are not read");
    refused("kerberos.properties", "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n", "GSSAPI (Kerberos) is not supported");
    let pattern = temp_file("limit-pattern.txt", "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: orders-.*)\n      --> none\n\n");
    let out = run_bounded(&["lead", "--bootstrap", "127.0.0.1:9", "--group", "g", "--topology", pattern.to_str().unwrap()], b"", 30);
    assert!(stderr(&out).contains("subscribes to the topic pattern"), "{}", stderr(&out));
    let out = run_bounded(&["decode", "--max-input-bytes", "16", "-"], &[b'0'; 64], 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn join_on_the_streams_protocol_says_plainly_when_it_cannot_start() {
    // No broker: the member cannot read the group's topology and exits 1 in words, no panic.
    let out = run_bounded(&["join", "--protocol", "streams", "--bootstrap", "127.0.0.1:9", "--group", "g", "--timeout", "2s"], b"", 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot connect to 127.0.0.1:9"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    // The classic protocol still needs the topology file; the streams one does not.
    let out = run_bounded(&["lead", "--bootstrap", "127.0.0.1:9", "--group", "g"], b"", 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--topology is required on the classic protocol"), "{}", stderr(&out));
}

#[test]
fn probe_says_plainly_when_it_cannot_start() {
    // No broker: exits 1 in words, no panic, nothing on standard output.
    let out = run_bounded(&["probe", "--bootstrap", "127.0.0.1:9", "--group", "g", "--timeout", "2s"], b"", 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot connect to 127.0.0.1:9"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    // Usage errors exit 2: a bad interval, a topology (the prober declares the group's own).
    let out = run_bounded(&["probe", "--bootstrap", "127.0.0.1:9", "--group", "g", "--interval", "0s"], b"", 30);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run_bounded(&["probe", "--bootstrap", "127.0.0.1:9", "--group", "g", "--config", "application.server=h:1"], b"", 30);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("a prober serves no queries"), "{}", stderr(&out));
}
