//! Replays random membership changes of small streams groups through the broker's `sticky`
//! assignor and `optimized`, each from its own previous target, and counts per assignor: active
//! tasks moved between processes (all, and stateful), and the moves beyond the least the new
//! per-process counts need (a task taken from a process that keeps as many as before, or more).
//! Those are split in two: the moves the new per-process counts of stateful and of stateless
//! tasks need (`optimized` keeps the stateful tasks as even as the total: a process that holds
//! more stateful tasks than its share trades one for a stateless one), and those beyond even
//! those counts.
//!
//! `optimized`'s inputs are also given to `sticky`: the steps where `optimized` moves more
//! active tasks than `sticky` on the same group, split by whether `sticky` leaves a wider spread
//! of stateful tasks per thread (max − min over the processes, as the simulator measures it).
//!
//! Each sequence: a topology of 1 to 3 sub-topologies of 1 to 8 partitions, each stateful or not;
//! 0 or 1 standby; 1 or 2 threads (members) per process; one process, then 1 to 4 steps that add
//! a process or (a third of the time, with more than one left) remove one. A process reports an
//! offset for every stateful task it has held.
//!
//! Usage: `cargo run --release --example streams_moves -- [SEQUENCES] [SEED]` (3,000 and 12,345).

use std::collections::{BTreeMap, BTreeSet};

use kstreams_assignor::engine::streams::{
    StreamsAssignmentConfigs, StreamsGroupAssignment, StreamsGroupSpec, StreamsMemberSpec, StreamsMemory, StreamsSubtopology,
    StreamsTopology, assign_optimized, assign_sticky,
};

/// A task: sub-topology index and partition.
type Task = (usize, i32);

#[derive(Default)]
struct Counts {
    moves: u64,
    stateful_moves: u64,
    steps_beyond_least: u64,
    moves_beyond_least: u64,
    /// Of `moves_beyond_least`, those the per-process counts of stateful and stateless tasks need.
    moves_for_kinds: u64,
    /// Steps where `optimized` moves more than `sticky` on the same group: `sticky`'s stateful
    /// spread wider, not wider.
    more_than_sticky: (u64, u64),
}

struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn process_id(p: usize) -> String {
    format!("00000000-0000-0000-0000-{p:012}")
}

/// Runs one sequence of process sets through one assignor, adding to `counts`.
fn replay(optimized: bool, shape: &[(u32, bool)], steps: &[Vec<usize>], threads: usize, standbys: u32, counts: &mut Counts) {
    let topology = StreamsTopology::new(shape.iter().enumerate().map(|(s, &(n, stateful))| StreamsSubtopology::new(s.to_string(), n, stateful)));
    let mut memory = StreamsMemory::new();
    let mut previous: Option<StreamsGroupAssignment> = None;
    let mut held: BTreeMap<usize, BTreeSet<Task>> = BTreeMap::new();
    let member = |p: usize, t: usize| format!("p{p}-t{t}");
    let process_of = |m: &str| -> usize { m[1..m.find('-').unwrap_or(1)].parse().unwrap_or(0) };
    for (k, processes) in steps.iter().enumerate() {
        let mut members = Vec::new();
        for &p in processes {
            for t in 0..threads {
                let id = member(p, t);
                let mut spec = StreamsMemberSpec::new(id.clone(), process_id(p));
                if let Some(a) = previous.as_ref().and_then(|prev| prev.members.get(&id)) {
                    for (s, parts) in &a.active_tasks {
                        for &x in parts {
                            spec = spec.with_active_task(s.clone(), x, 1);
                        }
                    }
                    for (s, parts) in &a.standby_tasks {
                        for &x in parts {
                            spec = spec.with_standby_task(s.clone(), x);
                        }
                    }
                }
                for &(s, x) in held.get(&p).into_iter().flatten() {
                    spec = spec.with_task_offset(s.to_string(), x, 1_000);
                }
                members.push(spec);
            }
        }
        let spec = StreamsGroupSpec::new(members).with_configs(StreamsAssignmentConfigs::default().with_num_standby_replicas(standbys));
        let target = if optimized { assign_optimized(&spec, &topology, &mut memory, 1_000_000 + k as i64 * 60_000) } else { assign_sticky(&spec, &topology) };
        let target = target.expect("a valid group");
        if optimized && previous.is_some() {
            let sticky = assign_sticky(&spec, &topology).expect("a valid group");
            let (ours, theirs) = (moved(previous.as_ref(), &target), moved(previous.as_ref(), &sticky));
            if ours > theirs {
                let wider = stateful_spread(&sticky, shape) > stateful_spread(&target, shape) + 1e-9;
                if wider {
                    counts.more_than_sticky.0 += 1;
                } else {
                    counts.more_than_sticky.1 += 1;
                }
            }
        }
        let owners = |a: &StreamsGroupAssignment| -> BTreeMap<Task, usize> {
            let mut out = BTreeMap::new();
            for (m, assignment) in &a.members {
                for (s, parts) in &assignment.active_tasks {
                    for &x in parts {
                        out.insert((s.parse().unwrap_or(0), x), process_of(m));
                    }
                }
            }
            out
        };
        let after = owners(&target);
        if let Some(prev) = &previous {
            let before = owners(prev);
            let mut moved: i64 = 0;
            for (task, p) in &after {
                if before.get(task).is_some_and(|q| q != p) {
                    moved += 1;
                    counts.stateful_moves += u64::from(shape[task.0].1);
                }
            }
            // Per process: active tasks, stateful ones.
            let count = |owners: &BTreeMap<Task, usize>| {
                let mut n: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
                for (task, &p) in owners {
                    let e = n.entry(p).or_default();
                    e.0 += 1;
                    e.1 += i64::from(shape[task.0].1);
                }
                n
            };
            let (was, is) = (count(&before), count(&after));
            let (mut least, mut least_kinds) = (0, 0);
            for (p, &(n, stateful)) in &is {
                let (n0, stateful0) = was.get(p).copied().unwrap_or((0, 0));
                least += (n - n0).max(0);
                least_kinds += (stateful - stateful0).max(0) + ((n - stateful) - (n0 - stateful0)).max(0);
            }
            counts.moves += moved as u64;
            if moved > least {
                counts.steps_beyond_least += 1;
                counts.moves_beyond_least += (moved - least) as u64;
                counts.moves_for_kinds += (moved.min(least_kinds) - least) as u64;
            }
        }
        for (m, assignment) in &target.members {
            let tasks = held.entry(process_of(m)).or_default();
            for (s, parts) in assignment.active_tasks.iter().chain(&assignment.standby_tasks) {
                let s: usize = s.parse().unwrap_or(0);
                if shape[s].1 {
                    tasks.extend(parts.iter().map(|&x| (s, x)));
                }
            }
        }
        previous = Some(target);
    }
}

