//! `forge-host submit FILE --nats URL`: runs a script on the workers of a queue and waits for
//! it, with the same report and exit status as `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::gate_flags::GateFlags;
use super::limit_flags::LimitFlags;
use super::nats_flags::{InsecureFlag, NatsFlags};
use super::progress::Printer;
use super::run::{Lang, ScriptArgs, default_session, parse_record, report_outcome, script};
use forge_host::ExecutionRequest;
use forge_host::cluster::{Cluster, DEFAULT_QUEUE, QueueOptions, submit};
use forge_host::journal::RecordMode;

/// Arguments of `forge-host submit`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The script and its inputs go to the NATS object store; a worker of the queue \
(`forge-host worker`) runs it and sends back its report and the files it published. Exit \
status as for `run`; a full queue refuses the submission (BUDGET_EXCEEDED, exit 1). Ctrl-C \
cancels the run on its worker, or, if no worker has taken it yet, makes sure none ever runs it.\n\n\
Examples:\n  forge-host submit analysis.py --input data.csv --nats nats://127.0.0.1:4222\n  \
forge-host submit -e 'return 1' --lang js --nats nats://127.0.0.1:4222 --json\n  \
FORGE_HOST_NATS='tls://alice:PASSWORD@10.0.0.5:4222' forge-host submit job.py --nats-ca ca.pem",
    mut_arg("nats", |a| a.required(true))
)]
pub struct SubmitArgs {
    /// The script, or `-` to read it from stdin
    #[arg(required_unless_present = "eval", conflicts_with = "eval")]
    pub file: Option<PathBuf>,
    /// Run CODE instead of a file (needs --lang or --engine)
    #[arg(short = 'e', long = "eval", value_name = "CODE")]
    pub eval: Option<String>,
    /// The language of a script from stdin or -e: js, py or lua
    #[arg(long, value_name = "LANG")]
    pub lang: Option<Lang>,
    /// An engine id that overrides the choice by extension
    #[arg(long, value_name = "ID")]
    pub engine: Option<String>,
    #[command(flatten)]
    pub nats: NatsFlags,
    #[command(flatten)]
    pub insecure: InsecureFlag,
    /// The queue
    #[arg(long, value_name = "NAME", default_value = DEFAULT_QUEUE)]
    pub queue: String,
    /// Print one JSON object with the result, error, output and metrics
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: LimitFlags,
    /// Limits from a JSON file of flag names and values
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the run's /output is written [default: ./forge-out/<run-id>/, only when it
    /// published files]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A file or folder the script reads (read-only in /input); repeatable
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Session whose shared state the script reads and writes [default: one per working directory]
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    #[command(flatten)]
    pub gate: GateFlags,
    /// What the worker's journal keeps for replay: full, hashes or off
    #[arg(long, value_name = "MODE", default_value = "full", value_parser = parse_record)]
    pub record: RecordMode,
}

/// Runs `forge-host submit`.
pub async fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let target = args.nats.required(args.insecure)?;
        let limits = args.limits.limits(args.config.as_deref())?;
        let (source, filename) = script(
            &ScriptArgs {
                file: args.file.as_deref(),
                eval: args.eval.as_deref(),
                lang: args.lang,
                engine: args.engine.as_deref(),
            },
            limits.max_script_bytes,
        )?;
        let cluster = Cluster::connect(&target, &QueueOptions::default()).await?;
        let printer = Printer::new(args.json);
        let request = ExecutionRequest::builder(source, filename)
            .engine(args.engine.clone())
            .limits(limits)
            .policy(args.gate.policy(false))
            .session(args.session.clone().unwrap_or_else(default_session))
            .inputs(args.inputs.clone())
            .record(args.record)
            .out_dir(args.out.clone())
            .events(Some(printer.sink()))
            .build();
        let submission = submit::Submission {
            request,
            queue: args.queue.clone(),
            on_taken: Some(std::sync::Arc::new(|worker: &str, lowered: &[String]| {
                if lowered.is_empty() {
                    eprintln!("forge-host: worker `{worker}` runs it");
                } else {
                    eprintln!(
                        "forge-host: worker `{worker}` runs it with its own lower limits: {}",
                        lowered.join(", ")
                    );
                }
            })),
        };
        // Listening for Ctrl-C from before the run is queued, so that none is missed.
        let mut interrupt =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let queued = submit::enqueue(&cluster, submission).await?;
        eprintln!(
            "forge-host: submitted as {} to queue `{}` of {}; waiting for a worker",
            queued.id,
            args.queue,
            cluster.url()
        );
        // Ctrl-C cancels the run, as it does a local one: on its worker, or before any took it.
        let canceller = queued.canceller();
        let waiting = queued.report();
        tokio::pin!(waiting);
        let report = tokio::select! {
            report = &mut waiting => report,
            Some(()) = interrupt.recv() => match canceller.cancel().await {
                Ok(Some(never_ran)) => Err(never_ran),
                Ok(None) => {
                    eprintln!("forge-host: asked its worker to cancel it; waiting for its report");
                    waiting.await
                }
                Err(error) => Err(error),
            },
        };
        printer.finish();
        Ok(report?)
    }
    .await;
    report_outcome(outcome, args.json)
}
