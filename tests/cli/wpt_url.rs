//! web-platform-tests' URL data (`urltestdata.json`, `setters_tests.json`) run inside the
//! JavaScript engine: every parsing case through `new URL(input, base)` and `URL.canParse`, and
//! every setter case, as WPT's `url-constructor.any.js` and `url-setters.any.js` check them. The
//! data ships in the `url` crate's package (its `tests/` folder), which the engine is built
//! from, so the test finds it in cargo's registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::util::{NO_ARGS, Sandbox, repo};

/// The `url` crate's version in Cargo.lock.
fn url_version() -> String {
    let lock = std::fs::read_to_string(repo().join("Cargo.lock")).expect("read Cargo.lock");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"url\"" {
            let version = lines.next().unwrap_or_default();
            return version
                .trim_start_matches("version = \"")
                .trim_end_matches('"')
                .to_string();
        }
    }
    panic!("Cargo.lock has no `url` package");
}

/// The `tests/` folder of the `url` crate's package in cargo's registry.
fn wpt_data() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let folder = format!("url-{}", url_version());
    let registries = std::fs::read_dir(home.join("registry/src")).expect("cargo's registry");
    registries
        .filter_map(Result::ok)
        .map(|registry| registry.path().join(&folder).join("tests"))
        .find(|tests| tests.join("urltestdata.json").exists())
        .unwrap_or_else(|| {
            panic!(
                "{folder}/tests/urltestdata.json is in cargo's registry once the engine is built"
            )
        })
}

const HARNESS: &str = r#"
// A case's name as the url crate's own WPT runner writes it (Rust's `escape_default`), so that
// its expected_failures.txt names the same cases.
const esc = (s) => [...s].map((ch) => {
  const c = ch.codePointAt(0);
  if (ch === "\t") return "\\t";
  if (ch === "\r") return "\\r";
  if (ch === "\n") return "\\n";
  if (ch === "\\" || ch === "'" || ch === '"') return "\\" + ch;
  return c >= 0x20 && c <= 0x7e ? ch : `\\u{${c.toString(16)}}`;
}).join("");
const PARTS = ["href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
const failures = [];
const fail = (name, why) => failures.push([name, why]);
let parsing = 0, setters = 0;
for (const t of PARSING) {
  if (typeof t === "string") continue;
  parsing++;
  const name = `<${esc(t.input)}>` + (t.base === null || t.base === undefined ? "" : ` against <${esc(t.base)}>`);
  const make = () => (t.base === null || t.base === undefined ? new URL(t.input) : new URL(t.input, t.base));
  const can = t.base === null || t.base === undefined ? URL.canParse(t.input) : URL.canParse(t.input, t.base);
  if (t.failure) {
    let threw = false;
    try { make(); } catch (e) { threw = e instanceof TypeError; }
    if (!threw) fail(name, `should throw TypeError`);
    if (can) fail(name, `canParse should be false`);
    continue;
  }
  let url;
  try { url = make(); } catch (e) { fail(name, `threw ${e}`); continue; }
  if (!can) fail(name, `canParse should be true`);
  for (const part of PARTS) if (url[part] !== t[part]) fail(name, `${part}: ${JSON.stringify(url[part])} != ${JSON.stringify(t[part])}`);
  if ("origin" in t && url.origin !== t.origin) fail(name, `origin: ${url.origin} != ${t.origin}`);
  if (url.searchParams.toString() !== new URLSearchParams(t.search).toString()) fail(name, `searchParams`);
}
for (const [setter, cases] of Object.entries(SETTERS)) {
  if (setter === "comment") continue;
  for (const t of cases) {
    setters++;
    const name = `<${esc(t.href)}> set ${setter} to <${esc(t.new_value)}>`;
    const url = new URL(t.href);
    url[setter] = t.new_value;
    for (const [part, want] of Object.entries(t.expected)) {
      if (url[part] !== want) fail(name, `.${part} is ${JSON.stringify(url[part])}, want ${JSON.stringify(want)}`);
    }
  }
}
return { parsing, setters, failures };
"#;

/// The case names of the url crate's `expected_failures.txt`, one a line.
fn names(list: &str) -> BTreeSet<String> {
    list.lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn wpt_url_parsing_and_setter_data_pass_inside_the_engine() {
    let data = wpt_data();
    let read = |name: &str| std::fs::read_to_string(data.join(name)).expect("read WPT data");
    let source = format!(
        "const PARSING = {};\nconst SETTERS = {};\n{HARNESS}",
        read("urltestdata.json"),
        read("setters_tests.json")
    );
    let sandbox = Sandbox::new();
    let report = sandbox.run_js(&source, NO_ARGS).assert_succeeded();
    let value = &report["value"];
    let parsing = value["parsing"].as_u64().unwrap_or(0);
    let setters = value["setters"].as_u64().unwrap_or(0);
    assert!(parsing > 500 && setters > 100, "{value}");
    // The url crate's maintainers list what its parser does not do yet (its own WPT run's
    // expected failures): the engine is held to the same list and nothing more.
    let accepted = names(&read("expected_failures.txt"));
    let failed: BTreeMap<String, String> = value["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f[0].as_str()?.to_string(), f[1].as_str()?.to_string())))
        .collect();
    let unexpected: Vec<String> = failed
        .iter()
        .filter(|(name, _)| !accepted.contains(*name))
        .map(|(name, why)| format!("{name}: {why}"))
        .collect();
    eprintln!(
        "WPT URL: {parsing} parsing cases, {setters} setter cases; {} fail, all in the known lists: {}",
        failed.len(),
        unexpected.is_empty()
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
