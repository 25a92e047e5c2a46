use super::*;
use crate::jdk::hash::string_hash;
use crate::wire::{ProcessId, TaskId};

#[test]
fn hash_codes_match_java() {
    // Values printed by JDK 17.
    assert_eq!(string_hash("rack"), 3_492_567);
    assert_eq!(string_hash("héllo wörld"), 1_628_148_953);
    assert_eq!(TaskId::new(0, 0).java_hash_code(), 29_791);
    assert_eq!(TaskId::new(3, 7).java_hash_code(), 32_891);
    assert_eq!(TaskId::named("topo", 1, 2).java_hash_code(), 30_814 + string_hash("topo"));
    let pid: ProcessId = "00112233-4455-6677-8899-aabbccddeeff".parse().unwrap();
    assert_eq!(pid.java_hash_code(), 0x00112233 ^ 0x44556677 ^ 0x8899aabbu32 as i32 ^ 0xccddeeffu32 as i32);
}

#[test]
fn iteration_follows_buckets_then_insertion() {
    // Integer-like keys through TaskId: hash 29791 + 961 s + 31 p.
    let mut m = JavaHashMap::new();
    for p in [40, 9, 1] {
        m.insert(TaskId::new(0, p), ());
    }
    m.insert(TaskId::new(1, 9), ());
    let order: Vec<String> = m.keys().map(ToString::to_string).collect();
    // Buckets (mod 16): 0_9 → 6, 0_40 → 7, 1_9 → 7 (same hash as 0_40), 0_1 → 14. Checked
    // against a JDK 17 HashMap of Kafka's TaskId.
    assert_eq!(order, ["0_9", "0_40", "1_9", "0_1"]);
}

/// One random sequence of operations for the differential test against `java.util.HashSet`:
/// keys crowd into few buckets (`31·s + p` constant gives equal hashes) so that buckets turn
/// into trees, split, shrink and lose their roots.
fn random_ops(rng: &mut crate::rng::Rng) -> serde_json::Value {
    let crowded = rng.range(1, 6);
    let key = |rng: &mut crate::rng::Rng| {
        if rng.chance(0.7) {
            let v = 31 * 12 + rng.range(0, crowded - 1) * 64;
            let s = rng.range(0, 11);
            TaskId::new(s as i32, (v - 31 * s) as i32)
        } else {
            TaskId::new(rng.range(0, 40) as i32, rng.range(0, 400) as i32)
        }
    };
    let init = match rng.range(0, 2) {
        0 => serde_json::json!({"kind": "new"}),
        1 => serde_json::json!({"kind": "capacity", "n": rng.range(0, 300)}),
        _ => {
            let items: Vec<String> = (0..rng.range(0, 200)).map(|_| key(rng).to_string()).collect();
            serde_json::json!({"kind": "collection", "items": items})
        }
    };
    let mut ops = Vec::new();
    for _ in 0..rng.range(1, 600) {
        let op = match rng.range(0, 19) {
            0..=9 => serde_json::json!(["put", key(rng).to_string()]),
            10..=12 => serde_json::json!(["remove", key(rng).to_string()]),
            13..=15 => serde_json::json!(["iterRemove", key(rng).to_string()]),
            16 => {
                let keep: Vec<String> = (0..rng.range(0, 300)).map(|_| key(rng).to_string()).collect();
                serde_json::json!(["retain", keep])
            }
            17 => {
                let items: Vec<String> = (0..rng.range(0, 40)).map(|_| key(rng).to_string()).collect();
                serde_json::json!(["removeAll", items])
            }
            _ => serde_json::json!(["check"]),
        };
        ops.push(op);
    }
    ops.push(serde_json::json!(["check"]));
    serde_json::json!({"init": init, "ops": ops})
}

/// Runs one sequence; returns the iteration order at each `check`, and the most tree bins
/// seen at a check.
fn run_ops(seq: &serde_json::Value) -> (Vec<Vec<String>>, usize) {
    let task = |v: &serde_json::Value| v.as_str().unwrap().parse::<TaskId>().unwrap();
    let tasks = |v: &serde_json::Value| v.as_array().unwrap().iter().map(task).collect::<Vec<_>>();
    let init = &seq["init"];
    let mut set: JavaHashSet<TaskId> = match init["kind"].as_str().unwrap() {
        "new" => JavaHashSet::new(),
        "capacity" => JavaHashSet::with_capacity(init["n"].as_u64().unwrap() as usize),
        _ => JavaHashSet::from_collection(tasks(&init["items"]).into_iter()),
    };
    let mut orders = Vec::new();
    let mut trees = 0;
    for op in seq["ops"].as_array().unwrap() {
        match op[0].as_str().unwrap() {
            "put" => {
                set.add(task(&op[1]));
            }
            "remove" => {
                set.remove(&task(&op[1]));
            }
            "iterRemove" => {
                set.remove_by_iterator(&task(&op[1]));
            }
            "retain" => {
                let keep: std::collections::HashSet<TaskId> = tasks(&op[1]).into_iter().collect();
                set.retain(|k, _| keep.contains(k));
            }
            "removeAll" => {
                let mut items = tasks(&op[1]);
                let mut seen = std::collections::HashSet::new();
                items.retain(|t| seen.insert(t.clone()));
                set.remove_all(items.iter(), items.len(), |k| seen.contains(k));
            }
            _ => {
                trees = trees.max(set.tree_bins());
                orders.push(set.keys().map(ToString::to_string).collect());
            }
        }
    }
    (orders, trees)
}

