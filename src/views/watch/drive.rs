//! The driver: a look at the group every interval, each one through a fresh connection, and the
//! [`Watcher`] fed with it.
//!
//! Each look is one `describe` of the group (`describe_any`: the group's kind, then
//! `StreamsGroupDescribe` or `DescribeGroups`, with a topology the changelogs' end offsets), with
//! its own deadline, `timeout`, which bounds every request of it, the coordinator's retries
//! included. A look that fails because the brokers cannot be reached, closed the connection,
//! timed out or have no coordinator yet (a broker restarting), or because the group is gone for
//! now, is reported once ([`Report::Lost`], the outage counted from the end of the last
//! successful look) and tried again after a backoff of
//! [`RETRY_BACKOFF`], doubling up to the interval (at least
//! [`RETRY_BACKOFF_MAX`]), until a look succeeds
//! ([`Report::Back`]) or the caller stops. Before the first successful look, and for errors that
//! another look would not mend (an unauthorized describe, a group that is not a Kafka Streams
//! group, a broker without StreamsGroupDescribe for a streams group, a response that does not
//! decode), [`run`] returns the error.

use std::time::{Duration, Instant};

use super::{Event, Observation, Summary, Watcher, observe};
use crate::engine::AssignmentConfigs;
use crate::client::admin::{RETRY_BACKOFF, RETRY_BACKOFF_MAX, is_coordinator_retriable};
use crate::client::connection::ConnectionError;
use crate::views::describe::DescribeGroupError;
use crate::client::now_ms;
use crate::client::net::client_config::Security;
use crate::views::streams::describe::{Described, StreamsDescribeError, describe_any};
use crate::leader::Topology;

/// Where and how to look.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WatchOptions {
    /// Bootstrap servers, comma-separated.
    pub bootstrap: String,
    /// The group.
    pub group: String,
    /// How every connection is secured.
    pub security: Security,
    /// The deadline of each look.
    pub timeout: Duration,
    /// The time between looks.
    pub interval: Duration,
    /// A classic group's topology, for its tasks and the changelogs' end offsets.
    pub topology: Option<Topology>,
    /// The assignor configs of the replay and of the catch-up threshold.
    pub configs: AssignmentConfigs,
}

impl WatchOptions {
    /// Options for `group` through `bootstrap`: plaintext, a 30 s timeout, a 2 s interval, no
    /// topology, default configs.
    pub fn new(bootstrap: impl Into<String>, group: impl Into<String>) -> Self {
        Self {
            bootstrap: bootstrap.into(),
            group: group.into(),
            security: Security::plaintext(),
            timeout: Duration::from_secs(30),
            interval: Duration::from_secs(2),
            topology: None,
            configs: AssignmentConfigs::default(),
        }
    }
}

/// What the driver tells as it goes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Report {
    /// A look, and what it told.
    Event(Event),
    /// Looks fail: the first error of the outage.
    Lost {
        /// The error, in words.
        error: String,
        /// Whether the brokers could not be reached (rather than the group being gone).
        unreachable: bool,
        /// When the outage began: the end of the last successful look (ms since the epoch). The
        /// broker may have gone at any time since, and the failed look that tells it may itself
        /// have waited up to the look's timeout.
        since_ms: i64,
    },
    /// A look succeeded again after an outage that lasted this long: from the end of the last
    /// successful look before it to the end of this one.
    Back(Duration),
}

/// Whether another look may mend `e`: the network, a coordinator moving or loading.
pub fn transient_connection(e: &ConnectionError) -> bool {
    match e {
        ConnectionError::Connect { .. } | ConnectionError::Timeout { .. } | ConnectionError::Closed { .. } | ConnectionError::Io { .. } => true,
        ConnectionError::Bootstrap { failures, .. } => failures.iter().all(|(_, e)| transient_connection(e)),
        other => other.code().is_some_and(is_coordinator_retriable),
    }
}

/// `Some(unreachable)` when another look may mend `e` (see the [module docs](self)).
fn transient(e: &StreamsDescribeError) -> Option<bool> {
    match e {
        StreamsDescribeError::Connection(c) | StreamsDescribeError::Classic(DescribeGroupError::Connection(c)) => {
            transient_connection(c).then_some(c.code().is_none())
        }
        StreamsDescribeError::NotFound { .. } | StreamsDescribeError::Missing { .. } | StreamsDescribeError::Classic(DescribeGroupError::Missing(_)) => Some(false),
        StreamsDescribeError::Broker { code, .. } if is_coordinator_retriable(*code) => Some(false),
        _ => None,
    }
}

