//! Soak: 10,000 journaled runs in one process through the library API. Prints one JSON object:
//! the resident memory and the open file descriptors after a warm-up of 1,000 runs and after all
//! of them, and the growth between. `cargo xtask bench` runs it and BENCHMARKS.md shows it.
//!
//! Usage: soak ENGINES_DIR DATA_DIR [RUNS]

use std::path::PathBuf;

use forge_host::{DataDir, ExecutionRequest, Kernel};

/// Resident memory of this process, in MiB (`VmRSS` of /proc/self/status).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let engines = PathBuf::from(
        args.next()
            .ok_or("usage: soak ENGINES_DIR DATA_DIR [RUNS]")?,
    );
    let data = PathBuf::from(
        args.next()
            .ok_or("usage: soak ENGINES_DIR DATA_DIR [RUNS]")?,
    );
    let runs: usize = args.next().map_or(Ok(10_000), |n| n.parse())?;
    let kernel = Kernel::builder(DataDir::new(data))
        .engine_dirs(vec![engines])
        .build()
        .await?;
    let request = ExecutionRequest::new(
        "state.set('n', (state.get('n') ?? 0) + 1); text('x'); return await tools.echo({n: 1});",
        "soak.js",
    );
    let warm_up = runs / 10;
    let (mut rss_warm, mut fds_warm) = (0.0, 0);
    for run in 0..runs {
        let report = kernel.run(request.clone()).await?;
        if !report.succeeded() {
            return Err(format!("run {run} failed: {:?}", report.error).into());
        }
        if run + 1 == warm_up {
            rss_warm = rss_mib();
            fds_warm = open_fds();
        }
    }
    let (rss_end, fds_end) = (rss_mib(), open_fds());
    println!(
        "{{\"soak_runs\": {runs}, \"soak_rss_after_warmup_mib\": {rss_warm:.1}, \"soak_rss_after_all_mib\": {rss_end:.1}, \"soak_rss_growth_percent\": {:.2}, \"soak_fds_after_warmup\": {fds_warm}, \"soak_fds_after_all\": {fds_end}}}",
        (rss_end - rss_warm) / rss_warm.max(f64::MIN_POSITIVE) * 100.0
    );
    Ok(())
}
