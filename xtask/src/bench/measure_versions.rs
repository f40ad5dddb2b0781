//! The versions of everything `cargo xtask bench` measured, asked of the machine for
//! BENCHMARKS.md: the engines (as they describe themselves), wasmtime, rustc, and the peers.

use std::path::Path;
use std::process::Command;

use super::measure::capture;

/// (what, version) pairs; a tool that cannot say is left out.
pub fn versions(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let forge = crate::paths::host_binary();
    if let Ok(text) = capture(Command::new(&forge).args(["engines", "list", "--json"]))
        && let Ok(listed) = serde_json::from_str::<serde_json::Value>(&text)
    {
        for engine in listed["engines"].as_array().into_iter().flatten() {
            let id = engine["id"].as_str().unwrap_or("?");
            let version = engine["description"]["version"].as_str().unwrap_or("");
            if !version.is_empty() {
                out.push((format!("engine `{id}`"), version.to_string()));
            }
        }
    }
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    for crate_name in ["wasmtime", "wasmtime-wizer", "redb"] {
        let marker = format!("name = \"{crate_name}\"\nversion = \"");
        if let Some(at) = lock.find(&marker) {
            let rest = &lock[at + marker.len()..];
            if let Some(end) = rest.find('"') {
                out.push((format!("crate `{crate_name}`"), rest[..end].to_string()));
            }
        }
    }
    let tool = |what: &str, command: &mut Command, out: &mut Vec<(String, String)>| {
        if let Ok(text) = capture(command) {
            let line = text.lines().next().unwrap_or("").trim().to_string();
            if !line.is_empty() {
                out.push((what.to_string(), line));
            }
        }
    };
    tool("rustc", Command::new("rustc").arg("--version"), &mut out);
    tool("node", Command::new("node").arg("--version"), &mut out);
    tool(
        "native CPython (`python3`)",
        Command::new("/usr/bin/python3").arg("--version"),
        &mut out,
    );
    if let Ok(toolchain) = crate::toolchain::Toolchain::get() {
        let python = format!("python{}", toolchain.python_version);
        tool(
            &format!("native CPython {} (Debian sid)", toolchain.python_version),
            Command::new(crate::paths::target().join("bench-cpython").join(python))
                .arg("--version"),
            &mut out,
        );
    }
    for (file, what) in [
        ("bench/node/package.json", "npm"),
        ("tests/peers/package.json", "npm"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        if let Ok(package) = serde_json::from_str::<serde_json::Value>(&text)
            && let Some(dependencies) = package["dependencies"].as_object()
        {
            for (name, version) in dependencies {
                out.push((
                    format!("{what} `{name}`"),
                    version.as_str().unwrap_or("").to_string(),
                ));
            }
        }
    }
    out
}
