//! Workspace tools (`--workspace DIR`): `workspace.read`, `.list`, `.search` (effect
//! `read`) and `.write`, `.delete` (effect `write`), rooted at DIR. Every path is resolved by
//! cap-std inside the folder, so no `..`, absolute path or symlink leads out of it; paths are
//! also checked up front, for a clear message.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde_json::{Value, json};

use super::{Effect, Tool, ToolError, ToolFuture, ToolInfo, ToolRegistry};

/// Largest file `workspace.read` loads (the response budget usually says no sooner).
const MAX_READ_BYTES: u64 = 64 << 20;
/// Matches `workspace.search` returns at most.
const MAX_MATCHES: usize = 1000;
/// Files `workspace.search` looks at, at most.
const MAX_SEARCHED_FILES: usize = 10_000;
/// Files larger than this are not searched.
const MAX_SEARCHED_FILE_BYTES: u64 = 1 << 20;
/// Longest line quoted in a match, in bytes.
const MAX_MATCH_TEXT_BYTES: usize = 500;
/// Largest compiled search pattern.
const MAX_PATTERN_BYTES: usize = 1 << 20;

/// What each workspace tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Read,
    List,
    Search,
    Write,
    Delete,
}

impl Operation {
    const ALL: [Operation; 5] = [
        Operation::Read,
        Operation::List,
        Operation::Search,
        Operation::Write,
        Operation::Delete,
    ];

    fn info(self) -> ToolInfo {
        let path = json!({"type": "string", "description": "A path relative to the workspace"});
        let (name, description, schema, effect) = match self {
            Operation::Read => (
                "read",
                "Reads a file of the workspace: {path, content, size}; a file that is not UTF-8 text comes back as base64 with encoding: \"base64\".",
                json!({"type": "object", "properties": {"path": path}, "required": ["path"], "additionalProperties": false}),
                Effect::Read,
            ),
            Operation::List => (
                "list",
                "Lists a folder of the workspace (its root by default): {entries: [{name, kind, size}]}.",
                json!({"type": "object", "properties": {"path": path}, "additionalProperties": false}),
                Effect::Read,
            ),
            Operation::Search => (
                "search",
                "Searches the workspace's text files (or those below path) for a regular expression: {matches: [{path, line, text}], truncated}.",
                json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": path}, "required": ["pattern"], "additionalProperties": false}),
                Effect::Read,
            ),
            Operation::Write => (
                "write",
                "Writes a file of the workspace, creating its folders and replacing it whole: {path, bytes}. content is text, or base64 with encoding: \"base64\".",
                json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}, "encoding": {"enum": ["utf-8", "base64"]}}, "required": ["path", "content"], "additionalProperties": false}),
                Effect::Write,
            ),
            Operation::Delete => (
                "delete",
                "Deletes a file (or an empty folder) of the workspace: {path, deleted}.",
                json!({"type": "object", "properties": {"path": path}, "required": ["path"], "additionalProperties": false}),
                Effect::Write,
            ),
        };
        ToolInfo {
            name: format!("workspace.{name}"),
            description: description.into(),
            input_schema: schema,
            effect,
        }
    }
}

/// One workspace tool.
struct WorkspaceTool {
    info: ToolInfo,
    operation: Operation,
    root: Arc<Dir>,
}

/// Adds the workspace tools rooted at `dir` to `registry`.
pub fn register(registry: &mut ToolRegistry, dir: &Path) -> std::io::Result<()> {
    let root = Arc::new(Dir::open_ambient_dir(dir, ambient_authority())?);
    for operation in Operation::ALL {
        registry.register(Arc::new(WorkspaceTool {
            info: operation.info(),
            operation,
            root: root.clone(),
        }));
    }
    Ok(())
}

impl Tool for WorkspaceTool {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn call(&self, input: Value) -> ToolFuture {
        let root = self.root.clone();
        let operation = self.operation;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || run(&root, operation, &input))
                .await
                .unwrap_or_else(|e| {
                    Err(ToolError::failed(format!("the workspace tool failed: {e}")))
                })
        })
    }

    fn paths(&self, input: &Value) -> Vec<String> {
        input
            .get("path")
            .and_then(Value::as_str)
            .map(|p| vec![p.to_string()])
            .unwrap_or_default()
    }
}

