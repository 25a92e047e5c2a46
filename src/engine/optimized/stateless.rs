//! Step 6, the stateless tasks: sticky within the quotas on all actives, the rest to the client
//! with room that holds least of their sub-topology.

use std::collections::BTreeMap;

use super::spread::Mix;
use crate::engine::assignor::AssignError;
use crate::engine::model::{Client, Model, Placement, Task};

/// The client each stateless task ran on (by task index; `None` for stateful tasks and the
/// stateless tasks no client owned): of several owners, the first in client order.
///
/// Complexity: O(O·log G + T) for O owned tasks over all clients, G sub-topologies and T tasks.
pub(super) fn stateless_owners(model: &Model<'_>) -> Vec<Option<Client>> {
    let mut owners = model.first_owners();
    for &t in &model.stateful_tasks {
        owners[t as usize] = None;
    }
    owners
}

/// The stateless actives, `room[c]` on client `c`: each client keeps the tasks it ran while it
/// has room, giving up first those of the sub-topology it holds most of beyond its
/// capacity-proportional share; every other task goes to the client with room that holds least
/// of its sub-topology (then the least loaded, the lower index).
///
/// Complexity: O(L·(G + N)) for L stateless tasks, G sub-topologies and N clients.
pub(super) fn place_stateless(
    model: &Model<'_>,
    placement: &mut Placement,
    caps: &[u64],
    owner: &[Option<Client>],
    mut room: Vec<usize>,
) -> Result<(), AssignError> {
    let n = model.num_clients();
    let mut mix = Mix::new(model, &model.stateless_tasks, caps);
    let mut kept: Vec<Vec<Task>> = vec![Vec::new(); n];
    let mut homeless = Vec::new();
    for &t in &model.stateless_tasks {
        match owner[t as usize] {
            Some(c) => {
                kept[c].push(t);
                mix.add(c, t);
            }
            None => homeless.push(t),
        }
    }
    for (c, tasks) in kept.iter_mut().enumerate() {
        if tasks.len() > room[c] {
            // Per group, the client's tasks in task order; it gives up the last task of the
            // group it holds most of beyond its share (the last group on a tie), one at a time.
            let mut by_group: BTreeMap<usize, Vec<Task>> = BTreeMap::new();
            for &t in tasks.iter() {
                by_group.entry(mix.group(t)).or_default().push(t);
            }
            for _ in room[c]..tasks.len() {
                let g = by_group
                    .iter()
                    .filter(|(_, ts)| !ts.is_empty())
                    .map(|(&g, _)| g)
                    .fold(None, |best: Option<usize>, g| match best {
                        Some(b) if mix.excess(c, b) > mix.excess(c, g) => Some(b),
                        _ => Some(g),
                    })
                    .ok_or(AssignError::Internal("optimized assignor: stateless room"))?;
                let t = by_group.get_mut(&g).and_then(Vec::pop).ok_or(AssignError::Internal("optimized assignor: stateless room"))?;
                mix.remove(c, t);
                homeless.push(t);
            }
            *tasks = by_group.into_values().flatten().collect();
        }
        for &t in tasks.iter() {
            placement.assign_active(c, t);
        }
        room[c] -= tasks.len();
    }
    homeless.sort_unstable();
    for t in homeless {
        let g = mix.group(t);
        let c = (0..n)
            .filter(|&c| room[c] > 0)
            .min_by(|&a, &b| {
                mix.excess(a, g).total_cmp(&mix.excess(b, g)).then(placement.assigned_load(a).total_cmp(&placement.assigned_load(b))).then(a.cmp(&b))
            })
            .ok_or(AssignError::Internal("optimized assignor: no room for a stateless task"))?;
        room[c] -= 1;
        mix.add(c, t);
        placement.assign_active(c, t);
    }
    Ok(())
}
