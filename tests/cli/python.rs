//! The Python engine seen from outside: files in and out, publication, provenance, and state
//! shared with JavaScript.

use std::ffi::OsStr;

use serde_json::json;

use crate::util::{NO_ARGS, Sandbox, args, repo};

const ANALYSIS: &str = r#"
import csv, forge
rows = forge.read_table("sales.csv")
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + row["amount"]
with open(forge.output_path("summary.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["region", "total"])
    writer.writerows(sorted(totals.items()))
forge.charts.bar(sorted(totals), [totals[k] for k in sorted(totals)], title="Totals", path="charts/totals.svg")
forge.result(totals)
"#;

#[test]
fn a_csv_analysis_publishes_its_outputs_with_provenance() {
    let sandbox = Sandbox::new();
    let csv = sandbox.script("sales.csv", "region,amount\nnorth,10\nsouth,20\nnorth,5\n");
    let out = sandbox.dir.path().join("out");
    let report = sandbox
        .run_py(ANALYSIS, &args!["--input", &csv, "--out", &out])
        .assert_succeeded();
    assert_eq!(report["engine"], "python-cpython");
    assert_eq!(report["value"], json!({"north": 15, "south": 20}));
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv")).expect("summary"),
        "region,total\r\nnorth,15\r\nsouth,20\r\n"
    );
    let svg = std::fs::read_to_string(out.join("charts/totals.svg")).expect("chart");
    assert!(svg.starts_with("<svg") && svg.contains("Totals"), "{svg}");
    assert!(
        !svg.contains("<script") && !svg.contains("https://"),
        "standalone, no network"
    );
    let provenance: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("provenance.json")).expect("provenance"))
            .expect("json");
    assert_eq!(provenance["engine"], "python-cpython");
    assert_eq!(provenance["engine_sha256"], report["engine_sha256"]);
    assert_eq!(provenance["status"], "succeeded");
    let sha = sha256_of(&std::fs::read(&csv).expect("csv"));
    assert_eq!(
        provenance["inputs"],
        json!([{"name": "sales.csv", "size": 40, "sha256": sha}])
    );
    assert_eq!(provenance["script_sha256"], sha256_of(ANALYSIS.as_bytes()));
    let outputs: Vec<&str> = provenance["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| o["path"].as_str())
        .collect();
    assert_eq!(outputs, ["charts/totals.svg", "summary.csv"]);
    assert!(provenance["limits"]["memory_bytes"].is_u64() && provenance["wall_ms"].is_u64());
    // The report lists each published file with its size, sha256 and media type.
    let summary = std::fs::read(out.join("summary.csv")).expect("summary");
    let listed: Vec<(&str, &str)> = report["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| Some((o["path"].as_str()?, o["mime_type"].as_str()?)))
        .collect();
    assert_eq!(
        listed,
        [
            ("charts/totals.svg", "image/svg+xml"),
            ("summary.csv", "text/csv")
        ]
    );
    let file = &report["outputs"][1];
    assert_eq!(file["size"], summary.len());
    assert_eq!(file["sha256"], sha256_of(&summary));
}

fn sha256_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[test]
fn outputs_are_published_only_on_success_unless_asked() {
    let sandbox = Sandbox::new();
    let script = "import forge\nopen(forge.output_path('partial.txt'), 'w').write('half')\nraise RuntimeError('failed midway')\n";
    let out = sandbox.dir.path().join("out");
    let failed = sandbox.run_py(script, &args!["--out", &out]);
    assert_eq!(failed.error_code(), "SCRIPT_RUNTIME");
    assert!(!out.exists(), "nothing is published for a failed run");
    let kept = sandbox.run_py(script, &args!["--out", &out, "--publish-on-error"]);
    assert_eq!(kept.status(), "failed");
    assert_eq!(
        std::fs::read_to_string(out.join("partial.txt")).expect("published"),
        "half"
    );
    let provenance = std::fs::read_to_string(out.join("provenance.json")).expect("provenance");
    assert!(provenance.contains("\"failed\"") && provenance.contains("SCRIPT_RUNTIME"));
}

#[test]
fn a_run_without_out_publishes_to_forge_out_only_when_it_wrote_files() {
    let sandbox = Sandbox::new();
    sandbox
        .run_py("import forge\nforge.result(1)\n", NO_ARGS)
        .assert_succeeded();
    assert!(!sandbox.dir.path().join("forge-out").exists());
    let writer = sandbox.run_py(
        "import forge\nopen(forge.output_path('a.txt'), 'w').write('x')\n",
        NO_ARGS,
    );
    let id = writer.report()["id"].as_str().expect("id").to_string();
    let published = sandbox.dir.path().join("forge-out").join(&id);
    assert_eq!(
        std::fs::read_to_string(published.join("a.txt")).expect("published"),
        "x"
    );
    assert_eq!(writer.report()["out_dir"], format!("forge-out/{id}"));
}

#[test]
fn invalid_outputs_are_rejected_and_nothing_partial_is_left() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("out");
    let cases = [
        (
            "import forge\nopen(forge.output_path('big.bin'), 'w').write('x' * 4096)\n",
            vec!["--max-file-bytes", "1KiB"],
            "big.bin",
        ),
        (
            "import forge\nopen(forge.output_path('bad\\x01name'), 'w').write('x')\n",
            vec![],
            "bad",
        ),
        (
            "import forge, json\njson.dump([{'path': 'missing.csv'}], open(forge.output_path('outputs.json'), 'w'))\n",
            vec![],
            "outputs.json",
        ),
        (
            "import forge\nfor i in range(5): open(forge.output_path(f'f{i}.txt'), 'w').write('x')\n",
            vec!["--max-files", "3"],
            "over the limit",
        ),
    ];
    for (script, extra, culprit) in cases {
        let mut args = args!["--out", &out].to_vec();
        args.extend(extra.into_iter().map(OsStr::new));
        let run = sandbox.run_py(script, &args);
        assert_eq!(
            run.error_code(),
            "PUBLICATION_REJECTED",
            "{script}: {}",
            run.stdout()
        );
        let message = run.report()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(culprit), "{message}");
        assert!(!out.exists(), "{script}: nothing published");
        let leftovers: Vec<_> = std::fs::read_dir(sandbox.dir.path())
            .expect("read")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("forge-staging"))
            .collect();
        assert!(leftovers.is_empty(), "no staging folder left");
    }
}

