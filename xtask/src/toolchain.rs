//! The toolchain facts of `toolchain.json` (the CPython version and ABI tag, the LLVM major
//! version, the Debian packages of each build route), which the science build's Python and
//! `pyodide-fetch` read too: an upgrade is one edit there.

use std::sync::OnceLock;

use serde_json::Value;

use crate::{Result, workspace_root};

/// The facts, read once.
pub struct Toolchain {
    /// `3.14`.
    pub python_version: String,
    /// `19`.
    pub llvm_major: String,
    /// What compiles QuickJS's C to wasm32.
    pub quickjs_debs: Vec<String>,
    /// What the science build's clang route needs besides.
    pub science_debs: Vec<String>,
}

impl Toolchain {
    /// `toolchain.json` at the checkout's root.
    pub fn get() -> Result<&'static Toolchain> {
        static READ: OnceLock<Result<Toolchain>> = OnceLock::new();
        READ.get_or_init(Toolchain::read)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn read() -> Result<Toolchain> {
        let path = workspace_root().join("toolchain.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let facts: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} does not parse: {e}", path.display()))?;
        let text_at = |pointer: &str| -> Result<String> {
            facts
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{} has no text at {pointer}", path.display()))
        };
        let llvm_major = text_at("/llvm/major")?;
        let list_at = |pointer: &str| -> Result<Vec<String>> {
            facts
                .pointer(pointer)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|name| name.replace("{llvm}", &llvm_major))
                        .collect()
                })
                .ok_or_else(|| format!("{} has no list at {pointer}", path.display()))
        };
        Ok(Toolchain {
            python_version: text_at("/python/version")?,
            quickjs_debs: list_at("/debian/quickjs")?,
            science_debs: list_at("/debian/science")?,
            llvm_major,
        })
    }

    /// An LLVM tool by its unversioned name: `clang` is `clang-19`.
    pub fn llvm_tool(&self, name: &str) -> String {
        format!("{name}-{}", self.llvm_major)
    }
}

#[cfg(test)]
mod tests {
    use super::Toolchain;

    #[test]
    fn the_facts_file_names_every_package_with_its_llvm_version() {
        let toolchain = Toolchain::get().expect("toolchain.json");
        assert!(toolchain.python_version.starts_with("3."));
        let clang = toolchain.llvm_tool("clang");
        assert!(toolchain.quickjs_debs.contains(&clang), "{clang}");
        for name in toolchain.quickjs_debs.iter().chain(&toolchain.science_debs) {
            assert!(!name.contains('{'), "{name} is not filled in");
        }
    }
}
