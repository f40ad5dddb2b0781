//! How a tool's name becomes a function in a script ("code mode"): the part before the first `.`
//! is a namespace, the rest the function (`fs.read_text_file` is `tools.fs.read_text_file` in
//! JavaScript and Lua and `forge.tools.fs.read_text_file` in Python; `echo` is `tools.echo`).
//! Each part becomes an identifier in every language at once:
//! - a character that cannot be in an identifier becomes `_` (`my-server.list-items` is
//!   `my_server.list_items`; further dots too: `a.b.c` is `a.b_c`);
//! - a part that starts with a digit gets a leading `_`;
//! - a part that is a keyword of JavaScript, Python or Lua gets a trailing `_`, and so does a
//!   namespace or top-level function named like a member the `tools` object already has in some
//!   language (`call`, `list`, `search`, `describe`; Lua's `gather`, `begin`, `wait`):
//!   `workspace.list` stays `tools.workspace.list`.
//!
//! The host computes this once and hands it to every engine with the catalog
//! (`tool-info.function-path`), and the declarations of `forge-host tools` use the same path.

/// What one language forbids a namespace or function to be called.
struct Words {
    /// Its keywords and the names its objects always have: no part may be one.
    reserved: &'static [&'static str],
    /// The members its `tools` object has: no namespace or top-level function may be one.
    members: &'static [&'static str],
}

/// The members `tools` / `forge.tools` have in JavaScript and Python.
const SHARED_MEMBERS: &[&str] = &["call", "list", "search", "describe"];

/// JavaScript's reserved words, and the names every JavaScript object has.
const JAVASCRIPT: Words = Words {
    reserved: &[
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "let",
        "static",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "await",
        "arguments",
        "eval",
        "constructor",
        "prototype",
        "__proto__",
        "toString",
        "valueOf",
        "hasOwnProperty",
    ],
    members: SHARED_MEMBERS,
};

/// Python's keywords and the soft keywords that cannot follow a dot.
const PYTHON: Words = Words {
    reserved: &[
        "False", "None", "True", "and", "as", "assert", "async", "def", "del", "elif", "except",
        "from", "global", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    ],
    members: SHARED_MEMBERS,
};

/// Lua's reserved words; its `tools` has `gather`, `begin` and `wait` besides.
const LUA: Words = Words {
    reserved: &[
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ],
    members: &[
        "call", "list", "search", "describe", "gather", "begin", "wait",
    ],
};

/// Every language a function path must work in: a part any of them forbids is changed.
const LANGUAGES: [&Words; 3] = [&JAVASCRIPT, &PYTHON, &LUA];

/// Whether some language forbids `id`; `top` for the part right below `tools`.
fn forbidden(id: &str, top: bool) -> bool {
    LANGUAGES
        .iter()
        .any(|words| words.reserved.contains(&id) || (top && words.members.contains(&id)))
}

/// One part of a tool name as an identifier; `top` for the part right below `tools`.
fn identifier(part: &str, top: bool) -> String {
    let mut id: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    if forbidden(&id, top) {
        id.push('_');
    }
    id
}

/// The function path of the tool `name`: `[function]` or `[namespace, function]`.
pub fn function_path(name: &str) -> Vec<String> {
    match name.split_once('.') {
        Some((namespace, rest)) => vec![identifier(namespace, true), identifier(rest, false)],
        None => vec![identifier(name, true)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifiers_in_every_language() {
        for (name, path) in [
            ("echo", vec!["echo"]),
            ("fs.read_text_file", vec!["fs", "read_text_file"]),
            ("my-server.list-items", vec!["my_server", "list_items"]),
            ("a.b.c", vec!["a", "b_c"]),
            ("workspace.delete", vec!["workspace", "delete"]),
            ("list", vec!["list_"]),
            ("workspace.list", vec!["workspace", "list"]),
            ("call.x", vec!["call_", "x"]),
            ("py.import", vec!["py", "import_"]),
            ("3d.render", vec!["_3d", "render"]),
            ("x.", vec!["x", "_"]),
            ("naïve.tool", vec!["na_ve", "tool"]),
            ("lua.end", vec!["lua", "end_"]),
            ("repeat.local", vec!["repeat_", "local_"]),
            ("gather", vec!["gather_"]),
            ("jobs.wait", vec!["jobs", "wait"]),
        ] {
            assert_eq!(function_path(name), path, "{name}");
        }
    }
}
