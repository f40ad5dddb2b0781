//! Time zones in Python (issue 40 §2): the IANA database of the pinned `tzdata` wheel is in
//! every Python profile, served from memory, so `zoneinfo` and pandas work offline and give
//! native CPython's answers. `cargo xtask test` builds both profiles first.
//!
//! The expected values were computed once with native CPython 3.11 and pandas 3.1.1 on the same
//! tzdata 2026.6 (`PYTHONTZPATH= python3 script.py`, so that only the tzdata package answers),
//! running the very scripts below with `forge.result(...)` replaced by `print(json.dumps(...))`.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox};

/// Runs `source` (with `args`) and returns its report; it must have succeeded in `engine`.
fn value_in(sandbox: &Sandbox, source: &str, args: &[&str], engine: &str) -> Value {
    let report = sandbox.run_py(source, args).assert_succeeded();
    assert_eq!(
        report["engine"], engine,
        "the engine must be built (`cargo xtask build`): {report:#}"
    );
    report["value"].clone()
}

const ZONEINFO: &str = r#"
import datetime, zoneinfo
import forge

utc = datetime.timezone.utc
paris = zoneinfo.ZoneInfo("Europe/Paris")
# Around 2026's two changes of Europe/Paris (01:00 UTC on March 29 and on October 25).
edges = [datetime.datetime(2026, 3, 29, 0, 59, tzinfo=utc), datetime.datetime(2026, 3, 29, 1, 0, tzinfo=utc),
         datetime.datetime(2026, 10, 25, 0, 59, tzinfo=utc), datetime.datetime(2026, 10, 25, 1, 0, tzinfo=utc)]
folds = [datetime.datetime(2026, 10, 25, 2, 30, fold=f, tzinfo=paris) for f in (0, 1)]
tokyo = datetime.datetime.now(zoneinfo.ZoneInfo("Asia/Tokyo"))
unknown = []
for key in ("Nowhere/Land", "Europe", "Mars/Olympus_Mons"):
    try:
        zoneinfo.ZoneInfo(key)
        unknown.append(f"{key}: found")
    except zoneinfo.ZoneInfoNotFoundError:
        unknown.append(f"{key}: not found")
zones = zoneinfo.available_timezones()
forge.result({
    "edges": [[t.astimezone(paris).isoformat(), t.astimezone(paris).tzname()] for t in edges],
    "folds": [[t.isoformat(), t.utcoffset().total_seconds() / 3600] for t in folds],
    "tokyo": [tokyo.utcoffset().total_seconds() / 3600, tokyo.tzname()],
    "unknown": unknown,
    "zones": len(zones),
    "has": sorted(z for z in zones if z in ("Europe/Paris", "Asia/Tokyo", "America/New_York", "UTC")),
})
"#;

fn zoneinfo_expected() -> Value {
    json!({
        "edges": [
            ["2026-03-29T01:59:00+01:00", "CET"],
            ["2026-03-29T03:00:00+02:00", "CEST"],
            ["2026-10-25T02:59:00+02:00", "CEST"],
            ["2026-10-25T02:00:00+01:00", "CET"],
        ],
        "folds": [["2026-10-25T02:30:00+02:00", 2.0], ["2026-10-25T02:30:00+01:00", 1.0]],
        "tokyo": [9.0, "JST"],
        "unknown": ["Nowhere/Land: not found", "Europe: not found", "Mars/Olympus_Mons: not found"],
        // tzdata 2026.6's `zones` list (what native `available_timezones()` gives with no
        // TZPATH); a newer pin may add a few.
        "zones": 598,
        "has": ["America/New_York", "Asia/Tokyo", "Europe/Paris", "UTC"],
    })
}

/// Runs the zoneinfo script in `engine` (chosen by `args`) and checks its answers.
#[track_caller]
fn assert_zoneinfo(args: &[&str], engine: &str) {
    let sandbox = Sandbox::new();
    let mut value = value_in(&sandbox, ZONEINFO, args, engine);
    let mut expected = zoneinfo_expected();
    // A newer tzdata pin may list a few more zones: at least as many as 2026.6.
    let zones = value["zones"].take().as_u64().unwrap_or(0);
    assert!(zones >= 598, "{zones} zones");
    expected["zones"].take();
    assert_eq!(value, expected);
}

#[test]
fn zoneinfo_works_offline_in_the_standard_library_profile() {
    assert_zoneinfo(&[], "python-cpython");
}

#[test]
fn zoneinfo_works_offline_in_the_science_profile() {
    assert_zoneinfo(&["--engine", "python-science"], "python-science");
}

#[test]
fn the_tzdata_package_is_part_of_the_standard_library_profile() {
    let sandbox = Sandbox::new();
    let source = r#"
import importlib.resources, tzdata, forge
paris = importlib.resources.files("tzdata.zoneinfo.Europe").joinpath("Paris").read_bytes()
forge.result({"magic": paris[:4].decode(), "iana": len(tzdata.IANA_VERSION)})
"#;
    let value = value_in(&sandbox, source, NO_ARGS, "python-cpython");
    // Every TZif file starts with `TZif`; IANA versions read like `2026f`.
    assert_eq!(value, json!({"magic": "TZif", "iana": 5}));
}

#[test]
fn pandas_localizes_and_converts_as_native_pandas_does() {
    let sandbox = Sandbox::new();
    let source = r#"
import forge
import pandas as pd

idx = pd.to_datetime(["2026-03-28 12:00", "2026-03-29 12:00", "2026-03-08 12:00",
                      "2026-10-24 12:00", "2026-10-25 12:00", "2026-11-01 12:00"])
paris = idx.tz_localize("Europe/Paris")
new_york = paris.tz_convert("America/New_York")
gap = pd.Timestamp("2026-03-29 02:30").tz_localize("Europe/Paris", nonexistent="shift_forward")
fold = pd.Timestamp("2026-10-25 02:30").tz_localize("Europe/Paris", ambiguous=True)
hours = pd.date_range("2026-10-25 00:00", periods=4, freq="h", tz="UTC").tz_convert("Europe/Paris")
forge.result({
    "paris": [t.isoformat() for t in paris],
    "new_york": [t.isoformat() for t in new_york],
    "utc": [int(t.timestamp()) for t in new_york],
    "tz": type(paris.tz).__module__,
    "gap": gap.isoformat(),
    "fold": fold.isoformat(),
    "hours": [t.isoformat() for t in hours],
})
"#;
    let value = value_in(&sandbox, source, NO_ARGS, "python-science");
    assert_eq!(
        value,
        json!({
            "paris": ["2026-03-28T12:00:00+01:00", "2026-03-29T12:00:00+02:00",
                      "2026-03-08T12:00:00+01:00", "2026-10-24T12:00:00+02:00",
                      "2026-10-25T12:00:00+01:00", "2026-11-01T12:00:00+01:00"],
            "new_york": ["2026-03-28T07:00:00-04:00", "2026-03-29T06:00:00-04:00",
                         "2026-03-08T07:00:00-04:00", "2026-10-24T06:00:00-04:00",
                         "2026-10-25T07:00:00-04:00", "2026-11-01T06:00:00-05:00"],
            "utc": [1774695600_i64, 1774778400_i64, 1772967600_i64, 1792836000_i64,
                    1792926000_i64, 1793530800_i64],
            "tz": "zoneinfo",
            "gap": "2026-03-29T03:00:00+02:00",
            "fold": "2026-10-25T02:30:00+02:00",
            "hours": ["2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00",
                      "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00"],
        })
    );
}
