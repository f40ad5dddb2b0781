//! `forge-host run FILE | - | -e CODE`: runs a script and prints its result.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::DataDirArgs;
use super::gate_flags::GateFlags;
use super::limit_flags::LimitFlags;
use super::nats_flags::InsecureFlag;
use super::progress::Printer;
use super::state_flags::StateFlags;
use super::tool_sources::ToolSourceArgs;
use forge_host::error::{Error, ErrorCode};
use forge_host::journal::RecordMode;
use forge_host::kernel::{CancelHandle, ExecutionRequest, Kernel, RunReport, check_script_size};
use forge_host::primitives::sha256_hex;

/// Arguments of `forge-host run`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the script succeeded, 1 when it failed, timed out or \
was cancelled, 2 on bad usage or invalid input.\n\nExamples:\n  forge-host run examples/hello.js\n  \
forge-host run examples/concurrent-calls.js --json --timeout 5s --memory 64MiB\n  \
forge-host run examples/pandas-analysis.py --input examples/data/sales.csv --out out/\n  \
echo 'return 6 * 7' | forge-host run - --lang js\n  \
forge-host run -e 'import forge; forge.result(2 ** 10)' --lang py"
)]
pub struct RunArgs {
    /// The script, or `-` to read it from stdin. A file's extension picks the engine (.js,
    /// .mjs, .cjs: QuickJS; .lua: Lua; .py: CPython, in the smallest profile covering its
    /// imports; `forge-host engines list` shows each profile's packages)
    #[arg(required_unless_present = "eval", conflicts_with = "eval")]
    pub file: Option<PathBuf>,
    /// Run CODE instead of a file, as `node -e` and `python -c` do (needs --lang or --engine)
    #[arg(short = 'e', long = "eval", value_name = "CODE")]
    pub eval: Option<String>,
    /// The language of a script from stdin or -e: js (javascript), py (python) or lua
    #[arg(long, value_name = "LANG")]
    pub lang: Option<Lang>,
    /// Print one JSON object with the result, error, output and metrics
    #[arg(long)]
    pub json: bool,
    /// Run with this engine instead of the one the extension and imports pick: an engine id
    /// (`forge-host engines list`), or a language (`python`: its standard-library profile)
    #[arg(long, value_name = "ID")]
    pub engine: Option<String>,
    #[command(flatten)]
    pub limits: LimitFlags,
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
    #[command(flatten)]
    pub sources: ToolSourceArgs,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub state: StateFlags,
    #[command(flatten)]
    pub insecure: InsecureFlag,
    /// Put a call the policy would deny to a person instead: on a terminal, y/N; without one,
    /// or with --ask=pause, the run pauses there (status paused, APPROVAL_REQUIRED) until
    /// `forge-host resume ID --approve|--deny`
    #[arg(long, value_name = "HOW", num_args = 0..=1, require_equals = true, default_missing_value = "terminal")]
    pub ask: Option<AskMode>,
    /// The package lock a Python script's imports are mounted from (`forge-host packages add
    /// --lock FILE` writes one) [default: the data directory's]
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// What the journal keeps for `forge-host replay`: full (clocks, random bytes and tool
    /// responses, within --max-record), hashes (the sequence only) or off
    #[arg(long, value_name = "MODE", default_value = "full", value_parser = parse_record)]
    pub record: RecordMode,
}

pub(super) fn parse_record(text: &str) -> Result<RecordMode, String> {
    [RecordMode::Full, RecordMode::Hashes, RecordMode::Off]
        .into_iter()
        .find(|mode| mode.as_str() == text)
        .ok_or_else(|| format!("`{text}` is not one of full, hashes, off"))
}

/// How `--ask` puts a call to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AskMode {
    /// On this terminal (y/N); without one, the run pauses.
    Terminal,
    /// The run pauses at the call, to be resumed (`forge-host resume ID --approve|--deny`).
    Pause,
}

