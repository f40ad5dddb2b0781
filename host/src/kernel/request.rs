//! What a caller asks of one run, in four parts: the script, the run's options, the hooks
//! through which the caller takes part while it runs, and what ties it to an earlier run. A
//! request is made with [`ExecutionRequest::builder`] and read through its parts.

use std::path::PathBuf;
use std::sync::Arc;

use super::cancel::CancelHandle;
use super::replay::ReplayInput;
use crate::files::InputRoots;
use crate::journal::{JournalPackage, RecordMode};
use crate::limits::Limits;
use crate::output::EventSink;
use crate::permissions::{Asker, Policy};

/// One script to run. Made with [`ExecutionRequest::builder`] (or [`ExecutionRequest::new`]
/// for the defaults); [`ExecutionRequest::into_builder`] changes one.
#[derive(Clone)]
pub struct ExecutionRequest {
    script: Script,
    options: RunOptions,
    hooks: Hooks,
    lineage: Lineage,
}

/// The script a run executes.
#[derive(Clone, Debug)]
pub struct Script {
    /// Its source text.
    pub source: String,
    /// Its file name: picks the engine by extension and names it in stack traces.
    pub filename: String,
    /// An engine id that overrides the choice by extension.
    pub engine: Option<String>,
}

/// What a run may do, and where its files come from and go.
#[derive(Clone)]
pub struct RunOptions {
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
    pub inputs_root: Option<InputRoots>,
    /// Where `/output` is published; `None` publishes to `<out_root>/<id>`, and only when the
    /// script wrote something.
    pub out_dir: Option<PathBuf>,
    /// With no `out_dir`: the folder a run that wrote something publishes into, under its id;
    /// `None` is `forge-out` in the current directory.
    pub out_root: Option<PathBuf>,
    /// Publish `/output` even when the run fails.
    pub publish_on_error: bool,
    /// Keep the job folder (`/input`, `/output`, `/work`) after the run.
    pub keep_job: bool,
    /// The package lock a Python run mounts its packages from; `None` is the data directory's.
    pub package_lock: Option<PathBuf>,
    /// What of the run is kept for replay (`--record`): by default everything, within the
    /// `max-record` limit.
    pub record: RecordMode,
    /// Where the tools came from, as the caller describes them (kept in the journal for
    /// `resume`, which connects the same ones).
    pub tool_sources: Option<serde_json::Value>,
    /// The execution id, when the caller chose it beforehand (a resume claims its paused run
    /// with it); otherwise a new one.
    pub id: Option<String>,
}

/// How the caller takes part while the run goes on.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Receives output and progress as it happens.
    pub events: Option<EventSink>,
    /// Lets the caller cancel the execution.
    pub cancel: Option<CancelHandle>,
    /// Answers calls the policy would deny when it says `--ask`; without one they are denied.
    pub asker: Option<Asker>,
    /// Called once, before the run first changes anything outside itself (a call with a
    /// `write`, `process` or `external` effect, a state commit, a publication), after its
    /// journal record is durable. A worker marks its attempt there, so that a redelivered run
    /// that may have had effects is never run again. An `Err` stops those changes.
    pub before_effects: Option<BeforeEffects>,
}

/// What ties a run to an earlier one: what a rerun must find unchanged, and the recording a
/// replay or a resume plays.
#[derive(Clone, Default)]
pub struct Lineage {
    /// The (name, sha256) every input must still have.
    pub expected_inputs: Option<Vec<(String, String)>>,
    /// The packages the first run mounted, which must be mounted again unchanged.
    pub expected_packages: Option<Vec<JournalPackage>>,
    /// Feeds the run from a recording instead of the world ([`Kernel::replay`] sets it: no
    /// tool runs, nothing is committed or published; [`Kernel::resume`] too, and the run then
    /// goes on live).
    ///
    /// [`Kernel::replay`]: super::Kernel::replay
    /// [`Kernel::resume`]: super::Kernel::resume
    pub replay: Option<ReplayInput>,
}

impl Lineage {
    /// Whether the run is a pure replay: it commits and publishes nothing.
    pub fn is_replay(&self) -> bool {
        self.replay.as_ref().is_some_and(ReplayInput::is_replay)
    }
}

