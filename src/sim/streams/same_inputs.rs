//! Kafka's `sticky` asked on `optimized`'s inputs: at every target of an `optimized` run, the
//! coordinator's group spec also goes to `sticky`, and the two answers' moves, stateful spreads
//! and restores are compared on that one group. Two runs drift apart after their first
//! different target, so their totals also count the groups each assignor's earlier choices
//! made; these pairs do not. Until that first different target the two runs are one run (the
//! simulator is deterministic and both see the same events), so how `optimized`'s answer
//! differs there ([`FirstDifference`]) is what sets the two runs apart.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::streams::{StreamsAssignError, StreamsGroupAssignment, StreamsGroupSpec, StreamsTopology, Tasks, assign_sticky, is_prober};

/// The targets of one run (or a suite) compared with `sticky`'s answers on the same groups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StickyOnSameInputs {
    /// Targets compared.
    pub targets: usize,
    /// Active tasks the run's targets move off the process that runs them.
    pub moves: usize,
    /// Active tasks `sticky`'s answers would move off the process that runs them.
    pub sticky_moves: usize,
    /// Targets that move more active tasks than `sticky`'s answer.
    pub more_moves: usize,
    /// Of those, the targets where `sticky`'s answer has the wider spread of stateful active
    /// tasks per member (max − min over the processes).
    pub more_moves_narrower: usize,
    /// Of the rest, the targets whose new owners restore fewer records than `sticky`'s would, by
    /// the offsets the members reported.
    pub more_moves_less_restored: usize,
    /// The first target (1-based, the starting assignment included) whose answer differs from
    /// `sticky`'s on the same group, and how; `None` while every answer was `sticky`'s, and for
    /// sums over runs ([`merge`](Self::merge) leaves it as it is).
    pub first_difference: Option<(usize, FirstDifference)>,
}

/// How the first answer of a run that is not `sticky`'s answer on the same group differs from it.
/// Members compare by active tasks and by other copies (standbys and warm-ups alike: both restore).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum FirstDifference {
    /// More active tasks moved, with a narrower spread of stateful tasks per member.
    MoreMovesNarrower,
    /// More active tasks moved, their new owners restoring fewer records.
    MoreMovesLessRestored,
    /// More active tasks moved, with neither.
    MoreMovesUnexplained,
    /// As many active tasks moved: another of the answers that move as few (which tasks move,
    /// between which processes, on which members, and where the copies go).
    AsManyMoves,
    /// Fewer active tasks moved.
    FewerMoves,
}

impl StickyOnSameInputs {
    /// The targets that move more than `sticky` with neither a narrower stateful spread nor fewer
    /// records to restore.
    pub fn more_moves_unexplained(&self) -> usize {
        self.more_moves - self.more_moves_narrower - self.more_moves_less_restored
    }

    /// Adds `other`'s targets.
    pub fn merge(&mut self, other: &Self) {
        self.targets += other.targets;
        self.moves += other.moves;
        self.sticky_moves += other.sticky_moves;
        self.more_moves += other.more_moves;
        self.more_moves_narrower += other.more_moves_narrower;
        self.more_moves_less_restored += other.more_moves_less_restored;
    }

    /// Compares `target`, made for `spec`, with `sticky`'s answer on `spec` (its probers left
    /// out: `sticky` would give them tasks).
    pub(super) fn add(&mut self, spec: &StreamsGroupSpec, topology: &StreamsTopology, target: &StreamsGroupAssignment) -> Result<(), StreamsAssignError> {
        let mut plain = spec.clone();
        plain.members.retain(|m| !is_prober(m));
        let sticky = assign_sticky(&plain, topology)?;
        let group = Group::new(&plain, topology);
        let (ours, theirs) = (group.judge(target), group.judge(&sticky));
        self.targets += 1;
        self.moves += ours.moves;
        self.sticky_moves += theirs.moves;
        let kind = if ours.moves > theirs.moves {
            self.more_moves += 1;
            if group.narrower(&ours.stateful, &theirs.stateful) {
                self.more_moves_narrower += 1;
                FirstDifference::MoreMovesNarrower
            } else if ours.restored < theirs.restored {
                self.more_moves_less_restored += 1;
                FirstDifference::MoreMovesLessRestored
            } else {
                FirstDifference::MoreMovesUnexplained
            }
        } else if ours.moves == theirs.moves {
            FirstDifference::AsManyMoves
        } else {
            FirstDifference::FewerMoves
        };
        if self.first_difference.is_none() && !same_answer(target, &sticky) {
            self.first_difference = Some((self.targets, kind));
        }
        Ok(())
    }
}

