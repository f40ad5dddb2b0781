//! Pre-initialised engines: an engine component that exports `wizer-initialize` (the
//! `preinitialized-script-engine` world) has it called once, when the component is first
//! compiled, and its memory and globals snapshotted with wasmtime's wizer. Every run then starts
//! from the snapshot: for QuickJS that is a runtime and context with the prelude already
//! evaluated, instead of building them again in each run.
//!
//! The initialiser runs in an instance that can reach nothing the runs could tell apart: no
//! files, no environment, no stdio, clocks fixed at zero, and every `forge:engine` import traps.
//! It must leave no WASI handle open, since handles do not survive a snapshot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use wasmtime::component::{Component, Instance, Lift, Linker, ResourceTable, WasmList};
use wasmtime::{Config, Engine, OptLevel, Store};
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

/// The component export the host calls to pre-initialise an engine (WIT:
/// `preinitialized-script-engine`).
pub const INITIALIZER: &str = "wizer-initialize";

/// Changes whenever what a snapshot holds could change for the same component bytes (the wizer
/// version, or the environment the initialiser runs in). It is part of the compile cache's key.
pub const SNAPSHOT_FORMAT: &str = "wizer-48.0.8/1";

/// Why an engine could not be pre-initialised.
#[derive(Debug, thiserror::Error)]
#[error("cannot pre-initialise {}: {step}", .component.display())]
pub struct PreinitError {
    /// The component's file.
    pub component: PathBuf,
    /// The step that failed.
    pub step: &'static str,
    /// Why.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

fn failed(component: &Path, step: &'static str) -> impl FnOnce(wasmtime::Error) -> PreinitError {
    move |error| PreinitError {
        component: component.to_path_buf(),
        step,
        source: Box::<dyn std::error::Error + Send + Sync>::from(error),
    }
}

/// Whether the component exports the initialiser: a top-level function export named
/// [`INITIALIZER`]. Reads only the component's export sections, not its code.
pub fn wants_preinit(component: &[u8]) -> bool {
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        let Ok(payload) = payload else {
            // Not valid: compiling it reports the problem properly.
            return false;
        };
        match payload {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentExportSection(exports) if depth == 0 => {
                let found = exports.into_iter().flatten().any(|export| {
                    export.name.name == INITIALIZER
                        && export.kind == wasmparser::ComponentExternalKind::Func
                });
                if found {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The store data of the initialising instance: WASI with nothing granted.
struct InitState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for InitState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Both clocks read zero during initialisation, so that nothing time-dependent is baked in (a
/// QuickJS context's `performance.timeOrigin` is 0, and `performance.now()` in a run counts from
/// the run's own start).
struct ClockAtZero;

impl HostWallClock for ClockAtZero {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for ClockAtZero {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        0
    }
}

/// Runs the initialiser of `component` (read from `path`) and returns the component with its
/// state snapshotted.
pub async fn snapshot(path: &Path, component: &[u8]) -> Result<Vec<u8>, PreinitError> {
    let failed = |step| failed(path, step);
    let mut wizer = Wizer::new();
    wizer.init_func(INITIALIZER);
    // Keep the export: wit-bindgen's core module exports the same name, and removing it leaves
    // the component referring to a missing core export (wasmtime#13186). Calling it again in a
    // snapshot does nothing.
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(component)
        .map_err(failed("instrumenting the component"))?;

    // Compiled once and thrown away: no optimisation, which makes this compile quicker.
    let mut config = Config::new();
    super::features::guest_features(&mut config).cranelift_opt_level(OptLevel::None);
    let engine = Engine::new(&config).map_err(failed("the initialising engine"))?;
    let compiled =
        Component::new(&engine, &instrumented).map_err(failed("compiling the component"))?;
    let mut linker = Linker::<InitState>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(failed("linking WASI"))?;
    trap_forge_imports(&engine, &compiled, &mut linker).map_err(failed("linking forge:engine"))?;
    let wasi = WasiCtxBuilder::new()
        .wall_clock(ClockAtZero)
        .monotonic_clock(ClockAtZero)
        .build();
    let mut store = Store::new(
        &engine,
        InitState {
            wasi,
            table: ResourceTable::new(),
        },
    );
    let instance = linker
        .instantiate_async(&mut store, &compiled)
        .await
        .map_err(failed("instantiating the component"))?;
    let initialize = instance
        .get_typed_func::<(), ()>(&mut store, INITIALIZER)
        .map_err(failed("finding `wizer-initialize: func()`"))?;
    initialize
        .call_async(&mut store, ())
        .await
        .map_err(failed("running `wizer-initialize`"))?;
    if !store.data().table.is_empty() {
        return Err(PreinitError {
            component: path.to_path_buf(),
            step: "checking what `wizer-initialize` left behind",
            source: "it left WASI handles open, which a snapshot cannot keep".into(),
        });
    }
    let mut snapshotted = Snapshotted {
        store: &mut store,
        instance,
        problem: None,
    };
    let snapshot = wizer
        .snapshot_component(&context, &mut snapshotted)
        .await
        .map_err(failed("snapshotting the component"))?;
    match snapshotted.problem {
        Some(problem) => Err(PreinitError {
            component: path.to_path_buf(),
            step: "reading the initialised instance",
            source: problem.into(),
        }),
        None => Ok(snapshot),
    }
}

/// Defines every `forge:engine` function the component imports as a trap: an initialiser has no
/// run to call tools, state or output for. (Not `Linker::define_unknown_imports_as_traps`: it
/// compares names exactly, so it also shadows the WASI imports of a newer 0.2.x version that
/// the WASI linker serves by semver.)
fn trap_forge_imports(
    engine: &Engine,
    component: &Component,
    linker: &mut Linker<InitState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::types::ComponentItem;
    for (import, item) in component.component_type().imports(engine) {
        let ComponentItem::ComponentInstance(interface) = item.ty else {
            continue;
        };
        if !import.starts_with("forge:") {
            continue;
        }
        let mut instance = linker.instance(import)?;
        for (function, item) in interface.exports(engine) {
            if let ComponentItem::ComponentFunc(_) = item.ty {
                let name = format!("{import}#{function}");
                instance.func_new(function, move |_, _, _, _| {
                    wasmtime::bail!("`{name}` cannot be called while the engine is pre-initialised")
                })?;
            }
        }
    }
    Ok(())
}

/// Lets wizer read the initialised instance's memories and globals through the accessors it
/// added while instrumenting. Wizer's callbacks cannot fail, so the first failure is kept in
/// `problem` and the snapshot is thrown away.
struct Snapshotted<'a, T: 'static> {
    store: &'a mut Store<T>,
    instance: Instance,
    problem: Option<String>,
}

impl<T: Send> Snapshotted<'_, T> {
    async fn call<R: Lift + Send + Sync + 'static>(
        &mut self,
        instance: &str,
        func: &str,
    ) -> Option<R> {
        let result = self.try_call(instance, func).await;
        match result {
            Ok(value) => Some(value),
            Err(problem) => {
                self.problem.get_or_insert(problem);
                None
            }
        }
    }

    async fn try_call<R: Lift + Send + Sync + 'static>(
        &mut self,
        instance: &str,
        func: &str,
    ) -> Result<R, String> {
        let export = self
            .instance
            .get_export_index(&mut *self.store, None, instance)
            .and_then(|i| {
                self.instance
                    .get_export_index(&mut *self.store, Some(&i), func)
            })
            .ok_or_else(|| format!("wizer's accessor {instance}#{func} is missing"))?;
        let typed = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, export)
            .map_err(|e| format!("wizer's accessor {instance}#{func}: {e}"))?;
        let (value,) = typed
            .call_async(&mut *self.store, ())
            .await
            .map_err(|e| format!("wizer's accessor {instance}#{func} failed: {e}"))?;
        Ok(value)
    }
}

impl<T: Send> ComponentInstanceState for Snapshotted<'_, T> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        match self.call::<WasmList<u8>>(instance, func).await {
            Some(list) => contents(list.as_le_slice(&*self.store)),
            None => contents(&[]),
        }
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call::<f32>(instance, func)
            .await
            .unwrap_or_default()
            .to_bits()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call::<f64>(instance, func)
            .await
            .unwrap_or_default()
            .to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_without_the_export_is_left_alone() {
        // The smallest valid component: a preamble and nothing else.
        let empty = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
        assert!(!wants_preinit(&empty));
        assert!(!wants_preinit(b"not wasm at all"));
    }
}
