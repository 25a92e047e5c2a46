//! Two generations compared: who joined and who left, and every task replica that moved.
//!
//! Tasks belong to processes (a classic process has one member per stream thread), so moves are
//! between processes. Per task, the active replica moves when its process changes; the other
//! copies (standby, warm-up) are compared as sets: a copy gone from one process and one new on
//! another make one move, in process order, and what is left over is a copy dropped or added.
//! A copy that changes between standby and warm-up on the same process does not move.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::views::watch::{Cause, MemberChange, Observation, Role};

/// A task replica on a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Replica {
    /// The process.
    pub process_id: String,
    /// What the copy is there.
    pub role: Role,
}

/// One task replica that moved between two generations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Move {
    /// The task (`subtopology_partition`).
    pub task: String,
    /// Where it was (`None`: a new copy).
    pub from: Option<Replica>,
    /// Where it is (`None`: a copy dropped).
    pub to: Option<Replica>,
    /// Why ([`cause::name`](crate::views::watch::cause::name)).
    pub cause: Cause,
}

/// The members in `cur` and not in `prev` (joined), and in `prev` and not in `cur` (left).
pub fn membership(prev: &Observation, cur: &Observation) -> (Vec<MemberChange>, Vec<MemberChange>) {
    let ids = |o: &Observation| o.members.iter().map(|m| (m.member_id.clone(), m.process_id.clone())).collect::<BTreeMap<_, _>>();
    let (before, after) = (ids(prev), ids(cur));
    let only = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| {
        a.iter()
            .filter(|(id, _)| !b.contains_key(*id))
            .map(|(id, p)| MemberChange { member_id: id.clone(), process_id: p.clone() })
            .collect::<Vec<_>>()
    };
    (only(&after, &before), only(&before, &after))
}

/// Per task: the process running it, and the other copies with their roles.
type Placement<'a> = BTreeMap<&'a str, (Option<&'a str>, BTreeMap<&'a str, Role>)>;

fn placement(o: &Observation) -> Placement<'_> {
    let mut out: Placement<'_> = BTreeMap::new();
    for (process, tasks) in o.roles() {
        for (task, role) in tasks {
            let entry = out.entry(task).or_default();
            match role {
                Role::Active if entry.0.is_none() => entry.0 = Some(process),
                Role::Active => {}
                copy => {
                    entry.1.insert(process, copy);
                }
            }
        }
    }
    out
}

/// Every replica that moved from `prev` to `cur`, in task order (active first), causes unnamed
/// ([`Cause::LoadBalance`] until [`cause::name`](crate::views::watch::cause::name)).
pub fn moves(prev: &Observation, cur: &Observation) -> Vec<Move> {
    let (before, after) = (placement(prev), placement(cur));
    let tasks: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    let empty = (None, BTreeMap::new());
    let replica = |p: &str, role| Replica { process_id: p.to_owned(), role };
    let mut out = Vec::new();
    for task in tasks {
        let (was, was_copies) = before.get(task).unwrap_or(&empty);
        let (is, is_copies) = after.get(task).unwrap_or(&empty);
        if was != is {
            out.push(Move {
                task: task.to_owned(),
                from: was.map(|p| replica(p, Role::Active)),
                to: is.map(|p| replica(p, Role::Active)),
                cause: Cause::LoadBalance,
            });
        }
        let gone: Vec<(&str, Role)> = was_copies.iter().filter(|(p, _)| !is_copies.contains_key(*p)).map(|(p, r)| (*p, *r)).collect();
        let new: Vec<(&str, Role)> = is_copies.iter().filter(|(p, _)| !was_copies.contains_key(*p)).map(|(p, r)| (*p, *r)).collect();
        for i in 0..gone.len().max(new.len()) {
            out.push(Move {
                task: task.to_owned(),
                from: gone.get(i).map(|&(p, r)| replica(p, r)),
                to: new.get(i).map(|&(p, r)| replica(p, r)),
                cause: Cause::LoadBalance,
            });
        }
    }
    out
}
