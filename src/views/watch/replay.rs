//! The replay of a classic generation: the assignor's input rebuilt from the subscriptions seen,
//! the assignor run on it, and its result set against the assignment observed.
//!
//! Each process is a client; its capacity is its number of members; its offset sums, rack and
//! client tags are those its subscriptions carry. The tasks and their changelog end offsets come
//! from the topology and the end offsets fetched at the look, when there are both. Otherwise
//! they are inferred from what was seen: the tasks are those assigned, a task is stateful when
//! it has a standby or an offset sum, and its end-offset sum is taken as the largest offset sum
//! reported for it (the copy that is furthest is counted as caught up):
//! [`ReplayCheck::end_offsets_estimated`] says so. End offsets fetched at the look are later than
//! those the leader fetched at the rebalance, so a lag near `acceptable.recovery.lag` can be
//! judged differently. `num.standby.replicas` left at 0 is taken from the group when every
//! stateful task has standbys: the fewest any task has.
//!
//! A process given no task at all while the group has at least as many tasks as processes is
//! left out of the replay: no assignor of Kafka's leaves a client empty then, so it takes part in
//! the group but not in the assignment, as a leader-only member of this crate
//! ([`ReplayCheck::excluded`]).
//!
//! When the replay gives the assignment observed, process by process, its warm-ups name the
//! standby tasks that are warm-ups: the one thing the classic protocol's bytes do not say.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::views::watch::{Observation, Role};
use crate::engine::{self, AssignmentConfigs, AssignmentInput, AssignorKind, ClientInput};
use crate::views::describe::DescribedGroup;
use crate::wire::TaskId;

/// The replay of one generation against what was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReplayCheck {
    /// The assignor that ran (Kafka's class name).
    pub assignor: String,
    /// Processes in the replay (those in the generation less the excluded).
    pub processes: usize,
    /// Processes left out of the replay, given no task (see the [module docs](self)).
    pub excluded: Vec<String>,
    /// Processes whose active and standby tasks the replay gives exactly.
    pub processes_agreeing: usize,
    /// Tasks in the generation.
    pub tasks: usize,
    /// Tasks whose active process and standby processes the replay gives exactly.
    pub tasks_agreeing: usize,
    /// Warm-ups the replay placed.
    pub warmups: usize,
    /// Whether the replay asks for a probing rebalance.
    pub probing_rebalance_needed: bool,
    /// Whether the end offsets were estimated (see the [module docs](self)).
    pub end_offsets_estimated: bool,
    /// Why the assignor refused the input, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ReplayCheck {
    /// Whether the replay gives the assignment observed.
    pub fn agrees(&self) -> bool {
        self.error.is_none() && self.processes_agreeing == self.processes && self.tasks_agreeing == self.tasks
    }
}

/// The assignor's input for the generation `g` shows (see the [module docs](self)), or `None`
/// when a member's subscription or assignment does not decode, or there is nothing to assign.
pub fn input(g: &DescribedGroup, configs: &AssignmentConfigs) -> Option<AssignmentInput> {
    let mut clients: BTreeMap<String, ClientInput> = BTreeMap::new();
    let mut given: BTreeMap<String, usize> = BTreeMap::new();
    let mut assigned = BTreeSet::new();
    let mut standby_copies: BTreeMap<TaskId, usize> = BTreeMap::new();
    let mut reported: BTreeMap<TaskId, i64> = BTreeMap::new();
    for m in &g.members {
        let (env, info) = m.subscription.as_ref().ok()?;
        let Some(Ok((_, a))) = &m.assignment else { return None };
        assigned.extend(a.active_tasks.iter().cloned());
        for t in a.standby_task_ids() {
            *standby_copies.entry(t).or_default() += 1;
        }
        let client = clients.entry(info.process_id.to_string()).or_insert_with(|| {
            let mut c = ClientInput::new(info.process_id, 0);
            if let Some(rack) = env.rack() {
                c = c.with_rack_id(rack);
            }
            c.with_client_tags(info.client_tags_map().unwrap_or_default())
        });
        client.capacity += 1;
        *given.entry(info.process_id.to_string()).or_default() += a.active_tasks.len() + a.standby_tasks.len();
        for (t, sum) in info.offset_sums() {
            let r = reported.entry(t.clone()).or_insert(sum);
            *r = (*r).max(sum);
            client.task_offset_sums.insert(t, sum);
        }
    }
    let known = g.tasks.as_ref().filter(|t| t.stateful.values().all(Option::is_some));
    let (stateful, stateless, ends): (BTreeSet<TaskId>, BTreeSet<TaskId>, BTreeMap<TaskId, i64>) = match known {
        Some(t) => (t.stateful.keys().cloned().collect(), t.stateless.clone(), t.stateful.iter().filter_map(|(k, e)| Some((k.clone(), (*e)?))).collect()),
        None => {
            let stateful: BTreeSet<TaskId> =
                assigned.iter().filter(|t| standby_copies.contains_key(*t) || reported.contains_key(*t)).cloned().collect();
            let ends = stateful.iter().map(|t| (t.clone(), reported.get(t).copied().unwrap_or(0).max(0))).collect();
            (stateful.clone(), assigned.difference(&stateful).cloned().collect(), ends)
        }
    };
    let mut configs = configs.clone();
    if configs.num_standby_replicas == 0 && !stateful.is_empty() && stateful.iter().all(|t| standby_copies.contains_key(t)) {
        let fewest = stateful.iter().filter_map(|t| standby_copies.get(t)).min().copied().unwrap_or(0);
        configs.num_standby_replicas = i32::try_from(fewest).unwrap_or(i32::MAX);
    }
    let all = stateful.len() + stateless.len();
    if all >= clients.len() {
        clients.retain(|p, _| given.get(p).copied().unwrap_or(0) > 0);
    }
    if all == 0 || clients.is_empty() {
        return None;
    }
    let mut input = AssignmentInput::new().with_configs(configs).with_stateful_tasks(ends).with_stateless_tasks(stateless);
    for c in clients.into_values() {
        input = input.with_client(c);
    }
    Some(input)
}

