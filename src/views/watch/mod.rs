//! `watch`: a group of either rebalance protocol followed look by look, each new generation
//! (classic) or group epoch (streams) explained.
//!
//! The core is sans-IO: a [`Watcher`] takes [`Observation`]s (what one describe showed, with
//! the clock of the look) and returns [`Event`]s; the driver ([`drive`]) makes the looks and
//! reconnects. One file per concern: [`observe`] turns a described group into an observation,
//! [`diff`] finds who joined and left and every task that moved between two generations,
//! [`cause`] names each move's cause, [`replay`] runs the task assignor again on a classic
//! generation's subscriptions, [`warmup`] follows the warm-ups, [`render`] writes lines and
//! JSON records.
//!
//! # What each protocol lets one see
//!
//! A **classic** group's coordinator holds each member's subscription and assignment of the
//! current generation, and nothing else: no generation id (it is estimated from the subscriptions'
//! `generationId`, the generation each member last owned partitions in, plus one), and no mark of
//! a warm-up among the standby tasks. The replay tells them apart: the assignor run on the
//! generation's inputs names its warm-ups, and when its result is the assignment observed those
//! names are taken. Offset sums are in the subscriptions, so a classic warm-up's lag and restore
//! rate are seen once per generation, at each join.
//!
//! A **streams** group's coordinator (KIP-1071) computes the assignment itself and shows it:
//! target and current assignment with active, standby and warm-up tasks apart, and the offsets
//! and end offsets each member last heartbeated. A warm-up's lag and rate are seen at every look.
//! The broker's assignor is not this crate's, so there is no replay.

pub mod cause;
pub mod diff;
pub mod drive;
pub mod observe;
pub mod render;
pub mod replay;
pub mod warmup;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use cause::Cause;
pub use diff::{Move, Replica};
pub use replay::ReplayCheck;
pub use warmup::WarmupProgress;

use crate::engine::AssignmentInput;
use crate::views::describe::size::GroupRecordSize;

/// The rebalance protocol of the group watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Protocol {
    /// `DescribeGroups`: generations, the leader assigns.
    Classic,
    /// `StreamsGroupDescribe`: group epochs, the broker assigns.
    Streams,
}

/// What a replica of a task is on one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// It processes the task.
    Active,
    /// A standby replica (`num.standby.replicas`).
    Standby,
    /// A warm-up replica: a copy restoring before the task moves to it.
    Warmup,
}

impl Role {
    /// The word used in lines.
    pub fn name(self) -> &'static str {
        match self {
            Role::Active => "active",
            Role::Standby => "standby",
            Role::Warmup => "warm-up",
        }
    }
}

/// One member at one look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberLook {
    /// The member id.
    pub member_id: String,
    /// Its process (the Kafka Streams instance; a classic process has a member per thread).
    pub process_id: String,
    /// Tasks it runs (streams: the target assignment).
    pub active: BTreeSet<String>,
    /// Its standby tasks (classic: warm-ups included until the replay names them).
    pub standby: BTreeSet<String>,
    /// Its warm-up tasks.
    pub warmup: BTreeSet<String>,
    /// The changelog offset sum it last reported per task (classic: at its join; streams: at its
    /// last heartbeat that carried them); -2 for a task it runs.
    pub offset_sums: BTreeMap<String, i64>,
    /// Streams: the end-offset sums it reported with them.
    pub end_offset_sums: BTreeMap<String, i64>,
    /// Classic: when its assignment asks it to rejoin for a probing rebalance (epoch ms).
    pub next_rebalance_ms: Option<i64>,
}

