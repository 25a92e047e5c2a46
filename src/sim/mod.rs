//! A convergence simulator: successive rebalances of a Kafka Streams group over simulated time.
//!
//! Members join, leave, crash and come back; the leader changes; changelogs grow; state restores
//! at a configurable rate, so warm-ups catch up and probing rebalances fire when the assignor asks
//! for them. Any [`TaskAssignor`](crate::engine::TaskAssignor) runs in it until the assignment
//! is stable, and every rebalance is recorded: tasks moved, warm-ups, load spread, and lag still
//! to restore on active tasks (the unavailability KIP-441 set out to avoid).
//!
//! The simulator is sans-IO and deterministic: time is simulated milliseconds, randomness comes
//! from the scenario's seed.
//!
//! ```
//! use kstreams_assignor::engine::AssignorKind;
//! use kstreams_assignor::sim::{self, SimConfig};
//!
//! let scenario = sim::builtin("scale-out", 0).unwrap();
//! let report = sim::run(AssignorKind::HighAvailability.assignor(), &scenario, &SimConfig::default()).unwrap();
//! assert!(report.converged);
//! assert!(report.rounds.iter().any(|r| r.warmups > 0));
//! ```
//!
//! The files, each using only those above it:
//!
//! | file | holds |
//! | --- | --- |
//! | `config.rs` | [`SimConfig`]: restore and produce rates, the state cleaner's delay, how long to run |
//! | `scenario.rs` | [`Scenario`]s, their members and events, and the built-in ones |
//! | `report.rs` | what a run gives back: [`Report`], its [`Round`]s, or a [`SimError`] |
//! | `table.rs` | the round-by-round text table ([`Report::table`]) |
//! | `svg.rs` | a plot of runs ([`render_svg`]) |
//! | `world.rs` | the members and their state, changelogs, restores, the state-directory cleaner |
//! | `metrics.rs` | per rebalance: the restores it starts, load spreads, what a departure would cost |
//! | `lower_bound.rs` | the movement lower bound ([`Report::lower_bound`]) |
//! | `run.rs` | the driver: events, rebalances and probing rebalances until stable ([`run`]) |
//! | `compare.rs` | two assignors side by side and the targets one must meet ([`compare`]) |
//! | `streams/` | the scenarios on the streams rebalance protocol ([`run_streams`]) |
//! | `protocols.rs` | both protocols side by side, four runs a scenario ([`compare_protocols`]) |

mod compare;
mod config;
mod lower_bound;
mod metrics;
mod protocols;
mod report;
mod run;
mod scenario;
mod streams;
mod svg;
mod table;
mod world;

pub use compare::{Comparison, ComparisonRow, SameInputs, Summary, Target, churn_scenarios, compare, compare_suite, suite_scenarios};
pub use config::{STATE_CLEANUP_DELAY_MS, SimConfig};
pub use report::{Report, Round, SimError};
pub use run::{run, run_with_shadow};
pub use scenario::{AVAILABILITY_SCENARIOS, BUILTIN_SCENARIOS, Event, EventKind, MemberSpec, Scenario, Subtopology, availability_scenarios, builtin};
pub use protocols::{PROTOCOL_RUNS, ProtocolComparison, ProtocolRow, ProtocolRun, compare_protocols};
pub use streams::{FirstDifference, StickyOnSameInputs, StreamsAssignor, StreamsConfig, StreamsReport, run_streams};
pub use svg::render_svg;
pub use table::format_ms;
