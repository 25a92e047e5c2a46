//! The rack-aware optimisation's default costs, shared by the assignors that run it (Kafka's
//! `RackAwareTaskAssignor` constants and each assignor's defaults).

/// Default rack-aware traffic cost of `HighAvailabilityTaskAssignor`
/// (`DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST`); also this crate's optimized assignor's.
pub(crate) const HIGH_AVAILABILITY_TRAFFIC_COST: i32 = 10;
/// Default rack-aware non-overlap cost of `HighAvailabilityTaskAssignor`
/// (`DEFAULT_HIGH_AVAILABILITY_NON_OVERLAP_COST`); also this crate's optimized assignor's.
pub(crate) const HIGH_AVAILABILITY_NON_OVERLAP_COST: i32 = 1;
/// Rack-aware costs for stateless tasks (`STATELESS_TRAFFIC_COST`, `STATELESS_NON_OVERLAP_COST`).
pub(crate) const STATELESS_COSTS: (i32, i32) = (1, 0);
/// Default rack-aware traffic cost of `LegacyStickyTaskAssignor`.
pub(crate) const LEGACY_STICKY_TRAFFIC_COST: i32 = 1;
/// Default rack-aware non-overlap cost of `LegacyStickyTaskAssignor`.
pub(crate) const LEGACY_STICKY_NON_OVERLAP_COST: i32 = 10;
