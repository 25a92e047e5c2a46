//! `serve`: every Kafka Streams group of a cluster, as Prometheus metrics and live pages, until
//! stopped.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::serve_probe::{ProberOptions, Probers};
use kstreams_assignor::engine;
use kstreams_assignor::views::serve::fleet::{Fleet, FleetOptions};
use kstreams_assignor::views::serve::site::ServeSite;
use kstreams_assignor::views::serve::tls;
use kstreams_assignor::views::ui::{self, UiError, server};

use super::io::key_values;
use super::{CliError, usage};

/// The address `serve` listens on when not told.
const DEFAULT_LISTEN: &str = "127.0.0.1:9898";
/// The environment variables read for the token when `--token` is not given, in turn.
const TOKEN_ENVS: [&str; 2] = ["KSTREAMS_SERVE_TOKEN", "KSTREAMS_UI_TOKEN"];

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Brokers, `host:port`, comma-separated (`a:9092,b:9092`): tried in turn.
    #[arg(long)]
    bootstrap: String,
    #[command(flatten)]
    net: super::NetArgs,
    /// Follow only the groups whose id this regular expression matches (anywhere in it; anchor
    /// it with `^…$` for the whole id). Default: every Kafka Streams group.
    #[arg(long, value_name = "REGEX")]
    groups: Option<String>,
    /// The address the metrics and pages are served on, `IP:PORT`. Another than loopback needs
    /// --token.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The token every request must carry (at least 16 letters, digits or `-._~`): Prometheus
    /// sends it as `Authorization: Bearer`, a browser once as `?token=TOKEN`. Without it, the
    /// environment variable KSTREAMS_SERVE_TOKEN (or KSTREAMS_UI_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Serve HTTPS with this PEM certificate chain (the server's certificate first); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key (unencrypted) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Seconds from the end of a group's look to its next (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, default_value = "10")]
    interval: Duration,
    /// Seconds between two discoveries of the cluster's groups (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, default_value = "30")]
    discovery_interval: Duration,
    /// Look threads: a group that does not answer holds one for at most --timeout.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// The task assignor's configs the groups run with, `key=value` (repeatable):
    /// `acceptable.recovery.lag` decides when a warm-up has caught up.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// Also a series per task replica (`kstreams_task_replica`): as many series as tasks and
    /// copies, so off by default.
    #[arg(long)]
    task_metrics: bool,
    /// Also run `probe`'s prober in every streams group whose broker assignor is `optimized` (a
    /// member that takes no task and makes the coordinator assign again when a warm-up has caught
    /// up), one thread per group; groups of another assignor are left alone.
    #[arg(long)]
    probe: bool,
    /// Seconds between a prober's looks, with --probe (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds, default_value = "10", requires = "probe")]
    probe_interval: Duration,
    /// Stop after this many seconds (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds)]
    exit_after: Option<Duration>,
}

/// A line on standard error; a closed standard error is no panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `serve`: follows the cluster's Kafka Streams groups until stopped (SIGINT, SIGTERM,
/// `--exit-after`: exit code 0). A refused listen address, a bad token, a bad regular expression
/// or a bad `--config` is a usage error (2); an address that cannot be listened on or a
/// certificate or key that cannot be used exits 1. An unreachable cluster is no error: it is
/// counted (`kstreams_cluster_reachable`) and looked for again.
pub(crate) fn serve(args: ServeArgs) -> Result<String, CliError> {
    let token = args.token.clone().or_else(|| {
        TOKEN_ENVS
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|t| !t.is_empty()))
    });
    let access = ui::access_for(args.listen, token.as_deref()).map_err(|e| usage(e.to_string()))?;
    let filter = match &args.groups {
        Some(re) => {
            let re = regex::Regex::new(re)
                .map_err(|e| usage(format!("--groups: not a regular expression: {e}")))?;
            Arc::new(move |g: &str| re.is_match(g))
                as kstreams_assignor::views::serve::fleet::GroupFilter
        }
        None => Arc::new(|_: &str| true),
    };
    let configs = engine::AssignmentConfigs::default()
        .with_overrides(key_values("--config", &args.configs).map_err(usage)?)
        .map_err(|e| usage(format!("--config: {e}")))?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(tls::server_config(cert, key).map_err(|e| format!("--tls-cert/--tls-key: {e}"))?)
        }
        _ => None,
    };
    let mut options = FleetOptions::new(args.bootstrap.clone());
    options.security = args.net.security()?;
    let probers = args.probe.then(|| {
        let mut p = ProberOptions::new(&args.bootstrap);
        p.security = options.security.clone();
        p.timeout = args.net.timeout.unwrap_or(Duration::from_secs(10));
        p.interval = args.probe_interval;
        Probers::new(
            p,
            Arc::new(|group: &str, what: &str| say(&format!("prober of {group}: {what}"))),
        )
    });
    options.timeout = args.net.timeout.unwrap_or(Duration::from_secs(10));
    options.interval = args.interval;
    options.discovery_interval = args.discovery_interval;
    options.threads = usize::from(args.threads);
    options.configs = configs;
    options.filter = filter;
    let listener = ui::bind(args.listen).map_err(|e: UiError| e.to_string())?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let fleet = Fleet::new(options, args.task_metrics);
    let scheme = if tls.is_some() { "https" } else { "http" };
    server::spawn_site(
        listener,
        Arc::new(ServeSite(fleet.clone())),
        access,
        tls,
        server::HEAD_DEADLINE,
    )
    .map_err(|e| format!("cannot start the server: {e}"))?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .map_err(|e| format!("cannot install the signal handler: {e}"))?;
    }
    if let Some(after) = args.exit_after {
        let (stop, deadline) = (stop.clone(), Instant::now() + after);
        std::thread::spawn(move || {
            while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
    let query = if token.is_some() {
        " (Authorization: Bearer TOKEN, or ?token=TOKEN once in a browser)"
    } else {
        ""
    };
    say(&format!(
        "serving the Kafka Streams groups of {} on {scheme}://{bound}/ (metrics at /metrics){query}, read-only, a look at each group every {:.1} s; Ctrl-C stops",
        args.bootstrap,
        args.interval.as_secs_f64()
    ));
    // A line when the cluster goes away or comes back, or the number of groups changes.
    let last = std::sync::Mutex::new(None::<Result<usize, ()>>);
    let on_discovery = |r: Result<usize, &str>| {
        if let (Some(p), Ok(_)) = (&probers, r) {
            p.sync(&fleet);
        }
        let mut last = last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = r.map_err(|_| ());
        if *last == Some(now) {
            return;
        }
        *last = Some(now);
        match r {
            Ok(n) => say(&format!("following {n} Kafka Streams group(s)")),
            Err(e) => say(&format!(
                "cannot list the cluster's groups: {e}; trying again every {:.0} s (kstreams_cluster_reachable is 0)",
                args.discovery_interval.as_secs_f64()
            )),
        }
    };
    fleet
        .run(&stop, &on_discovery)
        .map_err(|e| format!("cannot start the look threads: {e}"))?;
    if let Some(p) = &probers {
        // Each prober leaves its group, within a request's deadline.
        p.stop_all(args.net.timeout.unwrap_or(Duration::from_secs(10)));
    }
    Ok(format!("followed {} group(s)\n", fleet.groups().len()))
}
