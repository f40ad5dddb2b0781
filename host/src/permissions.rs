//! The permission gate: `read` and `internal` tools always run; `write`, `process` and
//! `external` run only when the policy allows their effect. A call from a script gets exactly the
//! decision a direct call would get, because both go through [`Policy::decide`].

use std::sync::Arc;

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

/// Which tools the caller allows: by effect (`--allow-write`, ...), by name (`--allow GLOB`,
/// `--deny GLOB`), and whether a call the policy would deny is put to a person (`--ask`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `--allow-write`.
    pub allow_write: bool,
    /// `--allow-process`.
    pub allow_process: bool,
    /// `--allow-external`.
    pub allow_external: bool,
    /// `--allow GLOB`: tools whose name matches run, whatever their effect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// `--deny GLOB`: tools whose name matches never run; a deny rule wins over every allow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// `--ask`: a call the effect flags would deny is put to a person instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask: bool,
}

/// A person's answer to a paused run's pending call (`resume --approve|--deny`): it applies to
/// the first call of that tool with that input which the policy would put to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The tool.
    pub tool: String,
    /// sha256 of the input text.
    pub input_sha256: String,
    /// Approved, or denied.
    pub approve: bool,
}

/// The gate's answer for one call, with why: the journal keeps the reason of every decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may run.
    Allow(String),
    /// The call is refused (`TOOL_DENIED`).
    Deny(String),
    /// A person decides (`--ask`); the reason says what would deny it otherwise.
    Ask(String),
}

impl Decision {
    /// Why.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow(reason) | Decision::Deny(reason) | Decision::Ask(reason) => reason,
        }
    }
}

/// A call the policy would deny, put to a person (`--ask`).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The tool.
    pub tool: String,
    /// Its effect.
    pub effect: Effect,
    /// What would deny it.
    pub reason: String,
    /// The call's input.
    pub input: serde_json::Value,
}

/// Answers [`Question`]s: `true` lets the call run. It may block (a terminal prompt): the host
/// asks it off the async threads, one question at a time.
pub type Asker = Arc<dyn Fn(&Question) -> bool + Send + Sync>;

impl Policy {
    /// What this policy and `ceiling` both allow: an effect flag only where both give it, every
    /// deny rule of either, the allow rules both have, and no asking (a worker has nobody to
    /// ask). A worker runs a submitted request with this, its own flags being the ceiling.
    pub fn within(&self, ceiling: &Policy) -> Policy {
        let mut deny = ceiling.deny.clone();
        deny.extend(
            self.deny
                .iter()
                .filter(|g| !ceiling.deny.contains(g))
                .cloned(),
        );
        Policy {
            allow_write: self.allow_write && ceiling.allow_write,
            allow_process: self.allow_process && ceiling.allow_process,
            allow_external: self.allow_external && ceiling.allow_external,
            allow: self
                .allow
                .iter()
                .filter(|g| ceiling.allow.contains(g))
                .cloned()
                .collect(),
            deny,
            ask: false,
        }
    }

    /// A policy that allows every effect.
    pub fn allow_all() -> Self {
        Policy {
            allow_write: true,
            allow_process: true,
            allow_external: true,
            ..Policy::default()
        }
    }

    /// Decides whether the tool `name`, with `effect`, may run. In order: a matching `--deny`
    /// rule denies; a matching `--allow` rule allows; `read` and `internal` tools run; other
    /// effects run when their flag is given; otherwise the call is asked about (`--ask`) or
    /// denied.
    pub fn decide(&self, name: &str, effect: Effect) -> Decision {
        if let Some(rule) = self.deny.iter().find(|rule| glob_matches(rule, name)) {
            return Decision::Deny(format!("the rule --deny '{rule}' matches `{name}`"));
        }
        if let Some(rule) = self.allow.iter().find(|rule| glob_matches(rule, name)) {
            return Decision::Allow(format!("the rule --allow '{rule}' matches `{name}`"));
        }
        let (allowed, flag) = match effect {
            Effect::Read | Effect::Internal => {
                return Decision::Allow(format!(
                    "tools with the `{}` effect always run",
                    effect.as_str()
                ));
            }
            Effect::Write => (self.allow_write, "--allow-write"),
            Effect::Process => (self.allow_process, "--allow-process"),
            Effect::External => (self.allow_external, "--allow-external"),
        };
        if allowed {
            return Decision::Allow(format!("{flag} allows the `{}` effect", effect.as_str()));
        }
        let why = format!(
            "tools with the `{}` effect are not allowed (pass {flag} to allow them)",
            effect.as_str()
        );
        if self.ask {
            Decision::Ask(why)
        } else {
            Decision::Deny(why)
        }
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (dots included)
/// and `?` for one character.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Classic two-pointer wildcard matching with one backtrack point.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(c) if *c == '?' || *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(decision: Decision) -> bool {
        matches!(decision, Decision::Allow(_))
    }

    #[test]
    fn read_and_internal_always_run_and_the_rest_need_a_flag() {
        let closed = Policy::default();
        assert!(allowed(closed.decide("t", Effect::Read)));
        assert!(allowed(closed.decide("t", Effect::Internal)));
        for effect in [Effect::Write, Effect::Process, Effect::External] {
            assert!(
                matches!(closed.decide("t", effect), Decision::Deny(_)),
                "{effect:?}"
            );
            assert!(allowed(Policy::allow_all().decide("t", effect)));
        }
        let only_write = Policy {
            allow_write: true,
            ..Policy::default()
        };
        assert!(allowed(only_write.decide("t", Effect::Write)));
        assert!(matches!(
            only_write.decide("t", Effect::External),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn rules_by_name_come_first_and_deny_wins() {
        let policy = Policy {
            allow: vec!["fs.read_*".into(), "workspace.*".into()],
            deny: vec!["workspace.delete".into()],
            ..Policy::default()
        };
        assert!(allowed(
            policy.decide("fs.read_text_file", Effect::External)
        ));
        assert!(allowed(policy.decide("workspace.write", Effect::Write)));
        let denied = policy.decide("workspace.delete", Effect::Write);
        assert_eq!(
            denied,
            Decision::Deny("the rule --deny 'workspace.delete' matches `workspace.delete`".into())
        );
        assert!(matches!(
            policy.decide("fs.write_file", Effect::Write),
            Decision::Deny(_)
        ));
        let asking = Policy {
            ask: true,
            deny: vec!["never".into()],
            ..Policy::default()
        };
        assert!(matches!(
            asking.decide("w", Effect::Write),
            Decision::Ask(_)
        ));
        assert!(
            matches!(asking.decide("never", Effect::Read), Decision::Deny(_)),
            "an explicit deny rule is not asked about"
        );
    }

    #[test]
    fn globs_match_whole_names() {
        for (pattern, name, expected) in [
            ("fs.*", "fs.read", true),
            ("fs.*", "fsx.read", false),
            ("*", "anything.at.all", true),
            ("*.read*", "fs.read_text", true),
            ("a?c", "abc", true),
            ("a?c", "abbc", false),
            ("echo", "echo", true),
            ("echo", "echo2", false),
            ("*x", "xx", true),
            ("", "", true),
        ] {
            assert_eq!(glob_matches(pattern, name), expected, "{pattern} ~ {name}");
        }
    }
}
