//! The flags that add tools to the built-in ones, shared by `run`, `tools` and `mcp`: the
//! workspace, and MCP servers.

use std::path::PathBuf;

use forge_host::error::Error;
use forge_host::tools::mcp::{self, ConnectOptions, McpServers};
use forge_host::tools::{ToolRegistry, workspace};

/// Where tools come from besides the built-in ones.
#[derive(Debug, Clone, Default, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ToolSourceArgs {
    /// Adds the workspace tools (workspace.read, .list, .search: read; .write, .delete: write),
    /// rooted at DIR; no path leads out of it
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Adds the tools of an MCP server as NAME.TOOL: a command forge-host starts (split as a
    /// shell would: `fs=npx -y @modelcontextprotocol/server-filesystem ./data`), or a Streamable
    /// HTTP URL (`web=http://127.0.0.1:8080/mcp`); repeatable
    #[arg(long = "mcp", value_name = "NAME=COMMAND|URL")]
    pub mcp: Vec<String>,
    /// Adds the MCP servers of a config file in the format agent apps use:
    /// {"mcpServers": {NAME: {"command", "args", "env", "cwd"} | {"url", "headers"}}}; repeatable
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,
    /// Gives every tool of server NAME this effect (read, write or external) instead of the one
    /// its annotations give (read-only: read; otherwise write; open world or none: external)
    #[arg(long = "trust", value_name = "NAME=EFFECT")]
    pub trust: Vec<String>,
}

/// The tools, and the MCP servers behind some of them (they end when it is dropped).
pub struct ToolSources {
    /// The catalog.
    pub registry: ToolRegistry,
    /// Kept alive as long as the catalog is used.
    pub servers: McpServers,
}

impl ToolSourceArgs {
    /// These sources as the journal keeps them for `resume`, folders made absolute (an MCP
    /// command's own relative arguments stay as typed, relative to where it is resumed).
    pub fn recorded(&self) -> serde_json::Value {
        let absolute = |path: &PathBuf| std::path::absolute(path).unwrap_or_else(|_| path.clone());
        let sources = ToolSourceArgs {
            workspace: self.workspace.as_ref().map(absolute),
            mcp_config: self.mcp_config.iter().map(absolute).collect(),
            ..self.clone()
        };
        serde_json::to_value(sources).unwrap_or_default()
    }

    /// Starts the MCP servers and builds the catalog; a server that cannot start within 10 s
    /// is an `INVALID_INPUT` error naming it, with the end of its stderr.
    pub async fn connect(&self, max_response_bytes: u64) -> Result<ToolSources, Error> {
        let mut registry = ToolRegistry::with_builtins();
        if let Some(dir) = &self.workspace {
            workspace::register(&mut registry, dir)
                .map_err(|e| Error::invalid_input(format!("--workspace {}: {e}", dir.display())))?;
        }
        let specs = mcp::source::collect(&self.mcp, &self.mcp_config, &self.trust)?;
        McpServers::check_names(&specs, &registry)?;
        let options = ConnectOptions {
            max_response_bytes,
            logs: registry.server_logs().clone(),
        };
        let servers = McpServers::connect(&specs, &options).await?;
        servers.register(&mut registry);
        Ok(ToolSources { registry, servers })
    }
}
