//! What the group leader's assignment takes in: the JoinGroup members, the changelogs' end
//! offsets, the leader's configuration and what it saw at the previous rebalance.

use std::collections::BTreeMap;

use super::tasks::ClusterMetadata;
use super::topology::Topology;
use crate::engine::{AssignmentConfigs, AssignorKind, PreviousRebalance};
use crate::wire::{ProcessId, TopicPartition};

/// One JoinGroup member, as the group coordinator hands it to the leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinMember {
    /// The member id.
    pub member_id: String,
    /// `group.instance.id` (static membership), if set.
    pub group_instance_id: Option<String>,
    /// The member metadata: a `ConsumerProtocolSubscription` envelope.
    pub subscription: Vec<u8>,
}

impl JoinMember {
    /// A dynamic member.
    pub fn new(member_id: impl Into<String>, subscription: Vec<u8>) -> Self {
        Self { member_id: member_id.into(), group_instance_id: None, subscription }
    }

    /// Sets the group instance id.
    pub fn with_group_instance_id(mut self, id: impl Into<String>) -> Self {
        self.group_instance_id = Some(id.into());
        self
    }
}

/// The changelog end offsets the leader fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangelogEndOffsets {
    /// The end offset of every changelog partition (for a source topic used as changelog: the
    /// committed offset). A changelog partition missing here makes the offsets unavailable, as
    /// a failed fetch does in Kafka.
    Available(BTreeMap<TopicPartition, i64>),
    /// Fetching failed: lags are unknown and the fallback assignor runs.
    Unavailable,
}

/// The leader's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaderConfig {
    /// The task assignor's configuration.
    pub assignment: AssignmentConfigs,
    /// The configured task assignor.
    pub assignor: AssignorKind,
}

/// Everything the leader's assignment depends on: build it with [`LeaderInput::new`] and the
/// `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LeaderInput<'a> {
    /// The JoinGroup members.
    pub members: &'a [JoinMember],
    /// The topology.
    pub topology: &'a Topology,
    /// Partition counts of the external topics (repartition topics are derived).
    pub metadata: &'a ClusterMetadata,
    /// The changelog end offsets.
    pub end_offsets: &'a ChangelogEndOffsets,
    /// The leader's own process id (its client gets the probing deadline).
    pub leader_process_id: ProcessId,
    /// Members that take part in the group but not in the task assignment (a leader that
    /// processes nothing itself): see [Excluded members](self#excluded-members).
    pub excluded_members: &'a [String],
    /// The leader's clock (epoch ms).
    pub now_ms: i64,
    /// The configuration.
    pub config: &'a LeaderConfig,
    /// What this leader saw at the group's previous rebalance (`AssignmentReport::snapshot`),
    /// if it led that one too: the optimized assignor estimates restore rates from it. Kafka's
    /// assignors ignore it.
    pub previous_rebalance: Option<&'a RebalanceSnapshot>,
    /// The most threads the members' assignments are split and encoded on (`None`: the
    /// machine's available parallelism). Each thread takes at least 32 members, so small groups
    /// stay on the caller's thread; the result does not depend on the number.
    pub threads: Option<usize>,
    /// Whether [`assign`](super::assign()) first checks the topology against the members'
    /// subscriptions ([`check_topology`](super::check_topology)); on by default. Off, the
    /// leader assigns from the topology whatever the members subscribe to, as Kafka's leader
    /// (whose topology is the application's own) does.
    pub check_topology: bool,
}

static DEFAULT_CONFIG: std::sync::LazyLock<LeaderConfig> = std::sync::LazyLock::new(LeaderConfig::default);

impl<'a> LeaderInput<'a> {
    /// The input of a leader whose own client is `leader_process_id`, with the default
    /// [`LeaderConfig`], no excluded member, the clock at 0 and no previous rebalance.
    pub fn new(
        members: &'a [JoinMember],
        topology: &'a Topology,
        metadata: &'a ClusterMetadata,
        end_offsets: &'a ChangelogEndOffsets,
        leader_process_id: ProcessId,
    ) -> Self {
        Self {
            members,
            topology,
            metadata,
            end_offsets,
            leader_process_id,
            excluded_members: &[],
            now_ms: 0,
            config: &DEFAULT_CONFIG,
            previous_rebalance: None,
            threads: None,
            check_topology: true,
        }
    }

    /// Sets the configuration.
    pub fn with_config(mut self, config: &'a LeaderConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets the members that take part in the group but not in the task assignment.
    pub fn with_excluded_members(mut self, member_ids: &'a [String]) -> Self {
        self.excluded_members = member_ids;
        self
    }

    /// Sets the leader's clock (epoch ms).
    pub fn with_now_ms(mut self, now_ms: i64) -> Self {
        self.now_ms = now_ms;
        self
    }

    /// Sets the most threads the members' assignments are encoded on (1: the caller's thread
    /// alone; 0 counts as 1).
    ///
    /// ```
    /// # use kstreams_assignor::leader::{ChangelogEndOffsets, ClusterMetadata, LeaderInput, Topology};
    /// # use kstreams_assignor::wire::ProcessId;
    /// # let topology = Topology::from_describe(&std::fs::read_to_string("fixtures/leader/word-count.describe.txt").unwrap(), "wc").unwrap();
    /// # let metadata = ClusterMetadata::new().with_topic("text-lines", 2);
    /// let input = LeaderInput::new(&[], &topology, &metadata, &ChangelogEndOffsets::Unavailable, ProcessId::NIL).with_threads(1);
    /// assert_eq!(input.threads, Some(1));
    /// ```
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Turns the check of the topology against the members' subscriptions on or off (see
    /// [`LeaderInput::check_topology`]).
    pub fn with_topology_check(mut self, on: bool) -> Self {
        self.check_topology = on;
        self
    }

    /// Sets (or, with `None`, clears) what this leader saw at the group's previous rebalance.
    pub fn with_previous_rebalance(mut self, snapshot: impl Into<Option<&'a RebalanceSnapshot>>) -> Self {
        self.previous_rebalance = snapshot.into();
        self
    }
}

/// The offset sums a leader saw at one rebalance and when, to pass to the next one
/// ([`LeaderInput::previous_rebalance`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RebalanceSnapshot {
    /// The leader's clock then (epoch ms).
    pub at_ms: i64,
    /// The changelog end-offset sums and each client's offset sums then (its `elapsed_ms` is 0).
    pub sums: PreviousRebalance,
}

impl RebalanceSnapshot {
    /// The engine's view of this snapshot from a rebalance at `now_ms`.
    pub fn as_previous(&self, now_ms: i64) -> PreviousRebalance {
        let mut previous = self.sums.clone();
        previous.elapsed_ms = now_ms.saturating_sub(self.at_ms);
        previous
    }
}
