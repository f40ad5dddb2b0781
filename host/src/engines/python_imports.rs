//! Which top-level packages a Python script imports, read from its text without running it.
//!
//! This picks the engine profile (docs/python.md: the smallest profile that covers a script's
//! imports); the engine's own scan (Python's `ast`) is what decides whether a run can start, so
//! a rare miss here (an import built at run time) only means a less fitting profile.

/// The top-level names of `import a.b`, `import a as b, c` and `from a.b import c` statements
/// (relative imports excluded), in order of first appearance.
pub fn python_imports(source: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let word = name.split_whitespace().next().unwrap_or_default();
        let top = word.split('.').next().unwrap_or_default();
        let valid = !top.is_empty()
            && top.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !top.starts_with(|c: char| c.is_ascii_digit());
        if valid && !found.iter().any(|f| f == top) {
            found.push(top.to_string());
        }
    };
    for line in source.lines() {
        let code = line.split('#').next().unwrap_or_default();
        // Statements after `;` or `:` on one line (`try: import numpy`) count too.
        for statement in code.split([';', ':']) {
            let statement = statement.trim();
            if let Some(rest) = statement.strip_prefix("import ") {
                for part in rest.split(',') {
                    add(part.split(" as ").next().unwrap_or_default());
                }
            } else if let Some(rest) = statement.strip_prefix("from ") {
                let module = rest.split(" import").next().unwrap_or_default().trim();
                if !module.starts_with('.') {
                    add(module);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::python_imports;

    #[test]
    fn finds_every_form_of_import() {
        let source = "import numpy as np, os.path\nfrom pandas.core import frame\nfrom . import sibling\n\
                      try: import scipy\nexcept ImportError: pass\n    import json  # indented\n\
                      x = 1; import csv\nprint('import not_a_module')\n";
        assert_eq!(
            python_imports(source),
            ["numpy", "os", "pandas", "scipy", "json", "csv"]
        );
    }

    proptest::proptest! {
        /// The scanner reads any text without a panic, and every name it finds is a dotted name.
        #[test]
        fn any_source_is_scanned(source in "(import |from |[a-z_.]{0,12}|[ \\t\\n#;,()'\"]){0,40}") {
            for name in python_imports(&source) {
                proptest::prop_assert!(!name.is_empty());
                proptest::prop_assert!(name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.'), "{}", name);
            }
        }

        #[test]
        fn arbitrary_text_never_panics(source in ".{0,300}") {
            let _ = python_imports(&source);
        }
    }
}
