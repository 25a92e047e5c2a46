//! The page of `assign --html`: the assignment as a grid of clients (processes) by tasks, each
//! cell the task's role on the client, and what changed against the input's previous owners.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::sync::Arc;

use super::html::{escape, figures, page, panel};
use crate::engine::{Assignment, AssignmentInput, ClientAssignment};
use crate::wire::{LATEST_OFFSET, ProcessId, TaskId};

/// The role of a task on a client, as the grid shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Active,
    Standby,
    Warmup,
    Spare,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Active => "active",
            Role::Standby => "standby",
            Role::Warmup => "warmup",
            Role::Spare => "spare",
        }
    }

    fn letter(self) -> &'static str {
        match self {
            Role::Active => "A",
            Role::Standby => "S",
            Role::Warmup => "W",
            Role::Spare => "s",
        }
    }
}

/// What the input says each client held: Kafka's previous active tasks (offset sum
/// `LATEST_OFFSET`, or owned partitions) and previous standby tasks (the other reported sums).
#[derive(Debug, Default)]
pub(super) struct Previous {
    /// Per task, the clients that ran it as active.
    pub(super) active: BTreeMap<TaskId, BTreeSet<ProcessId>>,
    /// (client, task) pairs of previous standby tasks.
    pub(super) standby: BTreeSet<(ProcessId, TaskId)>,
}

impl Previous {
    pub(super) fn of(input: &AssignmentInput) -> Self {
        let mut p = Previous::default();
        for c in &input.clients {
            for t in &c.owned_active_tasks {
                p.active.entry(t.clone()).or_default().insert(c.process_id);
            }
            for (t, &sum) in &c.task_offset_sums {
                if sum == LATEST_OFFSET {
                    p.active.entry(t.clone()).or_default().insert(c.process_id);
                } else if !c.owned_active_tasks.contains(t) {
                    p.standby.insert((c.process_id, t.clone()));
                }
            }
        }
        p
    }

    fn was_active(&self, client: &ProcessId, task: &TaskId) -> bool {
        self.active.get(task).is_some_and(|owners| owners.contains(client))
    }

    /// Whether the active copy of `task` on `client` changed owner: some other client ran it.
    pub(super) fn moved_here(&self, client: &ProcessId, task: &TaskId) -> bool {
        self.active.get(task).is_some_and(|owners| !owners.is_empty() && !owners.contains(client))
    }
}

/// The role of each task on one client of the assignment.
fn roles(c: &ClientAssignment) -> BTreeMap<&TaskId, Role> {
    let mut out = BTreeMap::new();
    for t in &c.standby_tasks {
        out.insert(t, Role::Standby);
    }
    for t in &c.spare_tasks {
        out.insert(t, Role::Spare);
    }
    for t in &c.warmup_tasks {
        out.insert(t, Role::Warmup);
    }
    for t in &c.active_tasks {
        out.insert(t, Role::Active);
    }
    out
}

fn short(p: &ProcessId) -> String {
    p.to_string().chars().take(8).collect()
}

/// A sub-topology: its named topology, if any, and its id.
type Subtopology = (Option<Arc<str>>, i32);

/// The counts the page's summary shows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) active: usize,
    pub(super) standby: usize,
    pub(super) warmup: usize,
    pub(super) spare: usize,
    /// Active tasks whose owner changed.
    pub(super) moved: usize,
    /// Active tasks that no client ran before.
    pub(super) new_active: usize,
    /// Copies (any role) of stateful tasks on clients that reported no state for them.
    pub(super) from_scratch: usize,
    /// Previous active owners that no longer run the task as active (an empty cell, or another
    /// role).
    pub(super) left: usize,
}

