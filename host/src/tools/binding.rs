//! How a tool's name becomes a function in a script ("code mode"): the part before the
//! first `.` is a namespace, the rest the function (`fs.read_text_file` is
//! `tools.fs.read_text_file` in JavaScript and `forge.tools.fs.read_text_file` in Python; `echo`
//! is `tools.echo`). Each part becomes an identifier in every language at once:
//! - a character that cannot be in an identifier becomes `_` (`my-server.list-items` is
//!   `my_server.list_items`; further dots too: `a.b.c` is `a.b_c`);
//! - a part that starts with a digit gets a leading `_`;
//! - a part that is a keyword of JavaScript or Python gets a trailing `_`, and so does a
//!   namespace or top-level function named like a member the `tools` object already has (`call`,
//!   `list`, `search`, `describe`): `workspace.list` stays `tools.workspace.list`.
//!
//! The host computes this once and hands it to every engine with the catalog
//! (`tool-info.function-path`), and the declarations of `forge-host tools` use the same path.

/// The members of `tools` / `forge.tools`: no namespace or top-level function may take them.
const MEMBERS: &[&str] = &["call", "list", "search", "describe"];

/// Words that cannot be a function's or namespace's name in some language.
const RESERVED: &[&str] = &[
    // JavaScript reserved words.
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
    // Python keywords and soft keywords that cannot follow a dot.
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    // Names JavaScript objects always have.
    "constructor",
    "prototype",
    "__proto__",
    "toString",
    "valueOf",
    "hasOwnProperty",
];

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
    if RESERVED.contains(&id.as_str()) || (top && MEMBERS.contains(&id.as_str())) {
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
        ] {
            assert_eq!(function_path(name), path, "{name}");
        }
    }
}
