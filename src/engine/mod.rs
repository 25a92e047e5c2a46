//! Kafka Streams' task assignors, deciding exactly as the Java classes of
//! `org.apache.kafka:kafka-streams:4.4.0` do.
//!
//! The engine is sans-IO and deterministic: an [`AssignmentInput`] (the clients with their
//! capacities, reported offset sums and tags, the stateful and stateless tasks, the changelog
//! end-offset sums and the [`AssignmentConfigs`]) goes in, an [`Assignment`] (active, standby and
//! warm-up tasks per client, and whether a probing rebalance should follow) comes out.
//!
//! | assignor | Kafka class | file |
//! |---|---|---|
//! | [`HighAvailabilityTaskAssignor`] | `HighAvailabilityTaskAssignor` (default) | `kafka/high_availability.rs`, `kafka/task_movement.rs`, `kafka/balance.rs` |
//! | default standby placement | `DefaultStandbyTaskAssignor` | `kafka/standby/default.rs` |
//! | tag-aware standby placement (KIP-708) | `ClientTagAwareStandbyTaskAssignor` | `kafka/standby/client_tag_aware.rs` |
//! | the clients' priority queue | `ConstrainedPrioritySet` | `kafka/priority_set.rs` |
//! | [`LegacyStickyTaskAssignor`] | `LegacyStickyTaskAssignor` | `kafka/legacy_sticky.rs`, `kafka/leader_collections.rs` |
//! | [`FallbackPriorTaskAssignor`] | `FallbackPriorTaskAssignor` | `kafka/fallback_prior.rs` |
//! | rack-aware optimisation (KIP-925) | `RackAwareTaskAssignor` | `rack_aware/` |
//! | [`OptimizedTaskAssignor`] | none (this crate's; not a parity assignor) | `optimized/` (one file per step) |
//!
//! The rest of the module: the public model ([`AssignmentConfigs`] in `config.rs`,
//! [`AssignmentInput`] in `input.rs`, [`Assignment`] in `output.rs`, the [`TaskAssignor`] trait
//! in `assignor.rs`, [`AssignorKind`] and [`assign`] in `registry.rs`, [`TaskLag`] in
//! `task_lag.rs`); the internal model (`model.rs`, its task index and flat reported offset sums in
//! `model_index.rs`, the lag tables in `lags.rs`), the rack-aware
//! default costs (`costs.rs`) and what a leader keeps for the next rebalance's restore rates, with
//! when it may use it (`snapshot.rs`). The JDK's collections, hash codes and orders that the
//! assignors depend on are the crate's `jdk` module.
//!
//! [`assign`] also makes the leader's choice between them. Rack-aware optimisation (KIP-925,
//! `rack_aware/`) runs where Kafka's does, when the input carries the racks of the tasks'
//! partitions ([`AssignmentInput::task_partitions`]). For active tasks it reaches Kafka's optimal
//! cost but may pick a different one of several equally cheap placements; the standby swaps follow
//! Kafka's rounds, whose end point depends on such ties. Without partition racks the output is
//! Kafka's exactly, as before.
//!
//! Java decides ties by its own orders, which the engine reproduces: process ids as Java's
//! `UUID.compareTo` ([`cmp_process_ids`]), task ids as `TaskId.compareTo` ([`cmp_task_ids`]),
//! loads as `double`s computed in Java's operation order, priority queues keyed `(load, process
//! id)`, the heap of `java.util.PriorityQueue` where Kafka's queue goes out of order (tied task
//! movements; task movements that change queued clients' loads), and the iteration order of JDK
//! 17's `HashMap`/`HashSet` (tree bins included) where Kafka iterates one. Where Kafka's answer
//! depends on something outside the input, the engine fixes it: members join in ascending
//! `ProcessId` order (this only matters to the legacy sticky assignor, for process ids that share
//! a hash bucket) and the leader builds its task collections as `StreamsPartitionAssignor` does
//! for sub-topologies numbered from 0.
//!
//! ```
//! use kstreams_assignor::engine::{assign, AssignmentConfigs, AssignmentInput, AssignorKind, ClientInput};
//! use kstreams_assignor::wire::{ProcessId, TaskId};
//!
//! let clients = ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"];
//! let mut input = AssignmentInput::new().with_configs(AssignmentConfigs::default().with_num_standby_replicas(1));
//! for id in clients {
//!     input = input.with_client(ClientInput::new(id.parse().unwrap(), 2));
//! }
//! let input = input.with_stateful_tasks((0..4).map(|p| (TaskId::new(0, p), 0)));
//! let out = assign(AssignorKind::HighAvailability, &input).unwrap();
//! for client in &out.clients {
//!     assert_eq!((client.active_tasks.len(), client.standby_tasks.len()), (2, 2));
//! }
//! ```

mod assignor;
mod config;
mod costs;
mod input;
mod kafka;
mod lags;
mod model;
mod model_index;
mod optimized;
mod output;
mod rack_aware;
mod registry;
pub(crate) mod snapshot;
pub mod streams;
mod task_lag;
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;

pub use assignor::{AssignError, TaskAssignor};
pub use config::{
    ASSIGNMENT_CONFIG_KEYS, AssignmentConfigs, ConfigError, MAX_RACK_AWARE_ASSIGNMENT_TAGS, RackAwareStrategy, SetConfigError,
};
pub use crate::jdk::cmp::{cmp_process_ids, cmp_task_ids};
pub use input::{AssignmentInput, ClientInput, InputError, PreviousRebalance, TaskPartitions};
pub use kafka::fallback_prior::FallbackPriorTaskAssignor;
pub use kafka::high_availability::HighAvailabilityTaskAssignor;
pub use kafka::legacy_sticky::LegacyStickyTaskAssignor;
pub use optimized::{FIRST_PROBE_MS, MIN_PROBE_MS, OptimizedTaskAssignor};
pub use output::{Assignment, AssignmentSummary, ClientAssignment, Followup, Warmup};
pub use rack_aware::{RackAwareError, RackAwareOutcome, RackAwareStep, TaskPlacement, optimize_rack_aware};
pub use registry::{AssignorKind, UnknownAssignor, assign, effective_assignor};
pub use task_lag::TaskLag;
