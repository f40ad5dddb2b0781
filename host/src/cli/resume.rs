//! `forge-host resume ID --approve|--deny`: a paused run continues, in a new execution, with the
//! same tool sources, policy, limits and session (from the journal).

use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::nats_flags::InsecureFlag;
use super::run::{execute, report_outcome};
use super::tool_sources::ToolSourceArgs;
use forge_host::kernel::Kernel;

/// Arguments of `forge-host resume`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The new execution replays the paused one up to its pending call (no \
tool call before the pause runs again, and the clock and random numbers read before it read the \
same), then runs that call (--approve) or fails it with TOOL_DENIED (--deny), and goes on live. \
Its state commits against the paused run's snapshot: a key changed meanwhile is STATE_CONFLICT. \
Exit status as for `run`.\n\nExamples:\n  forge-host resume 01a22fda4caf2d8f6c79 --approve\n  \
forge-host resume 01a22fda4caf2d8f6c79 --deny --json"
)]
pub struct ResumeArgs {
    /// The paused execution (`forge-host journal list --status paused`)
    pub id: String,
    /// Run the pending call
    #[arg(long, required_unless_present = "deny", conflicts_with = "deny")]
    pub approve: bool,
    /// Fail the pending call with TOOL_DENIED, and let the script go on
    #[arg(long)]
    pub deny: bool,
    /// Print one JSON object with the result, error, output and metrics
    #[arg(long)]
    pub json: bool,
    /// Where /output is published [default: ./forge-out/<new-run-id>/]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A run whose state is on etcd reaches it as the journal says, with the credentials of
    /// FORGE_HOST_ETCD_* (CA, CERT, KEY, USER, PASSWORD); --insecure as `run` takes it
    #[command(flatten)]
    pub insecure: InsecureFlag,
}

/// Runs `forge-host resume`.
pub async fn run(data: &DataDirArgs, args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let data_dir = data.resolve()?;
        let record = forge_host::journal::Journal::open(&data_dir)
            .and_then(|journal| journal.get(&args.id))
            .map_err(forge_host::Error::from)?;
        let sources: ToolSourceArgs = record
            .tool_sources
            .clone()
            .and_then(|recorded| serde_json::from_value(recorded).ok())
            .unwrap_or_default();
        let sources = sources
            .connect(record.limits().max_call_response_bytes)
            .await?;
        // It commits where the paused run would have.
        let kernel = Kernel::builder(data_dir)
            .tools(sources.registry.clone())
            .state(super::state_flags::recorded(
                record.state_store.as_deref(),
                args.insecure,
            )?)
            .build()
            .await?;
        let request = kernel
            .resume(&args.id, args.approve)?
            .out_dir(args.out.clone())
            .build();
        let report = execute(&kernel, request, args.json, false).await;
        drop(sources);
        report
    }
    .await;
    report_outcome(outcome, args.json)
}