fn run(root: &Dir, operation: Operation, input: &Value) -> Result<Value, ToolError> {
    match operation {
        Operation::Read => read(root, &required_path(input)?),
        Operation::List => list(root, &optional_path(input)?),
        Operation::Search => search(root, input),
        Operation::Write => write(root, &required_path(input)?, input),
        Operation::Delete => delete(root, &required_path(input)?),
    }
}

/// A path below the workspace: relative, without `..`, as the caller wrote it (for replies).
fn checked(text: &str) -> Result<PathBuf, ToolError> {
    let path = Path::new(text);
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::invalid_input(format!(
                    "`{text}`: `..` is not allowed; paths stay inside the workspace"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::invalid_input(format!(
                    "`{text}`: an absolute path is not allowed; paths are relative to the workspace"
                )));
            }
        }
    }
    Ok(clean)
}

fn required_path(input: &Value) -> Result<PathBuf, ToolError> {
    let text = input
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_input("`path` (a string) is required"))?;
    let path = checked(text)?;
    if path.as_os_str().is_empty() {
        return Err(ToolError::invalid_input(
            "`path` names the workspace itself",
        ));
    }
    Ok(path)
}

fn optional_path(input: &Value) -> Result<PathBuf, ToolError> {
    match input.get("path") {
        None | Some(Value::Null) => Ok(PathBuf::new()),
        Some(Value::String(text)) => checked(text),
        Some(_) => Err(ToolError::invalid_input("`path` must be a string")),
    }
}

/// `.` for the workspace root, which cap-std wants spelled out.
fn or_root(path: &Path) -> &Path {
    if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    }
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn io_failed(path: &Path, error: std::io::Error) -> ToolError {
    let text = shown(path);
    match error.kind() {
        std::io::ErrorKind::NotFound => ToolError::failed(format!("`{text}` does not exist")),
        std::io::ErrorKind::PermissionDenied => ToolError::failed(format!(
            "`{text}` cannot be reached: it is outside the workspace or not permitted ({error})"
        )),
        _ => ToolError::failed(format!("`{text}`: {error}")),
    }
}

fn read(root: &Dir, path: &Path) -> Result<Value, ToolError> {
    let mut file = root.open(path).map_err(|e| io_failed(path, e))?;
    let meta = file.metadata().map_err(|e| io_failed(path, e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "`{}` is a folder: use workspace.list",
            shown(path)
        )));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(ToolError::failed(format!(
            "`{}` is {} bytes, over the {MAX_READ_BYTES} bytes workspace.read loads",
            shown(path),
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_failed(path, e))?;
    let size = bytes.len();
    Ok(match String::from_utf8(bytes) {
        Ok(text) => json!({"path": shown(path), "content": text, "size": size}),
        Err(not_text) => json!({
            "path": shown(path),
            "content": base64::engine::general_purpose::STANDARD.encode(not_text.as_bytes()),
            "encoding": "base64",
            "size": size,
        }),
    })
}

fn kind(file_type: cap_std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "dir"
    } else if file_type.is_file() {
        "file"
    } else if file_type.is_symlink() {
        "symlink"
    } else {
        "other"
    }
}

fn list(root: &Dir, path: &Path) -> Result<Value, ToolError> {
    let entries = root
        .read_dir(or_root(path))
        .map_err(|e| io_failed(path, e))?;
    let mut listed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_failed(path, e))?;
        let file_type = entry.file_type().map_err(|e| io_failed(path, e))?;
        let size = if file_type.is_file() {
            entry.metadata().map(|m| m.len()).unwrap_or(0)
        } else {
            0
        };
        listed.push(json!({
            "name": entry.file_name().to_string_lossy(),
            "kind": kind(file_type),
            "size": size,
        }));
    }
    listed.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(json!({ "entries": listed }))
}

/// What a search found so far, within its bounds.
struct Found {
    matches: Vec<Value>,
    files: usize,
    truncated: bool,
}

fn search(root: &Dir, input: &Value) -> Result<Value, ToolError> {
    let pattern = input
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_input("`pattern` (a regular expression) is required"))?;
    let regex = regex::RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_BYTES)
        .build()
        .map_err(|e| {
            ToolError::invalid_input(format!("`pattern` is not a regular expression: {e}"))
        })?;
    let start = optional_path(input)?;
    let mut found = Found {
        matches: Vec::new(),
        files: 0,
        truncated: false,
    };
    let meta = root
        .symlink_metadata(or_root(&start))
        .map_err(|e| io_failed(&start, e))?;
    if meta.is_file() {
        search_file(root, &start, &regex, &mut found);
    } else {
        search_dir(root, &start, &regex, &mut found)?;
    }
    Ok(json!({"matches": found.matches, "truncated": found.truncated}))
}

