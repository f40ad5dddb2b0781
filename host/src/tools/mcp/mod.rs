//! MCP servers as tool sources: forge-host connects as a client (the official `rmcp`
//! SDK) to stdio servers it starts and to Streamable HTTP servers, and every tool of server
//! `NAME` enters the catalog as `NAME.TOOL`. Servers start once per process, all at once, and
//! end with it ([`McpServers`] ends every process group when dropped).

mod process;
pub mod source;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceExt, model::Tool as McpToolInfo};

pub use source::{Endpoint, Headers, ServerSpec};

use super::{ServerLogs, ToolRegistry};
use process::{ServerProcess, StderrTail};
use tool::{McpTool, ServerLink};

/// How long a server has to start and answer `initialize` and `tools/list`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Why MCP servers could not be used.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A `--mcp`, `--mcp-config` or `--trust` value is wrong.
    #[error("{0}")]
    Config(String),
    /// The server's program could not be started.
    #[error("MCP server `{server}`: cannot start `{program}`: {source}")]
    Spawn {
        /// The server.
        server: String,
        /// Its program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server started but did not become usable.
    #[error("MCP server `{server}` {why}; the end of its stderr:\n{stderr}")]
    Start {
        /// The server.
        server: String,
        /// What went wrong.
        why: String,
        /// The last lines it wrote to stderr.
        stderr: String,
    },
}

impl From<McpError> for crate::error::Error {
    /// A server that cannot be used stops the run before it starts, as bad input does.
    fn from(error: McpError) -> Self {
        crate::error::Error::from_source(crate::error::ErrorCode::InvalidInput, error)
    }
}

/// Everything a connection to a server needs besides its spec.
#[derive(Clone)]
pub struct ConnectOptions {
    /// The largest tool response read (`--max-call-response`); a message is allowed twice that
    /// (MCP often sends a result both as structured content and as text), plus room for its
    /// envelope, before it is refused while being read.
    pub max_response_bytes: u64,
    /// Where the servers' stderr lines go.
    pub logs: ServerLogs,
}

type Client = RunningService<RoleClient, InitializeRequestParams>;

/// A connected server.
struct Connection {
    name: String,
    /// Kept so that the session lives as long as the servers; dropping it closes the session.
    _client: Client,
    process: Option<Arc<std::sync::Mutex<ServerProcess>>>,
    tools: Vec<McpToolInfo>,
    link: Arc<ServerLink>,
}

impl Connection {
    /// The connection to `spec`'s server over `client`, with the process behind it when
    /// forge-host started one.
    fn new(
        spec: &ServerSpec,
        client: Client,
        tools: Vec<McpToolInfo>,
        process: Option<(Arc<std::sync::Mutex<ServerProcess>>, StderrTail)>,
    ) -> Self {
        let link = Arc::new(ServerLink::new(
            &spec.name,
            client.peer().clone(),
            spec.trust,
            process.clone(),
        ));
        Connection {
            name: spec.name.clone(),
            _client: client,
            process: process.map(|(process, _)| process),
            tools,
            link,
        }
    }
}

/// The MCP servers of this process, connected.
#[derive(Default)]
pub struct McpServers {
    connections: Vec<Connection>,
}

impl McpServers {
    /// Starts and initializes every server at once; any that fails within
    /// [`STARTUP_TIMEOUT`] fails them all (the ones started are ended).
    pub async fn connect(specs: &[ServerSpec], options: &ConnectOptions) -> Result<Self, McpError> {
        let attempts = specs.iter().map(|spec| connect_one(spec, options));
        let mut servers = McpServers::default();
        let mut first_error = None;
        for outcome in futures::future::join_all(attempts).await {
            match outcome {
                Ok(connection) => servers.connections.push(connection),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(servers),
        }
    }

    /// Refuses server names that tools already in `registry` use: a tool called `NAME`, or a
    /// namespace `NAME.` (the workspace tools'), would be shadowed or mixed with the server's.
    pub fn check_names(specs: &[ServerSpec], registry: &ToolRegistry) -> Result<(), McpError> {
        for spec in specs {
            let prefix = format!("{}.", spec.name);
            if let Some(taken) = registry
                .list()
                .find(|info| info.name == spec.name || info.name.starts_with(&prefix))
            {
                return Err(McpError::Config(format!(
                    "an MCP server cannot be called `{}`: the tool `{}` has that name",
                    spec.name, taken.name
                )));
            }
        }
        Ok(())
    }

    /// Adds every server's tools to `registry` as `NAME.TOOL`.
    pub fn register(&self, registry: &mut ToolRegistry) {
        for connection in &self.connections {
            for info in &connection.tools {
                registry.register(Arc::new(McpTool::new(
                    &connection.name,
                    info,
                    connection.link.clone(),
                )));
            }
        }
    }

    /// Names of the connected servers.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.connections.iter().map(|c| c.name.as_str())
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        for connection in &self.connections {
            if let Some(process) = &connection.process
                && let Ok(mut process) = process.lock()
            {
                process.stop();
            }
        }
    }
}

