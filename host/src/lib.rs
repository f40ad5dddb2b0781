//! forge-host runs untrusted scripts in WebAssembly components under hard limits.
//!
//! A tour, in the order data flows (ARCHITECTURE.md draws the layers). The `forge-host` command
//! line is the binary's own (`src/cli/`, the only place that uses `anyhow` and clap) and uses
//! nothing but this library's public API.
//! - [`mcp_server`]: forge-host as an MCP server over one warm kernel (docs/tools-and-mcp.md).
//! - [`conformance`]: the kit of language-neutral cases every engine must pass (`engines
//!   check`, `engines add`).
//! - [`cluster`]: workers and front doors on NATS JetStream (docs/clusters.md).
//! - [`kernel`]: one execution's lifecycle and verdict (ARCHITECTURE.md).
//! - [`engines`]: the `wit/` bindings, the wasmtime runtimes, and the registry that verifies,
//!   compiles and caches engine components.
//! - [`limits`]: every limit with its default and load-time validation, and the
//!   memory limiter.
//! - [`tools`], [`permissions`]: nested tool calls, their sources (built-in, workspace, MCP
//!   servers) and the gate in front of them (docs/tools-and-mcp.md).
//! - [`state`]: session state with revisions and checked commits (docs/state-and-journal.md).
//! - [`output`]: captured stdout/stderr tails, `text()` values and progress.
//! - [`packages`]: locked pure-Python packages a Python run mounts (`pyodide-fetch`).
//! - [`files`]: job folders, inputs, publication of outputs and provenance.
//! - [`tape`]: recording a run's nondeterministic inputs (clocks, random bytes, tool
//!   responses) and playing them back, for `replay`.
//! - [`journal`]: executions and nested calls, crash-safe, with restart reconciliation.
//! - [`datadir`]: the data directory and its redb database (docs/state-and-journal.md).
//! - [`json`]: the JSON boundary: depth, lone surrogates, exact numbers.
//! - [`json_lines`]: newline-delimited JSON-RPC with a bound on one line (MCP's stdio).
//! - [`primitives`]: sha256, timestamps, atomic writes: the bottom layer.
//!
//! Embedding:
//! ```no_run
//! # async fn example() -> forge_host::Result<()> {
//! use forge_host::{DataDir, ExecutionRequest, Kernel};
//! let kernel = Kernel::builder(DataDir::new("/tmp/forge-data")).build().await?;
//! let report = kernel.run(ExecutionRequest::new("return 1 + 1", "sum.js")).await?;
//! assert_eq!(report.value, Some(serde_json::json!(2)));
//! # Ok(()) }
//! ```
//!
//! A tool of the embedder's own is a [`tools::Tool`] registered in a [`tools::ToolRegistry`]
//! given to [`kernel::KernelBuilder::tools`]; `host/examples/embed.rs` does it in about forty
//! lines and runs a script that calls it (`cargo run --release --example embed --
//! target/engines`; `cargo xtask test` runs it).

#![deny(missing_docs)]

pub mod cluster;
pub mod conformance;
pub mod datadir;
pub mod engines;
pub mod error;
pub mod files;
pub mod journal;
pub mod json;
pub mod json_lines;
pub mod kernel;
pub mod limits;
pub mod mcp_server;
pub mod output;
pub mod packages;
pub mod permissions;
pub mod primitives;
pub mod state;
pub mod tape;
pub mod tools;

pub use datadir::DataDir;
pub use error::{Error, ErrorCode, HostStop, Result};
pub use journal::ExecutionState;
pub use kernel::{CancelHandle, ExecutionRequest, Kernel, RunReport};
pub use limits::Limits;
pub use permissions::Policy;
