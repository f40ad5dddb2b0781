//! Runs one script many times through the library API, for a profiler to watch (`perf record
//! -g target/release/examples/repeat ...`), and prints the p50 and p99 of a warm run.
//!
//! Usage: repeat ENGINES_DIR DATA_DIR SCRIPT_FILE [RUNS]

use std::path::PathBuf;
use std::time::Instant;

use forge_host::{DataDir, ExecutionRequest, Kernel};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: repeat ENGINES_DIR DATA_DIR SCRIPT_FILE [RUNS]";
    let mut args = std::env::args().skip(1);
    let engines = PathBuf::from(args.next().ok_or(usage)?);
    let data = PathBuf::from(args.next().ok_or(usage)?);
    let script = PathBuf::from(args.next().ok_or(usage)?);
    let runs: usize = args.next().map_or(Ok(1_000), |n| n.parse())?;
    let source = std::fs::read_to_string(&script)?;
    let name = script
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("the script needs a UTF-8 file name")?;
    let kernel = Kernel::builder(DataDir::new(data))
        .engine_dirs(vec![engines])
        .build()
        .await?;
    let request = ExecutionRequest::new(source, name);
    let first = kernel.run(request.clone()).await?;
    if !first.succeeded() {
        return Err(format!("the script failed: {:?}", first.error).into());
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        kernel.run(request.clone()).await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
    println!("runs {runs}: p50 {:.3} ms, p99 {:.3} ms", at(0.5), at(0.99));
    Ok(())
}
