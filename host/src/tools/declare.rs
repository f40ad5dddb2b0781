//! The catalog as a model or a person reads it (`forge-host tools --format ts|py|json`):
//! TypeScript declarations of the `tools` object (after the script's other globals, written by
//! hand in `globals.d.ts`), Python stubs of `forge.tools`, or JSON. Types come from each tool's
//! JSON Schema; what a schema leaves open is `unknown` (`Any`), never an implicit `any`. Doc
//! comments come from the descriptions.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{Value, json};

use super::binding::function_path;
use super::{Tool, ToolRegistry};

/// Deepest schema nesting turned into types; deeper is `unknown`.
const MAX_DEPTH: usize = 24;

/// The tools of `registry` grouped by function path: top-level functions, then namespaces.
fn grouped(registry: &ToolRegistry) -> BTreeMap<String, Vec<(String, &dyn Tool)>> {
    let mut groups: BTreeMap<String, Vec<(String, &dyn Tool)>> = BTreeMap::new();
    for tool in registry.tools() {
        let path = function_path(&tool.info().name);
        match path.as_slice() {
            [function] => groups
                .entry(String::new())
                .or_default()
                .push((function.clone(), tool)),
            [namespace, function] => groups
                .entry(namespace.clone())
                .or_default()
                .push((function.clone(), tool)),
            _ => {}
        }
    }
    groups
}

/// The catalog as JSON: each tool's name, description, effect, schemas and function path.
pub fn json(registry: &ToolRegistry) -> Value {
    let tools: Vec<Value> = registry
        .tools()
        .map(|tool| {
            let info = tool.info();
            let mut entry = json!({
                "name": info.name,
                "description": info.description,
                "effect": info.effect,
                "input_schema": info.input_schema,
                "function_path": function_path(&info.name),
            });
            if let Some(output) = tool.output_schema() {
                entry["output_schema"] = output.clone();
            }
            entry
        })
        .collect();
    json!({ "tools": tools })
}

fn doc_comment(out: &mut String, indent: &str, text: &str) {
    let text = text.replace("*/", "* /");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(out, "{indent}/** {} */", one.trim());
        }
        many => {
            let _ = writeln!(out, "{indent}/**");
            for line in many {
                let _ = writeln!(out, "{indent} * {}", line.trim_end());
            }
            let _ = writeln!(out, "{indent} */");
        }
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn ts_key(name: &str) -> String {
    if is_identifier(name) {
        name.to_string()
    } else {
        Value::from(name).to_string()
    }
}

/// The TypeScript type of a JSON Schema.
pub fn ts_type(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "unknown".into();
    }
    let Some(object) = schema.as_object() else {
        return match schema {
            Value::Bool(false) => "never".into(),
            _ => "unknown".into(),
        };
    };
    if let Some(value) = object.get("const") {
        return value.to_string();
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        let literals: Vec<String> = values.iter().map(Value::to_string).collect();
        return if literals.is_empty() {
            "never".into()
        } else {
            literals.join(" | ")
        };
    }
    for (keyword, joiner) in [("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")] {
        if let Some(Value::Array(parts)) = object.get(keyword) {
            let types: Vec<String> = parts
                .iter()
                .map(|p| format!("({})", ts_type(p, depth + 1)))
                .collect();
            if !types.is_empty() {
                return types.join(joiner);
            }
        }
    }
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ if object.contains_key("properties") => vec!["object"],
        _ => return "unknown".into(),
    };
    let mut union: Vec<String> = types
        .into_iter()
        .map(|kind| match kind {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => match object.get("items") {
                Some(items) if items.is_object() => format!("Array<{}>", ts_type(items, depth + 1)),
                _ => "unknown[]".into(),
            },
            "object" => ts_object(object, depth),
            _ => "unknown".into(),
        })
        .collect();
    union.dedup();
    union.join(" | ")
}

fn ts_object(object: &serde_json::Map<String, Value>, depth: usize) -> String {
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Vec::new();
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, schema) in properties {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let doc = schema
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!("/** {} */ ", d.replace("*/", "* /").replace('\n', " ")))
                .unwrap_or_default();
            fields.push(format!(
                "{doc}{}{optional}: {}",
                ts_key(name),
                ts_type(schema, depth + 1)
            ));
        }
    }
    match object.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(extra @ Value::Object(_)) if fields.is_empty() => {
            fields.push(format!("[key: string]: {}", ts_type(extra, depth + 1)));
        }
        _ if fields.is_empty() => fields.push("[key: string]: unknown".into()),
        _ => {}
    }
    format!("{{ {} }}", fields.join("; "))
}

/// Whether a schema's input may be left out (no required property).
fn input_optional(schema: &Value) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(|r| r.is_empty())
}

fn ts_function(out: &mut String, indent: &str, function: &str, tool: &dyn Tool) {
    let info = tool.info();
    doc_comment(
        out,
        indent,
        &format!(
            "{}\n`{}` (effect: {})",
            info.description,
            info.name,
            info.effect.as_str()
        ),
    );
    let output = tool
        .output_schema()
        .map_or_else(|| "unknown".to_string(), |schema| ts_type(schema, 0));
    let optional = if input_optional(&info.input_schema) {
        "?"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{indent}{}(input{optional}: {}): Promise<{output}>;",
        ts_key(function),
        ts_type(&info.input_schema, 0)
    );
}

/// The other globals of a JavaScript script (forge's and the web platform's), declared by hand.
const GLOBALS: &str = include_str!("globals.d.ts");

