//! `serve`: every Kafka Streams group of a cluster followed at once, as Prometheus metrics and as
//! live web pages, from one long-running process.
//!
//! [`discover`] finds the groups (classic groups whose members send Kafka Streams'
//! subscription, and KIP-1071 streams groups); [`fleet`] follows each with the looks `watch`
//! makes ([`drive::look`](crate::views::watch::drive::look) and a
//! [`Watcher`]), on a small pool of look threads, each look within its own deadline, so that a
//! slow or failing group holds one thread for at most that deadline and never the others. A
//! [`Follow`] (sans-IO) turns each look into the group's [`Health`]; [`metrics`] writes it as
//! Prometheus metric families, [`site`] serves them at `/metrics`, a home page that lists every
//! group at a glance ([`home`]), and each group's `ui` page (its [`LiveState`]) under `/groups/NAME/`, with
//! `ui`'s token and listen rules ([`access_for`](crate::views::ui::access_for)), over TLS when
//! given a certificate and key ([`tls`]). (`serve --probe` adds `probe`'s prober in each streams
//! group the broker's `optimized` assignor assigns: the command line runs it, as a member stands
//! beside the views, not in them.)

pub mod discover;
pub mod fleet;
pub mod home;
pub mod metrics;
pub mod site;
pub mod tls;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::engine::AssignmentConfigs;
use crate::views::describe::size::GroupRecordSize;
use crate::views::ui::LiveState;
use crate::views::watch::drive::Report;
use crate::views::watch::{
    Cause, Event, Generation, Observation, Protocol, Role, WarmupProgress, Watcher,
};

/// One process's tasks by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TaskCounts {
    /// Active tasks.
    pub active: usize,
    /// Standby tasks (classic: warm-ups the replay did not name among them).
    pub standby: usize,
    /// Warm-up tasks.
    pub warmup: usize,
}

/// What a successful look showed of a group.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupLook {
    /// The clock of the look (epoch ms).
    pub at_ms: i64,
    /// The group's state as the coordinator names it.
    pub state: String,
    /// The generation (classic, estimated) or group epoch (streams).
    pub epoch: Option<i32>,
    /// Members.
    pub members: usize,
    /// Per process, its tasks by kind (every process, with none too).
    pub tasks: BTreeMap<String, TaskCounts>,
    /// Tasks of the last settled assignment that no member runs (see [`Follow::look`]).
    pub without_active: BTreeSet<String>,
    /// The warm-ups and how they progress.
    pub warmups: Vec<WarmupProgress>,
    /// Classic: the metadata record's size against the broker's limit.
    pub record_size: Option<GroupRecordSize>,
    /// Every replica: task, process, kind.
    pub replicas: Vec<(String, String, Role)>,
}

/// The cause a rebalance is counted under: the first cause `watch` names for its moves (a member
/// that joined or left first), or none when no task moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebalanceCause {
    /// Tasks moved (or members came or went) for this cause.
    Moved(Cause),
    /// A new generation in which no task moved.
    NoMove,
}

/// A new generation or epoch seen at a look (not the first one seen).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rebalance {
    /// When it was seen (epoch ms).
    pub at_ms: i64,
    /// Its cause.
    pub cause: RebalanceCause,
    /// Task replicas moved, per cause.
    pub moves: BTreeMap<Cause, usize>,
}

/// A group's health after one look.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Health {
    /// The group.
    pub group: String,
    /// Its protocol.
    pub protocol: Protocol,
    /// What the look showed; `None` when it failed.
    pub look: Option<GroupLook>,
    /// Why the look failed.
    pub error: Option<String>,
    /// Time since a look last saw the group `Stable` (zero while it is).
    pub since_stable: Duration,
    /// The rebalance seen at this look, if any.
    pub rebalance: Option<Rebalance>,
    /// The last rebalance seen since the group is followed, with its cause.
    pub last_rebalance: Option<(i64, RebalanceCause)>,
}

/// The cause of generation `g`'s rebalance (see [`RebalanceCause`]).
pub fn rebalance_cause(g: &Generation) -> RebalanceCause {
    if !g.joined.is_empty() {
        return RebalanceCause::Moved(Cause::MemberJoined);
    }
    if !g.left.is_empty() {
        return RebalanceCause::Moved(Cause::MemberLeft);
    }
    g.moves
        .iter()
        .map(|m| m.cause)
        .min()
        .map_or(RebalanceCause::NoMove, RebalanceCause::Moved)
}

