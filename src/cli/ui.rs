//! `ui`: the watch of a group as a live web page, served from this process until stopped.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kstreams_assignor::views::ui::{self, LiveState, UiError};
use kstreams_assignor::views::watch::drive::{self, Report};

use super::watch::{LookArgs, back_line, lost_line};
use super::{CliError, usage};

/// The environment variable read for the token when `--token` is not given.
const TOKEN_ENV: &str = "KSTREAMS_UI_TOKEN";

#[derive(clap::Args)]
pub(crate) struct UiArgs {
    #[command(flatten)]
    target: super::GroupArgs,
    /// The address the page is served on, `IP:PORT`. Another than loopback needs --token.
    #[arg(long, value_name = "ADDR", default_value = ui::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The token every request must carry (at least 16 letters, digits or `-._~`): open the page
    /// once with `?token=TOKEN`. Without it, the environment variable KSTREAMS_UI_TOKEN (which
    /// other users do not see in the process list).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    #[command(flatten)]
    look: LookArgs,
    /// Stop after this many seconds (a number above 0).
    #[arg(long, value_name = "SECS", value_parser = super::parse_seconds)]
    exit_after: Option<Duration>,
}

/// A line on standard error; a closed standard error is no panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `ui`: serves the page until stopped (SIGINT, SIGTERM, `--exit-after`: exit code 0). A listen
/// address refused without a token or a bad token is a usage error (2); an address that cannot
/// be listened on, or a group that cannot be watched at the first look, exits 1, as `watch`.
pub(crate) fn ui(args: UiArgs) -> Result<String, CliError> {
    let token = args.token.clone().or_else(|| std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()));
    let access = ui::access_for(args.listen, token.as_deref()).map_err(|e| usage(e.to_string()))?;
    let (options, configs) = args.look.options(&args.target)?;
    let listener = ui::bind(args.listen).map_err(|e: UiError| e.to_string())?;
    let bound = listener.local_addr().map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let interval_ms = u64::try_from(options.interval.as_millis()).unwrap_or(u64::MAX);
    let state = Arc::new(LiveState::new(&options.group, &options.bootstrap, interval_ms, configs.acceptable_recovery_lag));
    ui::server::spawn(listener, state.clone(), access).map_err(|e| format!("cannot start the server: {e}"))?;

    let flag = Arc::new(AtomicBool::new(false));
    {
        let flag = flag.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)).map_err(|e| format!("cannot install the signal handler: {e}"))?;
    }
    let query = if token.is_some() { "?token=TOKEN (once; then a cookie)" } else { "" };
    say(&format!(
        "serving group {} through {} on http://{bound}/{query}, read-only, a look every {:.1} s; Ctrl-C stops",
        options.group,
        options.bootstrap,
        options.interval.as_secs_f64()
    ));
    let deadline = args.exit_after.and_then(|d| Instant::now().checked_add(d));
    let mut stop = || flag.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d);
    let timeout = options.timeout.as_secs_f64();
    let mut on = |report: Report, summary: &kstreams_assignor::views::watch::Summary| {
        match &report {
            Report::Lost { error, unreachable, since_ms } => say(&lost_line(error, *unreachable, *since_ms, timeout)),
            Report::Back(after) => say(&back_line(*after)),
            _ => {}
        }
        state.apply(&report, summary);
    };
    let mut watcher = args.look.watcher(configs);
    drive::run(&options, &mut watcher, &mut stop, &mut on).map_err(|e| e.to_string())?;
    Ok(format!("{}\n", watcher.summary().line()))
}
