//! The host's own disk full (issue 42 §3), on small tmpfs mounts: a run that fills the data
//! directory, a journal and state commit with no room, a publication that does not fit. Each
//! ends `HOST_DISK_FULL` (the host's doing, never `ISOLATE_FAILURE` or the script's), leaves
//! nothing half-written (journal, state, published files), and the next run works once there
//! is room again. Mounting needs root, as the test set-up has.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::mcp_server::{Transport, drive};
use crate::util::{Sandbox, args};

/// A tmpfs of a few MiB mounted on a fresh folder, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn mount(path: PathBuf, mib: u32) -> Tmpfs {
        std::fs::create_dir_all(&path).expect("mount point");
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m,mode=0700"),
                "tmpfs",
            ])
            .arg(&path)
            .status()
            .expect("run mount");
        assert!(
            status.success(),
            "mounting a tmpfs needs root (the test set-up runs as root)"
        );
        Tmpfs { path }
    }

    /// Fills what is left with a file, `filler`, which the caller removes to make room.
    fn fill(&self) -> PathBuf {
        let filler = self.path.join("filler");
        let chunk = vec![7u8; 64 * 1024];
        let mut file = std::fs::File::create(&filler).expect("create filler");
        use std::io::Write;
        while file.write_all(&chunk).is_ok() {}
        // The last partial chunk, byte by byte is too slow; a 4 KiB step is close enough.
        while file.write_all(&chunk[..4096]).is_ok() {}
        filler
    }

    /// Bytes in use on the mount.
    fn used(&self) -> u64 {
        let text = Command::new("df")
            .args(["--output=used", "-B1"])
            .arg(&self.path)
            .output()
            .expect("df")
            .stdout;
        String::from_utf8_lossy(&text)
            .lines()
            .nth(1)
            .and_then(|line| line.trim().parse().ok())
            .expect("df prints the bytes used")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn journal(sandbox: &Sandbox) -> Vec<Value> {
    let listed = sandbox.forge(&["journal", "list", "--json", "--limit", "1000"]);
    assert_eq!(listed.code(), 0, "the journal opens: {}", listed.stderr());
    serde_json::from_str(&listed.stdout()).expect("a JSON array")
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn a_run_that_fills_the_data_directory_ends_host_disk_full_and_gives_the_room_back() {
    let sandbox = Sandbox::new();
    let data = Tmpfs::mount(sandbox.data_dir(), 24);
    // Make the journal first, so that what the run fills is the rest.
    sandbox
        .run_js("return 1;", &[] as &[&str])
        .assert_succeeded();
    let before = data.used();
    let script = r#"
chunk = b"x" * (256 * 1024)
with open("/work/big.bin", "wb") as f:
    while True:
        f.write(chunk)
        f.flush()
"#;
    let run = sandbox.run_py(script, &["--max-disk", "1GiB"]);
    assert_eq!(run.status(), "failed", "{}", run.stdout());
    assert_eq!(
        run.error_code(),
        "HOST_DISK_FULL",
        "the host's disk, not the script nor the engine: {}",
        run.stdout()
    );
    // Its folder went before its record was closed: the journal has it, and the room is back.
    let records = journal(&sandbox);
    let id = run.report()["id"].as_str().expect("id").to_string();
    let record = records
        .iter()
        .find(|r| r["id"] == id.as_str())
        .expect("the run is in the journal");
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["error_code"], "HOST_DISK_FULL", "{record}");
    assert!(
        data.used() < before + (1 << 20),
        "the run's files were removed: {} bytes used, {before} before",
        data.used()
    );
    sandbox
        .run_js("return 2;", &[] as &[&str])
        .assert_succeeded();
}

#[test]
fn a_commit_with_no_room_writes_nothing_and_the_next_run_works_once_there_is_room() {
    let sandbox = Sandbox::new();
    let data = Tmpfs::mount(sandbox.data_dir(), 8);
    // The same script each time: it is stored once, with room, so what meets the full disk is
    // the run's journal record and its state commit.
    let script = "state.set('n', (state.get('n') ?? 0) + 1); return state.get('n');";
    let first = sandbox.run_js(script, &["--session", "s"]);
    assert_eq!(first.assert_succeeded()["value"], 1);
    let journaled = journal(&sandbox).len();
    let filler = data.fill();
    let run = sandbox.run_js(script, &["--session", "s"]);
    assert_ne!(run.code(), 0, "{}", run.stdout());
    let said = format!("{}{}", run.stdout(), run.stderr());
    assert!(
        said.contains("HOST_DISK_FULL"),
        "the code says the host is out of space: {said}"
    );
    assert!(!said.contains("ISOLATE_FAILURE"), "{said}");
    assert!(!said.contains("cannot store the script"), "{said}");
    std::fs::remove_file(&filler).expect("make room");
    // Whatever the full disk stopped is whole: the journal opens, no record is left open, and
    // the state and the journal agree. Where the disk ran out depends on redb's free pages:
    // either the run's state commit did not happen, or it did (whole) and the record of the run,
    // closed by reconciliation, says that it stands.
    let records = journal(&sandbox);
    assert!(records.len() >= journaled, "nothing was lost");
    assert!(
        records.iter().all(|r| r["status"] != "running"),
        "no record is left running: {records:?}"
    );
    let state = sandbox.forge(&["state", "get", "n", "--session", "s"]);
    let n: u64 = state.stdout().trim().parse().expect("n is a number");
    match n {
        1 => {}
        2 => assert!(
            records.iter().any(|r| r["error_message"]
                .as_str()
                .is_some_and(|m| m.contains("after its state was committed"))),
            "a state change that stands is on the record: {records:?}"
        ),
        other => panic!("the state moved by one run at most, not to {other}"),
    }
    let again = sandbox.run_js(script, &["--session", "s"]);
    assert_eq!(again.assert_succeeded()["value"], n + 1);
}

#[test]
fn a_publication_that_does_not_fit_leaves_nothing_and_commits_no_state() {
    let sandbox = Sandbox::new();
    let out_root = sandbox.workspace().join("out");
    let out = Tmpfs::mount(out_root.clone(), 1);
    let target = out_root.join("report");
    let script = r#"
import forge
forge.state.set("published", True)
with open(forge.output_path("small.txt"), "w") as f:
    f.write("fits")
with open(forge.output_path("big.bin"), "wb") as f:
    f.write(b"x" * (3 * 1024 * 1024))
forge.result("done")
"#;
    let run = sandbox.run_py(
        script,
        &args!["--session", "p", "--out", target.as_os_str()],
    );
    assert_eq!(run.status(), "failed", "{}", run.stdout());
    assert_eq!(run.error_code(), "HOST_DISK_FULL", "{}", run.stdout());
    assert_eq!(
        files_under(&out.path),
        Vec::<PathBuf>::new(),
        "no published or staged file is left"
    );
    let state = sandbox.forge(&["state", "get", "published", "--session", "p"]);
    assert_ne!(
        state.stdout().trim(),
        "true",
        "state is committed only with its publication"
    );
    let id = run.report()["id"].as_str().expect("id").to_string();
    let record = journal(&sandbox)
        .into_iter()
        .find(|r| r["id"] == id.as_str())
        .expect("journaled");
    assert_eq!(record["error_code"], "HOST_DISK_FULL", "{record}");
}

#[test]
fn a_server_that_met_a_full_disk_works_again_once_there_is_room() {
    let sandbox = Sandbox::new();
    let data = Tmpfs::mount(sandbox.data_dir(), 8);
    let out = drive(
        &sandbox,
        "full_disk",
        &Transport::Stdio(Vec::new()),
        &["--fill", &data.path.join("filler").display().to_string()],
    );
    assert_eq!(out["before"]["structured"]["status"], "succeeded", "{out}");
    let full = &out["full"];
    assert_eq!(full["is_error"], true, "{out}");
    assert_eq!(
        full["structured"]["error"]["code"], "HOST_DISK_FULL",
        "{full}"
    );
    // The same process: its database handle met the full disk, and is whole again.
    let after = &out["after"]["structured"];
    assert_eq!(after["status"], "succeeded", "{out}");
    // Where the disk ran out depends on redb's free pages: before the run's state commit (it
    // committed nothing), or after it, when the run's error says that what it committed stands.
    match after["value"].as_u64() {
        Some(2) => {}
        Some(3) => assert!(
            full["structured"]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("what it committed stands")),
            "{full}"
        ),
        _ => panic!("the state moved by one run at most: {out}"),
    }
    // Read while the server still ran: a record the full disk kept from closing was closed once
    // there was room, not left `running` until the process ends.
    let records = out["journal"].as_array().expect("the journal as a list");
    assert!(
        records.iter().all(|r| r["status"] != "running"),
        "{records:?}"
    );
}
