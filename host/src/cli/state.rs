//! `forge-host state list|get|delete`: the shared state of a session, outside any run.

use std::io::Write;
use std::process::ExitCode;

use super::DataDirArgs;
use super::run::default_session;
use forge_host::error::Error;
use forge_host::state::{RedbStateStore, StateStore};

use super::nats_flags::InsecureFlag;
use super::state_flags::StateFlags;

/// `forge-host state`.
#[derive(Debug, clap::Subcommand)]
pub enum StateCommand {
    /// Keys and values of a session
    List {
        /// Session [default: the one of the working directory]
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        #[command(flatten)]
        store: StateFlags,
        #[command(flatten)]
        insecure: InsecureFlag,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// One value, as JSON
    Get {
        /// The key
        key: String,
        /// Session [default: the one of the working directory]
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        #[command(flatten)]
        store: StateFlags,
        #[command(flatten)]
        insecure: InsecureFlag,
    },
    /// Deletes a key (later conflicting runs still see the deletion)
    Delete {
        /// The key
        key: String,
        /// Session [default: the one of the working directory]
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        #[command(flatten)]
        store: StateFlags,
        #[command(flatten)]
        insecure: InsecureFlag,
    },
}

/// Runs `forge-host state ...`.
pub fn run(data: &DataDirArgs, command: StateCommand) -> anyhow::Result<ExitCode> {
    let (flags, insecure) = match &command {
        StateCommand::List {
            store, insecure, ..
        }
        | StateCommand::Get {
            store, insecure, ..
        }
        | StateCommand::Delete {
            store, insecure, ..
        } => (store, *insecure),
    };
    let store: std::sync::Arc<dyn StateStore> = match flags.store(insecure)? {
        Some(store) => store,
        None => std::sync::Arc::new(RedbStateStore::new(data.resolve()?)),
    };
    let storage = |e: forge_host::state::CommitError| Error::from_source(e.code(), e);
    match command {
        StateCommand::List { session, json, .. } => {
            let session = session.unwrap_or_else(default_session);
            let snapshot = store.snapshot(&session).map_err(storage)?;
            let live: serde_json::Map<String, serde_json::Value> = snapshot
                .entries
                .iter()
                .filter_map(|(k, e)| {
                    Some((k.clone(), serde_json::from_str(e.value.as_deref()?).ok()?))
                })
                .collect();
            if json {
                out!("{}", serde_json::Value::Object(live))?;
            } else if live.is_empty() {
                eprintln!("session `{session}` has no state");
            } else {
                for (key, value) in live {
                    out!("{key}\t{value}")?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        StateCommand::Get { key, session, .. } => {
            let session = session.unwrap_or_else(default_session);
            let snapshot = store.snapshot(&session).map_err(storage)?;
            match snapshot.get(&key) {
                Some(value) => {
                    out!("{value}")?;
                    Ok(ExitCode::SUCCESS)
                }
                None => Err(Error::invalid_input(format!(
                    "session `{session}` has no key `{key}`"
                ))
                .into()),
            }
        }
        StateCommand::Delete { key, session, .. } => {
            let session = session.unwrap_or_else(default_session);
            if store.delete_now(&session, &key).map_err(storage)? {
                eprintln!("deleted `{key}` from session `{session}`");
                Ok(ExitCode::SUCCESS)
            } else {
                Err(Error::invalid_input(format!("session `{session}` has no key `{key}`")).into())
            }
        }
    }
}
