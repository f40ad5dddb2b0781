//! The flags of every command that reaches NATS (`worker`, `submit`, `mcp --nats`, `journal list
//! --nats`): the server's URL and how to show who this is and trust who that is; and
//! `--insecure`, once per command, for plain text off loopback (to NATS or etcd).

use std::path::PathBuf;

use forge_host::cluster::{NatsOptions, NatsTarget};
use forge_host::error::Error;

/// Where NATS is and how it is reached.
#[derive(Clone, Default, clap::Args)]
pub struct NatsFlags {
    /// The NATS server with JetStream: nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT], or tls://...
    /// for TLS (the user, password and token percent-encoded). A password or token belongs in
    /// FORGE_HOST_NATS, not on the command line, where `ps` shows it
    #[arg(
        long,
        value_name = "URL",
        env = "FORGE_HOST_NATS",
        hide_env_values = true
    )]
    pub nats: Option<String>,
    /// A NATS credentials file (.creds: a user JWT and its NKey seed)
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
    /// PEM certificates of the authorities that sign the NATS server's certificate (turns TLS
    /// on) [default: the system's]
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_NATS_CA")]
    pub nats_ca: Option<PathBuf>,
    /// A client certificate (PEM) for a NATS server that verifies clients (mutual TLS; needs
    /// --nats-key)
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_NATS_CERT")]
    pub nats_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM)
    #[arg(long, value_name = "FILE", env = "FORGE_HOST_NATS_KEY")]
    pub nats_key: Option<PathBuf>,
    /// How long to keep trying while NATS is away (restarting, or cut off) before giving up
    /// with CLUSTER_UNREACHABLE [default: 1m]
    #[arg(long, value_name = "DURATION", env = "FORGE_HOST_NATS_PATIENCE", value_parser = forge_host::limits::parse_duration)]
    pub nats_patience: Option<std::time::Duration>,
}

/// Never shows the URL: it may hold a password or token.
impl std::fmt::Debug for NatsFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsFlags")
            .field("nats", &self.nats.as_ref().map(|_| "***"))
            .field("nats_creds", &self.nats_creds)
            .field("nats_ca", &self.nats_ca)
            .field("nats_cert", &self.nats_cert)
            .field("nats_key", &self.nats_key)
            .field("nats_patience", &self.nats_patience)
            .finish()
    }
}

/// `--insecure`: plain text to a NATS server or an etcd member that is not on loopback.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct InsecureFlag {
    /// Allow NATS without TLS and etcd over plain HTTP to an address that is not loopback
    /// (everything that travels is then readable and changeable on the way; a warning says
    /// what)
    #[arg(long)]
    pub insecure: bool,
}

/// The URL of a bare `--nats` (in a command where NATS is optional).
const FROM_ENVIRONMENT: &str = "";

/// `--nats` of a command that uses NATS only when asked (`mcp`, `journal list`): FORGE_HOST_NATS
/// alone does not switch it on, but a bare `--nats` takes its URL from there, so that a password
/// in it stays off the command line.
pub fn opt_in(arg: clap::Arg) -> clap::Arg {
    arg.env(None::<&str>)
        .num_args(0..=1)
        .default_missing_value(FROM_ENVIRONMENT)
        .help(
            "Use the NATS server with JetStream of `forge-host worker`: \
nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT], or tls://... for TLS; a bare --nats takes the URL \
from FORGE_HOST_NATS (where a password or token belongs: `ps` shows the command line)",
        )
}

impl NatsFlags {
    /// The target these flags name, `None` without `--nats`; refused (INVALID_INPUT) before
    /// anything is contacted when plain text would leave loopback without `--insecure`, or a
    /// flag does not fit. With `--insecure` off loopback, the warning is printed.
    pub fn target(&self, insecure: InsecureFlag) -> Result<Option<NatsTarget>, Error> {
        let url = match self.nats.as_deref() {
            None => return Ok(None),
            Some(FROM_ENVIRONMENT) => std::env::var("FORGE_HOST_NATS").map_err(|_| {
                Error::invalid_input(
                    "a bare --nats takes the URL from FORGE_HOST_NATS, which is not set",
                )
            })?,
            Some(url) => url.to_string(),
        };
        let target = NatsTarget::new(
            &url,
            NatsOptions {
                creds: self.nats_creds.clone(),
                ca: self.nats_ca.clone(),
                cert: self.nats_cert.clone(),
                key: self.nats_key.clone(),
                insecure: insecure.insecure,
                patience: self.nats_patience,
            },
        )?;
        if let Some(warning) = target.exposure_warning() {
            eprintln!("forge-host: {warning}");
        }
        Ok(Some(target))
    }

    /// [`NatsFlags::target`] for a command that needs one (clap makes `--nats` required there).
    pub fn required(&self, insecure: InsecureFlag) -> Result<NatsTarget, Error> {
        self.target(insecure)?
            .ok_or_else(|| Error::invalid_input("--nats URL (or FORGE_HOST_NATS) is required"))
    }
}
