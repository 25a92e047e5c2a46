//! `kstreams-assignor`: the command line over the library.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod cli;

use cli::{CliError, assign, lead, probe, serve, simulate, streams_member, ui, watch, wire};

#[derive(Parser)]
#[command(
    name = "kstreams-assignor",
    version,
    about = "Kafka Streams' rebalance protocol, byte for byte",
    after_help = "Exit codes: 0 success, 1 failure, 2 usage error (bad or conflicting options)."
)]
struct Cli {
    /// The most bytes any input file or standard input may hold.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = cli::io::DEFAULT_MAX_INPUT_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
    max_input_bytes: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode rebalance metadata (hex, base64, a raw file or stdin) and print it as JSON.
    Decode(wire::DecodeArgs),
    /// Encode rebalance metadata from the JSON that `decode` prints.
    Encode(wire::EncodeArgs),
    /// Run a task assignor on a group described in JSON and print the assignment.
    Assign(assign::AssignArgs),
    /// Simulate successive rebalances of a group until the assignment is stable.
    Simulate(simulate::SimulateArgs),
    /// Join a Kafka Streams group on a real broker: on the classic protocol lead it, taking no
    /// tasks (leader-only), and print each generation's assignment as one line of JSON; on the
    /// streams protocol (`--protocol streams`) take tasks beside Java members and print each
    /// member epoch's tasks as one line of JSON.
    #[command(visible_alias = "join")]
    Lead(lead::LeadArgs),
    /// Describe a Kafka Streams group of either rebalance protocol: a classic group's subscriptions
    /// and assignments decoded, a streams group's (KIP-1071) members, assignments and topology.
    Describe(lead::DescribeArgs),
    /// Follow a Kafka Streams group of either rebalance protocol until stopped: one line per
    /// generation or group epoch with who joined and left, every task that moved and why, and
    /// the warm-ups' progress.
    Watch(watch::WatchArgs),
    /// Serve a live web page of a Kafka Streams group of either rebalance protocol, fed by the
    /// same looks as `watch`: members by process against tasks by sub-topology, warm-ups' progress,
    /// a timeline of generations with their moves and causes; read-only, on loopback unless a
    /// token is given.
    Ui(ui::UiArgs),
    /// Join a streams group whose broker assignor is `optimized` as a member that takes no task,
    /// and make the coordinator assign again as soon as a warm-up (a standby on its way to become
    /// the active) has caught up, so that tasks move to caught-up copies; one line of JSON per look.
    Probe(probe::ProbeArgs),
    /// Follow every Kafka Streams group of a cluster (classic and streams) until stopped, and
    /// serve them as Prometheus metrics (`/metrics`) and live web pages: a home that lists every
    /// group's health, and each group's `ui` page; read-only, on loopback unless a token is given,
    /// over HTTPS with a certificate and key.
    Serve(serve::ServeArgs),
    /// Print a shell completion script, e.g. `kstreams-assignor completions bash > /etc/bash_completion.d/kstreams-assignor`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `kstreams-assignor man > kstreams-assignor.1`.
    Man,
}

/// The man page of the whole command line.
fn man_page() -> Result<Vec<u8>, CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out).map_err(|e| format!("cannot render the man page: {e}"))?;
    Ok(out)
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Usage errors found after parsing show that subcommand's usage line.
    let name = matches.subcommand_name().map(str::to_owned);
    cli::io::set_max_input_bytes(cli.max_input_bytes);
    let text = |r: Result<String, String>| r.map(String::into_bytes).map_err(CliError::from);
    let result = match cli.command {
        Command::Decode(args) => wire::decode(args).map(String::into_bytes),
        Command::Encode(args) => wire::encode(args),
        Command::Assign(args) => assign::assign(args).map(String::into_bytes),
        Command::Simulate(args) => simulate::simulate(args).map(String::into_bytes),
        Command::Lead(args) if args.protocol == lead::Protocol::Streams => streams_member::join(args).map(String::into_bytes),
        Command::Lead(args) => lead::lead(args).map(String::into_bytes),
        Command::Describe(args) => text(lead::describe(args)),
        Command::Watch(args) => text(watch::watch(args)),
        Command::Ui(args) => ui::ui(args).map(String::into_bytes),
        Command::Probe(args) => probe::probe(args).map(String::into_bytes),
        Command::Serve(args) => serve::serve(args).map(String::into_bytes),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "kstreams-assignor", &mut out);
            Ok(out)
        }
        Command::Man => man_page(),
    };
    match result {
        Ok(out) => {
            // `lead` has printed as it went (and stops when its standard output closes).
            if out.is_empty() {
                return ExitCode::SUCCESS;
            }
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(&out).and_then(|()| stdout.flush()).is_err() {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(CliError::Failed(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(CliError::TopologyMismatch(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(3)
        }
        // As clap reports its own usage errors: the message, the usage line, exit code 2.
        Err(CliError::Usage(e)) => {
            let mut cmd = Cli::command();
            cmd.build();
            match name.and_then(|n| cmd.find_subcommand_mut(&n).cloned()) {
                Some(mut sub) => sub.error(clap::error::ErrorKind::ArgumentConflict, e).exit(),
                None => cmd.error(clap::error::ErrorKind::ArgumentConflict, e).exit(),
            }
        }
    }
}