/// One look at the group, at the clock's time.
pub fn look(options: &WatchOptions) -> Result<Observation, StreamsDescribeError> {
    let described = describe_any(&options.bootstrap, &options.group, options.topology.as_ref(), &options.security, options.timeout)?;
    let now = now_ms();
    Ok(match described {
        Described::Classic(g) => observe::classic(&g, now, &options.configs),
        Described::Streams(s) => observe::streams(&s, now),
    })
}

/// Sleeps `d` in short steps; `true` when `stop` asked to stop meanwhile.
fn pause(d: Duration, stop: &mut dyn FnMut() -> bool) -> bool {
    let until = Instant::now() + d;
    loop {
        if stop() {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

/// Looks at the group every `options.interval` until `stop` says so, feeding `watcher` and
/// telling `on` each [`Report`] with the summary so far. Returns the error that ended the watch
/// (see the [module docs](self)).
pub fn run(
    options: &WatchOptions,
    watcher: &mut Watcher,
    stop: &mut dyn FnMut() -> bool,
    on: &mut dyn FnMut(Report, &Summary),
) -> Result<(), StreamsDescribeError> {
    run_looking(options, watcher, stop, on, &mut look)
}

/// [`run`] with `look` in place of a look at the broker.
fn run_looking(
    options: &WatchOptions,
    watcher: &mut Watcher,
    stop: &mut dyn FnMut() -> bool,
    on: &mut dyn FnMut(Report, &Summary),
    look: &mut dyn FnMut(&WatchOptions) -> Result<Observation, StreamsDescribeError>,
) -> Result<(), StreamsDescribeError> {
    // The end of the last successful look, on both clocks, and whether an outage is on.
    let mut last_ok = (Instant::now(), now_ms());
    let mut outage = false;
    let mut backoff = RETRY_BACKOFF;
    let mut seen = false;
    let backoff_max = options.interval.max(RETRY_BACKOFF_MAX);
    while !stop() {
        match look(options) {
            Ok(o) => {
                seen = true;
                backoff = RETRY_BACKOFF;
                if std::mem::take(&mut outage) {
                    on(Report::Back(last_ok.0.elapsed()), watcher.summary());
                }
                last_ok = (Instant::now(), now_ms());
                let event = watcher.observe(o);
                on(Report::Event(event), watcher.summary());
                if pause(options.interval, stop) {
                    break;
                }
            }
            Err(e) => {
                let Some(unreachable) = transient(&e).filter(|_| seen) else { return Err(e) };
                if !outage {
                    outage = true;
                    on(Report::Lost { error: e.to_string(), unreachable, since_ms: last_ok.1 }, watcher.summary());
                }
                if pause(backoff, stop) {
                    break;
                }
                backoff = (backoff * 2).min(backoff_max);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker that answers, then hangs: the first failed look returns only after its own
    /// timeout, as a look at a paused broker does. The outage counts from the end of the last
    /// successful look, not from when the failed look returned.
    #[test]
    fn an_outage_counts_from_the_end_of_the_last_successful_look() {
        let mut options = WatchOptions::new("127.0.0.1:1", "g");
        options.interval = Duration::from_millis(10);
        let hang = Duration::from_millis(400);
        let mut looks = 0;
        let mut look = |_: &WatchOptions| {
            looks += 1;
            match looks {
                1 => Ok(super::super::observe::streams_look(now_ms(), 1, &[("m1", "p1", &["0_0"], &[], &[])])),
                2 => {
                    std::thread::sleep(hang);
                    Err(StreamsDescribeError::Connection(ConnectionError::Timeout { broker: "127.0.0.1:1".into(), during: "StreamsGroupDescribe".into(), after: hang }))
                }
                _ => Ok(super::super::observe::streams_look(now_ms(), 1, &[("m1", "p1", &["0_0"], &[], &[])])),
            }
        };
        let mut reports = Vec::new();
        let mut first_ok_end = None;
        let back_seen = std::cell::Cell::new(false);
        let mut on = |r: Report, _: &Summary| {
            if matches!(r, Report::Event(_)) && first_ok_end.is_none() {
                first_ok_end = Some(now_ms());
            }
            back_seen.set(back_seen.get() || matches!(r, Report::Back(_)));
            reports.push(r);
        };
        let mut watcher = Watcher::new(AssignmentConfigs::default());
        let mut stop = || back_seen.get();
        run_looking(&options, &mut watcher, &mut stop, &mut on, &mut look).unwrap();
        let since = reports.iter().find_map(|r| if let Report::Lost { since_ms, .. } = r { Some(*since_ms) } else { None }).unwrap();
        let back = reports.iter().find_map(|r| if let Report::Back(d) = r { Some(*d) } else { None }).unwrap();
        assert!((since - first_ok_end.unwrap()).abs() <= 5, "the outage begins at the end of the last successful look");
        assert!(back >= hang, "the outage lasted at least the hanging look: {back:?}");
    }
}
