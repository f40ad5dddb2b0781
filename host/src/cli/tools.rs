//! `forge-host tools`: the catalog a script would see, as TypeScript declarations, Python stubs
//! or JSON: what an agent puts in a model's context.

use std::io::Write;
use std::process::ExitCode;

use super::tool_sources::ToolSourceArgs;
use forge_host::limits::Limits;
use forge_host::tools::declare;

/// Arguments of `forge-host tools`.
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
    /// ts: TypeScript declarations of `tools`; py: Python stubs of `forge.tools`; json
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    #[command(flatten)]
    pub sources: ToolSourceArgs,
}

/// How the catalog is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// TypeScript declarations
    Ts,
    /// Python stubs
    Py,
    /// JSON
    Json,
}

/// Runs `forge-host tools`.
pub async fn run(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let sources = args
        .sources
        .connect(Limits::default().max_call_response_bytes)
        .await?;
    let registry = &sources.registry;
    let text = match args.format {
        Format::Ts => declare::typescript(registry),
        Format::Py => declare::python(registry),
        Format::Json => format!("{:#}\n", declare::json(registry)),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
