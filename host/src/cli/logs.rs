//! `forge-host logs ID [-f]`: the live task log of an execution.

use std::io::{Read, Seek, SeekFrom, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::DataDirArgs;
use forge_host::error::Error;
use forge_host::journal::Journal;

/// Arguments of `forge-host logs`.
#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// Execution id
    pub id: String,
    /// Keep printing what the execution writes until it ends
    #[arg(short, long)]
    pub follow: bool,
}

/// How often `-f` looks for more.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// Runs `forge-host logs`.
pub fn run(data: &DataDirArgs, args: LogsArgs) -> anyhow::Result<ExitCode> {
    let dir = data.resolve()?;
    let journal = Journal::open(&dir).map_err(Error::from)?;
    journal.get(&args.id).map_err(Error::from)?;
    let path = dir.log_path(&args.id);
    let mut file = std::fs::File::open(&path).map_err(|e| {
        Error::invalid_input(format!(
            "no log for `{}` ({}): {e}",
            args.id,
            path.display()
        ))
    })?;
    let mut stdout = std::io::stdout().lock();
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        file.read_to_end(&mut buffer)?;
        stdout.write_all(&buffer)?;
        stdout.flush()?;
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
        if journal
            .get(&args.id)
            .map_err(Error::from)?
            .status
            .is_terminal()
        {
            // One last read: what was written before the close.
            buffer.clear();
            file.read_to_end(&mut buffer)?;
            stdout.write_all(&buffer)?;
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(FOLLOW_POLL);
        let position = file.stream_position()?;
        file.seek(SeekFrom::Start(position))?;
    }
}