fn search_dir(
    root: &Dir,
    dir: &Path,
    regex: &regex::Regex,
    found: &mut Found,
) -> Result<(), ToolError> {
    let entries = root.read_dir(or_root(dir)).map_err(|e| io_failed(dir, e))?;
    let mut children: Vec<(String, cap_std::fs::FileType)> = entries
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.file_type().ok()?)))
        .collect();
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, file_type) in children {
        if found.truncated {
            return Ok(());
        }
        let path = dir.join(&name);
        // Symlinks are not followed: what they point at may be outside the workspace.
        if file_type.is_dir() {
            search_dir(root, &path, regex, found)?;
        } else if file_type.is_file() {
            search_file(root, &path, regex, found);
        }
    }
    Ok(())
}

fn search_file(root: &Dir, path: &Path, regex: &regex::Regex, found: &mut Found) {
    found.files += 1;
    if found.files > MAX_SEARCHED_FILES {
        found.truncated = true;
        return;
    }
    let too_big = root
        .metadata(path)
        .map(|m| m.len() > MAX_SEARCHED_FILE_BYTES)
        .unwrap_or(true);
    if too_big {
        return;
    }
    let Ok(text) = root.read_to_string(path) else {
        return; // not text
    };
    for (number, line) in text.lines().enumerate() {
        if regex.is_match(line) {
            if found.matches.len() >= MAX_MATCHES {
                found.truncated = true;
                return;
            }
            found.matches.push(json!({
                "path": shown(path),
                "line": number + 1,
                "text": crate::primitives::truncate_at(line, MAX_MATCH_TEXT_BYTES),
            }));
        }
    }
}

fn write(root: &Dir, path: &Path, input: &Value) -> Result<Value, ToolError> {
    let content = input
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_input("`content` (a string) is required"))?;
    let bytes = match input.get("encoding").and_then(Value::as_str) {
        None | Some("utf-8") => content.as_bytes().to_vec(),
        Some("base64") => base64::engine::general_purpose::STANDARD
            .decode(content)
            .map_err(|e| ToolError::invalid_input(format!("`content` is not base64: {e}")))?,
        Some(other) => {
            return Err(ToolError::invalid_input(format!(
                "unknown encoding `{other}` (utf-8 or base64)"
            )));
        }
    };
    let parent = path.parent().unwrap_or(Path::new(""));
    if !parent.as_os_str().is_empty() {
        root.create_dir_all(parent)
            .map_err(|e| io_failed(parent, e))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The new content goes to a temporary file beside the target, then replaces it whole.
    let temporary = parent.join(format!(
        ".{name}.forge-{}-{:x}",
        std::process::id(),
        rand_suffix()
    ));
    let written = (|| {
        let mut file = root.create(&temporary)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        root.rename(&temporary, root, path)
    })();
    if let Err(error) = written {
        let _ = root.remove_file(&temporary);
        return Err(io_failed(path, error));
    }
    Ok(json!({"path": shown(path), "bytes": bytes.len()}))
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    hasher.finish()
}

