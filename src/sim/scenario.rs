//! Scenarios: an application, the members it starts with, and what happens to the group.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::engine::AssignmentConfigs;
use crate::rng::Rng;
use crate::wire::{ProcessId, TaskId};

/// A Kafka Streams instance.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberSpec {
    /// A short name for tables (`S1`, `new-2`, …).
    pub name: String,
    /// Its process id.
    pub process_id: ProcessId,
    /// Stream threads (the assignor's capacity).
    pub threads: u32,
    /// `client.rack`, if any.
    pub rack: Option<String>,
    /// `client.tag.*` values.
    pub client_tags: BTreeMap<String, String>,
}

impl MemberSpec {
    /// A member named `name` with `threads` threads; the process id is derived from the name so
    /// that runs are reproducible.
    pub fn new(name: &str, threads: u32) -> Self {
        // FNV-1a over the name, spread to 128 bits.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut rng = Rng::new(h);
        let bits = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        Self {
            name: name.to_owned(),
            process_id: ProcessId(Uuid::from_u128(bits)),
            threads,
            rack: None,
            client_tags: BTreeMap::new(),
        }
    }
}

/// Something that happens to the group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A member joins (a new one, or one that left or crashed, with whatever state it kept).
    Join(MemberSpec),
    /// A member shuts down for good (its local state goes with it).
    Leave(ProcessId),
    /// A member crashes; its local state stays on disk for when it comes back.
    Crash(ProcessId),
    /// A member restarts under static membership: same identity, tasks restore from local state.
    Restart(ProcessId),
    /// The current group leader crashes.
    LeaderCrash,
    /// Input arrives: each stateful sub-topology's changelog grows by this many records, split
    /// over its partitions by their weights ([`Subtopology::partition_weights`]). The group does
    /// not rebalance for it.
    Produce(i64),
}

/// An event at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Simulated time, ms.
    pub at_ms: i64,
    /// What happens.
    pub kind: EventKind,
}

/// A sub-topology of the simulated application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtopology {
    /// Its id.
    pub id: i32,
    /// Number of tasks (input partitions).
    pub partitions: i32,
    /// Records in each task's changelog at the start (`None`: stateless); with
    /// `partition_weights`, the sub-topology's total of them (this times `partitions`) split by
    /// weight.
    pub changelog_records: Option<i64>,
    /// Each partition's share of the sub-topology's changelog records, relative to the others',
    /// as a real key distribution gives them (empty: all alike): the records at the start and
    /// those of [`EventKind::Produce`] are split by them. `produce_records_per_sec` still
    /// appends the same to every changelog.
    pub partition_weights: Vec<u32>,
}

impl Subtopology {
    /// A sub-topology of `partitions` tasks whose changelogs hold `changelog_records` each at
    /// the start (`None`: stateless), all alike.
    pub fn new(id: i32, partitions: i32, changelog_records: Option<i64>) -> Self {
        Self { id, partitions, changelog_records, partition_weights: Vec::new() }
    }

    /// `records` split over the partitions: by weight (each partition the difference of the
    /// rounded-down running shares, so the parts sum to `records`), or evenly, the first
    /// partitions taking the remainder, where the weights are empty, do not name every
    /// partition or sum to 0.
    pub fn split(&self, records: i64) -> Vec<i64> {
        let n = self.partitions.max(0) as usize;
        let weights: Vec<i128> = if self.partition_weights.len() == n && self.partition_weights.iter().any(|&w| w > 0) {
            self.partition_weights.iter().map(|&w| i128::from(w)).collect()
        } else {
            vec![1; n]
        };
        let total: i128 = weights.iter().sum();
        let mut running = 0i128;
        let mut before = 0i128;
        weights
            .iter()
            .map(|w| {
                running += w;
                let upto = i128::from(records) * running / total;
                let part = upto - before;
                before = upto;
                part as i64
            })
            .collect()
    }
}

/// A scenario: the app, its starting members, and the events.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Scenario {
    /// Name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Assignor configuration (Kafka's keys and defaults).
    pub configs: AssignmentConfigs,
    /// The application.
    pub subtopologies: Vec<Subtopology>,
    /// Members present at time 0.
    pub initial_members: Vec<MemberSpec>,
    /// Whether the app is already running and caught up at time 0 (otherwise it starts cold).
    pub running: bool,
    /// What happens, in time order.
    pub events: Vec<Event>,
}

impl Scenario {
    /// Stateful tasks and their starting changelog end-offset sums.
    pub fn stateful_tasks(&self) -> BTreeMap<TaskId, i64> {
        self.subtopologies
            .iter()
            .filter_map(|s| s.changelog_records.map(|n| (s, n)))
            .flat_map(|(s, n)| {
                let starts = if s.partition_weights.is_empty() {
                    vec![n; s.partitions.max(0) as usize]
                } else {
                    s.split(n.saturating_mul(i64::from(s.partitions)))
                };
                starts.into_iter().enumerate().map(move |(p, records)| (TaskId::new(s.id, p as i32), records))
            })
            .collect()
    }

