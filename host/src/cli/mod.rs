//! The `forge-host` command line: one file per subcommand, glue only.

mod engines;
mod journal;
mod logs;
mod rerun;
mod run;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::datadir::DataDir;
use crate::error::{Error, ErrorCode};

/// Runs untrusted scripts (JavaScript, Python, any language built as a forge:engine WebAssembly
/// component) with no access beyond what they are given, no network, hard memory and CPU caps,
/// and hard termination.
#[derive(Debug, Parser)]
#[command(name = "forge-host", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    data: DataDirArgs,
    #[command(subcommand)]
    command: Command,
}

/// Options every command that touches the data directory accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct DataDirArgs {
    /// Data directory holding the journal and state [default: $XDG_DATA_HOME/forge-host]
    #[arg(long, global = true, env = "FORGE_HOST_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

impl DataDirArgs {
    /// The chosen data directory.
    pub fn resolve(&self) -> Result<DataDir, Error> {
        match &self.data_dir {
            Some(dir) => Ok(DataDir::new(dir)),
            None => DataDir::default_location(),
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a script in the engine its extension picks, print its result.
    Run(Box<run::RunArgs>),
    /// Run an earlier execution again: same script, engine, limits, session and inputs.
    Rerun(rerun::RerunArgs),
    /// What ran, how it ended, and its nested calls.
    #[command(subcommand)]
    Journal(journal::JournalCommand),
    /// The shared state of a session.
    #[command(subcommand)]
    State(state::StateCommand),
    /// The live task log of an execution.
    Logs(logs::LogsArgs),
    /// Engines: list them, check that they load and run, add one.
    #[command(subcommand)]
    Engines(engines::EnginesCommand),
    /// Engines with their hashes and a probe run of each, and where data and caches are.
    Status {
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
}

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    // Flags typed on the command line win over a `--config` file; their defaults do not.
    let explicit: Vec<String> = matches
        .subcommand()
        .map(|(_, sub)| {
            sub.ids()
                .filter(|id| {
                    sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.as_str().to_string())
                .collect()
        })
        .unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error ISOLATE_FAILURE: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(&cli.data, *args, &explicit).await,
            Command::Rerun(args) => rerun::run(&cli.data, args).await,
            Command::Journal(command) => journal::run(&cli.data, command),
            Command::State(command) => state::run(&cli.data, command),
            Command::Logs(args) => logs::run(&cli.data, args),
            Command::Engines(command) => engines::run(&cli.data, command).await,
            Command::Status { json } => engines::status(&cli.data, json).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            let code = error
                .downcast_ref::<Error>()
                .map(|e| e.code)
                .unwrap_or(ErrorCode::InvalidInput);
            eprintln!("error {code}: {}", error_line(&error));
            exit_code_for(code)
        }
    }
}

/// The one-line form of an error.
fn error_line(error: &anyhow::Error) -> String {
    match error.downcast_ref::<Error>() {
        Some(e) => e.message.clone(),
        None => format!("{error:#}"),
    }
}

/// 2 for what stopped a run before it started because of its input; 1 otherwise.
fn exit_code_for(code: ErrorCode) -> ExitCode {
    match code {
        ErrorCode::InvalidInput | ErrorCode::EngineUnavailable => ExitCode::from(2),
        _ => ExitCode::from(1),
    }
}
