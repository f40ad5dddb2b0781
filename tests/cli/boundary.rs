//! The JSON boundary (issue 11): values cross it exactly (every double bit for bit), nesting to
//! 512 levels is accepted everywhere and deeper is the script's error, and a value a script
//! cannot encode (a lone surrogate) is the script's error, never an engine failure.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox};

/// 10,000 doubles from a fixed generator: random bit patterns (subnormals included), plus the
/// edges.
fn doubles() -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut values = vec![
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 7.0,
        f64::MAX,
        f64::MIN,
        0.1 + 0.2,
        -0.0,
        9_007_199_254_740_991.0,
    ];
    while values.len() < 10_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let value = f64::from_bits(state);
        if value.is_finite() {
            values.push(value);
        }
    }
    values
}

fn assert_bits(returned: &Value, sent: &[f64]) {
    let returned = returned.as_array().expect("an array back");
    assert_eq!(returned.len(), sent.len());
    let mut changed = 0;
    for (back, value) in returned.iter().zip(sent) {
        let back = back.as_f64().expect("a number");
        // JSON has no -0 for integers; a -0.0 may come back as 0.
        if back.to_bits() != value.to_bits() && !(back == 0.0 && *value == 0.0) {
            changed += 1;
        }
    }
    assert_eq!(changed, 0, "{changed} doubles changed across the boundary");
}

#[test]
fn doubles_cross_every_boundary_bit_for_bit_in_javascript() {
    let sandbox = Sandbox::new();
    let sent = doubles();
    let script = format!(
        r#"
        const xs = {values};
        const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]) || (x === 0 && b[i] === 0));
        const echoed = await tools.echo(xs);
        state.set("xs", xs);
        const stored = state.get("xs");
        text(xs);
        if (!same(xs, echoed)) throw new Error("echo changed a double");
        if (!same(xs, stored)) throw new Error("state changed a double");
        return echoed;
        "#,
        values = json!(sent)
    );
    let run = sandbox.run_js(&script, NO_ARGS);
    let report = run.assert_succeeded();
    assert_bits(&report["value"], &sent);
    assert_bits(&report["text"][0], &sent);
}

#[test]
fn doubles_and_big_integers_cross_every_boundary_exactly_in_python() {
    let sandbox = Sandbox::new();
    let sent = doubles();
    let script = format!(
        r#"
import json, forge
xs = json.loads({values:?})
ints = [2**53 - 1, 2**53, 2**53 + 1, -(2**53 + 1)]
echoed = forge.call("echo", {{"xs": xs, "ints": ints}})
forge.state.set("xs", xs)
stored = forge.state.get("xs")
forge.text(xs)
same = lambda a, b: len(a) == len(b) and all(x == y and str(x) == str(y) or x == y == 0 for x, y in zip(a, b))
assert same(xs, echoed["xs"]), "echo changed a double"
assert echoed["ints"] == ints, echoed["ints"]
assert same(xs, stored), "state changed a double"
forge.result({{"xs": echoed["xs"], "ints": echoed["ints"]}})
"#,
        values = json!(sent).to_string()
    );
    let run = sandbox.run_py(&script, NO_ARGS);
    let report = run.assert_succeeded();
    assert_bits(&report["value"]["xs"], &sent);
    assert_bits(&report["text"][0], &sent);
    assert_eq!(
        report["value"]["ints"],
        json!([
            9_007_199_254_740_991_u64,
            9_007_199_254_740_992_u64,
            9_007_199_254_740_993_u64,
            -9_007_199_254_740_993_i64
        ])
    );
}

#[test]
fn nesting_to_512_levels_crosses_and_deeper_is_the_scripts_error_in_javascript() {
    let sandbox = Sandbox::new();
    let script = r#"
        const nest = (n) => { let v = 1; for (let i = 0; i < n; i++) v = [v]; return v; };
        const depth = (v) => { let d = 0; while (Array.isArray(v)) { v = v[0]; d++; } return d; };
        const ok = await tools.echo(nest(512));
        state.set("deep", nest(511));
        text(nest(512));
        const refused = {};
        try { await tools.echo(nest(513)); } catch (e) { refused.call = [e.code, e.message]; }
        try { state.set("deeper", nest(600)); } catch (e) { refused.state = e.code; }
        try { text(nest(513)); } catch (e) { refused.text = e.code; }
        return {echoed: depth(ok), stored: depth(state.get("deep")), refused, result: nest(511)};
    "#;
    let run = sandbox.run_js(script, NO_ARGS);
    let report = run.assert_succeeded();
    assert_eq!(report["value"]["echoed"], 512);
    assert_eq!(report["value"]["stored"], 511);
    assert_eq!(report["value"]["refused"]["call"][0], "INVALID_INPUT");
    assert!(
        report["value"]["refused"]["call"][1]
            .as_str()
            .unwrap_or_default()
            .contains("512"),
        "{report:#}"
    );
    assert_eq!(report["value"]["refused"]["state"], "INVALID_INPUT");
    assert_eq!(report["value"]["refused"]["text"], "INVALID_INPUT");
    let too_deep = sandbox.run_js(
        "let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return v;",
        NO_ARGS,
    );
    assert_eq!(too_deep.status(), "failed");
    let code = too_deep.error_code();
    assert!(
        code == "SCRIPT_RUNTIME" || code == "STACK_LIMIT",
        "a result too deep to return is the script's error: {}",
        too_deep.stdout()
    );
}

#[test]
fn nesting_to_512_levels_crosses_and_deeper_is_the_scripts_error_in_python() {
    let sandbox = Sandbox::new();
    let script = r#"
import forge
def nest(n):
    v = 1
    for _ in range(n):
        v = [v]
    return v
def depth(v):
    d = 0
    while isinstance(v, list):
        v, d = v[0], d + 1
    return d
ok = forge.call("echo", nest(512))
try:
    forge.call("echo", nest(513))
    refused = None
except forge.ToolError as e:
    refused = [e.code, str(e)]
forge.result({"echoed": depth(ok), "refused": refused})
"#;
    let run = sandbox.run_py(script, NO_ARGS);
    let report = run.assert_succeeded();
    assert_eq!(report["value"]["echoed"], 512);
    assert_eq!(report["value"]["refused"][0], "INVALID_INPUT", "{report:#}");
}

#[test]
fn a_lone_surrogate_is_the_scripts_error_not_an_engine_failure() {
    let sandbox = Sandbox::new();
    let python = sandbox.run_py("import forge\nforge.result('\\ud800')", NO_ARGS);
    assert_eq!(python.error_code(), "SCRIPT_RUNTIME", "{}", python.stdout());
    assert!(
        python.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("surrogate")
    );
    let js_result = sandbox.run_js("return '\\ud800'", NO_ARGS);
    assert_eq!(
        js_result.error_code(),
        "SCRIPT_RUNTIME",
        "{}",
        js_result.stdout()
    );
    let js_call = sandbox.run_js(
        "try { await tools.echo({s: 'a\\udc00b'}); } catch (e) { return e.code; }",
        NO_ARGS,
    );
    assert_eq!(js_call.assert_succeeded()["value"], "INVALID_INPUT");
    let py_call = sandbox.run_py(
        "import forge\ntry:\n    forge.call('echo', {'s': '\\udc00'})\nexcept ValueError as e:\n    forge.result(str(e))",
        NO_ARGS,
    );
    assert!(
        py_call.assert_succeeded()["value"]
            .as_str()
            .unwrap_or_default()
            .contains("surrogate")
    );
}
