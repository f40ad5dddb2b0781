//! Opening the files and folders a caller names as inputs, before anything is copied. A caller
//! that is trusted with the machine (the command line) names any path; one that is not (an MCP
//! client) names paths inside the roots it was given (`mcp --inputs-root DIR`), each resolved
//! by cap-std inside its root, as the workspace tools resolve theirs: no `..`, absolute path
//! outside the root or symlink leads out. Once opened, an input is read through its handle
//! only, so a symlink swapped in afterwards leads nowhere either.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::FileError;
use crate::error::{Error, ErrorCode, Result};

/// The folders a caller's input paths must lie in, each opened once.
#[derive(Clone)]
pub struct InputRoots {
    roots: Arc<Vec<Root>>,
}

struct Root {
    /// The folder as given, and as the file system spells it.
    given: PathBuf,
    canonical: PathBuf,
    dir: Dir,
}

impl std::fmt::Debug for InputRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.roots.iter().map(|root| &root.given))
            .finish()
    }
}

/// Why an input path a caller named is refused.
fn refused(argument: &str, given: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid_input(format!("{argument}: `{}` {why}", given.display()))
}

impl InputRoots {
    /// Opens `folders`; each must be a folder that exists.
    pub fn open(folders: &[PathBuf]) -> Result<Self> {
        let mut roots = Vec::new();
        for folder in folders {
            let canonical = std::fs::canonicalize(folder).map_err(|e| {
                Error::from_source(
                    ErrorCode::InvalidInput,
                    FileError::new("inputs root", folder, e),
                )
            })?;
            let dir = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(|e| {
                Error::from_source(
                    ErrorCode::InvalidInput,
                    FileError::new("inputs root (a folder)", folder, e),
                )
            })?;
            roots.push(Root {
                given: folder.clone(),
                canonical,
                dir,
            });
        }
        Ok(InputRoots {
            roots: Arc::new(roots),
        })
    }

    /// The folders, as given.
    pub fn folders(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|root| root.given.as_path())
    }

    /// The root `given` lies in, and its path below that root: a relative path is below the
    /// first root; an absolute one must lie lexically inside one of them. `argument` names what
    /// the caller passed it as, for the message.
    fn locate(&self, argument: &str, given: &Path) -> Result<(&Root, PathBuf)> {
        let first = self
            .roots
            .first()
            .ok_or_else(|| refused(argument, given, "cannot be read: no inputs root is set"))?;
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(refused(argument, given, "holds `..`, which is not allowed"));
        }
        if !given.is_absolute() {
            return Ok((first, given.to_path_buf()));
        }
        for root in self.roots.iter() {
            for base in [&root.given, &root.canonical] {
                if let Ok(below) = given.strip_prefix(base)
                    && base.is_absolute()
                {
                    return Ok((root, below.to_path_buf()));
                }
            }
        }
        Err(refused(
            argument,
            given,
            format!("is outside the inputs root ({})", self.shown()),
        ))
    }

    fn shown(&self) -> String {
        self.roots
            .iter()
            .map(|root| root.given.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Opens `given` inside its root. A symlink (the path's last part, or a folder on the way)
    /// is followed only while it stays inside the root.
    pub fn open_input(&self, argument: &str, given: &Path) -> Result<OpenedInput> {
        let (root, below) = self.locate(argument, given)?;
        let below_or_root = if below.as_os_str().is_empty() {
            Path::new(".")
        } else {
            below.as_path()
        };
        let outside = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => refused(argument, given, "does not exist"),
            std::io::ErrorKind::PermissionDenied => refused(
                argument,
                given,
                format!(
                    "cannot be reached: it leads outside the inputs root ({}) or is not permitted",
                    root.given.display()
                ),
            ),
            _ => refused(argument, given, format!("cannot be read: {e}")),
        };
        let meta = root.dir.metadata(below_or_root).map_err(outside)?;
        let name = match below.file_name() {
            Some(name) => name.to_str().map(str::to_string),
            None => root
                .canonical
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string),
        };
        let source = root.canonical.join(&below);
        let name = usable_name(name, &source)?;
        if meta.is_dir() {
            let dir = root.dir.open_dir(below_or_root).map_err(outside)?;
            Ok(OpenedInput::Folder { dir, source, name })
        } else if meta.is_file() {
            let file = root.dir.open(below_or_root).map_err(outside)?;
            Ok(OpenedInput::File {
                file: file.into_std(),
                source,
                name,
            })
        } else {
            Err(refused(
                argument,
                given,
                "is neither a regular file nor a folder",
            ))
        }
    }
}

