//! `forge-host rerun ID`: the same script, engine, limits, session and inputs as an earlier run,
//! refused when an input no longer has the sha256 it had.

use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::run::{execute, report_outcome};
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
}

/// Runs `forge-host rerun`.
pub async fn run(data: &DataDirArgs, args: RerunArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let kernel = Kernel::builder(data.resolve()?).build().await?;
        let mut request = kernel.rerun(&args.id)?;
        request.out_dir = args.out.clone();
        execute(&kernel, request, args.json).await
    }
    .await;
    report_outcome(outcome, args.json)
}
