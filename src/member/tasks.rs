//! The tasks a member holds, and the callbacks a Rust program gets as they change: one trait for
//! both protocols. The classic member ([`GroupMember`](crate::member::GroupMember)) and the
//! streams-protocol member ([`StreamsGroupMember`](crate::member::StreamsGroupMember)) call
//! the same [`TaskCallbacks`], in the same order: revoked active tasks first (before the
//! member tells the coordinator it gave them up), then the whole new assignment; all tasks lost
//! when the member learns it was fenced out of the group.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::wire::TaskId;

/// The tasks a member holds: active, standby and warm-up (a warm-up is a standby the assignor
/// placed to move an active task later; the classic protocol has none on the wire).
///
/// ```
/// use kstreams_assignor::member::MemberTasks;
/// use kstreams_assignor::wire::TaskId;
///
/// let before = MemberTasks { active: [TaskId::new(0, 0), TaskId::new(0, 1)].into(), ..Default::default() };
/// let after = MemberTasks { active: [TaskId::new(0, 1)].into(), ..Default::default() };
/// assert_eq!(before.revoked_by(&after), [TaskId::new(0, 0)].into());
/// assert_eq!(after.to_string(), "active [0_1] standby [] warm-up []");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberTasks {
    /// Active tasks.
    #[serde(serialize_with = "task_names")]
    pub active: BTreeSet<TaskId>,
    /// Standby tasks.
    #[serde(serialize_with = "task_names")]
    pub standby: BTreeSet<TaskId>,
    /// Warm-up tasks.
    #[serde(serialize_with = "task_names")]
    pub warmup: BTreeSet<TaskId>,
}

fn task_names<S: serde::Serializer>(tasks: &BTreeSet<TaskId>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(tasks.iter().map(ToString::to_string))
}

impl MemberTasks {
    /// No task at all.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }

    /// The active tasks held here that `next` does not hold: the ones to give up first.
    pub fn revoked_by(&self, next: &MemberTasks) -> BTreeSet<TaskId> {
        self.active.difference(&next.active).cloned().collect()
    }
}

impl fmt::Display for MemberTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |tasks: &BTreeSet<TaskId>| tasks.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        write!(f, "active [{}] standby [{}] warm-up [{}]", list(&self.active), list(&self.standby), list(&self.warmup))
    }
}

/// What a member reports of its state stores per task: the sums of its changelog offsets and,
/// on the streams protocol, of their end offsets (Java's `taskOffsetSum` and
/// `taskEndOffsetSum`). The assignor ranks members by the lag between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskOffsetSums {
    /// Changelog offset sum per task.
    pub offsets: BTreeMap<TaskId, i64>,
    /// Changelog end-offset sum per task (the streams protocol reports these; the classic one
    /// does not).
    pub end_offsets: BTreeMap<TaskId, i64>,
}

/// The callbacks a Rust program gets as its member's tasks change, on either protocol. They run
/// on the member's thread, between its requests: keep them short (the member's heartbeat waits).
///
/// ```
/// use std::collections::BTreeSet;
/// use kstreams_assignor::member::{MemberTasks, TaskCallbacks};
/// use kstreams_assignor::wire::TaskId;
///
/// #[derive(Default)]
/// struct Log(Vec<String>);
///
/// impl TaskCallbacks for Log {
///     fn on_tasks_revoked(&mut self, active: &BTreeSet<TaskId>) {
///         self.0.push(format!("revoked {}", active.len()));
///     }
///     fn on_tasks_assigned(&mut self, tasks: &MemberTasks) {
///         self.0.push(format!("assigned {tasks}"));
///     }
/// }
///
/// let mut log = Log::default();
/// log.on_tasks_assigned(&MemberTasks::default());
/// log.on_all_tasks_lost(); // the default does nothing
/// assert_eq!(log.0, ["assigned active [] standby [] warm-up []"]);
/// ```
pub trait TaskCallbacks {
    /// These active tasks are taken away: stop processing them and commit. Called before the
    /// member acknowledges the new assignment, so no other member runs them yet.
    fn on_tasks_revoked(&mut self, active: &BTreeSet<TaskId>) {
        let _ = active;
    }

    /// The member's whole new assignment (after any revocation).
    fn on_tasks_assigned(&mut self, tasks: &MemberTasks) {
        let _ = tasks;
    }

    /// The member was fenced out (or gave up on the group): every task may already run
    /// elsewhere; drop them all without committing.
    fn on_all_tasks_lost(&mut self) {}

    /// The offset sums to report for the tasks whose state this program keeps (none by default).
    fn offset_sums(&mut self) -> TaskOffsetSums {
        TaskOffsetSums::default()
    }
}

/// The callbacks of a member that only reports (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCallbacks;

impl TaskCallbacks for NoCallbacks {}

/// Callbacks that write down what they were told, for the members' tests.
#[cfg(test)]
pub(crate) mod recording {
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};

    use super::{MemberTasks, TaskCallbacks, TaskOffsetSums};
    use crate::wire::TaskId;

    /// Each call as a line: `revoked 0_1 0_2`, `assigned active [..] standby [..] warm-up [..]`,
    /// `lost`.
    #[derive(Clone, Default)]
    pub(crate) struct Recorder {
        pub(crate) calls: Arc<Mutex<Vec<String>>>,
        pub(crate) sums: Arc<Mutex<TaskOffsetSums>>,
    }

    impl Recorder {
        pub(crate) fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.calls.lock().unwrap())
        }
    }

    impl TaskCallbacks for Recorder {
        fn on_tasks_revoked(&mut self, active: &BTreeSet<TaskId>) {
            let list: Vec<String> = active.iter().map(ToString::to_string).collect();
            self.calls.lock().unwrap().push(format!("revoked {}", list.join(" ")));
        }
        fn on_tasks_assigned(&mut self, tasks: &MemberTasks) {
            self.calls.lock().unwrap().push(format!("assigned {tasks}"));
        }
        fn on_all_tasks_lost(&mut self) {
            self.calls.lock().unwrap().push("lost".into());
        }
        fn offset_sums(&mut self) -> TaskOffsetSums {
            self.sums.lock().unwrap().clone()
        }
    }
}
