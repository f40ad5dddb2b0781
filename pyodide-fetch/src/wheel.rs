//! What a wheel is, read from its file name and its contents: its project and version, whether
//! it is pure Python (it runs on the WASI CPython engines only then), what it needs and what it
//! provides to `import`.

use std::io::Read;
use std::path::Path;

use crate::FetchError;
use crate::lock::{PYTHON_VERSION, normalize};
use crate::pip::requirement_name;

/// The parts of a wheel file name (PEP 427).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    /// The project, with `-` written `_`.
    pub distribution: String,
    /// Its version.
    pub version: String,
    /// `py3`, `cp314`, `py2.py3`.
    pub python_tag: String,
    /// `none`, `abi3`, `cp314`.
    pub abi_tag: String,
    /// `any`, `manylinux_2_17_x86_64`, ...
    pub platform_tag: String,
}

impl WheelName {
    /// Parses `name-version[-build]-python-abi-platform.whl`.
    pub fn parse(file_name: &str) -> Option<Self> {
        let stem = file_name.strip_suffix(".whl")?;
        let parts: Vec<&str> = stem.split('-').collect();
        let (distribution, version, tags) = match parts.as_slice() {
            [d, v, _build, p, a, pl] => (*d, *v, [*p, *a, *pl]),
            [d, v, p, a, pl] => (*d, *v, [*p, *a, *pl]),
            _ => return None,
        };
        Some(WheelName {
            distribution: distribution.to_string(),
            version: version.to_string(),
            python_tag: tags[0].to_string(),
            abi_tag: tags[1].to_string(),
            platform_tag: tags[2].to_string(),
        })
    }

    /// Whether the tags say pure Python that the engines' CPython ([`PYTHON_VERSION`]) can run:
    /// platform `any`, ABI `none`, and a Python tag of 3.x at most its minor. `None` says why not.
    pub fn pure_python_reason(&self) -> Option<String> {
        if self.platform_tag != "any" || self.abi_tag != "none" {
            return Some(format!(
                "its wheel is built for platform `{}` (ABI `{}`): it has native code, and the \
                 WASI CPython engines run pure-Python wheels only",
                self.platform_tag, self.abi_tag
            ));
        }
        let fits = self.python_tag.split('.').any(|tag| {
            let digits = tag
                .strip_prefix("py")
                .or_else(|| tag.strip_prefix("cp"))
                .unwrap_or_default();
            match digits.strip_prefix('3') {
                Some("") => true,
                Some(minor) => minor.parse::<u32>().is_ok_and(|m| m <= engines_minor()),
                None => false,
            }
        });
        (!fits).then(|| {
            format!(
                "its wheel is for Python `{}`, not CPython {PYTHON_VERSION}",
                self.python_tag
            )
        })
    }
}

/// The minor version of [`PYTHON_VERSION`] (`14` for `3.14`).
fn engines_minor() -> u32 {
    PYTHON_VERSION
        .split('.')
        .nth(1)
        .and_then(|minor| minor.parse().ok())
        .unwrap_or(0)
}

/// What a wheel's contents say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelInfo {
    /// The project's name as its metadata spells it.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Normalized names of what it requires, extras left out (markers are not evaluated: pip
    /// already did, and [`crate::add`] keeps only what it resolved).
    pub requires: Vec<String>,
    /// Top-level modules it provides.
    pub imports: Vec<String>,
}

/// Endings of files that are native code, which the engines cannot load.
const NATIVE_ENDINGS: [&str; 5] = [".so", ".pyd", ".dylib", ".dll", ".wasm"];

/// Reads a wheel: refuses one with native code, and reads its metadata and top-level modules.
pub fn inspect(path: &Path) -> Result<WheelInfo, FetchError> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bad = |reason: String| FetchError::BadWheel {
        file: file_name.clone(),
        reason,
    };
    let name =
        WheelName::parse(&file_name).ok_or_else(|| bad("not a wheel file name".to_string()))?;
    if let Some(reason) = name.pure_python_reason() {
        return Err(FetchError::NotPurePython {
            name: name.distribution.clone(),
            needed_by: None,
            reason,
        });
    }
    let file = std::fs::File::open(path).map_err(|source| FetchError::io("read", path, source))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip: {e}")))?;
    let names: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    if let Some(native) = names.iter().find(|n| {
        let lower = n.to_lowercase();
        NATIVE_ENDINGS.iter().any(|e| lower.ends_with(e)) || lower.contains(".so.")
    }) {
        return Err(FetchError::NotPurePython {
            name: name.distribution.clone(),
            needed_by: None,
            reason: format!("its wheel holds native code (`{native}`)"),
        });
    }
    let dist_info = names
        .iter()
        .filter_map(|n| n.split('/').next())
        .find(|top| top.ends_with(".dist-info"))
        .ok_or_else(|| bad("it has no .dist-info folder".to_string()))?
        .to_string();
    let mut read = |member: &str| -> Option<String> {
        let mut entry = archive.by_name(&format!("{dist_info}/{member}")).ok()?;
        let mut text = String::new();
        entry.read_to_string(&mut text).ok()?;
        Some(text)
    };
    let metadata = read("METADATA").ok_or_else(|| bad("it has no METADATA".to_string()))?;
    let top_level = read("top_level.txt");
    let (meta_name, version, requires) = parse_metadata(&metadata);
    let imports = match top_level {
        Some(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains('/'))
            .map(str::to_string)
            .collect(),
        None => imports_from_names(&names),
    };
    Ok(WheelInfo {
        name: meta_name.unwrap_or(name.distribution),
        version: version.unwrap_or(name.version),
        requires,
        imports: dedup(imports),
    })
}