    /// Stateless tasks.
    pub fn stateless_tasks(&self) -> Vec<TaskId> {
        self.subtopologies
            .iter()
            .filter(|s| s.changelog_records.is_none())
            .flat_map(|s| (0..s.partitions).map(move |p| TaskId::new(s.id, p)))
            .collect()
    }
}

/// The built-in scenarios: name and description. The first is the default.
pub const BUILTIN_SCENARIOS: &[(&str, &str)] = &[
    ("scale-out", "KIP-441's first example: a running stateful app on 3 instances, a 4th joins"),
    ("scale-up-from-empty", "a new app: one instance starts, two more join 30 s later"),
    ("scale-down", "4 instances with one standby each; one instance shuts down for good"),
    ("host-swap", "online host swap: 2 new instances join, the 2 old ones leave an hour later"),
    ("leader-crash", "scale-out by 2 instances; the leader crashes while warm-ups restore, and returns"),
    ("rolling-bounce", "4 instances restart one after the other (static membership)"),
    ("random-churn", "random joins, leaves, crashes and returns (use --seed)"),
];

/// The availability benchmark's scenarios: name and description. One app of 8 stateful tasks
/// (1,000,000 changelog records each) with one standby each, on instances of one stream thread,
/// through the changes the real-cluster benchmark makes. They are not in the comparison suite
/// ([`suite_scenarios`](super::suite_scenarios)); `simulate --compare availability` runs them
/// ([`availability_scenarios`]).
pub const AVAILABILITY_SCENARIOS: &[(&str, &str)] = &[
    ("availability-scale-out", "availability benchmark: 3 instances, a 4th joins"),
    ("availability-scale-in", "availability benchmark: 4 instances, one shuts down gracefully"),
    ("availability-crash", "availability benchmark: 4 instances, one crashes"),
    ("availability-rolling-bounce", "availability benchmark: 3 instances restart one after the other (static membership)"),
    ("availability-cold-start", "availability benchmark: 3 instances start 10 s apart, their state only in the changelogs"),
];

/// The scenarios of [`AVAILABILITY_SCENARIOS`], in that order.
pub fn availability_scenarios() -> Vec<Scenario> {
    AVAILABILITY_SCENARIOS.iter().filter_map(|(n, _)| builtin(n, 0)).collect()
}

const MIN: i64 = 60_000;

fn app() -> Vec<Subtopology> {
    vec![
        Subtopology::new(0, 8, Some(2_000_000)),
        Subtopology::new(1, 8, Some(2_000_000)),
        Subtopology::new(2, 8, None),
    ]
}

fn members(prefix: &str, range: std::ops::RangeInclusive<u32>, threads: u32) -> Vec<MemberSpec> {
    range.map(|i| MemberSpec::new(&format!("{prefix}{i}"), threads)).collect()
}

fn at(at_ms: i64, kind: EventKind) -> Event {
    Event { at_ms, kind }
}

/// A built-in scenario by name, of [`BUILTIN_SCENARIOS`] or [`AVAILABILITY_SCENARIOS`] (`seed`
/// shapes `random-churn` only).
///
/// ```
/// let s = kstreams_assignor::sim::builtin("scale-down", 0).unwrap();
/// assert_eq!(s.initial_members.len(), 4);
/// assert!(kstreams_assignor::sim::builtin("no-such-thing", 0).is_none());
/// ```
pub fn builtin(name: &str, seed: u64) -> Option<Scenario> {
    let description = BUILTIN_SCENARIOS.iter().chain(AVAILABILITY_SCENARIOS).find(|(n, _)| *n == name)?.1.to_owned();
    let mut s = Scenario {
        name: name.to_owned(),
        description,
        configs: AssignmentConfigs::default(),
        subtopologies: app(),
        initial_members: Vec::new(),
        running: true,
        events: Vec::new(),
    };
    match name {
        "scale-out" => {
            s.initial_members = members("S", 1..=3, 2);
            s.events = vec![at(MIN, EventKind::Join(MemberSpec::new("S4", 2)))];
        }
        "scale-up-from-empty" => {
            s.running = false;
            s.subtopologies.iter_mut().for_each(|t| t.changelog_records = t.changelog_records.map(|_| 0));
            s.initial_members = members("S", 1..=1, 2);
            s.events = members("S", 2..=3, 2).into_iter().map(|m| at(30_000, EventKind::Join(m))).collect();
        }
        "scale-down" => {
            s.configs = s.configs.with_num_standby_replicas(1);
            s.initial_members = members("S", 1..=4, 2);
            s.events = vec![at(MIN, EventKind::Leave(s.initial_members[3].process_id))];
        }
        "host-swap" => {
            s.initial_members = members("old-", 1..=2, 2);
            let new = members("new-", 1..=2, 2);
            s.events = new.into_iter().map(|m| at(MIN, EventKind::Join(m))).collect();
            for old in &s.initial_members {
                s.events.push(at(61 * MIN, EventKind::Leave(old.process_id)));
            }
        }
        "leader-crash" => {
            s.initial_members = members("S", 1..=3, 2);
            let leader = s.initial_members[0].clone();
            s.events = members("S", 4..=5, 2).into_iter().map(|m| at(MIN, EventKind::Join(m))).collect();
            s.events.push(at(MIN + 30_000, EventKind::LeaderCrash));
            s.events.push(at(6 * MIN, EventKind::Join(leader)));
        }
        "rolling-bounce" => {
            s.configs = s.configs.with_num_standby_replicas(1);
            s.initial_members = members("S", 1..=4, 2);
            s.events = s
                .initial_members
                .iter()
                .enumerate()
                .map(|(i, m)| at((i as i64 + 1) * 5 * MIN, EventKind::Restart(m.process_id)))
                .collect();
        }
        "random-churn" => random_churn(&mut s, seed),
        _ => availability(&mut s),
    }
    Some(s)
}

