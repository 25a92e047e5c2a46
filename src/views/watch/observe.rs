//! One look as an [`Observation`]: a classic group as `describe_group` decodes it, or a streams
//! group as `StreamsGroupDescribe` answers.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use crate::views::watch::{MemberLook, Observation, Protocol};
use crate::engine::AssignmentConfigs;
use crate::views::describe::DescribedGroup;
use crate::views::streams::describe::StreamsGroupDescription;
use crate::client::streams::{TaskIds, TaskOffset};
use crate::wire::UNKNOWN_END_OFFSET_SUM;

/// A classic group at `at_ms` (see the [module docs](super#what-each-protocol-lets-one-see)):
/// settled when `Stable` with every member's assignment decoded; the generation estimated from
/// the subscriptions; the replay's input built with `configs`.
pub fn classic(g: &DescribedGroup, at_ms: i64, configs: &AssignmentConfigs) -> Observation {
    let mut members = Vec::new();
    let mut topics = BTreeSet::new();
    let mut digest = std::hash::DefaultHasher::new();
    for m in &g.members {
        (&m.member_id, &m.member_metadata, &m.member_assignment).hash(&mut digest);
        let mut look = MemberLook { member_id: m.member_id.clone(), ..MemberLook::default() };
        match &m.subscription {
            Ok((env, info)) => {
                look.process_id = info.process_id.to_string();
                look.offset_sums = info.offset_sums().into_iter().map(|(t, s)| (t.to_string(), s)).collect();
                topics.extend(env.topics.iter().cloned());
            }
            // A member whose subscription does not decode is a process of its own.
            Err(_) => look.process_id = format!("member {}", m.member_id),
        }
        if let Some(Ok((_, info))) = &m.assignment {
            look.active = info.active_tasks.iter().map(ToString::to_string).collect();
            look.standby = info.standby_task_ids().iter().map(ToString::to_string).collect();
            look.next_rebalance_ms = info.next_rebalance.deadline();
        }
        members.push(look);
    }
    let settled = g.group_state == "Stable" && !g.members.is_empty() && g.members.iter().all(|m| matches!(m.assignment, Some(Ok(_))));
    let generation = g.members.iter().map(|m| m.subscription_generation_id()).max().filter(|&n| n >= 0);
    let tasks = g.tasks.as_ref().map(|t| t.stateless.iter().chain(t.stateful.keys()).map(ToString::to_string).collect());
    let end_offset_sums = g
        .tasks
        .iter()
        .flat_map(|t| t.stateful.iter())
        .filter_map(|(t, e)| Some((t.to_string(), (*e)?)))
        .collect();
    Observation {
        at_ms,
        protocol: Protocol::Classic,
        state: g.group_state.clone(),
        settled,
        epoch: generation.map(|n| n.saturating_add(1)),
        topology_epoch: None,
        topics,
        tasks,
        end_offset_sums,
        end_offsets_known: g.tasks.as_ref().is_some_and(|t| t.stateful.values().all(Option::is_some)),
        members,
        fingerprint: digest.finish(),
        record_size: Some(g.record_size()),
        replay_input: settled.then(|| crate::views::watch::replay::input(g, configs)).flatten(),
    }
}

fn task_keys(ids: &[TaskIds]) -> BTreeSet<String> {
    ids.iter().flat_map(|t| t.partitions.iter().map(move |p| format!("{}_{p}", t.subtopology_id))).collect()
}

fn offsets(list: &[TaskOffset]) -> BTreeMap<String, i64> {
    list.iter().map(|t| (format!("{}_{}", t.subtopology_id, t.partition), t.offset)).collect()
}

/// A streams group at `at_ms`: its target assignment (what the broker's assignor decided for
/// the group epoch), settled once the target is of the group epoch.
pub fn streams(d: &StreamsGroupDescription, at_ms: i64) -> Observation {
    let g = &d.group;
    let mut digest = std::hash::DefaultHasher::new();
    let members: Vec<MemberLook> = g
        .members
        .iter()
        .map(|m| {
            let t = &m.target_assignment;
            let look = MemberLook {
                member_id: m.member_id.clone(),
                process_id: m.process_id.clone(),
                active: task_keys(&t.active_tasks),
                standby: task_keys(&t.standby_tasks),
                warmup: task_keys(&t.warmup_tasks),
                offset_sums: offsets(&m.task_offsets),
                // Long.MAX_VALUE: the member does not know the end yet; no end is better than a false one.
                end_offset_sums: offsets(&m.task_end_offsets).into_iter().filter(|&(_, e)| e != UNKNOWN_END_OFFSET_SUM).collect(),
                next_rebalance_ms: None,
            };
            (&look.member_id, &look.active, &look.standby, &look.warmup).hash(&mut digest);
            look
        })
        .collect();
    let mut end_offset_sums: BTreeMap<String, i64> = BTreeMap::new();
    for m in &members {
        for (t, e) in &m.end_offset_sums {
            let v = end_offset_sums.entry(t.clone()).or_insert(*e);
            *v = (*v).max(*e);
        }
    }
    let topology = g.topology.as_ref();
    let topics = topology
        .and_then(|t| t.subtopologies.as_ref())
        .map(|s| s.iter().flat_map(|s| s.source_topics.iter().cloned()).collect())
        .unwrap_or_default();
    Observation {
        at_ms,
        protocol: Protocol::Streams,
        state: g.group_state.clone(),
        settled: g.assignment_epoch == g.group_epoch && !members.is_empty(),
        epoch: Some(g.group_epoch),
        topology_epoch: topology.map(|t| t.epoch),
        topics,
        tasks: None,
        end_offset_sums,
        end_offsets_known: true,
        members,
        fingerprint: digest.finish(),
        record_size: None,
        replay_input: None,
    }
}

/// One member of [`streams_look`]: member id, process id, active, standby and warm-up tasks.
pub type MemberSketch<'a> = (&'a str, &'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);

/// A settled streams look from task lists, one [`MemberSketch`] per member: for examples and
/// tests.
pub fn streams_look(at_ms: i64, epoch: i32, members: &[MemberSketch<'_>]) -> Observation {
    let set = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
    let mut digest = std::hash::DefaultHasher::new();
    let members: Vec<MemberLook> = members
        .iter()
        .map(|(id, p, a, s, w)| {
            (id, a, s, w).hash(&mut digest);
            MemberLook {
                member_id: (*id).to_owned(),
                process_id: (*p).to_owned(),
                active: set(a),
                standby: set(s),
                warmup: set(w),
                ..MemberLook::default()
            }
        })
        .collect();
    Observation {
        at_ms,
        protocol: Protocol::Streams,
        state: "Stable".into(),
        settled: true,
        epoch: Some(epoch),
        topology_epoch: Some(0),
        topics: BTreeSet::new(),
        tasks: None,
        end_offset_sums: BTreeMap::new(),
        end_offsets_known: false,
        members,
        fingerprint: digest.finish(),
        record_size: None,
        replay_input: None,
    }
}
