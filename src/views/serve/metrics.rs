//! `/metrics`: every group's [`Health`] and the exporter's own, as Prometheus metric families
//! written by the Prometheus project's client (`prometheus-client`): the text format 0.0.4, or
//! OpenMetrics when the scraper asks for it.
//!
//! Names have the `kstreams_` prefix, base units (seconds, bytes) and `_total` on counters.
//! Every group's series carry its `group` label; those of a group no longer followed, of a
//! process gone or a warm-up over, are removed, not left at their last value. The families, one
//! line each, are in `docs/serve.md`. Per-task series (`kstreams_task_replica`) are written only
//! when asked ([`Metrics::new`]'s `per_task`): a group of thousands of tasks would make as many
//! series.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::{prometheus_text, text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use super::{Health, RebalanceCause};
use crate::views::watch::{Cause, Role};

/// A series' labels.
pub type Labels = Vec<(&'static str, String)>;

type GaugeF = Gauge<f64, AtomicU64>;

/// The content type of the Prometheus text format.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The per-group gauges, in the order of [`Metrics::gauges`].
const GAUGES: [(&str, &str, Option<Unit>); 13] = [
    (
        "kstreams_group_state",
        "The group's state as its coordinator names it: 1 for the current state",
        None,
    ),
    (
        "kstreams_group_epoch",
        "The group's generation (classic, estimated from the subscriptions) or group epoch (streams)",
        None,
    ),
    ("kstreams_group_members", "Members of the group", None),
    (
        "kstreams_group_processes",
        "Kafka Streams instances (processes) of the group",
        None,
    ),
    (
        "kstreams_group_tasks",
        "Tasks per process by kind: active, standby, warmup (classic: a warm-up counts as standby unless the replay names it)",
        None,
    ),
    (
        "kstreams_group_tasks_without_active",
        "Tasks of the last settled assignment that no member runs now",
        None,
    ),
    (
        "kstreams_group_warmup_lag_records",
        "Records a warm-up still has to restore",
        None,
    ),
    (
        "kstreams_group_warmup_catchup",
        "Estimated time until a warm-up is within acceptable.recovery.lag, at its restore rate",
        Some(Unit::Seconds),
    ),
    (
        "kstreams_group_since_stable",
        "Time since a look last saw the group Stable (0 while it is)",
        Some(Unit::Seconds),
    ),
    (
        "kstreams_group_metadata_record",
        "Bytes of the classic group's metadata record",
        Some(Unit::Bytes),
    ),
    (
        "kstreams_group_metadata_record_limit",
        "The broker's limit on the metadata record (max.message.bytes of __consumer_offsets)",
        Some(Unit::Bytes),
    ),
    (
        "kstreams_group_look_success",
        "Whether the last look at the group succeeded (1) or failed (0)",
        None,
    ),
    (
        "kstreams_task_replica",
        "Per task, the process holding a replica and its kind (only with --task-metrics)",
        None,
    ),
];

const STATE: usize = 0;
const EPOCH: usize = 1;
const MEMBERS: usize = 2;
const PROCESSES: usize = 3;
const TASKS: usize = 4;
const WITHOUT_ACTIVE: usize = 5;
const WARMUP_LAG: usize = 6;
const WARMUP_CATCHUP: usize = 7;
const SINCE_STABLE: usize = 8;
const RECORD: usize = 9;
const RECORD_LIMIT: usize = 10;
const LOOK_SUCCESS: usize = 11;
const TASK_REPLICA: usize = 12;

/// The buckets of the look duration, in seconds.
const LOOK_BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// A cause as a label value.
pub fn cause_label(cause: Cause) -> &'static str {
    match cause {
        Cause::MemberJoined => "member_joined",
        Cause::MemberLeft => "member_left",
        Cause::WarmupPromoted => "warmup_promoted",
        Cause::ProbingRebalance => "probing_rebalance",
        Cause::LoadBalance => "load_balance",
        Cause::TopologyChange => "topology_change",
    }
}

/// A role as a label value.
pub fn kind_label(role: Role) -> &'static str {
    match role {
        Role::Active => "active",
        Role::Standby => "standby",
        Role::Warmup => "warmup",
    }
}

/// Every metric family of the exporter, and which series of each group are set.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    per_task: bool,
    gauges: Vec<Family<Labels, GaugeF>>,
    rebalances: Family<Labels, Counter>,
    moves: Family<Labels, Counter>,
    looks: Family<Labels, Counter>,
    look_duration: Histogram,
    cluster_reachable: GaugeF,
    groups: GaugeF,
    discoveries: Family<Labels, Counter>,
    prober_joined: Family<Labels, GaugeF>,
    probes: Family<Labels, Counter>,
    /// Per group, its series set.
    set: Mutex<HashMap<String, GroupSeries>>,
}

