//! `forge-host run FILE`: runs a script and prints its result.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::DataDirArgs;
use crate::engines::sha256_hex;
use crate::error::Error;
use crate::kernel::{CancelHandle, ExecutionRequest, Kernel, RunReport};
use crate::limits::{Limits, parse_duration, parse_size};
use crate::output::Event;
use crate::permissions::Policy;

/// Arguments of `forge-host run`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the script succeeded, 1 when it failed, timed out or \
was cancelled, 2 on bad usage or invalid input.\n\nExamples:\n  forge-host run examples/hello.js\n  \
forge-host run examples/concurrent-calls.js --json --timeout 5s --memory 64MiB\n  \
forge-host run examples/pandas-analysis.py --input examples/data/sales.csv --out out/"
)]
pub struct RunArgs {
    /// The script; its extension picks the engine (.js, .mjs: QuickJS; .py: CPython, in the
    /// smallest profile covering its imports: python-cpython, or python-science for numpy,
    /// pandas, dateutil)
    pub file: PathBuf,
    /// Print one JSON object with the result, error, output and metrics
    #[arg(long)]
    pub json: bool,
    /// Run with this engine instead of the one the extension and imports pick: an engine id
    /// (`forge-host engines list`), or a language (`python`: its standard-library profile)
    #[arg(long, value_name = "ID")]
    pub engine: Option<String>,
    /// Wall-clock limit of the whole execution (500ms, 30s, 2m)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Memory cap of the instance (64MiB, 1GiB)
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size)]
    pub memory: u64,
    /// Deterministic CPU budget in wasmtime fuel units [default: off]
    #[arg(long, value_name = "N")]
    pub fuel: Option<u64>,
    /// Nested tool calls the script may begin
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_tool_calls)]
    pub max_tool_calls: u32,
    /// Nested tool calls running at once
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_concurrency)]
    pub max_concurrency: u32,
    /// Largest JSON input of one tool call
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    pub max_call_input: u64,
    /// Largest JSON response of one tool call
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = parse_size)]
    pub max_call_response: u64,
    /// Retained tail of stdout and of stderr, each (also bounds all text() values)
    #[arg(long, value_name = "SIZE", default_value = "256KiB", value_parser = parse_size)]
    pub max_output: u64,
    /// Largest result
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_result: u64,
    /// State budget of the session, all values together
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    pub max_state: u64,
    /// Largest single state value
    #[arg(long, value_name = "SIZE", default_value = "256KiB", value_parser = parse_size)]
    pub max_state_value: u64,
    /// Files published from /output at most
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_publish_files)]
    pub max_files: u32,
    /// Bytes published from /output, all files together
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size)]
    pub max_files_bytes: u64,
    /// Bytes of one published file
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    pub max_file_bytes: u64,
    /// The live task log on disk (forge-host logs ID)
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    pub max_log: u64,
    /// A file or folder the script reads (copied, hashed, read-only in /input); repeatable
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Where /output is published when the run succeeds [default: ./forge-out/<run-id>/, only
    /// when the script wrote files]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Publish /output even when the run fails
    #[arg(long)]
    pub publish_on_error: bool,
    /// Keep the job folder (/input, /output, /work) after the run and print where it is
    #[arg(long)]
    pub keep: bool,
    /// Limits from a JSON file of flag names and values ({"timeout": "5s", "memory": "64MiB"});
    /// flags typed on the command line override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Session whose shared state the script reads and writes [default: one per working directory]
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Allow tools with the `write` effect
    #[arg(long)]
    pub allow_write: bool,
    /// Allow tools with the `process` effect
    #[arg(long)]
    pub allow_process: bool,
    /// Allow tools with the `external` effect
    #[arg(long)]
    pub allow_external: bool,
}

