//! The files an MCP run publishes reach the client: resource links in the result, images inline,
//! `resources/read` of each, refusals for what a run did not publish, and `journal prune`
//! removing them. Driven by the official Python MCP SDK (`tests/peers/mcp_drive.py files`).

use serde_json::Value;

use crate::mcp_server::{Transport, drive};
use crate::util::Sandbox;

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn item<'a>(items: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    items
        .iter()
        .find(|i| i["type"] == kind && (kind == "image" || i["name"] == name))
}

#[test]
fn published_files_are_links_images_and_readable_resources_and_nothing_else_is() {
    let sandbox = Sandbox::new();
    let server = Transport::Stdio(vec!["--max-inline-image".into(), "1KiB".into()]);
    let out = drive(&sandbox, "files", &server, &[]);
    let report = &out["structured"];
    assert_eq!(report["status"], "succeeded", "{out:#}");
    let id = report["id"].as_str().expect("id");
    let folder = sandbox.data_dir().join("published").join(id);
    assert_eq!(
        report["out_dir"],
        folder.display().to_string(),
        "{report:#}"
    );

    // Every file the run published, with its media type, is in the report and on disk.
    let outputs = report["outputs"].as_array().expect("outputs");
    let published = |path: &str| {
        outputs
            .iter()
            .find(|o| o["path"] == path)
            .unwrap_or_else(|| panic!("{path} not published: {report:#}"))
    };
    for (path, mime) in [
        ("chart.png", "image/png"),
        ("big.png", "image/png"),
        ("notes.txt", "text/plain"),
        ("dash/index.html", "text/html"),
        ("dash/app.js", "text/javascript"),
    ] {
        let file = published(path);
        assert_eq!(file["mime_type"], mime, "{file}");
        let bytes = std::fs::read(folder.join(path)).expect("published file");
        assert_eq!(file["sha256"], sha256_hex(&bytes), "{path}");
    }

    // Links for the files, the folder with a page as one link to it; only the small image inline.
    let items = out["items"].as_array().expect("items");
    let links: Vec<&str> = items
        .iter()
        .filter(|i| i["type"] == "resource_link")
        .map(|i| i["name"].as_str().unwrap_or_default())
        .collect();
    let mut sorted = links.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["big.png", "chart.png", "index.html", "notes.txt"],
        "{items:#?}"
    );
    let images: Vec<&Value> = items.iter().filter(|i| i["type"] == "image").collect();
    assert_eq!(images.len(), 1, "only chart.png is under 1 KiB: {items:#?}");
    assert_eq!(images[0]["mime"], "image/png");
    assert_eq!(images[0]["sha256"], published("chart.png")["sha256"]);
    let chart = item(items, "resource_link", "chart.png").expect("chart link");
    assert_eq!(chart["mime"], "image/png");
    assert_eq!(chart["size"], published("chart.png")["size"]);
    assert_eq!(
        chart["uri"],
        format!("forge-host://runs/{id}/chart.png"),
        "{chart}"
    );

    // resources/read gives the published bytes: text as text, the rest as a blob.
    let reads = out["reads"].as_object().expect("reads");
    for (path, text) in [
        ("chart.png", false),
        ("big.png", false),
        ("notes.txt", true),
        ("dash/index.html", true),
        ("dash/app.js", true),
    ] {
        let read = &reads[&format!("forge-host://runs/{id}/{path}")];
        assert_eq!(read["sha256"], published(path)["sha256"], "{path}: {read}");
        assert_eq!(read["mime"], published(path)["mime_type"], "{path}: {read}");
        assert_eq!(read["text"], text, "{path}: {read}");
    }

    // Nothing a run did not publish can be named: another run's, outside, another scheme.
    for (uri, answer) in out["refused"].as_object().expect("refused") {
        assert!(answer.get("error").is_some(), "{uri} was read: {answer}");
        assert!(answer.get("sha256").is_none(), "{uri}: {answer}");
    }
    assert_eq!(out["other"]["status"], "succeeded", "{out:#}");
    let listed: Vec<&str> = out["listed"]
        .as_array()
        .expect("listed")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        listed.contains(&format!("forge-host://runs/{id}/chart.png").as_str()),
        "{listed:?}"
    );
    assert!(
        !listed.iter().any(|uri| uri.ends_with("dash/app.js")),
        "{listed:?}"
    );

    // `journal prune` takes them with the runs' tapes.
    let kept = sandbox.forge(&["journal", "prune", "--older-than", "1d", "--json"]);
    assert_eq!(kept.code(), 0, "{}", kept.stderr());
    assert!(folder.is_dir());
    let pruned = sandbox.forge(&["journal", "prune", "--older-than", "0s", "--json"]);
    assert_eq!(pruned.code(), 0, "{}", pruned.stderr());
    let pruned: Value = serde_json::from_str(&pruned.stdout()).expect("json");
    assert_eq!(pruned["published"], 2, "{pruned:#}");
    assert!(!folder.exists(), "{}", folder.display());
}