/// One group's series: the gauges' set at its last look, and the counters' label sets.
#[derive(Debug, Default)]
struct GroupSeries {
    gauges: Vec<(usize, Labels)>,
    rebalances: Vec<Labels>,
    moves: Vec<Labels>,
}

impl Metrics {
    /// Every family registered, none set; `per_task` adds `kstreams_task_replica`.
    ///
    /// ```
    /// use kstreams_assignor::views::serve::metrics::Metrics;
    ///
    /// let m = Metrics::new(false);
    /// let (text, _) = m.encode(None);
    /// assert!(text.contains("# TYPE kstreams_looks_total counter"), "{text}");
    /// ```
    pub fn new(per_task: bool) -> Self {
        let mut registry = Registry::default();
        let mut gauges = Vec::new();
        for (i, (name, help, unit)) in GAUGES.iter().enumerate() {
            let family = Family::<Labels, GaugeF>::default();
            if i != TASK_REPLICA || per_task {
                match unit {
                    Some(u) => registry.register_with_unit(*name, *help, u.clone(), family.clone()),
                    None => registry.register(*name, *help, family.clone()),
                }
            }
            gauges.push(family);
        }
        let rebalances = Family::<Labels, Counter>::default();
        registry.register(
            "kstreams_group_rebalances",
            "New generations or group epochs seen, by the cause watch names first",
            rebalances.clone(),
        );
        let moves = Family::<Labels, Counter>::default();
        registry.register(
            "kstreams_group_task_moves",
            "Task replicas moved, by cause",
            moves.clone(),
        );
        let looks = Family::<Labels, Counter>::default();
        registry.register(
            "kstreams_looks",
            "Looks at a group, by result (ok, failed)",
            looks.clone(),
        );
        let look_duration = Histogram::new(LOOK_BUCKETS);
        registry.register_with_unit(
            "kstreams_look_duration",
            "How long one look at a group took",
            Unit::Seconds,
            look_duration.clone(),
        );
        let cluster_reachable = GaugeF::default();
        registry.register(
            "kstreams_cluster_reachable",
            "Whether the last discovery of the cluster's groups succeeded (1) or not (0)",
            cluster_reachable.clone(),
        );
        let groups = GaugeF::default();
        registry.register(
            "kstreams_groups",
            "Kafka Streams groups followed",
            groups.clone(),
        );
        let discoveries = Family::<Labels, Counter>::default();
        registry.register(
            "kstreams_discoveries",
            "Discoveries of the cluster's groups, by result (ok, failed)",
            discoveries.clone(),
        );
        let prober_joined = Family::<Labels, GaugeF>::default();
        registry.register(
            "kstreams_group_prober_joined",
            "With --probe: whether the group's prober is in the group (1) or not (0)",
            prober_joined.clone(),
        );
        let probes = Family::<Labels, Counter>::default();
        registry.register(
            "kstreams_group_probes",
            "With --probe: times the group's prober made the coordinator assign again",
            probes.clone(),
        );
        for result in ["ok", "failed"] {
            // Both results written from the start, at 0.
            let _ = looks.get_or_create(&vec![("result", result.to_owned())]);
            let _ = discoveries.get_or_create(&vec![("result", result.to_owned())]);
        }
        Self {
            registry,
            per_task,
            gauges,
            rebalances,
            moves,
            looks,
            look_duration,
            cluster_reachable,
            groups,
            discoveries,
            prober_joined,
            probes,
            set: Mutex::new(HashMap::new()),
        }
    }