/// One group followed, sans-IO: looks (or failures) in, [`Health`] out, and the group's `ui`
/// page state fed as `ui` feeds it.
///
/// ```
/// use kstreams_assignor::engine::AssignmentConfigs;
/// use kstreams_assignor::views::serve::Follow;
/// use kstreams_assignor::views::watch::{Protocol, observe};
///
/// let mut f = Follow::new("app", Protocol::Streams, "127.0.0.1:9092", 2_000, AssignmentConfigs::default());
/// let h = f.look(observe::streams_look(1_000, 3, &[("m1", "p1", &["0_0", "0_1"], &[], &[])]));
/// assert_eq!(h.look.as_ref().unwrap().tasks["p1"].active, 2);
/// let h = f.look(observe::streams_look(2_000, 4, &[]));
/// assert_eq!(h.look.unwrap().without_active.len(), 2, "every member gone: no task has an active copy");
/// ```
#[derive(Debug)]
pub struct Follow {
    group: String,
    protocol: Protocol,
    watcher: Watcher,
    page: Arc<LiveState>,
    /// The tasks of the last settled assignment.
    known_tasks: BTreeSet<String>,
    /// Per process, the tasks by role of the last generation (warm-ups named).
    assignment: Option<(
        Option<i32>,
        BTreeMap<String, crate::views::watch::ProcessTasks>,
    )>,
    without_active: BTreeSet<String>,
    last_stable_ms: Option<i64>,
    first_ms: Option<i64>,
    last_rebalance: Option<(i64, RebalanceCause)>,
    last_look: Option<GroupLook>,
    /// The end of the last successful look, and whether looks fail now.
    last_ok_ms: Option<i64>,
    lost: bool,
}

impl Follow {
    /// `group` of `protocol`, looked at through `bootstrap` every `interval_ms`, with `configs`
    /// (`acceptable.recovery.lag` for the warm-ups).
    pub fn new(
        group: &str,
        protocol: Protocol,
        bootstrap: &str,
        interval_ms: u64,
        configs: AssignmentConfigs,
    ) -> Self {
        let page = Arc::new(LiveState::new(
            group,
            bootstrap,
            interval_ms,
            configs.acceptable_recovery_lag,
        ));
        Self {
            group: group.to_owned(),
            protocol,
            watcher: Watcher::new(configs),
            page,
            known_tasks: BTreeSet::new(),
            assignment: None,
            without_active: BTreeSet::new(),
            last_stable_ms: None,
            first_ms: None,
            last_rebalance: None,
            last_look: None,
            last_ok_ms: None,
            lost: false,
        }
    }

    /// The group's `ui` page state.
    pub fn page(&self) -> &Arc<LiveState> {
        &self.page
    }

    /// The group.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The group's protocol, as discovered or as last seen.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The last successful look.
    pub fn last_look(&self) -> Option<&GroupLook> {
        self.last_look.as_ref()
    }

    fn since_stable(&self, now_ms: i64) -> Duration {
        let stable_now = self.last_look.as_ref().is_some_and(|l| l.state == "Stable");
        let since = self.last_stable_ms.or(self.first_ms).unwrap_or(now_ms);
        if stable_now {
            Duration::ZERO
        } else {
            Duration::from_millis(u64::try_from(now_ms - since).unwrap_or(0))
        }
    }

