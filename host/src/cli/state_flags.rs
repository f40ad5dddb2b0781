//! `--state`: where session state is kept (SPEC §6). By default the data directory's journal;
//! `etcd://...` shares it between every forge-host that names the same place.

use std::sync::Arc;

use forge_host::error::{Error, ErrorCode};
use forge_host::state::{EtcdLocation, EtcdStateStore, StateStore};

/// Where session state is kept.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StateFlags {
    /// Keep session state in etcd instead of the data directory, shared by every forge-host
    /// that names the same place: etcd://HOST:PORT[,HOST:PORT...][/PREFIX] (PREFIX defaults to
    /// forge-host)
    #[arg(long = "state", value_name = "URL", value_parser = EtcdLocation::parse, env = "FORGE_HOST_STATE")]
    pub state: Option<EtcdLocation>,
}

impl StateFlags {
    /// The store these flags name; `None` for the data directory's.
    pub fn store(&self) -> Result<Option<Arc<dyn StateStore>>, Error> {
        self.state
            .as_ref()
            .map(|location| open(location.clone()))
            .transpose()
    }
}

/// The store of `location`.
pub fn open(location: EtcdLocation) -> Result<Arc<dyn StateStore>, Error> {
    let store = EtcdStateStore::new(location)
        .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
    Ok(Arc::new(store))
}

/// The store a journaled run used (`state_store` of its record), for `resume` and `rerun`.
pub fn recorded(state_store: Option<&str>) -> Result<Option<Arc<dyn StateStore>>, Error> {
    state_store
        .map(|text| {
            let location = EtcdLocation::parse(text)
                .map_err(|why| Error::invalid_input(format!("the journal's state store: {why}")))?;
            open(location)
        })
        .transpose()
}
