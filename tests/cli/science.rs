//! The python-science engine (numpy, pandas) seen from outside: which profile runs a script,
//! a pandas analysis publishing its outputs, the hard limits around numpy, time zones and
//! fresh random generators. `cargo xtask test` builds the engine first.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util::{NO_ARGS, Sandbox, args, repo};

/// Runs `source` and returns its value; its report must say it succeeded in python-science.
fn science_value(sandbox: &Sandbox, source: &str) -> Value {
    let report = sandbox.run_py(source, NO_ARGS).assert_succeeded();
    assert_eq!(
        report["engine"], "python-science",
        "the science engine must be built (`cargo xtask build`): {report:#}"
    );
    report["value"].clone()
}

#[test]
fn the_import_scan_picks_the_smallest_profile() {
    let sandbox = Sandbox::new();
    let engine = |source: &str| sandbox.run_py(source, NO_ARGS).report()["engine"].clone();
    assert_eq!(
        engine("import forge, csv\nforge.result(1)\n"),
        "python-cpython"
    );
    assert_eq!(
        engine("import forge\nimport numpy as np\nforge.result(int(np.arange(4).sum()))\n"),
        "python-science"
    );
    assert_eq!(
        engine(
            "import forge\nfrom pandas import DataFrame\nforge.result(len(DataFrame({'a': [1]})))\n"
        ),
        "python-science"
    );
    assert_eq!(
        engine(
            "import forge\nfrom dateutil import parser\nforge.result(parser.parse('2026-01-02').day)\n"
        ),
        "python-science"
    );
    let forced = sandbox.run_py(
        "import forge\nforge.result(1)\n",
        &["--engine", "python-science"],
    );
    assert_eq!(forced.report()["engine"], "python-science");
    // Forcing the standard-library profile (`python` names it, as the language's smallest
    // profile): the scan names the command that builds the other.
    let forced = sandbox.run_py(
        "import forge\nimport pandas\nforge.result(1)\n",
        &["--engine", "python"],
    );
    assert_eq!(forced.report()["engine"], "python-cpython");
    let report = forced.report();
    assert_eq!(report["error"]["code"], "PACKAGE_UNAVAILABLE", "{report:#}");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("pandas") && message.contains("cargo xtask build --profile science"),
        "{message}"
    );
}

/// Revenue per region of `examples/data/sales.csv`, computed here without pandas.
fn expected_revenue() -> BTreeMap<String, f64> {
    let csv = std::fs::read_to_string(repo().join("examples/data/sales.csv")).expect("sales.csv");
    let mut revenue = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let units: f64 = cells[3].parse().expect("units");
        let price: f64 = cells[4].parse().expect("unit_price");
        *revenue.entry(cells[1].to_string()).or_insert(0.0) += units * price;
    }
    revenue
}

#[test]
fn the_pandas_example_publishes_a_csv_and_a_chart() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("out");
    let example = repo().join("examples/pandas-analysis.py");
    let input = repo().join("examples/data/sales.csv");
    let report = sandbox
        .forge(&args![
            "run", &example, "--json", "--input", &input, "--out", &out
        ])
        .assert_succeeded();
    assert_eq!(report["engine"], "python-science");
    let expected = expected_revenue();
    let got = report["value"]["revenue"].as_object().expect("revenue");
    assert_eq!(got.len(), expected.len(), "{report:#}");
    for (region, revenue) in &expected {
        let value = got[region].as_f64().expect("number");
        assert!(
            (value - revenue).abs() < 0.006,
            "{region}: {value} vs {revenue}"
        );
    }
    let best = expected
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(region, _)| region.clone());
    assert_eq!(report["value"]["best_region"].as_str(), best.as_deref());

    let table = std::fs::read_to_string(out.join("by_region.csv")).expect("by_region.csv");
    assert!(
        table.starts_with("region,units,revenue,orders\n"),
        "{table}"
    );
    assert_eq!(table.lines().count(), expected.len() + 1, "{table}");
    let pivot = std::fs::read_to_string(out.join("region_by_month.csv")).expect("pivot");
    assert!(pivot.starts_with("region,2026-01,"), "{pivot}");
    for chart in ["revenue_by_region.svg", "revenue_by_month.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).expect("chart");
        assert!(
            svg.starts_with("<svg") && !svg.contains("<script"),
            "{chart}"
        );
    }
    let provenance: Value =
        serde_json::from_slice(&std::fs::read(out.join("provenance.json")).expect("provenance"))
            .expect("json");
    assert_eq!(provenance["engine"], "python-science", "{provenance:#}");
}