/// An input, opened: a regular file, or a folder whose tree is read through its handle.
#[derive(Debug)]
pub enum OpenedInput {
    /// A regular file.
    File {
        /// Its handle.
        file: std::fs::File,
        /// Where the caller's file is.
        source: PathBuf,
        /// Its name in `/input`.
        name: String,
    },
    /// A folder.
    Folder {
        /// Its handle.
        dir: Dir,
        /// Where the caller's folder is.
        source: PathBuf,
        /// Its name in `/input`.
        name: String,
    },
}

fn usable_name(name: Option<String>, source: &Path) -> Result<String> {
    name.filter(|n| !n.is_empty() && n != "..").ok_or_else(|| {
        Error::invalid_input(format!(
            "input {} has no usable file name",
            source.display()
        ))
    })
}

/// The caller's input could not be read: their doing, `INVALID_INPUT`.
pub(super) fn unreadable(path: &Path, error: std::io::Error) -> Error {
    Error::from_source(
        ErrorCode::InvalidInput,
        FileError::new("input", path, error),
    )
}

/// One file or folder inside an input, found by [`OpenedInput::walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputEntry {
    /// Its path below `/input`, `/`-separated, starting with the input's name.
    pub name: String,
    /// Whether it is a folder (otherwise a regular file).
    pub folder: bool,
    /// A file's bytes when it was walked.
    pub size: u64,
}

impl OpenedInput {
    /// Opens a path the command line named, anywhere the caller can read.
    pub fn open_ambient(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| unreadable(path, e))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string);
        let name = usable_name(name, path)?;
        let source = path.to_path_buf();
        if meta.is_dir() {
            let dir = Dir::open_ambient_dir(path, ambient_authority())
                .map_err(|e| unreadable(path, e))?;
            Ok(OpenedInput::Folder { dir, source, name })
        } else if meta.is_file() {
            let file = std::fs::File::open(path).map_err(|e| unreadable(path, e))?;
            Ok(OpenedInput::File { file, source, name })
        } else {
            Err(Error::invalid_input(format!(
                "input {} is neither a regular file nor a folder",
                path.display()
            )))
        }
    }

    /// Its name in `/input`.
    pub fn name(&self) -> &str {
        match self {
            OpenedInput::File { name, .. } | OpenedInput::Folder { name, .. } => name,
        }
    }

    /// Where the caller's file or folder is.
    pub fn source(&self) -> &Path {
        match self {
            OpenedInput::File { source, .. } | OpenedInput::Folder { source, .. } => source,
        }
    }

    /// Every file and folder it holds (itself first), walked through its handle without
    /// recursion. Inside a folder only regular files and folders are accepted: a symlink or
    /// special file is refused.
    pub fn walk(&self) -> Result<Vec<InputEntry>> {
        let (dir, source, name) = match self {
            OpenedInput::File { file, source, name } => {
                let meta = file.metadata().map_err(|e| unreadable(source, e))?;
                return Ok(vec![InputEntry {
                    name: name.clone(),
                    folder: false,
                    size: meta.len(),
                }]);
            }
            OpenedInput::Folder { dir, source, name } => (dir, source, name),
        };
        let mut entries = vec![InputEntry {
            name: name.clone(),
            folder: true,
            size: 0,
        }];
        let mut pending: Vec<PathBuf> = vec![PathBuf::new()];
        while let Some(below) = pending.pop() {
            let at = source.join(&below);
            let listing = if below.as_os_str().is_empty() {
                dir.entries()
            } else {
                dir.read_dir(&below)
            }
            .map_err(|e| unreadable(&at, e))?;
            let mut children = Vec::new();
            for entry in listing {
                let entry = entry.map_err(|e| unreadable(&at, e))?;
                let file_name = entry.file_name();
                let Some(child) = file_name.to_str() else {
                    return Err(Error::invalid_input(format!(
                        "input {} has a name that is not UTF-8",
                        at.join(&file_name).display()
                    )));
                };
                let kind = entry.file_type().map_err(|e| unreadable(&at, e))?;
                let path = below.join(child);
                if kind.is_dir() {
                    children.push((path, true, 0));
                } else if kind.is_file() {
                    let size = entry.metadata().map_err(|e| unreadable(&at, e))?.len();
                    children.push((path, false, size));
                } else {
                    return Err(Error::invalid_input(format!(
                        "input {} is a symlink or special file; folder inputs may hold only regular files and folders",
                        source.join(&path).display()
                    )));
                }
            }
            children.sort();
            for (path, folder, size) in children {
                entries.push(InputEntry {
                    name: format!("{name}/{}", slashed(&path)),
                    folder,
                    size,
                });
                if folder {
                    pending.push(path);
                }
            }
        }
        Ok(entries)
    }

    /// Opens the file `entry` names (from [`OpenedInput::walk`]) through this input's handle.
    pub fn open_file(&self, entry: &InputEntry) -> Result<std::fs::File> {
        match self {
            OpenedInput::File { file, source, .. } => {
                file.try_clone().map_err(|e| unreadable(source, e))
            }
            OpenedInput::Folder { dir, source, name } => {
                let below = entry
                    .name
                    .strip_prefix(name.as_str())
                    .and_then(|rest| rest.strip_prefix('/'))
                    .unwrap_or(&entry.name);
                let path = source.join(below);
                let file = dir.open(below).map_err(|e| unreadable(&path, e))?;
                let meta = file.metadata().map_err(|e| unreadable(&path, e))?;
                if !meta.is_file() {
                    return Err(Error::invalid_input(format!(
                        "input {} is no longer a regular file",
                        path.display()
                    )));
                }
                Ok(file.into_std())
            }
        }
    }
}

