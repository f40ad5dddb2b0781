//! Measures forge-host through its library API and prints one JSON object (milliseconds unless
//! the key says otherwise): engine compile and cached load, warm per-execution overhead,
//! throughput at 8 concurrent runs, memory per concurrent sleeping run, CPU-bound scripts with
//! fuel metering on and off, and tool-call round trips, for every engine, and what recording
//! for replay costs (the same runs with `--record off`). `cargo xtask bench`
//! runs it next to the peers.
//!
//! Usage: bench ENGINES_DIR DATA_DIR EMPTY_CACHE_DIR

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use forge_host::engines::Cache;
use forge_host::{DataDir, ExecutionRequest, Kernel};
use serde_json::{Map, Value, json};

fn p50(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[(samples.len() - 1) / 2].as_secs_f64() * 1000.0
}

async fn time_runs(
    kernel: &Kernel,
    request: &ExecutionRequest,
    runs: usize,
) -> Result<f64, forge_host::Error> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let report = kernel.run(request.clone()).await?;
        samples.push(started.elapsed());
        assert!(report.succeeded(), "{:?}", report.error);
    }
    Ok(p50(samples))
}

/// p50 of `runs` runs of `source` in the sandbox alone: a fresh instance of engine `id`, the
/// run, the teardown; no journal, job folders or state.
async fn sandbox_alone(
    kernel: &Kernel,
    id: &str,
    source: &str,
    runs: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    use forge_host::engines::bindings::{GuestLimits, RunRequest};
    let entry = kernel.engines().by_id(id)?.clone();
    let limits = forge_host::Limits::default();
    let request = RunRequest {
        source: source.into(),
        filename: if id.starts_with("python") {
            "bench.py"
        } else {
            "bench.js"
        }
        .into(),
        limits: GuestLimits::from(&limits),
        inputs: Vec::new(),
        pass_through_codes: Vec::new(),
    };
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs + 5 {
        let started = Instant::now();
        let outcome = forge_host::engines::run_alone(kernel.engines(), &entry, &request).await?;
        samples.push(started.elapsed());
        if let Err(error) = outcome {
            return Err(format!("{id}: {}", error.message).into());
        }
    }
    Ok(p50(samples.split_off(5)))
}

