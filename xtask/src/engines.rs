//! The engines `build` makes, and which of them `cargo xtask run` needs for its script, so that
//! a JavaScript hello on a fresh machine waits for QuickJS alone (no Lua, no CPython, none of
//! their toolchains).

use std::path::Path;

/// The host's own scan of a Python script's imports, which picks the Python profile: compiled in
/// here too, so that `run` builds the profile the host will choose.
#[path = "../../host/src/engines/python_imports.rs"]
mod python_imports;

/// An engine component `build` can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// QuickJS (`.js`, `.mjs`, `.cjs`).
    Quickjs,
    /// Lua (`.lua`).
    Lua,
    /// CPython with its standard library (`.py`).
    Python,
    /// CPython with numpy and pandas (`.py` that imports them).
    Science,
}

/// QuickJS, Lua and the standard-library CPython: `build --profile stdlib`.
pub const STDLIB: [Engine; 3] = [Engine::Quickjs, Engine::Lua, Engine::Python];

/// Every engine, in the order `build` makes them.
pub const ALL: [Engine; 4] = [
    Engine::Quickjs,
    Engine::Lua,
    Engine::Python,
    Engine::Science,
];

/// The engine that an extension (`.js`), a `--lang` (`js`) or an `--engine` (`javascript-quickjs`,
/// or a language, `python`, which is its standard-library profile) names.
fn named(name: &str) -> Option<Engine> {
    let name = name.strip_prefix('.').unwrap_or(name);
    match name {
        "js" | "mjs" | "cjs" | "javascript" | "javascript-quickjs" => Some(Engine::Quickjs),
        "lua" => Some(Engine::Lua),
        "py" | "python" | "python-cpython" => Some(Engine::Python),
        "python-science" => Some(Engine::Science),
        _ => None,
    }
}

/// The value of `--flag VALUE` or `--flag=VALUE` (or `-f VALUE` for a `short` one) in `args`.
fn flag<'a>(args: &'a [String], long: &str, short: Option<&str>) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(at, arg)| {
        if arg == long || Some(arg.as_str()) == short {
            args.get(at + 1).map(String::as_str)
        } else {
            arg.strip_prefix(long)?.strip_prefix('=')
        }
    })
}

/// The engines `forge-host run ARGS` needs, where `ARGS` is `FILE [FLAGS]`, `- --lang L
/// [FLAGS]` or `-e CODE --lang L [FLAGS]`: the one that `--engine`, else `--lang`, else FILE's
/// extension names. A Python script's imports add python-science when they name one of
/// `science_packages`, as the host would pick it; a script from stdin cannot be read
/// beforehand, so a Python one gets both profiles. `read` reads FILE. Anything else (no language
/// to be seen) needs every engine.
pub fn for_run(
    args: &[String],
    science_packages: &[String],
    read: impl Fn(&Path) -> Option<String>,
) -> Vec<Engine> {
    let file = args.first().filter(|a| *a == "-" || !a.starts_with('-'));
    let code = flag(args, "--eval", Some("-e"));
    let extension = file
        .and_then(|f| Path::new(f).extension())
        .and_then(|e| e.to_str());
    let engine = flag(args, "--engine", None)
        .or_else(|| flag(args, "--lang", None))
        .or(extension)
        .and_then(named);
    match engine {
        None => ALL.to_vec(),
        Some(Engine::Python) => {
            let source = match (code, file) {
                (Some(code), _) => Some(code.to_string()),
                (None, Some(file)) if file != "-" => {
                    Some(read(Path::new(file)).unwrap_or_default())
                }
                _ => None,
            };
            let science = source.is_none_or(|source| {
                python_imports::python_imports(&source)
                    .iter()
                    .any(|import| science_packages.contains(import))
            });
            if science {
                vec![Engine::Python, Engine::Science]
            } else {
                vec![Engine::Python]
            }
        }
        Some(engine) => vec![engine],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(line: &str) -> Vec<Engine> {
        let args: Vec<String> = shlex_free(line);
        let science = ["numpy".to_string(), "pandas".to_string()];
        for_run(&args, &science, |path| match path.to_str()? {
            "report.py" => Some("import json\nimport forge\n".into()),
            "frame.py" => Some("import forge\nfrom pandas import DataFrame\n".into()),
            _ => None,
        })
    }

    /// `line` split at spaces, with `'quoted parts'` kept whole.
    fn shlex_free(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (at, part) in line.split('\'').enumerate() {
            if at % 2 == 1 {
                out.push(part.to_string());
            } else {
                out.extend(part.split_whitespace().map(String::from));
            }
        }
        out
    }

    #[test]
    fn a_script_needs_the_engine_of_its_language_only() {
        use Engine::*;
        assert_eq!(needs("examples/hello.js"), [Quickjs]);
        assert_eq!(needs("a.mjs --json --timeout 5s"), [Quickjs]);
        assert_eq!(needs("examples/hello.lua"), [Lua]);
        assert_eq!(needs("report.py --input data.csv"), [Python]);
        assert_eq!(needs("frame.py --input data.csv"), [Python, Science]);
        assert_eq!(needs("missing.py"), [Python], "the host says it is missing");
        assert_eq!(needs("-e 'return 6 * 7' --lang js"), [Quickjs]);
        assert_eq!(needs("--json -e 'import forge' --lang=python"), [Python]);
        assert_eq!(
            needs("-e 'import numpy as np' --lang py"),
            [Python, Science]
        );
        assert_eq!(needs("- --lang lua"), [Lua]);
        assert_eq!(
            needs("- --lang py"),
            [Python, Science],
            "stdin cannot be read first"
        );
        assert_eq!(needs("report.py --engine python-science"), [Science]);
        assert_eq!(needs("a.js --engine=lua"), [Lua]);
        assert_eq!(needs("a.txt"), ALL, "no language: everything");
        assert_eq!(needs("a.js --engine my-own"), ALL);
    }
}