    /// Takes one look. Tasks without an active copy: of a settled look, those of the group
    /// (every task of the last settled assignment and of this one) no member runs; of a look
    /// without members, every task of the last settled assignment; while a group with members
    /// rebalances, as at the last settled look (a classic coordinator shows no assignment then).
    pub fn look(&mut self, o: Observation) -> Health {
        let at_ms = o.at_ms;
        self.first_ms.get_or_insert(at_ms);
        self.protocol = o.protocol;
        if o.state == "Stable" {
            self.last_stable_ms = Some(at_ms);
        }
        let roles_now = o.assignment();
        let processes: BTreeSet<String> = o.processes().keys().map(|p| (*p).to_owned()).collect();
        let (settled, empty) = (o.settled, o.members.is_empty());
        let (state, epoch_seen, members, record_size) = (
            o.state.clone(),
            o.epoch,
            o.members.len(),
            o.record_size.clone(),
        );
        let all_now = o.all_tasks();
        let event = self.watcher.observe(o);
        let mut rebalance = None;
        let mut warmups = match &event {
            Event::Generation(g) => {
                self.assignment = Some((g.epoch, g.assignment.clone()));
                if !g.tasks.is_empty() {
                    self.known_tasks = g.tasks.clone();
                }
                if !g.first {
                    let mut moves = BTreeMap::new();
                    for m in &g.moves {
                        *moves.entry(m.cause).or_insert(0) += 1;
                    }
                    let cause = rebalance_cause(g);
                    self.last_rebalance = Some((g.at_ms, cause));
                    rebalance = Some(Rebalance {
                        at_ms: g.at_ms,
                        cause,
                        moves,
                    });
                }
                g.warmups.clone()
            }
            Event::Waiting(w) => w.warmups.clone(),
        };
        // A rebalancing look tells the last generation's warm-ups: those of processes still here.
        warmups.retain(|w| processes.contains(&w.process_id));
        // The assignment of the last generation when this look is of it (warm-ups named), else
        // what the coordinator shows now.
        let assignment = match &self.assignment {
            Some((epoch, a)) if settled && *epoch == epoch_seen => a.clone(),
            _ => roles_now,
        };
        let running: BTreeSet<&String> =
            assignment.values().flat_map(|t| t.active.iter()).collect();
        if settled {
            self.without_active = self
                .known_tasks
                .iter()
                .chain(&all_now)
                .filter(|t| !running.contains(t))
                .cloned()
                .collect();
        } else if empty {
            self.without_active = self.known_tasks.clone();
        }
        let mut tasks: BTreeMap<String, TaskCounts> = processes
            .into_iter()
            .map(|p| (p, TaskCounts::default()))
            .collect();
        let mut replicas = Vec::new();
        for (process, t) in &assignment {
            let c = tasks.entry(process.clone()).or_default();
            (c.active, c.standby, c.warmup) = (t.active.len(), t.standby.len(), t.warmup.len());
            for (set, role) in [
                (&t.active, Role::Active),
                (&t.standby, Role::Standby),
                (&t.warmup, Role::Warmup),
            ] {
                replicas.extend(set.iter().map(|task| (task.clone(), process.clone(), role)));
            }
        }
        self.last_look = Some(GroupLook {
            at_ms,
            state,
            epoch: self
                .assignment
                .as_ref()
                .and_then(|(e, _)| *e)
                .or(epoch_seen),
            members,
            tasks,
            without_active: self.without_active.clone(),
            warmups,
            record_size,
            replicas,
        });
        if std::mem::take(&mut self.lost) {
            let since = self.last_ok_ms.unwrap_or(at_ms);
            let after = Duration::from_millis(u64::try_from(at_ms - since).unwrap_or(0));
            self.page
                .apply(&Report::Back(after), self.watcher.summary());
        }
        self.last_ok_ms = Some(at_ms);
        self.page
            .apply(&Report::Event(event), self.watcher.summary());
        Health {
            group: self.group.clone(),
            protocol: self.protocol,
            look: self.last_look.clone(),
            error: None,
            since_stable: self.since_stable(at_ms),
            rebalance,
            last_rebalance: self.last_rebalance,
        }
    }

    /// A look that failed at `at_ms` with `error` (`unreachable`: the brokers could not be
    /// reached). The page shows the outage from the end of the last successful look.
    pub fn failed(&mut self, error: &str, unreachable: bool, at_ms: i64) -> Health {
        self.first_ms.get_or_insert(at_ms);
        if !self.lost {
            self.lost = true;
            let since_ms = self.last_ok_ms.unwrap_or(at_ms);
            self.page.apply(
                &Report::Lost {
                    error: error.to_owned(),
                    unreachable,
                    since_ms,
                },
                self.watcher.summary(),
            );
        }
        Health {
            group: self.group.clone(),
            protocol: self.protocol,
            look: None,
            error: Some(error.to_owned()),
            since_stable: self.since_stable(at_ms),
            rebalance: None,
            last_rebalance: self.last_rebalance,
        }
    }
}

#[cfg(test)]
mod tests;
