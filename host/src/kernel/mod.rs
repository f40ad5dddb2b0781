//! The kernel runs one execution through its lifecycle: it validates the request,
//! prepares the engine, the job folders, the state snapshot and the store, runs the guest under
//! its deadline and cancellation, decides the verdict, commits state and publishes outputs on
//! success, and reports.

mod bytecode;
mod cancel;
mod execute;
pub use execute::new_execution_id;
mod facts;
pub mod lifecycle;
mod prepare;
mod replay;
mod report;
mod request;
mod resume;
mod runner;
mod sandbox;
mod settle;
mod status;
mod taped;
pub mod verdict;

use std::path::PathBuf;
use std::sync::Arc;

pub use bytecode::CompiledBytecode;
pub use cancel::CancelHandle;
pub use lifecycle::{InvalidTransition, Lifecycle};
pub use replay::{ReplayInput, ReplayReport};
pub use report::RunReport;
pub use request::{
    BeforeEffects, EffectsRefused, ExecutionRequest, ExecutionRequestBuilder, Hooks, Lineage,
    RunOptions, Script,
};
pub use runner::Runner;
pub use status::{EngineStatus, Probe, Status, probe, status};

use crate::datadir::DataDir;
use crate::engines::{Cache, EngineRegistry};
use crate::error::{Error, ErrorCode, Result};
use crate::files::JobPool;
use crate::journal::Journal;
use crate::state::{RedbStateStore, StateStore};
use crate::tools::ToolRegistry;

/// Builds a [`Kernel`].
pub struct KernelBuilder {
    data_dir: DataDir,
    engine_dirs: Option<Vec<PathBuf>>,
    cache: Option<Cache>,
    tools: ToolRegistry,
    state: Option<Arc<dyn StateStore>>,
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

    /// Where session state is kept; `None` (the default) is the data directory's journal.
    pub fn state(mut self, store: impl Into<Option<Arc<dyn StateStore>>>) -> Self {
        self.state = store.into();
        self
    }

    /// Opens the journal (reconciling executions a dead process left open) and finds and
    /// verifies the engines.
    pub async fn build(self) -> Result<Kernel> {
        let journal = Journal::open(&self.data_dir)?;
        let dirs = self
            .engine_dirs
            .unwrap_or_else(|| EngineRegistry::default_dirs(Some(&self.data_dir)));
        let cache = self.cache.unwrap_or_else(Cache::default_location);
        let registry = EngineRegistry::discover(&dirs, cache).await;
        Ok(Kernel {
            state: self
                .state
                .unwrap_or_else(|| Arc::new(RedbStateStore::new(self.data_dir.clone()))),
            jobs: JobPool::new(self.data_dir.root().join("jobs")),
            data_dir: self.data_dir,
            registry,
            journal,
            tools: Arc::new(self.tools),
        })
    }
}

/// Runs executions.
pub struct Kernel {
    data_dir: DataDir,
    registry: EngineRegistry,
    journal: Journal,
    jobs: JobPool,
    tools: Arc<ToolRegistry>,
    state: Arc<dyn StateStore>,
}

/// Longest session name, in bytes.
pub const MAX_SESSION_BYTES: usize = 128;
/// Refuses a script of `bytes` over `--max-script` (`max_bytes`) with `BUDGET_EXCEEDED`: every
/// front door calls it before it holds more of a script than the limit.
pub fn check_script_size(bytes: u64, max_bytes: u64) -> Result<()> {
    if bytes > max_bytes {
        return Err(Error::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the script is {bytes} bytes, over --max-script of {}",
                crate::limits::format_size(max_bytes)
            ),
        ));
    }
    Ok(())
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
            state: None,
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

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Runs one execution. `Err` means it could not start (invalid input, no engine); every
    /// execution that started ends in a report, whatever the script did.
    pub async fn run(&self, request: ExecutionRequest) -> Result<RunReport> {
        execute::run(self, request).await
    }

    /// The request that runs execution `id` again: the same script (from the data directory's
    /// script store), engine, limits, policy, session and inputs, which must still hash to what
    /// the first run copied. Set where its outputs go, its events and its cancellation, then
    /// build it and pass it to [`Kernel::run`].
    pub fn rerun(&self, id: &str) -> Result<ExecutionRequestBuilder> {
        let record = self.journal.get(id)?;
        let source = self.data_dir.script(&record.script_sha256)?;
        let expected_inputs: Vec<(String, String)> = record
            .inputs
            .iter()
            .map(|i| (i.name.clone(), i.sha256.clone()))
            .collect();
        Ok(ExecutionRequest::builder(source, record.script.clone())
            .engine(record.engine.clone())
            .limits(record.limits())
            .policy(record.policy.clone())
            .session(record.session.clone())
            .inputs(prepare::input_sources(&record.inputs))
            .expected_inputs(expected_inputs)
            .package_lock(record.package_lock.as_ref().map(PathBuf::from))
            .expected_packages(record.packages.clone())
            .tool_sources(record.tool_sources.clone()))
    }
}
