//! Python's whole standard library at run time (issue 43): every module of `Lib/` that WASI can
//! run imports in both profiles, whether or not the engine's snapshot imported it, with its
//! source for tracebacks and `inspect`; the process clock, `/` and `sysconfig` as natively; and
//! an import that cannot work names the real reason; several SQLite connections to one file.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox};

#[track_caller]
fn value_of(sandbox: &Sandbox, source: &str, args: &[&str]) -> Value {
    sandbox.run_py(source, args).assert_succeeded()["value"].clone()
}

/// Modules the snapshot does not hold (none of them is in `components/python/preload.py`).
const NOT_SNAPSHOTTED: &str = "_strptime py_compile _pyio pydoc _pylong cProfile profile pstats \
                               mailbox netrc symtable zipapp";

#[test]
fn modules_the_snapshot_did_not_import_import_in_both_profiles() {
    let sandbox = Sandbox::new();
    let script = format!(
        "import importlib, sys, datetime, forge\n\
         missing = [m for m in {NOT_SNAPSHOTTED:?}.split() if m not in sys.modules]\n\
         for m in missing:\n    importlib.import_module(m)\n\
         when = datetime.datetime.strptime('04/12/2026 13:45', '%d/%m/%Y %H:%M')\n\
         forge.result({{'missing_before': len(missing), 'when': when.isoformat()}})\n"
    );
    for engine in ["python-cpython", "python-science"] {
        let value = value_of(&sandbox, &script, &["--engine", engine]);
        assert_eq!(value["when"], "2026-12-04T13:45:00", "{engine}");
        assert!(
            value["missing_before"].as_u64() > Some(0),
            "{engine}: the test must import modules the snapshot lacks: {value}"
        );
    }
}

#[test]
fn the_library_has_its_source_and_imports_afresh() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "import importlib, inspect, json, sys, traceback, forge\n\
         source = inspect.getsource(json.dumps)\n\
         old = sys.modules.pop('json')\n\
         fresh = importlib.import_module('json')\n\
         try:\n    json.loads('{bad')\nexcept ValueError:\n    stack = traceback.format_exc()\n\
         forge.result({'source': source.splitlines()[0], 'fresh': fresh is not old,\n\
                       'same': fresh.dumps([1]) == old.dumps([1]), 'file': fresh.__file__,\n\
                       'line_shown': 'return _default_decoder.decode(s)' in stack})\n",
        NO_ARGS,
    );
    assert_eq!(
        value,
        json!({"source": "def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True,",
               "fresh": true, "same": true, "file": "/python/json/__init__.py", "line_shown": true})
    );
}

#[test]
fn process_time_counts_from_the_runs_start_and_root_lists_the_mounts() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "import os, time, shlex, sysconfig, forge\nfrom pathlib import Path\n\
         first = time.process_time()\nsum(range(200000))\nsecond = time.process_time()\n\
         ns = time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID) if hasattr(time, 'CLOCK_PROCESS_CPUTIME_ID') else 0\n\
         try:\n    open('/made-up', 'w')\n    wrote = 'written'\nexcept OSError as e:\n    wrote = type(e).__name__\n\
         forge.result({'from_zero': 0 <= first < 5 and first <= second and ns >= 0,\n\
                       'root': sorted(os.listdir('/')), 'is_dir': Path('/').is_dir(), 'wrote': wrote,\n\
                       'config_args': shlex.split(sysconfig.get_config_var('CONFIG_ARGS'))[0]})\n",
        NO_ARGS,
    );
    assert_eq!(
        value,
        json!({"from_zero": true, "root": ["input", "output", "python", "work"], "is_dir": true,
               "wrote": "PermissionError", "config_args": "-C"})
    );
}

