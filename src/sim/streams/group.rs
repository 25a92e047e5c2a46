//! The coordinator's side of a streams group: members (stream threads) with their epochs and
//! assigned tasks, the target assignment, and reconciliation towards it (Kafka's
//! `CurrentAssignmentBuilder`: a member is given a task only once no other member holds it).

use std::collections::{BTreeMap, BTreeSet};

use crate::wire::{ProcessId, TaskId};

/// A member's reconciliation state (Kafka's `MemberState` of the streams group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemberState {
    /// At its epoch with every task of its target it can have.
    Stable,
    /// Waiting for the member to revoke tasks it must give up.
    UnrevokedTasks,
    /// At the target epoch, waiting for tasks another member still holds.
    UnreleasedTasks,
}

/// Active, standby and warm-up tasks (Kafka's `TasksTuple`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TaskSets {
    pub(super) active: BTreeSet<TaskId>,
    pub(super) standby: BTreeSet<TaskId>,
    pub(super) warmup: BTreeSet<TaskId>,
}

impl TaskSets {
    fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }
}

/// One member of the group: a stream thread of a process.
#[derive(Debug, Clone)]
pub(super) struct GroupMember {
    pub(super) member_id: String,
    pub(super) process_id: ProcessId,
    pub(super) epoch: i32,
    pub(super) state: MemberState,
    /// The tasks the coordinator has given it (and it runs), active ones with the epoch they
    /// were given in.
    pub(super) active: BTreeMap<TaskId, i32>,
    pub(super) standby: BTreeSet<TaskId>,
    pub(super) warmup: BTreeSet<TaskId>,
    /// What it was asked to revoke and has not yet acknowledged.
    pub(super) pending_revocation: TaskSets,
    /// When it heartbeats next (every `group.streams.heartbeat.interval.ms` from when it joined).
    pub(super) next_heartbeat_ms: i64,
    /// The task offsets and end offsets it last sent, and its tasks as it last reported them:
    /// all the coordinator knows of its state (`None` before its first heartbeat).
    pub(super) sent: Option<Sent>,
}

/// What a member last sent in its heartbeats (Kafka's `HeartbeatState.LastSentFields`).
#[derive(Debug, Clone, Default)]
pub(super) struct Sent {
    /// Offset sum per task it has local state for, its running active tasks aside.
    pub(super) offsets: BTreeMap<TaskId, i64>,
    /// Changelog end-offset sum per task it restores (a restoring active task, a standby or a
    /// warm-up).
    pub(super) end_offsets: BTreeMap<TaskId, i64>,
    /// When it last sent either.
    pub(super) at_ms: i64,
    /// When it last looked for offsets to send (and found none that changed, unless at `at_ms`).
    pub(super) checked_ms: i64,
    /// The tasks it last reported owning.
    pub(super) owned: TaskSets,
}

impl GroupMember {
    pub(super) fn new(member_id: String, process_id: ProcessId) -> Self {
        Self {
            next_heartbeat_ms: 0,
            member_id,
            process_id,
            epoch: 0,
            state: MemberState::Stable,
            active: BTreeMap::new(),
            standby: BTreeSet::new(),
            warmup: BTreeSet::new(),
            pending_revocation: TaskSets::default(),
            sent: None,
        }
    }
}

/// The group: members in the coordinator's order, the group epoch, and the target.
#[derive(Debug, Default)]
pub(super) struct Group {
    pub(super) members: Vec<GroupMember>,
    pub(super) group_epoch: i32,
    pub(super) target_epoch: i32,
    pub(super) target: BTreeMap<String, TaskSets>,
}

/// What one heartbeat changed for a member.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reconciled {
    /// Tasks the member revoked.
    pub(super) revoked: usize,
    /// Tasks the member was given.
    pub(super) given: usize,
}

impl Group {
    /// Whether every member is stable at the target epoch.
    pub(super) fn reconciled(&self) -> bool {
        self.members.iter().all(|m| m.state == MemberState::Stable && m.epoch == self.target_epoch)
    }

    /// The member that holds `task` as active, counting tasks it has yet to revoke.
    fn active_owner(&self, task: &TaskId, except: usize) -> bool {
        self.members
            .iter()
            .enumerate()
            .any(|(i, m)| i != except && (m.active.contains_key(task) || m.pending_revocation.active.contains(task)))
    }

    /// Whether another member of `process` holds `task` as standby or warm-up (or pending their
    /// revocation), or (`active_too`) as active.
    fn process_holds(&self, task: &TaskId, process: ProcessId, except: usize, active_too: bool) -> bool {
        self.members.iter().enumerate().any(|(i, m)| {
            i != except
                && m.process_id == process
                && (m.standby.contains(task)
                    || m.warmup.contains(task)
                    || m.pending_revocation.standby.contains(task)
                    || m.pending_revocation.warmup.contains(task)
                    || (active_too && (m.active.contains_key(task) || m.pending_revocation.active.contains(task))))
        })
    }

    /// One heartbeat of member `i`, which reports the tasks it owns: Kafka's
    /// `CurrentAssignmentBuilder.build`. A member told to revoke tasks revokes them at once and
    /// acknowledges with its next heartbeat, which the caller sends right after (the client does
    /// not wait for its interval to acknowledge).
    pub(super) fn heartbeat(&mut self, i: usize) -> Reconciled {
        let m = &self.members[i];
        match m.state {
            MemberState::Stable if m.epoch == self.target_epoch => Reconciled::default(),
            MemberState::UnrevokedTasks => {
                // The member acknowledged: it no longer owns what it was asked to revoke.
                let revoked = {
                    let p = &self.members[i].pending_revocation;
                    p.active.len() + p.standby.len() + p.warmup.len()
                };
                self.members[i].pending_revocation = TaskSets::default();
                let epoch = self.members[i].epoch + 1;
                let mut out = self.next_assignment(i, epoch);
                out.revoked += revoked;
                out
            }
            _ => {
                let epoch = self.members[i].epoch;
                self.next_assignment(i, epoch)
            }
        }
    }