#[test]
fn a_numpy_memory_bomb_ends_in_memory_limit_and_the_host_goes_on() {
    let sandbox = Sandbox::new();
    let bomb =
        "import forge, numpy as np\nheld = []\nwhile True:\n    held.append(np.ones(10**7))\n";
    let run = sandbox.run_py(bomb, &["--memory", "256MiB"]);
    let report = run.report();
    assert_eq!(run.code(), 1, "{report:#}");
    assert_eq!(report["error"]["code"], "MEMORY_LIMIT", "{report:#}");
    let peak = report["metrics"]["memory_peak_bytes"]
        .as_u64()
        .unwrap_or(u64::MAX);
    assert!(peak <= 256 << 20, "peak {peak} above the cap");
    // A single huge array is a ValueError on wasm32 (intp is 32-bit), not a crash.
    let huge = sandbox.run_py("import forge, numpy as np\nnp.ones(10**10)\n", NO_ARGS);
    let report = huge.report();
    assert_eq!(report["error"]["code"], "SCRIPT_RUNTIME", "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("ValueError"),
        "{report:#}"
    );
    assert_eq!(
        science_value(
            &sandbox,
            "import forge, numpy as np\nforge.result(int(np.ones(10).sum()))\n"
        ),
        10
    );
}

#[test]
fn a_numpy_loop_is_stopped_by_the_timeout() {
    let sandbox = Sandbox::new();
    let spin = "import forge, numpy as np\nrng = np.random.default_rng()\nwhile True:\n    np.sort(rng.random(200_000))\n";
    let run = sandbox.run_py(spin, &["--timeout", "1s"]);
    let report = run.report();
    assert_eq!(report["status"], "timed_out", "{report:#}");
    assert_eq!(report["error"]["code"], "TIMEOUT", "{report:#}");
}

#[test]
fn time_zones_come_from_the_bundled_database() {
    let sandbox = Sandbox::new();
    let value = science_value(
        &sandbox,
        r#"
import datetime, zoneinfo
import forge, pandas as pd
from dateutil import tz

paris = zoneinfo.ZoneInfo("Europe/Paris")
summer = datetime.datetime(2026, 7, 1, 12, tzinfo=paris).utcoffset().total_seconds() / 3600
winter = datetime.datetime(2026, 1, 1, 12, tzinfo=paris).utcoffset().total_seconds() / 3600
stamp = pd.Timestamp("2026-03-01 09:00").tz_localize("America/New_York").tz_convert("Asia/Tokyo")
index = pd.date_range("2026-03-28", periods=3, freq="D", tz="Europe/London")
try:
    zoneinfo.ZoneInfo("Nowhere/Land")
    missing = "found"
except zoneinfo.ZoneInfoNotFoundError:
    missing = "not found"
forge.result({
    "summer": summer, "winter": winter, "tokyo": stamp.isoformat(),
    "london": [str(t.utcoffset()) for t in index],
    "dateutil": datetime.datetime(2026, 7, 1, tzinfo=tz.gettz("Australia/Sydney")).utcoffset().total_seconds() / 3600,
    "zones": len(zoneinfo.available_timezones()),
    "missing": missing,
})
"#,
    );
    assert_eq!(value["summer"], 2.0, "{value:#}");
    assert_eq!(value["winter"], 1.0, "{value:#}");
    assert_eq!(value["tokyo"], "2026-03-01T23:00:00+09:00", "{value:#}");
    assert_eq!(
        value["london"],
        // British Summer Time starts on 2026-03-29 at 01:00 UTC, after that day's midnight.
        serde_json::json!(["0:00:00", "0:00:00", "1:00:00"]),
        "{value:#}"
    );
    assert_eq!(value["dateutil"], 10.0, "{value:#}");
    assert!(value["zones"].as_u64().unwrap_or(0) > 400, "{value:#}");
    assert_eq!(value["missing"], "not found");
}

