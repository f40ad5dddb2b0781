//! test262 as forge-host runs it, shared word for word by the two sides of the comparison: the
//! native baseline (`bench/quickjs-native/src/test262.rs`, the `test262-native` binary) and the
//! engine (`tests/test262/main.rs`, the host's `test262` test). Both include this file, so a test
//! is found, wrapped and judged the same way on both; only the QuickJS underneath differs.
//!
//! A test becomes one script, the body the engine wraps in `(async function () {…\n})` and
//! evaluates as a non-strict global script (`components/quickjs/src/runner.rs`): `"use strict";`
//! first for an `onlyStrict` test, then the harness (`assert.js`, `sta.js`, a small `$262`, for an
//! `async` test `doneprintHandle.js` with a `print` that settles the promise the script returns,
//! then the test's `includes`), then the test. A `raw` test is its source alone. Tests run once:
//! non-strict, unless flagged `onlyStrict` (the engine runs scripts non-strict; a test without
//! flags is not run a second time in strict mode).

// Each side uses its own part of this file.
#![allow(
    dead_code,
    reason = "shared by the native runner and the engine's test"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The folders of `test/` that run on both sides: ECMA-262 and Annex B.
pub const FOLDERS: [&str; 3] = ["built-ins", "language", "annexB"];

/// ECMA-402's folder: it runs in the engine only, since the QuickJS-ng the engine embeds has no
/// `Intl` to compare with (see `INTL402_FLOOR`).
pub const INTL402: &str = "intl402";

/// What each side allows one test.
pub const TIMEOUT_SECS: u64 = 10;
/// The engine's default memory limit (`Limits::default()`), which the native side copies.
pub const MEMORY_BYTES: usize = 256 << 20;

/// What the async harness's `print` settles the script's promise with when `$DONE()` passed.
const ASYNC_COMPLETE: &str = "Test262:AsyncTestComplete";

/// A test's frontmatter: what this runner reads of it.
#[derive(Debug, Default, Clone)]
pub struct Meta {
    pub includes: Vec<String>,
    pub flags: Vec<String>,
    pub features: Vec<String>,
    /// `negative`: its phase and the error's type.
    pub negative: Option<(String, String)>,
}

impl Meta {
    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }
}

/// The items of a YAML flow list (`[a, b]`) or of a block list's `- a` lines.
fn list_items(inline: &str, block: &[&str]) -> Vec<String> {
    let inline = inline.trim();
    if let Some(inner) = inline.strip_prefix('[') {
        return inner
            .trim_end_matches(']')
            .split(',')
            .map(|item| item.trim().to_string())
            .filter(|item| !item.is_empty())
            .collect();
    }
    block
        .iter()
        .map_while(|line| line.trim().strip_prefix("- "))
        .map(|item| item.trim().to_string())
        .collect()
}

/// Reads the frontmatter between `/*---` and `---*/`; `None` when there is none.
pub fn parse_meta(source: &str) -> Option<Meta> {
    let start = source.find("/*---")? + 5;
    let end = start + source[start..].find("---*/")?;
    let lines: Vec<&str> = source[start..end].lines().collect();
    let mut meta = Meta::default();
    for (i, line) in lines.iter().enumerate() {
        let rest = &lines[i + 1..];
        if let Some(value) = line.strip_prefix("includes:") {
            meta.includes = list_items(value, rest);
        } else if let Some(value) = line.strip_prefix("flags:") {
            meta.flags = list_items(value, rest);
        } else if let Some(value) = line.strip_prefix("features:") {
            meta.features = list_items(value, rest);
        } else if line.starts_with("negative:") {
            let field = |name: &str| {
                rest.iter()
                    .take_while(|l| l.starts_with(' ') || l.is_empty())
                    .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
                    .unwrap_or_default()
            };
            meta.negative = Some((field("phase:"), field("type:")));
        }
    }
    Some(meta)
}

/// Every test file under the [`FOLDERS`] of `root/test`, as paths relative to `root/test`
/// (`built-ins/Array/length.js`), sorted. Fixtures (`*_FIXTURE.js`) are not tests.
pub fn discover(root: &Path) -> std::io::Result<Vec<String>> {
    discover_in(root, &FOLDERS)
}

/// Every test file under `folders` of `root/test`, as [`discover`] lists them.
pub fn discover_in(root: &Path, folders: &[&str]) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = folders.iter().map(|f| root.join("test").join(f)).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && name.ends_with(".js")
                && !name.contains("_FIXTURE")
                && let Ok(relative) = path.strip_prefix(root.join("test"))
            {
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A test ready to run, or the reason it does not.
pub enum Plan {
    Run { script: String, meta: Meta },
    Skip(&'static str),
}

/// Why a test is not run at all (on either side).
pub fn skip_reason(meta: &Meta) -> Option<&'static str> {
    if meta.flag("module") {
        return Some("a module: the engine runs a script as an async function body");
    }
    if meta
        .negative
        .as_ref()
        .is_some_and(|(phase, _)| phase == "resolution")
    {
        return Some("module resolution: the engine runs no modules");
    }
    None
}

/// The harness files (`harness/*.js`), read once.
pub struct Harness {
    files: HashMap<String, String>,
}

/// A `$262` of what a script can do for itself: the global object, a script evaluated in the
/// global scope (indirect eval) and a detached buffer (`ArrayBuffer.prototype.transfer`). No
/// realms, agents, `gc` or `IsHTMLDDA`: tests that need them fail on both sides.
const HOST_262: &str = "var $262 = {
  global: globalThis,
  evalScript: function (source) { return (0, eval)(source); },
  detachArrayBuffer: function (buffer) { buffer.transfer(); },
};
";