    /// Kafka's `computeNextAssignment` and `buildNewMember` for member `i` at `epoch`.
    fn next_assignment(&mut self, i: usize, epoch: i32) -> Reconciled {
        let target = self.target.get(&self.members[i].member_id).cloned().unwrap_or_default();
        let process = self.members[i].process_id;
        let m = &self.members[i];
        let revoke = TaskSets {
            active: m.active.keys().filter(|t| !target.active.contains(*t)).cloned().collect(),
            standby: m.standby.difference(&target.standby).cloned().collect(),
            warmup: m.warmup.difference(&target.warmup).cloned().collect(),
        };
        let mut unreleased = false;
        let mut gain = TaskSets::default();
        for t in target.active.iter().filter(|t| !m.active.contains_key(*t)) {
            if self.active_owner(t, usize::MAX) || self.process_holds(t, process, usize::MAX, false) {
                unreleased = true;
            } else {
                gain.active.insert(t.clone());
            }
        }
        for (wanted, held, into) in [(&target.standby, &m.standby, 0), (&target.warmup, &m.warmup, 1)] {
            for t in wanted.iter().filter(|t| !held.contains(*t)) {
                if self.process_holds(t, process, i, true) {
                    unreleased = true;
                } else if into == 0 {
                    gain.standby.insert(t.clone());
                } else {
                    gain.warmup.insert(t.clone());
                }
            }
        }
        let target_epoch = self.target_epoch;
        let m = &mut self.members[i];
        if !revoke.is_empty() {
            for t in &revoke.active {
                m.active.remove(t);
            }
            m.standby.retain(|t| !revoke.standby.contains(t));
            m.warmup.retain(|t| !revoke.warmup.contains(t));
            m.pending_revocation = revoke;
            m.epoch = epoch;
            m.state = MemberState::UnrevokedTasks;
            return Reconciled::default();
        }
        let given = gain.active.len() + gain.standby.len() + gain.warmup.len();
        for t in gain.active {
            m.active.insert(t, target_epoch);
        }
        m.standby.extend(gain.standby);
        m.warmup.extend(gain.warmup);
        m.epoch = target_epoch;
        m.state = if unreleased { MemberState::UnreleasedTasks } else { MemberState::Stable };
        Reconciled { revoked: 0, given }
    }

    /// Active tasks held by more than one member (tasks pending revocation count as held):
    /// reconciliation must keep this empty.
    pub(super) fn doubly_owned(&self) -> Vec<TaskId> {
        let mut seen: BTreeMap<&TaskId, usize> = BTreeMap::new();
        for m in &self.members {
            for t in m.active.keys().chain(&m.pending_revocation.active) {
                *seen.entry(t).or_default() += 1;
            }
        }
        seen.into_iter().filter(|&(_, n)| n > 1).map(|(t, _)| t.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn member(id: &str, process: u128) -> GroupMember {
        GroupMember::new(id.into(), ProcessId(Uuid::from_u128(process)))
    }

    #[test]
    fn a_moved_task_is_given_only_after_its_owner_revoked_it() {
        let t = TaskId::new(0, 0);
        let mut g = Group { members: vec![member("b", 2), member("a", 1)], group_epoch: 2, target_epoch: 2, ..Group::default() };
        g.members[1].active.insert(t.clone(), 1);
        g.members[1].epoch = 1;
        g.members[0].epoch = 1;
        g.target.insert("b".into(), TaskSets { active: [t.clone()].into(), ..TaskSets::default() });
        // b heartbeats first: a still holds the task, so b waits at the target epoch.
        assert_eq!(g.heartbeat(0), Reconciled::default());
        assert_eq!((g.members[0].state, g.members[0].epoch), (MemberState::UnreleasedTasks, 2));
        // a is asked to revoke it and stays at its epoch; the task is still held.
        g.heartbeat(1);
        assert_eq!((g.members[1].state, g.members[1].epoch), (MemberState::UnrevokedTasks, 1));
        assert!(g.doubly_owned().is_empty());
        assert_eq!(g.heartbeat(0).given, 0, "pending revocation still holds the task");
        // a acknowledges: it moves to the target epoch; b gets the task on its next heartbeat.
        assert_eq!(g.heartbeat(1).revoked, 1);
        assert_eq!((g.members[1].state, g.members[1].epoch), (MemberState::Stable, 2));
        assert_eq!(g.heartbeat(0).given, 1);
        assert!(g.reconciled());
        assert_eq!(g.members[0].active[&t], 2, "the task carries the epoch it was given in");
    }

    #[test]
    fn a_standby_waits_while_another_member_of_its_process_holds_the_task() {
        let t = TaskId::new(0, 0);
        let mut g = Group { members: vec![member("a1", 1), member("a2", 1)], group_epoch: 2, target_epoch: 2, ..Group::default() };
        g.members[0].active.insert(t.clone(), 1);
        g.target.insert("a2".into(), TaskSets { standby: [t.clone()].into(), ..TaskSets::default() });
        g.heartbeat(1);
        assert_eq!(g.members[1].state, MemberState::UnreleasedTasks);
        assert!(g.members[1].standby.is_empty());
    }
}
