//! The leader's part of the machine that needs no I/O: the hook's assignment once the driver
//! has fetched the cluster's metadata and end offsets, and the generation's record.

use std::collections::{BTreeMap, BTreeSet};

use crate::member::machine::MemberMachine;
use crate::member::hook::PartitionAssignorHook;
use crate::member::events::{GenerationRecord, MemberError, MemberRecord};
use crate::leader::{ChangelogEndOffsets, ClusterMetadata, JoinMember, LeaderInput};
use crate::wire::{ProcessId, TaskId};

impl<H: PartitionAssignorHook> MemberMachine<H> {
    /// The leader's assignment once the driver has the cluster's metadata (`counts`: the
    /// source topics' partition counts) and the end offsets: the hook's assignment, each
    /// member's bytes and the generation's record.
    pub(crate) fn assign(
        &mut self,
        members: &[JoinMember],
        cluster: &ClusterMetadata,
        end_offsets: &ChangelogEndOffsets,
        counts: BTreeMap<String, i32>,
        now: i64,
    ) -> Result<(BTreeMap<String, Vec<u8>>, GenerationRecord), MemberError> {
        let excluded = if self.config.leader_only { vec![self.member_id.clone()] } else { Vec::new() };
        let input = LeaderInput::new(members, &self.topology, cluster, end_offsets, self.process_id)
            .with_config(&self.config.leader)
            .with_excluded_members(&excluded)
            .with_now_ms(now);
        let out = self.hook.assign(&input)?;
        self.assigned_counts = Some(counts);
        self.next_metadata_check = now.saturating_add(self.config.metadata_max_age_ms);

        let report = &out.report;
        let probing_at = report
            .assignment
            .as_ref()
            .filter(|a| a.followup.probing_rebalance_needed)
            .map(|_| now.saturating_add(self.config.leader.assignment.probing_rebalance_interval_ms));
        let records = out
            .members
            .keys()
            .map(|id| {
                let info = &report.infos[id];
                let process_id = report.process_ids.get(id).copied().unwrap_or(ProcessId::NIL);
                let kinds = report.replica_kinds(&process_id);
                let (warm, spare) = (kinds.warmup, kinds.spare);
                let (warmup, rest): (Vec<TaskId>, Vec<TaskId>) =
                    info.standby_task_ids().into_iter().partition(|t| warm.contains(t));
                let (spare_tasks, standby): (Vec<TaskId>, Vec<TaskId>) = rest.into_iter().partition(|t| spare.contains(t));
                MemberRecord {
                    member_id: id.clone(),
                    process_id,
                    excluded: excluded.contains(id),
                    active_tasks: info.active_tasks.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect(),
                    standby_tasks: standby,
                    warmup_tasks: warmup,
                    spare_tasks,
                    next_rebalance_ms: info.next_rebalance.as_millis(),
                }
            })
            .collect();
        let record = GenerationRecord {
            generation_id: self.generation_id,
            leader_id: self.member_id.clone(),
            assigned_at_ms: now,
            error_code: report.error.as_ref().map(|(c, _)| c.code()),
            error: report.error.as_ref().map(|(_, why)| why.clone()),
            probing_rebalance_at_ms: probing_at,
            members: records,
        };
        Ok((out.members, record))
    }
}
