//! The `forge-host` command line: parse, call the library, print. One file per subcommand; the
//! only place that uses `anyhow` and clap.

/// Writes one line to stdout; an error (a closed pipe) ends the command.
macro_rules! out {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*)
    };
}

mod ask;
mod bytecode;
mod door_flags;
mod engines;
mod gate_flags;
mod journal;
mod limit_flags;
mod logs;
mod mcp;
mod memory_flag;
mod nats_flags;
mod packages;
mod progress;
mod replay;
mod rerun;
mod resume;
mod run;
mod state;
mod state_flags;
mod submit;
mod tool_sources;
mod tools;
mod worker;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use forge_host::datadir::DataDir;
use forge_host::error::Error;

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
            None => Ok(DataDir::default_location()?),
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a script in the engine its extension picks, print its result.
    Run(Box<run::RunArgs>),
    /// Run an earlier execution again: same script, engine, limits, session and inputs.
    Rerun(rerun::RerunArgs),
    /// Replay a recorded execution bit for bit (no tool runs, nothing is committed or
    /// published) and say whether it did exactly the same.
    Replay(replay::ReplayArgs),
    /// Continue a paused run (it stopped at a call that needs approval): approve or deny the
    /// pending call; nothing before the pause runs twice.
    Resume(resume::ResumeArgs),
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
    /// Pure-Python packages for Python scripts: add, list, remove, verify, import-lock.
    #[command(subcommand)]
    Packages(packages::PackagesCommand),
    /// The tools a script may call, as TypeScript declarations, Python stubs or JSON.
    Tools(tools::ToolsArgs),
    /// Serve MCP (stdio, or Streamable HTTP with --http): run_javascript, run_python,
    /// search_tools, get_run, resume_run.
    Mcp(Box<mcp::McpArgs>),
    /// Runs the requests of a NATS JetStream queue on this machine (forge-host past one machine).
    Worker(Box<worker::WorkerArgs>),
    /// Runs a script on the workers of a queue and waits for its report, as `run` does.
    Submit(Box<submit::SubmitArgs>),
    /// Engines with their hashes and a probe run of each, and where data and caches are.
    Status {
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
}

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Every TLS client of the process (etcd, NATS, MCP servers by URL) uses rustls on `ring`.
    forge_host::primitives::install_crypto_provider();
    // Only the MCP server runs many scripts in one process: it keeps a pool of warm instance
    // slots. Every other command runs at most one or two, and reserving a pool costs more than
    // they would save.
    if !matches!(cli.command, Command::Mcp(_)) {
        forge_host::engines::Runtime::choose_allocation(forge_host::engines::Allocation::OnDemand);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return fail(&anyhow::Error::new(error).context("cannot start the async runtime"));
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(&cli.data, *args).await,
            Command::Rerun(args) => rerun::run(&cli.data, args).await,
            Command::Replay(args) => replay::run(&cli.data, args).await,
            Command::Resume(args) => resume::run(&cli.data, args).await,
            Command::Journal(command) => journal::run(&cli.data, command).await,
            Command::State(command) => state::run(&cli.data, command),
            Command::Logs(args) => logs::run(&cli.data, args),
            Command::Engines(command) => engines::run(&cli.data, command).await,
            Command::Packages(command) => packages::run(&cli.data, command).await,
            Command::Tools(args) => tools::run(args).await,
            Command::Mcp(args) => mcp::run(&cli.data, *args).await,
            Command::Worker(args) => worker::run(&cli.data, *args).await,
            Command::Submit(args) => submit::run(*args).await,
            Command::Status { json } => engines::status(&cli.data, json).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => fail(&error),
    }
}

/// Prints why a command failed and picks the exit code: 2 for bad usage or input, 1 for a
/// failure inside forge-host. A reader that went away (`forge-host journal list | head -1`)
/// is no failure: nothing more is printed, and the exit is quiet.
fn fail(error: &anyhow::Error) -> ExitCode {
    if closed_pipe(error) {
        return ExitCode::SUCCESS;
    }
    let mut stderr = std::io::stderr().lock();
    match error.downcast_ref::<Error>() {
        Some(typed) => {
            let _ = writeln!(stderr, "error {}: {}", typed.code, typed.message);
            ExitCode::from(if typed.is_usage() { 2 } else { 1 })
        }
        None => {
            let _ = writeln!(stderr, "error: {error:#}");
            ExitCode::from(1)
        }
    }
}

fn closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