/// What one look at the group showed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Observation {
    /// The clock of the look (epoch ms).
    pub at_ms: i64,
    /// The protocol.
    pub protocol: Protocol,
    /// The group's state as the coordinator names it.
    pub state: String,
    /// Whether the look holds a complete assignment: a classic group `Stable` with every
    /// member's assignment, a streams group whose target assignment is of its group epoch.
    pub settled: bool,
    /// Classic: the estimated generation id; streams: the group epoch.
    pub epoch: Option<i32>,
    /// Streams: the topology epoch; classic: `None`.
    pub topology_epoch: Option<i32>,
    /// The topics subscribed (classic) or the topology's source topics (streams).
    pub topics: BTreeSet<String>,
    /// Every task of the group, when known (from a topology or the broker's).
    pub tasks: Option<BTreeSet<String>>,
    /// The changelog end-offset sum per stateful task, when known (classic: fetched at this look
    /// for a topology; streams: the largest any member reported).
    pub end_offset_sums: BTreeMap<String, i64>,
    /// Whether every stateful task's end-offset sum is known (classic: a topology was given and
    /// the end offsets fetched).
    pub end_offsets_known: bool,
    /// The members, sorted by member id.
    pub members: Vec<MemberLook>,
    /// What tells this assignment from the last one with the same epoch (the raw bytes'
    /// digest, classic; streams: the epoch alone).
    pub fingerprint: u64,
    /// Classic: the metadata record's size.
    pub record_size: Option<GroupRecordSize>,
    /// Classic: the assignor's input rebuilt from the subscriptions ([`replay`]).
    pub replay_input: Option<AssignmentInput>,
}

impl Observation {
    /// Per process, each task's role (the strongest one when its members differ).
    pub fn roles(&self) -> BTreeMap<&str, BTreeMap<&str, Role>> {
        let mut out: BTreeMap<&str, BTreeMap<&str, Role>> = BTreeMap::new();
        for m in &self.members {
            let roles = out.entry(m.process_id.as_str()).or_default();
            for (set, role) in [(&m.warmup, Role::Warmup), (&m.standby, Role::Standby), (&m.active, Role::Active)] {
                for t in set {
                    let r = roles.entry(t.as_str()).or_insert(role);
                    *r = (*r).min(role);
                }
            }
        }
        out
    }

    /// Every process with its member ids.
    pub fn processes(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for m in &self.members {
            out.entry(m.process_id.as_str()).or_default().push(m.member_id.as_str());
        }
        out
    }

    /// Every task seen assigned, or the group's tasks when known.
    pub fn all_tasks(&self) -> BTreeSet<String> {
        match &self.tasks {
            Some(t) => t.clone(),
            None => self.members.iter().flat_map(|m| m.active.iter().chain(&m.standby).chain(&m.warmup)).cloned().collect(),
        }
    }

    /// The earliest probing rebalance a member's assignment asks for.
    pub fn probing_rebalance_at_ms(&self) -> Option<i64> {
        self.members.iter().filter_map(|m| m.next_rebalance_ms).min()
    }
}

/// A member that joined or left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MemberChange {
    /// The member id.
    pub member_id: String,
    /// Its process.
    pub process_id: String,
}

/// A new generation or group epoch, explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Generation {
    /// The protocol.
    pub protocol: Protocol,
    /// The generation (classic, estimated) or group epoch (streams).
    pub epoch: Option<i32>,
    /// When it was first seen (epoch ms).
    pub at_ms: i64,
    /// Whether it is the first generation seen (nothing to compare with: no moves).
    pub first: bool,
    /// Members in it.
    pub members: usize,
    /// Processes in it.
    pub processes: usize,
    /// Members that joined since the previous generation seen.
    pub joined: Vec<MemberChange>,
    /// Members that left.
    pub left: Vec<MemberChange>,
    /// Every task replica that moved, with its cause.
    pub moves: Vec<Move>,
    /// The warm-ups of this generation and how they progress.
    pub warmups: Vec<WarmupProgress>,
    /// Classic: the assignor run again on the generation's inputs, against what was observed.
    pub replay: Option<ReplayCheck>,
    /// Classic: the metadata record's size.
    pub record_size: Option<GroupRecordSize>,
    /// When the assignment asks for a probing rebalance (classic, epoch ms).
    pub probing_rebalance_at_ms: Option<i64>,
    /// Per process, its tasks by role (warm-ups named as far as the protocol or the replay
    /// tells them).
    pub assignment: BTreeMap<String, ProcessTasks>,
    /// Member by member, its tasks by role (warm-ups named as in `assignment`), in member order;
    /// not in the `--json` record.
    #[serde(skip)]
    pub member_tasks: Vec<MemberTasks>,
    /// The group's state as the coordinator named it at the look; not in the `--json` record.
    #[serde(skip)]
    pub state: String,
    /// Every task of the group ([`Observation::all_tasks`]); not in the `--json` record.
    #[serde(skip)]
    pub tasks: BTreeSet<String>,
    /// Classic: the input the replay ran on, which `assign --input` takes.
    #[serde(skip)]
    pub input: Option<AssignmentInput>,
}

