//! The wasmtime engines forge-host runs components on, one per configuration (fuel metering on
//! or off, since fuel instruments the compiled code), each with its linker and epoch ticker.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

use super::bindings::{catalog, output, state, tools, types};
use super::host::{OutputData, QuotaFs, QuotaFsView, StateData, ToolsData};
use super::instance::ExecState;
use crate::error::{Error, ErrorCode, Result};

/// How often the epoch advances. A running guest yields to the executor at every tick, which is
/// what lets a deadline or a cancellation stop even a tight loop.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The wasm stack a guest may use before it traps with a stack overflow (`STACK_LIMIT`).
pub const MAX_WASM_STACK_BYTES: usize = 2 << 20;

/// A configured wasmtime engine and the linker of the `forge:engine` world.
pub struct Runtime {
    engine: Engine,
    linker: Linker<ExecState>,
    fuel: bool,
    config_hash: String,
}

/// Why a wasmtime runtime could not be set up. Kept (shared) for the life of the process, since
/// the runtime is built once.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot set up the wasmtime runtime: {step}")]
pub struct RuntimeError {
    /// The step that failed.
    pub step: &'static str,
    /// Why.
    #[source]
    pub source: Arc<dyn std::error::Error + Send + Sync>,
}

fn wasmtime_error(step: &'static str) -> impl FnOnce(wasmtime::Error) -> RuntimeError {
    move |error| RuntimeError {
        step,
        source: Arc::from(Box::<dyn std::error::Error + Send + Sync>::from(error)),
    }
}

impl Runtime {
    fn new(fuel: bool) -> Result<Self, RuntimeError> {
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .consume_fuel(fuel)
            .max_wasm_stack(MAX_WASM_STACK_BYTES)
            .async_stack_size(MAX_WASM_STACK_BYTES + (1 << 20))
            .cranelift_opt_level(wasmtime::OptLevel::Speed);
        let engine = Engine::new(&config).map_err(wasmtime_error("the wasmtime engine"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(wasmtime_error("linking WASI"))?;
        // The filesystem's write paths go through the run's disk quota instead.
        linker.allow_shadowing(true);
        wasmtime_wasi::p2::bindings::filesystem::types::add_to_linker::<ExecState, QuotaFs>(
            &mut linker,
            QuotaFsView::of,
        )
        .map_err(wasmtime_error("linking the WASI filesystem"))?;
        linker.allow_shadowing(false);
        let link =
            |result: wasmtime::Result<()>| result.map_err(wasmtime_error("linking forge:engine"));
        link(types::add_to_linker::<ExecState, ToolsData>(
            &mut linker,
            |s| &mut s.tools,
        ))?;
        link(tools::add_to_linker::<ExecState, ToolsData>(
            &mut linker,
            |s| &mut s.tools,
        ))?;
        link(catalog::add_to_linker::<ExecState, ToolsData>(
            &mut linker,
            |s| &mut s.tools,
        ))?;
        link(state::add_to_linker::<ExecState, StateData>(
            &mut linker,
            |s| &mut s.state,
        ))?;
        link(output::add_to_linker::<ExecState, OutputData>(
            &mut linker,
            |s| &mut s.output,
        ))?;

        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        // A pre-initialised engine's compiled form also depends on how it was snapshotted.
        super::preinit::SNAPSHOT_FORMAT.hash(&mut hasher);
        let config_hash = format!("{:016x}", hasher.finish());

        let weak = engine.weak();
        std::thread::Builder::new()
            .name("forge-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .map_err(|e| RuntimeError {
                step: "the epoch ticker thread",
                source: Arc::new(e),
            })?;
        Ok(Runtime {
            engine,
            linker,
            fuel,
            config_hash,
        })
    }

    /// The shared runtime with fuel metering on or off.
    pub fn get(fuel: bool) -> Result<&'static Runtime> {
        static WITH_FUEL: OnceLock<Result<Runtime, RuntimeError>> = OnceLock::new();
        static WITHOUT_FUEL: OnceLock<Result<Runtime, RuntimeError>> = OnceLock::new();
        let cell = if fuel { &WITH_FUEL } else { &WITHOUT_FUEL };
        cell.get_or_init(|| Runtime::new(fuel))
            .as_ref()
            .map_err(|error| Error::from_source(ErrorCode::EngineUnavailable, error.clone()))
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The linker of the world.
    pub fn linker(&self) -> &Linker<ExecState> {
        &self.linker
    }

    /// Whether fuel is metered.
    pub fn fuel(&self) -> bool {
        self.fuel
    }

    /// Identifies the wasmtime version and configuration a precompiled artifact depends on.
    pub fn cache_key(&self) -> String {
        // The compatibility hash covers the wasmtime version, the target and every setting that
        // changes generated code.
        self.config_hash.clone()
    }
}
