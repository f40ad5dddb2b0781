//! pip as the fetching client. Which index it reads, its proxies, certificates and credentials
//! are the user's own pip configuration (`pip.conf`, `PIP_*` variables): no index host appears
//! here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::FetchError;
use crate::lock::{PYTHON_ABI, PYTHON_VERSION};

/// The variable that names the pip command (split on spaces), `python3 -m pip` by default.
pub const PIP_VARIABLE: &str = "FORGE_HOST_PIP";

/// Platforms whose wheels mark a project as native code when it has no pure wheel.
const NATIVE_PLATFORMS: [&str; 8] = [
    "manylinux_2_17_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_17_aarch64",
    "musllinux_1_2_x86_64",
    "macosx_11_0_arm64",
    "macosx_10_13_x86_64",
    "win_amd64",
    "linux_x86_64",
];

/// How pip is run.
#[derive(Debug, Clone)]
pub struct Pip {
    program: Vec<String>,
}

/// Why a download failed, as far as pip's output tells.
#[derive(Debug)]
pub enum DownloadFailure {
    /// pip found no file it may use for this requirement (of this project, when pip says).
    NoMatch {
        /// The requirement.
        requirement: String,
        /// The project that needs it, when pip says.
        needed_by: Option<String>,
        /// The end of pip's output.
        output: String,
    },
    /// Anything else (the index unreachable, a hash pip refused, a cut download).
    Other {
        /// The end of pip's output.
        output: String,
    },
}

impl Default for Pip {
    fn default() -> Self {
        Self::from_env()
    }
}

impl Pip {
    /// `$FORGE_HOST_PIP`, else `python3 -m pip`.
    pub fn from_env() -> Self {
        let program = std::env::var(PIP_VARIABLE)
            .ok()
            .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| vec!["python3".into(), "-m".into(), "pip".into()]);
        Pip { program }
    }

    /// pip run with these arguments: its combined output, or the failure.
    fn run(&self, args: &[&str]) -> Result<Result<String, String>, FetchError> {
        self.run_with(args, &[])
    }

    /// [`Pip::run`] with these environment variables set.
    fn run_with(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Result<String, String>, FetchError> {
        let mut command = Command::new(&self.program[0]);
        command.envs(env.iter().copied());
        // The subcommand, then the options every call shares, then its own (which may end
        // with `--` and requirements).
        let (subcommand, rest) = args.split_first().unwrap_or((&"--version", &[]));
        command
            .args(&self.program[1..])
            .arg(subcommand)
            .args([
                "--disable-pip-version-check",
                "--no-input",
                "--progress-bar",
                "off",
            ])
            .args(rest);
        let output = command.output().map_err(|source| FetchError::PipMissing {
            command: self.program.join(" "),
            source,
        })?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(if output.status.success() {
            Ok(text)
        } else {
            Err(text)
        })
    }

    /// Downloads pure-Python wheels for the engines' CPython of `specs` and their dependencies into
    /// `dir`, also looking in `find_links` (wheels built here from source).
    pub fn download_pure(
        &self,
        specs: &[String],
        dir: &Path,
        find_links: Option<&Path>,
        no_deps: bool,
    ) -> Result<Result<(), DownloadFailure>, FetchError> {
        let dir_text = dir.to_string_lossy();
        let mut args = vec![
            "download",
            "--only-binary=:all:",
            "--platform",
            "any",
            "--implementation",
            "cp",
            "--abi",
            "none",
            "--python-version",
            PYTHON_VERSION,
            "--dest",
            &dir_text,
        ];
        let links = find_links.map(|l| l.to_string_lossy().into_owned());
        if let Some(links) = &links {
            args.extend(["--find-links", links.as_str()]);
        }
        if no_deps {
            args.push("--no-deps");
        }
        args.push("--");
        args.extend(specs.iter().map(String::as_str));
        Ok(self.run(&args)?.map(|_| ()).map_err(classify))
    }

    /// Whether `requirement` has a wheel for the engines' CPython on a common native platform (so it has
    /// native code, when it has no pure one).
    pub fn has_platform_wheel(
        &self,
        requirement: &str,
        scratch: &Path,
    ) -> Result<bool, FetchError> {
        let dir = scratch.to_string_lossy();
        let mut args = vec![
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--implementation",
            "cp",
            "--python-version",
            PYTHON_VERSION,
        ];
        for abi in [PYTHON_ABI, "abi3", "none"] {
            args.extend(["--abi", abi]);
        }
        for platform in NATIVE_PLATFORMS {
            args.extend(["--platform", platform]);
        }
        args.extend(["--dest", &dir, "--", requirement]);
        Ok(self.run(&args)?.is_ok())
    }

    /// Downloads `requirement`'s source distribution and builds a wheel from it, in `out`. The
    /// wheel's tags then say whether it is pure Python.
    pub fn build_from_source(
        &self,
        requirement: &str,
        scratch: &Path,
        out: &Path,
    ) -> Result<Result<PathBuf, String>, FetchError> {
        let sdists = scratch.join("sdist");
        let sdist_dir = sdists.to_string_lossy();
        if let Err(output) = self.run(&[
            "download",
            "--no-deps",
            "--no-binary=:all:",
            "--dest",
            &sdist_dir,
            "--",
            requirement,
        ])? {
            return Ok(Err(tail(&output)));
        }
        let Some(sdist) = files_in(&sdists)?.into_iter().next() else {
            return Ok(Err("pip downloaded no source distribution".into()));
        };
        let built = scratch.join("built");
        let built_dir = built.to_string_lossy();
        // No C compiler: what it would build is for this machine, not the sandbox. A project
        // with optional speedups (MarkupSafe) then builds its pure-Python fallback; one that
        // needs C fails here.
        let no_compiler = [("CC", "false"), ("CXX", "false"), ("LDSHARED", "false")];
        if let Err(output) = self.run_with(
            &[
                "wheel",
                "--no-deps",
                "--wheel-dir",
                &built_dir,
                &sdist.to_string_lossy(),
            ],
            &no_compiler,
        )? {
            return Ok(Err(tail(&output)));
        }
        let Some(wheel) = files_in(&built)?
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "whl"))
        else {
            return Ok(Err("pip built no wheel".into()));
        };
        let target = out.join(wheel.file_name().unwrap_or_default());
        std::fs::create_dir_all(out).map_err(|e| FetchError::io("create", out, e))?;
        std::fs::rename(&wheel, &target).map_err(|e| FetchError::io("move", &wheel, e))?;
        Ok(Ok(target))
    }
}

