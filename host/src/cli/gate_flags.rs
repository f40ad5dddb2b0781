//! The permission gate's flags, shared by `run` and `mcp`: effects and name rules.

use forge_host::permissions::Policy;

/// Which tools may run, besides the `read` and `internal` ones.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GateFlags {
    /// Tools whose name matches GLOB run, whatever their effect (`*` any characters, `?` one);
    /// repeatable
    #[arg(long = "allow", value_name = "GLOB")]
    pub allow: Vec<String>,
    /// Tools whose name matches GLOB never run; wins over every allow; repeatable
    #[arg(long = "deny", value_name = "GLOB")]
    pub deny: Vec<String>,
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

impl GateFlags {
    /// The policy these flags say, asking a person (`--ask`) when `ask`.
    pub fn policy(&self, ask: bool) -> Policy {
        Policy {
            allow_write: self.allow_write,
            allow_process: self.allow_process,
            allow_external: self.allow_external,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            ask,
        }
    }
}
