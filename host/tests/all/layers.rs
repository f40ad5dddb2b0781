//! The structure ARCHITECTURE.md describes, checked: modules of `host/src` import only their own
//! layer or the ones below, the modules do not import each other in circles, and no file is
//! over 600 lines. Issue 9.

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

/// Longest file allowed in `host/src`.
const MAX_LINES: usize = 600;

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
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
    for entry in std::fs::read_dir(dir).expect("read host/src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
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
                Some(below) if below >= layer => {}
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
    let circle = violations(&edges(&[("tools", "engines"), ("engines", "tools")]));
    assert_eq!(circle.len(), 1, "{circle:?}");
    assert!(circle[0].contains("circle"), "{circle:?}");
}