/// TypeScript declarations of the globals a JavaScript script sees: the web platform's and
/// forge's (`GLOBALS`), then the `tools` object.
pub fn typescript(registry: &ToolRegistry) -> String {
    let mut out = format!("{GLOBALS}\n");
    out.push_str(
        "// The tools a forge-host script may call (forge-host tools --format ts).\n\
         type ForgeEffect = \"read\" | \"write\" | \"process\" | \"external\" | \"internal\";\n\
         interface ForgeToolInfo {\n  name: string;\n  description: string;\n  effect: ForgeEffect;\n  \
         inputSchema: unknown;\n  functionPath: string[];\n}\n\
         declare const tools: {\n  /** Calls a tool by its name. */\n  call(name: string, input?: unknown): Promise<unknown>;\n  \
         /** Every tool this run may call. */\n  list(): Promise<ForgeToolInfo[]>;\n  \
         /** Tools whose name or description contains `query`. */\n  search(query: string, limit?: number): Promise<ForgeToolInfo[]>;\n  \
         /** One tool by name. */\n  describe(name: string): Promise<ForgeToolInfo | undefined>;\n",
    );
    for (namespace, functions) in grouped(registry) {
        if namespace.is_empty() {
            for (function, tool) in functions {
                ts_function(&mut out, "  ", &function, tool);
            }
        } else {
            let _ = writeln!(out, "  {}: {{", ts_key(&namespace));
            for (function, tool) in functions {
                ts_function(&mut out, "    ", &function, tool);
            }
            out.push_str("  };\n");
        }
    }
    out.push_str("};\n");
    out
}

fn py_type(schema: &Value) -> &'static str {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "str",
        Some("integer") => "int",
        Some("number") => "float",
        Some("boolean") => "bool",
        Some("array") => "list[Any]",
        Some("object") => "dict[str, Any]",
        Some("null") => "None",
        _ => "Any",
    }
}

fn py_function(out: &mut String, indent: &str, function: &str, tool: &dyn Tool) {
    let info = tool.info();
    let properties = info
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let required: Vec<&str> = info
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parameters = match properties {
        Some(properties)
            if properties
                .keys()
                .all(|k| is_identifier(k) && !k.contains('$')) =>
        {
            let mut params: Vec<String> = Vec::new();
            let (needed, optional): (Vec<_>, Vec<_>) = properties
                .iter()
                .partition(|(k, _)| required.contains(&k.as_str()));
            for (name, schema) in needed {
                params.push(format!("{name}: {}", py_type(schema)));
            }
            for (name, schema) in optional {
                params.push(format!("{name}: {} = ...", py_type(schema)));
            }
            if params.is_empty() {
                String::new()
            } else {
                format!("*, {}", params.join(", "))
            }
        }
        _ => "**input: Any".into(),
    };
    let _ = writeln!(out, "{indent}@staticmethod");
    let _ = writeln!(out, "{indent}def {function}({parameters}) -> Any:");
    let doc = format!(
        "{}\n\n`{}` (effect: {})",
        info.description,
        info.name,
        info.effect.as_str()
    )
    .replace("\"\"\"", "'''")
    .replace('\\', "\\\\");
    let _ = writeln!(out, "{indent}    \"\"\"{}\"\"\"", doc.trim());
    let _ = writeln!(out, "{indent}    ...");
}

/// Python stubs of `forge.tools`.
pub fn python(registry: &ToolRegistry) -> String {
    let mut out = String::from(
        "# The tools a forge-host script may call (forge-host tools --format py).\n\
         # Call them as forge.tools.NAMESPACE.FUNCTION(**input); forge.call(name, input) works too.\n\
         from typing import Any\n\n\nclass tools:\n",
    );
    let groups = grouped(registry);
    if groups.is_empty() {
        out.push_str("    pass\n");
    }
    for (namespace, functions) in groups {
        if namespace.is_empty() {
            for (function, tool) in functions {
                py_function(&mut out, "    ", &function, tool);
            }
        } else {
            let _ = writeln!(out, "    class {namespace}:");
            for (function, tool) in functions {
                py_function(&mut out, "        ", &function, tool);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_become_types_and_open_schemas_unknown() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where"},
                "n": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "my-key": {},
            },
            "required": ["path"],
            "additionalProperties": false,
        });
        assert_eq!(
            ts_type(&schema, 0),
            "{ \"my-key\"?: unknown; n?: number | null; /** Where */ path: string; tags?: Array<\"a\" | \"b\"> }"
        );
        assert_eq!(ts_type(&json!({}), 0), "unknown");
        assert_eq!(
            ts_type(&json!({"type": "object"}), 0),
            "{ [key: string]: unknown }"
        );
        assert_eq!(
            ts_type(&json!({"anyOf": [{"type": "string"}, {"const": 1}]}), 0),
            "(string) | (1)"
        );
    }

    #[test]
    fn the_builtins_are_declared_in_both_languages() {
        let registry = ToolRegistry::with_builtins();
        let ts = typescript(&registry);
        let tools = ts.find("declare const tools: {").expect("tools");
        assert!(ts.starts_with(GLOBALS), "the globals come first");
        assert!(ts[..tools].contains("declare function setTimeout"), "{ts}");
        assert!(
            ts.contains("  sleep(input: { ms: number }): Promise<unknown>;"),
            "{ts}"
        );
        assert!(
            ts.contains("  echo(input?: unknown): Promise<unknown>;"),
            "{ts}"
        );
        let py = python(&registry);
        assert!(py.contains("    def sleep(*, ms: int) -> Any:"), "{py}");
        let listed = json(&registry);
        assert_eq!(listed["tools"][0]["function_path"], json!(["echo"]));
    }
}