/// One member's tasks in a generation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberTasks {
    /// The member id.
    pub member_id: String,
    /// Its process.
    pub process_id: String,
    /// Its tasks by role.
    pub tasks: ProcessTasks,
}

/// One process's tasks in a generation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProcessTasks {
    /// Active tasks.
    pub active: BTreeSet<String>,
    /// Standby tasks.
    pub standby: BTreeSet<String>,
    /// Warm-up tasks.
    pub warmup: BTreeSet<String>,
}

impl Observation {
    /// Per process, its tasks by role.
    pub fn assignment(&self) -> BTreeMap<String, ProcessTasks> {
        let mut out: BTreeMap<String, ProcessTasks> = BTreeMap::new();
        for (process, tasks) in self.roles() {
            let entry = out.entry(process.to_owned()).or_default();
            for (task, role) in tasks {
                let set = match role {
                    Role::Active => &mut entry.active,
                    Role::Standby => &mut entry.standby,
                    Role::Warmup => &mut entry.warmup,
                };
                set.insert(task.to_owned());
            }
        }
        out
    }
}

/// A look that found no new generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Waiting {
    /// The clock of the look (epoch ms).
    pub at_ms: i64,
    /// The group's state.
    pub state: String,
    /// Whether the group is in the middle of a rebalance.
    pub rebalancing: bool,
    /// The last generation or epoch seen.
    pub epoch: Option<i32>,
    /// Members now.
    pub members: usize,
    /// Warm-ups of the last generation and how they progress (streams: as of this look).
    pub warmups: Vec<WarmupProgress>,
    /// When the next probing rebalance is due (classic, epoch ms).
    pub probing_rebalance_at_ms: Option<i64>,
    /// Classic: the metadata record's size at this look (while the group rebalances, of the
    /// subscriptions the coordinator holds: a group whose record is too large rebalances without
    /// end, and this is where it shows).
    pub record_size: Option<GroupRecordSize>,
}

/// What a look tells.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A new generation or group epoch.
    Generation(Box<Generation>),
    /// Nothing new.
    Waiting(Waiting),
}

/// What a watch saw from start to end.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Summary {
    /// Looks made.
    pub looks: usize,
    /// Generations or epochs seen.
    pub generations: usize,
    /// Moves per cause.
    pub moves_by_cause: BTreeMap<Cause, usize>,
    /// Classic: generations whose replay gave the assignment observed, of those replayed.
    pub replays_agreeing: usize,
    /// Classic: generations replayed.
    pub replays: usize,
}

/// Follows one group: [`Observation`]s in, [`Event`]s out.
///
/// ```
/// use kstreams_assignor::views::watch::{Event, Watcher};
/// use kstreams_assignor::engine::AssignmentConfigs;
///
/// let mut watcher = Watcher::new(AssignmentConfigs::default());
/// assert_eq!(watcher.summary().generations, 0);
/// ```
#[derive(Debug, Clone)]
pub struct Watcher {
    configs: crate::engine::AssignmentConfigs,
    assignor: crate::engine::AssignorKind,
    /// The last settled look of the last generation seen.
    generation: Option<Observation>,
    /// The last look of any kind (for restore rates between looks).
    last: Option<Observation>,
    summary: Summary,
}