/// The files of a folder (none if it does not exist), sorted.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>, FetchError> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => return Err(FetchError::io("list", dir, source)),
    };
    files.sort();
    Ok(files)
}

/// The last lines of pip's output, which say what went wrong.
pub fn tail(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

fn classify(output: String) -> DownloadFailure {
    const NO_MATCH: &str = "No matching distribution found for ";
    const DEPENDS_ON: &str = " depends on ";
    if let Some(requirement) = output
        .lines()
        .find_map(|l| l.split_once(NO_MATCH).map(|(_, r)| r.trim().to_string()))
    {
        let needed_by = needed_by(&output, &requirement);
        return DownloadFailure::NoMatch {
            requirement,
            needed_by,
            output: tail(&output),
        };
    }
    // The resolver's "ResolutionImpossible": "The conflict is caused by: jinja2 3.1.6 depends
    // on MarkupSafe>=2.0", when no version of a dependency has a file pip may use.
    if output.contains("ResolutionImpossible")
        && let Some((who, requirement)) = output.lines().find_map(|l| {
            let (left, requirement) = l.trim().split_once(DEPENDS_ON)?;
            let who = left.split_whitespace().next()?;
            Some((who.to_string(), requirement.trim().to_string()))
        })
    {
        return DownloadFailure::NoMatch {
            requirement,
            needed_by: Some(who),
            output: tail(&output),
        };
    }
    DownloadFailure::Other {
        output: tail(&output),
    }
}

/// The project pip could not satisfy `requirement` for, from the line that says
/// "... the requirement X (from Y)".
fn needed_by(output: &str, requirement: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.split_once(requirement)?.1;
        let from = rest.split_once("(from ")?.1;
        let who = from
            .split([')', ' ', '>', '=', '<', '~', '!', '[', ';'])
            .next()?;
        (!who.is_empty()).then(|| who.to_string())
    })
}

/// The project name at the start of a requirement (`tabulate==0.9.0` → `tabulate`).
pub fn requirement_name(requirement: &str) -> String {
    requirement
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_failures_are_told_apart() {
        let output = "Collecting jinja2\n  Downloading jinja2.whl\nERROR: Could not find a version that satisfies the requirement markupsafe>=2.0 (from jinja2) (from versions: none)\nERROR: No matching distribution found for markupsafe>=2.0\n";
        match classify(output.into()) {
            DownloadFailure::NoMatch {
                requirement,
                needed_by,
                ..
            } => {
                assert_eq!(requirement, "markupsafe>=2.0");
                assert_eq!(needed_by.as_deref(), Some("jinja2"));
            }
            other => panic!("{other:?}"),
        }
        let conflict = "ERROR: Cannot install jinja2==3.1.5 and jinja2==3.1.6 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n    jinja2 3.1.6 depends on MarkupSafe>=2.0\n    jinja2 3.1.5 depends on MarkupSafe>=2.0\n\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io\n";
        match classify(conflict.into()) {
            DownloadFailure::NoMatch {
                requirement,
                needed_by,
                ..
            } => {
                assert_eq!(requirement, "MarkupSafe>=2.0");
                assert_eq!(needed_by.as_deref(), Some("jinja2"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify("ERROR: HTTP error 500".into()),
            DownloadFailure::Other { .. }
        ));
        assert_eq!(requirement_name("tabulate==0.9.0"), "tabulate");
        assert_eq!(requirement_name(" et_xmlfile>=1"), "et_xmlfile");
    }
}