/// Whether two answers give every member the same active tasks and the same other copies
/// (standbys and warm-ups alike; a member one answer leaves out, such as a prober, holds nothing).
fn same_answer(a: &StreamsGroupAssignment, b: &StreamsGroupAssignment) -> bool {
    let held = |x: &StreamsGroupAssignment, id: &str| -> (Tasks, Tasks) {
        let Some(m) = x.members.get(id) else { return Default::default() };
        let mut copies = m.standby_tasks.clone();
        for (s, parts) in &m.warmup_tasks {
            copies.entry(s.clone()).or_default().extend(parts);
        }
        let drop_empty = |mut t: Tasks| {
            t.retain(|_, parts| !parts.is_empty());
            t
        };
        (drop_empty(m.active_tasks.clone()), drop_empty(copies))
    };
    a.members.keys().chain(b.members.keys()).all(|id| held(a, id) == held(b, id))
}

/// A task: sub-topology id and partition.
type Task<'a> = (&'a str, i32);

/// What the group spec says: who runs what, the members per process, the offsets.
struct Group<'a> {
    process_of: BTreeMap<&'a str, &'a str>,
    members: BTreeMap<&'a str, u64>,
    runs: BTreeMap<Task<'a>, &'a str>,
    stateful: BTreeSet<&'a str>,
    /// The highest offset or end offset any member reported per task.
    end: BTreeMap<Task<'a>, i64>,
    /// The highest offset a process's members reported per task.
    offset: BTreeMap<(&'a str, Task<'a>), i64>,
}

/// One answer's moves, stateful tasks per process and records to restore.
struct Judged<'a> {
    moves: usize,
    stateful: BTreeMap<&'a str, u64>,
    restored: i64,
}

impl<'a> Group<'a> {
    fn new(spec: &'a StreamsGroupSpec, topology: &'a StreamsTopology) -> Self {
        let mut group = Self {
            process_of: BTreeMap::new(),
            members: BTreeMap::new(),
            runs: BTreeMap::new(),
            stateful: topology.subtopologies.iter().filter(|s| s.stateful).map(|s| s.id.as_str()).collect(),
            end: BTreeMap::new(),
            offset: BTreeMap::new(),
        };
        for m in &spec.members {
            let process = m.process_id.as_str();
            group.process_of.insert(m.member_id.as_str(), process);
            *group.members.entry(process).or_default() += 1;
            for (s, parts) in &m.active_tasks {
                for &p in parts.keys() {
                    group.runs.insert((s.as_str(), p), process);
                }
            }
            for (s, parts) in m.task_offsets.iter().chain(&m.task_end_offsets) {
                for (&p, &v) in parts {
                    let end = group.end.entry((s.as_str(), p)).or_insert(v);
                    *end = (*end).max(v);
                }
            }
            for (s, parts) in &m.task_offsets {
                for (&p, &v) in parts {
                    let offset = group.offset.entry((process, (s.as_str(), p))).or_insert(v);
                    *offset = (*offset).max(v);
                }
            }
        }
        group
    }

    fn judge(&self, answer: &'a StreamsGroupAssignment) -> Judged<'a> {
        let mut judged = Judged { moves: 0, stateful: self.members.keys().map(|&p| (p, 0)).collect(), restored: 0 };
        for (member, a) in &answer.members {
            let Some(&process) = self.process_of.get(member.as_str()) else { continue };
            for (s, parts) in &a.active_tasks {
                let stateful = self.stateful.contains(s.as_str());
                for &p in parts {
                    let task = (s.as_str(), p);
                    let runs_here = self.runs.get(&task) == Some(&process);
                    judged.moves += usize::from(!runs_here && self.runs.contains_key(&task));
                    if stateful {
                        *judged.stateful.entry(process).or_default() += 1;
                        if !runs_here {
                            let end = self.end.get(&task).copied().unwrap_or(0);
                            let have = self.offset.get(&(process, task)).copied().unwrap_or(0);
                            judged.restored = judged.restored.saturating_add(end.saturating_sub(have).max(0));
                        }
                    }
                }
            }
        }
        judged
    }

    /// Whether `ours` has the narrower spread of stateful tasks per member than `theirs`.
    fn narrower(&self, ours: &BTreeMap<&str, u64>, theirs: &BTreeMap<&str, u64>) -> bool {
        // Spreads compared as fractions over the common denominator of the member counts.
        let spread = |held: &BTreeMap<&str, u64>| {
            let loads: Vec<(u64, u64)> = held.iter().map(|(p, &n)| (n, self.members.get(p).copied().unwrap_or(1).max(1))).collect();
            let cmp = |a: &(u64, u64), b: &(u64, u64)| (u128::from(a.0) * u128::from(b.1)).cmp(&(u128::from(b.0) * u128::from(a.1)));
            let (Some(lo), Some(hi)) = (loads.iter().min_by(|a, b| cmp(a, b)), loads.iter().max_by(|a, b| cmp(a, b))) else {
                return (0, 1);
            };
            // hi.0 / hi.1 − lo.0 / lo.1 as one fraction.
            (u128::from(hi.0) * u128::from(lo.1) - u128::from(lo.0) * u128::from(hi.1), u128::from(hi.1) * u128::from(lo.1))
        };
        let ((a, b), (c, d)) = (spread(ours), spread(theirs));
        a * d < c * b
    }
}
