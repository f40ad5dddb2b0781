//! bz2 and lzma in both CPython profiles: their C halves (`_bz2`, `_lzma`, with libbz2 and
//! liblzma) are built by `components/python-science/science_build/compression.py` and linked
//! into python-cpython and python-science alike. The codecs' own round trips run as cases
//! (`tests/cases/compression-*`); here: both engines by id, and pandas reading `.bz2` and `.xz`
//! inputs that the host compressed (and writing ones the host can read back).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Sandbox, args};

/// Runs Python `code` with the host's python3 (its bz2 and lzma use Debian's native libbz2 and
/// liblzma) and returns its stdout.
fn host_python(code: &str, arguments: &[&Path]) -> Vec<u8> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(arguments)
        .output()
        .expect("python3 (the host's) must be installed to make the compressed inputs");
    assert!(
        output.status.success(),
        "host python3 failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

#[test]
fn compression_modules_are_in_both_python_engines() {
    let sandbox = Sandbox::new();
    let code = r#"import bz2, lzma, forge, preload
forge.result([bz2.decompress(bz2.compress(b"hi")).decode(),
              lzma.decompress(lzma.compress(b"hi")).decode(),
              lzma.decompress(lzma.compress(b"hi", format=lzma.FORMAT_ALONE)).decode(),
              [m for m in preload.MISSING if m in ("bz2", "lzma")]])"#;
    for engine in ["python-cpython", "python-science"] {
        let run = sandbox.forge(&args![
            "run", "-e", code, "--lang", "py", "--json", "--engine", engine
        ]);
        let report = run.assert_succeeded();
        assert_eq!(
            report["engine"], engine,
            "both engines must be built (`cargo xtask build`): {report:#}"
        );
        assert_eq!(report["value"], json!(["hi", "hi", "hi", []]), "{report:#}");
    }
}

/// A CSV of `rows` sales (amounts are quarters, so every sum is exact in a double) and the
/// total amount per region.
fn sales_csv(rows: u32) -> (String, Vec<(&'static str, f64)>) {
    let regions = ["east", "north", "south", "west"];
    let mut totals = vec![0.0; regions.len()];
    let mut csv = String::from("id,region,amount\n");
    for i in 0..rows {
        let region = (i * 7 % 4) as usize;
        let amount = f64::from(i * 37 % 1000) / 4.0;
        totals[region] += amount;
        csv.push_str(&format!("{i},{},{amount:?}\n", regions[region]));
    }
    (csv, regions.into_iter().zip(totals).collect())
}

#[test]
fn compression_pandas_reads_bz2_and_xz_inputs_and_writes_them() {
    let sandbox = Sandbox::new();
    let (csv, totals) = sales_csv(600);
    let plain = sandbox.dir.path().join("sales.csv");
    std::fs::write(&plain, &csv).expect("write the csv");
    host_python(
        "import bz2, lzma, sys\n\
         data = open(sys.argv[1], 'rb').read()\n\
         open(sys.argv[1] + '.bz2', 'wb').write(bz2.compress(data))\n\
         open(sys.argv[1] + '.xz', 'wb').write(lzma.compress(data))\n",
        &[&plain],
    );
    let bz2_input = sandbox.dir.path().join("sales.csv.bz2");
    let xz_input = sandbox.dir.path().join("sales.csv.xz");
    for input in [&bz2_input, &xz_input] {
        let packed = std::fs::read(input).expect("compressed input");
        assert!(packed.len() < csv.len() / 2, "{}", input.display());
    }
    let script = sandbox.script(
        "read_compressed.py",
        r#"import forge
import pandas as pd

by_suffix = pd.read_csv(forge.input_path("sales.csv.bz2"))  # compression from the suffix
named = pd.read_csv(forge.input_path("sales.csv.xz"), compression="xz")
with open(forge.input_path("sales.csv.bz2"), "rb") as handle:
    from_handle = pd.read_csv(handle, compression="bz2")
with open(forge.input_path("sales.csv.xz"), "rb") as handle:
    xz_handle = pd.read_csv(handle, compression={"method": "xz"})
frames = [by_suffix, named, from_handle, xz_handle]
by_suffix.to_csv(forge.output_path("copy.csv.bz2"), index=False)
named.to_csv(forge.output_path("copy.csv.xz"), index=False)
forge.result({
    "rows": [len(f) for f in frames],
    "columns": [list(f.columns) for f in frames],
    "equal": [f.equals(by_suffix) for f in frames],
    "totals": {k: float(v) for k, v in by_suffix.groupby("region")["amount"].sum().items()},
})
"#,
    );
    let out = sandbox.dir.path().join("out");
    let report = sandbox
        .forge(&args![
            "run", &script, "--json", "--input", &bz2_input, "--input", &xz_input, "--out", &out
        ])
        .assert_succeeded();
    assert_eq!(report["engine"], "python-science", "{report:#}");
    let value = &report["value"];
    assert_eq!(value["rows"], json!([600, 600, 600, 600]), "{value:#}");
    assert_eq!(value["equal"], json!([true, true, true, true]), "{value:#}");
    for columns in value["columns"].as_array().expect("columns") {
        assert_eq!(columns, &json!(["id", "region", "amount"]), "{value:#}");
    }
    let expected: serde_json::Map<String, Value> = totals
        .iter()
        .map(|(region, total)| (region.to_string(), json!(total)))
        .collect();
    assert_eq!(value["totals"], Value::Object(expected), "{value:#}");

    // What the engine compressed, the host's native libraries decompress to the same CSV.
    for (file, module) in [("copy.csv.bz2", "bz2"), ("copy.csv.xz", "lzma")] {
        let path = out.join(file);
        let text = host_python(
            &format!(
                "import {module}, sys\nsys.stdout.buffer.write({module}.decompress(open(sys.argv[1], 'rb').read()))"
            ),
            &[&path],
        );
        assert_eq!(String::from_utf8_lossy(&text), csv, "{file}");
    }
}
