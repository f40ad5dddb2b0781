//! Turns one run's numbers into BENCHMARKS.md: the words of `BENCHMARKS.md.in` with its
//! `{{name}}` parts filled with the rows of `rows.rs` and `goals.rs`. Nothing here measures, so
//! a page can be rendered (and checked) from a `results.json` alone.

use super::Numbers;
use super::goals::{GOALS, Goal};
use super::rows::{self, PeerRow, Shown, ValueRow};
use crate::Result;

/// The page's words, with `{{name}}` where a generated part goes. Its leading `<!-- -->` comment,
/// for whoever edits it, is left out of the page.
const TEMPLATE: &str = include_str!("BENCHMARKS.md.in");

/// What one page shows: a run's numbers, where and when they were measured, and the versions of
/// what was measured.
pub struct Page<'a> {
    /// The numbers, by key.
    pub numbers: &'a Numbers,
    /// The machine's name (`hostname`).
    pub machine: &'a str,
    /// The day of the run, `YYYY-MM-DD`.
    pub date: &'a str,
    /// (what, version) pairs.
    pub versions: &'a [(String, String)],
}

/// BENCHMARKS.md for `page`.
pub fn markdown(page: &Page) -> Result<String> {
    let numbers = page.numbers;
    let mut mcp = peer_rows(numbers, &rows::MCP_ROWS);
    mcp.extend(
        rows::MCP_MEMORY_ROWS
            .iter()
            .filter_map(|row| Some(format!("{} | | |", value_row(numbers, row)?))),
    );
    let mut engines = value_rows(numbers, &rows::ENGINE_ROWS);
    engines.extend(
        rows::ENGINE_ROWS_IF_MEASURED
            .iter()
            .filter_map(|row| value_row(numbers, row)),
    );
    let soak = value_rows(numbers, &rows::SOAK_ROWS);
    let versions: Vec<String> = page
        .versions
        .iter()
        .map(|(what, version)| format!("| {what} | {version} |"))
        .collect();
    let doors = value_rows(numbers, &rows::DOORS_ROWS);
    let parts: [(&str, Vec<String>); 14] = [
        ("machine", vec![page.machine.to_string()]),
        ("date", vec![page.date.to_string()]),
        ("goals", goal_rows(numbers)),
        ("javascript", peer_rows(numbers, &rows::JS_ROWS)),
        ("python", peer_rows(numbers, &rows::PY_ROWS)),
        ("science", peer_rows(numbers, &rows::SCIENCE_ROWS)),
        ("recording", peer_rows(numbers, &rows::RECORD_ROWS)),
        ("cpu", cpu_rows(numbers)),
        ("mcp", mcp),
        ("cluster", peer_rows(numbers, &rows::CLUSTER_ROWS)),
        ("doors", doors),
        ("soak", soak),
        ("engines", engines),
        ("versions", versions),
    ];
    fill(
        body(TEMPLATE),
        &parts.map(|(name, lines)| (name, lines.join("\n"))),
    )
}

/// `template` without its leading `<!-- ... -->` comment.
fn body(template: &str) -> &str {
    template
        .strip_prefix("<!--")
        .and_then(|rest| rest.split_once("-->\n"))
        .map_or(template, |(_, body)| body)
}

