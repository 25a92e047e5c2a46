//! The groups followed and the threads that follow them: one discovery thread, which finds the
//! cluster's Kafka Streams groups every `discovery_interval` and adds the new ones and drops the
//! deleted ones, and a pool of `threads` look threads, each taking the group whose look is most
//! overdue, looking at it (one `describe`, within `timeout`) and feeding its [`Follow`], the
//! metrics and the home page.
//!
//! A group is looked at again `interval` after its last look ended. A group that does not answer
//! holds one look thread for at most `timeout`; the other threads go on with the other groups.
//! No lock is held during a look.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::discover::{self, Discovery};
use super::home::Home;
use super::metrics::Metrics;
use super::{Follow, Health};
use crate::client::net::client_config::Security;
use crate::client::now_ms;
use crate::engine::AssignmentConfigs;
use crate::views::describe::DescribeGroupError;
use crate::views::streams::describe::StreamsDescribeError;
use crate::views::ui::LiveState;
use crate::views::watch::Protocol;
use crate::views::watch::drive::{self, WatchOptions, transient_connection};

/// Which group names are followed.
pub type GroupFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Where and how to look.
#[derive(Clone)]
#[non_exhaustive]
pub struct FleetOptions {
    /// Bootstrap servers, comma-separated.
    pub bootstrap: String,
    /// How every connection is secured.
    pub security: Security,
    /// The deadline of each look and of each discovery.
    pub timeout: Duration,
    /// The time from the end of a group's look to its next.
    pub interval: Duration,
    /// The time between discoveries.
    pub discovery_interval: Duration,
    /// Look threads.
    pub threads: usize,
    /// The assignor configs (`acceptable.recovery.lag`).
    pub configs: AssignmentConfigs,
    /// Which groups are followed (all by default).
    pub filter: GroupFilter,
}

impl std::fmt::Debug for FleetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetOptions")
            .field("bootstrap", &self.bootstrap)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl FleetOptions {
    /// Every group through `bootstrap`: plaintext, a 10 s timeout, a look every 10 s, a
    /// discovery every 30 s, 4 look threads, default configs.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        Self {
            bootstrap: bootstrap.into(),
            security: Security::plaintext(),
            timeout: Duration::from_secs(10),
            interval: Duration::from_secs(10),
            discovery_interval: Duration::from_secs(30),
            threads: 4,
            configs: AssignmentConfigs::default(),
            filter: Arc::new(|_| true),
        }
    }
}

/// A group's place in the schedule.
struct Slot {
    follow: Arc<Mutex<Follow>>,
    due: Instant,
    busy: bool,
}

