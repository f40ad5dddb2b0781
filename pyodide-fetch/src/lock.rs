//! The Pyodide lock format (`pyodide-lock.json`), read and written so that a user's existing
//! Pyodide lock can be brought in and ours can be read by Pyodide's tools.
//!
//! Fields this crate does not use are kept as they were read (`extra`), so a round trip through
//! [`PyodideLock::read`] and [`PyodideLock::write`] loses nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::FetchError;

/// The Python the packages are locked for: the WASI CPython engines' minor version (`3.14`,
/// from `toolchain.json`).
pub const PYTHON_VERSION: &str = env!("FORGE_PYTHON_VERSION");

/// Its ABI tag (`cp314`), from `toolchain.json`.
pub const PYTHON_ABI: &str = env!("FORGE_PYTHON_ABI");

/// The `info.platform` of a lock this crate writes.
pub const PLATFORM: &str = "wasi_0_2_wasm32";

/// A whole lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PyodideLock {
    /// Which Python and platform the packages are for.
    pub info: LockInfo,
    /// The packages, by normalized name.
    #[serde(default)]
    pub packages: BTreeMap<String, LockedPackage>,
}

/// The `info` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockInfo {
    /// Python version, `3.14` or `3.12.7`.
    pub python: String,
    /// `emscripten_3_1_58` in Pyodide's locks, [`PLATFORM`] in ours.
    #[serde(default)]
    pub platform: String,
    /// Everything else (`arch`, `version`, `abi_version`, ...), kept as read.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One package of a lock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockedPackage {
    /// The project's name as it spells it (`Jinja2`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The wheel's file name.
    pub file_name: String,
    /// sha256 of the wheel, hex: the file this lock's store holds.
    pub sha256: String,
    /// Normalized names of the packages it needs.
    #[serde(default)]
    pub depends: Vec<String>,
    /// The top-level modules it provides (`yaml` for PyYAML).
    #[serde(default)]
    pub imports: Vec<String>,
    /// `package` for a wheel of Python code; Pyodide also has `shared_library` and `cpython_module`.
    #[serde(default = "package_type")]
    pub package_type: String,
    /// `site` for site-packages.
    #[serde(default = "install_dir")]
    pub install_dir: String,
    /// When the lock was imported from Pyodide and Pyodide's wheel is not the one fetched: the
    /// sha256 Pyodide's lock gave (its own rebuild of the package).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pyodide_sha256: Option<String>,
    /// The wheel's modules compiled once, by the engine that imports them; a run mounts this in
    /// place of the wheel. A lock written before it was kept has none, and its runs compile
    /// the modules as they import them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytecode: Option<Bytecode>,
    /// Everything else (`unvendored_tests`, `shared_library`, ...), kept as read.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// A wheel's bytecode: a zip of the wheel's files with each module's `.pyc` beside its `.py`
/// (hash-based and unchecked, since the zip itself is pinned), held in the store like a wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytecode {
    /// The zip's file name in the store.
    pub file_name: String,
    /// sha256 of the zip, hex.
    pub sha256: String,
    /// The bytecode's CPython (`sys.implementation.cache_tag`, `cpython-314`).
    pub cache_tag: String,
}

/// The store file name of the bytecode of wheel `file_name`.
pub fn bytecode_file_name(wheel_file_name: &str) -> String {
    let stem = wheel_file_name
        .strip_suffix(".whl")
        .unwrap_or(wheel_file_name);
    format!("{stem}.pyc.zip")
}

fn package_type() -> String {
    "package".into()
}

fn install_dir() -> String {
    "site".into()
}

/// A project name in the normalized form of PEP 503: lowercase, runs of `-`, `_` and `.` as one
/// `-`. Lock keys and `depends` use it.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            separator = true;
        } else {
            if separator && !out.is_empty() {
                out.push('-');
            }
            separator = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

impl PyodideLock {
    /// An empty lock for the WASI CPython engines.
    pub fn new() -> Self {
        let mut extra = serde_json::Map::new();
        extra.insert("arch".into(), "wasm32".into());
        extra.insert(
            "version".into(),
            format!("pyodide-fetch {}", env!("CARGO_PKG_VERSION")).into(),
        );
        PyodideLock {
            info: LockInfo {
                python: PYTHON_VERSION.into(),
                platform: PLATFORM.into(),
                extra,
            },
            packages: BTreeMap::new(),
        }
    }

    /// Parses a lock.
    pub fn parse(text: &str, path: &Path) -> Result<Self, FetchError> {
        serde_json::from_str(text).map_err(|source| FetchError::BadLock {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads the lock at `path`; a missing file is an empty lock.
    pub fn read_or_new(path: &Path) -> Result<Self, FetchError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::new()),
            Err(source) => Err(FetchError::io("read the lock", path, source)),
        }
    }

    /// Reads the lock at `path`.
    pub fn read(path: &Path) -> Result<Self, FetchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| FetchError::io("read the lock", path, source))?;
        Self::parse(&text, path)
    }

    /// Writes the lock to `path` whole or not at all: a temporary file beside it, synced, then
    /// renamed over it.
    pub fn write(&self, path: &Path) -> Result<(), FetchError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)
            .map_err(|source| FetchError::io("create the lock's folder", dir, source))?;
        let text = serde_json::to_string_pretty(self).map_err(|source| FetchError::BadLock {
            path: path.to_path_buf(),
            source,
        })?;
        let mut file = tempfile::NamedTempFile::new_in(dir)
            .map_err(|source| FetchError::io("write the lock", dir, source))?;
        file.write_all(text.as_bytes())
            .and_then(|_| file.write_all(b"\n"))
            .and_then(|_| file.as_file().sync_all())
            .map_err(|source| FetchError::io("write the lock", path, source))?;
        file.persist(path)
            .map_err(|e| FetchError::io("replace the lock", path, e.error))?;
        Ok(())
    }

    /// The package that provides top-level module `module`, if any.
    pub fn provider_of(&self, module: &str) -> Option<&LockedPackage> {
        self.packages
            .values()
            .find(|p| p.imports.iter().any(|i| i == module))
    }

    /// `names` and everything they depend on, each once, in dependency order (dependencies
    /// first). A dependency missing from the lock is an error naming who needs it.
    pub fn closure<'a>(&'a self, names: &[String]) -> Result<Vec<&'a LockedPackage>, FetchError> {
        let mut out: Vec<&LockedPackage> = Vec::new();
        let mut visiting: Vec<String> = Vec::new();
        for name in names {
            self.visit(&normalize(name), None, &mut visiting, &mut out)?;
        }
        Ok(out)
    }

    fn visit<'a>(
        &'a self,
        key: &str,
        needed_by: Option<&str>,
        visiting: &mut Vec<String>,
        out: &mut Vec<&'a LockedPackage>,
    ) -> Result<(), FetchError> {
        if out.iter().any(|p| normalize(&p.name) == key) || visiting.iter().any(|v| v == key) {
            return Ok(());
        }
        let package = self
            .packages
            .get(key)
            .ok_or_else(|| FetchError::NotLocked {
                name: key.to_string(),
                needed_by: needed_by.map(str::to_string),
            })?;
        visiting.push(key.to_string());
        for dependency in &package.depends {
            self.visit(&normalize(dependency), Some(key), visiting, out)?;
        }
        visiting.pop();
        out.push(package);
        Ok(())
    }
}

