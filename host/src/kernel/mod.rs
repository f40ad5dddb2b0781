//! The kernel runs one execution through its lifecycle: it validates the request,
//! prepares the engine, the job folders, the state snapshot and the store, runs the guest under
//! its deadline and cancellation, decides the verdict, commits state and publishes outputs on
//! success, and reports.

mod cancel;
mod execute;
pub use execute::new_execution_id;
mod facts;
pub mod lifecycle;
mod replay;
mod report;
mod resume;
mod sandbox;
mod settle;
mod status;
mod taped;
pub mod verdict;

use std::path::PathBuf;
use std::sync::Arc;

pub use cancel::CancelHandle;
pub use lifecycle::{InvalidTransition, Lifecycle};
pub use replay::{ReplayInput, ReplayReport};
pub use report::RunReport;
pub use status::{EngineStatus, Probe, Status, probe, status};

use crate::datadir::DataDir;
use crate::engines::{Cache, EngineRegistry};
use crate::error::{Error, ErrorCode, Result};
use crate::files::JobPool;
use crate::journal::{Journal, JournalPackage, RecordMode};
use crate::limits::Limits;
use crate::output::EventSink;
use crate::permissions::{Asker, Policy};
use crate::state::{RedbStateStore, StateStore};
use crate::tools::ToolRegistry;

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
    /// Files and folders copied (and hashed) into `/input`.
    pub inputs: Vec<PathBuf>,
    /// The folders `inputs` must lie in, when the caller is not trusted with the machine (an
    /// MCP client: `mcp --inputs-root`); `None`: anywhere the process can read.
    pub inputs_root: Option<crate::files::InputRoots>,
    /// Where `/output` is published; `None` publishes to `forge-out/<id>` in the current
    /// directory, and only when the script wrote something.
    pub out_dir: Option<PathBuf>,
    /// Publish `/output` even when the run fails.
    pub publish_on_error: bool,
    /// Keep the job folder (`/input`, `/output`, `/work`) after the run.
    pub keep_job: bool,
    /// For a rerun: the (name, sha256) every input must still have.
    pub expected_inputs: Option<Vec<(String, String)>>,
    /// The package lock a Python run mounts its packages from; `None` is the data directory's.
    pub package_lock: Option<PathBuf>,
    /// For a rerun: the packages the first run mounted, which must be mounted again unchanged.
    pub expected_packages: Option<Vec<JournalPackage>>,
    /// Receives output and progress as it happens.
    pub events: Option<EventSink>,
    /// Lets the caller cancel the execution.
    pub cancel: Option<CancelHandle>,
    /// Answers calls the policy would deny when it says `--ask`; without one they are denied.
    pub asker: Option<Asker>,
    /// What of the run is kept for replay (`--record`): by default everything, within the
    /// `max-record` limit.
    pub record: RecordMode,
    /// Feeds the run from a recording instead of the world ([`Kernel::replay`] sets it: no
    /// tool runs, nothing is committed or published; [`Kernel::resume`] too, and the run then
    /// goes on live).
    pub replay: Option<ReplayInput>,
    /// Where the tools came from, as the caller describes them (kept in the journal for
    /// `resume`, which connects the same ones).
    pub tool_sources: Option<serde_json::Value>,
    /// The execution id, when the caller chose it beforehand (a resume claims its paused run
    /// with it); otherwise a new one.
    pub id: Option<String>,
    /// Called once, before the run first changes anything outside itself (a call with a
    /// `write`, `process` or `external` effect, a state commit, a publication), after its
    /// journal record is durable. A worker marks its attempt there, so that a redelivered run
    /// that may have had effects is never run again. An `Err` stops those changes.
    pub before_effects: Option<BeforeEffects>,
}

/// See [`ExecutionRequest::before_effects`].
pub type BeforeEffects = Arc<
    dyn Fn() -> futures::future::BoxFuture<'static, std::result::Result<(), EffectsRefused>>
        + Send
        + Sync,
>;

/// Why a [`BeforeEffects`] hook stopped a run's effects: the hook's own error, kept whole.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", crate::error::chain_text(.0.as_ref()))]
pub struct EffectsRefused(pub Arc<dyn std::error::Error + Send + Sync + 'static>);

impl EffectsRefused {
    /// Refuses with `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        EffectsRefused(Arc::new(error))
    }
}

impl ExecutionRequest {
    /// A request for `source` named `filename`, with default limits, a closed policy, the
    /// session `default`, and no inputs.
    pub fn new(source: impl Into<String>, filename: impl Into<String>) -> Self {
        ExecutionRequest {
            source: source.into(),
            filename: filename.into(),
            engine: None,
            limits: Limits::default(),
            policy: Policy::default(),
            session: "default".into(),
            inputs: Vec::new(),
            inputs_root: None,
            out_dir: None,
            publish_on_error: false,
            keep_job: false,
            expected_inputs: None,
            package_lock: None,
            expected_packages: None,
            events: None,
            cancel: None,
            asker: None,
            record: RecordMode::default(),
            replay: None,
            tool_sources: None,
            id: None,
            before_effects: None,
        }
    }
}

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
    /// pass it to [`Kernel::run`].
    pub fn rerun(&self, id: &str) -> Result<ExecutionRequest> {
        let record = self.journal.get(id)?;
        let source = self.data_dir.script(&record.script_sha256)?;
        Ok(ExecutionRequest {
            engine: Some(record.engine.clone()),
            limits: record.limits(),
            policy: record.policy,
            session: record.session.clone(),
            inputs: execute::input_sources(&record.inputs),
            expected_inputs: Some(
                record
                    .inputs
                    .iter()
                    .map(|i| (i.name.clone(), i.sha256.clone()))
                    .collect(),
            ),
            package_lock: record.package_lock.as_ref().map(PathBuf::from),
            expected_packages: Some(record.packages.clone()),
            tool_sources: record.tool_sources.clone(),
            ..ExecutionRequest::new(source, record.script.clone())
        })
    }
}
