//! forge-host as an MCP server: `run_javascript`, `run_python`, `search_tools`, `get_run` and
//! `resume_run`, over stdio or Streamable HTTP, with the official `rmcp` SDK. One warm [`Kernel`]
//! serves every call, so a call costs what a library run costs; calls run concurrently up to
//! `max_runs` and the rest queue.

mod admission;
mod approval;
mod door;
mod door_io;
mod door_registry;
mod http_auth;
mod in_flight;
mod live;
mod render;
mod request;
mod request_rate;
mod resources;
mod serve;
mod tls;
mod tool_list;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool as McpTool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

pub use approval::AskVia;
pub use door::DoorLimits;
pub use http_auth::{BearerToken, token_path};
pub use request::Clamp;
pub use resources::URI_PREFIX;
pub use serve::{HttpAuth, HttpOptions, serve_http, serve_stdio};
pub use tls::TlsFiles;

use crate::cluster::submit::QueueRunner;
use crate::kernel::{CancelHandle, ExecutionRequest, Kernel, Runner};
use crate::limits::Limits;
use crate::permissions::Policy;
use crate::tools::{ToolRegistry, declare};
use live::{LiveRuns, progress_sink};
use request::{GetRunArguments, ResumeArguments, RunArguments, SearchArguments};
use tool_list::{ServedTool, tool_list};

/// How the server runs scripts.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The server's limits: every run's, and the ceilings of what a client may ask.
    pub ceilings: Limits,
    /// Which tool effects and names scripts may use.
    pub policy: Policy,
    /// Runs at once; the rest queue.
    pub max_runs: usize,
    /// Calls waiting for one of the `max_runs` slots at most; one more is refused
    /// (`BUDGET_EXCEEDED`) rather than held.
    pub max_queued: usize,
    /// Bytes all runs at once may hold at their limits (`--max-memory`): a run waits until
    /// what its limits let it hold fits. `None`: no bound beyond `max_runs`.
    pub max_memory: Option<u64>,
    /// The session of calls that name none.
    pub default_session: String,
    /// With `policy.ask` (`--ask`): how a call the policy would deny is put to a person.
    pub ask_via: AskVia,
    /// Where the server's tools come from, as its command line said (journaled with each run,
    /// so that `forge-host resume` connects the same ones).
    pub tool_sources: Option<Value>,
    /// Runs go to the workers of this queue (`mcp --nats`) instead of this process's kernel.
    pub pool: Option<QueueRunner>,
    /// The folders a client's `inputs` must lie in (`--inputs-root`); without any, a call that
    /// names inputs is refused. A client is the model whose code the sandbox contains: it may
    /// name only what the server was told to share.
    pub inputs_root: Option<crate::files::InputRoots>,
    /// A published PNG, JPEG or GIF of at most this many bytes is shown in the tool result as
    /// an image too (`--max-inline-image`); larger ones only as links.
    pub max_inline_image: u64,
}

/// The largest MCP message a server with `ceilings` reads: the largest script (`--max-script`)
/// with room for JSON's escapes and the other arguments.
pub fn max_message_bytes(ceilings: &Limits) -> usize {
    let script = usize::try_from(ceilings.max_script_bytes).unwrap_or(usize::MAX);
    script
        .saturating_add(script / 4)
        .saturating_add(MESSAGE_OVERHEAD_BYTES)
}

/// Room in one message for everything but the script: the other arguments, the envelope.
const MESSAGE_OVERHEAD_BYTES: usize = 1 << 20;

/// Most matches `search_tools` returns.
const MAX_SEARCH_RESULTS: usize = 25;

struct Inner {
    kernel: Kernel,
    catalog: ToolRegistry,
    options: ServerOptions,
    /// Run slots, memory for runs, and the queue for them.
    admission: admission::Admission,
    /// Every tool call held, in any state; the transports stop reading at its bound.
    in_flight: Arc<in_flight::InFlight>,
    /// Runs in flight, cancelled at shutdown.
    live: LiveRuns,
    tools: Vec<McpTool>,
    /// Reports of the latest runs, by id, for `get_run` (the journal keeps no values or output).
    recent: std::sync::Mutex<std::collections::VecDeque<(String, Value)>>,
}

