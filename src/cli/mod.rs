//! The commands, one module each, and what they share.

pub(crate) mod assign;
pub(crate) mod io;
pub(crate) mod lead;
pub(crate) mod simulate;
pub(crate) mod wire;

/// Why a command did not succeed: the arguments do not make sense (exit code 2, as clap's own
/// usage errors), or the work failed (exit code 1).
#[derive(Debug)]
pub(crate) enum CliError {
    /// The arguments, checked before any work: exit code 2.
    Usage(String),
    /// The work failed: exit code 1.
    Failed(String),
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
