//! Machine set-up: the Rust wasm target and the Debian packages, installed only when missing.

use std::path::PathBuf;
use std::process::Command;

use crate::{Result, run, workspace_root};

/// The servers the distributed tests start on loopback (issue 16): etcd for shared state, NATS
/// for the queue, `etcd-client` (etcdctl) to give a test etcd its users, and `openssl`, with
/// which the tests make their own certificates (issue 26).
const SERVER_PACKAGES: [&str; 4] = ["etcd-server", "etcd-client", "nats-server", "openssl"];

/// The browser the chart tests open a published page in, with the network cut (issue 28).
const BROWSER_PACKAGES: [&str; 1] = ["chromium"];

/// The Rust target guest components are built for.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// The standard output of `command`, if it ran and succeeded.
pub fn output(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The Rust target guests are built for, added when missing.
pub fn rust_target() -> Result {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .ok_or("cannot run `rustup target list --installed` (is rustup on PATH?)")?;
    if installed.lines().any(|line| line.trim() == WASM_TARGET) {
        return Ok(());
    }
    eprintln!("xtask: installing the Rust target {WASM_TARGET}");
    run(Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

fn package_installed(name: &str) -> bool {
    output(Command::new("dpkg-query").args(["-W", "-f=${Status}", name]))
        .is_some_and(|status| status.contains("install ok installed"))
}

/// Installs the Debian packages `names` that are missing (through sudo when not root).
pub fn apt_install(names: &[impl AsRef<str>]) -> Result {
    let missing: Vec<&str> = names
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| !package_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing Debian packages: {}", missing.join(" "));
    let is_root = output(Command::new("id").arg("-u")).is_some_and(|uid| uid.trim() == "0");
    let apt = |args: &[&str]| -> Command {
        let mut command = if is_root {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.arg("apt-get");
            sudo
        };
        // RUNLEVEL=1: a package that ships a service (etcd) is installed, not started; the
        // tests start their own servers on loopback.
        command
            .env("DEBIAN_FRONTEND", "noninteractive")
            .env("RUNLEVEL", "1")
            .args(args);
        command
    };
    let install = |missing: &[&str]| {
        let mut command = apt(&["install", "-y", "--no-install-recommends"]);
        command.args(missing);
        run(&mut command)
    };
    // A fresh machine may have empty package lists: update once, then retry.
    if install(&missing).is_err() {
        run(&mut apt(&["update"]))?;
        install(&missing)?;
    }
    Ok(())
}

/// The sysroot clang compiles wasm32 C against: symlinks to Debian's wasi-libc (pointing
/// `--sysroot` straight at `/usr/include/wasm32-wasi` falls back to glibc headers).
pub fn wasi_sysroot() -> Result<PathBuf> {
    let sysroot = crate::paths::target().join("wasi-sysroot");
    let links = [
        (
            sysroot.join("include"),
            PathBuf::from("/usr/include/wasm32-wasi"),
        ),
        (
            sysroot.join("lib/wasm32-wasi"),
            PathBuf::from("/usr/lib/wasm32-wasi"),
        ),
    ];
    for (link, target) in links {
        if std::fs::read_link(&link).is_ok_and(|t| t == target) {
            continue;
        }
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(sysroot)
}

/// Everything the builds need, installed when missing.
pub fn setup() -> Result {
    rust_target()?;
    apt_install(&crate::toolchain::Toolchain::get()?.quickjs_debs)?;
    wasi_sysroot()?;
    Ok(())
}

/// The real peers the tests drive: the servers and the browser above when missing, and these, each
/// installed only when its pin file changed (a second run, and a run offline, does nothing):
/// - `tests/peers/package.json` (MCP servers, the MCP conformance suite with the Node it needs,
///   TypeScript): `npm ci` from the lock;
/// - `tests/peers/requirements.txt` (the official Python MCP SDK): a venv in
///   `target/test-peers-venv`, installed with `--require-hashes`.
pub fn test_peers() -> Result {
    apt_install(&SERVER_PACKAGES)?;
    apt_install(&BROWSER_PACKAGES)?;
    let dir = workspace_root().join("tests/peers");
    let stamped = |pins: &std::path::Path, stamp: &std::path::Path| -> Result<Option<String>> {
        let bytes = std::fs::read(pins).map_err(|e| format!("{}: {e}", pins.display()))?;
        let wanted = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        let current = std::fs::read_to_string(stamp).is_ok_and(|found| found.trim() == wanted);
        Ok((!current).then_some(wanted))
    };
    let stamp = dir.join("node_modules/.forge-lock-sha256");
    if let Some(wanted) = stamped(&dir.join("package-lock.json"), &stamp)? {
        eprintln!("xtask: installing the test peers in tests/peers (npm ci)");
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir))?;
        std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    let venv = test_peers_venv();
    let requirements = dir.join("requirements.txt");
    let stamp = venv.join(".forge-requirements-sha256");
    if let Some(wanted) = stamped(&requirements, &stamp)? {
        eprintln!(
            "xtask: installing the Python MCP SDK in {} (pip --require-hashes)",
            venv.display()
        );
        crate::python::install_venv(&venv, &requirements)?;
        std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    Ok(())
}

/// The venv holding the Python MCP SDK (the tests find it here too).
pub fn test_peers_venv() -> PathBuf {
    crate::paths::target().join("test-peers-venv")
}
