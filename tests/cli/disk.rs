//! The disk quota (issue 11): `--max-disk` bounds what a run holds in `/work` and `/output`
//! together, at write time; deleting and truncating give bytes back; a run that fails after a
//! refused write is `DISK_LIMIT`. `--max-input` bounds the inputs before anything is copied;
//! `--max-open-files` the descriptors a script holds.

use crate::util::{Sandbox, args};

#[test]
fn writes_past_the_quota_fail_in_the_script_and_deleting_gives_bytes_back() {
    let sandbox = Sandbox::new();
    let script = r#"
import errno, os, forge
chunk = b"x" * (256 * 1024)
def fill(path):
    written = 0
    try:
        with open(path, "wb") as f:
            while written < 8 * len(chunk):
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as e:
        return written, e.errno
    return written, None
work, work_error = fill("/work/a.bin")
out, out_error = fill("/output/b.bin")
fd = os.open("/work/c.bin", os.O_WRONLY | os.O_CREAT)
try:
    os.pwrite(fd, chunk, 0)
    pwrite = None
except OSError as e:
    pwrite = e.errno
try:
    os.ftruncate(fd, 10 * len(chunk))
    grown = None
except OSError as e:
    grown = e.errno
os.close(fd)
os.remove("/work/a.bin")
os.remove("/output/b.bin")
again, again_error = fill("/work/d.bin")
with open("/work/d.bin", "r+b") as f:
    f.truncate(0)
after_truncate, truncate_error = fill("/work/e.bin")
forge.result({"work": work, "work_error": work_error, "out_error": out_error,
              "pwrite": pwrite == errno.ENOSPC, "ftruncate": grown,
              "again": again, "again_error": again_error,
              "after_truncate": after_truncate, "truncate_error": truncate_error})
"#;
    let run = sandbox.run_py(script, &["--max-disk", "1MiB"]);
    let report = run.assert_succeeded();
    let value = &report["value"];
    assert!(value["work"].as_u64().unwrap_or(0) <= 1 << 20, "{value}");
    assert!(
        !value["work_error"].is_null(),
        "the write past the quota failed: {value}"
    );
    assert!(
        !value["out_error"].is_null(),
        "/output shares the quota: {value}"
    );
    assert_eq!(
        value["pwrite"], true,
        "a positioned write gets ENOSPC: {value}"
    );
    assert!(
        value["ftruncate"].is_null(),
        "growing a file makes a hole, which holds nothing: {value}"
    );
    // The quota was full; deleting the two files gave their bytes back, so a new file takes all
    // of the quota again, and truncating it to 0 gives them back once more.
    assert_eq!(
        value["again"],
        1 << 20,
        "deleting gave the bytes back: {value}"
    );
    assert_eq!(
        value["after_truncate"],
        1 << 20,
        "truncating gave the bytes back: {value}"
    );
}

#[test]
fn a_sparse_file_is_charged_for_the_blocks_it_was_written_in() {
    let sandbox = Sandbox::new();
    let script = r#"
import errno, os, forge
def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)
def sparse():
    with open("/work/sparse.bin", "wb") as f:
        f.seek(100 << 20)
        f.write(b"x" * 10)
def grow():
    with open("/work/sparse.bin", "r+b") as f:
        f.truncate(1 << 30)
def too_much_far_away():
    with open("/work/far.bin", "wb") as f:
        f.seek(50 << 20)
        f.write(b"y" * (2 << 20))
def pwrite_too_much():
    fd = os.open("/work/p.bin", os.O_WRONLY | os.O_CREAT)
    try:
        os.pwrite(fd, b"z" * (2 << 20), 10 << 20)
    finally:
        os.close(fd)
chunk = b"d" * (64 * 1024)
dense = 0
def fill():
    global dense
    with open("/work/dense.bin", "wb") as f:
        while True:
            f.write(chunk)
            f.flush()
            dense += len(chunk)
result = {"sparse": attempt(sparse), "grow": attempt(grow),
          "size": os.stat("/work/sparse.bin").st_size,
          "far": attempt(too_much_far_away), "pwrite": attempt(pwrite_too_much)}