/// The availability benchmark's scenario `s` names ([`AVAILABILITY_SCENARIOS`]).
fn availability(s: &mut Scenario) {
    // As compat/availability runs them: one sub-topology of six stateful tasks of 5,500,000
    // changelog records, no standbys, Kafka's least probing interval, one thread an instance.
    s.configs = s.configs.clone().with_num_standby_replicas(0).with_probing_rebalance_interval_ms(MIN);
    s.subtopologies = vec![Subtopology::new(0, 6, Some(5_500_000))];
    s.initial_members = members("S", 1..=4, 1);
    let last = s.initial_members[3].process_id;
    match s.name.as_str() {
        "availability-scale-out" => {
            let joiner = s.initial_members.pop().expect("four members");
            s.events = vec![at(MIN, EventKind::Join(joiner))];
        }
        "availability-scale-in" => s.events = vec![at(MIN, EventKind::Leave(last))],
        "availability-crash" => s.events = vec![at(MIN, EventKind::Crash(last))],
        "availability-rolling-bounce" => {
            s.initial_members.truncate(3);
            let restarts = s.initial_members.iter().enumerate().map(|(i, m)| at((i as i64 + 1) * 5 * MIN, EventKind::Restart(m.process_id)));
            s.events = restarts.collect();
        }
        _ => {
            // Cold start: nothing on the members' disks, every task restores its changelog; the
            // instances start 10 s apart, the first alone at first.
            s.running = false;
            let later = s.initial_members.drain(1..3).collect::<Vec<_>>();
            s.initial_members.truncate(1);
            s.events = later.into_iter().enumerate().map(|(i, m)| at((i as i64 + 1) * 10_000, EventKind::Join(m))).collect();
        }
    }
}

fn random_churn(s: &mut Scenario, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_c0de);
    s.name = format!("random-churn-{seed}");
    s.configs = s.configs.clone().with_num_standby_replicas(rng.range(0, 2) as i32);
    s.subtopologies = (0..rng.range(2, 4) as i32)
        .map(|id| {
            let partitions = rng.range(2, 12) as i32;
            Subtopology::new(id, partitions, rng.chance(0.75).then(|| rng.range(10_000, 5_000_000)))
        })
        .collect();
    let initial = rng.range(2, 6) as u32;
    s.initial_members = (1..=initial).map(|i| MemberSpec::new(&format!("S{i}-{seed}"), rng.range(1, 4) as u32)).collect();
    let mut up: Vec<MemberSpec> = s.initial_members.clone();
    let mut down: Vec<MemberSpec> = Vec::new();
    let mut next = initial + 1;
    let mut t = 0;
    for _ in 0..rng.range(3, 8) {
        t += rng.range(1, 30) * MIN;
        let roll = rng.range(0, 99);
        let kind = if roll < 35 || up.len() <= 1 {
            if !down.is_empty() && rng.chance(0.5) {
                let m = down.remove(rng.range(0, down.len() as i64 - 1) as usize);
                up.push(m.clone());
                EventKind::Join(m)
            } else {
                let m = MemberSpec::new(&format!("S{next}-{seed}"), rng.range(1, 4) as u32);
                next += 1;
                up.push(m.clone());
                EventKind::Join(m)
            }
        } else if roll < 60 {
            let m = up.remove(rng.range(0, up.len() as i64 - 1) as usize);
            EventKind::Leave(m.process_id)
        } else if roll < 85 {
            let m = up.remove(rng.range(0, up.len() as i64 - 1) as usize);
            down.push(m.clone());
            EventKind::Crash(m.process_id)
        } else {
            EventKind::Restart(rng.pick(&up).process_id)
        };
        s.events.push(at(t, kind));
    }
}

/// Two running members of one thread, a stateful task each (2,000,000 changelog records) and
/// `standbys` standby replicas; at 60 s the member that joined first crashes, and its task
/// moves to the other, cold or onto its standby.
#[cfg(test)]
pub(super) fn crash_of_one_of_two(standbys: i32) -> Scenario {
    let initial = members("S", 1..=2, 1);
    Scenario {
        name: "crash-of-one-of-two".into(),
        description: String::new(),
        configs: AssignmentConfigs::default().with_num_standby_replicas(standbys),
        subtopologies: vec![Subtopology::new(0, 2, Some(2_000_000))],
        events: vec![at(MIN, EventKind::Crash(initial[0].process_id))],
        initial_members: initial,
        running: true,
    }
}
