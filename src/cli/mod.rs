//! The commands, one module each, and what they share.

pub(crate) mod assign;
pub(crate) mod io;
pub(crate) mod lead;
pub(crate) mod probe;
pub(crate) mod serve;
pub(crate) mod serve_probe;
pub(crate) mod streams_member;
pub(crate) mod simulate;
pub(crate) mod ui;
pub(crate) mod watch;
pub(crate) mod wire;

/// Why a command did not succeed: the arguments do not make sense (exit code 2, as clap's own
/// usage errors), the work failed (exit code 1), or `lead`'s topology is not the members' own
/// (exit code 3).
#[derive(Debug)]
pub(crate) enum CliError {
    /// The arguments, checked before any work: exit code 2.
    Usage(String),
    /// The work failed: exit code 1.
    Failed(String),
    /// `lead` refused to assign (the topology does not match the members' subscriptions), or
    /// `join` and `probe` to join (the topology file is not the group's): exit code 3.
    TopologyMismatch(String),
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Failed(message)
    }
}

/// A usage error.
pub(crate) fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

/// `--assignor`: Kafka's class names, simple or fully qualified, or `optimized`; `--help` and the
/// shell completions list the short names.
#[derive(Clone, Copy)]
pub(crate) struct AssignorParser;

impl AssignorParser {
    fn short_name(kind: kstreams_assignor::engine::AssignorKind) -> &'static str {
        match kind {
            kstreams_assignor::engine::AssignorKind::Optimized => kstreams_assignor::engine::AssignorKind::OPTIMIZED_SHORT_NAME,
            other => other.name(),
        }
    }
}

impl clap::builder::TypedValueParser for AssignorParser {
    type Value = kstreams_assignor::engine::AssignorKind;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<Self::Value, clap::Error> {
        let text = value.to_str().ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))?;
        text.parse().map_err(|e: kstreams_assignor::engine::UnknownAssignor| {
            let flag = arg.map_or_else(|| "--assignor".to_owned(), |a| format!("--{}", a.get_long().unwrap_or("assignor")));
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{flag}: {e}\n")).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            kstreams_assignor::engine::AssignorKind::ALL.into_iter().map(|k| clap::builder::PossibleValue::new(Self::short_name(k))),
        ))
    }
}

/// A number of seconds above zero that a `Duration` holds (`inf`, `nan`, `-1` and `0` refused).
pub(crate) fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let refuse = || format!("`{text}` is not a number of seconds above 0 (leave the option out to run until stopped)");
    let secs: f64 = text.trim().parse().map_err(|_| refuse())?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(refuse());
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|_| refuse())
}

/// `--timeout` when it is not given (Kafka's `request.timeout.ms`).
pub(crate) const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The group `describe`, `watch` and `ui` look at: `--bootstrap`, [`NetArgs`] and `--group`, in that
/// order in `--help`. (`lead` takes `--bootstrap` repeated, so it declares its own.)
#[derive(clap::Args)]
pub(crate) struct GroupArgs {
    /// Brokers, `host:port`, comma-separated (`a:9092,b:9092`): tried in turn.
    #[arg(long)]
    pub(crate) bootstrap: String,
    #[command(flatten)]
    pub(crate) net: NetArgs,
    /// The group (`application.id`).
    #[arg(long)]
    pub(crate) group: String,
}

/// How `describe`, `lead` and `watch` reach the brokers.
#[derive(clap::Args)]
pub(crate) struct NetArgs {
    /// A Kafka client properties file, as Kafka's tools take it: `security.protocol`,
    /// `sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.*`,
    /// `ssl.endpoint.identification.algorithm` (every key: docs/security.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) command_config: Option<std::path::PathBuf>,
    /// The most one request may take, from its first byte sent to its answer's last byte read
    /// (`30s`, `500ms`, `2m`, or seconds); default 30 s. For `lead` it is `request.timeout.ms`,
    /// and JoinGroup and SyncGroup wait the rebalance timeout on top.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<std::time::Duration>,
}

impl NetArgs {
    /// The security of every connection: `--command-config`'s, or `PLAINTEXT`. Its notes go to
    /// standard error.
    pub(crate) fn security(&self) -> Result<kstreams_assignor::client::net::client_config::Security, String> {
        use kstreams_assignor::client::net::client_config::Security;
        let Some(path) = &self.command_config else { return Ok(Security::plaintext()) };
        let security = Security::load(path).map_err(|e| format!("--command-config {}: {e}", path.display()))?;
        for note in security.notes() {
            eprintln!("note: --command-config {}: {note}", path.display());
        }
        Ok(security)
    }

    /// `--timeout`, or [`DEFAULT_TIMEOUT`] when it is not given.
    pub(crate) fn timeout_or_default(&self) -> std::time::Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// `--bootstrap` values, each one server or a comma-separated list, as one list.
pub(crate) fn split_servers(values: &[String]) -> Vec<String> {
    values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// A duration above zero: a number with `ms`, `s` or `m`, or a bare number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let refuse = || format!("`{text}` is not a duration above 0 (e.g. `30s`, `500ms`, `2m`)");
    let value: f64 = number.trim().parse().map_err(|_| refuse())?;
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(refuse());
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|_| refuse())
}
