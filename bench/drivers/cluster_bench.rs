//! The worker-pool figures of `cargo xtask bench` (issue 16): `return 1` runs through a real
//! NATS JetStream queue to 1, 2 and 3 `forge-host worker` processes on this machine, and the
//! latency one queued run adds over a local run. Prints one flat JSON object of numbers.
//!
//!     cluster_bench FORGE_HOST_BINARY SCRATCH_DIR

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use forge_host::ExecutionRequest;
use forge_host::cluster::submit::{Submission, enqueue};
use forge_host::cluster::{Cluster, NatsOptions, NatsTarget, QueueOptions};
use forge_host::journal::RecordMode;

/// Runs per throughput measure.
const RUNS: usize = 300;
/// Sequential runs for the latency measure.
const LATENCY_RUNS: usize = 100;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(binary), Some(scratch)) = (args.next(), args.next()) else {
        eprintln!("usage: cluster_bench FORGE_HOST_BINARY SCRATCH_DIR");
        std::process::exit(2);
    };
    let (binary, scratch) = (PathBuf::from(binary), PathBuf::from(scratch));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let (mut nats, url) = start_nats(&scratch.join("nats"));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut numbers = Vec::new();
    for workers in 1..=3 {
        let queue = format!("bench{workers}");
        let mut children: Vec<Child> = (0..workers)
            .map(|i| {
                start_worker(
                    &binary,
                    &url,
                    &queue,
                    &scratch.join(format!("w{workers}-{i}")),
                    2,
                )
            })
            .collect();
        let per_second = runtime.block_on(throughput(&url, &queue));
        numbers.push((
            format!("cluster_throughput_{workers}_workers_runs_per_s"),
            per_second,
        ));
        for child in &mut children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    let mut single = start_worker(&binary, &url, "latency", &scratch.join("latency"), 1);
    let p50 = runtime.block_on(latency(&url, "latency"));
    numbers.push(("cluster_return_1_p50_ms".into(), p50));
    let _ = single.kill();
    let _ = single.wait();
    let _ = nats.kill();
    let _ = nats.wait();
    let body: Vec<String> = numbers
        .iter()
        .map(|(key, value)| format!("  \"{key}\": {value}"))
        .collect();
    println!("{{\n{}\n}}", body.join(",\n"));
}

fn submission(queue: &str) -> Submission {
    Submission {
        request: ExecutionRequest::builder("return 1", "bench.js")
            .session("bench")
            .record(RecordMode::Full)
            .build(),
        queue: queue.into(),
        on_taken: None,
    }
}

/// Runs per second of `RUNS` queued at once, after a warm-up.
async fn throughput(url: &str, queue: &str) -> f64 {
    let target = NatsTarget::new(url, NatsOptions::default()).expect("a loopback URL");
    let cluster = Cluster::connect(&target, &QueueOptions::default())
        .await
        .expect("connect");
    for _ in 0..20 {
        enqueue(&cluster, submission(queue))
            .await
            .expect("enqueue")
            .report()
            .await
            .expect("run");
    }
    let began = Instant::now();
    let mut queued = Vec::new();
    for _ in 0..RUNS {
        queued.push(enqueue(&cluster, submission(queue)).await.expect("enqueue"));
    }
    for run in queued {
        let report = run.report().await.expect("report");
        assert!(report.succeeded());
    }
    RUNS as f64 / began.elapsed().as_secs_f64()
}

/// p50 of one queued run at a time, submit to report, in milliseconds.
async fn latency(url: &str, queue: &str) -> f64 {
    let target = NatsTarget::new(url, NatsOptions::default()).expect("a loopback URL");
    let cluster = Cluster::connect(&target, &QueueOptions::default())
        .await
        .expect("connect");
    let mut times = Vec::new();
    for i in 0..LATENCY_RUNS + 10 {
        let began = Instant::now();
        let report = enqueue(&cluster, submission(queue))
            .await
            .expect("enqueue")
            .report()
            .await;
        assert!(report.expect("report").succeeded());
        if i >= 10 {
            times.push(began.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn start_nats(dir: &Path) -> (Child, String) {
    let mut child = Command::new("/usr/sbin/nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nats-server (apt install nats-server)");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut url = None;
    for line in lines.by_ref().map_while(Result::ok) {
        if let Some(at) = line.find("Listening for client connections on ") {
            url = Some(format!("nats://{}", line[at + 36..].trim()));
        }
        if line.contains("Server is ready") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    (child, url.expect("nats-server said where it listens"))
}

fn start_worker(binary: &Path, url: &str, queue: &str, data: &Path, max_runs: u32) -> Child {
    let mut child = Command::new(binary)
        .args(["worker", "--nats", url, "--queue", queue, "--max-runs"])
        .arg(max_runs.to_string())
        .arg("--data-dir")
        .arg(data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("forge-host worker");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    for line in lines.by_ref().map_while(Result::ok) {
        if line.contains("serving queue") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    child
}