/// `assign --html`: the grid of `out` (the answer to `input`). Rows are the clients (each a
/// process with its stream threads), columns the tasks grouped by sub-topology; a cell shows the
/// task's role there (active, standby, warm-up, spare), outlined when the active task moved here
/// from another client, underlined when the copy starts without local state, and dashed where a
/// client ran the task as active before and runs it no more. A legend and the counts come first.
pub fn assign_html(input: &AssignmentInput, out: &Assignment) -> String {
    let previous = Previous::of(input);
    let mut tasks: BTreeSet<&TaskId> = input.stateful_tasks.iter().chain(&input.stateless_tasks).collect();
    for c in &out.clients {
        tasks.extend(c.active_tasks.iter().chain(&c.standby_tasks));
    }
    let mut groups: Vec<(Subtopology, usize)> = Vec::new();
    for t in &tasks {
        let key = (t.topology.clone(), t.subtopology);
        match groups.last_mut() {
            Some((k, n)) if *k == key => *n += 1,
            _ => groups.push((key, 1)),
        }
    }
    let reported: BTreeMap<&ProcessId, &crate::engine::ClientInput> = input.clients.iter().map(|c| (&c.process_id, c)).collect();
    let any_spare = out.clients.iter().any(|c| !c.spare_tasks.is_empty());
    let totals: &[Role] =
        if any_spare { &[Role::Active, Role::Standby, Role::Warmup, Role::Spare] } else { &[Role::Active, Role::Standby, Role::Warmup] };

    let mut grid = String::from("<table id=\"grid\">\n<thead><tr><th class=\"who\" rowspan=\"2\">process</th>");
    for ((topology, sub), n) in &groups {
        let name = match topology {
            Some(t) => format!("{t} · sub-topology {sub}"),
            None => format!("sub-topology {sub}"),
        };
        let _ = write!(grid, "<th colspan=\"{n}\">{}</th>", escape(&name));
    }
    let _ = write!(grid, "<th colspan=\"{}\">tasks</th></tr>\n<tr>", totals.len());
    for t in &tasks {
        let kind = if input.stateful_tasks.contains(*t) { "stateful" } else { "stateless" };
        let _ = write!(grid, "<th class=\"{kind}\" title=\"task {} ({kind})\">{}</th>", escape(&t.to_string()), t.partition);
    }
    for r in totals {
        let _ = write!(grid, "<th title=\"{}\">{}</th>", r.name(), r.letter());
    }
    grid.push_str("</tr></thead>\n<tbody>\n");

    let mut counts = Counts::default();
    let mut copies: BTreeMap<&TaskId, (usize, usize)> = tasks.iter().map(|t| (*t, (0, 0))).collect();
    for c in &out.clients {
        let pid = c.process_id;
        let client = reported.get(&pid);
        let mut label = format!("process {}", short(&pid));
        if let Some(ci) = client {
            let _ = write!(label, " · {} thread{}", ci.capacity, if ci.capacity == 1 { "" } else { "s" });
            if let Some(rack) = &ci.rack_id {
                let _ = write!(label, " · rack {rack}");
            }
            for (k, v) in &ci.client_tags {
                let _ = write!(label, " · {k}={v}");
            }
        }
        let _ = write!(
            grid,
            "<tr class=\"member\" data-process-id=\"{0}\"><th class=\"who mono\" title=\"{0}\">{1}</th>",
            escape(&pid.to_string()),
            escape(&label)
        );
        let roles = roles(c);
        for t in &tasks {
            let id = escape(&t.to_string());
            let Some(&role) = roles.get(*t) else {
                if previous.was_active(&pid, t) {
                    counts.left += 1;
                    let _ = write!(
                        grid,
                        "<td data-task=\"{id}\"><span class=\"cell left\" title=\"task {id}: active here before, no more\">a</span></td>"
                    );
                } else {
                    let _ = write!(grid, "<td data-task=\"{id}\"></td>");
                }
                continue;
            };
            let mut class = format!("cell role-{}", role.name());
            let mut title = format!("task {id}: {}", role.name());
            let entry = copies.get_mut(*t).expect("every task has a column");
            if role == Role::Active {
                entry.0 += 1;
                if previous.moved_here(&pid, t) {
                    counts.moved += 1;
                    class.push_str(" moved");
                    let from: Vec<String> = previous.active[*t].iter().map(short).collect();
                    let _ = write!(title, " (moved here from {})", escape(&from.join(", ")));
                } else if !previous.active.contains_key(*t) {
                    counts.new_active += 1;
                    title.push_str(" (no client ran it before)");
                }
            } else {
                entry.1 += 1;
                if previous.was_active(&pid, t) {
                    counts.left += 1;
                    class.push_str(" was-active");
                    title.push_str(" (active here before)");
                }
            }
            let has_state = client.is_some_and(|ci| ci.task_offset_sums.contains_key(*t) || ci.owned_active_tasks.contains(*t));
            if input.stateful_tasks.contains(*t) && !has_state {
                counts.from_scratch += 1;
                class.push_str(" fresh");
                title.push_str(", no local state");
            } else if previous.standby.contains(&(pid, (*t).clone())) && role == Role::Active {
                title.push_str(", from its standby copy");
            }
            match role {
                Role::Active => counts.active += 1,
                Role::Standby => counts.standby += 1,
                Role::Warmup => counts.warmup += 1,
                Role::Spare => counts.spare += 1,
            }
            let _ = write!(
                grid,
                "<td data-task=\"{id}\" data-role=\"{}\"><span class=\"{class}\" title=\"{title}\">{}</span></td>",
                role.name(),
                role.letter()
            );
        }
        for r in totals {
            let n = roles.values().filter(|x| *x == r).count();
            let _ = write!(grid, "<td class=\"total\" data-key=\"{}\">{n}</td>", r.name());
        }
        grid.push_str("</tr>\n");
    }
    grid.push_str("</tbody>\n<tfoot><tr><th class=\"who\">copies (active + others)</th>");
    let mut missing = 0;
    for (t, (a, others)) in &copies {
        let id = escape(&t.to_string());
        if *a == 0 {
            missing += 1;
            let _ = write!(grid, "<td title=\"task {id}: no active copy\"><span class=\"cell missing\">!</span></td>");
        } else {
            let _ = write!(grid, "<td title=\"task {id}: {a} active, {others} other\">{}</td>", a + others);
        }
    }
    for r in totals {
        let n = match r {
            Role::Active => counts.active,
            Role::Standby => counts.standby,
            Role::Warmup => counts.warmup,
            Role::Spare => counts.spare,
        };
        let _ = write!(grid, "<td class=\"total\">{n}</td>");
    }
    grid.push_str("</tr></tfoot>\n</table>\n");

    let legend = "<div class=\"legend\">\
        <span class=\"cell role-active\">A</span> active \
        <span class=\"cell role-standby\">S</span> standby \
        <span class=\"cell role-warmup\">W</span> warm-up \
        <span class=\"cell role-spare\">s</span> spare \
        <span class=\"cell moved\">A</span> moved here from another client \
        <span class=\"cell role-standby fresh\">S</span> starts without local state \
        <span class=\"cell left\">a</span> <span class=\"cell role-standby was-active\">S</span> ran it as active before, no more\
        </div>\n";
    let probing = if out.followup.probing_rebalance_needed {
        format!("in {}", crate::sim::format_ms(out.followup.probing_rebalance_interval_ms))
    } else {
        "not needed".to_owned()
    };
    let summary = figures(&[
        ("clients", "clients", out.clients.len().to_string()),
        (
            "tasks (stateful + stateless)",
            "tasks",
            format!("{} ({} + {})", tasks.len(), input.stateful_tasks.len(), input.stateless_tasks.len()),
        ),
        ("active", "active", counts.active.to_string()),
        ("standby", "standby", counts.standby.to_string()),
        ("warm-up", "warmup", counts.warmup.to_string()),
        ("spare", "spare", counts.spare.to_string()),
        ("active tasks moved", "moved", counts.moved.to_string()),
        ("active tasks new (no previous owner)", "newActive", counts.new_active.to_string()),
        ("copies without local state", "fromScratch", counts.from_scratch.to_string()),
        ("previous actives given up", "left", counts.left.to_string()),
        ("tasks without an active copy", "missing", missing.to_string()),
        ("probing rebalance", "probing", probing),
    ]);
    let note = format!(
        "<p class=\"note\">Previous owners are the input's: a client's previous active tasks are those it reported at offset sum {LATEST_OFFSET} \
         or owned the partitions of, its previous standby tasks the other tasks it reported. {} warm-up(s) on the follow-up's watch list.</p>\n",
        out.followup.watch_list.len()
    );
    let mut body = panel("summary", "Summary", &summary);
    body += &panel("assignment", "Assignment", &format!("{legend}<div class=\"grid-wrap\">{grid}</div>{note}"));
    page("assign", &out.assignor, &body)
}
