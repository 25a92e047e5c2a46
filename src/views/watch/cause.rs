//! Why a task moved: the cause of each [`Move`] between two generations.
//!
//! The causes are tried in this order, the first that holds wins:
//!
//! 1. **topology change**: the streams topology epoch or the subscribed topics changed, or the
//!    task is new or gone;
//! 2. **member left**: the copy was on a process that is no longer in the group;
//! 3. **warm-up caught up and promoted**: the task became active on a process that held it as
//!    a warm-up, or as a standby at a probing rebalance (a classic assignment does not mark
//!    warm-ups: the replay names them when it agrees with what was observed, see
//!    [`replay`](crate::views::watch::replay));
//! 4. **member joined**: the copy went to a process new in the group, or a process joined and
//!    the assignor spread the tasks again;
//! 5. **member left**, likewise, for moves between the processes that stayed;
//! 6. **probing rebalance**: no process came or went and the previous assignment asked for a
//!    probing rebalance that is now due (classic; the streams protocol has none);
//! 7. **load balance**: anything else (the assignor moved it to even the load).
//!
//! A standby or warm-up copy that moved because the task's active replica moved shares that
//! move's cause: a warm-up promoted leaves its copy to the process the task came from.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::views::watch::{Move, Observation, Replica, Role};

/// How late a look may see a probing rebalance after its deadline and still name it, against
/// clocks that differ between hosts.
const PROBING_SLACK_MS: i64 = 5_000;

/// Why a task moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Cause {
    /// A process joined the group.
    MemberJoined,
    /// A process left the group.
    MemberLeft,
    /// A warm-up caught up and the task moved to it.
    WarmupPromoted,
    /// A probing rebalance moved it.
    ProbingRebalance,
    /// The assignor evened the load.
    LoadBalance,
    /// The topology (or the topics) changed.
    TopologyChange,
}

impl Cause {
    /// The cause in words.
    pub fn text(self) -> &'static str {
        match self {
            Cause::MemberJoined => "member joined",
            Cause::MemberLeft => "member left",
            Cause::WarmupPromoted => "warm-up caught up and promoted",
            Cause::ProbingRebalance => "probing rebalance",
            Cause::LoadBalance => "load balance",
            Cause::TopologyChange => "topology change",
        }
    }
}

fn processes(o: &Observation) -> BTreeSet<&str> {
    o.members.iter().map(|m| m.process_id.as_str()).collect()
}

/// Whether `prev` asked for a probing rebalance that is due at `cur`.
pub fn probing_due(prev: &Observation, cur: &Observation) -> bool {
    prev.probing_rebalance_at_ms().is_some_and(|t| t <= cur.at_ms.saturating_add(PROBING_SLACK_MS))
}

/// The process running `task` in `o`.
fn active_on<'a>(o: &'a Observation, task: &str) -> Option<&'a str> {
    o.members.iter().find(|m| m.active.contains(task)).map(|m| m.process_id.as_str())
}

/// The cause of `m`, a move from `prev` to `cur` (see the [module docs](self)).
///
/// ```
/// use kstreams_assignor::views::watch::{Cause, cause, diff, observe};
///
/// let prev = observe::streams_look(1_000, 3, &[("m1", "p1", &["0_0", "0_1"], &[], &[])]);
/// let cur = observe::streams_look(2_000, 4, &[("m1", "p1", &["0_0"], &[], &[]), ("m2", "p2", &["0_1"], &[], &[])]);
/// let moves = diff::moves(&prev, &cur);
/// assert_eq!(moves.len(), 1);
/// assert_eq!(cause::name(&moves[0], &prev, &cur), Cause::MemberJoined);
/// ```
pub fn name(m: &Move, prev: &Observation, cur: &Observation) -> Cause {
    let is_copy = |r: &Option<Replica>| r.as_ref().is_some_and(|r| r.role != Role::Active);
    if is_copy(&m.from) || is_copy(&m.to) {
        let (was, is) = (active_on(prev, &m.task), active_on(cur, &m.task));
        if was != is {
            let replica = |p: Option<&str>| p.map(|p| Replica { process_id: p.to_owned(), role: Role::Active });
            let active = Move { task: m.task.clone(), from: replica(was), to: replica(is), cause: Cause::LoadBalance };
            return name(&active, prev, cur);
        }
    }
    let (before, after) = (processes(prev), processes(cur));
    let (prev_tasks, cur_tasks) = (prev.all_tasks(), cur.all_tasks());
    if (prev.topology_epoch.is_some() && prev.topology_epoch != cur.topology_epoch)
        || prev.topics != cur.topics
        || !prev_tasks.contains(&m.task)
        || !cur_tasks.contains(&m.task)
    {
        return Cause::TopologyChange;
    }
    if m.from.as_ref().is_some_and(|r| !after.contains(r.process_id.as_str())) {
        return Cause::MemberLeft;
    }
    if let Some(to) = m.to.as_ref().filter(|r| r.role == Role::Active) {
        let held = prev.roles().get(to.process_id.as_str()).and_then(|t| t.get(m.task.as_str()).copied());
        if held == Some(Role::Warmup) || (held == Some(Role::Standby) && probing_due(prev, cur)) {
            return Cause::WarmupPromoted;
        }
    }
    let joined = after.difference(&before).count() > 0;
    if m.to.as_ref().is_some_and(|r| !before.contains(r.process_id.as_str())) || joined {
        return Cause::MemberJoined;
    }
    if before.difference(&after).count() > 0 {
        return Cause::MemberLeft;
    }
    if probing_due(prev, cur) {
        return Cause::ProbingRebalance;
    }
    Cause::LoadBalance
}
