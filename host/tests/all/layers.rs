//! The structure ARCHITECTURE.md describes, checked: modules of `host/src` import only their own
//! layer or the ones below (and, inside layer 4, keep its order), neither the modules nor the
//! files inside one module import each other in circles, and no Rust file of the repository
//! (the host, its tests, xtask, the other crates, the components) is over 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top to bottom. A module may import modules of its own layer or of lower ones.
const LAYERS: [&[&str]; 5] = [
    &["cli"],
    &["mcp_server", "conformance", "cluster"],
    &["kernel"],
    &[
        "engines", "tools", "state", "output", "files", "packages", "tape", "journal",
    ],
    &[
        "limits",
        "permissions",
        "error",
        "datadir",
        "primitives",
        "json",
        "json_lines",
    ],
];

/// The order inside layer 4, top to bottom: the engines adapt the other concerns to the WIT
/// imports; tool calls are taped and journaled; the journal defines what is persisted.
const LAYER_4_ORDER: [&[&str]; 4] = [
    &["engines"],
    &["tools"],
    &["state", "output", "files", "packages", "tape"],
    &["journal"],
];

/// Longest source file allowed anywhere in the repository, in any language.
const MAX_LINES: usize = 600;

/// The folders, from the repository's root, whose source files the line cap covers.
const CAPPED: [&str; 14] = [
    "host/src",
    "host/tests",
    "host/examples",
    "tests/cli",
    "tests/test262",
    "tests/peers",
    "tests/cases",
    "xtask/src",
    "pyodide-fetch/src",
    "engine-lock/src",
    "components",
    "bench",
    "fuzz/fuzz_targets",
    "wit",
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn layer_4_rank(module: &str) -> Option<usize> {
    LAYER_4_ORDER.iter().position(|rank| rank.contains(&module))
}

/// The top-level module a file of `host/src` belongs to (`None` for `lib.rs` and `main.rs`).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (module != "lib" && module != "main").then(|| module.to_string())
}

/// The crate's top-level modules named by `crate::`/`forge_host::` paths in `source`, comments
/// left out.
fn imported_modules(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for prefix in ["crate::", "forge_host::"] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + prefix.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    let group = group.split('}').next().unwrap_or_default();
                    found.extend(group.split(',').filter_map(first_segment));
                } else if let Some(name) = first_segment(rest) {
                    found.insert(name);
                }
            }
        }
    }
    found
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name.chars().all(|c| c.is_lowercase() || c == '_')).then_some(name)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, &["rs"], out);
}

/// The source languages the line cap covers: Rust, JavaScript, TypeScript declarations,
/// Python, Lua and WIT.
const SOURCE_EXTENSIONS: [&str; 6] = ["rs", "js", "ts", "py", "lua", "wit"];

/// Files below `dir` whose extension is one of `extensions`, leaving out build output and
/// installed packages.
fn files_with(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let skipped = path.file_name().is_some_and(|n| {
            n == "target" || n == "node_modules" || n == "__pycache__" || n == ".venv"
        });
        if path.is_dir() && !skipped {
            files_with(&path, extensions, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e))
        {
            out.push(path);
        }
    }
}

/// Every rule broken by the modules' imports `edges` (module -> modules it imports).
fn violations(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for (module, imports) in edges {
        let Some(layer) = layer_of(module) else {
            found.push(format!(
                "`{module}` is in no layer: add it to ARCHITECTURE.md and LAYERS"
            ));
            continue;
        };
        for import in imports.iter().filter(|i| *i != module) {
            match layer_of(import) {
                Some(below) if below > layer => {}
                Some(same) if same == layer => {
                    if let (Some(from), Some(to)) = (layer_4_rank(module), layer_4_rank(import))
                        && to < from
                    {
                        found.push(format!(
                            "`{module}` imports `{import}`, above it in layer 4's order"
                        ));
                    }
                }
                Some(_) => found.push(format!("`{module}` imports `{import}`, a layer above it")),
                None => {}
            }
        }
    }
    if let Some(circle) = find_circle(edges) {
        found.push(format!(
            "modules import each other in a circle: {}",
            circle.join(" -> ")
        ));
    }
    found
}

/// A circle in `edges`, if there is one.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten().filter(|n| *n != node) {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// The module path of a file of `host/src` (`journal::store` for `journal/store.rs`,
/// `journal` for `journal/mod.rs`); `None` for `lib.rs` and `main.rs`.
fn file_module(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(String::from))
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    (!parts.is_empty() && parts != ["lib"] && parts != ["main"]).then_some(parts)
}

