//! Kafka's assignors and the mechanisms they share, ported for parity: each file is one Kafka
//! class (or the part of `StreamsPartitionAssignor` an assignor depends on).

pub(crate) mod balance;
pub(crate) mod fallback_prior;
pub(crate) mod high_availability;
pub(crate) mod leader_collections;
pub(crate) mod legacy_sticky;
pub(crate) mod priority_set;
pub(crate) mod standby;
pub(crate) mod task_movement;