/// Each task's process under `a`.
fn owners(a: &StreamsGroupAssignment) -> BTreeMap<Task, String> {
    let mut out = BTreeMap::new();
    for (m, assignment) in &a.members {
        let process = m[..m.find('-').unwrap_or(m.len())].to_owned();
        for (s, parts) in &assignment.active_tasks {
            for &x in parts {
                out.insert((s.parse().unwrap_or(0), x), process.clone());
            }
        }
    }
    out
}

/// Active tasks `after` runs on another process than `before` did.
fn moved(before: Option<&StreamsGroupAssignment>, after: &StreamsGroupAssignment) -> usize {
    let before = before.map(owners).unwrap_or_default();
    owners(after).iter().filter(|(t, p)| before.get(*t).is_some_and(|q| q != *p)).count()
}

/// Max − min over the processes of their stateful active tasks per thread (member).
fn stateful_spread(a: &StreamsGroupAssignment, shape: &[(u32, bool)]) -> f64 {
    let mut per: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (m, assignment) in &a.members {
        let e = per.entry(&m[..m.find('-').unwrap_or(m.len())]).or_default();
        e.1 += 1.0;
        e.0 += assignment.active_tasks.iter().filter(|(s, _)| shape[s.parse::<usize>().unwrap_or(0)].1).map(|(_, p)| p.len() as f64).sum::<f64>();
    }
    let loads: Vec<f64> = per.values().map(|(n, threads)| n / threads).collect();
    loads.iter().copied().fold(f64::MIN, f64::max) - loads.iter().copied().fold(f64::MAX, f64::min)
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sequences = args.first().copied().unwrap_or(3_000);
    let mut rng = Xorshift(args.get(1).copied().unwrap_or(12_345).max(1));
    let (mut sticky, mut optimized) = (Counts::default(), Counts::default());
    let (mut fewer, mut more) = (0, 0);
    for _ in 0..sequences {
        let shape: Vec<(u32, bool)> = (0..1 + rng.below(3)).map(|_| (1 + rng.below(8) as u32, rng.below(2) == 0)).collect();
        let standbys = rng.below(2) as u32;
        let threads = 1 + rng.below(2) as usize;
        let mut present = vec![0];
        let mut steps = vec![present.clone()];
        let mut next = 1;
        for _ in 0..1 + rng.below(4) {
            if present.len() > 1 && rng.below(3) == 0 {
                let i = rng.below(present.len() as u64) as usize;
                present.remove(i);
            } else {
                present.push(next);
                next += 1;
            }
            steps.push(present.clone());
        }
        let (s, o) = (sticky.moves, optimized.moves);
        replay(false, &shape, &steps, threads, standbys, &mut sticky);
        replay(true, &shape, &steps, threads, standbys, &mut optimized);
        let (ds, d_o) = (sticky.moves - s, optimized.moves - o);
        if d_o < ds {
            fewer += 1;
        } else if d_o > ds {
            more += 1;
        }
    }
    println!("{sequences} sequences: optimized moves fewer active tasks in {fewer}, more in {more}");
    println!(
        "| assignor | active moves | of them stateful | steps with moves beyond the least | moves beyond the least | of them for the stateful/stateless counts | beyond those counts |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, c) in [("sticky", &sticky), ("optimized", &optimized)] {
        let (beyond, kinds) = (c.moves_beyond_least, c.moves_for_kinds);
        println!("| {name} | {} | {} | {} | {beyond} | {kinds} | {} |", c.moves, c.stateful_moves, c.steps_beyond_least, beyond - kinds);
    }
    let (wider, not_wider) = optimized.more_than_sticky;
    println!(
        "On the same groups, optimized moves more than sticky in {} steps: sticky's stateful spread per thread is wider in {wider}, not wider in {not_wider}",
        wider + not_wider
    );
}
