//! The permission gate (SPEC §8): `read` and `internal` tools always run; `write`, `process` and
//! `external` run only when the policy allows their effect. A call from a script gets exactly the
//! decision a direct call would get, because both go through [`Policy::decide`].

use serde::{Deserialize, Serialize};

/// What a tool may do to the world outside the execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Reads data; always allowed.
    Read,
    /// Changes files or data; needs `--allow-write`.
    Write,
    /// Starts processes; needs `--allow-process`.
    Process,
    /// Reaches other systems; needs `--allow-external`.
    External,
    /// Stays inside forge-host; always allowed.
    Internal,
}

impl Effect {
    /// The effect's wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Process => "process",
            Effect::External => "external",
            Effect::Internal => "internal",
        }
    }
}

/// Which effects the caller allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `--allow-write`.
    pub allow_write: bool,
    /// `--allow-process`.
    pub allow_process: bool,
    /// `--allow-external`.
    pub allow_external: bool,
}

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may run.
    Allow,
    /// The call is refused (`TOOL_DENIED`), with the reason.
    Deny(String),
}

impl Policy {
    /// A policy that allows every effect.
    pub fn allow_all() -> Self {
        Policy {
            allow_write: true,
            allow_process: true,
            allow_external: true,
        }
    }

    /// Decides whether a tool with `effect` may run.
    pub fn decide(&self, effect: Effect) -> Decision {
        let (allowed, flag) = match effect {
            Effect::Read | Effect::Internal => return Decision::Allow,
            Effect::Write => (self.allow_write, "--allow-write"),
            Effect::Process => (self.allow_process, "--allow-process"),
            Effect::External => (self.allow_external, "--allow-external"),
        };
        if allowed {
            Decision::Allow
        } else {
            Decision::Deny(format!(
                "tools with the `{}` effect are not allowed (pass {flag} to allow them)",
                effect.as_str()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_and_internal_always_run_and_the_rest_need_a_flag() {
        let closed = Policy::default();
        assert_eq!(closed.decide(Effect::Read), Decision::Allow);
        assert_eq!(closed.decide(Effect::Internal), Decision::Allow);
        for effect in [Effect::Write, Effect::Process, Effect::External] {
            assert!(
                matches!(closed.decide(effect), Decision::Deny(_)),
                "{effect:?}"
            );
            assert_eq!(Policy::allow_all().decide(effect), Decision::Allow);
        }
        let only_write = Policy {
            allow_write: true,
            ..Policy::default()
        };
        assert_eq!(only_write.decide(Effect::Write), Decision::Allow);
        assert!(matches!(
            only_write.decide(Effect::External),
            Decision::Deny(_)
        ));
    }
}
