//! Builds the engine components and publishes them, pinned, in `target/engines/`.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::setup::{WASM_TARGET, wasi_sysroot};
use crate::{Result, cargo, run, workspace_root};

/// Adds or replaces `file` in `target/engines/engines.lock` with the sha256 of its bytes.
pub fn publish(built: &Path, file: &str) -> Result {
    let engines = workspace_root().join("target/engines");
    std::fs::create_dir_all(&engines).map_err(|e| format!("{}: {e}", engines.display()))?;
    let bytes = std::fs::read(built).map_err(|e| format!("{}: {e}", built.display()))?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let destination = engines.join(file);
    if std::fs::read(&destination).ok().as_deref() != Some(bytes.as_slice()) {
        std::fs::write(&destination, &bytes)
            .map_err(|e| format!("{}: {e}", destination.display()))?;
    }
    let lock_path = engines.join("engines.lock");
    let mut entries: Vec<(String, String)> = std::fs::read_to_string(&lock_path)
        .ok()
        .map(|text| parse_lock(&text))
        .unwrap_or_default();
    entries.retain(|(name, _)| name != file);
    entries.push((file.to_string(), sha256.clone()));
    entries.sort();
    let body: Vec<String> = entries
        .iter()
        .map(|(name, sha)| format!("    {{ \"file\": \"{name}\", \"sha256\": \"{sha}\" }}"))
        .collect();
    let text = format!("{{\n  \"engines\": [\n{}\n  ]\n}}\n", body.join(",\n"));
    if std::fs::read_to_string(&lock_path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&lock_path, text).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    }
    eprintln!("xtask: {file}: {} bytes, sha256 {sha256}", bytes.len());
    Ok(())
}

/// The (file, sha256) pairs of a lock this module wrote.
fn parse_lock(text: &str) -> Vec<(String, String)> {
    let field = |line: &str, name: &str| -> Option<String> {
        let start = line.find(&format!("\"{name}\": \""))? + name.len() + 5;
        let end = start + line[start..].find('"')?;
        Some(line[start..end].to_string())
    };
    text.lines()
        .filter_map(|line| Some((field(line, "file")?, field(line, "sha256")?)))
        .collect()
}

/// `cargo SUBCOMMAND` for the QuickJS guest: rquickjs compiles QuickJS-ng's C with Debian's
/// clang-19 against wasi-libc.
pub fn quickjs_cargo(subcommand: &str) -> Result<std::process::Command> {
    let sysroot = wasi_sysroot()?;
    let mut command = cargo();
    command
        .args([
            subcommand,
            "--release",
            "--package",
            "forge-quickjs",
            "--target",
            WASM_TARGET,
        ])
        // Without it rquickjs-sys downloads wasi-sdk, which this machine cannot reach.
        .env("RQUICKJS_SYS_NO_WASI_SDK", "1")
        .env("CC_wasm32_wasip2", "clang-19")
        .env("AR_wasm32_wasip2", "llvm-ar-19")
        .env(
            "CFLAGS_wasm32_wasip2",
            format!("--sysroot={}", sysroot.display()),
        )
        .env("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS", "-C strip=debuginfo");
    Ok(command)
}

/// Builds the QuickJS engine and publishes it in `target/engines/`.
pub fn build_quickjs() -> Result {
    run(&mut quickjs_cargo("build")?)?;
    let built = workspace_root().join("target/wasm32-wasip2/release/forge_quickjs.wasm");
    publish(&built, "javascript-quickjs.wasm")
}

#[cfg(test)]
mod tests {
    use super::parse_lock;

    #[test]
    fn reads_back_the_lock_it_writes() {
        let text =
            "{\n  \"engines\": [\n    { \"file\": \"a.wasm\", \"sha256\": \"00ff\" }\n  ]\n}\n";
        assert_eq!(
            parse_lock(text),
            [("a.wasm".to_string(), "00ff".to_string())]
        );
    }
}