/// Reports `get_run` can return whole.
const RECENT_REPORTS: usize = 256;

impl Inner {
    /// The result of a finished run, with links to what it published; kept for `get_run`.
    fn finished(&self, report: &crate::kernel::RunReport, clamps: &[Clamp]) -> CallToolResult {
        let mut result = render::report(report, clamps);
        result.content.extend(resources::content(
            self.kernel.data_dir(),
            self.kernel.journal(),
            report,
            self.options.max_inline_image,
        ));
        if let (Ok(mut recent), Some(structured)) = (self.recent.lock(), &result.structured_content)
        {
            if recent.len() == RECENT_REPORTS {
                recent.pop_front();
            }
            recent.push_back((report.id.clone(), structured.clone()));
        }
        result
    }
}

/// The MCP server; clones share one kernel (each HTTP session gets a clone).
#[derive(Clone)]
pub struct ForgeMcp {
    inner: Arc<Inner>,
}

/// A script language served as a tool.
#[derive(Debug, Clone, Copy)]
enum Lang {
    JavaScript,
    Python,
}

impl ForgeMcp {
    /// A server running scripts on `kernel`, whose tools are `catalog`.
    pub fn new(kernel: Kernel, catalog: ToolRegistry, options: ServerOptions) -> Self {
        let tools = tool_list(&catalog, &options.policy);
        ForgeMcp {
            inner: Arc::new(Inner {
                kernel,
                catalog,
                admission: admission::Admission::new(
                    options.max_runs,
                    options.max_queued,
                    options.max_memory,
                ),
                in_flight: in_flight::InFlight::new(
                    options.max_runs + options.max_queued + in_flight::SLACK,
                ),
                live: LiveRuns::default(),
                options,
                tools,
                recent: Default::default(),
            }),
        }
    }

    async fn run(
        &self,
        lang: Lang,
        arguments: RunArguments,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let inner = &self.inner;
        let (limits, clamps) = request::limits(&inner.options.ceilings, &arguments);
        let filename = match lang {
            Lang::JavaScript => "script.js",
            Lang::Python => "script.py",
        };
        let session = arguments
            .session
            .clone()
            .unwrap_or_else(|| inner.options.default_session.clone());
        let request = ExecutionRequest::builder(arguments.code, filename)
            .limits(limits)
            .policy(inner.options.policy.clone())
            .session(session)
            .inputs(arguments.inputs.clone())
            .tool_sources(inner.options.tool_sources.clone())
            .build();
        self.execute(request, &clamps, context).await
    }

    /// `resume_run`: a paused run continues in a new execution, with the person's answer.
    async fn resume(
        &self,
        arguments: ResumeArguments,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let inner = &self.inner;
        let record = match inner.kernel.journal().get(&arguments.id) {
            Ok(record) => record,
            Err(error) => return render::not_started(&error.into()),
        };
        if record.tool_sources != inner.options.tool_sources {
            return render::not_started(&crate::error::Error::invalid_input(format!(
                "run {} paused with other tools than this server's (--mcp, --workspace): resume \
it with `forge-host resume {} --approve|--deny`",
                record.id, record.id
            )));
        }
        if record.state_store != inner.kernel.state_store().location() {
            return render::not_started(&crate::error::Error::invalid_input(format!(
                "run {} paused with its state in {}, not where this server keeps it: resume it \
with `forge-host resume {} --approve|--deny`",
                record.id,
                record
                    .state_store
                    .as_deref()
                    .unwrap_or("its data directory"),
                record.id
            )));
        }
        match inner.kernel.resume(&arguments.id, arguments.approve) {
            Ok(request) => self.execute(request.build(), &[], context).await,
            Err(error) => render::not_started(&error),
        }
    }

