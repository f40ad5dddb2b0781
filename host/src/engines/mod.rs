//! Engine components: the bindings of the `wit/` world and the host side of its imports, the
//! wasmtime runtimes they run on, and the registry that finds, verifies, compiles, caches and
//! installs them.

pub mod bindings;
mod cache;
mod features;
mod host;
mod install;
mod instance;
mod library;
mod preinit;
pub mod python_imports;
mod registry;
mod runtime;

pub use cache::Cache;
pub use install::{Candidate, Installed, stage_candidate};
pub use instance::ExecState;
pub use library::EngineLibrary;
pub use registry::{
    ConformanceRecord, EngineDescription, EngineEntry, EngineLock, EngineRegistry, LOCK_FILE,
    LoadTiming, LockedEngine,
};
pub use runtime::{
    Allocation, EPOCH_TICK, INSTANCE_SLOTS, MAX_WASM_STACK_BYTES, Runtime, RuntimeError,
};

use std::sync::Arc;

use wasmtime::Store;
use wasmtime_wasi::WasiCtxBuilder;

use crate::error::{Error, Result};
use crate::limits::{Limits, MemoryLimiter};
use crate::output::{OutputState, Texts};
use crate::permissions::Policy;
use crate::state::{Snapshot, StateView};
use crate::tools::{ToolCalls, ToolRegistry};

/// A store whose imports reach nothing: no tools, an empty state, no files, default limits.
fn bare_store(pre: &bindings::ScriptEnginePre<ExecState>) -> Store<ExecState> {
    let limits = Limits::default();
    let state = ExecState::new(
        WasiCtxBuilder::new().build(),
        MemoryLimiter::new(limits.memory_bytes),
        ToolCalls::new(Arc::new(ToolRegistry::new()), Policy::default(), &limits),
        StateView::new(Snapshot::default(), &limits),
        OutputState::new(Texts::default(), 0, None),
        Arc::new(crate::files::DiskQuota::new(0, 0)),
    );
    let mut store = Store::new(pre.engine(), state);
    store.limiter(|s| &mut s.limiter);
    // A component first loaded for a run with `--fuel` is described by its metered runtime: a
    // store there starts with no fuel, and `describe` would trap before it began.
    if store.get_fuel().is_ok() {
        let _ = store.set_fuel(u64::MAX);
    }
    store.set_epoch_deadline(1);
    store.epoch_deadline_async_yield_and_update(1);
    store
}

/// Asks a loaded component to describe itself, in a store with nothing to reach.
pub async fn describe(pre: &bindings::ScriptEnginePre<ExecState>) -> Result<EngineDescription> {
    let mut store = bare_store(pre);
    let failed = |e: wasmtime::Error| Error::engine_unavailable(format!("describe() failed: {e}"));
    let engine = pre.instantiate_async(&mut store).await.map_err(failed)?;
    let info = engine
        .forge_engine_engine()
        .call_describe(&mut store)
        .await
        .map_err(failed)?;
    Ok(EngineDescription {
        id: info.id,
        language: info.language,
        version: info.version,
        extensions: info.extensions,
        capabilities: info.capabilities,
    })
}

/// Runs `request` in a fresh instance of engine `entry` (loaded without fuel metering) whose
/// imports reach nothing (as in [`describe`]), then drops the instance: the sandbox alone,
/// without the journal, job folders or state that make a run an execution. `cargo xtask bench`
/// measures it; a component author can use it to try an engine. `Ok(Err)` is the script's own
/// failure.
pub async fn run_alone(
    registry: &EngineRegistry,
    entry: &EngineEntry,
    request: &bindings::RunRequest,
) -> Result<Result<Option<String>, bindings::ScriptError>> {
    let (pre, _) = registry.load(entry, false).await?;
    let _slot = Runtime::get(false)?.instance_slot().await;
    let mut store = bare_store(&pre);
    let failed = |e: wasmtime::Error| Error::engine_unavailable(format!("run() failed: {e}"));
    let engine = pre.instantiate_async(&mut store).await.map_err(failed)?;
    engine
        .forge_engine_engine()
        .call_run(&mut store, request)
        .await
        .map_err(failed)
}