/// Writes random operation sequences and this map's answers to `$HASHMAP_DIR`; driven by
/// `compat/java/parity.sh`, which runs the same sequences on `java.util.HashSet`.
#[test]
#[ignore = "driven by compat/java/parity.sh"]
fn java_differential_generate() {
    use std::io::Write;
    let dir = std::path::PathBuf::from(std::env::var("HASHMAP_DIR").unwrap());
    let count: u64 = std::env::var("HASHMAP_SEQUENCES").map_or(300, |s| s.parse().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let mut ops = std::fs::File::create(dir.join("hashmap-ops.jsonl")).unwrap();
    let mut rust = std::fs::File::create(dir.join("hashmap-rust.jsonl")).unwrap();
    let mut rng = crate::rng::Rng::new(42);
    let mut with_trees = 0;
    for id in 0..count {
        let mut seq = random_ops(&mut rng);
        seq["id"] = id.into();
        let (orders, trees) = run_ops(&seq);
        with_trees += usize::from(trees > 0);
        writeln!(ops, "{seq}").unwrap();
        writeln!(rust, "{}", serde_json::json!({"id": id, "orders": orders})).unwrap();
    }
    println!("HashSet sequences: {count}, {with_trees} with tree bins");
}

/// Compares with Java's answers in `$HASHMAP_DIR/hashmap-java.jsonl`.
#[test]
#[ignore = "driven by compat/java/parity.sh"]
fn java_differential_compare() {
    let dir = std::path::PathBuf::from(std::env::var("HASHMAP_DIR").unwrap());
    let read = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.join(name)).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let (rust, java) = (read("hashmap-rust.jsonl"), read("hashmap-java.jsonl"));
    assert_eq!(rust.len(), java.len());
    let differing: Vec<_> = rust.iter().zip(&java).filter(|(r, j)| r != j).map(|(r, _)| r["id"].clone()).collect();
    println!("HashSet iteration order: {} sequences, {} equal, {} different", rust.len(), rust.len() - differing.len(), differing.len());
    assert!(differing.is_empty(), "sequences {differing:?} differ from java.util.HashSet");

    // With $HASHMAP_FIXTURES=N, keep the N smallest sequences that grow tree bins, with Java's
    // answers, for `replays_java_hash_set_fixtures`.
    if let Some(n) = std::env::var("HASHMAP_FIXTURES").ok().and_then(|n| n.parse::<usize>().ok()) {
        let mut picked: Vec<String> = read("hashmap-ops.jsonl")
            .into_iter()
            .zip(&java)
            .filter(|(seq, _)| run_ops(seq).1 > 0)
            .map(|(mut seq, j)| {
                seq["expected"] = j["orders"].clone();
                seq.to_string()
            })
            .collect();
        picked.sort_by_key(String::len);
        picked.truncate(n);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parity/JavaHashSet.jsonl");
        std::fs::write(&path, picked.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        println!("{}: {} sequences", path.display(), picked.len());
    }
}

/// Operation sequences with `java.util.HashSet`'s iteration orders, recorded by
/// `compat/java/parity.sh --fixtures N`; every one grows tree bins.
#[test]
fn replays_java_hash_set_fixtures() {
    let text = include_str!("../../../fixtures/parity/JavaHashSet.jsonl");
    let mut count = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let seq: serde_json::Value = serde_json::from_str(line).unwrap();
        let (orders, trees) = run_ops(&seq);
        assert!(trees > 0);
        assert_eq!(serde_json::json!(orders), seq["expected"], "sequence {}", seq["id"]);
        count += 1;
    }
    assert!(count >= 10, "only {count} recorded sequences");
}

#[test]
fn compute_if_absent_puts_new_keys_first_in_their_bucket() {
    // Two of these process ids share bucket 1 of a table of 8; JDK 17's computeIfAbsent into a
    // `new HashMap<>(6)` iterates them newest first, where put would keep insertion order.
    let ids = ["cdb4b00d-773e-4714-8575-3fa67609aebf", "262fc607-054b-4de4-8472-53a49016ff9c", "eefc60da-8206-4e83-a69e-82e8e322b9bb"];
    let mut computed = JavaHashMap::with_capacity(6);
    let mut put = JavaHashMap::with_capacity(6);
    for id in ids {
        assert!(computed.compute_if_absent(id, || ()));
        put.insert(id, ());
    }
    assert!(!computed.compute_if_absent(ids[0], || ()));
    assert_eq!(computed.keys().copied().collect::<Vec<_>>(), [ids[2], ids[0], ids[1]]);
    assert_eq!(put.keys().copied().collect::<Vec<_>>(), [ids[0], ids[2], ids[1]]);
}

#[test]
fn compute_if_absent_grows_the_table_before_the_insert_that_follows_a_full_one() {
    // Seven keys fill a table of 8 past its threshold of 6: put doubles it at the seventh,
    // computeIfAbsent only at the eighth (JDK 17), even when that one finds its key present.
    let table = |m: &JavaHashMap<TaskId, ()>| m.table.len();
    let mut small = JavaHashMap::with_capacity(8);
    let mut small_put = JavaHashMap::with_capacity(8);
    for p in 0..7 {
        small.compute_if_absent(TaskId::new(0, p), || ());
        small_put.insert(TaskId::new(0, p), ());
    }
    assert_eq!((table(&small), table(&small_put)), (8, 16));
    small.compute_if_absent(TaskId::new(0, 0), || ());
    assert_eq!(table(&small), 16);
}
