//! `cargo xtask`: everything a fresh machine needs, idempotently, and says what it installs.
//!
//! - `setup`: the wasm32-wasip2 Rust target and the Debian packages that compile QuickJS's C
//!   to wasm32 (clang, llvm and wasi-libc, as `toolchain.json` names them), plus the sysroot
//!   folder of symlinks that points clang at wasi-libc.
//! - `build`: setup, the engine components copied into `target/engines/` with their pinned
//!   sha256 in `engines.lock` (QuickJS: Rust and C for wasm32-wasip2; Lua: omnilua, pure Rust,
//!   for wasm32-wasip2; CPython: componentize-py from a venv in `target/python-venv`), and the
//!   release host.
//!   Also the `python-science` engine (the same CPython app plus numpy and pandas, built from
//!   pinned sources by `components/python-science/build.py`, incremental). `--profile stdlib`
//!   skips it (not build.py's `compression` and `sqlite` steps: both CPython profiles link in the
//!   `_bz2`, `_lzma` and `_sqlite3` modules they build); `--profile science` names it explicitly (what
//!   PACKAGE_UNAVAILABLE tells users).
//! - `test`: build, the lint step below, the upstream numpy/pandas test kit, the embedding
//!   example (`host/examples/embed.rs`, which must print its result), test262 (the shared copy
//!   extracted, `FORGE_TEST262_DIR`, and its native baseline built), CPython's own test suite
//!   (sid's pinned packages extracted, `FORGE_CPYTHON_TESTS_DIR`, and the native sid
//!   interpreter, `FORGE_CPYTHON_NATIVE`), then `cargo test --release` over the workspace,
//!   then a short smoke run of every fuzz target (skipped when cargo test arguments narrow the
//!   run), whose build runs in the background from the start at the lowest CPU priority.
//! - `fuzz [TARGET...] [--seconds N]`: the cargo-fuzz targets in `fuzz/`, for longer;
//!   `fuzz --build-only` builds them.
//! - `run FILE [ARGS...]` (or `run -e CODE --lang L`, `run - --lang L`): build the engine the
//!   script needs and nothing else (QuickJS for a `.js` file; CPython for a `.py` one, and
//!   python-science when its imports want it), and the release host, then
//!   `target/release/forge-host run FILE ARGS...`.
//! - `lint`: `cargo fmt --check` and `cargo clippy -D warnings`.
//! - `bench`: build, then measure forge-host against its peers (BENCHMARKS.md).

mod background;
mod bench;
mod build_cache;
mod components;
mod cpython;
mod engines;
mod fuzz;
mod paths;
mod python;
mod setup;
mod stdlib;
mod test262;
mod toolchain;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use engines::Engine;

/// An xtask failure, printed as one line.
type Result<T = ()> = std::result::Result<T, String>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs `command`, echoing it, and fails unless it exits 0.
fn run(command: &mut Command) -> Result {
    eprintln!("xtask: $ {}", describe(command));
    let status = command
        .status()
        .map_err(|e| format!("cannot start `{}`: {e}", describe(command)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(command)))
    }
}

fn describe(command: &Command) -> String {
    let mut text = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

/// `cargo xtask test [CARGO TEST ARGS...]`: see the module's doc.
fn test(cargo_args: &[String]) -> Result {
    // The fuzz smoke ends only the full run; its build overlaps everything before it. Rustup
    // adds the wasm target first, so that the build's own rustup (nightly) never runs beside it.
    setup::setup()?;
    let fuzz_build = if cargo_args.is_empty() {
        Some(fuzz::build_in_background()?)
    } else {
        None
    };
    build(&engines::ALL)?;
    lint()?;
    setup::test_peers()?;
    python::build_science_testkit()?;
    // Compiles every engine into the cache once (python-science: ~17 s), instead of in each of
    // the tests that start at the same moment.
    run(Command::new(crate::paths::host_binary()).arg("status"))?;
    embed_example()?;
    let mut test = cargo();
    if let Some(suite) = test262::prepare()? {
        test.env(test262::SUITE_ENV, suite);
    }
    if let Some((suite, native)) = cpython::prepare()? {
        test.env(cpython::SUITE_ENV, suite)
            .env(cpython::NATIVE_ENV, native);
    }
    run(test
        .args(["test", "--release", "--workspace"])
        .args(excluded())
        .args(cargo_args))?;
    match fuzz_build {
        Some(fuzz_build) => {
            fuzz_build.finish()?;
            fuzz::smoke()
        }
        None => {
            eprintln!("xtask: the fuzz smoke runs with the full test run only");
            Ok(())
        }
    }
}

/// Builds `engines`, each with only the toolchain it needs, and the release host. The host
/// compiles in the background beside the Python engines, whose builds are mostly not cargo's
/// (the guests built by cargo come first: one cargo at a time works in `target/`).
fn build(engines: &[Engine]) -> Result {
    let by_cargo = |e: &&Engine| matches!(e, Engine::Quickjs | Engine::Lua);
    for engine in engines.iter().filter(by_cargo) {
        match engine {
            // The wasm target, clang and wasi-libc.
            Engine::Quickjs => setup::setup().and_then(|()| components::build_quickjs())?,
            // Pure Rust: the wasm target alone.
            Engine::Lua => setup::rust_target().and_then(|()| components::build_lua())?,
            Engine::Python | Engine::Science => {}
        }
    }
    let host = background::Background::start(
        "the host's build",
        cargo().args(["build", "--release", "--package", "forge-host"]),
        crate::paths::target().join("host-build.log"),
        0,
    )?;
    for engine in engines.iter().filter(|e| !by_cargo(e)) {
        match engine {
            Engine::Python => python::build_python()?,
            Engine::Science => python::build_science()?,
            Engine::Quickjs | Engine::Lua => {}
        }
    }
    host.finish()?;
    // Compiled by the engine itself, so after it and the host are built.
    if engines
        .iter()
        .any(|e| matches!(e, Engine::Python | Engine::Science))
    {
        stdlib::publish(&python::stdlib_source())?;
    }
    Ok(())
}

/// The workspace crates that the lint's clippy and the test's cargo test leave out, and why.
const EXCLUDED: [(&str, &str); 3] = [
    (
        "forge-quickjs",
        "a wasm32-wasip2 guest: `lint` runs its clippy with its own target and C toolchain, \
         and the conformance kit tests it as a component",
    ),
    (
        "forge-lua",
        "a wasm32-wasip2 guest: `lint` runs its clippy for its own target, and the \
         conformance kit tests it as a component",
    ),
    (
        "quickjs-native",
        "the bench's native QuickJS switches on hashbrown's default features, which would \
         make this build compile wasmtime a second time (~2.5 GB, minutes)",
    ),
];

/// `--exclude CRATE` for every crate of [`EXCLUDED`].
fn excluded() -> Vec<&'static str> {
    EXCLUDED
        .iter()
        .flat_map(|(name, _why)| ["--exclude", name])
        .collect()
}

