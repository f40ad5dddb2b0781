//! Tests of `publish.rs`: validation, staging, replacement and what a failure leaves behind.

use super::*;

fn output_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, text).expect("write");
    }
    dir
}

fn provenance(files: &[PublishedFile]) -> serde_json::Value {
    serde_json::json!({ "files": files.len() })
}

#[test]
fn publishes_everything_with_provenance_and_replaces_an_earlier_publication() {
    let output = output_with(&[("summary.csv", "a,b\n"), ("charts/bar.svg", "<svg/>")]);
    let dest = tempfile::tempdir().expect("tempdir");
    let out = dest.path().join("out");
    let files = publish(
        output.path(),
        &out,
        &OutputLimits::from(&Limits::default()),
        "id1",
        provenance,
    )
    .expect("published");
    assert_eq!(
        files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["charts/bar.svg", "summary.csv"]
    );
    assert!(out.join("charts/bar.svg").is_file() && out.join(PROVENANCE).is_file());
    check_destination(&out).expect("an earlier publication may be replaced");
    let again = output_with(&[("only.txt", "x")]);
    publish(
        again.path(),
        &out,
        &OutputLimits::from(&Limits::default()),
        "id2",
        provenance,
    )
    .expect("replaced");
    assert!(out.join("only.txt").is_file() && !out.join("summary.csv").exists());
    let leftovers: Vec<_> = fs::read_dir(dest.path()).expect("read").collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no staging or old folder is left behind"
    );
}

#[test]
fn files_fetched_from_elsewhere_appear_whole_on_commit_or_not_at_all() {
    let dest = tempfile::tempdir().expect("tempdir");
    let out = dest.path().join("out");
    let abandoned = stage_empty(&out, "id1").expect("staged");
    fs::write(abandoned.folder().join("half.txt"), "1").expect("write");
    assert!(!out.exists(), "nothing is visible before the commit");
    drop(abandoned);
    assert_eq!(
        fs::read_dir(dest.path()).expect("list").count(),
        0,
        "an abandoned publication leaves nothing"
    );
    let staged = stage_empty(&out, "id2").expect("staged");
    fs::create_dir_all(staged.folder().join("nested")).expect("mkdir");
    fs::write(staged.folder().join("nested/b.txt"), "beta").expect("write");
    staged.commit().expect("committed");
    assert_eq!(
        fs::read_to_string(out.join("nested/b.txt")).expect("read"),
        "beta"
    );
    assert_eq!(fs::read_dir(dest.path()).expect("list").count(), 1);
}

#[test]
fn outputs_json_chooses_files_and_titles() {
    let output = output_with(&[
        ("a.csv", "1"),
        ("scratch.tmp", "2"),
        (
            MANIFEST,
            r#"{"files": [{"path": "a.csv", "title": "The table"}]}"#,
        ),
    ]);
    let dest = tempfile::tempdir().expect("tempdir");
    let files = publish(
        output.path(),
        &dest.path().join("o"),
        &OutputLimits::from(&Limits::default()),
        "i",
        provenance,
    )
    .expect("ok");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].title.as_deref(), Some("The table"));
    assert!(!dest.path().join("o/scratch.tmp").exists());
}

#[test]
fn bad_outputs_are_rejected_and_nothing_is_left() {
    let limits = OutputLimits {
        max_files: 2,
        max_total_bytes: 10,
        max_file_bytes: 6,
    };
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("big.bin", "1234567")], "big.bin"),
        (vec![("a", "12345"), ("b", "12345"), ("c", "1")], "/output"),
        (vec![("a", "12345"), ("b", "123456")], "/output"),
        (vec![("bad\u{7}name", "1")], "bad\u{7}name"),
        (vec![(MANIFEST, r#"[{"path": "missing.csv"}]"#)], MANIFEST),
        (vec![(MANIFEST, r#"[{"path": "../etc/passwd"}]"#)], MANIFEST),
        (vec![(PROVENANCE, "{}")], PROVENANCE),
    ];
    for (files, culprit) in cases {
        let output = output_with(&files);
        let dest = tempfile::tempdir().expect("tempdir");
        let error = publish(
            output.path(),
            &dest.path().join("o"),
            &limits,
            "i",
            provenance,
        )
        .expect_err("rejected");
        match &error {
            PublishError::Rejected { path, .. } => assert_eq!(path, culprit, "{error}"),
            other => panic!("{other}"),
        }
        assert_eq!(
            fs::read_dir(dest.path()).expect("read").count(),
            0,
            "{error}: nothing left behind"
        );
    }
    let output = output_with(&[("real.txt", "1")]);
    std::os::unix::fs::symlink("/etc/passwd", output.path().join("link")).expect("symlink");
    let dest = tempfile::tempdir().expect("tempdir");
    let error = publish(
        output.path(),
        &dest.path().join("o"),
        &limits,
        "i",
        provenance,
    )
    .expect_err("symlink");
    assert!(
        matches!(error, PublishError::Rejected { ref path, .. } if path == "link"),
        "{error}"
    );
}

#[test]
fn a_foreign_non_empty_destination_is_refused_up_front() {
    let dest = tempfile::tempdir().expect("tempdir");
    fs::write(dest.path().join("mine.txt"), "keep me").expect("write");
    assert_eq!(
        check_destination(dest.path()).expect_err("refused").code,
        ErrorCode::InvalidInput
    );
    check_destination(&dest.path().join("new")).expect("a new folder is fine");
}

proptest::proptest! {
    /// Any output name is accepted or rejected, never a panic; an accepted one is none of
    /// the names a publication must never hold.
    #[test]
    fn any_output_name_is_judged(name in ".{0,300}") {
        if check_name(&name, &name).is_ok() {
            proptest::prop_assert!(!name.is_empty() && name != "." && name != "..");
            proptest::prop_assert!(name.len() <= MAX_NAME_BYTES);
            proptest::prop_assert!(!name.chars().any(|c| c.is_control() || c == '\\'));
        }
    }
}
