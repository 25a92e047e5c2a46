//! `serve --probe`: the prober of `probe` (`member::streams::StreamsProber`) built in, one
//! thread per probed group.
//!
//! After each discovery, every streams group followed without a prober gets one. The prober
//! keeps `probe`'s rules: it reads the group's `streams.assignor.name` before it joins and refuses
//! a group that is not assigned by `optimized` (such a group is asked again after
//! [`NOT_OPTIMIZED_RETRY`], in case its config changes), it is never a group's first member (a
//! group without a topology is asked again after [`RETRY`]), and it leaves the group if it is
//! given a task. A group no longer followed has its prober stopped (it leaves the group). Its
//! joins and probes are counted in the metrics (`kstreams_group_prober_joined`,
//! `kstreams_group_probes_total`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use kstreams_assignor::client::net::client_config::Security;
use kstreams_assignor::member::MemberConfig;
use kstreams_assignor::member::streams::{ProbeError, ProbeEvent, StreamsEvent, StreamsProber};
use kstreams_assignor::views::serve::fleet::Fleet;
use kstreams_assignor::views::watch::Protocol;

/// How long a group that another assignor than `optimized` assigns waits before it is asked again.
pub(crate) const NOT_OPTIMIZED_RETRY: Duration = Duration::from_secs(300);
/// How long a group whose prober failed (no topology yet, the cluster gone) waits before another.
pub(crate) const RETRY: Duration = Duration::from_secs(30);

/// Where and how the probers reach the brokers.
#[derive(Debug, Clone)]
pub(crate) struct ProberOptions {
    /// Bootstrap servers.
    pub(crate) bootstrap: Vec<String>,
    /// How every connection is secured.
    pub(crate) security: Security,
    /// Each request's deadline.
    pub(crate) timeout: Duration,
    /// The time between a prober's looks.
    pub(crate) interval: Duration,
}

impl ProberOptions {
    /// Probers through `bootstrap` (comma-separated servers): plaintext, a 10 s timeout, a look
    /// every 10 s.
    pub(crate) fn new(bootstrap: &str) -> Self {
        Self {
            bootstrap: bootstrap
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            security: Security::plaintext(),
            timeout: Duration::from_secs(10),
            interval: Duration::from_secs(10),
        }
    }
}

/// One group's prober.
struct Slot {
    stop: Arc<AtomicBool>,
    /// When its thread ended, and when another may start.
    ended: Arc<Mutex<Option<Instant>>>,
}

/// What a prober tells: its group, and a sentence.
pub(crate) type ProberNote = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The probers of the fleet's streams groups.
pub(crate) struct Probers {
    options: ProberOptions,
    slots: Mutex<BTreeMap<String, Slot>>,
    note: ProberNote,
}

impl Probers {
    /// No prober yet; `note` hears each prober join and stop, and why.
    pub(crate) fn new(options: ProberOptions, note: ProberNote) -> Self {
        Self {
            options,
            slots: Mutex::new(BTreeMap::new()),
            note,
        }
    }

    /// Starts a prober for each streams group `fleet` follows that has none (or whose last one
    /// ended and may be tried again) and stops those of groups no longer followed.
    pub(crate) fn sync(&self, fleet: &Arc<Fleet>) {
        let groups = fleet.protocols();
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.retain(|g, s| {
            let keep = groups.get(g) == Some(&Protocol::Streams);
            if !keep {
                s.stop.store(true, Ordering::SeqCst);
            }
            keep
        });
        for (group, protocol) in groups {
            if protocol != Protocol::Streams {
                continue;
            }
            let ready = slots.get(&group).is_none_or(|s| {
                s.ended
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_some_and(|at| Instant::now() >= at)
            });
            if !ready {
                continue;
            }
            let slot = Slot {
                stop: Arc::new(AtomicBool::new(false)),
                ended: Arc::new(Mutex::new(None)),
            };
            let (stop, ended, fleet, options) = (
                slot.stop.clone(),
                slot.ended.clone(),
                fleet.clone(),
                self.options.clone(),
            );
            let (name, note) = (group.clone(), self.note.clone());
            let spawned = std::thread::Builder::new()
                .name("serve-probe".into())
                .spawn(move || {
                    let retry = run_one(&options, &name, &fleet, &stop, &*note);
                    *ended.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(Instant::now() + retry);
                });
            if spawned.is_ok() {
                slots.insert(group, slot);
            }
        }
    }

    /// Stops every prober (each leaves its group) and waits up to `within` for them to end.
    pub(crate) fn stop_all(&self, within: Duration) {
        let until = Instant::now() + within;
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        for s in slots.values() {
            s.stop.store(true, Ordering::SeqCst);
        }
        while Instant::now() < until
            && slots.values().any(|s| {
                s.ended
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_none()
            })
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs the prober of `group` until `stop`; returns how long to wait before another.
fn run_one(
    options: &ProberOptions,
    group: &str,
    fleet: &Fleet,
    stop: &AtomicBool,
    note: &(dyn Fn(&str, &str) + Send + Sync),
) -> Duration {
    let mut config = MemberConfig::new(
        options.bootstrap.first().cloned().unwrap_or_default(),
        group,
    );
    config.bootstrap = options.bootstrap.clone();
    config.security = options.security.clone();
    config.request_timeout_ms = u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX);
    // A group no longer followed has no series to set (they were removed with it).
    let metrics = fleet.metrics();
    let mut on_event = |event: ProbeEvent| match event {
        ProbeEvent::Member(StreamsEvent::Joined { member_id, epoch }) if fleet.follows(group) => {
            note(group, &format!("joined as {member_id} at epoch {epoch}"));
            metrics.prober(group, true);
        }
        ProbeEvent::Member(StreamsEvent::Left(_)) if fleet.follows(group) => {
            metrics.prober(group, false)
        }
        ProbeEvent::Probed { .. } if fleet.follows(group) => metrics.probed(group),
        _ => {}
    };
    let outcome = StreamsProber::new(config, options.interval)
        .run(&mut || stop.load(Ordering::SeqCst), &mut on_event);
    if fleet.follows(group) {
        metrics.prober(group, false);
    }
    match outcome {
        Ok(()) => Duration::ZERO,
        Err(e @ ProbeError::NotOptimized { .. }) => {
            note(
                group,
                &format!(
                    "not probed: {e}; asked again in {} s",
                    NOT_OPTIMIZED_RETRY.as_secs()
                ),
            );
            NOT_OPTIMIZED_RETRY
        }
        Err(e) => {
            note(
                group,
                &format!("the prober stopped: {e}; another in {} s", RETRY.as_secs()),
            );
            RETRY
        }
    }
}