impl RunArgs {
    /// The limits: a `--config` file's, with the flags typed on the command line on top; or
    /// the flags with their defaults.
    fn limits(&self, explicit: &[String]) -> Result<Limits, Error> {
        let flags = self.flag_limits();
        let Some(path) = &self.config else {
            return Ok(flags);
        };
        let text = std::fs::read(path)
            .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", path.display())))?;
        let config: Value = serde_json::from_slice(&text)
            .map_err(|e| Error::invalid_input(format!("{} is not JSON: {e}", path.display())))?;
        let mut limits = Limits::default();
        crate::limits::apply_config(&mut limits, &config)?;
        let typed = serde_json::to_value(&flags).unwrap_or_default();
        for id in explicit {
            // A typed limit flag overrides the file: read it back from the flags' limits.
            let field = match id.as_str() {
                "timeout" => "timeout_ms",
                "memory" => "memory_bytes",
                "fuel" => "fuel",
                "max_tool_calls" => "max_tool_calls",
                "max_concurrency" => "max_concurrency",
                "max_call_input" => "max_call_input_bytes",
                "max_call_response" => "max_call_response_bytes",
                "max_output" => "max_output_bytes",
                "max_result" => "max_result_bytes",
                "max_state" => "max_state_bytes",
                "max_state_value" => "max_state_value_bytes",
                "max_files" => "max_publish_files",
                "max_files_bytes" => "max_publish_bytes",
                "max_file_bytes" => "max_publish_file_bytes",
                "max_log" => "max_log_bytes",
                _ => continue,
            };
            let mut merged = serde_json::to_value(&limits).unwrap_or_default();
            merged[field] = typed[field].clone();
            limits =
                serde_json::from_value(merged).map_err(|e| Error::invalid_input(e.to_string()))?;
        }
        Ok(limits)
    }

    fn flag_limits(&self) -> Limits {
        Limits {
            timeout: self.timeout,
            fuel: self.fuel,
            memory_bytes: self.memory,
            max_tool_calls: self.max_tool_calls,
            max_concurrency: self.max_concurrency,
            max_call_input_bytes: self.max_call_input,
            max_call_response_bytes: self.max_call_response,
            max_output_bytes: self.max_output,
            max_result_bytes: self.max_result,
            max_state_bytes: self.max_state,
            max_state_value_bytes: self.max_state_value,
            max_publish_files: self.max_files,
            max_publish_bytes: self.max_files_bytes,
            max_publish_file_bytes: self.max_file_bytes,
            max_log_bytes: self.max_log,
        }
    }
}

/// The session of runs that name none: one per working directory.
pub fn default_session() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let hash = sha256_hex(cwd.as_os_str().as_encoded_bytes());
    format!("dir-{}", &hash[..16])
}

/// Prints events as they happen: script stdout and `text()` on stdout, script stderr and
/// progress on stderr (JSON lines with `--json`, where stdout is kept for the one report).
fn printer(json: bool) -> Arc<dyn Fn(Event) + Send + Sync> {
    let progress_bar = !json && std::io::stderr().is_terminal();
    Arc::new(move |event| match event {
        Event::Stdout(bytes) if !json => {
            let _ = std::io::stdout().write_all(&bytes);
        }
        Event::Stderr(bytes) if !json => {
            let _ = std::io::stderr().write_all(&bytes);
        }
        Event::Text(value) if !json => match value {
            Value::String(text) => println!("{text}"),
            other => println!("{other}"),
        },
        Event::Started { id } if json => {
            eprintln!("{}", json!({"started": {"id": id}}));
        }
        Event::Progress {
            message,
            completed,
            total,
        } => {
            if json {
                let line = json!({"progress": {"message": message, "completed": completed, "total": total}});
                eprintln!("{line}");
            } else if progress_bar {
                eprint!("\r\x1b[2K{}", progress_line(&message, completed, total));
            } else {
                eprintln!("progress: {}", progress_line(&message, completed, total));
            }
        }
        _ => {}
    })
}

