//! `forge-host mcp`: serves MCP (stdio, or Streamable HTTP with `--http`), so that an agent runs
//! scripts through `run_javascript` and `run_python`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::gate_flags::GateFlags;
use super::limit_flags::LimitFlags;
use super::nats_flags::{InsecureFlag, NatsFlags};
use super::state_flags::StateFlags;
use super::tool_sources::ToolSourceArgs;
use forge_host::kernel::Kernel;
use forge_host::mcp_server::{AskVia, ForgeMcp, ServerOptions, serve_http, serve_stdio};

/// Arguments of `forge-host mcp`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The limit flags are ceilings: a client's timeout_ms and memory_mb are \
lowered to them, and the report says so under `clamped`.\n\nExamples:\n  forge-host mcp\n  \
forge-host mcp --http 127.0.0.1:8808 --max-runs 4\n  \
forge-host mcp --mcp 'fs=npx -y @modelcontextprotocol/server-filesystem ./data' --allow-write\n  \
forge-host mcp --workspace ./data --ask\n\n\
In an agent's config:\n  {\"mcpServers\": {\"forge\": {\"command\": \"forge-host\", \"args\": [\"mcp\"]}}}",
    mut_arg("nats", super::nats_flags::opt_in)
)]
pub struct McpArgs {
    /// Serve Streamable HTTP at http://ADDRESS/mcp instead of stdio: HOST:PORT, or a bare PORT
    /// for 127.0.0.1:PORT (it binds only what it is told; port 0 picks a free one)
    #[arg(long, value_name = "ADDRESS", value_parser = http_address)]
    pub http: Option<SocketAddr>,
    /// Runs at once; more calls queue [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_runs: Option<u32>,
    /// Session of calls that name none
    #[arg(long, value_name = "NAME", default_value = "mcp")]
    pub session: String,
    #[command(flatten)]
    pub sources: ToolSourceArgs,
    #[command(flatten)]
    pub limits: LimitFlags,
    /// Limits from a JSON file of flag names and values; flags typed on the command line
    /// override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub state: StateFlags,
    // --nats: hand runs to the workers of a NATS server instead of running them here.
    #[command(flatten)]
    pub nats: NatsFlags,
    #[command(flatten)]
    pub insecure: InsecureFlag,
    /// With --nats: the queue runs go to
    #[arg(long, value_name = "NAME", default_value = forge_host::cluster::DEFAULT_QUEUE)]
    pub queue: String,
    /// Put a call the policy would deny to a person instead of failing it: through the client
    /// (MCP elicitation) when it declared it can ask; otherwise, or with --ask=pause, the run
    /// pauses there (status paused, APPROVAL_REQUIRED) and the `resume_run` tool continues it
    #[arg(long, value_name = "HOW", num_args = 0..=1, require_equals = true, default_missing_value = "client")]
    pub ask: Option<McpAsk>,
}

/// How `forge-host mcp --ask` puts a call to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpAsk {
    /// Through the client (elicitation/create) when it can ask; otherwise the run pauses.
    Client,
    /// The run pauses at the call, for `resume_run {id, approve}`.
    Pause,
}

/// How long a stopping server waits for cancelled runs to end.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `--http`: `HOST:PORT`, or a bare `PORT` (or `:PORT`) on loopback.
fn http_address(text: &str) -> Result<SocketAddr, String> {
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("`{text}` is not HOST:PORT (127.0.0.1:8808, [::1]:8808) or a PORT"))
}

/// Runs `forge-host mcp` until the client goes (stdio) or a signal comes (HTTP).
pub async fn run(data: &DataDirArgs, args: McpArgs) -> anyhow::Result<ExitCode> {
    let target = args.nats.target(args.insecure)?;
    let state = args.state.store(args.insecure)?;
    let ceilings = args.limits.limits(args.config.as_deref())?;
    forge_host::kernel::validate_session(&args.session)?;
    let sources = args
        .sources
        .connect(ceilings.max_call_response_bytes)
        .await?;
    let kernel = Kernel::builder(data.resolve()?)
        .tools(sources.registry.clone())
        .state(state)
        .build()
        .await?;
    let max_runs = args.max_runs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );
    let options = ServerOptions {
        ceilings,
        policy: args.gate.policy(args.ask.is_some()),
        max_runs,
        default_session: args.session.clone(),
        ask_via: match args.ask {
            Some(McpAsk::Pause) => AskVia::Pause,
            _ => AskVia::Client,
        },
        tool_sources: Some(args.sources.recorded()),
        pool: match &target {
            Some(target) => Some(forge_host::mcp_server::Pool {
                cluster: forge_host::cluster::Cluster::connect(
                    target,
                    &forge_host::cluster::QueueOptions::default(),
                )
                .await?,
                queue: args.queue.clone(),
            }),
            None => None,
        },
    };
    let server = ForgeMcp::new(kernel, sources.registry.clone(), options);
    let served = server.clone();
    match args.http {
        None => serve_stdio(served).await?,
        Some(address) => {
            let servers: Vec<&str> = sources.servers.names().collect();
            let upstream = if servers.is_empty() {
                String::new()
            } else {
                format!(", with the tools of {}", servers.join(", "))
            };
            serve_http(
                served,
                address,
                |bound| eprintln!("forge-host mcp: serving http://{bound}/mcp{upstream}"),
                shutdown_signal(),
            )
            .await?;
        }
    }
    // Runs still in flight are cancelled and journaled before the tool servers end.
    server.shutdown(SHUTDOWN_WAIT).await;
    drop(sources);
    Ok(ExitCode::SUCCESS)
}

/// Resolves at Ctrl-C or SIGTERM.
pub(super) async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
