//! Measures the warm per-execution overhead of the library API and a CPU-bound script, and
//! prints one JSON object. `cargo xtask bench` runs it next to the other measurements.
//!
//! Usage: bench ENGINES_DIR DATA_DIR EMPTY_CACHE_DIR

use std::path::PathBuf;
use std::time::{Duration, Instant};

use forge_host::{DataDir, ExecutionRequest, Kernel};

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let index = ((samples.len() - 1) as f64 * p).round() as usize;
    samples[index].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let engines = PathBuf::from(args.next().ok_or("usage: bench ENGINES_DIR DATA_DIR")?);
    let data = PathBuf::from(args.next().ok_or("usage: bench ENGINES_DIR DATA_DIR")?);
    let usage = "usage: bench ENGINES_DIR DATA_DIR EMPTY_CACHE_DIR";
    let cold_cache = PathBuf::from(args.next().ok_or(usage)?);

    // Cold: nothing cached, the component is compiled (and described) once.
    let started = Instant::now();
    let cold = Kernel::builder(DataDir::new(data.join("cold")))
        .engine_dirs(vec![engines.clone()])
        .cache(forge_host::engines::Cache::new(&cold_cache))
        .build()
        .await;
    let entry = cold.engines().by_id("javascript-quickjs")?.clone();
    let (_, timing) = cold.engines().load(&entry, false)?;
    let cold_compile_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert!(
        !timing.compiled,
        "describe() already compiled it during discovery"
    );

    // Cached: a new registry maps the precompiled file, as a new process would.
    let warm = Kernel::builder(DataDir::new(data.join("warm")))
        .engine_dirs(vec![engines.clone()])
        .cache(forge_host::engines::Cache::new(&cold_cache))
        .build()
        .await;
    let (_, timing) = warm.engines().load(&entry, false)?;
    assert!(!timing.compiled);
    let cached_load_ms = timing.elapsed.as_secs_f64() * 1000.0;

    let kernel = Kernel::builder(DataDir::new(data))
        .engine_dirs(vec![engines])
        .build()
        .await;

    // Warm-up: the first run maps the precompiled engine.
    kernel
        .run(ExecutionRequest::new("return 1", "warm.js"))
        .await?;
    let mut samples = Vec::new();
    for _ in 0..300 {
        let started = Instant::now();
        let report = kernel
            .run(ExecutionRequest::new("return 1", "warm.js"))
            .await?;
        samples.push(started.elapsed());
        assert!(report.succeeded());
    }
    let return_one_p50 = percentile(&mut samples, 0.5);
    let return_one_p90 = percentile(&mut samples, 0.9);

    let mut snap = Vec::new();
    for _ in 0..300 {
        let started = Instant::now();
        kernel.state_store().snapshot("default")?;
        snap.push(started.elapsed());
    }
    eprintln!("snapshot p50 {}", percentile(&mut snap, 0.5));
    if std::env::var_os("BENCH_ONLY_RETURN_1").is_some() {
        for _ in 0..3000 {
            kernel
                .run(ExecutionRequest::new("return 1", "warm.js"))
                .await?;
        }
        return Ok(());
    }
    let cpu = "let s = 0; for (let i = 1; i <= 10000000; i++) s += i; return s;";
    let mut cpu_samples = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        kernel.run(ExecutionRequest::new(cpu, "cpu.js")).await?;
        cpu_samples.push(started.elapsed());
    }
    let cpu_ms = percentile(&mut cpu_samples, 0.5);

    let calls = "for (let i = 0; i < 1000; i++) await tools.call('echo', { i }); return 1;";
    let mut call_samples = Vec::new();
    for _ in 0..5 {
        let mut request = ExecutionRequest::new(calls, "calls.js");
        request.limits.max_tool_calls = 1000;
        let started = Instant::now();
        kernel.run(request).await?;
        call_samples.push(started.elapsed());
    }
    let calls_ms = percentile(&mut call_samples, 0.5);

    println!(
        "{}",
        serde_json::json!({
            "component_cold_compile_ms": cold_compile_ms,
            "component_cached_load_ms": cached_load_ms,
            "library_return_1_p50_ms": return_one_p50,
            "library_return_1_p90_ms": return_one_p90,
            "cpu_sum_1e7_ms": cpu_ms,
            "echo_calls_1000_ms": calls_ms,
        })
    );
    Ok(())
}
