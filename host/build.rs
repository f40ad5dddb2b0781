//! Compiles the conformance kit (`tests/cases/`) into the binary, so that `forge-host engines
//! check` and `engines add` can run it on a machine that has only the executable.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let cases = Path::new(&manifest).join("../tests/cases");
    println!("cargo:rerun-if-changed={}", cases.display());
    let mut files = Vec::new();
    if let Ok(folders) = std::fs::read_dir(&cases) {
        for folder in folders.flatten().filter(|f| f.path().is_dir()) {
            for file in std::fs::read_dir(folder.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = file.path();
                let name = file.file_name().to_string_lossy().into_owned();
                if path.is_file() && !name.starts_with('.') {
                    let case = folder.file_name().to_string_lossy().into_owned();
                    files.push((case, name, path));
                }
            }
        }
    }
    files.sort();
    let mut code = String::from(
        "/// (case, file name, contents) of every file of `tests/cases/`, sorted.\n\
         pub(super) static FILES: &[(&str, &str, &str)] = &[\n",
    );
    for (case, name, path) in &files {
        let path = path.canonicalize().unwrap_or_else(|_| path.clone());
        writeln!(
            code,
            "    ({case:?}, {name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("write to a String");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("conformance_cases.rs");
    std::fs::write(&out, code).expect("write the embedded cases");
}