#[test]
fn an_import_that_cannot_work_names_the_reason() {
    let sandbox = Sandbox::new();
    for (module, reason) in [
        ("tkinter", "left out of this engine: it needs Tk"),
        (
            "ctypes",
            "`_ctypes` is not part of CPython's build for WASI",
        ),
        ("ssl", "`_ssl` is not part of CPython's build for WASI"),
    ] {
        let run = sandbox.run_py(&format!("import {module}\n"), NO_ARGS);
        assert_eq!(run.error_code(), "PACKAGE_UNAVAILABLE", "{}", run.stdout());
        let message = run.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(reason), "{module}: {message}");
    }
}

/// A descriptor that once read to the end of a file sees what another descriptor writes after,
/// as natively: a reader of a growing file, and SQLite's second connection to a database the
/// first one created (it used to read page 1 as empty: "file is not a database").
#[test]
fn a_descriptor_that_read_to_the_end_sees_later_writes() {
    let sandbox = Sandbox::new();
    let script = "import os, sqlite3, forge\n\
         a = os.open('/work/grows', os.O_RDWR | os.O_CREAT)\n\
         b = os.open('/work/grows', os.O_RDONLY)\n\
         first = os.read(b, 10)\n\
         os.write(a, b'hello world')\n\
         os.lseek(b, 0, os.SEEK_SET)\n\
         again = os.read(b, 11)\n\
         os.write(a, b'!')\n\
         more = os.read(b, 5)\n\
         one = sqlite3.connect('/work/t.db')\n\
         two = sqlite3.connect('/work/t.db')\n\
         one.execute('create table t(x)')\n\
         one.execute('insert into t values (1)')\n\
         one.commit()\n\
         rows = two.execute('select count(*) from t').fetchone()[0]\n\
         forge.result({'first': first.decode(), 'again': again.decode(), 'more': more.decode(), 'rows': rows})\n";
    for engine in ["python-cpython", "python-science"] {
        let value = value_of(&sandbox, script, &["--engine", engine]);
        assert_eq!(
            value,
            json!({"first": "", "again": "hello world", "more": "!", "rows": 1}),
            "{engine}"
        );
    }
}

/// Several connections to one SQLite file in one run answer as native SQLite does inside one
/// process (#43 §3): a reader sees the committed rows while another connection writes, a second
/// writer gets `database is locked` at once, and each sees the other's commits. The built-in
/// `_sqlite3` locked the file with dot-files, so the read during the write failed too.
#[test]
fn sqlite_connections_to_one_file_answer_as_natively() {
    let sandbox = Sandbox::new();
    let script = "import sqlite3, forge\n\
         a = sqlite3.connect('/work/t.db')\n\
         b = sqlite3.connect('/work/t.db', timeout=0)\n\
         a.execute('create table t(x)')\n\
         a.execute('insert into t values (1)')\n\
         a.commit()\n\
         a.execute('begin')\n\
         a.execute('insert into t values (2)')\n\
         during = b.execute('select count(*) from t').fetchone()[0]\n\
         try:\n    b.execute('insert into t values (3)')\n    locked = None\n\
         except sqlite3.OperationalError as e:\n    locked = str(e)\n\
         a.commit()\n\
         after = b.execute('select count(*) from t').fetchone()[0]\n\
         b.execute('insert into t values (3)')\n\
         b.commit()\n\
         seen = [r[0] for r in a.execute('select x from t order by x')]\n\
         c = sqlite3.connect('/work/u.db')\n\
         d = sqlite3.connect('/work/u.db')\n\
         c.execute('create table t(x)')\n\
         c.commit()\n\
         empty = d.execute('select count(*) from t').fetchone()[0]\n\
         forge.result({'during': during, 'locked': locked, 'after': after, 'seen': seen, 'empty': empty})\n";
    // native CPython with SQLite gives exactly this
    let native = json!({"during": 1, "locked": "database is locked", "after": 2, "seen": [1, 2, 3], "empty": 0});
    for engine in ["python-cpython", "python-science"] {
        assert_eq!(
            value_of(&sandbox, script, &["--engine", engine]),
            native,
            "{engine}"
        );
    }
}