fn delete(root: &Dir, path: &Path) -> Result<Value, ToolError> {
    let meta = match root.symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(json!({"path": shown(path), "deleted": false}));
        }
        Err(e) => return Err(io_failed(path, e)),
    };
    let removed = if meta.is_dir() {
        root.remove_dir(path)
    } else {
        root.remove_file(path)
    };
    removed.map_err(|e| io_failed(path, e))?;
    Ok(json!({"path": shown(path), "deleted": true}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn workspace() -> (tempfile::TempDir, Dir) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("ws/notes")).expect("mkdir");
        std::fs::write(dir.path().join("ws/notes/a.txt"), "alpha\nbeta\n").expect("write");
        std::fs::write(dir.path().join("ws/bin.dat"), [0xff, 0x00, 0x10]).expect("write");
        std::fs::write(dir.path().join("secret.txt"), "outside").expect("write");
        std::os::unix::fs::symlink("../secret.txt", dir.path().join("ws/escape")).expect("symlink");
        std::os::unix::fs::symlink("/etc", dir.path().join("ws/etc")).expect("symlink");
        let root = Dir::open_ambient_dir(dir.path().join("ws"), ambient_authority()).expect("open");
        (dir, root)
    }

    fn call(root: &Dir, operation: Operation, input: Value) -> Result<Value, ToolError> {
        run(root, operation, &input)
    }

    #[test]
    fn reads_lists_searches_writes_and_deletes_inside_the_workspace() {
        let (dir, root) = workspace();
        let text = call(&root, Operation::Read, json!({"path": "notes/a.txt"})).expect("read");
        assert_eq!(
            text,
            json!({"path": "notes/a.txt", "content": "alpha\nbeta\n", "size": 11})
        );
        let binary = call(&root, Operation::Read, json!({"path": "bin.dat"})).expect("read");
        assert_eq!(binary["encoding"], "base64");
        assert_eq!(binary["content"], "/wAQ");
        let listed = call(&root, Operation::List, json!({})).expect("list");
        let names: Vec<_> = listed["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap_or_default().to_string(),
                    e["kind"].clone(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("bin.dat".to_string(), json!("file")),
                ("escape".to_string(), json!("symlink")),
                ("etc".to_string(), json!("symlink")),
                ("notes".to_string(), json!("dir"))
            ]
        );
        let found = call(&root, Operation::Search, json!({"pattern": "^be"})).expect("search");
        assert_eq!(
            found,
            json!({"matches": [{"path": "notes/a.txt", "line": 2, "text": "beta"}], "truncated": false})
        );
        let wrote = call(
            &root,
            Operation::Write,
            json!({"path": "out/new.txt", "content": "hé"}),
        )
        .expect("write");
        assert_eq!(wrote, json!({"path": "out/new.txt", "bytes": 3}));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/out/new.txt")).expect("read"),
            "hé"
        );
        call(
            &root,
            Operation::Write,
            json!({"path": "out/new.txt", "content": "again"}),
        )
        .expect("replace");
        let leftovers = std::fs::read_dir(dir.path().join("ws/out"))
            .expect("read")
            .count();
        assert_eq!(leftovers, 1, "no temporary file is left");
        let gone = call(&root, Operation::Delete, json!({"path": "out/new.txt"})).expect("delete");
        assert_eq!(gone, json!({"path": "out/new.txt", "deleted": true}));
        let again = call(&root, Operation::Delete, json!({"path": "out/new.txt"})).expect("delete");
        assert_eq!(again["deleted"], false);
    }

    #[test]
    fn no_path_leads_out_of_the_workspace() {
        let (dir, root) = workspace();
        for (operation, input) in [
            (Operation::Read, json!({"path": "../secret.txt"})),
            (Operation::Read, json!({"path": "/etc/passwd"})),
            (Operation::Read, json!({"path": "escape"})),
            (Operation::Read, json!({"path": "etc/passwd"})),
            (Operation::List, json!({"path": ".."})),
            (Operation::List, json!({"path": "etc"})),
            (Operation::Search, json!({"pattern": "root", "path": "etc"})),
            (
                Operation::Write,
                json!({"path": "../secret.txt", "content": "x"}),
            ),
            (
                Operation::Write,
                json!({"path": "etc/evil", "content": "x"}),
            ),
            (
                Operation::Write,
                json!({"path": "escape", "content": "overwritten"}),
            ),
            (Operation::Delete, json!({"path": "../secret.txt"})),
            (Operation::Delete, json!({"path": "etc/hostname"})),
        ] {
            let outcome = call(&root, operation, input.clone());
            if operation == Operation::Write && input["path"] == "escape" {
                // Replacing the link itself is inside the workspace; its target is untouched.
                assert!(outcome.is_ok(), "{outcome:?}");
                continue;
            }
            let error = outcome.expect_err(&format!("{operation:?} {input} must be refused"));
            assert!(
                matches!(error.code, ErrorCode::InvalidInput | ErrorCode::ToolFailed),
                "{error:?}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("secret.txt")).expect("read"),
            "outside",
            "nothing outside the workspace changed"
        );
        let found = call(&root, Operation::Search, json!({"pattern": "outside"})).expect("search");
        assert_eq!(
            found["matches"],
            json!([]),
            "symlinks are not followed by search"
        );
    }
}
