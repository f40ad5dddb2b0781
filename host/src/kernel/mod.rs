//! The kernel runs one execution through its lifecycle (SPEC §4): it validates the request,
//! prepares the engine, the state snapshot and the store, runs the guest under its deadline and
//! cancellation, decides the verdict, commits state on success, and reports.

mod cancel;
pub mod lifecycle;
mod report;
pub mod verdict;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use wasmtime::Store;
use wasmtime_wasi::WasiCtxBuilder;

pub use cancel::CancelHandle;
pub use lifecycle::{ExecutionState, InvalidTransition, Lifecycle};
pub use report::{ErrorReport, Metrics, RunReport};
use verdict::{GuestOutcome, HostDecision, Verdict};

use crate::datadir::DataDir;
use crate::engines::bindings::{GuestLimits, RunRequest};
use crate::engines::{Cache, EngineRegistry, ExecState};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{Limits, MemoryLimiter};
use crate::output::{EventSink, OutputState, TailPipe, Texts};
use crate::permissions::Policy;
use crate::state::{RedbStateStore, StateStore, StateView};
use crate::tools::{ToolCalls, ToolRegistry};

/// Longest session name, in bytes.
pub const MAX_SESSION_BYTES: usize = 128;
/// Largest script source accepted.
pub const MAX_SOURCE_BYTES: usize = 16 << 20;

/// One script to run.
#[derive(Clone)]
pub struct ExecutionRequest {
    /// The script's source text.
    pub source: String,
    /// Its file name: picks the engine by extension and names it in stack traces.
    pub filename: String,
    /// An engine id that overrides the choice by extension.
    pub engine: Option<String>,
    /// The limits (validated before anything runs).
    pub limits: Limits,
    /// Which tool effects may run.
    pub policy: Policy,
    /// The session whose state the script shares.
    pub session: String,
    /// Receives output and progress as it happens.
    pub events: Option<EventSink>,
    /// Lets the caller cancel the execution.
    pub cancel: Option<CancelHandle>,
}

impl ExecutionRequest {
    /// A request for `source` named `filename`, with default limits, a closed policy and the
    /// session `default`.
    pub fn new(source: impl Into<String>, filename: impl Into<String>) -> Self {
        ExecutionRequest {
            source: source.into(),
            filename: filename.into(),
            engine: None,
            limits: Limits::default(),
            policy: Policy::default(),
            session: "default".into(),
            events: None,
            cancel: None,
        }
    }
}

/// Builds a [`Kernel`].
pub struct KernelBuilder {
    data_dir: DataDir,
    engine_dirs: Option<Vec<PathBuf>>,
    cache: Option<Cache>,
    tools: ToolRegistry,
}

impl KernelBuilder {
    /// Engines are looked for in `dirs` instead of the default places.
    pub fn engine_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.engine_dirs = Some(dirs);
        self
    }

    /// Precompiled components are cached in `cache`.
    pub fn cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The tools scripts may call (the built-in ones are always there).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Finds and verifies the engines.
    pub async fn build(self) -> Kernel {
        let dirs = self
            .engine_dirs
            .unwrap_or_else(|| EngineRegistry::default_dirs(Some(&self.data_dir)));
        let registry =
            EngineRegistry::discover(&dirs, self.cache.unwrap_or_else(Cache::default_location))
                .await;
        Kernel {
            state: Arc::new(RedbStateStore::new(self.data_dir.clone())),
            data_dir: self.data_dir,
            registry,
            tools: Arc::new(self.tools),
        }
    }
}

/// Runs executions.
pub struct Kernel {
    data_dir: DataDir,
    registry: EngineRegistry,
    tools: Arc<ToolRegistry>,
    state: Arc<dyn StateStore>,
}

/// A fresh execution id: time-ordered, then random.
fn new_execution_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(millis);
    hasher.write_u32(std::process::id());
    format!("{millis:012x}{:08x}", hasher.finish() as u32)
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Checks a session name.
pub fn validate_session(session: &str) -> Result<()> {
    if session.is_empty()
        || session.len() > MAX_SESSION_BYTES
        || session.chars().any(char::is_control)
    {
        return Err(Error::invalid_input(format!(
            "a session name must be 1..{MAX_SESSION_BYTES} bytes without control characters"
        )));
    }
    Ok(())
}