#[test]
fn a_publication_failure_commits_no_state() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("out");
    let script = "import forge\nforge.state.set('n', 1)\nopen(forge.output_path('big.bin'), 'w').write('x' * 4096)\n";
    let run = sandbox.run_py(
        script,
        &args!["--out", &out, "--max-file-bytes", "1KiB", "--session", "p"],
    );
    assert_eq!(run.error_code(), "PUBLICATION_REJECTED");
    let check = sandbox.run_py(
        "import forge\nforge.result(forge.state.get('n'))\n",
        &["--session", "p"],
    );
    assert_eq!(check.report()["value"], serde_json::Value::Null);
}

#[test]
fn a_foreign_out_folder_is_refused_before_running() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("mine");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("precious.txt"), "keep").expect("write");
    let run = sandbox.run_py("import forge\nforge.result(1)\n", &args!["--out", &out]);
    assert_eq!(run.code(), 2);
    assert_eq!(
        std::fs::read_to_string(out.join("precious.txt")).expect("kept"),
        "keep"
    );
}

#[test]
fn folder_inputs_keep_their_tree_and_are_listed_with_hashes() {
    let sandbox = Sandbox::new();
    let data = sandbox.dir.path().join("dataset");
    std::fs::create_dir_all(data.join("nested")).expect("mkdir");
    std::fs::write(data.join("a.txt"), "alpha").expect("write");
    std::fs::write(data.join("nested/b.jsonl"), "{\"k\": 1}\n{\"k\": 2}\n").expect("write");
    let script = "import forge\nforge.result({'inputs': [(i['name'], i['size']) for i in forge.inputs()], 'rows': forge.read_table('dataset/nested/b.jsonl')})\n";
    let run = sandbox.run_py(script, &args!["--input", &data]);
    assert_eq!(
        run.report()["value"],
        json!({"inputs": [["dataset/a.txt", 5], ["dataset/nested/b.jsonl", 18]], "rows": [{"k": 1}, {"k": 2}]})
    );
}

