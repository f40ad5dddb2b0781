//! `forge-host mcp`: serves MCP (stdio, or Streamable HTTP with `--http`), so that an agent runs
//! scripts through `run_javascript` and `run_python`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::door_flags::DoorFlags;
use super::gate_flags::GateFlags;
use super::limit_flags::LimitFlags;
use super::memory_flag::MemoryFlag;
use super::nats_flags::{InsecureFlag, NatsFlags};
use super::state_flags::StateFlags;
use super::tool_sources::ToolSourceArgs;
use forge_host::kernel::Kernel;
use forge_host::mcp_server::{
    AskVia, BearerToken, ForgeMcp, HttpAuth, HttpOptions, ServerOptions, TlsFiles, serve_http,
    serve_stdio, token_path,
};

/// Arguments of `forge-host mcp`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The limit flags are ceilings: a client's timeout_ms and memory_mb are \
lowered to them, and the report says so under `clamped`. A client's `inputs` must lie under \
--inputs-root (or --workspace). Over --http every request needs the bearer token (printed: \
where it was written); an address that is not loopback needs --tls-cert and --tls-key.\n\n\
Examples:\n  forge-host mcp\n  \
forge-host mcp --http 127.0.0.1:8808 --max-runs 4\n  \
forge-host mcp --http 0.0.0.0:8808 --tls-cert cert.pem --tls-key key.pem --token-file token\n  \
forge-host mcp --workspace ./data   # clients may name files under ./data as inputs\n  \
forge-host mcp --mcp 'fs=npx -y @modelcontextprotocol/server-filesystem ./data' --allow-write\n  \
forge-host mcp --workspace ./data --ask\n\n\
In an agent's config:\n  {\"mcpServers\": {\"forge\": {\"command\": \"forge-host\", \"args\": [\"mcp\"]}}}",
    mut_arg("nats", super::nats_flags::opt_in)
)]
pub struct McpArgs {
    /// Serve Streamable HTTP at http://ADDRESS/mcp instead of stdio: HOST:PORT, or a bare PORT
    /// for 127.0.0.1:PORT (it binds only what it is told; port 0 picks a free one). Every
    /// request needs the bearer token; an address that is not loopback needs TLS too
    #[arg(long, value_name = "ADDRESS", value_parser = http_address)]
    pub http: Option<SocketAddr>,
    /// With --http: the bearer token clients must send (Authorization: Bearer TOKEN), read from
    /// FILE [default: a new one each start, written owner-only to
    /// DATA_DIR/mcp-http/PORT.token, whose path is printed]
    #[arg(
        long,
        value_name = "FILE",
        requires = "http",
        conflicts_with = "no_auth"
    )]
    pub token_file: Option<PathBuf>,
    /// With --http on a loopback address: take requests without a token (any process of any
    /// user on this machine can then run scripts here)
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// With --http: serve HTTPS with this certificate chain (PEM, leaf first); needed for an
    /// address that is not loopback
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// With --tls-cert: its private key (PEM)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// With --http: a host name clients reach the server by (the Host-header check refuses
    /// names other than loopback's and the address bound); repeatable
    #[arg(long, value_name = "NAME", requires = "http")]
    pub allow_host: Vec<String>,
    #[command(flatten)]
    pub door: DoorFlags,
    /// A folder whose files clients may name in `inputs` (relative to it, or absolute inside
    /// it; no `..` or symlink leads out); repeatable [default: the --workspace folder; without
    /// either, `inputs` is refused]
    #[arg(long, value_name = "DIR")]
    pub inputs_root: Vec<PathBuf>,
    /// A PNG, JPEG or GIF a run publishes of at most this size is also shown in the tool result
    /// as an image; every published file is a resource link (forge-host://runs/ID/PATH) that
    /// resources/read returns
    #[arg(long, value_name = "SIZE", default_value = "256KiB", value_parser = forge_host::limits::parse_size)]
    pub max_inline_image: u64,
    /// Runs at once; more calls queue [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_runs: Option<u32>,
    /// Calls waiting for a free run slot at most; one more is refused with BUDGET_EXCEEDED
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub max_queued: u32,
    #[command(flatten)]
    pub memory: MemoryFlag,
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
    let data_dir = data.resolve()?;
    let data_root = &data_dir.root().to_path_buf();
    let kernel = Kernel::builder(data_dir)
        .tools(sources.registry.clone())
        .state(state)
        .build()
        .await?;
    let max_runs = args.max_runs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );
    // The workspace is already the folder scripts may read through the workspace tools, so
    // letting clients name inputs there shares nothing new.
    let roots: Vec<PathBuf> = if args.inputs_root.is_empty() {
        args.sources.workspace.iter().cloned().collect()
    } else {
        args.inputs_root.clone()
    };
    let inputs_root = (!roots.is_empty())
        .then(|| forge_host::files::InputRoots::open(&roots))
        .transpose()?;
    let max_message_bytes = forge_host::mcp_server::max_message_bytes(&ceilings);
    // A pool's workers bound their own runs' memory.
    let max_memory = match &target {
        Some(_) => None,
        None => args.memory.budget(&ceilings, max_runs)?,
    };
    let options = ServerOptions {
        ceilings,
        policy: args.gate.policy(args.ask.is_some()),
        max_runs,
        max_queued: args.max_queued as usize,
        max_memory,
        inputs_root,
        max_inline_image: args.max_inline_image,
        default_session: args.session.clone(),
        ask_via: match args.ask {
            Some(McpAsk::Pause) => AskVia::Pause,
            _ => AskVia::Client,
        },
        tool_sources: Some(args.sources.recorded()),
        pool: match &target {
            Some(target) => Some(forge_host::cluster::submit::QueueRunner {
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
        None => serve_stdio(served, max_message_bytes).await?,
        Some(address) => {
            let servers: Vec<&str> = sources.servers.names().collect();
            let upstream = if servers.is_empty() {
                String::new()
            } else {
                format!(", with the tools of {}", servers.join(", "))
            };
            let http = HttpOptions {
                address,
                auth: match (&args.token_file, args.no_auth) {
                    (_, true) => HttpAuth::Open,
                    (Some(file), false) => HttpAuth::Bearer(BearerToken::from_file(file)?),
                    (None, false) => HttpAuth::Bearer(BearerToken::generate()?),
                },
                tls: args
                    .tls_cert
                    .clone()
                    .zip(args.tls_key.clone())
                    .map(|(cert, key)| TlsFiles { cert, key }),
                allowed_hosts: args.allow_host.clone(),
                max_message_bytes,
                limits: args.door.limits(),
                max_requests_per_second: args.door.max_requests_per_second(),
            };
            http.check()?;
            let scheme = http.scheme();
            let generated = match (&http.auth, &args.token_file) {
                (HttpAuth::Bearer(token), None) => Some(token.clone()),
                _ => None,
            };
            let written = std::sync::Mutex::new(None);
            serve_http(
                served,
                http,
                |bound| {
                    let auth = match generated {
                        Some(token) => {
                            let path = token_path(data_root, bound.port());
                            token.write_to(&path)?;
                            let said = format!(" (bearer token in {})", path.display());
                            if let Ok(mut written) = written.lock() {
                                *written = Some(path);
                            }
                            said
                        }
                        None if args.no_auth => {
                            eprintln!(
                                "forge-host mcp: --no-auth: any process of any user on this machine can run scripts here"
                            );
                            String::new()
                        }
                        None => " (bearer token from --token-file)".into(),
                    };
                    eprintln!("forge-host mcp: serving {scheme}://{bound}/mcp{auth}{upstream}");
                    Ok(())
                },
                shutdown_signal(),
            )
            .await?;
            // A generated token ends with its server.
            if let Ok(Some(path)) = written.into_inner() {
                let _ = std::fs::remove_file(path);
            }
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
