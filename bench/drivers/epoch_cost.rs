//! What the host's code-generation settings cost a CPU-bound script (issue 12): the QuickJS
//! engine compiled three ways and run on the same loop, with nothing else around it. The host
//! itself always runs with epoch interruption (it is how `--timeout` stops a tight loop) and
//! Cranelift's `speed` level; this measures them against their alternatives. Prints one JSON
//! object of milliseconds (the best of three runs each). `cargo xtask bench` runs it.
//!
//! Usage: epoch_cost ENGINES_DIR

use std::path::PathBuf;
use std::time::{Duration, Instant};

use forge_host::engines::bindings::{GuestLimits, RunRequest, ScriptEngine};
use serde_json::{Map, Value, json};
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, OptLevel, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

const SCRIPT: &str = "let s = 0; for (let i = 1; i <= 10000000; i++) s += i; return s;";

struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The best of three runs of [`SCRIPT`], in ms, with epoch interruption on or off (on: ticked
/// every 5 ms with a yield at each tick, as the host does) at `opt_level`.
async fn best_run(
    wasm: &[u8],
    epochs: bool,
    opt_level: OptLevel,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut config = Config::new();
    config
        .epoch_interruption(epochs)
        .max_wasm_stack(forge_host::engines::MAX_WASM_STACK_BYTES)
        .async_stack_size(forge_host::engines::MAX_WASM_STACK_BYTES + (1 << 20))
        .cranelift_opt_level(opt_level);
    let engine = Engine::new(&config)?;
    let component = Component::new(&engine, wasm)?;
    let mut linker = Linker::<Ctx>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    // The loop calls no tool, state or output: those imports only have to exist.
    for (name, item) in component.component_type().imports(&engine) {
        if let (true, ComponentItem::ComponentInstance(interface)) =
            (name.starts_with("forge:"), item.ty)
        {
            let mut instance = linker.instance(name)?;
            for (function, item) in interface.exports(&engine) {
                if let ComponentItem::ComponentFunc(_) = item.ty {
                    instance.func_new(function, |_, _, _, _| {
                        wasmtime::bail!("not available in this benchmark")
                    })?;
                }
            }
        }
    }
    let ticker = engine.weak();
    if epochs {
        std::thread::spawn(move || {
            while let Some(engine) = ticker.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(forge_host::engines::EPOCH_TICK);
            }
        });
    }
    let limits = forge_host::Limits::default();
    let request = RunRequest {
        source: SCRIPT.into(),
        filename: "cpu.js".into(),
        limits: GuestLimits::from(&limits),
        inputs: Vec::new(),
        pass_through_codes: Vec::new(),
    };
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let ctx = Ctx {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
        };
        let mut store = Store::new(&engine, ctx);
        if epochs {
            store.set_epoch_deadline(1);
            store.epoch_deadline_async_yield_and_update(1);
        }
        let started = Instant::now();
        let instance = ScriptEngine::instantiate_async(&mut store, &component, &linker).await?;
        let outcome = instance
            .forge_engine_engine()
            .call_run(&mut store, &request)
            .await?;
        best = best.min(started.elapsed());
        if let Err(error) = outcome {
            return Err(error.message.into());
        }
    }
    Ok(best.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engines = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: epoch_cost ENGINES_DIR")?,
    );
    let wasm = std::fs::read(engines.join("javascript-quickjs.wasm"))?;
    let mut out = Map::new();
    for (key, epochs, opt_level) in [
        ("epoch_on_speed_cpu_sum_1e7_ms", true, OptLevel::Speed),
        ("epoch_off_speed_cpu_sum_1e7_ms", false, OptLevel::Speed),
        ("epoch_on_opt_none_cpu_sum_1e7_ms", true, OptLevel::None),
    ] {
        out.insert(key.into(), json!(best_run(&wasm, epochs, opt_level).await?));
    }
    println!("{}", Value::Object(out));
    Ok(())
}
