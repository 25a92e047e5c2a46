//! The leader's first stage: every JoinGroup subscription decoded once and folded into clients,
//! one per process, as `StreamsPartitionAssignor` folds them (see [`assign`](super::assign())).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use super::input::LeaderInput;
use super::java_order::java_subscription_order;
use super::output::{AssignmentReport, LeaderError};
use super::threads::cmp_member_ids;
use crate::wire::{
    AssignorError, HostInfo, LATEST_SUPPORTED_VERSION, ProcessId, SubscriptionEnvelope, SubscriptionInfo, TaskId,
    TopicPartition,
};

/// The process id of the synthetic client that holds every member from the future (Kafka draws
/// a random one per assignor instance; a fixed one keeps the result reproducible).
pub const FUTURE_PROCESS_ID: ProcessId = ProcessId(uuid::Uuid::from_u128(0xffff_ffff_ffff_ffff_ffff_ffff_ffff_fffe));

/// One client as the leader aggregates it.
pub(crate) struct Client {
    pub(crate) endpoint: Option<HostInfo>,
    pub(crate) tags: BTreeMap<String, String>,
    /// The rack every member so far sent (`None` once one sent none or another one).
    pub(crate) rack: Option<String>,
    pub(crate) consumers: Vec<String>,
    /// Owned partition → consumer (a later owner replaces an earlier one).
    pub(crate) owned: BTreeMap<TopicPartition, String>,
    pub(crate) offset_sums: BTreeMap<TaskId, i64>,
    pub(crate) consumer_tasks: BTreeMap<String, BTreeSet<TaskId>>,
}

/// The group as the leader sees it once every subscription is read.
pub(crate) struct Members {
    pub(crate) clients: BTreeMap<ProcessId, Client>,
    /// Every partition some member owns.
    pub(crate) all_owned: BTreeSet<TopicPartition>,
    /// The minimum used version (at most [`LATEST_SUPPORTED_VERSION`]).
    pub(crate) min_used: i32,
    /// The minimum latest-supported version.
    pub(crate) min_supported: i32,
    /// The version of a member from the future (the last one seen).
    pub(crate) future_version: Option<i32>,
    /// Whether a member asked for the group to shut down.
    pub(crate) shutdown: bool,
    /// The members the input excludes from assignment, with their process ids.
    pub(crate) excluded: Vec<(String, ProcessId)>,
    /// The client of each member Kafka visits, in that order (excluded members left out).
    pub(crate) visited_clients: Vec<ProcessId>,
    /// The process id each member sent, excluded members and members from the future included.
    pub(crate) process_ids: BTreeMap<String, ProcessId>,
}

impl Members {
    /// The report's first lines: versions and clients; nothing decided yet.
    pub(crate) fn report(&self) -> AssignmentReport {
        AssignmentReport {
            min_used_version: self.min_used,
            min_supported_version: self.min_supported,
            future_version: self.future_version,
            version_probing: false,
            clients: self
                .clients
                .iter()
                .map(|(p, c)| {
                    let mut consumers = c.consumers.clone();
                    consumers.sort_by(|a, b| cmp_member_ids(a, b));
                    (*p, consumers)
                })
                .collect(),
            error: None,
            assignment: None,
            effective_assignor: None,
            snapshot: None,
            member_assignments: Vec::new(),
            infos: BTreeMap::new(),
            process_ids: self.process_ids.clone(),
        }
    }
}

