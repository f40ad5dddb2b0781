//! The wasmtime engines forge-host runs components on, one per configuration (fuel metering on
//! or off, since fuel instruments the compiled code), each with its linker and epoch ticker.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

use super::bindings::{catalog, output, state, timers, tools, types};
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
    /// One permit per instance slot, when pooled.
    slots: Option<Arc<tokio::sync::Semaphore>>,
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

/// How this process allocates instances, chosen once, before its first run (see
/// [`Runtime::choose_allocation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// A pool of [`INSTANCE_SLOTS`] instance slots, reserved when the runtime starts. A slot
    /// keeps the memory pages its last run wrote (up to 64 MiB) and resets only those
    /// (`PAGEMAP_SCAN`), so a warm run takes no page faults; more runs at once wait for a slot.
    /// A freed slot is used again before an unused one, so what stays resident grows with the
    /// runs that were at once, not with the runs that were.
    /// For processes that run many scripts: the library's default, `forge-host mcp`.
    Pooled,
    /// Memory mapped per instance and unmapped after: nothing to reserve up front. For a process
    /// that runs one script (`forge-host run`).
    OnDemand,
}

/// Instances that may run at once in a pooled process; more wait for a slot.
pub const INSTANCE_SLOTS: u32 = 128;

/// Slots beyond [`INSTANCE_SLOTS`], for the short-lived instances that ask a component to
/// describe itself when it is first loaded.
const SPARE_SLOTS: u32 = 8;

/// Linear memory a slot keeps resident between runs: what a Python run writes fits.
const KEEP_RESIDENT_BYTES: usize = 64 << 20;

fn pool() -> wasmtime::PoolingAllocationConfig {
    let slots = INSTANCE_SLOTS + SPARE_SLOTS;
    // Per component: python-science links 80 core modules, each with its tables.
    let (core_instances, memories, tables) = (128, 4, 128);
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    pool.total_component_instances(slots)
        .total_stacks(slots)
        .max_component_instance_size(16 << 20)
        .max_core_instance_size(16 << 20)
        .max_core_instances_per_component(core_instances)
        .total_core_instances(slots * core_instances)
        .max_memories_per_component(memories)
        .total_memories(slots * memories)
        .max_tables_per_component(tables)
        .total_tables(slots * tables)
        .table_elements(200_000)
        .max_memory_size(crate::limits::MAX_MEMORY_BYTES as usize)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(1 << 20)
        // A freed slot is taken again before a cold one, so the slots ever used (and the
        // pages they keep) are as many as the runs that were ever at once, not the whole pool:
        // with wasmtime's default (100 unused warm slots) a server that had run a few hundred
        // scripts two at a time held 1.4 GiB.
        .max_unused_warm_slots(0)
        // A store that throws gets a GC heap for its exception objects, taken from the memory
        // pool: at most one per slot.
        .total_gc_heaps(slots)
        .pagemap_scan(wasmtime::Enabled::Auto);
    pool
}

static ALLOCATION: OnceLock<Allocation> = OnceLock::new();

impl Runtime {
    fn new(fuel: bool) -> Result<Self, RuntimeError> {
        let mut config = Config::new();
        super::features::guest_features(&mut config)
            .epoch_interruption(true)
            .consume_fuel(fuel)
            .max_wasm_stack(MAX_WASM_STACK_BYTES)
            .async_stack_size(MAX_WASM_STACK_BYTES + (1 << 20))
            .cranelift_opt_level(wasmtime::OptLevel::Speed);
        if Runtime::allocation() == Allocation::Pooled {
            config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool()));
        }
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
        link(timers::add_to_linker::<ExecState, ToolsData>(
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
        let slots = (Runtime::allocation() == Allocation::Pooled)
            .then(|| Arc::new(tokio::sync::Semaphore::new(INSTANCE_SLOTS as usize)));
        Ok(Runtime {
            engine,
            linker,
            fuel,
            config_hash,
            slots,
        })
    }

    /// Chooses how this process allocates instances. Only before the first run: `false` (and
    /// no change) once a runtime exists or another choice was made.
    pub fn choose_allocation(allocation: Allocation) -> bool {
        ALLOCATION.set(allocation).is_ok() && ALLOCATION.get() == Some(&allocation)
    }

    /// How this process allocates instances: [`Allocation::Pooled`] unless chosen otherwise.
    pub fn allocation() -> Allocation {
        *ALLOCATION.get_or_init(|| Allocation::Pooled)
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

    /// Waits for an instance slot, when pooled; the slot is free again when the permit is
    /// dropped, which must be after the instance's store is.
    pub async fn instance_slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        match &self.slots {
            Some(slots) => slots.clone().acquire_owned().await.ok(),
            None => None,
        }
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
