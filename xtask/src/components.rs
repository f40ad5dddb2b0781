//! Builds the engine components and publishes them, pinned, in `target/engines/`.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::setup::{WASM_TARGET, wasi_sysroot};
use crate::{Result, cargo, run, workspace_root};

/// Adds or replaces engine `id` in `target/engines/engines.lock`: its file `<id>.wasm`, the
/// sha256 of its bytes, the extensions it runs (so that picking an engine for a file needs no
/// other engine to be compiled first; the host checks them against `describe()`), and the
/// packages it provides beyond its standard library (which pick a Python profile).
pub fn publish(built: &Path, id: &str, extensions: &[&str], packages: &[&str]) -> Result {
    let engines = crate::paths::engines();
    std::fs::create_dir_all(&engines).map_err(|e| format!("{}: {e}", engines.display()))?;
    let bytes = std::fs::read(built).map_err(|e| format!("{}: {e}", built.display()))?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let file = format!("{id}.wasm");
    let destination = engines.join(&file);
    if std::fs::read(&destination).ok().as_deref() != Some(bytes.as_slice()) {
        std::fs::write(&destination, &bytes)
            .map_err(|e| format!("{}: {e}", destination.display()))?;
    }
    let lock_path = engines.join(engine_lock::LOCK_FILE);
    // Whatever else the lock says (another engine, a conformance record) is kept.
    let lock = engine_lock::EngineLock::read(&lock_path)
        .map_err(|e| {
            let why = std::error::Error::source(&e).map(ToString::to_string);
            format!("{e}: {}", why.unwrap_or_default())
        })?
        .unwrap_or_default();
    let strings = |items: &[&str]| items.iter().map(|item| item.to_string()).collect();
    let lock = with_engine(
        lock,
        engine_lock::LockedEngine {
            file: file.clone(),
            sha256: sha256.clone(),
            id: Some(id.to_string()),
            extensions: Some(strings(extensions)),
            packages: (!packages.is_empty()).then(|| strings(packages)),
            conformance: None,
            library: None,
        },
    );
    let text = lock.to_text();
    if std::fs::read_to_string(&lock_path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&lock_path, text).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    }
    eprintln!("xtask: {file}: {} bytes, sha256 {sha256}", bytes.len());
    Ok(())
}

/// Flags for guest builds: no debug info, and no machine-specific paths in the binary (panic
/// locations name files), so the same sources give the same component on any checkout.
fn guest_rustflags() -> String {
    format!("-C strip=debuginfo {}", path_maps("--remap-path-prefix"))
}

/// `FLAG=<checkout>=/forge FLAG=<cargo home>=/cargo`, for rustc and for clang.
fn path_maps(flag: &str) -> String {
    let cargo_home = std::env::var("CARGO_HOME")
        .ok()
        .or_else(|| {
            std::env::var("HOME")
                .ok()
                .map(|home| format!("{home}/.cargo"))
        })
        .unwrap_or_default();
    let mut maps = format!("{flag}={}=/forge", workspace_root().display());
    if !cargo_home.is_empty() {
        maps.push_str(&format!(" {flag}={cargo_home}=/cargo"));
    }
    maps
}

/// `cargo SUBCOMMAND --release --package PACKAGE` for a Rust guest, built for wasm32-wasip2 with
/// the guests' reproducible flags.
fn guest_cargo(subcommand: &str, package: &str) -> std::process::Command {
    let mut command = cargo();
    command
        .args([
            subcommand,
            "--release",
            "--package",
            package,
            "--target",
            WASM_TARGET,
        ])
        .env("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS", guest_rustflags());
    command
}

/// `cargo SUBCOMMAND` for the QuickJS guest: rquickjs compiles QuickJS-ng's C with Debian's
/// clang (`toolchain.json`) against wasi-libc.
pub fn quickjs_cargo(subcommand: &str) -> Result<std::process::Command> {
    let sysroot = wasi_sysroot()?;
    let toolchain = crate::toolchain::Toolchain::get()?;
    let mut command = guest_cargo(subcommand, "forge-quickjs");
    command
        // Without it rquickjs-sys downloads wasi-sdk, which this machine cannot reach.
        .env("RQUICKJS_SYS_NO_WASI_SDK", "1")
        .env("CC_wasm32_wasip2", toolchain.llvm_tool("clang"))
        .env("AR_wasm32_wasip2", toolchain.llvm_tool("llvm-ar"))
        .env(
            "CFLAGS_wasm32_wasip2",
            format!(
                "--sysroot={} {}",
                sysroot.display(),
                path_maps("-ffile-prefix-map")
            ),
        );
    Ok(command)
}

/// Builds the QuickJS engine and publishes it in `target/engines/`.
pub fn build_quickjs() -> Result {
    run(&mut quickjs_cargo("build")?)?;
    let built = crate::paths::guest_wasm("forge_quickjs");
    publish(&built, "javascript-quickjs", &[".js", ".mjs", ".cjs"], &[])
}

/// `cargo SUBCOMMAND` for the Lua guest: omnilua is pure Rust, so no C compiler or sysroot.
pub fn lua_cargo(subcommand: &str) -> std::process::Command {
    guest_cargo(subcommand, "forge-lua")
}

/// Builds the Lua engine and publishes it in `target/engines/`.
pub fn build_lua() -> Result {
    run(&mut lua_cargo("build"))?;
    let built = crate::paths::guest_wasm("forge_lua");
    publish(&built, "lua", &[".lua"], &[])
}

/// `lock` with `entry` in place of its file's entry; a conformance record and a library are
/// kept while they describe these very bytes.
fn with_engine(
    mut lock: engine_lock::EngineLock,
    mut entry: engine_lock::LockedEngine,
) -> engine_lock::EngineLock {
    if let Some(same) = lock
        .engines
        .iter()
        .find(|e| e.file == entry.file && e.sha256 == entry.sha256)
    {
        entry.conformance = same.conformance.clone();
        entry.library = same.library.clone();
    }
    lock.upsert(entry);
    lock
}

#[cfg(test)]
mod tests {
    use engine_lock::{ConformanceRecord, EngineLock, LockedEngine};

    use super::with_engine;

    fn entry(file: &str, sha256: &str) -> LockedEngine {
        LockedEngine {
            file: file.into(),
            sha256: sha256.into(),
            id: Some("a".into()),
            extensions: Some(vec![".a".into()]),
            packages: None,
            conformance: None,
            library: None,
        }
    }

    #[test]
    fn a_rebuild_keeps_the_other_engines_and_a_conformance_record_of_the_same_bytes() {
        let record = ConformanceRecord {
            passed: 3,
            failed: Vec::new(),
            forced: false,
        };
        let lock = EngineLock {
            engines: vec![
                LockedEngine {
                    conformance: Some(record.clone()),
                    ..entry("a.wasm", "00")
                },
                entry("b.wasm", "11"),
            ],
        };
        let same = with_engine(lock.clone(), entry("a.wasm", "00"));
        assert_eq!(same.engines.len(), 2);
        let a = same.engines.iter().find(|e| e.file == "a.wasm").expect("a");
        assert_eq!(
            a.conformance,
            Some(record),
            "the same bytes keep their record"
        );
        let rebuilt = with_engine(lock, entry("a.wasm", "22"));
        let a = rebuilt
            .engines
            .iter()
            .find(|e| e.file == "a.wasm")
            .expect("a");
        assert_eq!((a.sha256.as_str(), a.conformance.is_none()), ("22", true));
        assert!(rebuilt.engines.iter().any(|e| e.file == "b.wasm"));
    }
}
