//! `--state`: where session state is kept. By default the data directory's journal;
//! `etcd://...` shares it between every forge-host that names the same place, over HTTP or
//! HTTPS, with etcd's users.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::nats_flags::InsecureFlag;
use forge_host::error::Error;
use forge_host::limits::parse_duration;
use forge_host::primitives::Secret;
use forge_host::state::{EtcdAccess, EtcdConfigError, EtcdLocation, EtcdStateStore, StateStore};

/// The password of `--etcd-user`, when no `--etcd-password-file` gives it.
const PASSWORD_VARIABLE: &str = "FORGE_HOST_ETCD_PASSWORD";
/// `--etcd-patience`, also for `resume` and `rerun`.
const PATIENCE_VARIABLE: &str = "FORGE_HOST_ETCD_PATIENCE";

/// Where session state is kept.
#[derive(Clone, Default, clap::Args)]
pub struct StateFlags {
    /// Keep session state in etcd instead of the data directory, shared by every forge-host
    /// that names the same place: etcd://[USER@]ENDPOINT[,ENDPOINT...][/PREFIX], ENDPOINT
    /// [http://|https://]HOST:PORT (PREFIX defaults to forge-host)
    #[arg(
        long = "state",
        value_name = "URL",
        env = "FORGE_HOST_STATE",
        hide_env_values = true
    )]
    pub state: Option<String>,
    /// PEM certificates of the authorities that sign the etcd members' certificates (for
    /// https:// endpoints) [default: the system's]
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_ETCD_CA")]
    pub etcd_ca: Option<PathBuf>,
    /// A client certificate (PEM) for etcd members that verify clients (needs --etcd-key)
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_ETCD_CERT")]
    pub etcd_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM)
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_ETCD_KEY")]
    pub etcd_key: Option<PathBuf>,
    /// The etcd user to authenticate as; its password comes from --etcd-password-file or
    /// FORGE_HOST_ETCD_PASSWORD, never the command line
    #[arg(long, value_name = "NAME", env = "FORGE_HOST_ETCD_USER")]
    pub etcd_user: Option<String>,
    /// A file holding the etcd user's password (one line)
    #[arg(long, value_name = "FILE")]
    pub etcd_password_file: Option<PathBuf>,
    /// How long to keep trying while no etcd member answers (restarting, or cut off) before
    /// giving up with CLUSTER_UNREACHABLE [default: 1m]
    #[arg(long, value_name = "DURATION", env = PATIENCE_VARIABLE, value_parser = parse_duration)]
    pub etcd_patience: Option<Duration>,
}

/// Never shows `--state`: it may hold a password.
impl std::fmt::Debug for StateFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateFlags")
            .field("state", &self.state.as_ref().map(|_| "***"))
            .field("etcd_ca", &self.etcd_ca)
            .field("etcd_cert", &self.etcd_cert)
            .field("etcd_key", &self.etcd_key)
            .field("etcd_user", &self.etcd_user)
            .field("etcd_password_file", &self.etcd_password_file)
            .field("etcd_patience", &self.etcd_patience)
            .finish()
    }
}

impl StateFlags {
    /// The store these flags name; `None` for the data directory's. Refused (INVALID_INPUT)
    /// before etcd is contacted when plain HTTP would leave loopback without `--insecure`;
    /// with it, the warning is printed.
    pub fn store(&self, insecure: InsecureFlag) -> Result<Option<Arc<dyn StateStore>>, Error> {
        let Some(text) = &self.state else {
            return Ok(None);
        };
        let location = EtcdLocation::parse(text).map_err(config)?;
        let access = self.access(&location, insecure)?;
        open(location, &access).map(Some)
    }

    /// The TLS files, user and password these flags give for `location`; the password of
    /// FORGE_HOST_ETCD_PASSWORD when there is a user and no --etcd-password-file.
    fn access(&self, location: &EtcdLocation, insecure: InsecureFlag) -> Result<EtcdAccess, Error> {
        let has_user = self.etcd_user.is_some() || location.user.is_some();
        let password = match &self.etcd_password_file {
            Some(path) => Some(password_file(path)?),
            None if has_user && location.password.is_none() => {
                std::env::var(PASSWORD_VARIABLE).ok().map(Secret::new)
            }
            None => None,
        };
        Ok(EtcdAccess {
            ca: self.etcd_ca.clone(),
            cert: self.etcd_cert.clone(),
            key: self.etcd_key.clone(),
            user: self.etcd_user.clone(),
            password,
            insecure: insecure.insecure,
            patience: self.etcd_patience,
        })
    }

    /// The flags as the environment alone gives them (FORGE_HOST_ETCD_CA, _CERT, _KEY, _USER,
    /// _PASSWORD, _PATIENCE): for `resume` and `rerun`, which take the location from the
    /// journal.
    fn from_env() -> Result<Self, Error> {
        let path = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let etcd_patience = std::env::var(PATIENCE_VARIABLE)
            .ok()
            .map(|text| {
                parse_duration(&text)
                    .map_err(|why| Error::invalid_input(format!("{PATIENCE_VARIABLE}: {why}")))
            })
            .transpose()?;
        Ok(StateFlags {
            state: None,
            etcd_ca: path("FORGE_HOST_ETCD_CA"),
            etcd_cert: path("FORGE_HOST_ETCD_CERT"),
            etcd_key: path("FORGE_HOST_ETCD_KEY"),
            etcd_user: std::env::var("FORGE_HOST_ETCD_USER").ok(),
            etcd_password_file: None,
            etcd_patience,
        })
    }
}

fn config(error: EtcdConfigError) -> Error {
    Error::from_source(error.code(), error)
}

/// The first line of `path`, without its line ending.
fn password_file(path: &Path) -> Result<Secret, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::invalid_input(format!(
            "cannot read --etcd-password-file {}: {e}",
            path.display()
        ))
    })?;
    let line = text.lines().next().unwrap_or_default();
    Ok(Secret::new(line))
}

/// The store of `location`, reached as `access` says; a warning when that is plain HTTP off
/// loopback.
fn open(location: EtcdLocation, access: &EtcdAccess) -> Result<Arc<dyn StateStore>, Error> {
    let store = EtcdStateStore::open(location, access).map_err(config)?;
    if let Some(warning) = store.exposure_warning() {
        eprintln!("forge-host: {warning}");
    }
    Ok(Arc::new(store))
}

/// The store a journaled run used (`state_store` of its record), for `resume` and `rerun`,
/// with the TLS files, user and password of the environment (FORGE_HOST_ETCD_*).
pub fn recorded(
    state_store: Option<&str>,
    insecure: InsecureFlag,
) -> Result<Option<Arc<dyn StateStore>>, Error> {
    state_store
        .map(|text| {
            let location = EtcdLocation::parse(text)
                .map_err(|why| Error::invalid_input(format!("the journal's state store: {why}")))?;
            let access = StateFlags::from_env()?.access(&location, insecure)?;
            open(location, &access)
        })
        .transpose()
}