/// `template` with every `{{name}}` replaced by the text of part `name`.
fn fill(template: &str, parts: &[(&str, String)]) -> Result<String> {
    let mut out = String::with_capacity(template.len() * 3);
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find("}}")
            .ok_or("BENCHMARKS.md.in has a `{{` without its `}}`")?;
        let name = &after[..end];
        let (_, text) = parts
            .iter()
            .find(|(part, _)| *part == name)
            .ok_or_else(|| format!("BENCHMARKS.md.in names `{{{{{name}}}}}`, which is no part"))?;
        out.push_str(text);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The number `key` as `how` says, if it was measured.
fn shown(numbers: &Numbers, key: &str, how: Shown) -> Option<String> {
    let v = *numbers.get(key)?;
    Some(match how {
        Shown::Time if key.ends_with("_per_s") => format!("{v:.0}/s"),
        Shown::Time => format!("{v:.3} ms"),
        Shown::Whole("") => format!("{v:.0}"),
        Shown::Whole(unit) => format!("{v:.0} {unit}"),
        Shown::Tenths(unit) => format!("{v:.1} {unit}"),
    })
}

/// A time (or a rate), `n/a` when it was not measured.
fn time(numbers: &Numbers, key: &str) -> String {
    shown(numbers, key, Shown::Time).unwrap_or_else(|| "n/a".into())
}

/// `a / b` as `0.25x`, `n/a` when either is missing.
fn ratio(numbers: &Numbers, a: &str, b: &str) -> String {
    match (numbers.get(a), numbers.get(b)) {
        (Some(a), Some(b)) if *b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

/// `| label | value |`, if the value was measured.
fn value_row(numbers: &Numbers, (label, key, how): &ValueRow) -> Option<String> {
    Some(format!("| {label} | {} |", shown(numbers, key, *how)?))
}

/// `| label | value |` for each row, `n/a` where it was not measured.
fn value_rows(numbers: &Numbers, rows: &[ValueRow]) -> Vec<String> {
    rows.iter()
        .map(|row| value_row(numbers, row).unwrap_or_else(|| format!("| {} | n/a |", row.0)))
        .collect()
}

/// One row per peer: forge-host's number, the peer's, and their ratio.
fn peer_rows(numbers: &Numbers, rows: &[PeerRow]) -> Vec<String> {
    rows.iter()
        .map(|(what, ours, peer_name, peer)| {
            format!(
                "| {what} | {} | {peer_name} | {} | {} |",
                time(numbers, ours),
                time(numbers, peer),
                ratio(numbers, ours, peer)
            )
        })
        .collect()
}

/// The CPU-bound Python kernels: the component's time, native CPython's and their ratio.
fn cpu_rows(numbers: &Numbers) -> Vec<String> {
    rows::KERNELS
        .iter()
        .map(|(kernel, what)| {
            let ours = format!("python_cpu_{kernel}_ms");
            let native = format!("native314_cpu_{kernel}_ms");
            format!(
                "| {what} | {} | {} | {} |",
                time(numbers, &ours),
                time(numbers, &native),
                ratio(numbers, &ours, &native)
            )
        })
        .collect()
}

/// Each goal of issues 12 and 42: the measure, its goal and whether this run met it.
fn goal_rows(numbers: &Numbers) -> Vec<String> {
    let mut lines = Vec::new();
    for (what, key, goal) in &GOALS {
        let Some(&value) = numbers.get(*key) else {
            lines.push(format!("| {what} | n/a | | |"));
            continue;
        };
        let over = |peer: &str| {
            numbers.get(peer).filter(|peer| **peer > 0.0).map(|&peer| {
                (
                    value / peer,
                    format!("{:.2}x ({value:.3} / {peer:.3})", value / peer),
                )
            })
        };
        let (measured, wanted, met) = match *goal {
            Goal::AtMostMs(goal) => (
                format!("{value:.3} ms"),
                format!("at most {goal} ms"),
                Some(value <= goal),
            ),
            Goal::AtMostMib(goal) => (
                format!("{value:.2} MiB"),
                format!("at most {goal} MiB"),
                Some(value <= goal),
            ),
            Goal::AtMostCount(goal) => (
                format!("{value:.0}"),
                format!("at most {goal}"),
                Some(value <= goal),
            ),
            Goal::AtLeastPerS(goal) => (
                format!("{value:.0}/s"),
                format!("at least {goal}/s"),
                Some(value >= goal),
            ),
            Goal::RatioAtMost(peer, goal) => match over(peer) {
                Some((ratio, text)) => (text, format!("at most {goal}x"), Some(ratio <= goal)),
                None => ("n/a".into(), format!("at most {goal}x"), None),
            },
            Goal::Ratio(peer) => match over(peer) {
                Some((_, text)) => (text, "reported".into(), None),
                None => ("n/a".into(), "reported".into(), None),
            },
        };
        let met = match met {
            Some(true) => "yes",
            Some(false) => "no",
            None => "",
        };
        lines.push(format!("| {what} | {measured} | {wanted} | {met} |"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_fills_the_template_once_and_a_stray_name_is_refused() {
        let text = body(TEMPLATE);
        assert!(
            text.starts_with("# Benchmarks\n"),
            "the comment is left out"
        );
        for name in [
            "goals",
            "javascript",
            "python",
            "science",
            "recording",
            "cpu",
            "mcp",
            "cluster",
            "doors",
            "soak",
            "engines",
            "versions",
        ] {
            assert_eq!(
                text.matches(&format!("{{{{{name}}}}}")).count(),
                1,
                "{name}"
            );
        }
        let parts = [("a", "1".to_string())];
        assert_eq!(fill("x {{a}} y", &parts).as_deref(), Ok("x 1 y"));
        assert!(
            fill("{{b}}", &parts)
                .expect_err("no part b")
                .contains("`{{b}}`")
        );
        assert!(fill("{{a", &parts).is_err());
    }
}