/// Journaled runs per second of `request`, `concurrency` at a time, `total` in all.
async fn throughput(
    kernel: &Arc<Kernel>,
    request: &ExecutionRequest,
    concurrency: usize,
    total: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let kernel = kernel.clone();
            let request = request.clone();
            tokio::spawn(async move {
                for _ in 0..total / concurrency {
                    let report = kernel.run(request.clone()).await?;
                    assert!(report.succeeded(), "{:?}", report.error);
                }
                Ok::<_, forge_host::Error>(())
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    Ok((total / concurrency * concurrency) as f64 / started.elapsed().as_secs_f64())
}

/// This process's resident set, in bytes.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// The resident memory each of `count` runs of `request` adds while they all wait at once in a
/// tool call (MiB): the peak RSS while they wait, over the RSS before them, per run.
async fn memory_per_waiting_run(
    kernel: &Arc<Kernel>,
    request: &ExecutionRequest,
    count: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let before = rss_bytes();
    let runs: Vec<_> = (0..count)
        .map(|_| {
            let kernel = kernel.clone();
            let request = request.clone();
            tokio::spawn(async move { kernel.run(request).await })
        })
        .collect();
    let mut peak = before;
    while !runs.iter().all(|run| run.is_finished()) {
        peak = peak.max(rss_bytes());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for run in runs {
        let report = run.await??;
        assert!(report.succeeded(), "{:?}", report.error);
    }
    Ok(peak.saturating_sub(before) as f64 / count as f64 / (1024.0 * 1024.0))
}

/// Compile with an empty cache (in a directory holding only this engine), then load the cached
/// form in a fresh registry.
async fn loading(
    engines: &Path,
    data: &Path,
    cache: &Path,
    id: &str,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(engines.join("engines.lock"))?)?;
    let file = format!("{id}.wasm");
    let pinned = lock["engines"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["file"] == file.as_str()))
        .ok_or("engine not in engines.lock")?;
    let alone = data.join(format!("engine-{id}"));
    std::fs::create_dir_all(&alone)?;
    std::fs::copy(engines.join(&file), alone.join(&file))?;
    // An engine that mounts a library (CPython's standard library) needs its zip beside it.
    if let Some(library) = pinned["library"]["file"].as_str() {
        std::fs::copy(engines.join(library), alone.join(library))?;
    }
    std::fs::write(
        alone.join("engines.lock"),
        json!({ "engines": [pinned] }).to_string(),
    )?;
    let cache = cache.join(id);
    let started = Instant::now();
    let cold = Kernel::builder(DataDir::new(data.join(format!("cold-{id}"))))
        .engine_dirs(vec![alone.clone()])
        .cache(Cache::new(&cache))
        .build()
        .await?;
    let entry = cold.engines().by_id(id)?.clone();
    cold.engines().load(&entry, false).await?;
    let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
    let warm = Kernel::builder(DataDir::new(data.join(format!("warm-{id}"))))
        .engine_dirs(vec![alone])
        .cache(Cache::new(&cache))
        .build()
        .await?;
    let (_, timing) = warm.engines().load(&entry, false).await?;
    assert!(!timing.compiled, "the second registry maps the cached file");
    Ok((compile_ms, timing.elapsed.as_secs_f64() * 1000.0))
}

/// `request` with its limits changed by `change`.
fn with_limits(
    request: ExecutionRequest,
    change: impl FnOnce(&mut forge_host::Limits),
) -> ExecutionRequest {
    let mut limits = request.options().limits.clone();
    change(&mut limits);
    request.into_builder().limits(limits).build()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: bench ENGINES_DIR DATA_DIR EMPTY_CACHE_DIR";
    let mut args = std::env::args().skip(1);
    let engines = PathBuf::from(args.next().ok_or(usage)?);
    let data = PathBuf::from(args.next().ok_or(usage)?);
    let cold_cache = PathBuf::from(args.next().ok_or(usage)?);
    let mut out = Map::new();

    let (js_compile, js_load) = loading(&engines, &data, &cold_cache, "javascript-quickjs").await?;
    let (py_compile, py_load) = loading(&engines, &data, &cold_cache, "python-cpython").await?;
    out.insert("component_cold_compile_ms".into(), json!(js_compile));
    out.insert("component_cached_load_ms".into(), json!(js_load));
    out.insert("python_component_cold_compile_ms".into(), json!(py_compile));
    out.insert("python_component_cached_load_ms".into(), json!(py_load));
    let (sci_compile, sci_load) = loading(&engines, &data, &cold_cache, "python-science").await?;
    out.insert(
        "science_component_cold_compile_ms".into(),
        json!(sci_compile),
    );
    out.insert("science_component_cached_load_ms".into(), json!(sci_load));

    let kernel = Arc::new(
        Kernel::builder(DataDir::new(&data))
            .engine_dirs(vec![engines])
            .build()
            .await?,
    );
    let js = |source: &str| ExecutionRequest::new(source, "bench.js");
    let py = |source: &str| ExecutionRequest::new(source, "bench.py");
    // Warm-up: the first run of each engine maps its precompiled file.
    kernel.run(js("return 1")).await?;
    kernel.run(py("import forge\nforge.result(1)\n")).await?;

    if std::env::var_os("BENCH_PROFILE_RETURN_1").is_some() {
        time_runs(&kernel, &js("return 1"), 5000).await?;
        return Ok(());
    }
    out.insert(
        "library_return_1_p50_ms".into(),
        json!(time_runs(&kernel, &js("return 1"), 300).await?),
    );
    let unrecorded = js("return 1")
        .into_builder()
        .record(forge_host::journal::RecordMode::Off)
        .build();
    out.insert(
        "library_return_1_record_off_p50_ms".into(),
        json!(time_runs(&kernel, &unrecorded, 300).await?),
    );
    out.insert(
        "sandbox_alone_return_1_p50_ms".into(),
        json!(sandbox_alone(&kernel, "javascript-quickjs", "return 1", 1000).await?),
    );
    out.insert(
        "python_sandbox_alone_result_1_p50_ms".into(),
        json!(
            sandbox_alone(
                &kernel,
                "python-cpython",
                "import forge\nforge.result(1)\n",
                300
            )
            .await?
        ),
    );
    out.insert(
        "science_sandbox_alone_result_1_p50_ms".into(),
        json!(
            sandbox_alone(
                &kernel,
                "python-science",
                "import forge, pandas\nforge.result(1)\n",
                100
            )
            .await?
        ),
    );
    out.insert(
        "throughput_return_1_8_concurrent_runs_per_s".into(),
        json!(throughput(&kernel, &js("return 1"), 8, 4000).await?),
    );
    out.insert(
        "throughput_return_1_sequential_runs_per_s".into(),
        json!(throughput(&kernel, &js("return 1"), 1, 1000).await?),
    );
    let cpu = "let s = 0; for (let i = 1; i <= 10000000; i++) s += i; return s;";
    out.insert(
        "cpu_sum_1e7_ms".into(),
        json!(time_runs(&kernel, &js(cpu), 3).await?),
    );
    let metered = with_limits(js(cpu), |l| l.fuel = Some(u64::MAX / 2));
    kernel.run(metered.clone()).await?;
    out.insert(
        "cpu_sum_1e7_fuel_on_ms".into(),
        json!(time_runs(&kernel, &metered, 3).await?),
    );
    let sleeping = with_limits(
        js("await tools.call('sleep', { ms: 1500 }); return 1;"),
        |l| l.max_concurrency = 1,
    );
    out.insert(
        "memory_per_sleeping_run_100_mib".into(),
        json!(memory_per_waiting_run(&kernel, &sleeping, 100).await?),
    );
    let py_sleeping = with_limits(
        py("import forge\nforge.call('sleep', {'ms': 3000})\nforge.result(1)\n"),
        |l| l.max_concurrency = 1,
    );
    out.insert(
        "python_memory_per_sleeping_run_100_mib".into(),
        json!(memory_per_waiting_run(&kernel, &py_sleeping, 100).await?),
    );
    let calls = with_limits(
        js("for (let i = 0; i < 1000; i++) await tools.call('echo', { i }); return 1;"),
        |l| l.max_tool_calls = 1000,
    );
    out.insert(
        "echo_calls_1000_ms".into(),
        json!(time_runs(&kernel, &calls, 5).await?),
    );
    let calls_unrecorded = calls
        .clone()
        .into_builder()
        .record(forge_host::journal::RecordMode::Off)
        .build();
    out.insert(
        "echo_calls_1000_record_off_ms".into(),
        json!(time_runs(&kernel, &calls_unrecorded, 5).await?),
    );

    let result_one = py("import forge\nforge.result(1)\n");
    out.insert(
        "python_library_result_1_p50_ms".into(),
        json!(time_runs(&kernel, &result_one, 100).await?),
    );
    let result_one_unrecorded = result_one
        .clone()
        .into_builder()
        .record(forge_host::journal::RecordMode::Off)
        .build();
    out.insert(
        "python_library_result_1_record_off_p50_ms".into(),
        json!(time_runs(&kernel, &result_one_unrecorded, 100).await?),
    );
    let sum = py("import forge\nforge.result(sum(range(10**6)))\n");
    out.insert(
        "python_sum_range_1e6_run_ms".into(),
        json!(time_runs(&kernel, &sum, 5).await?),
    );
    let sum_metered = with_limits(sum.clone(), |l| l.fuel = Some(u64::MAX / 2));
    kernel.run(sum_metered.clone()).await?;
    out.insert(
        "python_sum_range_1e6_fuel_on_run_ms".into(),
        json!(time_runs(&kernel, &sum_metered, 5).await?),
    );
    let py_calls = with_limits(
        py("import forge\nfor i in range(1000):\n    forge.call('echo', {'i': i})\n"),
        |l| l.max_tool_calls = 1000,
    );
    out.insert(
        "python_echo_calls_1000_ms".into(),
        json!(time_runs(&kernel, &py_calls, 5).await?),
    );

    let science_one = py("import forge, pandas\nforge.result(1)\n");
    kernel.run(science_one.clone()).await?;
    out.insert(
        "science_library_result_1_p50_ms".into(),
        json!(time_runs(&kernel, &science_one, 50).await?),
    );

    println!("{}", Value::Object(out));
    Ok(())
}
