//! Seeded random streams groups for the differential against Kafka's Java coordinator, the
//! recorded cases and the benchmark (feature `testdata`).
//!
//! A group has 1 to about 100 members in processes of one to four, optional racks and a zone
//! tag, 0 to 2 standby replicas, warm-up settings, and stateless and stateful subtopologies. Its
//! current tasks come either from a prior round (the sticky assignor run on an earlier
//! membership and topology, so members left, joined and changed process) or at random (tasks
//! claimed by several members, or outside the topology), and its members report offset sums,
//! many of them tied.

use serde::{Deserialize, Serialize};

use super::input::{StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology, StreamsTopology};
use super::sticky::assign_sticky;
use crate::rng::Rng;

/// One generated group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamsCase {
    /// `<seed>-<index>`.
    pub id: String,
    /// The group.
    pub spec: StreamsGroupSpec,
    /// The topology.
    pub topology: StreamsTopology,
}

/// How large the generated groups get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseSize {
    /// Up to about 100 members and 6 subtopologies of up to 48 partitions.
    Full,
    /// Up to 10 members and 3 subtopologies of up to 6 partitions (for recorded cases).
    Small,
}

const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A member id as clients make them (`Uuid.toString()`: 22 base64url characters), or now and
/// then a short one.
fn member_id(rng: &mut Rng, n: usize) -> String {
    if rng.chance(0.2) {
        return format!("m{n}");
    }
    (0..22).map(|_| char::from(*rng.pick(BASE64))).collect()
}

fn process_id(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff, 0x8000 | (b >> 48) & 0x3fff, b & 0xffff_ffff_ffff)
}

fn topology(rng: &mut Rng, size: CaseSize) -> StreamsTopology {
    let (max_subs, max_partitions) = match size {
        CaseSize::Full => (6, if rng.chance(0.3) { 48 } else { 12 }),
        CaseSize::Small => (3, 6),
    };
    let count = rng.range(1, max_subs) as usize;
    let named = rng.chance(0.2);
    let subs = (0..count).map(|i| {
        let id = if named { format!("sub-{}", char::from(b'a' + (count - 1 - i) as u8)) } else { i.to_string() };
        StreamsSubtopology::new(id, rng.range(1, max_partitions) as u32, rng.chance(0.6))
    });
    StreamsTopology::new(subs.collect::<Vec<_>>())
}

/// Members in processes of one to four: `(member id, process id)`.
fn membership(rng: &mut Rng, size: CaseSize, next: &mut usize) -> Vec<(String, String)> {
    let members = match size {
        CaseSize::Full if rng.chance(0.2) => rng.range(41, 100),
        CaseSize::Full if rng.chance(0.5) => rng.range(9, 40),
        CaseSize::Full => rng.range(1, 8),
        CaseSize::Small => rng.range(1, 10),
    } as usize;
    let mut out = Vec::with_capacity(members);
    while out.len() < members {
        let process = process_id(rng);
        for _ in 0..rng.range(1, 4).min((members - out.len()) as i64) {
            out.push((member_id(rng, *next), process.clone()));
            *next += 1;
        }
    }
    out
}

fn configs(rng: &mut Rng) -> StreamsAssignmentConfigs {
    let configs = StreamsAssignmentConfigs::default()
        .with_num_standby_replicas(rng.range(0, 2) as u32)
        .with_num_warmup_replicas(*rng.pick(&[0, 0, 1, 2, 3]))
        .with_acceptable_recovery_lag(*rng.pick(&[0, 100, 10_000]));
    if rng.chance(0.2) { configs.with_rack_aware_assignment_tags(["zone"]) } else { configs }
}

/// Offset sums with ties: a few values most of the time.
fn offset(rng: &mut Rng) -> i64 {
    if rng.chance(0.6) { *rng.pick(&[0, 100, 500, 1000]) } else { rng.range(0, 5000) }
}

/// The group `index` of `seed`.
pub fn random_case(seed: u64, index: u64, size: CaseSize) -> StreamsCase {
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index);
    let mut next = 0;
    let topology = topology(&mut rng, size);
    let configs = configs(&mut rng);
    let racks = rng.chance(0.5);
    let mut members: Vec<StreamsMemberSpec> = Vec::new();
    let people = if rng.chance(0.01) { Vec::new() } else { membership(&mut rng, size, &mut next) };
    for (id, process) in people {
        let mut member = StreamsMemberSpec::new(id, process);
        if racks {
            member = member.with_rack_id(*rng.pick(&["r1", "r2", "r3"])).with_client_tag("zone", *rng.pick(&["z1", "z2"]));
        }
        if rng.chance(0.1) {
            member = member.with_instance_id(format!("instance-{next}"));
        }
        members.push(member);
    }
    if rng.chance(0.6) {
        from_prior_round(&mut rng, &mut members, &topology, &configs, size, &mut next);
    } else {
        at_random(&mut rng, &mut members, &topology);
    }
    for member in &mut members {
        report_offsets(&mut rng, member, &topology);
    }
    StreamsCase { id: format!("{seed}-{index}"), spec: StreamsGroupSpec::new(members).with_configs(configs), topology }
}