impl Default for PyodideLock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYODIDE_SAMPLE: &str = r#"{
      "info": {"arch": "wasm32", "platform": "emscripten_3_1_58", "version": "0.27.0",
               "python": "3.12.7", "abi_version": "2025_0"},
      "packages": {
        "jinja2": {"name": "Jinja2", "version": "3.1.4", "file_name": "jinja2-3.1.4-py3-none-any.whl",
                   "install_dir": "site", "sha256": "aa", "package_type": "package",
                   "imports": ["jinja2"], "depends": ["markupsafe"], "unvendored_tests": false},
        "markupsafe": {"name": "MarkupSafe", "version": "2.1.5",
                       "file_name": "markupsafe-2.1.5-cp312-cp312-pyodide_2024_0_wasm32.whl",
                       "install_dir": "site", "sha256": "bb", "package_type": "package",
                       "imports": ["markupsafe"], "depends": []}
      }
    }"#;

    #[test]
    fn a_pyodide_lock_round_trips_without_loss() {
        let path = Path::new("pyodide-lock.json");
        let lock = PyodideLock::parse(PYODIDE_SAMPLE, path).expect("parses");
        assert_eq!(lock.info.python, "3.12.7");
        assert_eq!(lock.info.extra["abi_version"], "2025_0");
        let jinja = &lock.packages["jinja2"];
        assert_eq!(jinja.depends, ["markupsafe"]);
        assert_eq!(jinja.extra["unvendored_tests"], false);
        let text = serde_json::to_string(&lock).expect("serializes");
        assert_eq!(PyodideLock::parse(&text, path).expect("reparses"), lock);
        let original: serde_json::Value = serde_json::from_str(PYODIDE_SAMPLE).expect("json");
        let written: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(original, written);
    }

    #[test]
    fn names_are_normalized_as_pep_503_says() {
        assert_eq!(normalize("Jinja2"), "jinja2");
        assert_eq!(normalize("et_xmlfile"), "et-xmlfile");
        assert_eq!(normalize("zope.interface"), "zope-interface");
        assert_eq!(normalize("A__b-.C"), "a-b-c");
    }

    #[test]
    fn the_closure_puts_dependencies_first_and_names_a_missing_one() {
        let mut lock = PyodideLock::parse(PYODIDE_SAMPLE, Path::new("x")).expect("parses");
        let order: Vec<&str> = lock
            .closure(&["Jinja2".to_string()])
            .expect("closes")
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(order, ["MarkupSafe", "Jinja2"]);
        assert_eq!(
            lock.provider_of("markupsafe").map(|p| p.version.as_str()),
            Some("2.1.5")
        );
        lock.packages.remove("markupsafe");
        let error = lock.closure(&["jinja2".to_string()]).expect_err("missing");
        assert!(error.to_string().contains("markupsafe"), "{error}");
        assert!(error.to_string().contains("jinja2"), "{error}");
    }

    #[test]
    fn a_cycle_in_depends_ends() {
        let mut lock = PyodideLock::new();
        for (name, dep) in [("a", "b"), ("b", "a")] {
            lock.packages.insert(
                name.into(),
                LockedPackage {
                    name: name.into(),
                    version: "1".into(),
                    file_name: format!("{name}-1-py3-none-any.whl"),
                    sha256: "00".into(),
                    depends: vec![dep.into()],
                    imports: vec![name.into()],
                    package_type: package_type(),
                    install_dir: install_dir(),
                    pyodide_sha256: None,
                    bytecode: None,
                    extra: Default::default(),
                },
            );
        }
        assert_eq!(lock.closure(&["a".into()]).expect("closes").len(), 2);
    }

    #[test]
    fn writing_replaces_the_file_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/pyodide-lock.json");
        let lock = PyodideLock::new();
        lock.write(&path).expect("writes");
        assert_eq!(PyodideLock::read(&path).expect("reads"), lock);
        assert_eq!(
            std::fs::read_dir(path.parent().expect("parent"))
                .expect("lists")
                .count(),
            1
        );
    }
}
