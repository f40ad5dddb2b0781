//! Charts from the sandbox (issue 28): plotly in the python-science profile, the page
//! `write_html` publishes, and that page in a real browser with the network cut.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{Sandbox, args};

/// A bar chart from a pandas frame with a line over it, published as one page; the figure's
/// traces and what `write_image` says, as the run's value.
const REVENUE_CHART: &str = r#"import forge, json
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

df = pd.DataFrame({"region": ["north", "south", "east"], "revenue": [120.5, 98.0, 143.25]})
fig = px.bar(df, x="region", y="revenue", title="Revenue by region")
fig.add_trace(go.Scatter(x=df["region"], y=df["revenue"], mode="lines+markers", name="trend"))
fig.write_html("/output/revenue.html", include_plotlyjs=True)
spec = json.loads(fig.to_json())
try:
    fig.write_image("/output/revenue.png")
    image = "written"
except RuntimeError as error:
    image = str(error)
forge.result({
    "traces": [trace["type"] for trace in spec["data"]],
    "revenue": [float(y) for y in fig.data[0].y],
    "title": spec["layout"]["title"]["text"],
    "image": image,
})
"#;

/// Runs REVENUE_CHART, publishing into `out`; returns its report.
fn revenue_chart(sandbox: &Sandbox, out: &Path) -> Value {
    let script = sandbox.script("chart.py", REVENUE_CHART);
    sandbox
        .forge(&args!["run", &script, "--json", "--out", out])
        .assert_succeeded()
}

#[test]
fn plotly_figures_from_pandas_publish_one_page_that_needs_no_network() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("out");
    let report = revenue_chart(&sandbox, &out);
    assert_eq!(report["engine"], "python-science", "{report:#}");
    let value = &report["value"];
    assert_eq!(value["traces"], serde_json::json!(["bar", "scatter"]));
    assert_eq!(value["revenue"], serde_json::json!([120.5, 98.0, 143.25]));
    assert_eq!(value["title"], "Revenue by region");
    let image = value["image"].as_str().unwrap_or_default();
    assert!(
        image.contains("write_html") && image.contains("to_json"),
        "write_image names what works instead: {image}"
    );
    assert!(!out.join("revenue.png").exists());

    let page = std::fs::read_to_string(out.join("revenue.html")).expect("the page");
    // plotly.js itself is in the page (about 4.8 MB), and nothing is loaded from elsewhere.
    assert!(page.len() > 3_000_000, "{} bytes", page.len());
    assert!(page.contains("Plotly.newPlot") && page.contains("Revenue by region"));
    assert!(
        !page.contains("<script src="),
        "the page loads a script from elsewhere"
    );
    let published = report["outputs"].as_array().expect("outputs");
    assert!(
        published
            .iter()
            .any(|f| f["path"] == "revenue.html" && f["mime_type"] == "text/html"),
        "{report:#}"
    );
}

#[test]
fn plotly_is_the_science_profiles_and_the_standard_profile_names_it() {
    let sandbox = Sandbox::new();
    let script = "import forge\nimport plotly\nforge.result(plotly.__version__)\n";
    let report = sandbox.run_py(script, &[] as &[&str]).assert_succeeded();
    assert_eq!(report["engine"], "python-science", "{report:#}");
    assert!(
        report["value"]
            .as_str()
            .is_some_and(|v| v.starts_with("7."))
    );
    let forced = sandbox.run_py(script, &["--engine", "python"]);
    let report = forced.report();
    assert_eq!(report["error"]["code"], "PACKAGE_UNAVAILABLE", "{report:#}");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("plotly") && message.contains("--profile science"),
        "{message}"
    );
}

/// `chromium --headless --dump-dom` of `page` in a network namespace of its own: the DOM after
/// the page's scripts ran, with nothing reachable but the file itself.
fn rendered_offline(page: &Path) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let output = Command::new("unshare")
        .arg("-n")
        .arg("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .expect("`unshare -n chromium`: cargo xtask test installs Debian's chromium");
    assert!(
        output.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_published_page_draws_its_traces_in_chromium_with_the_network_cut() {
    let sandbox = Sandbox::new();
    let out = sandbox.dir.path().join("out");
    revenue_chart(&sandbox, &out);
    let dom = rendered_offline(&out.join("revenue.html"));
    // What plotly.js draws: the SVG, the bar trace with a bar per region (`<g class="point">`),
    // the line trace with a marker per region (`<path class="point">`), and the title.
    assert!(dom.contains("class=\"main-svg\""), "no plot drawn");
    assert!(dom.contains("class=\"trace bars\""), "the bar trace");
    assert_eq!(dom.matches("<g class=\"point\">").count(), 3, "three bars");
    assert!(dom.contains("class=\"trace scatter"), "the line trace");
    assert_eq!(
        dom.matches("<path class=\"point\"").count(),
        3,
        "three markers"
    );
    assert!(dom.contains("Revenue by region"), "the title");
}