/// Current tasks from the sticky assignor on an earlier membership (some members gone, some new)
/// and perhaps an earlier topology (a subtopology more or partitions fewer).
fn from_prior_round(
    rng: &mut Rng, members: &mut [StreamsMemberSpec], topology: &StreamsTopology, configs: &StreamsAssignmentConfigs, size: CaseSize,
    next: &mut usize,
) {
    let mut earlier = topology.clone();
    if rng.chance(0.3) {
        for sub in &mut earlier.subtopologies {
            sub.partitions = (sub.partitions + rng.range(0, 3) as u32).saturating_sub(rng.range(0, 3) as u32).max(1);
        }
    }
    let mut prior: Vec<StreamsMemberSpec> = members.iter().filter(|_| rng.chance(0.8)).cloned().collect();
    for (id, process) in membership(rng, size, next).into_iter().take(rng.range(0, 5) as usize) {
        prior.push(StreamsMemberSpec::new(id, process));
    }
    let spec = StreamsGroupSpec::new(prior).with_configs(configs.clone());
    let Ok(target) = assign_sticky(&spec, &earlier) else { return };
    for member in members.iter_mut() {
        let Some(tasks) = target.members.get(&member.member_id) else { continue };
        for (sub, partitions) in &tasks.active_tasks {
            for &p in partitions {
                member.active_tasks.entry(sub.clone()).or_default().insert(p, rng.range(1, 5) as i32);
            }
        }
        member.standby_tasks = tasks.standby_tasks.clone();
        if rng.chance(0.1) {
            // A member that moved to another process since.
            member.process_id = process_id(rng);
        }
    }
}

/// Current tasks at random: some claimed by two members, some outside the topology.
fn at_random(rng: &mut Rng, members: &mut [StreamsMemberSpec], topology: &StreamsTopology) {
    if members.is_empty() {
        return;
    }
    for sub in &topology.subtopologies {
        for p in 0..sub.partitions as i32 + 2 {
            if rng.chance(0.7) {
                let m = rng.range(0, members.len() as i64 - 1) as usize;
                members[m].active_tasks.entry(sub.id.clone()).or_default().insert(p, rng.range(1, 5) as i32);
            }
            if sub.stateful {
                for _ in 0..rng.range(0, 2) {
                    let m = rng.range(0, members.len() as i64 - 1) as usize;
                    members[m].standby_tasks.entry(sub.id.clone()).or_default().insert(p);
                }
            }
            if rng.chance(0.05) {
                let m = rng.range(0, members.len() as i64 - 1) as usize;
                members[m].warmup_tasks.entry(sub.id.clone()).or_default().insert(p);
            }
        }
    }
}

/// Offset sums for the member's current stateful tasks and a few others, and end offsets.
fn report_offsets(rng: &mut Rng, member: &mut StreamsMemberSpec, topology: &StreamsTopology) {
    for sub in topology.subtopologies.iter().filter(|s| s.stateful) {
        for p in 0..sub.partitions as i32 {
            let owned = member.active_tasks.get(&sub.id).is_some_and(|t| t.contains_key(&p))
                || member.standby_tasks.get(&sub.id).is_some_and(|t| t.contains(&p));
            if (owned && rng.chance(0.8)) || rng.chance(0.1) {
                let value = offset(rng);
                member.task_offsets.entry(sub.id.clone()).or_default().insert(p, value);
                member.task_end_offsets.entry(sub.id.clone()).or_default().insert(p, value + rng.range(0, 200));
            }
        }
    }
    if rng.chance(0.05) {
        member.task_offsets.entry("gone".into()).or_default().insert(0, 10);
    }
}

/// A group of `members` members in processes of `members_per_process` over `tasks` tasks in
/// subtopologies of 100 partitions, all stateful, each member reporting its current tasks: the
/// benchmark's shape. The previous assignment is the sticky assignor's on the same group before
/// a tenth of the members joined.
pub fn large_case(members: usize, members_per_process: usize, tasks: usize, standbys: u32) -> StreamsCase {
    let mut rng = Rng::new(7);
    let subs = tasks.div_ceil(100);
    let topology = StreamsTopology::new((0..subs).map(|s| StreamsSubtopology::new(s.to_string(), 100, true)).collect::<Vec<_>>());
    let per = members_per_process.max(1);
    let mut all: Vec<StreamsMemberSpec> = Vec::with_capacity(members);
    let mut process = process_id(&mut rng);
    for m in 0..members {
        if m % per == 0 {
            process = process_id(&mut rng);
        }
        all.push(StreamsMemberSpec::new(member_id(&mut rng, m), process.clone()));
    }
    let configs = StreamsAssignmentConfigs::default().with_num_standby_replicas(standbys);
    let before = StreamsGroupSpec::new(all[..members - members / 10].to_vec()).with_configs(configs.clone());
    if let Ok(target) = assign_sticky(&before, &topology) {
        for member in &mut all {
            let Some(tasks) = target.members.get(&member.member_id) else { continue };
            for (sub, partitions) in &tasks.active_tasks {
                for &p in partitions {
                    member.active_tasks.entry(sub.clone()).or_default().insert(p, 1);
                    member.task_offsets.entry(sub.clone()).or_default().insert(p, 1000);
                }
            }
            for (sub, partitions) in &tasks.standby_tasks {
                for &p in partitions {
                    member.task_offsets.entry(sub.clone()).or_default().insert(p, offset(&mut rng));
                }
            }
            member.standby_tasks = tasks.standby_tasks.clone();
        }
    }
    StreamsCase { id: format!("large-{members}x{tasks}"), spec: StreamsGroupSpec::new(all).with_configs(configs), topology }
}