fn slashed(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every input's files and folders ([`OpenedInput::walk`]), refused before anything is read
/// when they hold more than `max_bytes` together (`--max-input`).
pub fn walk_within(
    inputs: &[OpenedInput],
    max_bytes: u64,
) -> Result<Vec<(&OpenedInput, Vec<InputEntry>)>> {
    let walked = inputs
        .iter()
        .map(|input| Ok((input, input.walk()?)))
        .collect::<Result<Vec<_>>>()?;
    let total = walked
        .iter()
        .flat_map(|(_, entries)| entries)
        .fold(0u64, |sum, entry| sum.saturating_add(entry.size));
    if total > max_bytes {
        return Err(Error::invalid_input(format!(
            "the inputs hold {total} bytes together, over --max-input of {max_bytes} bytes"
        )));
    }
    Ok(walked)
}

/// Opens every input `paths` names: inside `roots` when there are roots (`argument` names
/// what the caller passed them as), anywhere otherwise. Nothing is copied yet, so a refused
/// path leaves nothing behind.
pub fn open_inputs(
    paths: &[PathBuf],
    roots: Option<&InputRoots>,
    argument: &str,
) -> Result<Vec<OpenedInput>> {
    paths
        .iter()
        .enumerate()
        .map(|(at, path)| match roots {
            Some(roots) => roots.open_input(&format!("{argument}[{at}]"), path),
            None => OpenedInput::open_ambient(path),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(root.path().join("a.csv"), "x\n").expect("write");
        std::fs::create_dir_all(root.path().join("set/sub")).expect("mkdir");
        std::fs::write(root.path().join("set/sub/b.txt"), "hello").expect("write");
        std::fs::write(outside.path().join("secret"), "key").expect("write");
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("leak"))
            .expect("symlink");
        std::os::unix::fs::symlink(outside.path(), root.path().join("away")).expect("symlink");
        std::os::unix::fs::symlink("a.csv", root.path().join("alias")).expect("symlink");
        (root, outside)
    }

    #[test]
    fn paths_inside_the_root_open_and_walk() {
        let (root, _outside) = tree();
        let roots = InputRoots::open(&[root.path().to_path_buf()]).expect("roots");
        let file = roots
            .open_input("inputs[0]", Path::new("a.csv"))
            .expect("relative");
        assert_eq!(file.name(), "a.csv");
        let absolute = roots
            .open_input("inputs[0]", &root.path().join("set"))
            .expect("absolute inside");
        let names: Vec<String> = absolute
            .walk()
            .expect("walk")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["set", "set/sub", "set/sub/b.txt"]);
        let inside_link = roots
            .open_input("inputs[0]", Path::new("alias"))
            .expect("link in");
        assert_eq!(inside_link.name(), "alias");
    }

    #[test]
    fn nothing_outside_the_root_opens() {
        let (root, outside) = tree();
        let roots = InputRoots::open(&[root.path().to_path_buf()]).expect("roots");
        for bad in [
            outside.path().join("secret"),
            PathBuf::from("../secret"),
            PathBuf::from("set/../../secret"),
            PathBuf::from("leak"),
            PathBuf::from("away/secret"),
            root.path().join("away/secret"),
            PathBuf::from("/etc/passwd"),
        ] {
            let error = roots.open_input("inputs[3]", &bad).expect_err("refused");
            assert_eq!(error.code, ErrorCode::InvalidInput, "{bad:?}");
            assert!(
                error.message.starts_with("inputs[3]: "),
                "{}",
                error.message
            );
        }
        let none = InputRoots::open(&[]).expect("no roots");
        assert!(none.open_input("inputs[0]", Path::new("a.csv")).is_err());
    }
}
