//! `kstreams-assignor`: the command line over the library.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

use cli::{assign, lead, simulate, wire};

#[derive(Parser)]
#[command(name = "kstreams-assignor", version, about = "Kafka Streams' rebalance protocol, byte for byte")]
struct Cli {
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
    /// Join a Kafka Streams group on a real broker and lead it, taking no tasks (leader-only);
    /// prints each generation's assignment as one line of JSON.
    Lead(lead::LeadArgs),
    /// Describe a Kafka Streams group: each member's subscription and assignment, decoded.
    Describe(lead::DescribeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decode(args) => wire::decode(args).map(String::into_bytes),
        Command::Encode(args) => wire::encode(args),
        Command::Assign(args) => assign::assign(args).map(String::into_bytes),
        Command::Simulate(args) => simulate::simulate(args).map(String::into_bytes),
        Command::Lead(args) => lead::lead(args).map(String::into_bytes),
        Command::Describe(args) => lead::describe(args).map(String::into_bytes),
    };
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(&out).and_then(|()| stdout.flush()).is_err() {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