    /// Runs `request` (here, in a slot of its own, or on the pool's workers) with the client's
    /// progress, cancellation and (with `--ask`, here) approval, and renders its report.
    async fn execute(
        &self,
        request: ExecutionRequest,
        clamps: &[Clamp],
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let inner = &self.inner;
        let queued = inner.options.pool.is_some();
        let mut request = request.into_builder();
        if !request.options().inputs.is_empty() {
            match &inner.options.inputs_root {
                Some(roots) => request = request.inputs_root(roots.clone()),
                None => {
                    return render::not_started(&crate::error::Error::invalid_input(
                        "inputs: this server reads no files for its clients: start it with \
--inputs-root DIR (or --workspace DIR) to let them name files under DIR",
                    ));
                }
            }
        }
        let cancel = CancelHandle::new();
        let events = context
            .meta
            .get_progress_token()
            .map(|token| progress_sink(token, context.peer.clone()));
        let mut request = request.events(events).cancel(cancel.clone());
        if !queued {
            // Published where `resources/read` finds it, under the run's id.
            let root = crate::files::published::root(inner.kernel.data_dir());
            request = request.out_root(root);
        }
        let options = request.options();
        let resident = options.limits.resident_bytes();
        if !queued && options.policy.ask && inner.options.ask_via == AskVia::Client {
            let asker = approval::client_asker(&context.peer, options.limits.timeout);
            request = request.asker(asker);
        }
        let request = request.build();
        // The pool's workers bound how many of its runs go at once; this server bounds its own.
        let permit = match queued {
            true => None,
            false => match self.admit(resident, &context).await {
                Ok(admitted) => Some(admitted),
                Err(refused) => return refused,
            },
        };
        // The run has a task of its own, which renders its report and keeps it for `get_run`:
        // a client that goes away mid-run (its connection closed) finds the run finished and
        // kept. A request handler that is dropped (stdio closed, the server stopping) cancels
        // the run instead of abandoning it half-way, and shutdown waits for it.
        let live = (!queued).then(|| inner.live.register(cancel.clone()));
        let mut task = tokio::spawn({
            let inner = self.inner.clone();
            let clamps = clamps.to_vec();
            async move {
                let _permit = permit;
                let runner: &dyn Runner = match &inner.options.pool {
                    Some(pool) => pool,
                    None => &inner.kernel,
                };
                match runner.run(request).await {
                    Ok(report) => inner.finished(&report, &clamps),
                    Err(error) => render::failed(&error),
                }
            }
        });
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = context.ct.cancelled() => {
                cancel.cancel();
                (&mut task).await
            }
        };
        if let Some(live) = live {
            live.finish();
        }
        joined.unwrap_or_else(|error| {
            render::failed(&crate::error::Error::new(
                crate::error::ErrorCode::IsolateFailure,
                format!("the run's task ended without a report: {error}"),
            ))
        })
    }

    /// A slot among the `max_runs` and room under `--max-memory` for a run that may hold
    /// `resident` bytes,
    /// waiting in the queue when either is taken; the result to answer with when the queue is
    /// full, the run could never fit, or the client cancels while it waits.
    async fn admit(
        &self,
        resident: u64,
        context: &RequestContext<RoleServer>,
    ) -> Result<admission::Admitted, CallToolResult> {
        let admission = &self.inner.admission;
        match admission.admit(resident, context.ct.cancelled()).await {
            Ok(admitted) => Ok(admitted),
            Err(admission::Refused::Refused(error)) => Err(render::not_started(&error)),
            Err(admission::Refused::Cancelled) => Err(render::cancelled_in_queue()),
        }
    }

    /// The count of calls held, which the transports read and answer within.
    fn in_flight(&self) -> Arc<in_flight::InFlight> {
        self.inner.in_flight.clone()
    }

    /// Cancels the runs in flight and waits (up to `within`) until every one has ended and is
    /// journaled, so that a server that stops leaves no run open.
    pub async fn shutdown(&self, within: std::time::Duration) {
        self.inner.live.cancel_all();
        self.inner.admission.drained(within).await;
    }

    fn search(&self, arguments: SearchArguments) -> CallToolResult {
        let words: Vec<String> = arguments
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, Value)> = declare::json(&self.inner.catalog)["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|tool| {
                let text = format!(
                    "{} {}",
                    tool["name"].as_str().unwrap_or_default(),
                    tool["description"].as_str().unwrap_or_default()
                )
                .to_lowercase();
                let score = words.iter().filter(|w| text.contains(w.as_str())).count();
                (score > 0 || words.is_empty()).then_some((score, tool))
            })
            .collect();
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        let total = scored.len();
        let tools: Vec<Value> = scored
            .into_iter()
            .take(MAX_SEARCH_RESULTS)
            .map(|(_, tool)| tool)
            .collect();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        let text = if names.is_empty() {
            format!("no tool matches `{}`", arguments.query)
        } else {
            format!(
                "{} of {total} matching tool(s): {}",
                names.len(),
                names.join(", ")
            )
        };
        let mut result = CallToolResult::structured(json!({"tools": tools, "matches": total}));
        result.content = vec![ContentBlock::text(text)];
        result
    }

    async fn get_run(&self, arguments: GetRunArguments) -> CallToolResult {
        let journal = self.inner.kernel.journal();
        let mut found = journal
            .get(&arguments.id)
            .and_then(|record| Ok((journal.calls(&record.id)?, record)));
        // A run of the pool is in its worker's journal, which the journal stream carries.
        if found.is_err()
            && let Some(pool) = &self.inner.options.pool
            && let Ok(records) = pool.cluster.journal().await
            && let Some(entry) = records
                .into_iter()
                .find(|entry| entry.record.id == arguments.id)
        {
            found = Ok((Vec::new(), entry.record));
        }
        match found {
            Ok((calls, record)) => {
                let recent = self.inner.recent.lock().ok().and_then(|recent| {
                    recent
                        .iter()
                        .find(|(id, _)| *id == record.id)
                        .map(|(_, report)| report.clone())
                });
                render::record(&record, &calls, recent.as_ref())
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        }
    }
}