/// Decodes every subscription and folds the members into clients (step 1 of
/// [`assign`](super::assign())).
pub(crate) fn aggregate_members(input: &LeaderInput<'_>) -> Result<Members, LeaderError> {
    let mut seen = BTreeSet::new();
    for member in input.members {
        if !seen.insert(member.member_id.clone()) {
            return Err(LeaderError::DuplicateMember(member.member_id.clone()));
        }
    }
    let mut members = Members {
        clients: BTreeMap::new(),
        all_owned: BTreeSet::new(),
        min_used: LATEST_SUPPORTED_VERSION,
        min_supported: LATEST_SUPPORTED_VERSION,
        future_version: None,
        shutdown: false,
        excluded: Vec::new(),
        visited_clients: Vec::new(),
        process_ids: BTreeMap::new(),
    };
    // Every owned partition, gathered and then sorted once (faster than a set grown one by one).
    let mut owned = Vec::new();
    // Kafka visits the members in its subscriptions map's order: where members of one process
    // disagree, that order decides whose endpoint and tags the client gets and whose offset
    // sums win.
    for k in java_subscription_order(input.members.iter().map(|m| m.member_id.as_str())) {
        let member = &input.members[k];
        let id = &member.member_id;
        let decode_err = |source| LeaderError::Decode { member: id.clone(), source };
        let envelope = SubscriptionEnvelope::decode(&member.subscription).map_err(decode_err)?;
        let user_data = envelope.user_data.as_deref().ok_or_else(|| LeaderError::NoUserData(id.clone()))?;
        let info = SubscriptionInfo::decode(user_data).map_err(decode_err)?;
        members.add(input, id, &envelope, &info, &mut owned)?;
    }
    members.all_owned = owned.into_iter().collect();
    Ok(members)
}

impl Members {
    /// Adds one member's subscription; its owned partitions also go to `all_owned`.
    fn add(
        &mut self,
        input: &LeaderInput<'_>,
        id: &String,
        envelope: &SubscriptionEnvelope,
        info: &SubscriptionInfo,
        all_owned: &mut Vec<TopicPartition>,
    ) -> Result<(), LeaderError> {
        if info.error_code == AssignorError::SHUTDOWN_REQUESTED {
            self.shutdown = true;
        }
        self.min_used = self.min_used.min(info.version);
        self.min_supported = self.min_supported.min(info.latest_supported_version);
        self.process_ids.insert(id.clone(), info.process_id);
        if input.excluded_members.contains(id) {
            self.excluded.push((id.clone(), info.process_id));
            return Ok(());
        }
        let process_id = if info.version > LATEST_SUPPORTED_VERSION {
            self.future_version = Some(info.version);
            FUTURE_PROCESS_ID
        } else {
            info.process_id
        };
        self.visited_clients.push(process_id);
        let client = match self.clients.entry(process_id) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let (endpoint, tags) = if process_id == FUTURE_PROCESS_ID && info.version > LATEST_SUPPORTED_VERSION {
                    (None, BTreeMap::new())
                } else {
                    let endpoint = HostInfo::from_endpoint(&info.user_end_point().unwrap_or_default())
                        .map_err(|source| LeaderError::Endpoint { member: id.clone(), source })?;
                    let tags =
                        info.client_tags_map().map_err(|d| LeaderError::DuplicateClientTag { member: id.clone(), key: d.key })?;
                    (endpoint, tags)
                };
                e.insert(Client {
                    endpoint,
                    tags,
                    rack: envelope.rack().map(str::to_owned),
                    consumers: Vec::new(),
                    owned: BTreeMap::new(),
                    offset_sums: BTreeMap::new(),
                    consumer_tasks: BTreeMap::new(),
                })
            }
        };
        if !client.consumers.is_empty() && client.rack.as_deref() != envelope.rack() {
            client.rack = None;
        }
        client.consumers.push(id.clone());
        for p in envelope.owned_partitions_list() {
            all_owned.push(p.clone());
            client.owned.insert(p, id.clone());
        }
        // Sorted by task: the set below is built without a sort, and the first consumer's sums
        // become the client's map in one go.
        let sums = info.offset_sums();
        client.consumer_tasks.insert(id.clone(), sums.keys().collect());
        if client.offset_sums.is_empty() {
            client.offset_sums = sums.into_map();
        } else {
            client.offset_sums.extend(sums);
        }
        Ok(())
    }
}
