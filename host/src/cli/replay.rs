//! `forge-host replay ID`: the recorded run again, fed its recorded inputs; identical or not.

use std::io::Write;
use std::process::ExitCode;

use super::DataDirArgs;
use forge_host::kernel::Kernel;

/// Arguments of `forge-host replay`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the replay is identical, 1 when it diverged, 2 \
when the run cannot be replayed (not recorded, its engine component gone, an input changed).\n\n\
Examples:\n  forge-host replay 01a22fda4caf2d8f6c79\n  forge-host replay 01a22fda4caf2d8f6c79 --trace"
)]
pub struct ReplayArgs {
    /// The execution to replay (`forge-host journal list`)
    pub id: String,
    /// Print the timeline of host interactions served from the recording
    #[arg(long)]
    pub trace: bool,
    /// One JSON object
    #[arg(long)]
    pub json: bool,
}

/// Runs `forge-host replay`.
pub async fn run(data: &DataDirArgs, args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let kernel = Kernel::builder(data.resolve()?).build().await?;
    let report = kernel.replay(&args.id, args.trace).await?;
    if args.json {
        out!("{}", serde_json::to_string(&report)?)?;
    } else {
        for line in &report.trace {
            out!("{line}")?;
        }
        let replay_id = report.replay_id.as_deref().unwrap_or("nothing (not run)");
        match &report.divergence {
            None => out!(
                "identical: {} replayed as {replay_id} ({}, {} tool calls, same result, text, stdout and stderr)",
                report.id,
                report.recorded_status,
                report.calls
            )?,
            Some(why) => out!("diverged: {} replayed as {replay_id}: {why}", report.id)?,
        }
        for note in &report.notes {
            out!("note: {note}")?;
        }
    }
    std::mem::forget(kernel);
    Ok(if report.identical {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