/// The files of one module that a file at module path `at` imports through `super::` and
/// `crate::` paths in `source`: its siblings, by module path. The module's own `mod.rs` is left
/// out (it re-exports its files, so every file reaches it).
fn sibling_imports(
    at: &[String],
    source: &str,
    files: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (start, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut path = &code[start..];
            let mut base: Vec<String> = at.to_vec();
            if let Some(after) = path.strip_prefix("crate::") {
                base.clear();
                path = after;
            } else {
                while let Some(after) = path.strip_prefix("super::") {
                    base.pop();
                    path = after;
                }
            }
            let items: Vec<&str> = match path.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .collect(),
                None => vec![path],
            };
            for item in items {
                if let Some(target) = deepest_file(&base, item, files)
                    && target.len() == at.len()
                    && target[..target.len() - 1] == at[..at.len() - 1]
                    && target != at
                {
                    found.insert(target);
                }
            }
        }
    }
    found
}

/// The deepest file of `files` that the path `item` names, read from module `base`.
fn deepest_file(base: &[String], item: &str, files: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut walked = base.to_vec();
    let mut target = None;
    for segment in item.trim().split("::") {
        let name: String = segment
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        walked.push(name);
        if !files.contains(&walked) {
            break;
        }
        target = Some(walked.clone());
    }
    target
}

#[test]
fn no_two_files_of_one_module_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: BTreeMap<Vec<String>, PathBuf> = paths
        .iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(&src).ok()?;
            Some((file_module(relative)?, file.clone()))
        })
        .collect();
    let known: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (at, file) in &files {
        let source = std::fs::read_to_string(file).expect("read a source file");
        let imports = sibling_imports(at, &source, &known);
        edges
            .entry(at.join("::"))
            .or_default()
            .extend(imports.iter().map(|target| target.join("::")));
    }
    assert!(
        edges
            .get("journal::group")
            .is_some_and(|e| e.contains("journal::transaction")),
        "the scan sees files import their siblings: {edges:#?}"
    );
    if let Some(circle) = find_circle(&edges) {
        panic!(
            "files import each other in a circle: {}",
            circle.join(" -> ")
        );
    }
}

#[test]
fn every_source_file_of_the_repository_stays_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    let mut seen = 0;
    for folder in CAPPED {
        let mut files = Vec::new();
        files_with(&root.join(folder), &SOURCE_EXTENSIONS, &mut files);
        for file in files {
            seen += 1;
            let lines = std::fs::read_to_string(&file).map_or(0, |s| s.lines().count());
            if lines > MAX_LINES {
                let shown = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                problems.push(format!("{shown} has {lines} lines (at most {MAX_LINES})"));
            }
        }
    }
    assert!(seen > 100, "the scan found the files ({seen})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn modules_import_only_their_layer_or_lower_ones_and_files_stay_small() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("read a source file");
        let relative = file.strip_prefix(&src).expect("below src");
        let lines = source.lines().count();
        if lines > MAX_LINES {
            problems.push(format!(
                "{} has {lines} lines (at most {MAX_LINES})",
                relative.display()
            ));
        }
        if let Some(module) = module_of(relative) {
            let imports = imported_modules(&source);
            let known: BTreeSet<String> = imports
                .into_iter()
                .filter(|m| layer_of(m).is_some())
                .collect();
            edges.entry(module).or_default().extend(known);
        }
    }
    problems.extend(violations(&edges));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        edges.contains_key("kernel") && edges.contains_key("cli"),
        "the scan found the modules"
    );
}

#[test]
fn the_check_sees_an_upward_import_and_a_circle() {
    assert_eq!(
        imported_modules(
            "use crate::kernel::Kernel;\nuse crate::{journal::X, limits};\n// crate::cli\nlet x = forge_host::state::y();"
        ),
        ["journal", "kernel", "limits", "state"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let edges = |pairs: &[(&str, &str)]| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in pairs {
            map.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
            map.entry(to.to_string()).or_default();
        }
        map
    };
    assert!(violations(&edges(&[("kernel", "journal"), ("journal", "limits")])).is_empty());
    let upward = violations(&edges(&[("journal", "kernel")]));
    assert_eq!(upward, ["`journal` imports `kernel`, a layer above it"]);
    let out_of_order = violations(&edges(&[("journal", "tools")]));
    assert_eq!(
        out_of_order,
        ["`journal` imports `tools`, above it in layer 4's order"]
    );
    assert!(violations(&edges(&[("engines", "journal"), ("tools", "tape")])).is_empty());
    let known: BTreeSet<Vec<String>> = [["journal", "group"], ["journal", "store"]]
        .map(|p| p.map(String::from).to_vec())
        .into_iter()
        .collect();
    let at = ["journal".to_string(), "store".to_string()];
    assert_eq!(
        sibling_imports(
            &at,
            "use super::group::{Change};\nuse crate::journal::store::x;",
            &known
        ),
        [vec!["journal".to_string(), "group".to_string()]]
            .into_iter()
            .collect()
    );
    let circle = violations(&edges(&[("state", "files"), ("files", "state")]));
    assert_eq!(circle.len(), 1, "{circle:?}");
    assert!(circle[0].contains("circle"), "{circle:?}");
}
