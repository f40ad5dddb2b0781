//! Runs one script many times through the library API, for a profiler to watch (`perf record
//! -g target/release/examples/repeat ...`), and prints the p50 and p99 of a warm run; with
//! CONCURRENCY above 1, that many run at once and it prints runs per second instead.
//!
//! Usage: repeat ENGINES_DIR DATA_DIR SCRIPT_FILE [RUNS [CONCURRENCY]]

use std::path::PathBuf;
use std::sync::Arc;
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
    let concurrency: usize = args.next().map_or(Ok(1), |n| n.parse())?;
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
    if concurrency > 1 {
        let kernel = Arc::new(kernel);
        let started = Instant::now();
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                let (kernel, request) = (kernel.clone(), request.clone());
                tokio::spawn(async move {
                    for _ in 0..runs / concurrency {
                        kernel.run(request.clone()).await?;
                    }
                    Ok::<_, forge_host::Error>(())
                })
            })
            .collect();
        for worker in workers {
            worker.await??;
        }
        let done = runs / concurrency * concurrency;
        println!(
            "runs {done} at {concurrency} at once: {:.0} runs/s",
            done as f64 / started.elapsed().as_secs_f64()
        );
        return Ok(());
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