/// A script language named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// JavaScript (QuickJS).
    #[value(alias = "javascript")]
    Js,
    /// Python (CPython).
    #[value(alias = "python")]
    Py,
    /// Lua (omnilua).
    Lua,
}

impl Lang {
    fn extension(self) -> &'static str {
        match self {
            Lang::Js => ".js",
            Lang::Py => ".py",
            Lang::Lua => ".lua",
        }
    }
}

/// The session of runs that name none: one per working directory.
pub fn default_session() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let hash = sha256_hex(cwd.as_os_str().as_encoded_bytes());
    format!("dir-{}", &hash[..16])
}

/// Runs `forge-host run`.
pub async fn run(data: &DataDirArgs, args: RunArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let request = request(&args)?;
        let state = args.state.store(args.insecure)?;
        let sources = args
            .sources
            .connect(request.options().limits.max_call_response_bytes)
            .await?;
        let kernel = Kernel::builder(data.resolve()?)
            .tools(sources.registry.clone())
            .state(state)
            .build()
            .await?;
        let on_terminal = args.ask == Some(AskMode::Terminal);
        let report = execute(&kernel, request, args.json, on_terminal).await;
        // The servers end here, before the report is printed.
        drop(sources);
        // The process ends next, and the journal and state are committed: unmapping every
        // compiled component first would only cost time (about a tenth of a Python run's).
        std::mem::forget(kernel);
        report
    }
    .await;
    report_outcome(outcome, args.json)
}

/// Where a script comes from: a file (or `-` for stdin), or `-e CODE`, with `--lang` and
/// `--engine` (`run` and `submit`).
pub(super) struct ScriptArgs<'a> {
    pub file: Option<&'a std::path::Path>,
    pub eval: Option<&'a str>,
    pub lang: Option<Lang>,
    pub engine: Option<&'a str>,
}

impl RunArgs {
    fn script_args(&self) -> ScriptArgs<'_> {
        ScriptArgs {
            file: self.file.as_deref(),
            eval: self.eval.as_deref(),
            lang: self.lang,
            engine: self.engine.as_deref(),
        }
    }
}

/// The script's source and the name it runs under.
/// The script's text and file name; a script over `max_bytes` (`--max-script`) is refused
/// before more of it than that is read.
pub(super) fn script(args: &ScriptArgs<'_>, max_bytes: u64) -> Result<(String, String), Error> {
    let named = |stem: &str| -> Result<String, Error> {
        match (args.lang, &args.engine) {
            (Some(lang), _) => Ok(format!("{stem}{}", lang.extension())),
            (None, Some(_)) => Ok(stem.to_string()),
            (None, None) => Err(Error::invalid_input(format!(
                "a script from {} has no file name to pick its engine by: add --lang js|py|lua, or --engine ID",
                if stem == "eval" { "-e" } else { "stdin" }
            ))),
        }
    };
    if let Some(code) = args.eval {
        check_script_size(code.len() as u64, max_bytes)?;
        return Ok((code.to_string(), named("eval")?));
    }
    let file = args.file.unwrap_or(std::path::Path::new("-"));
    if file == std::path::Path::new("-") {
        let mut source = Vec::new();
        std::io::stdin()
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut source)
            .map_err(|e| Error::invalid_input(format!("cannot read the script from stdin: {e}")))?;
        check_script_size(source.len() as u64, max_bytes)?;
        let source = String::from_utf8(source)
            .map_err(|_| Error::invalid_input("the script on stdin is not UTF-8 text"))?;
        return Ok((source, named("stdin")?));
    }
    let filename = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    if let Some(lang) = args.lang
        && !filename.to_lowercase().ends_with(lang.extension())
    {
        return Err(Error::invalid_input(format!(
            "--lang is for a script from stdin or -e; the extension of {} picks its engine (or use --engine ID)",
            file.display()
        )));
    }
    let unreadable =
        |e: std::io::Error| Error::invalid_input(format!("cannot read {}: {e}", file.display()));
    let mut source = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut source))
        .map_err(unreadable)?;
    check_script_size(source.len() as u64, max_bytes)?;
    let source = String::from_utf8(source)
        .map_err(|_| Error::invalid_input(format!("{} is not UTF-8 text", file.display())))?;
    Ok((source, filename))
}

