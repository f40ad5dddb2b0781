//! `forge-host journal list|show`: what ran, how it ended, and its nested calls.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::DataDirArgs;
use super::nats_flags::{InsecureFlag, NatsFlags};
use forge_host::error::Error;
use forge_host::journal::{ExecutionRecord, ExecutionState, Journal, ListFilter};

/// `forge-host journal`.
#[derive(Debug, clap::Subcommand)]
pub enum JournalCommand {
    /// Executions, most recent first
    #[command(mut_arg("nats", super::nats_flags::opt_in))]
    List {
        /// Only this session
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        /// Only this status
        #[arg(long, value_name = "STATUS", value_parser = status_parser())]
        status: Option<ExecutionState>,
        /// At most this many
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
        /// One JSON array
        #[arg(long)]
        json: bool,
        // --nats: the merged journal of the workers of a NATS server (`forge-host worker`)
        // instead of this data directory's; each record names its `worker`.
        #[command(flatten)]
        nats: NatsFlags,
        #[command(flatten)]
        insecure: InsecureFlag,
    },
    /// One execution and its nested calls
    Show {
        /// Execution id
        id: String,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Removes the replay records of executions older than DURATION, and the tool responses
    /// only they kept; the executions stay in the journal
    Prune {
        /// How old a run's replay record may get (30s, 12h, 7d)
        #[arg(long, value_name = "DURATION", value_parser = parse_age)]
        older_than: std::time::Duration,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
}

/// A duration as `run --timeout` takes it, or in days (`7d`).
fn parse_age(text: &str) -> Result<std::time::Duration, String> {
    if let Some(days) = text.strip_suffix('d') {
        let days: u64 = days
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a duration (30s, 12h, 7d)"))?;
        return Ok(std::time::Duration::from_secs(days.saturating_mul(86_400)));
    }
    forge_host::limits::parse_duration(text)
}

/// `--status`: the states of [`ExecutionState::ALL`], which `--help` lists.
fn status_parser() -> impl clap::builder::TypedValueParser<Value = ExecutionState> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(ExecutionState::ALL.map(ExecutionState::as_str))
        .try_map(|text| {
            ExecutionState::parse(&text).ok_or_else(|| format!("unknown status `{text}`"))
        })
}

fn line(record: &ExecutionRecord) -> String {
    let outcome = match (&record.error_code, &record.reason) {
        (Some(code), Some(reason)) => format!("{code} ({reason})"),
        (Some(code), None) => code.to_string(),
        _ => String::new(),
    };
    let wall = record
        .metrics
        .as_ref()
        .map(|m| format!("{}ms", m.wall_ms))
        .unwrap_or_default();
    format!(
        "{}  {}  {:<10} {:<20} {:<18} {:<16} {:>8}  {}",
        record.id,
        record.started_at,
        record.status.as_str(),
        record.engine,
        record.script,
        record.session,
        wall,
        outcome
    )
}

/// Runs `forge-host journal ...`.
pub async fn run(data: &DataDirArgs, command: JournalCommand) -> anyhow::Result<ExitCode> {
    let dir = data.resolve()?;
    let journal = Journal::open(&dir).map_err(Error::from)?;
    match command {
        JournalCommand::Prune { older_than, json } => prune(&journal, &dir, older_than, json)?,
        JournalCommand::List {
            session,
            status,
            limit,
            json,
            nats,
            insecure,
        } if nats.nats.is_some() => {
            let filter = ListFilter {
                session,
                status,
                limit: Some(limit),
            };
            list_merged(nats.required(insecure)?, &filter, json).await?;
        }
        JournalCommand::List {
            session,
            status,
            limit,
            json,
            ..
        } => {
            let filter = ListFilter {
                session,
                status,
                limit: Some(limit),
            };
            list(&journal, &filter, json)?;
        }
        JournalCommand::Show { id, json } => show(&journal, &id, json)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `journal prune`.
fn prune(
    journal: &Journal,
    dir: &forge_host::DataDir,
    older_than: std::time::Duration,
    json: bool,
) -> anyhow::Result<()> {
    let blobs = forge_host::journal::Blobs::new(dir.blob_dir());
    let pruned = journal
        .prune_tapes(older_than, &blobs)
        .map_err(Error::from)?;
    // The files MCP runs published go with their tapes.
    let published = forge_host::files::published::prune(dir, journal, older_than)?;
    if json {
        let mut text = serde_json::to_value(&pruned)?;
        text["published"] = published.into();
        out!("{text}")?;
    } else {
        out!(
            "removed {} replay records, {} tool responses and {published} folders of published \
files; {} replay records kept",
            pruned.tapes,
            pruned.blobs,
            pruned.kept
        )?;
    }
    Ok(())
}

/// `journal list --nats`: the workers' merged journal.
async fn list_merged(
    target: forge_host::cluster::NatsTarget,
    filter: &ListFilter,
    json: bool,
) -> anyhow::Result<()> {
    let (session, status, limit) = (
        &filter.session,
        filter.status,
        filter.limit.unwrap_or(usize::MAX),
    );
    let cluster = forge_host::cluster::Cluster::connect(
        &target,
        &forge_host::cluster::QueueOptions::default(),
    )
    .await?;
    let entries: Vec<_> = cluster
        .journal()
        .await?
        .into_iter()
        .filter(|e| session.as_ref().is_none_or(|s| *s == e.record.session))
        .filter(|e| status.is_none_or(|s| s == e.record.status))
        .take(limit)
        .collect();
    if json {
        // Each record as `journal list --json` shows it, with where it ran.
        let merged: Vec<serde_json::Value> = entries
            .iter()
            .map(|entry| {
                let mut value = serde_json::to_value(&entry.record).unwrap_or_default();
                if let serde_json::Value::Object(fields) = &mut value {
                    fields.insert("worker".into(), serde_json::json!(entry.worker));
                    fields.insert("run".into(), serde_json::json!(entry.run));
                    fields.insert("attempt".into(), serde_json::json!(entry.attempt));
                }
                value
            })
            .collect();
        out!("{}", serde_json::to_string(&merged)?)?;
    } else if entries.is_empty() {
        eprintln!("no executions");
    } else {
        for entry in &entries {
            out!("{}\t{}", entry.worker, line(&entry.record))?;
        }
    }
    Ok(())
}

/// `journal list`: this data directory's journal.
fn list(journal: &Journal, filter: &ListFilter, json: bool) -> anyhow::Result<()> {
    let records = journal.list(filter).map_err(Error::from)?;
    if json {
        out!("{}", serde_json::to_string(&records)?)?;
    } else if records.is_empty() {
        eprintln!("no executions");
    } else {
        for record in &records {
            out!("{}", line(record))?;
        }
    }
    Ok(())
}

/// `journal show ID`.
fn show(journal: &Journal, id: &str, json: bool) -> anyhow::Result<()> {
    let record = journal.get(id).map_err(Error::from)?;
    let calls = journal.calls(id).map_err(Error::from)?;
    if json {
        // The execution's fields, and its calls (each naming its execution).
        let mut shown = serde_json::to_value(&record)?;
        let calls: Vec<serde_json::Value> = calls
            .iter()
            .map(|call| {
                let mut value = serde_json::to_value(call).unwrap_or_default();
                if let Some(fields) = value.as_object_mut() {
                    fields.insert("execution_id".into(), json!(record.id));
                }
                value
            })
            .collect();
        if let Some(fields) = shown.as_object_mut() {
            fields.insert("calls".into(), json!(calls));
        }
        out!("{shown}")?;
        return Ok(());
    }
    show_text(&record, &calls)
}

/// `journal show ID` for a person.
fn show_text(
    record: &ExecutionRecord,
    calls: &[forge_host::journal::CallRecord],
) -> anyhow::Result<()> {
    out!("{}", line(record))?;
    out!(
        "  script   {} (sha256 {})",
        record.script,
        record.script_sha256
    )?;
    out!(
        "  engine   {} (sha256 {})",
        record.engine,
        record.engine_sha256
    )?;
    for input in &record.inputs {
        out!(
            "  input    {} {} bytes sha256 {}",
            input.name,
            input.size,
            input.sha256
        )?;
    }
    for package in &record.packages {
        out!(
            "  package  {} {} sha256 {}",
            package.name,
            package.version,
            package.sha256
        )?;
    }
    if let Some(lock) = &record.package_lock {
        out!("  lock     {lock}")?;
    }
    if let Some(message) = &record.error_message {
        let first = message.lines().last().unwrap_or_default();
        out!("  error    {first}")?;
    }
    let limits: Vec<String> = record
        .limits()
        .describe()
        .into_iter()
        .map(|(flag, value)| format!("{flag} {value}"))
        .collect();
    out!("  limits   {}", limits.join(", "))?;
    let steps: Vec<String> = record
        .steps
        .iter()
        .map(|s| format!("{} {}", s.state.as_str(), s.at))
        .collect();
    out!("  steps    {}", steps.join(" -> "))?;
    if let Some(dir) = &record.out_dir {
        out!("  outputs  {} file(s) in {dir}", record.outputs.len())?;
    }
    for call in calls {
        let code = call.error_code.map(|c| format!(" {c}")).unwrap_or_default();
        let duration = call
            .duration_ms
            .map(|d| format!(" {d}ms"))
            .unwrap_or_default();
        let paths = if call.paths.is_empty() {
            String::new()
        } else {
            format!(" paths {}", call.paths.join(","))
        };
        out!(
            "  call {:>3} {} [{}] input sha256 {} {}{code}{duration}{paths}",
            call.position,
            call.tool,
            call.effect.as_str(),
            call.input_sha256,
            call.status.as_str()
        )?;
    }
    Ok(())
}