    /// Sets `health`'s series of its group and removes those it no longer has; counts its
    /// rebalance and moves, if any.
    pub fn record(&self, health: &Health) {
        let g = || ("group", health.group.clone());
        let mut series: Vec<(usize, Labels, f64)> = Vec::new();
        if let Some(look) = &health.look {
            series.push((STATE, vec![g(), ("state", look.state.clone())], 1.0));
            if let Some(e) = look.epoch {
                series.push((EPOCH, vec![g()], f64::from(e)));
            }
            series.push((MEMBERS, vec![g()], look.members as f64));
            series.push((PROCESSES, vec![g()], look.tasks.len() as f64));
            for (process, counts) in &look.tasks {
                for (role, n) in [
                    (Role::Active, counts.active),
                    (Role::Standby, counts.standby),
                    (Role::Warmup, counts.warmup),
                ] {
                    series.push((
                        TASKS,
                        vec![
                            g(),
                            ("process", process.clone()),
                            ("kind", kind_label(role).to_owned()),
                        ],
                        n as f64,
                    ));
                }
            }
            series.push((WITHOUT_ACTIVE, vec![g()], look.without_active.len() as f64));
            for w in &look.warmups {
                let labels = vec![
                    g(),
                    ("process", w.process_id.clone()),
                    ("task", w.task.clone()),
                ];
                if let Some(lag) = w.lag {
                    series.push((WARMUP_LAG, labels.clone(), lag as f64));
                }
                if let Some(eta) = w.eta_ms {
                    series.push((WARMUP_CATCHUP, labels, eta as f64 / 1000.0));
                }
            }
            if let Some(r) = &look.record_size {
                series.push((RECORD, vec![g()], r.total_bytes as f64));
                series.push((RECORD_LIMIT, vec![g()], r.limit_bytes as f64));
            }
            if self.per_task {
                for (task, process, role) in &look.replicas {
                    let labels = vec![
                        g(),
                        ("task", task.clone()),
                        ("process", process.clone()),
                        ("kind", kind_label(*role).to_owned()),
                    ];
                    series.push((TASK_REPLICA, labels, 1.0));
                }
            }
        }
        series.push((SINCE_STABLE, vec![g()], health.since_stable.as_secs_f64()));
        series.push((
            LOOK_SUCCESS,
            vec![g()],
            if health.error.is_some() { 0.0 } else { 1.0 },
        ));

        let mut set = self
            .set
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = set.entry(health.group.clone()).or_default();
        // A failed look keeps the last look's series: only its own change.
        let keep_old = health.look.is_none();
        let now: Vec<(usize, Labels)> = series.iter().map(|(i, l, _)| (*i, l.clone())).collect();
        if !keep_old {
            for (i, labels) in &entry.gauges {
                if !now.iter().any(|(j, l)| j == i && l == labels) {
                    self.gauges[*i].remove(labels);
                }
            }
            entry.gauges = now;
        } else {
            for s in now {
                if !entry.gauges.contains(&s) {
                    entry.gauges.push(s);
                }
            }
        }
        for (i, labels, v) in &series {
            self.gauges[*i].get_or_create(labels).set(*v);
        }
        if let Some(r) = &health.rebalance {
            let cause = match r.cause {
                RebalanceCause::Moved(c) => cause_label(c),
                RebalanceCause::NoMove => "none",
            };
            let labels = vec![g(), ("cause", cause.to_owned())];
            self.rebalances.get_or_create(&labels).inc();
            if !entry.rebalances.contains(&labels) {
                entry.rebalances.push(labels);
            }
            for (cause, n) in &r.moves {
                let labels = vec![g(), ("cause", cause_label(*cause).to_owned())];
                self.moves.get_or_create(&labels).inc_by(*n as u64);
                if !entry.moves.contains(&labels) {
                    entry.moves.push(labels);
                }
            }
        }
    }

    /// Whether `group`'s prober is in the group.
    pub fn prober(&self, group: &str, joined: bool) {
        self.prober_joined
            .get_or_create(&vec![("group", group.to_owned())])
            .set(if joined { 1.0 } else { 0.0 });
    }

    /// Counts a probe of `group`'s prober.
    pub fn probed(&self, group: &str) {
        self.probes
            .get_or_create(&vec![("group", group.to_owned())])
            .inc();
    }

    /// Removes every series of `group` (no longer followed).
    pub fn forget(&self, group: &str) {
        let mut set = self
            .set
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.prober_joined
            .remove(&vec![("group", group.to_owned())]);
        self.probes.remove(&vec![("group", group.to_owned())]);
        if let Some(series) = set.remove(group) {
            for (i, labels) in series.gauges {
                self.gauges[i].remove(&labels);
            }
            for labels in series.rebalances {
                self.rebalances.remove(&labels);
            }
            for labels in series.moves {
                self.moves.remove(&labels);
            }
        }
    }

    /// Counts one look that took `took`, and whether it succeeded.
    pub fn look(&self, ok: bool, took: Duration) {
        self.looks
            .get_or_create(&vec![(
                "result",
                if ok { "ok" } else { "failed" }.to_owned(),
            )])
            .inc();
        self.look_duration.observe(took.as_secs_f64());
    }

    /// Counts one discovery, and how many groups are followed after it.
    pub fn discovery(&self, ok: bool, groups: usize) {
        self.discoveries
            .get_or_create(&vec![(
                "result",
                if ok { "ok" } else { "failed" }.to_owned(),
            )])
            .inc();
        self.cluster_reachable.set(if ok { 1.0 } else { 0.0 });
        self.groups.set(groups as f64);
    }

    /// Every family, in the format `accept` (a request's `Accept` header) asks for: OpenMetrics
    /// when it names `application/openmetrics-text`, else the text format 0.0.4. Returns the text
    /// and its content type.
    pub fn encode(&self, accept: Option<&str>) -> (String, &'static str) {
        let mut out = String::new();
        if accept.is_some_and(|a| a.contains("application/openmetrics-text")) {
            // Writing to a String does not fail.
            let _ = text::encode(&mut out, &self.registry);
            (out, OPENMETRICS_CONTENT_TYPE)
        } else {
            let _ = prometheus_text::encode(&mut out, &self.registry);
            (out, TEXT_CONTENT_TYPE)
        }
    }
}