fn client_config() -> InitializeRequestParams {
    InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("forge-host", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Initializes a session over `transport` and lists the server's tools.
async fn handshake<T, E, A>(transport: T) -> Result<(Client, Vec<McpToolInfo>), String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = client_config()
        .serve(transport)
        .await
        .map_err(|e| format!("did not initialize: {e}"))?;
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("did not list its tools: {e}"))?;
    Ok((client, tools))
}

async fn connect_one(spec: &ServerSpec, options: &ConnectOptions) -> Result<Connection, McpError> {
    let max_message = usize::try_from(options.max_response_bytes.saturating_mul(2))
        .unwrap_or(usize::MAX)
        .saturating_add(64 << 10);
    let name = spec.name.clone();
    let started = |why: String, stderr: String| McpError::Start {
        server: name.clone(),
        why,
        stderr,
    };
    match &spec.endpoint {
        Endpoint::Command {
            program,
            args,
            env,
            cwd,
        } => {
            let (process, stdout, stdin) = process::spawn(
                &spec.name,
                program,
                args,
                env,
                cwd.as_ref(),
                max_message,
                options.logs.clone(),
            )?;
            let tail = process.stderr.clone();
            let process = Arc::new(std::sync::Mutex::new(process));
            let started_up = tokio::time::timeout(STARTUP_TIMEOUT, handshake((stdout, stdin)));
            let (client, tools) = match started_up.await {
                Ok(Ok(done)) => done,
                Ok(Err(why)) => {
                    tail.settle().await;
                    let why = match process.lock().ok().and_then(|p| p.exit()) {
                        Some(status) => format!("{why} (it exited: {status})"),
                        None => why,
                    };
                    return Err(started(why, tail.text()));
                }
                Err(_) => {
                    return Err(started(
                        format!(
                            "did not start and initialize within {}s",
                            STARTUP_TIMEOUT.as_secs()
                        ),
                        tail.text(),
                    ));
                }
            };
            Ok(Connection::new(spec, client, tools, Some((process, tail))))
        }
        Endpoint::Url { url, headers } => {
            // reqwest's TLS needs a crypto provider installed before its client is made.
            crate::primitives::install_crypto_provider();
            let headers = headers
                .0
                .iter()
                .filter_map(|(name, value)| {
                    Some((
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()).ok()?,
                        reqwest::header::HeaderValue::from_str(value).ok()?,
                    ))
                })
                .collect();
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(headers)
                .max_json_response_size(max_message)
                .max_sse_event_size(max_message);
            let transport: StreamableHttpClientTransport<reqwest::Client> =
                StreamableHttpClientTransport::from_config(config);
            // forge-host did not start it, so it has no stderr of it to quote.
            let unseen =
                || "(a server reached by URL: forge-host does not see its stderr)".to_string();
            let started_up = tokio::time::timeout(STARTUP_TIMEOUT, handshake(transport));
            let (client, tools) = match started_up.await {
                Ok(Ok(done)) => done,
                Ok(Err(why)) => return Err(started(format!("at {url} {why}"), unseen())),
                Err(_) => {
                    return Err(started(
                        format!(
                            "at {url} did not answer within {}s",
                            STARTUP_TIMEOUT.as_secs()
                        ),
                        unseen(),
                    ));
                }
            };
            Ok(Connection::new(spec, client, tools, None))
        }
    }
}