/// Runs `assignor` on `look`'s replay input, sets its result against the look, and, when it
/// agrees, marks the replay's warm-ups as [`Role::Warmup`] in the look. `None` without an input.
pub fn check(look: &mut Observation, assignor: AssignorKind, estimated: bool) -> Option<ReplayCheck> {
    let input = look.replay_input.as_ref()?;
    let replayed_processes: BTreeSet<String> = input.clients.iter().map(|c| c.process_id.to_string()).collect();
    let excluded: Vec<String> = look.processes().keys().filter(|p| !replayed_processes.contains(**p)).map(|p| (*p).to_owned()).collect();
    let mut out = ReplayCheck {
        assignor: engine::effective_assignor(assignor, input).name().to_owned(),
        processes: replayed_processes.len(),
        excluded,
        processes_agreeing: 0,
        tasks: look.all_tasks().len(),
        tasks_agreeing: 0,
        warmups: 0,
        probing_rebalance_needed: false,
        end_offsets_estimated: estimated,
        error: None,
    };
    let result = match engine::assign(assignor, input) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(e.to_string());
            return Some(out);
        }
    };
    out.probing_rebalance_needed = result.followup.probing_rebalance_needed;
    // Per task: (active process, standby processes), replayed and observed.
    let mut replayed: BTreeMap<String, (Option<String>, BTreeSet<String>)> = BTreeMap::new();
    let mut warmups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in &result.clients {
        let p = c.process_id.to_string();
        for t in &c.active_tasks {
            replayed.entry(t.to_string()).or_default().0 = Some(p.clone());
        }
        for t in &c.standby_tasks {
            replayed.entry(t.to_string()).or_default().1.insert(p.clone());
        }
        out.warmups += c.warmup_tasks.len();
        warmups.insert(p, c.warmup_tasks.iter().map(ToString::to_string).collect());
    }
    let mut observed: BTreeMap<String, (Option<String>, BTreeSet<String>)> = BTreeMap::new();
    for (p, tasks) in look.roles() {
        for (t, role) in tasks {
            let entry = observed.entry(t.to_owned()).or_default();
            match role {
                Role::Active => entry.0 = Some(p.to_owned()),
                _ => {
                    entry.1.insert(p.to_owned());
                }
            }
        }
    }
    out.tasks = observed.len().max(replayed.len());
    out.tasks_agreeing = observed.iter().filter(|(t, o)| replayed.get(*t) == Some(o)).count();
    let per_process = |m: &BTreeMap<String, (Option<String>, BTreeSet<String>)>, p: &str| {
        m.iter()
            .filter(|(_, (a, s))| a.as_deref() == Some(p) || s.contains(p))
            .map(|(t, (a, _))| (t.clone(), a.as_deref() == Some(p)))
            .collect::<BTreeSet<_>>()
    };
    out.processes_agreeing = replayed_processes.iter().filter(|p| per_process(&observed, p) == per_process(&replayed, p)).count();
    if out.agrees() {
        for m in &mut look.members {
            let Some(w) = warmups.get(&m.process_id) else { continue };
            let named: Vec<String> = m.standby.intersection(w).cloned().collect();
            for t in named {
                m.standby.remove(&t);
                m.warmup.insert(t);
            }
        }
    }
    Some(out)
}
