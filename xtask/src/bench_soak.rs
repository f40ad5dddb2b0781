//! Floods and soak for `cargo xtask bench` (issue 11): 1 GiB through each output channel and
//! through tool responses, each in one `forge-host run` with its peak resident memory
//! (`bench/floods/floods.py`); and 10,000 journaled runs in one process through the library,
//! with resident memory and open descriptors after a warm-up and at the end (`host/examples/soak.rs`).

use std::path::Path;
use std::process::Command;

use crate::Result;
use crate::bench::capture;

/// (label, key, unit) of the rows BENCHMARKS.md shows.
pub const ROWS: [(&str, &str, &str); 16] = [
    (
        "1 GiB through stdout: peak RSS of the `forge-host run` process",
        "flood_stdout_peak_rss_mib",
        "MiB",
    ),
    (
        "1 GiB through stdout: wall time",
        "flood_stdout_seconds",
        "s",
    ),
    (
        "1 GiB through stderr: peak RSS",
        "flood_stderr_peak_rss_mib",
        "MiB",
    ),
    (
        "1 GiB through stderr: wall time",
        "flood_stderr_seconds",
        "s",
    ),
    (
        "1 GiB of `text()` values (refused past the budget): peak RSS",
        "flood_text_peak_rss_mib",
        "MiB",
    ),
    (
        "1 GiB of `text()` values: wall time",
        "flood_text_seconds",
        "s",
    ),
    (
        "1 GiB of `progress()` messages: peak RSS",
        "flood_progress_peak_rss_mib",
        "MiB",
    ),
    (
        "1 GiB of `progress()` messages: wall time",
        "flood_progress_seconds",
        "s",
    ),
    (
        "1 GiB of tool responses (1,024 `echo` calls of 1 MiB): peak RSS",
        "flood_tool_responses_peak_rss_mib",
        "MiB",
    ),
    (
        "1 GiB of tool responses: wall time",
        "flood_tool_responses_seconds",
        "s",
    ),
    ("soak: journaled runs in one process", "soak_runs", ""),
    (
        "soak: RSS after the warm-up (the first tenth)",
        "soak_rss_after_warmup_mib",
        "MiB",
    ),
    ("soak: RSS after every run", "soak_rss_after_all_mib", "MiB"),
    (
        "soak: RSS growth after the warm-up",
        "soak_rss_growth_percent",
        "%",
    ),
    (
        "soak: open descriptors after the warm-up",
        "soak_fds_after_warmup",
        "",
    ),
    (
        "soak: open descriptors after every run",
        "soak_fds_after_all",
        "",
    ),
];

/// The floods' and the soak's numbers, as flat JSON texts.
pub fn outputs(root: &Path, scratch: &Path) -> Result<Vec<String>> {
    let floods = capture(
        Command::new("python3")
            .arg(root.join("bench/floods/floods.py"))
            .arg(crate::paths::host_binary())
            .arg(scratch.join("flood-data")),
    )?;
    let soak = capture(
        Command::new(crate::paths::release_example("soak"))
            .arg(crate::paths::engines())
            .arg(scratch.join("soak-data"))
            .arg("10000"),
    )?;
    Ok(vec![floods, soak])
}

/// The section of BENCHMARKS.md.
pub fn markdown(value: impl Fn(&str) -> Option<f64>) -> String {
    let mut text = String::from("## Floods and soak\n\n| measure | value |\n|---|---|\n");
    for (label, key, unit) in ROWS {
        let shown = value(key).map_or("n/a".to_string(), |v| {
            if unit.is_empty() {
                format!("{v:.0}")
            } else {
                format!("{v:.1} {unit}")
            }
        });
        text.push_str(&format!("| {label} | {shown} |\n"));
    }
    text.push('\n');
    text
}