#[test]
fn an_input_holding_the_data_directory_is_refused() {
    let sandbox = Sandbox::new();
    let run = sandbox.run_py(
        "import forge\nforge.result(1)\n",
        &args!["--input", sandbox.dir.path()],
    );
    assert_eq!(run.code(), 2, "{}", run.stdout());
    assert_eq!(run.report()["error"]["code"], "INVALID_INPUT");
}

#[test]
fn sqlite_and_tsv_inputs_read_as_tables() {
    let sandbox = Sandbox::new();
    let tsv = sandbox.script("t.tsv", "name\tscore\nada\t3.5\nken\t\n");
    let db = repo().join("examples/data/shop.sqlite");
    let script = "import forge\nforge.result([forge.read_table('t.tsv'), len(forge.read_table('shop.sqlite', table='orders'))])\n";
    let run = sandbox.run_py(script, &args!["--input", &tsv, "--input", &db]);
    assert_eq!(
        run.report()["value"],
        json!([[{"name": "ada", "score": 3.5}, {"name": "ken", "score": null}], 60])
    );
}

#[test]
fn random_differs_between_runs() {
    let sandbox = Sandbox::new();
    let script = "import forge, random, os\nforge.result([random.random(), os.urandom(8).hex()])\n";
    let first = sandbox.run_py(script, NO_ARGS).report()["value"].clone();
    let second = sandbox.run_py(script, NO_ARGS).report()["value"].clone();
    assert_ne!(first[0], second[0], "random is reseeded on every run");
    assert_ne!(first[1], second[1]);
}

#[test]
fn gather_runs_python_calls_concurrently() {
    let sandbox = Sandbox::new();
    let script = "import forge\nforge.result(forge.gather([('sleep', {'ms': 600})] * 4))\n";
    sandbox
        .run_py(script, &["--timeout", "1500ms"])
        .assert_succeeded();
    let serial = sandbox.run_py(script, &["--timeout", "1500ms", "--max-concurrency", "1"]);
    assert_eq!(serial.status(), "timed_out");
}

#[test]
fn every_chart_kind_and_the_report_are_standalone_files() {
    let sandbox = Sandbox::new();
    let script = r#"
import forge
from forge import charts
charts.bar(["north", "south"], [3, 5], title="Bars <&>", path="bar.svg")
charts.line([1, 2, 3], {"a": [1, 4, 2], "b": [2, 2, 3]}, title="Lines", path="line.svg")
charts.scatter([1, 2, 3], [3, 1, 2], title="Points", path="scatter.svg")
charts.pie(["x", "y"], [1, 3], title="Shares", path="pie.svg")
charts.report("Report", [("Bars", "bar.svg"), ("Table", charts.table([{"k": 1}]))])
try:
    charts.pie(["x"], [-1])
except ValueError as e:
    forge.result(str(e))
"#;
    let out = sandbox.dir.path().join("charts");
    let run = sandbox.run_py(script, &args!["--out", &out]);
    let report = run.assert_succeeded();
    for (file, label) in [
        ("bar.svg", "Bars &lt;&amp;&gt;"),
        ("line.svg", "Lines"),
        ("scatter.svg", "Points"),
        ("pie.svg", "Shares"),
    ] {
        let svg = std::fs::read_to_string(out.join(file)).expect(file);
        assert!(
            svg.starts_with("<svg xmlns='http://www.w3.org/2000/svg'")
                && svg.trim_end().ends_with("</svg>"),
            "{file}"
        );
        assert!(svg.contains(label), "{file} has its escaped title");
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("report");
    assert!(
        html.contains("<svg")
            && html.contains("<table>")
            && !html.contains("<script")
            && !html.contains("src=")
    );
    assert!(
        report["value"]
            .as_str()
            .unwrap_or_default()
            .contains("non-negative")
    );
}