/// Every group followed, the metrics and the home page.
pub struct Fleet {
    options: FleetOptions,
    slots: Mutex<BTreeMap<String, Slot>>,
    wake: Condvar,
    metrics: Metrics,
    home: Arc<Home>,
    discovered: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `e` says the brokers could not be reached.
fn unreachable(e: &StreamsDescribeError) -> bool {
    match e {
        StreamsDescribeError::Connection(c)
        | StreamsDescribeError::Classic(DescribeGroupError::Connection(c)) => {
            transient_connection(c) && c.code().is_none()
        }
        _ => false,
    }
}

impl Fleet {
    /// A fleet of no group yet, its metrics with per-task series when `per_task`.
    pub fn new(options: FleetOptions, per_task: bool) -> Arc<Self> {
        let home = Arc::new(Home::new(&options.bootstrap));
        Arc::new(Self {
            options,
            slots: Mutex::new(BTreeMap::new()),
            wake: Condvar::new(),
            metrics: Metrics::new(per_task),
            home,
            discovered: AtomicBool::new(false),
        })
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The home page's state.
    pub fn home(&self) -> &Arc<Home> {
        &self.home
    }

    /// The `ui` page state of `group`, if followed.
    pub fn page(&self, group: &str) -> Option<Arc<LiveState>> {
        let follow = lock(&self.slots).get(group).map(|s| s.follow.clone())?;
        Some(lock(&follow).page().clone())
    }

    /// Whether `group` is followed.
    pub fn follows(&self, group: &str) -> bool {
        lock(&self.slots).contains_key(group)
    }

    /// The groups followed.
    pub fn groups(&self) -> Vec<String> {
        lock(&self.slots).keys().cloned().collect()
    }

    /// Whether a discovery has succeeded yet.
    pub fn discovered(&self) -> bool {
        self.discovered.load(Ordering::SeqCst)
    }

    /// Takes a discovery in: follows the new groups its filter lets in, drops those gone.
    pub fn apply_discovery(&self, d: &Discovery) {
        let mut slots = lock(&self.slots);
        let gone: Vec<String> = slots
            .iter()
            .filter(|(g, s)| !d.keep(g, lock(&s.follow).protocol()))
            .map(|(g, _)| g.clone())
            .collect();
        for g in gone {
            slots.remove(&g);
            self.metrics.forget(&g);
            self.home.remove(&g);
        }
        let interval_ms = u64::try_from(self.options.interval.as_millis()).unwrap_or(u64::MAX);
        for (g, protocol) in &d.streams {
            if slots.contains_key(g) || !(self.options.filter)(g) {
                continue;
            }
            let follow = Follow::new(
                g,
                *protocol,
                &self.options.bootstrap,
                interval_ms,
                self.options.configs.clone(),
            );
            self.home.set_pending(g, *protocol);
            slots.insert(
                g.clone(),
                Slot {
                    follow: Arc::new(Mutex::new(follow)),
                    due: Instant::now(),
                    busy: false,
                },
            );
        }
        self.metrics.discovery(true, slots.len());
        self.discovered.store(true, Ordering::SeqCst);
        self.wake.notify_all();
    }

    /// One discovery; a failure is counted and the groups followed are kept.
    pub fn discover_once(&self) -> Result<(), String> {
        match discover::discover(
            &self.options.bootstrap,
            &self.options.security,
            self.options.timeout,
        ) {
            Ok(d) => {
                self.apply_discovery(&d);
                self.home.set_cluster(true, None);
                Ok(())
            }
            Err(e) => {
                self.metrics.discovery(false, lock(&self.slots).len());
                self.home.set_cluster(false, Some(e.to_string()));
                Err(e.to_string())
            }
        }
    }

    /// The group whose look is due first and not being made, marked busy; or how long until one
    /// is due.
    fn take(&self, stop: &AtomicBool) -> Option<(String, Arc<Mutex<Follow>>)> {
        let mut slots = lock(&self.slots);
        loop {
            if stop.load(Ordering::SeqCst) {
                return None;
            }
            let now = Instant::now();
            let next = slots
                .iter_mut()
                .filter(|(_, s)| !s.busy)
                .min_by_key(|(_, s)| s.due);
            let wait = match next {
                Some((g, s)) if s.due <= now => {
                    s.busy = true;
                    return Some((g.clone(), s.follow.clone()));
                }
                Some((_, s)) => s.due - now,
                None => Duration::from_millis(200),
            };
            slots = self
                .wake
                .wait_timeout(slots, wait.min(Duration::from_millis(200)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Looks at `group` once and records what it showed.
    pub fn look_once(&self, group: &str, follow: &Mutex<Follow>) -> Health {
        let mut options = WatchOptions::new(self.options.bootstrap.clone(), group.to_owned());
        options.security = self.options.security.clone();
        options.timeout = self.options.timeout;
        options.interval = self.options.interval;
        options.configs = self.options.configs.clone();
        let started = Instant::now();
        let result = drive::look(&options);
        self.metrics.look(result.is_ok(), started.elapsed());
        let health = {
            let mut f = lock(follow);
            match result {
                Ok(o) => f.look(o),
                Err(e) => f.failed(&e.to_string(), unreachable(&e), now_ms()),
            }
        };
        // A group dropped during its look is not recorded again.
        if lock(&self.slots).contains_key(group) {
            self.metrics.record(&health);
            self.home.set(&health);
        }
        health
    }

    fn look_loop(&self, stop: &AtomicBool) {
        while let Some((group, follow)) = self.take(stop) {
            self.look_once(&group, &follow);
            if let Some(s) = lock(&self.slots).get_mut(&group) {
                s.busy = false;
                s.due = Instant::now() + self.options.interval;
            }
        }
    }

    /// Runs the discovery thread and the look threads until `stop` is set; `on_discovery` hears
    /// each discovery: the groups followed after it, or why it failed.
    pub fn run(
        self: &Arc<Self>,
        stop: &Arc<AtomicBool>,
        on_discovery: &(dyn Fn(Result<usize, &str>) + Sync),
    ) -> std::io::Result<()> {
        std::thread::scope(|scope| {
            for i in 0..self.options.threads.max(1) {
                let (fleet, stop) = (self.clone(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("serve-look-{i}"))
                    .spawn_scoped(scope, move || fleet.look_loop(&stop))?;
            }
            while !stop.load(Ordering::SeqCst) {
                match self.discover_once() {
                    Ok(()) => {
                        // Not under the lock: the caller may look at the fleet.
                        let followed = lock(&self.slots).len();
                        on_discovery(Ok(followed));
                    }
                    Err(e) => on_discovery(Err(&e)),
                }
                let until = Instant::now() + self.options.discovery_interval;
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            self.wake.notify_all();
            Ok(())
        })
    }

    /// The protocol of each group followed.
    pub fn protocols(&self) -> BTreeMap<String, Protocol> {
        lock(&self.slots)
            .iter()
            .map(|(g, s)| (g.clone(), lock(&s.follow).protocol()))
            .collect()
    }
}