fn request(args: &RunArgs) -> Result<ExecutionRequest, Error> {
    let limits = args.limits.limits(args.config.as_deref())?;
    let (source, filename) = script(&args.script_args(), limits.max_script_bytes)?;
    let package_lock = args
        .lock
        .as_deref()
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Error::invalid_input(format!("--lock: {e}")))?;
    Ok(ExecutionRequest::builder(source, filename)
        .engine(args.engine.clone())
        .limits(limits)
        .policy(args.gate.policy(args.ask.is_some()))
        .tool_sources(Some(args.sources.recorded()))
        .session(args.session.clone().unwrap_or_else(default_session))
        .inputs(args.inputs.clone())
        .out_dir(args.out.clone())
        .publish_on_error(args.publish_on_error)
        .keep_job(args.keep)
        .record(args.record)
        .package_lock(package_lock)
        .build())
}

/// Runs `request` on `kernel`, cancelled by Ctrl-C, printing events as they happen.
pub(super) async fn execute(
    kernel: &Kernel,
    request: ExecutionRequest,
    json: bool,
    ask_on_terminal: bool,
) -> anyhow::Result<RunReport> {
    let cancel = CancelHandle::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let printer = Printer::new(json);
    let mut request = request
        .into_builder()
        .events(Some(printer.sink()))
        .cancel(Some(cancel));
    if request.options().policy.ask && ask_on_terminal {
        request = request.asker(super::ask::terminal_asker(&printer));
    }
    let report = kernel.run(request.build()).await;
    printer.finish();
    Ok(report?)
}

/// Prints a run's report (or why it could not start) and picks the exit code.
pub(super) fn report_outcome(
    outcome: anyhow::Result<RunReport>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    match outcome {
        Ok(report) => print_report(&report, json),
        Err(error) if json => {
            let (code, message) = match error.downcast_ref::<Error>() {
                Some(error) => (error.code, error.message.clone()),
                None => (ErrorCode::IsolateFailure, format!("{error:#}")),
            };
            out!(
                "{}",
                json!({"status": "failed", "error": {"code": code, "message": message}})
            )?;
            Err(error)
        }
        Err(error) => Err(error),
    }
}

pub(super) fn print_report(report: &RunReport, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        out!("{}", serde_json::to_string(report)?)?;
    } else {
        if let Some(value) = &report.value {
            out!("{value}")?;
        }
        let mut stderr = std::io::stderr().lock();
        if let Some(dir) = &report.out_dir {
            writeln!(
                stderr,
                "published {} file(s) to {dir}",
                report.outputs.len()
            )?;
        }
        if let Some(dir) = &report.job_dir {
            writeln!(stderr, "job folder kept at {dir}")?;
        }
        if let Some(pending) = &report.pending {
            writeln!(
                stderr,
                "paused: the script calls `{}` ({} effect) with {}\n  {}\n  resume it: forge-host resume {} --approve (or --deny)",
                pending.tool,
                pending.effect.as_str(),
                pending.input,
                pending.reason,
                report.id
            )?;
        }
        if let Some(why) = &report.not_replayable {
            writeln!(stderr, "note: this run cannot be replayed: {why}")?;
        }
        if let Some(error) = &report.error {
            writeln!(stderr, "error {}: {}", error.code, error.message)?;
            // Python's message already is its traceback; print a stack only when it adds to it.
            if let Some(stack) = error
                .stack
                .as_deref()
                .filter(|s| !s.trim().is_empty() && !error.message.contains(s.trim()))
            {
                writeln!(stderr, "{}", stack.trim_end())?;
            }
        }
    }
    std::io::stdout().flush()?;
    Ok(if report.succeeded() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
