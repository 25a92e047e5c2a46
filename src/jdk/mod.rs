//! The JDK 17 behaviour Kafka's decisions depend on, one implementation of each: hash codes
//! ([`hash`]), `compareTo` orders ([`cmp`]), the iteration order of `java.util.HashMap` and
//! `HashSet` ([`hash_map`], its tree bins included, and [`hash_set`]) and the heap of
//! `java.util.PriorityQueue` ([`priority_queue`]).
//!
//! Iteration orders are JDK-specific; these are JDK 17's (the pinned environment), which did not
//! change between JDK 8 and 17 except for `new HashSet(collection)` sizing in JDK 19.

pub(crate) mod cmp;
pub(crate) mod hash;
pub(crate) mod hash_map;
pub(crate) mod hash_set;
pub(crate) mod priority_queue;
