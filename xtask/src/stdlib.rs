//! The Python engines' whole standard library, beside them in `target/engines/`: the `stdlib`
//! step of build.py writes CPython's `Lib/` (as componentize-py bundles it) to a zip, a run of
//! the engine itself compiles every module into it (`compile_stdlib.py`, so the bytecode is
//! exactly its CPython's), and the result is pinned in `engines.lock` as each Python engine's
//! `library`, which the host mounts read-only at `/python` in every run.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::{Result, run};

/// The script the engine runs to compile the modules.
const COMPILE_SCRIPT: &str = include_str!("compile_stdlib.py");

/// The published zip, in `target/engines/`.
pub const FILE: &str = "python-stdlib.zip";

/// Where runs mount its tree: where componentize-py put the standard library when it
/// pre-initialised the interpreter, so the snapshot's modules find their files there.
pub const MOUNT: &str = "/python";

fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// What the compiled zip depends on: the source zip, the script, and the CPython (its pin).
fn recipe_key(source: &Path) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(sha256_file(source)?);
    hash.update(COMPILE_SCRIPT);
    hash.update(include_str!("../../components/python/requirements.txt"));
    Ok(hex::encode(hash.finalize()))
}

/// Compiles `source` (build.py's `stdlib-src.zip`) in the engine, when it changed, and pins the
/// result as the `library` of every Python engine in `target/engines/engines.lock`.
pub fn publish(source: &Path) -> Result {
    let scratch = crate::paths::target().join("stdlib-build");
    let key_path = scratch.join("key");
    let built = scratch.join("out").join(FILE);
    let key = recipe_key(source)?;
    let fresh = std::fs::read_to_string(&key_path).is_ok_and(|k| k == key) && built.is_file();
    if !fresh {
        compile(source, &scratch)?;
        std::fs::write(&key_path, &key).map_err(|e| format!("{}: {e}", key_path.display()))?;
    }
    let engines = crate::paths::engines();
    let destination = engines.join(FILE);
    let bytes = std::fs::read(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    if std::fs::read(&destination).ok().as_deref() != Some(bytes.as_slice()) {
        let partial = destination.with_extension("zip.partial");
        std::fs::write(&partial, &bytes).map_err(|e| format!("{}: {e}", partial.display()))?;
        std::fs::rename(&partial, &destination)
            .map_err(|e| format!("{}: {e}", destination.display()))?;
    }
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let lock_path = engines.join(engine_lock::LOCK_FILE);
    let mut lock = engine_lock::EngineLock::read(&lock_path)
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    for engine in &mut lock.engines {
        if engine
            .id
            .as_deref()
            .is_some_and(|id| id.starts_with("python-"))
        {
            engine.library = Some(engine_lock::LockedLibrary {
                file: FILE.into(),
                sha256: sha256.clone(),
                mount: MOUNT.into(),
            });
        }
    }
    let text = lock.to_text();
    if std::fs::read_to_string(&lock_path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&lock_path, text).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    }
    eprintln!("xtask: {FILE}: {} bytes, sha256 {sha256}", bytes.len());
    Ok(())
}

/// One run of the Python engine that reads `source` and writes the compiled zip to
/// `scratch/out/`.
fn compile(source: &Path, scratch: &Path) -> Result {
    let _ = std::fs::remove_dir_all(scratch);
    let out = scratch.join("out");
    let script = scratch.join("compile_stdlib.py");
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    std::fs::write(&script, COMPILE_SCRIPT).map_err(|e| format!("{}: {e}", script.display()))?;
    let data: PathBuf = scratch.join("data");
    run(Command::new(crate::paths::host_binary())
        .arg("run")
        .arg(&script)
        .args(["--engine", "python", "--input"])
        .arg(source)
        .arg("--out")
        .arg(&out)
        .arg("--data-dir")
        .arg(&data)
        // Some 550 modules: room for the zip and for the time it takes on a slow machine.
        .args([
            "--timeout",
            "10m",
            "--memory",
            "1GiB",
            "--max-input",
            "1GiB",
        ])
        .args(["--max-file-bytes", "1GiB", "--max-files-bytes", "1GiB"])
        .args(["--max-disk", "2GiB"]))
}