/// See [`Hooks::before_effects`].
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
        Self::builder(source, filename).build()
    }

    /// A builder for a request for `source` named `filename`, starting from the defaults of
    /// [`ExecutionRequest::new`].
    pub fn builder(
        source: impl Into<String>,
        filename: impl Into<String>,
    ) -> ExecutionRequestBuilder {
        ExecutionRequestBuilder(ExecutionRequest {
            script: Script {
                source: source.into(),
                filename: filename.into(),
                engine: None,
            },
            options: RunOptions {
                limits: Limits::default(),
                policy: Policy::default(),
                session: "default".into(),
                inputs: Vec::new(),
                inputs_root: None,
                out_dir: None,
                out_root: None,
                publish_on_error: false,
                keep_job: false,
                package_lock: None,
                record: RecordMode::default(),
                tool_sources: None,
                id: None,
            },
            hooks: Hooks::default(),
            lineage: Lineage::default(),
        })
    }

    /// A builder that starts from this request, to change some of it.
    pub fn into_builder(self) -> ExecutionRequestBuilder {
        ExecutionRequestBuilder(self)
    }

    /// The script.
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// The run's options.
    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    /// The caller's hooks.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// What ties it to an earlier run.
    pub fn lineage(&self) -> &Lineage {
        &self.lineage
    }

    /// The request's four parts, by value.
    pub fn into_parts(self) -> (Script, RunOptions, Hooks, Lineage) {
        (self.script, self.options, self.hooks, self.lineage)
    }
}

/// Builds an [`ExecutionRequest`]; each setter documents the field it sets.
#[must_use]
pub struct ExecutionRequestBuilder(ExecutionRequest);

/// Setters that each set one field of one part.
macro_rules! setters {
    ($($part:ident { $($(#[$doc:meta])* $field:ident: $type:ty),* $(,)? })*) => {
        impl ExecutionRequestBuilder {
            $($(
                $(#[$doc])*
                pub fn $field(mut self, $field: impl Into<$type>) -> Self {
                    self.0.$part.$field = $field.into();
                    self
                }
            )*)*
        }
    };
}

setters! {
    script {
        /// See [`Script::engine`].
        engine: Option<String>,
    }
    options {
        /// See [`RunOptions::limits`].
        limits: Limits,
        /// See [`RunOptions::policy`].
        policy: Policy,
        /// See [`RunOptions::session`].
        session: String,
        /// See [`RunOptions::inputs`].
        inputs: Vec<PathBuf>,
        /// See [`RunOptions::inputs_root`].
        inputs_root: Option<InputRoots>,
        /// See [`RunOptions::out_dir`].
        out_dir: Option<PathBuf>,
        /// See [`RunOptions::out_root`].
        out_root: Option<PathBuf>,
        /// See [`RunOptions::publish_on_error`].
        publish_on_error: bool,
        /// See [`RunOptions::keep_job`].
        keep_job: bool,
        /// See [`RunOptions::package_lock`].
        package_lock: Option<PathBuf>,
        /// See [`RunOptions::record`].
        record: RecordMode,
        /// See [`RunOptions::tool_sources`].
        tool_sources: Option<serde_json::Value>,
        /// See [`RunOptions::id`].
        id: Option<String>,
    }
    hooks {
        /// See [`Hooks::events`].
        events: Option<EventSink>,
        /// See [`Hooks::cancel`].
        cancel: Option<CancelHandle>,
        /// See [`Hooks::asker`].
        asker: Option<Asker>,
        /// See [`Hooks::before_effects`].
        before_effects: Option<BeforeEffects>,
    }
    lineage {
        /// See [`Lineage::expected_inputs`].
        expected_inputs: Option<Vec<(String, String)>>,
        /// See [`Lineage::expected_packages`].
        expected_packages: Option<Vec<JournalPackage>>,
        /// See [`Lineage::replay`].
        replay: Option<ReplayInput>,
    }
}

impl ExecutionRequestBuilder {
    /// The options as they stand, to read while building.
    pub fn options(&self) -> &RunOptions {
        &self.0.options
    }

    /// The request.
    pub fn build(self) -> ExecutionRequest {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_sets_each_part_and_keeps_the_rest() {
        let request = ExecutionRequest::builder("return 1", "one.js")
            .session("s")
            .keep_job(true)
            .engine("quickjs".to_string())
            .build();
        assert_eq!(request.script().engine.as_deref(), Some("quickjs"));
        assert_eq!(request.options().session, "s");
        assert!(request.options().keep_job);
        assert!(request.options().inputs.is_empty());
        let changed = request.into_builder().keep_job(false).build();
        assert_eq!(changed.options().session, "s", "the rest is kept");
        assert!(!changed.options().keep_job);
        assert!(!changed.lineage().is_replay());
    }
}
