//! `forge-host rerun ID`: the same script, engine, limits, session and inputs as an earlier run,
//! refused when an input no longer has the sha256 it had.

use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::nats_flags::InsecureFlag;
use super::run::{execute, report_outcome};
use super::tool_sources::ToolSourceArgs;
use forge_host::kernel::Kernel;

/// Arguments of `forge-host rerun`.
#[derive(Debug, clap::Args)]
pub struct RerunArgs {
    /// The execution to run again
    pub id: String,
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
    /// The journal keeps which tools a run called, not where they came from: give the same
    /// tool sources again (--workspace, --mcp, --mcp-config, --trust)
    #[command(flatten)]
    pub sources: ToolSourceArgs,
}

/// Runs `forge-host rerun`.
pub async fn run(data: &DataDirArgs, args: RerunArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let data_dir = data.resolve()?;
        let record = forge_host::journal::Journal::open(&data_dir)
            .and_then(|journal| journal.get(&args.id))
            .map_err(forge_host::Error::from)?;
        let sources = args
            .sources
            .connect(record.limits().max_call_response_bytes)
            .await?;
        // The same session's state: where the first run kept it.
        let kernel = Kernel::builder(data_dir)
            .tools(sources.registry.clone())
            .state(super::state_flags::recorded(
                record.state_store.as_deref(),
                args.insecure,
            )?)
            .build()
            .await?;
        let request = kernel.rerun(&args.id)?.out_dir(args.out.clone()).build();
        let report = execute(&kernel, request, args.json, true).await;
        drop(sources);
        report
    }
    .await;
    report_outcome(outcome, args.json)
}