fn dedup(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names.dedup();
    names
}

/// The top-level modules of a wheel without `top_level.txt`: its top-level packages and modules.
fn imports_from_names(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter_map(|n| {
            let mut parts = n.split('/');
            let top = parts.next()?;
            let nested = parts.next().is_some();
            if top.ends_with(".dist-info") || top.ends_with(".data") || top == "__pycache__" {
                return None;
            }
            if nested {
                Some(top.to_string())
            } else {
                top.strip_suffix(".py").map(str::to_string)
            }
        })
        .filter(|m| m.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect()
}

/// `Name`, `Version` and the non-extra `Requires-Dist` names of a METADATA file.
fn parse_metadata(text: &str) -> (Option<String>, Option<String>, Vec<String>) {
    let mut name = None;
    let mut version = None;
    let mut requires = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            break; // the headers end; the description follows
        }
        if let Some(value) = line.strip_prefix("Name:") {
            name = Some(value.trim().to_string());
        } else if let Some(value) = line.strip_prefix("Version:") {
            version = Some(value.trim().to_string());
        } else if let Some(value) = line.strip_prefix("Requires-Dist:") {
            let (requirement, marker) = value.split_once(';').unwrap_or((value, ""));
            if marker.contains("extra") {
                continue;
            }
            let project = requirement_name(requirement);
            if !project.is_empty() {
                requires.push(normalize(&project));
            }
        }
    }
    (name, version, requires)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Writes a wheel with these members into `dir`.
    pub(crate) fn write_wheel(
        dir: &Path,
        file_name: &str,
        members: &[(&str, &str)],
    ) -> std::path::PathBuf {
        let path = dir.join(file_name);
        let file = std::fs::File::create(&path).expect("create");
        let mut zip = zip::ZipWriter::new(file);
        for (name, text) in members {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .expect("member");
            zip.write_all(text.as_bytes()).expect("write");
        }
        zip.finish().expect("finish");
        path
    }

    #[test]
    fn file_names_parse_and_say_whether_they_are_pure() {
        let pure = WheelName::parse("tabulate-0.9.0-py3-none-any.whl").expect("parses");
        assert_eq!(pure.distribution, "tabulate");
        assert_eq!(pure.pure_python_reason(), None);
        let built = WheelName::parse("foo-1.0-1-py2.py3-none-any.whl").expect("parses");
        assert_eq!(built.version, "1.0");
        assert_eq!(built.pure_python_reason(), None);
        let native =
            WheelName::parse("numpy-2.4.6-cp314-cp314-manylinux_2_28_x86_64.whl").expect("parses");
        assert!(
            native
                .pure_python_reason()
                .expect("refused")
                .contains("native code")
        );
        let emscripten = WheelName::parse("markupsafe-2.1.5-cp312-cp312-pyodide_2024_0_wasm32.whl")
            .expect("parses");
        assert!(emscripten.pure_python_reason().is_some());
        let future = WheelName::parse("x-1-py315-none-any.whl").expect("parses");
        assert!(future.pure_python_reason().is_some());
        assert_eq!(WheelName::parse("x-1.tar.gz"), None);
    }

    #[test]
    fn a_wheel_says_what_it_needs_and_provides() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_wheel(
            dir.path(),
            "Jinja2-3.1.6-py3-none-any.whl",
            &[
                ("jinja2/__init__.py", ""),
                ("jinja2/ext.py", ""),
                (
                    "jinja2-3.1.6.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: Jinja2\nVersion: 3.1.6\nRequires-Dist: MarkupSafe>=2.0\n\
                     Requires-Dist: Babel>=2.7; extra == \"i18n\"\n\nRequires-Dist: not-a-header\n",
                ),
            ],
        );
        let info = inspect(&path).expect("inspects");
        assert_eq!(info.name, "Jinja2");
        assert_eq!(info.version, "3.1.6");
        assert_eq!(info.requires, ["markupsafe"]);
        assert_eq!(info.imports, ["jinja2"]);
    }

    #[test]
    fn top_level_txt_wins_and_modules_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_wheel(
            dir.path(),
            "six-1.17.0-py2.py3-none-any.whl",
            &[
                ("six.py", ""),
                (
                    "six-1.17.0.dist-info/METADATA",
                    "Name: six\nVersion: 1.17.0\n",
                ),
            ],
        );
        assert_eq!(inspect(&path).expect("inspects").imports, ["six"]);
        let path = write_wheel(
            dir.path(),
            "PyYAML-6.0-py3-none-any.whl",
            &[
                ("yaml/__init__.py", ""),
                ("_yaml/__init__.py", ""),
                (
                    "PyYAML-6.0.dist-info/METADATA",
                    "Name: PyYAML\nVersion: 6.0\n",
                ),
                ("PyYAML-6.0.dist-info/top_level.txt", "_yaml\nyaml\n"),
            ],
        );
        assert_eq!(inspect(&path).expect("inspects").imports, ["_yaml", "yaml"]);
    }

    #[test]
    fn native_code_inside_an_any_wheel_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_wheel(
            dir.path(),
            "sneaky-1.0-py3-none-any.whl",
            &[
                (
                    "sneaky/_speedups.cpython-314-x86_64-linux-gnu.so",
                    "\x7fELF",
                ),
                (
                    "sneaky-1.0.dist-info/METADATA",
                    "Name: sneaky\nVersion: 1.0\n",
                ),
            ],
        );
        let error = inspect(&path).expect_err("refused");
        assert!(matches!(error, FetchError::NotPurePython { .. }), "{error}");
        assert!(error.to_string().contains("_speedups"), "{error}");
    }
}
