//! Times the streams `optimized` assignor on the benchmark's large group, for profiling; with
//! `digest`, prints a digest of its answers over random groups, to compare two builds; with
//! `extras MEMBERS TASKS BOUND…`, counts the copies beyond the standbys under each bound.
use std::hash::{Hash, Hasher};
use std::time::Instant;

use kstreams_assignor::engine::streams::testdata::{CaseSize, large_case, random_case};
use kstreams_assignor::engine::streams::{StreamsMemory, assign_optimized};
use kstreams_assignor::interrupt::interruptible;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args[0] == "digest" {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for i in 0..args[1].parse::<u64>().unwrap() {
            let case = random_case(1, i, CaseSize::Full);
            let mut memory = StreamsMemory::new();
            for r in 0..2 {
                let out = assign_optimized(&case.spec, &case.topology, &mut memory, 1_700_000_000_000 + r * 1000);
                format!("{out:?}").hash(&mut h);
            }
        }
        for (m, t) in [(100, 1000), (1000, 10000)] {
            let case = large_case(m, 1, t, 1);
            let mut memory = StreamsMemory::new();
            format!("{:?}", assign_optimized(&case.spec, &case.topology, &mut memory, 1_700_000_000_000)).hash(&mut h);
        }
        println!("digest {:016x}", h.finish());
        return;
    }
    if args[0] == "extras" {
        // The copies beyond the standbys asked for at MEMBERS x TASKS (one member per process,
        // every task stateful, one standby), under `group.streams.num.warmup.replicas` = each
        // BOUND given; the engine's own count before the bound is the copies kept plus those
        // left out.
        let n: Vec<usize> = args[1..3].iter().map(|a| a.parse().unwrap()).collect();
        let case = large_case(n[0], 1, n[1], 1);
        for bound in &args[3..] {
            let mut spec = case.spec.clone();
            spec.configs = spec.configs.clone().with_num_warmup_replicas(bound.parse().unwrap());
            let mut memory = StreamsMemory::new();
            let out = assign_optimized(&spec, &case.topology, &mut memory, 1_700_000_000_000).unwrap();
            let copies: usize = out.members.values().map(|m| m.task_counts().1 + m.task_counts().2).sum();
            let e = memory.extra_copies();
            println!(
                "bound {bound}: {copies} copies for {} stateful tasks; extra {} ({} warm-ups, {} kept, {} spares), {} left out: {} before the bound",
                n[1],
                e.total(),
                e.warmups,
                e.kept,
                e.spares,
                e.left_out,
                e.total() + e.left_out
            );
        }
        return;
    }
    if args[0] == "gaps" {
        // The longest time between two checkpoints of one assignment, and how many there were.
        let n: Vec<usize> = args[1..].iter().map(|a| a.parse().unwrap()).collect();
        let case = large_case(n[0], 1, n[1], 1);
        let mut memory = StreamsMemory::new();
        for r in 0..n[2] {
            let state = std::rc::Rc::new(std::cell::Cell::new((Instant::now(), std::time::Duration::ZERO, 0u64)));
            let seen = std::rc::Rc::clone(&state);
            let started = Instant::now();
            let trace = std::env::var_os("GAP_TRACE").is_some();
            let check = move || {
                let (last, longest, count) = seen.get();
                if trace && last.elapsed().as_millis() > 40 {
                    eprintln!("gap {:?} before:\n{}", last.elapsed(), std::backtrace::Backtrace::force_capture());
                }
                seen.set((Instant::now(), longest.max(last.elapsed()), count + 1));
                false
            };
            let out = interruptible(check, || assign_optimized(&case.spec, &case.topology, &mut memory, 1_700_000_000_000 + r as i64 * 1000));
            let (last, longest, count) = state.get();
            let longest = longest.max(last.elapsed());
            println!(
                "round {r}: {:.1} ms, {count} checkpoints, longest gap {:.2} ms, ok {}",
                started.elapsed().as_secs_f64() * 1e3,
                longest.as_secs_f64() * 1e3,
                matches!(out, Ok(Ok(_)))
            );
        }
        return;
    }
    let n: Vec<usize> = args.iter().map(|a| a.parse().unwrap()).collect();
    let case = large_case(n[0], 1, n[1], 1);
    let mut memory = StreamsMemory::new();
    for r in 0..n[2] {
        let t = Instant::now();
        let out = assign_optimized(&case.spec, &case.topology, &mut memory, 1_700_000_000_000 + r as i64 * 1000).unwrap();
        println!("round {r}: {:.1} ms, {} members", t.elapsed().as_secs_f64() * 1e3, out.members.len());
    }
}