# What the refused writes left behind goes back.
os.remove("/work/far.bin")
os.remove("/work/p.bin")
result["fill"] = attempt(fill)
result["dense"] = dense
forge.result(result)
"#;
    let report = sandbox
        .run_py(script, &["--max-disk", "1MiB"])
        .assert_succeeded();
    let value = &report["value"];
    assert_eq!(value["sparse"], "ok", "a far seek holds one block: {value}");
    assert_eq!(value["grow"], "ok", "a hole holds nothing: {value}");
    assert_eq!(value["size"], 1u64 << 30, "{value}");
    assert_eq!(value["pwrite"], "ENOSPC", "{value}");
    // wasi-libc reports any failed write of an output stream as EIO (SECURITY.md).
    for refused in ["far", "fill"] {
        assert!(
            value[refused] == "ENOSPC" || value[refused] == "EIO",
            "{refused}: {value}"
        );
    }
    // The sparse file holds one 4 KiB block; the rest of the MiB is the dense file's.
    let dense = value["dense"].as_u64().unwrap_or(0);
    assert!(
        ((1 << 20) - 128 * 1024..(1 << 20)).contains(&dense),
        "{value}"
    );
}

#[test]
fn a_run_that_fails_after_a_refused_write_is_disk_limit() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_py(
        "with open('/work/big.bin', 'wb') as f:\n    f.write(b'x' * (3 << 20))\n",
        &["--max-disk", "2MiB"],
    );
    assert_eq!(run.status(), "failed");
    assert_eq!(run.error_code(), "DISK_LIMIT", "{}", run.stdout());
    let fits = sandbox.run_py(
        "import forge\nwith open('/output/ok.bin', 'wb') as f:\n    f.write(b'x' * (1 << 20))\nforge.result(1)",
        &args!["--max-disk", "2MiB", "--out", &sandbox.dir.path().join("out")],
    );
    fits.assert_succeeded();
}

#[test]
fn the_quota_is_any_size_from_1_mib_whatever_the_publication_limits() {
    let sandbox = Sandbox::new();
    let small = sandbox.run_js("return 1", &["--max-disk", "512KiB"]);
    assert_eq!(small.code(), 2, "{}", small.stderr());
    sandbox
        .run_js(
            "return 1",
            &["--max-disk", "1MiB", "--max-files-bytes", "10GiB"],
        )
        .assert_succeeded();
    let help = sandbox.forge(&["run", "--help"]);
    assert!(help.stdout().contains("--max-disk") && help.stdout().contains("--max-input"));
}

#[test]
fn inputs_over_max_input_are_refused_before_copying() {
    let sandbox = Sandbox::new();
    let data = sandbox.dir.path().join("inputs");
    std::fs::create_dir_all(&data).expect("mkdir");
    std::fs::write(data.join("a.bin"), vec![7u8; 300_000]).expect("write");
    std::fs::write(data.join("b.bin"), vec![7u8; 300_000]).expect("write");
    let refused = sandbox.run_js(
        "return 1",
        &args!["--input", &data, "--max-input", "500000"],
    );
    assert_eq!(refused.code(), 2, "{}", refused.stdout());
    assert_eq!(refused.error_code(), "INVALID_INPUT");
    let message = refused.report()["error"]["message"].to_string();
    assert!(
        message.contains("600000") && message.contains("500000"),
        "{message}"
    );
    sandbox
        .run_js(
            "return 1",
            &args!["--input", &data, "--max-input", "600000"],
        )
        .assert_succeeded();
}

#[test]
fn open_descriptors_are_bounded_and_given_back_when_closed() {
    let sandbox = Sandbox::new();
    let script = r#"
import errno, os, forge
open("/work/f", "w").close()
def open_all():
    files = []
    try:
        while len(files) < 1000:
            files.append(os.open("/work/f", os.O_RDONLY))
    except OSError as e:
        code = errno.errorcode.get(e.errno)
    for fd in files:
        os.close(fd)
    return len(files), code
first = open_all()
second = open_all()
forge.result([first, second])
"#;
    let report = sandbox
        .run_py(script, &["--max-open-files", "16"])
        .assert_succeeded();
    let rounds = report["value"].as_array().cloned().unwrap_or_default();
    assert_eq!(rounds.len(), 2, "{report}");
    for round in &rounds {
        assert_eq!(round[0], 16, "{round}");
        assert_eq!(round[1], "EDQUOT", "{round}");
    }
    assert_eq!(rounds[0], rounds[1], "closing gave the descriptors back");
    let refused = sandbox.run_js("return 1", &["--max-open-files", "4"]);
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
}
