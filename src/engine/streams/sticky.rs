//! The broker's sticky assignor end to end: the working state, active tasks, standby tasks, and
//! the target assignment the coordinator keeps (Kafka's `StickyTaskAssignor.assign` and
//! `TargetAssignmentBuilder.build`).

use super::active::assign_active;
use super::input::{StreamsAssignError, StreamsGroupSpec, StreamsTopology, Tasks};
use super::output::{StreamsGroupAssignment, StreamsMemberAssignment};
use super::process::Task;
use super::standby::assign_standby;
use super::state::State;

/// The assignor's name, as `group.streams.assignors` and `streams.assignor.name` know it.
pub const STICKY_ASSIGNOR_NAME: &str = "sticky";

/// Assigns a streams group's tasks as Kafka 4.4.0's broker does with its default assignor,
/// `org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor`, and returns the
/// target assignment the coordinator records from it.
///
/// # Arguments
///
/// * `spec`: the members, in the coordinator's member order, with their current tasks and
///   reported offsets, and the configuration.
/// * `topology`: the subtopologies with their task counts and stateful flags.
///
/// # Returns
///
/// Every member's active and standby tasks; each task active on exactly one member, each standby
/// on a process that does not hold the task otherwise. Warm-up tasks are empty: in 4.4.0 the
/// target carries none and the coordinator's warm-up refinement (with
/// `group.streams.num.warmup.replicas` > 0) hands the target back unchanged, so neither warm-up
/// setting changes the assignment. Racks, client tags, `rack.aware.assignment.tags`, end offsets
/// and task epochs are not read by this assignor.
///
/// # Errors
///
/// [`StreamsAssignError`] for duplicate member or subtopology ids, a subtopology without
/// partitions, more than [`MAX_STREAMS_TASKS`](super::MAX_STREAMS_TASKS) tasks, or tasks
/// without members (where Kafka throws `TaskAssignorException`).
///
/// # Complexity
///
/// O((T + M) log M) for T tasks (replicas included) and M members, plus the scans of previous
/// owners.
///
/// # Example
///
/// ```
/// use kstreams_assignor::engine::streams::{
///     assign_sticky, StreamsAssignError, StreamsAssignmentConfigs, StreamsGroupSpec, StreamsMemberSpec,
///     StreamsSubtopology, StreamsTopology,
/// };
///
/// let topology = StreamsTopology::new([StreamsSubtopology::new("0", 4, true)]);
/// let spec = StreamsGroupSpec::new([
///     StreamsMemberSpec::new("a", "p1").with_active_task("0", 0, 3),
///     StreamsMemberSpec::new("b", "p2"),
/// ])
/// .with_configs(StreamsAssignmentConfigs::default().with_num_standby_replicas(1));
/// let target = assign_sticky(&spec, &topology).unwrap();
/// assert!(target.members["a"].active_tasks["0"].contains(&0));
/// assert_eq!(target.members["b"].task_counts(), (2, 2, 0));
///
/// let empty = StreamsGroupSpec::new([]);
/// assert_eq!(assign_sticky(&empty, &topology), Err(StreamsAssignError::NoMembers("0_0".into())));
/// ```
pub fn assign_sticky(spec: &StreamsGroupSpec, topology: &StreamsTopology) -> Result<StreamsGroupAssignment, StreamsAssignError> {
    let mut state = State::new(spec, topology)?;
    let tasks = |stateful_only: bool| -> Vec<Task> {
        let mut out = Vec::new();
        for (s, &(partitions, stateful)) in state.shape.iter().enumerate() {
            if stateful || !stateful_only {
                out.extend((0..partitions).map(|p| (s as u32, p)));
            }
        }
        out
    };
    let (active, stateful) = (tasks(false), if state.num_standby_replicas > 0 { tasks(true) } else { Vec::new() });
    assign_active(&mut state, active)?;
    if state.num_standby_replicas > 0 {
        assign_standby(&mut state, stateful);
    }
    let named = |list: &[Task]| -> Tasks {
        let mut out = Tasks::new();
        for &(s, p) in list {
            out.entry(state.subtopologies[s as usize].clone()).or_default().insert(p);
        }
        out
    };
    let members = state
        .member_ids
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let assignment = StreamsMemberAssignment {
                active_tasks: named(&state.members.active[m]),
                standby_tasks: named(&state.members.standby[m]),
                warmup_tasks: Tasks::new(),
            };
            (id.clone(), assignment)
        })
        .collect();
    Ok(StreamsGroupAssignment { members })
}
