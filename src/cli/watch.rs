//! `watch`: a group of either protocol followed until stopped, each generation explained.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kstreams_assignor::engine;
use kstreams_assignor::views::watch::drive::{self, Report, WatchOptions};
use kstreams_assignor::views::watch::{Event, Protocol, Summary, Watcher};

use super::AssignorParser;
use super::io::{key_values, read_topology};
use super::lead::{RUNNING, SIGNALLED, STDOUT_CLOSED, print_line, request_stop, watch_stdout};

#[derive(clap::Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    target: super::GroupArgs,
    /// Write one JSON record per generation to this file (JSON Lines); a classic record's
    /// `input` is what `assign --input` takes.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    look: LookArgs,
    /// Stop after this many seconds (a number above 0), with the summary.
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds)]
    exit_after: Option<Duration>,
}

/// How `watch` and `ui` look at the group, besides where: the interval, a classic group's
/// topology, the assignor configs and the assignor of the replay.
#[derive(clap::Args)]
pub(crate) struct LookArgs {
    /// Seconds between looks (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, default_value = "2")]
    interval: Duration,
    /// The topology (JSON or `describe()` text) of a classic group: with it, the tasks and the
    /// changelogs' end offsets, so warm-up lags and an exact replay.
    #[arg(long)]
    topology: Option<PathBuf>,
    /// The task assignor's configs the group runs with, `key=value` (repeatable):
    /// `acceptable.recovery.lag` (when a warm-up has caught up), and for the replay of a classic
    /// group `num.standby.replicas`, `max.warmup.replicas` and the other assignor keys.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// The assignor a classic group's generations are replayed with (Kafka's class name or
    /// `optimized`).
    #[arg(long, value_parser = AssignorParser, default_value = "HighAvailabilityTaskAssignor")]
    assignor: engine::AssignorKind,
}

impl LookArgs {
    /// The driver's options for `target`, and the configs.
    pub(crate) fn options(&self, target: &super::GroupArgs) -> Result<(WatchOptions, engine::AssignmentConfigs), String> {
        let topology = self.topology.as_ref().map(|p| read_topology(p, &target.group)).transpose()?;
        let configs = engine::AssignmentConfigs::default()
            .with_overrides(key_values("--config", &self.configs)?)
            .map_err(|e| format!("--config: {e}"))?;
        let mut options = WatchOptions::new(target.bootstrap.clone(), target.group.clone());
        options.security = target.net.security()?;
        options.timeout = target.net.timeout_or_default();
        options.interval = self.interval;
        options.topology = topology;
        options.configs = configs.clone();
        Ok((options, configs))
    }

    /// A watcher of these configs and assignor.
    pub(crate) fn watcher(&self, configs: engine::AssignmentConfigs) -> Watcher {
        Watcher::new(configs).with_assignor(self.assignor)
    }
}

/// How often a progress line is printed when standard error is not a terminal.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// How long a stopped `watch` may take to finish its look before it prints the summary and
/// exits anyway.
const STOP_BUDGET: Duration = Duration::from_millis(1_500);

/// A line on standard error; a closed standard error is no panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Progress on standard error: one line rewritten in place on a terminal, else a plain line
/// when the group's state changes and every [`PLAIN_PROGRESS_EVERY`].
struct Progress {
    tty: bool,
    shown: bool,
    last_plain: Option<(Instant, String)>,
}

impl Progress {
    fn show(&mut self, line: &str, state: &str) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[K{line}");
            let _ = err.flush();
            self.shown = true;
        } else if self.last_plain.as_ref().is_none_or(|(t, s)| s != state || t.elapsed() >= PLAIN_PROGRESS_EVERY) {
            let _ = writeln!(err, "{line}");
            self.last_plain = Some((Instant::now(), state.to_owned()));
        }
    }

    /// Clears the progress line before another line is printed.
    fn clear(&mut self) {
        if self.tty && self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.shown = false;
        }
    }
}