/// What `host/examples/embed.rs` prints: its script's result.
const EMBED_PRINTS: &str = "300";

/// Builds and runs the embedding example against the built engines, and checks what it printed.
fn embed_example() -> Result {
    run(cargo().args([
        "build",
        "--release",
        "--package",
        "forge-host",
        "--example",
        "embed",
    ]))?;
    let mut embed = Command::new(crate::paths::release_example("embed"));
    embed.arg(crate::paths::engines());
    eprintln!("xtask: $ {}", describe(&embed));
    let out = embed
        .output()
        .map_err(|e| format!("cannot start `{}`: {e}", describe(&embed)))?;
    let printed = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && printed.trim() == EMBED_PRINTS {
        Ok(())
    } else {
        Err(format!(
            "`{}` printed {printed:?}, not {EMBED_PRINTS} ({}): {}",
            describe(&embed),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `cargo fmt --check` and clippy with `-D warnings` over the host, the xtask and the QuickJS
/// and Lua guests: what CI enforces through the test command.
fn lint() -> Result {
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args(["fmt", "--manifest-path", "fuzz/Cargo.toml", "--check"]))?;
    run(cargo()
        .args(["clippy", "--release", "--workspace"])
        .args(excluded())
        .args(["--all-targets", "--", "-D", "warnings"]))?;
    // The native QuickJS of the bench and test262, in its own invocation (see EXCLUDED).
    run(cargo()
        .args(["clippy", "--release", "--package", "quickjs-native"])
        .args(["--all-targets", "--", "-D", "warnings"]))?;
    let mut guest = components::quickjs_cargo("clippy")?;
    run(guest.args(["--", "-D", "warnings"]))?;
    run(components::lua_cargo("clippy").args(["--", "-D", "warnings"]))
}

const USAGE: &str = "usage: cargo xtask <setup | build [--profile stdlib|science] | \
                     test [CARGO TEST ARGS] | run FILE [ARGS] | lint | bench | \
                     fuzz [TARGET...] [--seconds N] | fuzz --build-only>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::setup(),
        Some("build") => match args.get(1..).unwrap_or_default() {
            [] => build(&engines::ALL),
            [flag, profile] if flag == "--profile" && profile == "science" => build(&engines::ALL),
            [flag, profile] if flag == "--profile" && profile == "stdlib" => {
                build(&engines::STDLIB)
            }
            _ => Err(USAGE.to_string()),
        },
        Some("test") => test(&args[1..]),
        // Only the engine the script needs: the others (and their toolchains) do not hold up
        // the first result.
        Some("run") if args.len() >= 2 => python::profile_packages("python-science")
            .map(|science| {
                engines::for_run(&args[1..], &science, |path| {
                    std::fs::read_to_string(path).ok()
                })
            })
            .and_then(|needed| build(&needed))
            .and_then(|()| {
                let binary = crate::paths::host_binary();
                run(Command::new(binary).arg("run").args(&args[1..]))
            }),
        Some("bench") => build(&engines::ALL).and_then(|()| bench::bench()),
        Some("lint") => lint(),
        Some("fuzz") => fuzz::command(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}
