//! `forge-host worker --nats URL`: runs the requests of one queue on this machine, up to
//! `--max-runs` at once, with its own journal and (with `--state`) shared session state.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use super::DataDirArgs;
use super::gate_flags::GateFlags;
use super::limit_flags::LimitFlags;
use super::memory_flag::MemoryFlag;
use super::nats_flags::{InsecureFlag, NatsFlags};
use super::state_flags::StateFlags;
use super::tool_sources::ToolSourceArgs;
use forge_host::cluster::{Cluster, DEFAULT_QUEUE, QueueOptions, validate_queue, worker};
use forge_host::kernel::Kernel;

/// Arguments of `forge-host worker`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A request runs exactly as `forge-host run` runs it, with its limits lowered to \
this worker's (the limit flags are ceilings) and only the tools both the submitter and this \
worker allow. Requests wait in the queue's stream until a slot is free. A worker that dies \
mid-run leaves its request to be delivered again after --ack-wait: the next worker runs it again \
only if the dead attempt had not yet reached a write, process or external call, a state commit or \
a publication; otherwise it reports ISOLATE_FAILURE (interrupted). Effects at most once, pure runs \
at least once.\n\nExamples:\n  forge-host worker --nats nats://127.0.0.1:4222\n  \
FORGE_HOST_NATS='tls://worker:PASSWORD@10.0.0.5:4222' forge-host worker --nats-ca ca.pem \
--state etcd://https://10.0.0.6:2379 --etcd-ca ca.pem --max-runs 8 --workspace /srv/data --allow-write\n  \
forge-host worker --nats tls://10.0.0.5:4222 --nats-creds worker.creds --nats-ca ca.pem",
    mut_arg("nats", |a| a.required(true))
)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: NatsFlags,
    #[command(flatten)]
    pub insecure: InsecureFlag,
    /// The queue to serve
    #[arg(long, value_name = "NAME", default_value = DEFAULT_QUEUE)]
    pub queue: String,
    /// Runs at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_runs: Option<u32>,
    #[command(flatten)]
    pub memory: MemoryFlag,
    /// This worker's name in run records, replies and the journal stream [default: HOST-PID]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Most requests waiting in the queue, when this worker creates it; more are refused
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_queued: i64,
    /// How long a delivered request may go unanswered before it is delivered again, when this
    /// worker creates the queue's consumer (a live worker says it is alive well within it)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = forge_host::limits::parse_duration)]
    pub ack_wait: Duration,
    /// How long scripts, inputs, reports, run records and journal records are kept on NATS,
    /// when this worker creates their stores (0s: forever); make it longer than a request may
    /// wait and run
    #[arg(long, value_name = "DURATION", default_value = "168h", value_parser = forge_host::limits::parse_duration)]
    pub retention: Duration,
    #[command(flatten)]
    pub sources: ToolSourceArgs,
    #[command(flatten)]
    pub limits: LimitFlags,
    /// Limits from a JSON file of flag names and values; flags typed on the command line
    /// override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub state: StateFlags,
}

/// This machine's name and the process id.
fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!(
        "{}-{}",
        if host.is_empty() { "worker" } else { &host },
        std::process::id()
    )
}

/// Runs `forge-host worker` until Ctrl-C or SIGTERM.
pub async fn run(data: &DataDirArgs, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    validate_queue(&args.queue)?;
    let name = args.name.clone().unwrap_or_else(default_name);
    validate_queue(&name).map_err(|_| {
        forge_host::Error::invalid_input(format!("`{name}` is not a worker name (A-Z a-z 0-9 - _)"))
    })?;
    // Refused before anything starts when plain text would leave loopback.
    let target = args.nats.required(args.insecure)?;
    let state = args.state.store(args.insecure)?;
    let ceilings = args.limits.limits(args.config.as_deref())?;
    let max_runs = args.max_runs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );
    let max_runs = args.memory.runs_at_once(&ceilings, max_runs)?;
    let sources = args
        .sources
        .connect(ceilings.max_call_response_bytes)
        .await?;
    let kernel = Arc::new(
        Kernel::builder(data.resolve()?)
            .tools(sources.registry.clone())
            .state(state)
            .build()
            .await?,
    );
    let queue_options = QueueOptions {
        max_queued: args.max_queued,
        ack_wait: args.ack_wait,
        retention: args.retention,
    };
    let cluster = Cluster::connect(&target, &queue_options).await?;
    let options = worker::WorkerOptions {
        name: name.clone(),
        queue: args.queue.clone(),
        max_runs,
        ceilings,
        policy: args.gate.policy(false),
        queue_options,
    };
    eprintln!(
        "forge-host worker {name}: serving queue `{}` of {} ({max_runs} at once)",
        args.queue,
        cluster.url()
    );
    worker::serve(cluster, kernel, options, super::mcp::shutdown_signal()).await?;
    drop(sources);
    Ok(ExitCode::SUCCESS)
}