/// `watch`: a line per generation on standard output, progress and outages on standard error,
/// the summary on standard output at the end. Exits 0 when stopped (SIGINT, SIGTERM,
/// `--exit-after`, standard output closed); 1 when the group cannot be watched, as `describe`.
pub(crate) fn watch(args: WatchArgs) -> Result<String, String> {
    let (options, configs) = args.look.options(&args.target)?;
    let mut json = match &args.json {
        None => None,
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("--json {}: {e}", p.display()))?),
    };

    let flag = Arc::new(AtomicBool::new(false));
    let reason = Arc::new(AtomicU8::new(RUNNING));
    {
        let (flag, reason) = (flag.clone(), reason.clone());
        ctrlc::set_handler(move || request_stop(&reason, &flag, SIGNALLED)).map_err(|e| format!("cannot install the signal handler: {e}"))?;
    }
    watch_stdout(reason.clone(), flag.clone());
    // The summary so far; whoever prints it at the end takes it.
    let summary: Arc<Mutex<Option<Summary>>> = Arc::new(Mutex::new(Some(Summary::default())));
    {
        // A look in flight when stopped may take up to its timeout: past the budget the summary
        // is printed from here and the process ends.
        let (flag, summary) = (flag.clone(), summary.clone());
        std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(STOP_BUDGET);
            if let Some(s) = summary.lock().ok().and_then(|mut s| s.take()) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", s.line());
                let _ = out.flush();
            }
            std::process::exit(0);
        });
    }

    let started = Instant::now();
    let deadline = args.exit_after.and_then(|d| started.checked_add(d));
    let mut stop = || flag.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d);
    let mut progress = Progress { tty: std::io::stderr().is_terminal(), shown: false, last_plain: None };
    let mut protocol = Protocol::Classic;
    let mut json_error = None;
    // Whether the metadata record's warning was given since it last went away.
    let mut warned = false;
    let (group, bootstrap) = (&args.target.group, &args.target.bootstrap);
    say(&format!("watching group {group} through {bootstrap} every {:.1} s; Ctrl-C stops", args.look.interval.as_secs_f64()));
    let mut watcher = args.look.watcher(configs);
    let mut on = |report: Report, so_far: &Summary| {
        if let Ok(mut s) = summary.lock() {
            if s.is_some() {
                *s = Some(so_far.clone());
            }
        }
        match report {
            Report::Event(Event::Generation(g)) => {
                progress.clear();
                protocol = g.protocol;
                print_line(&g.line(), &reason, &flag);
                let warning = g.record_size.as_ref().and_then(|s| s.warning());
                warned = warning.is_some();
                if let Some(w) = warning {
                    say(&w);
                }
                if let Some(file) = &mut json {
                    let line = format!("{}\n", g.record());
                    if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
                        json_error.get_or_insert_with(|| format!("--json: cannot write: {e}"));
                    }
                }
            }
            Report::Event(Event::Waiting(w)) => {
                match w.record_size.as_ref().and_then(|s| s.warning()) {
                    Some(text) if !warned => {
                        progress.clear();
                        say(&text);
                        warned = true;
                    }
                    Some(_) => {}
                    None => warned = false,
                }
                progress.show(&w.line(protocol), &w.state);
            }
            Report::Event(_) => {}
            Report::Lost { error, unreachable, since_ms } => {
                progress.clear();
                say(&lost_line(&error, unreachable, since_ms, options_timeout_secs(&args)));
            }
            Report::Back(after) => {
                progress.clear();
                say(&back_line(after));
            }
            _ => {}
        }
    };
    let outcome = drive::run(&options, &mut watcher, &mut stop, &mut on);
    progress.clear();
    let taken = summary.lock().ok().and_then(|mut s| s.take());
    outcome.map_err(|e| e.to_string())?;
    if let Some(e) = json_error {
        return Err(e);
    }
    match reason.load(Ordering::SeqCst) {
        SIGNALLED => say("stopped by a signal"),
        STDOUT_CLOSED => return Ok(String::new()),
        _ => {}
    }
    Ok(taken.map_or_else(String::new, |_| format!("{}\n", watcher.summary().line())))
}

/// The line on standard error when looks start failing: the outage counts from the end of the
/// last successful look, `since_ms`, not from the failed look that noticed it.
pub(crate) fn lost_line(error: &str, unreachable: bool, since_ms: i64, timeout_secs: f64) -> String {
    let what = if unreachable { "the broker went away" } else { "the group cannot be looked at now" };
    let ago = (kstreams_assignor::client::now_ms() - since_ms).max(0) as f64 / 1000.0;
    format!("{what}: {error}; no successful look for {ago:.1} s; looking again (backoff from 100 ms, each look within {timeout_secs:.0} s)")
}

/// The line on standard error when a look succeeds again after an outage of `after`, counted
/// from the end of the last successful look before it.
pub(crate) fn back_line(after: Duration) -> String {
    format!("back after {:.1} s without a successful look: watching again", after.as_secs_f64())
}

fn options_timeout_secs(args: &WatchArgs) -> f64 {
    args.target.net.timeout_or_default().as_secs_f64()
}
