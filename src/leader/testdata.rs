//! A large group for the leader's benchmark and its Java counterpart (feature `testdata`): the
//! word count of `fixtures/leader/word-count.describe.txt` in steady state, a tenth of the
//! processes new.

use super::input::{ChangelogEndOffsets, JoinMember, LeaderConfig};
use super::tasks::{ClusterMetadata, Tasks};
use super::topology::Topology;
use crate::engine::{AssignmentConfigs, AssignorKind};
use crate::wire::{LATEST_OFFSET, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TaskId, TopicPartition};

const WORD_COUNT: &str = include_str!("../../fixtures/leader/word-count.describe.txt");

/// Every changelog partition's end offset in [`large_group`].
pub const END_OFFSET: i64 = 100_000;

/// One generated group and everything the leader needs besides.
#[derive(Debug, Clone)]
pub struct LargeGroup {
    /// The JoinGroup members (subscription version 11).
    pub members: Vec<JoinMember>,
    /// The word count, application id `wc`.
    pub topology: Topology,
    /// `text-lines` with the partitions asked for.
    pub metadata: ClusterMetadata,
    /// Every changelog partition at [`END_OFFSET`].
    pub end_offsets: ChangelogEndOffsets,
    /// `HighAvailabilityTaskAssignor` with the standbys asked for.
    pub config: LeaderConfig,
    /// The leader's process: the first.
    pub leader: ProcessId,
}

/// The process id of process `n` of [`large_group`].
pub fn process_id(n: usize) -> ProcessId {
    ProcessId(uuid::Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 | (n as u128 * 7919)))
}

/// `processes` processes of `threads` threads over `partitions` partitions of `text-lines` (so
/// twice as many tasks, half of them stateful) with `standbys` standby replicas. The first nine
/// tenths of the processes ran before: each task's active on process `(7·p + s) mod old` on
/// thread `p mod threads`, which owns its partition and reports the stateful ones running
/// (`-2`); the next process holds each stateful task's standbys, `50·(p mod 20)` behind the end.
/// The rest are new and report nothing.
pub fn large_group(processes: usize, threads: usize, partitions: i32, standbys: i32) -> LargeGroup {
    let topology = Topology::from_describe(WORD_COUNT, "wc").expect("the word-count fixture parses");
    let metadata = ClusterMetadata::new().with_topic("text-lines", partitions);
    let tasks = Tasks::build(&topology, &metadata).expect("the word count builds its tasks");
    let end_offsets =
        ChangelogEndOffsets::Available(tasks.changelog_partitions_for_task.values().flatten().map(|p| (p.clone(), END_OFFSET)).collect());
    let old = (processes - processes / 10).max(1);
    let threads = threads.max(1);
    let mut owned: Vec<Vec<Vec<TopicPartition>>> = vec![vec![Vec::new(); threads]; processes];
    let mut sums: Vec<Vec<(TaskId, i64)>> = vec![Vec::new(); processes];
    for p in 0..partitions {
        for s in 0..2 {
            let owner = (7 * p as usize + s) % old;
            let topic = if s == 0 { "text-lines" } else { "wc-words-repartition" };
            owned[owner][p as usize % threads].push(TopicPartition::new(topic, p));
            if s == 1 {
                let task = TaskId::new(1, p);
                sums[owner].push((task.clone(), LATEST_OFFSET));
                for r in 1..=standbys.max(0) as usize {
                    sums[(owner + r) % old].push((task.clone(), END_OFFSET - 50 * i64::from(p % 20)));
                }
            }
        }
    }
    let topics = vec!["text-lines".to_owned(), "wc-words-repartition".to_owned()];
    let mut members = Vec::with_capacity(processes * threads);
    for n in 0..processes {
        for (t, owned) in owned[n].iter().enumerate() {
            let mut info = SubscriptionInfo::new(11, process_id(n)).with_user_end_point(&format!("host-{n}:8080"));
            if t == 0 {
                info = info.with_task_offset_sums(sums[n].clone());
            }
            let user_data = info.encode().expect("a v11 subscription encodes");
            let envelope = SubscriptionEnvelope::new(topics.clone(), Some(user_data)).with_owned_partitions(owned);
            members.push(JoinMember::new(format!("member-{n}-{t}"), envelope.encode().expect("the envelope encodes")));
        }
    }
    let config = LeaderConfig {
        assignment: AssignmentConfigs::default().with_num_standby_replicas(standbys),
        assignor: AssignorKind::HighAvailability,
    };
    LargeGroup { members, topology, metadata, end_offsets, config, leader: process_id(0) }
}