impl rmcp::ServerHandler for ForgeMcp {
    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577, but clients of 2025-11-25 still set a level"
    )]
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("forge-host", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Run JavaScript or Python in a sandbox (run_javascript, run_python); scripts call the \
tools listed in those tools' descriptions; search_tools finds tools in a large catalog; get_run \
reads a run back from the journal; resume_run continues a run paused for approval.",
        )
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let kernel = &self.inner.kernel;
        resources::read(kernel.data_dir(), kernel.journal(), &request.uri).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let ids: Vec<String> = match self.inner.recent.lock() {
            Ok(recent) => recent.iter().map(|(id, _)| id.clone()).collect(),
            Err(_) => Vec::new(),
        };
        let kernel = &self.inner.kernel;
        let listed = resources::listed(kernel.data_dir(), kernel.journal(), &ids);
        Ok(rmcp::model::ListResourcesResult::with_all_items(listed))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577, but clients of 2025-11-25 still set a level"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // The server sends no log messages of its own yet; any level is accepted.
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        if request.method == serve::OVERSIZED_METHOD {
            let said = |key: &str| {
                request
                    .params
                    .as_ref()
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_u64)
                    .unwrap_or_default()
            };
            return Err(ErrorData::invalid_request(
                format!(
                    "the message is {} bytes or more, over the {} bytes this server reads of one \
message (a script may be up to --max-script, {} bytes)",
                    said("size"),
                    said("max_bytes"),
                    self.inner.options.ceilings.max_script_bytes
                ),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _held = self.inner.in_flight.claim(&context.id);
        let bad = |message: String| ErrorData::invalid_params(message, None);
        let name = request.name.as_ref();
        let Some(tool) = ServedTool::parse(name) else {
            return Err(bad(format!(
                "no tool is called `{name}` ({})",
                ServedTool::names()
            )));
        };
        let result = match tool {
            ServedTool::RunJavascript | ServedTool::RunPython => {
                let arguments = request::parse(name, request.arguments).map_err(bad)?;
                let lang = if tool == ServedTool::RunPython {
                    Lang::Python
                } else {
                    Lang::JavaScript
                };
                // Boxed, as below: the SDK spawns a task per request it reads, and a task is as
                // large as its future's largest state, so a flood of unstarted calls would each
                // hold a whole run's future.
                Box::pin(self.run(lang, arguments, context)).await
            }
            ServedTool::SearchTools => {
                self.search(request::parse(name, request.arguments).map_err(bad)?)
            }
            ServedTool::GetRun => {
                let arguments = request::parse(name, request.arguments).map_err(bad)?;
                Box::pin(self.get_run(arguments)).await
            }
            ServedTool::ResumeRun => {
                let arguments = request::parse(name, request.arguments).map_err(bad)?;
                Box::pin(self.resume(arguments, context)).await
            }
        };
        Ok(result.into())
    }
}
