//! `cargo xtask fuzz`: the cargo-fuzz targets in `fuzz/` (libFuzzer, AddressSanitizer, nightly
//! Rust), each run for a while from its checked-in seeds, which hold every crash found so far.
//!
//! - `cargo xtask fuzz [TARGET...] [--seconds N]`: N seconds per target (default 600).
//! - `cargo xtask fuzz --build-only`: nightly, cargo-fuzz and the targets' build, no runs.
//! - `cargo xtask test` runs [`smoke`]: every target for [`SMOKE_SECONDS`]. Its build is a
//!   [`build_in_background`], begun with the test command, so it takes only the CPU time the
//!   engines', the host's and the tests' builds leave idle.
//!
//! New inputs the fuzzer finds go to `target/fuzz/corpus/TARGET` (kept between runs, never
//! committed); a crash is written to `fuzz/artifacts/TARGET/` and fails the command. Found
//! crashes become seeds (`fuzz/seeds/TARGET/`), so every later run replays them first, and a
//! unit test beside the code.

use std::path::Path;
use std::process::Command;

use crate::background::Background;
use crate::setup::output;
use crate::{Result, run, workspace_root};

/// The targets, as `fuzz/Cargo.toml` names them.
pub const TARGETS: [&str; 5] = [
    "json_boundary",
    "limit_config",
    "output_names",
    "python_imports",
    "journal_records",
];

/// Seconds per target in the test command's smoke run.
pub const SMOKE_SECONDS: u64 = 20;

/// Seconds per target of `cargo xtask fuzz` without `--seconds`.
const DEFAULT_SECONDS: u64 = 600;

/// The cargo-fuzz the test set-up installs.
const CARGO_FUZZ_VERSION: &str = "0.13.1";

/// Nightly Rust and cargo-fuzz, each installed only when missing.
fn setup() -> Result {
    if output(Command::new("rustup").args(["run", "nightly", "rustc", "--version"])).is_none() {
        eprintln!("xtask: installing nightly Rust (cargo-fuzz builds with it)");
        run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let installed = output(Command::new("cargo").args(["fuzz", "--version"]))
        .is_some_and(|version| version.contains(CARGO_FUZZ_VERSION));
    if !installed {
        eprintln!("xtask: installing cargo-fuzz {CARGO_FUZZ_VERSION}");
        run(Command::new("cargo").args([
            "install",
            "cargo-fuzz",
            "--locked",
            "--version",
            CARGO_FUZZ_VERSION,
        ]))?;
    }
    Ok(())
}

fn cargo_fuzz(subcommand: &str) -> Command {
    let root = workspace_root();
    let mut command = Command::new("cargo");
    // The outer cargo's toolchain choice must not reach the nightly build.
    for inherited in [
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "CARGO",
        "RUSTC_WRAPPER",
    ] {
        command.env_remove(inherited);
    }
    command
        .current_dir(root.join("fuzz"))
        .args(["+nightly", "fuzz", subcommand, "--fuzz-dir", "."])
        .arg("--target-dir")
        .arg(crate::build_cache::fuzz_target());
    command
}

/// Nightly, cargo-fuzz and every target built.
fn build() -> Result {
    setup()?;
    run(&mut cargo_fuzz("build"))
}

/// Runs each of `targets` for `seconds`, after building them all once.
pub fn fuzz(targets: &[&str], seconds: u64) -> Result {
    build()?;
    let root = workspace_root();
    for target in targets {
        let corpus = crate::paths::target().join("fuzz/corpus").join(target);
        let seeds = root.join("fuzz/seeds").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
        let log = crate::paths::target()
            .join("fuzz/logs")
            .join(format!("{target}.log"));
        eprintln!(
            "xtask: fuzzing {target} for {seconds} s (libFuzzer's log: {})",
            log.display()
        );
        let outcome = run_logged(
            cargo_fuzz("run")
                .arg(target)
                .arg(&corpus)
                .arg(&seeds)
                .args(["--", &format!("-max_total_time={seconds}")])
                .args(["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"]),
            &log,
        );
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        match outcome {
            Ok(()) => {
                let done = text
                    .lines()
                    .filter(|l| l.starts_with("Done "))
                    .collect::<Vec<_>>();
                eprintln!("xtask: {target}: {}", done.join("; "));
            }
            Err(e) => {
                let tail = crate::background::tail(&text, 80);
                return Err(format!(
                    "{e}\n{tail}\nthe fuzzer found a crash in `{target}`: its input is in \
                     fuzz/artifacts/{target}/; replay it with `cargo +nightly fuzz run --fuzz-dir \
                     fuzz {target} FILE`, then add it to fuzz/seeds/{target}/ and as a unit test \
                     beside the code"
                ));
            }
        }
    }
    Ok(())
}

/// Runs `command` with its output in `log` (libFuzzer prints a line per new input).
fn run_logged(command: &mut Command, log: &Path) -> Result {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let file =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let copy = file
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    run(command.stdout(copy).stderr(file))
}

/// The test command's short run of every target.
pub fn smoke() -> Result {
    fuzz(&TARGETS, SMOKE_SECONDS)
}

/// `cargo xtask fuzz --build-only` in the background at the lowest CPU priority, its output in
/// `target/fuzz/logs/build.log`: cold, this build is about 10 minutes of both cores, and it takes
/// only what the test command's own builds and tests leave idle.
pub fn build_in_background() -> Result<Background> {
    let xtask = std::env::current_exe().map_err(|e| format!("cannot find xtask itself: {e}"))?;
    Background::start(
        "the fuzz targets' build",
        Command::new(xtask).args(["fuzz", "--build-only"]),
        crate::paths::target().join("fuzz/logs/build.log"),
        19,
    )
}

/// `cargo xtask fuzz [TARGET...] [--seconds N]` or `cargo xtask fuzz --build-only`.
pub fn command(args: &[String]) -> Result {
    if let [only] = args
        && only == "--build-only"
    {
        return build();
    }
    let mut seconds = DEFAULT_SECONDS;
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--seconds" {
            seconds = args
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|n| *n > 0)
                .ok_or("--seconds takes a whole number of seconds above 0")?;
        } else if let Some(target) = TARGETS.iter().find(|t| *t == arg) {
            targets.push(*target);
        } else {
            return Err(format!(
                "unknown fuzz target `{arg}` (the targets are: {})",
                TARGETS.join(", ")
            ));
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    fuzz(&targets, seconds)
}
