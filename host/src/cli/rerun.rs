//! `forge-host rerun ID`: the same script, engine, limits, session and inputs as an earlier run,
//! refused when an input no longer has the sha256 it had.

use std::path::PathBuf;
use std::process::ExitCode;

use super::DataDirArgs;
use super::run::{execute_request, report_outcome};
use crate::journal::Journal;
use crate::kernel::ExecutionRequest;

/// Arguments of `forge-host rerun`.
#[derive(Debug, clap::Args)]
pub struct RerunArgs {
    /// The execution to run again
    pub id: String,
    /// Print one JSON object with the result, error, output and metrics
    #[arg(long)]
    pub json: bool,
    /// Where /output is published [default: ./forge-out/<new-run-id>/]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `forge-host rerun`.
pub async fn run(data: &DataDirArgs, args: RerunArgs) -> anyhow::Result<ExitCode> {
    let outcome = async {
        let dir = data.resolve()?;
        let record = Journal::open(&dir)?.get(&args.id)?;
        let source = dir.script(&record.script_sha256)?;
        let request = ExecutionRequest {
            engine: Some(record.engine.clone()),
            limits: record.limits(),
            policy: record.policy,
            session: record.session.clone(),
            inputs: record
                .inputs
                .iter()
                .map(|i| top_level(&i.source, &i.name))
                .collect::<Vec<_>>()
                .into_iter()
                .fold(Vec::new(), |mut all, p| {
                    if !all.contains(&p) {
                        all.push(p);
                    }
                    all
                }),
            out_dir: args.out.clone(),
            expected_inputs: Some(
                record
                    .inputs
                    .iter()
                    .map(|i| (i.name.clone(), i.sha256.clone()))
                    .collect(),
            ),
            ..ExecutionRequest::new(source, record.script.clone())
        };
        execute_request(data, request, args.json).await
    }
    .await;
    report_outcome(outcome, args.json)
}

/// The path the caller passed for an input: a file inside a folder input was copied as
/// `folder/sub/file`, so its folder is the source's ancestor as deep as the name.
fn top_level(source: &str, name: &str) -> PathBuf {
    let mut path = PathBuf::from(source);
    for _ in 1..name.split('/').count() {
        path.pop();
    }
    path
}

#[cfg(test)]
mod tests {
    use super::top_level;

    #[test]
    fn a_file_in_a_folder_input_leads_back_to_the_folder() {
        assert_eq!(
            top_level("/data/sales.csv", "sales.csv"),
            std::path::PathBuf::from("/data/sales.csv")
        );
        assert_eq!(
            top_level("/d/set/sub/b.txt", "set/sub/b.txt"),
            std::path::PathBuf::from("/d/set")
        );
    }
}