/// Defined before `doneprintHandle.js`: its `print` settles the promise the script returns.
const ASYNC_PRINT: &str = "var __test262Settle;
var __test262Done = new Promise(function (resolve) { __test262Settle = resolve; });
function print(message) { __test262Settle(String(message)); }
";

impl Harness {
    pub fn load(root: &Path) -> std::io::Result<Self> {
        let mut files = HashMap::new();
        for entry in std::fs::read_dir(root.join("harness"))? {
            let path = entry?.path();
            if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && name.ends_with(".js")
            {
                files.insert(name.to_string(), std::fs::read_to_string(&path)?);
            }
        }
        Ok(Harness { files })
    }

    fn file(&self, name: &str) -> std::io::Result<&str> {
        self.files.get(name).map(String::as_str).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("harness/{name}"))
        })
    }

    /// The script the engine runs for the test at `relative` (under `root/test`).
    pub fn plan(&self, root: &Path, relative: &str) -> std::io::Result<Plan> {
        let source = std::fs::read_to_string(root.join("test").join(relative))?;
        let Some(meta) = parse_meta(&source) else {
            return Ok(Plan::Skip("no frontmatter"));
        };
        if let Some(reason) = skip_reason(&meta) {
            return Ok(Plan::Skip(reason));
        }
        let mut script = String::new();
        if meta.flag("raw") {
            script.push_str(&source);
            return Ok(Plan::Run { script, meta });
        }
        if meta.flag("onlyStrict") {
            script.push_str("\"use strict\";\n");
        }
        script.push_str(HOST_262);
        let mut includes = vec!["assert.js", "sta.js"];
        if meta.flag("async") {
            script.push_str(ASYNC_PRINT);
            includes.push("doneprintHandle.js");
        }
        includes.extend(meta.includes.iter().map(String::as_str));
        for name in includes {
            script.push_str(self.file(name)?);
            script.push('\n');
            // `asyncHelpers.js` looks for `$DONE` on the global object, where the official
            // harness's script puts it; here it is the async function's own.
            if name == "doneprintHandle.js" {
                script.push_str("globalThis.$DONE = $DONE;\n");
            }
        }
        script.push_str(&source);
        if meta.flag("async") {
            script.push_str("\n;return __test262Done;");
        }
        Ok(Plan::Run { script, meta })
    }
}

/// How a run ended, in the terms both sides can report.
#[derive(Debug)]
pub enum Outcome {
    /// The script did not compile: the error as `Name: message`.
    Syntax(String),
    /// The script threw, or its promise rejected: `Name: message` for an `Error`, `Uncaught …`
    /// for any other value (what the engine's `describeError` writes).
    Threw(String),
    /// The script's promise resolved, with this string (`None` for any other value).
    Returned(Option<String>),
    /// It did not finish: timeout, memory, a promise nothing settles, a trap.
    Stopped(String),
}

/// Whether an error text names `kind` (`TypeError: …`). A `Test262Error` is no `Error`, so the
/// engine shows it as `Uncaught {…}`.
fn names_type(text: &str, kind: &str) -> bool {
    text.starts_with(&format!("{kind}:"))
        || text == kind
        || (kind == "Test262Error" && text.starts_with("Uncaught"))
}

/// Whether `outcome` passes the test described by `meta`; `Err` says why not.
pub fn verdict(meta: &Meta, outcome: &Outcome) -> Result<(), String> {
    let short = |text: &str| text.chars().take(300).collect::<String>();
    match (&meta.negative, outcome) {
        (Some((phase, kind)), Outcome::Syntax(text)) if phase == "parse" => {
            if names_type(text, kind) {
                Ok(())
            } else {
                Err(format!(
                    "expected a {kind} at parse time, got {}",
                    short(text)
                ))
            }
        }
        (Some((phase, kind)), Outcome::Threw(text)) if phase == "runtime" => {
            if names_type(text, kind) {
                Ok(())
            } else {
                Err(format!(
                    "expected a {kind} at run time, got {}",
                    short(text)
                ))
            }
        }
        (Some((phase, kind)), other) => Err(format!(
            "expected a {kind} in phase {phase}, got {}",
            describe(other)
        )),
        (None, Outcome::Returned(value)) if meta.flag("async") => match value.as_deref() {
            Some(ASYNC_COMPLETE) => Ok(()),
            Some(text) => Err(short(text)),
            None => Err("the async test's promise resolved without $DONE".into()),
        },
        (None, Outcome::Returned(_)) => Ok(()),
        (None, other) => Err(describe(other)),
    }
}

fn describe(outcome: &Outcome) -> String {
    let text = match outcome {
        Outcome::Syntax(text) => format!("did not compile: {text}"),
        Outcome::Threw(text) => format!("threw {text}"),
        Outcome::Returned(value) => format!("returned {value:?}"),
        Outcome::Stopped(text) => format!("stopped: {text}"),
    };
    text.chars().take(300).collect()
}
