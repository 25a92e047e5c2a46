//! The member of a streams group (KIP-1071, `group.protocol=streams`): no leader, no
//! assignment bytes; the group coordinator runs the task assignor and tells each member its
//! tasks in `StreamsGroupHeartbeat` answers. The protocol as a sans-IO state machine
//! (`machine`), the blocking member over a [`client`](crate::client) connection
//! ([`StreamsGroupMember`]), the topology it declares (`topology`) and what it reports
//! ([`events`]). Its task callbacks are the classic member's: [`TaskCallbacks`](crate::member::TaskCallbacks).

mod driver;
pub mod events;
mod fixed_counts;
mod machine;
#[cfg(test)]
mod machine_tests;
pub mod probe;
mod topology;

pub use driver::{ClientTags, StreamsGroupMember, TopologySource, parse_endpoint};
pub use events::{StreamsEvent, StreamsMemberError, status_text};
pub use events::MemberState;
pub use probe::{Look, ProbeError, ProbeEvent, StreamsProber, Verdict};