#[test]
fn random_generators_are_fresh_on_every_run_unless_seeded() {
    let sandbox = Sandbox::new();
    let source = r#"
import random
import forge, numpy as np
np_legacy = float(np.random.random())
np_default = float(np.random.default_rng().random())
py = random.random()
np.random.seed(7)
random.seed(7)
forge.result([np_legacy, np_default, py, float(np.random.random()), random.random()])
"#;
    let first = science_value(&sandbox, source);
    let second = science_value(&sandbox, source);
    for i in 0..3 {
        assert_ne!(
            first[i], second[i],
            "generator {i} repeats: {first} {second}"
        );
    }
    assert_eq!(
        first[3], second[3],
        "a seeded numpy generator is reproducible"
    );
    assert_eq!(
        first[4], second[4],
        "a seeded random generator is reproducible"
    );
}

#[test]
fn a_cxx_exception_in_numpy_is_an_isolate_failure_that_names_it() {
    let sandbox = Sandbox::new();
    // pocketfft throws for a zero-length plan; the engine has no C++ exception handling, so the
    // throw stops the instance (numpy's own `catch` cannot run).
    let throw = "import forge, numpy as np\nfrom numpy.fft import _pocketfft_umath as pfu\n\
                 print('before')\npfu.fft(np.zeros(4, complex), 1.0, out=np.zeros(0, complex))\n";
    let run = sandbox.run_py(throw, NO_ARGS);
    let report = run.report();
    assert_eq!(report["error"]["code"], "ISOLATE_FAILURE", "{report:#}");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("C++ exception (std::runtime_error)"),
        "{message}"
    );
    assert_eq!(report["stdout"], "before\n", "{report:#}");
    assert_eq!(
        science_value(
            &sandbox,
            "import forge, numpy as np\nforge.result(int(np.fft.fft(np.ones(4)).real[0]))\n"
        ),
        4
    );
}

#[test]
fn numpy_functions_registered_with_a_mismatched_arity_do_not_trap() {
    // wasm checks indirect call signatures; build.py patches the numpy functions whose C
    // definition lacks the argument CPython passes (copy.copy of a scalar trapped before).
    let sandbox = Sandbox::new();
    let value = science_value(
        &sandbox,
        "import copy, forge, numpy as np\nfrom numpy._core import _multiarray_umath as mu\n\
         cast = mu._get_castingimpl(type(np.dtype('f8')), type(np.dtype('i4')))\n\
         converter = mu._array_converter(1.0)\n\
         forge.result([float(copy.copy(np.float64(1.5))), int(copy.copy(np.int32(3))),\n\
                       type(cast._supports_unaligned).__name__, list(converter.scalar_input)])\n",
    );
    assert_eq!(value, serde_json::json!([1.5, 3, "bool", [true]]));
}

#[test]
fn numpy_and_pandas_file_round_trips_work_without_dup_or_mmap() {
    // WASI has no dup() (numpy's save/load on a path) and no mmap (read_csv's memory_map): the
    // build patches both to read and write through Python file objects.
    let sandbox = Sandbox::new();
    let value = science_value(
        &sandbox,
        r#"
import forge, numpy as np, pandas as pd
np.save("a.npy", np.arange(6).reshape(2, 3))
back = np.load("a.npy")
np.savez("b.npz", x=np.ones(3))
with open("t.csv", "w") as f:
    f.write("k,v\na,1\nb,2\n")
frame = pd.read_csv("t.csv", memory_map=True)
forge.result([back.tolist(), float(np.load("b.npz")["x"].sum()), frame["v"].sum().item()])
"#,
    );
    assert_eq!(value, serde_json::json!([[[0, 1, 2], [3, 4, 5]], 3.0, 3]));
}