impl Kernel {
    /// A builder over the data directory `data_dir`, with the built-in tools.
    pub fn builder(data_dir: DataDir) -> KernelBuilder {
        KernelBuilder {
            data_dir,
            engine_dirs: None,
            cache: None,
            tools: ToolRegistry::with_builtins(),
        }
    }

    /// The engines this kernel found.
    pub fn engines(&self) -> &EngineRegistry {
        &self.registry
    }

    /// The data directory.
    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }

    /// The state store.
    pub fn state_store(&self) -> &Arc<dyn StateStore> {
        &self.state
    }

    /// Runs one execution. `Err` means it could not start (invalid input, no engine); every
    /// execution that started ends in a report, whatever the script did.
    pub async fn run(&self, request: ExecutionRequest) -> Result<RunReport> {
        let started = Instant::now();
        let mut life = Lifecycle::default();
        request.limits.validate()?;
        validate_session(&request.session)?;
        if request.source.len() > MAX_SOURCE_BYTES {
            return Err(Error::invalid_input(format!(
                "the script is {} bytes, over the {MAX_SOURCE_BYTES} bytes accepted",
                request.source.len()
            )));
        }
        let entry = match &request.engine {
            Some(id) => self.registry.by_id(id)?,
            None => self
                .registry
                .for_file(std::path::Path::new(&request.filename))?,
        };
        advance(&mut life, ExecutionState::Preparing);
        let limits = &request.limits;
        let (pre, _) = self.registry.load(entry, limits.fuel.is_some())?;
        let snapshot = self
            .state
            .snapshot(&request.session)
            .map_err(|e| Error::new(e.code(), e.to_string()))?;

        let events = request.events.clone();
        let stdout = TailPipe::new(limits.max_output_bytes, events.clone().map(|s| (s, false)));
        let stderr = TailPipe::new(limits.max_output_bytes, events.clone().map(|s| (s, true)));
        let wasi = WasiCtxBuilder::new()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_ip_name_lookup(false)
            .allow_udp(false)
            .build();
        let limiter = MemoryLimiter::new(limits.memory_bytes);
        let memory = limiter.stats();
        let tools = ToolCalls::new(self.tools.clone(), request.policy, limits);
        let calls = tools.log();
        let texts = Texts::default();
        let output = OutputState::new(texts.clone(), limits.max_output_bytes, events);
        let exec = ExecState::new(
            wasi,
            limiter,
            tools,
            StateView::new(snapshot, limits),
            output,
        );

        let mut store = Store::new(pre.engine(), exec);
        store.limiter(|s| &mut s.limiter);
        store.set_epoch_deadline(1);
        store.epoch_deadline_async_yield_and_update(1);
        if let Some(fuel) = limits.fuel {
            store
                .set_fuel(fuel)
                .map_err(|e| Error::engine_unavailable(format!("cannot set fuel: {e}")))?;
        }
        // Bytes one host call may carry from the guest: a legitimate engine checks the budgets
        // itself and never comes near this; a hostile one traps here instead of making the host
        // allocate without bound.
        let largest_budget = [
            limits.max_call_input_bytes,
            limits.max_state_value_bytes,
            limits.max_output_bytes,
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        store.set_hostcall_fuel(
            usize::try_from(largest_budget.saturating_mul(2) + (1 << 20)).unwrap_or(usize::MAX),
        );

        let run_request = RunRequest {
            source: request.source.clone(),
            filename: request.filename.clone(),
            limits: GuestLimits {
                memory_bytes: limits.memory_bytes,
                max_tool_calls: limits.max_tool_calls,
                max_concurrency: limits.max_concurrency,
                max_call_input_bytes: limits.max_call_input_bytes,
                max_call_response_bytes: limits.max_call_response_bytes,
                max_result_bytes: limits.max_result_bytes,
                max_state_value_bytes: limits.max_state_value_bytes,
                max_output_bytes: limits.max_output_bytes,
            },
            inputs: Vec::new(),
        };

        advance(&mut life, ExecutionState::Running);
        let deadline = tokio::time::Instant::now() + limits.timeout;
        let guest = async move {
            let outcome = match pre.instantiate_async(&mut store).await {
                Ok(engine) => match engine
                    .forge_engine_engine()
                    .call_run(&mut store, &run_request)
                    .await
                {
                    Ok(Ok(value)) => GuestOutcome::Returned(value),
                    Ok(Err(e)) => GuestOutcome::Failed {
                        code: e.code,
                        message: e.message,
                        stack: e.stack,
                    },
                    Err(trap) => GuestOutcome::Trapped(trap),
                },
                Err(trap) => GuestOutcome::Trapped(trap),
            };
            (outcome, store)
        };
        let cancel = request.cancel.clone().unwrap_or_default();
        // The host's own stops are polled first: they win a tie (SPEC §4). Dropping the guest
        // future drops its store at once.
        let finished = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(HostDecision::Cancelled),
            _ = tokio::time::sleep_until(deadline) => Err(HostDecision::Deadline),
            done = guest => Ok(done),
        };

        advance(&mut life, ExecutionState::Collecting);
        let mut fuel_consumed = None;
        let mut value = None;
        let (mut verdict, store) = match finished {
            Err(stop) => (verdict::decide(Some(stop), None, memory.denied()), None),
            Ok((outcome, store)) => {
                if let Some(fuel) = limits.fuel {
                    fuel_consumed = store.get_fuel().ok().map(|left| fuel.saturating_sub(left));
                }
                let returned = match &outcome {
                    GuestOutcome::Returned(text) => text.clone(),
                    _ => None,
                };
                let mut verdict = verdict::decide(None, Some(outcome), memory.denied());
                if verdict.status == ExecutionState::Succeeded {
                    match returned
                        .map(|text| accept_result(&text, limits.max_result_bytes))
                        .transpose()
                    {
                        Ok(v) => value = v.flatten(),
                        Err(failed) => verdict = failed,
                    }
                }
                (verdict, Some(store))
            }
        };

        if verdict.status == ExecutionState::Succeeded {
            advance(&mut life, ExecutionState::Committing);
            if let Some(view) = store.as_ref().map(|s| s.data().state())
                && !view.changes().is_empty()
                && let Err(error) = self.state.commit(
                    &request.session,
                    view.base(),
                    view.changes(),
                    limits.max_state_bytes,
                )
            {
                verdict = Verdict::failed(error.code(), error.to_string());
            }
        }
        if verdict.status != ExecutionState::Succeeded {
            value = None;
        }
        advance(&mut life, verdict.status);
        drop(store);

        let calls = calls.snapshot();
        Ok(RunReport {
            id: new_execution_id(),
            engine: entry.description.id.clone(),
            status: verdict.status,
            session: request.session.clone(),
            value,
            error: verdict.error.map(|(code, message)| ErrorReport {
                code,
                message,
                stack: verdict.stack,
            }),
            stdout: stdout.contents(),
            stderr: stderr.contents(),
            text: texts.values(),
            metrics: Metrics {
                wall_ms: millis(started.elapsed()),
                fuel_consumed,
                memory_peak_bytes: memory.peak_bytes(),
                tool_calls: u32::try_from(calls.len()).unwrap_or(u32::MAX),
                stdout_bytes: stdout.total_bytes(),
                stderr_bytes: stderr.total_bytes(),
            },
            calls,
        })
    }
}

/// Moves the lifecycle on. The kernel only asks for transitions the diagram allows; a bug here
/// must not take an execution's report down with it, so it is reported in debug builds only.
fn advance(life: &mut Lifecycle, to: ExecutionState) {
    let moved = life.advance(to);
    debug_assert!(moved.is_ok(), "{moved:?}");
}

/// Checks the returned JSON again on the host side: its size first, then that it parses.
fn accept_result(text: &str, max_bytes: u64) -> Result<Option<Value>, Verdict> {
    if text.len() as u64 > max_bytes {
        return Err(Verdict::failed(
            ErrorCode::BudgetExceeded,
            format!(
                "the result is {} bytes, over the budget of {max_bytes} bytes",
                text.len()
            ),
        ));
    }
    serde_json::from_str(text).map(Some).map_err(|e| {
        Verdict::failed(
            ErrorCode::ProtocolViolation,
            format!("the engine returned a result that is not JSON: {e}"),
        )
    })
}
