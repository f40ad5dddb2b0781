//! The curated modules of CPython's `Lib/test` that run on both sides, and the few that need
//! more than the default limits in the engine, each with why.

/// The modules, as `test.<name>` (a module or a package of the suite). The ones issue 43 names:
/// the stdlib a script is likely to lean on.
pub const MODULES: [&str; 48] = [
    "test_json",
    "test_re",
    "test_datetime",
    "test_strptime",
    "test_time",
    "test_decimal",
    "test_fractions",
    "test_statistics",
    "test_math",
    "test_cmath",
    "test_csv",
    "test_collections",
    "test_itertools",
    "test_functools",
    "test_string",
    "test_textwrap",
    "test_difflib",
    "test_heapq",
    "test_bisect",
    "test_random",
    "test_struct",
    "test_base64",
    "test_hashlib",
    "test_zlib",
    "test_gzip",
    "test_bz2",
    "test_lzma",
    "test_tarfile",
    "test_zipfile",
    "test_sqlite3",
    "test_unicodedata",
    "test_calendar",
    "test_enum",
    "test_dataclasses",
    "test_typing",
    "test_pathlib",
    "test_tempfile",
    "test_io",
    "test_pprint",
    "test_copy",
    "test_pickle",
    "test_html",
    "test_xml_etree",
    "test_urlparse",
    "test_uuid",
    "test_zoneinfo",
    "test_inspect",
    "test_traceback",
];

/// The engine's limits for one module's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `--memory`: `None` is forge-host's default (256 MiB), the cap a user's script gets.
    pub memory: Option<&'static str>,
    /// `--timeout`, in seconds.
    pub timeout_secs: u64,
}

/// What a module gets unless [`OVERRIDES`] says otherwise: the default memory cap, and a
/// timeout twice forge-host's own (30 s, for scripts): the slowest module that passes takes
/// about 12 s in the engine on two cores. A test that hangs costs one round of it (the engine
/// side goes on after it: `sides.rs`).
pub const DEFAULT: Limits = Limits {
    memory: None,
    timeout_secs: 60,
};

/// Modules whose run needs more than [`DEFAULT`], with the reason.
pub const OVERRIDES: [(&str, Limits, &str); 0] = [];

/// The limits of `module`'s run in the engine.
pub fn limits(module: &str) -> Limits {
    OVERRIDES
        .iter()
        .find(|(name, _, _)| *name == module)
        .map_or(DEFAULT, |(_, limits, _)| *limits)
}
