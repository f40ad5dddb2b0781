//! The `run` flags of every limit, made from the library's limits table: one flag per entry,
//! with its value name, default and help line, and parsed by the entry's own parser. Which
//! flags were typed is kept, so that they (and only they) override a `--config` file.

use std::path::Path;

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use forge_host::error::Error;
use forge_host::limits::{LIMITS, LimitSpec, LimitValue, Limits, apply_config_file};

/// The limit flags as typed on the command line.
#[derive(Debug, Clone, Default)]
pub struct LimitFlags {
    /// Every limit flag typed, with its value.
    typed: Vec<(&'static LimitSpec, LimitValue)>,
}

impl LimitFlags {
    /// The limits: defaults, then a `--config` file's, then the flags typed on the command line.
    pub fn limits(&self, config: Option<&Path>) -> Result<Limits, Error> {
        let mut limits = Limits::default();
        if let Some(path) = config {
            let text = std::fs::read(path).map_err(|e| {
                Error::invalid_input(format!("cannot read {}: {e}", path.display()))
            })?;
            apply_config_file(&mut limits, &path.display().to_string(), &text)?;
        }
        for (spec, value) in &self.typed {
            (spec.set)(&mut limits, *value);
        }
        Ok(limits)
    }
}

impl FromArgMatches for LimitFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = LimitFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.typed.clear();
        for spec in LIMITS {
            if matches.value_source(spec.flag) != Some(ValueSource::CommandLine) {
                continue;
            }
            if let Some(value) = matches.get_one::<LimitValue>(spec.flag) {
                self.typed.push((spec, *value));
            }
        }
        Ok(())
    }
}

impl Args for LimitFlags {
    fn augment_args(command: Command) -> Command {
        LIMITS.iter().fold(command, |command, spec| {
            let mut arg = Arg::new(spec.flag)
                .long(spec.flag)
                .value_name(spec.kind.value_name())
                .help(spec.help)
                .value_parser(move |text: &str| spec.parse(text));
            if let Some(default) = spec.default_text() {
                arg = arg.default_value(default);
            }
            command.arg(arg)
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        limits: LimitFlags,
    }

    #[test]
    fn every_limit_is_a_flag_and_typed_flags_override_a_config_file() {
        let parsed = Probe::try_parse_from(["probe", "--memory", "64MiB", "--timeout", "2s"])
            .expect("parses");
        let limits = parsed.limits.limits(None).expect("limits");
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(limits.timeout, Duration::from_secs(2));
        assert_eq!(limits.max_tool_calls, Limits::default().max_tool_calls);

        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("limits.json");
        std::fs::write(&config, r#"{"memory": "32MiB", "max-tool-calls": 7}"#).expect("write");
        let limits = parsed.limits.limits(Some(&config)).expect("limits");
        assert_eq!(limits.memory_bytes, 64 << 20, "the typed flag wins");
        assert_eq!(limits.max_tool_calls, 7, "the file beats a default");

        for spec in LIMITS {
            let help = Probe::try_parse_from(["probe", &format!("--{}", spec.flag), "1"]);
            assert!(help.is_ok(), "--{} exists and takes a value", spec.flag);
        }
        let bad = Probe::try_parse_from(["probe", "--memory", "lots"]);
        assert!(bad.is_err());
    }
}
