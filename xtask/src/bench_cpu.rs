//! The CPU-bound Python set of `cargo xtask bench` (issue 12): `bench/cpu/suite.py` (a loop,
//! `json` dumps/loads, `re`, nbody), timed inside the interpreter, on native CPython 3.14 (Debian
//! sid's build, `bench/cpu/native_cpython.py`) and in the CPython component through
//! `forge-host run`.

use std::path::Path;
use std::process::Command;

use crate::Result;
use crate::bench::capture;

/// The kernels of `suite.py`, as (key, what).
pub const KERNELS: [(&str, &str); 4] = [
    ("loop", "a loop over small ints (300k iterations)"),
    ("json", "`json` dumps + loads of 2,000 rows, 5 times"),
    ("regex", "`re` over 3,000 matches"),
    ("nbody", "nbody, 2,000 steps"),
];

/// `native314_cpu_KERNEL_ms` and `python_cpu_KERNEL_ms` for every kernel.
pub fn numbers(root: &Path, scratch: &Path) -> Result<Vec<(String, f64)>> {
    let suite = root.join("bench/cpu/suite.py");
    let native = capture(
        Command::new("python3")
            .arg(root.join("bench/cpu/native_cpython.py"))
            .arg(crate::paths::target().join("bench-cpython")),
    )?;
    let native = capture(Command::new(native.trim()).arg(&suite))?;
    let ours = capture(
        Command::new(crate::paths::host_binary())
            .arg("run")
            .arg(&suite)
            .args(["--json", "--timeout", "5m", "--data-dir"])
            .arg(scratch.join("cpu-data")),
    )?;
    let native: serde_json::Value = serde_json::from_str(&native).map_err(|e| e.to_string())?;
    let ours: serde_json::Value = serde_json::from_str(&ours).map_err(|e| e.to_string())?;
    let mut numbers = Vec::new();
    for (kernel, _) in KERNELS {
        for (prefix, times) in [("native314", &native), ("python", &ours["value"])] {
            let ms = times[kernel]
                .as_f64()
                .ok_or_else(|| format!("suite.py gave no time for `{kernel}`: {times}"))?;
            numbers.push((format!("{prefix}_cpu_{kernel}_ms"), ms));
        }
    }
    Ok(numbers)
}

/// The table, in Markdown.
pub fn markdown(number: impl Fn(&str) -> Option<f64>) -> String {
    let mut text = String::from(
        "## CPU-bound Python: the component vs native CPython 3.14 (goal: at most 2.5x)\n\n\
         | kernel (timed inside the interpreter) | forge-host | native CPython 3.14 (Debian sid) | ratio |\n\
         |---|---|---|---|\n",
    );
    for (kernel, what) in KERNELS {
        let ours = number(&format!("python_cpu_{kernel}_ms"));
        let native = number(&format!("native314_cpu_{kernel}_ms"));
        let cell = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.3} ms"));
        let ratio = match (ours, native) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "n/a".into(),
        };
        text.push_str(&format!(
            "| {what} | {} | {} | {ratio} |\n",
            cell(ours),
            cell(native)
        ));
    }
    text.push('\n');
    text
}