fn progress_line(message: &str, completed: Option<f64>, total: Option<f64>) -> String {
    match (completed, total) {
        (Some(done), Some(total)) if total > 0.0 => {
            let ratio = (done / total).clamp(0.0, 1.0);
            let filled = (ratio * 20.0).round() as usize;
            format!(
                "[{}{}] {done}/{total} {message}",
                "#".repeat(filled),
                " ".repeat(20 - filled)
            )
        }
        (Some(done), _) => format!("{done} {message}"),
        _ => message.to_string(),
    }
}

/// Runs `forge-host run`.
pub async fn run(
    data: &DataDirArgs,
    args: RunArgs,
    explicit: &[String],
) -> anyhow::Result<ExitCode> {
    let outcome = execute(data, &args, explicit).await;
    report_outcome(outcome, args.json)
}

/// Prints a run's report (or why it could not start) and picks the exit code.
pub(super) fn report_outcome(
    outcome: anyhow::Result<RunReport>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    match outcome {
        Ok(report) => Ok(print_report(&report, json)),
        Err(error) if json => {
            let error = error
                .downcast::<Error>()
                .unwrap_or_else(|e| Error::invalid_input(format!("{e:#}")));
            println!(
                "{}",
                json!({"status": "failed", "error": {"code": error.code, "message": error.message}})
            );
            Err(error.into())
        }
        Err(error) => Err(error),
    }
}

/// Runs `request` on a kernel over `data`, cancelled by Ctrl-C, printing events as they happen.
pub(super) async fn execute_request(
    data: &DataDirArgs,
    mut request: ExecutionRequest,
    json: bool,
) -> anyhow::Result<RunReport> {
    let kernel = Kernel::builder(data.resolve()?).build().await?;
    let cancel = CancelHandle::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    request.events = Some(printer(json));
    request.cancel = Some(cancel);
    Ok(kernel.run(request).await?)
}

async fn execute(
    data: &DataDirArgs,
    args: &RunArgs,
    explicit: &[String],
) -> anyhow::Result<RunReport> {
    let source = std::fs::read(&args.file)
        .map_err(|e| Error::invalid_input(format!("cannot read {}: {e}", args.file.display())))?;
    let source = String::from_utf8(source)
        .map_err(|_| Error::invalid_input(format!("{} is not UTF-8 text", args.file.display())))?;
    let filename = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.file.display().to_string());
    let request = ExecutionRequest {
        source,
        filename,
        engine: args.engine.clone(),
        limits: args.limits(explicit)?,
        policy: Policy {
            allow_write: args.allow_write,
            allow_process: args.allow_process,
            allow_external: args.allow_external,
        },
        session: args.session.clone().unwrap_or_else(default_session),
        inputs: args.inputs.clone(),
        out_dir: args.out.clone(),
        publish_on_error: args.publish_on_error,
        keep_job: args.keep,
        expected_inputs: None,
        events: None,
        cancel: None,
    };
    execute_request(data, request, args.json).await
}

fn print_report(report: &RunReport, json: bool) -> ExitCode {
    if json {
        match serde_json::to_string(report) {
            Ok(text) => println!("{text}"),
            Err(error) => eprintln!("error ISOLATE_FAILURE: cannot print the report: {error}"),
        }
    } else {
        if let Some(value) = &report.value {
            println!("{value}");
        }
        if let Some(dir) = &report.out_dir {
            eprintln!("published {} file(s) to {dir}", report.outputs.len());
        }
        if let Some(dir) = &report.job_dir {
            eprintln!("job folder kept at {dir}");
        }
        if let Some(error) = &report.error {
            eprintln!("error {}: {}", error.code, error.message);
            // Python's message already is its traceback; print a stack only when it adds to it.
            if let Some(stack) = error
                .stack
                .as_deref()
                .filter(|s| !s.trim().is_empty() && !error.message.contains(s.trim()))
            {
                eprintln!("{}", stack.trim_end());
            }
        }
    }
    let _ = std::io::stdout().flush();
    if report.succeeded() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