impl Watcher {
    /// A watcher that names causes and catch-ups with `configs` (`acceptable.recovery.lag`,
    /// `num.standby.replicas` for the replay …).
    pub fn new(configs: crate::engine::AssignmentConfigs) -> Self {
        Self { configs, assignor: crate::engine::AssignorKind::default(), generation: None, last: None, summary: Summary::default() }
    }

    /// Replays classic generations with `assignor` (default: Kafka's `HighAvailabilityTaskAssignor`).
    pub fn with_assignor(mut self, assignor: crate::engine::AssignorKind) -> Self {
        self.assignor = assignor;
        self
    }

    /// What the watch has seen so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Takes one look and tells what is new.
    pub fn observe(&mut self, mut look: Observation) -> Event {
        self.summary.looks += 1;
        let is_new = look.settled
            && match &self.generation {
                None => true,
                Some(g) => g.epoch != look.epoch || g.fingerprint != look.fingerprint || g.protocol != look.protocol,
            };
        if !is_new {
            let warmups = match &self.generation {
                Some(_) if look.protocol == Protocol::Streams && look.settled => warmup::progress(&look, self.last.as_ref(), &self.configs),
                Some(g) => warmup::progress(g, None, &self.configs),
                None => Vec::new(),
            };
            let event = Waiting {
                at_ms: look.at_ms,
                state: look.state.clone(),
                rebalancing: !look.settled,
                epoch: self.generation.as_ref().and_then(|g| g.epoch),
                members: look.members.len(),
                warmups,
                probing_rebalance_at_ms: self.generation.as_ref().and_then(Observation::probing_rebalance_at_ms),
                record_size: look.record_size.clone(),
            };
            if look.settled {
                self.last = Some(look);
            }
            return Event::Waiting(event);
        }
        let estimated = !look.end_offsets_known;
        let replay = replay::check(&mut look, self.assignor, estimated);
        if let Some(r) = &replay {
            self.summary.replays += 1;
            self.summary.replays_agreeing += usize::from(r.agrees());
        }
        let previous = self.generation.take();
        let (joined, left) = previous.as_ref().map(|p| diff::membership(p, &look)).unwrap_or_default();
        let mut moves = previous.as_ref().map(|p| diff::moves(p, &look)).unwrap_or_default();
        if let Some(p) = &previous {
            for m in &mut moves {
                m.cause = cause::name(m, p, &look);
                *self.summary.moves_by_cause.entry(m.cause).or_default() += 1;
            }
        }
        // Classic offset sums are those of each join: the rate is over the generations' first
        // looks. Streams members report theirs as they go: over the last look.
        let rate_base = match look.protocol {
            Protocol::Classic => previous.as_ref(),
            Protocol::Streams => self.last.as_ref(),
        }
        .filter(|l| l.protocol == look.protocol);
        let generation = Generation {
            protocol: look.protocol,
            epoch: look.epoch,
            at_ms: look.at_ms,
            first: previous.is_none(),
            members: look.members.len(),
            processes: look.processes().len(),
            joined,
            left,
            moves,
            warmups: warmup::progress(&look, rate_base, &self.configs),
            replay,
            record_size: look.record_size.clone(),
            probing_rebalance_at_ms: look.probing_rebalance_at_ms(),
            assignment: look.assignment(),
            member_tasks: look
                .members
                .iter()
                .map(|m| MemberTasks {
                    member_id: m.member_id.clone(),
                    process_id: m.process_id.clone(),
                    tasks: ProcessTasks { active: m.active.clone(), standby: m.standby.clone(), warmup: m.warmup.clone() },
                })
                .collect(),
            state: look.state.clone(),
            tasks: look.all_tasks(),
            input: look.replay_input.clone(),
        };
        self.summary.generations += 1;
        self.generation = Some(look.clone());
        self.last = Some(look);
        Event::Generation(Box::new(generation))
    }
}

#[cfg(test)]
mod tests;
