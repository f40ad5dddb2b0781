//! Conformance cases: each folder of `tests/cases/` holds a script per engine and a `case.json`
//! saying how the run must end. Every folder must be listed in `cases!` below, so that a case
//! without a test fails the build of this suite instead of being silently skipped.

use std::ffi::OsStr;

use serde::Deserialize;
use serde_json::Value;

use crate::util::{Sandbox, args, repo};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    args: Vec<String>,
    status: String,
    error_code: Option<String>,
    message_contains: Option<String>,
    value: Option<Value>,
    #[serde(default)]
    no_value: bool,
}

/// The script files of a case, one per engine extension.
const SCRIPTS: [&str; 2] = ["script.js", "script.py"];

fn run_case(name: &str) {
    let dir = repo().join("tests/cases").join(name);
    let case: Case =
        serde_json::from_slice(&std::fs::read(dir.join("case.json")).expect("case.json"))
            .unwrap_or_else(|e| panic!("{name}/case.json: {e}"));
    let mut ran = 0;
    for script in SCRIPTS {
        let path = dir.join(script);
        if !path.exists() {
            continue;
        }
        ran += 1;
        let sandbox = Sandbox::new();
        let mut args = args!["run", &path, "--json"].to_vec();
        args.extend(case.args.iter().map(OsStr::new));
        let run = sandbox.forge(&args);
        let report = run.report();
        let context = format!("{name}/{script}: {report:#}\nstderr: {}", run.stderr());
        assert_eq!(report["status"], case.status.as_str(), "{context}");
        assert_eq!(
            run.code(),
            if case.status == "succeeded" { 0 } else { 1 },
            "{context}"
        );
        match &case.error_code {
            Some(code) => assert_eq!(report["error"]["code"], code.as_str(), "{context}"),
            None => assert!(report.get("error").is_none(), "{context}"),
        }
        if let Some(part) = &case.message_contains {
            let message = report["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(part.as_str()), "{context}");
        }
        if let Some(value) = &case.value {
            assert_eq!(&report["value"], value, "{context}");
        }
        if case.no_value {
            assert!(report.get("value").is_none(), "{context}");
        }
    }
    assert!(ran > 0, "{name} has no script");
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_case(&stringify!($name).replace('_', "-"));
            }
        )*

        #[test]
        fn every_case_folder_has_a_test() {
            let listed: Vec<String> = vec![$(stringify!($name).replace('_', "-")),*];
            let mut missing = Vec::new();
            for entry in std::fs::read_dir(repo().join("tests/cases")).expect("tests/cases") {
                let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
                if !listed.contains(&name) {
                    missing.push(name);
                }
            }
            assert!(missing.is_empty(), "add these to cases!: {missing:?}");
        }
    };
}

cases! {
    syntax_error,
    uncaught_throw,
    infinite_loop,
    fuel_exhausted,
    array_memory_bomb,
    string_memory_bomb,
    huge_string,
    small_object_bomb,
    caught_out_of_memory,
    deep_recursion,
    never_settles,
    tool_budget,
    tool_budget_is_not_catchable,
    call_input_over_budget,
    call_response_over_budget,
    result_over_budget,
    result_over_default_budget,
    tool_not_found,
    tool_failed,
    tool_error_shape,
    forged_timeout_is_a_plain_failure,
    forged_memory_limit_is_a_plain_failure,
    uncaught_state_error_keeps_its_code,
    error_code_outside_forge_error_is_ignored,
    thrown_null_without_memory_pressure,
    echo_round_trip,
    no_ambient_authority,
    no_module_loading,
    catalog_lists_builtins,
    undefined_result,
    sleep_returns_slept,
    concurrent_calls_settle_in_order,
    list_memory_bomb,
    every_codec_and_unparse,
    package_in_no_profile,
    package_unavailable,
    missing_stdlib_module,
    optional_import,
    import_at_run_time,
    traceback_has_source_lines,
    input_is_read_only,
    no_network,
    no_host_filesystem,
    unbounded_recursion,
    doubling_string_bomb,
    absolute_host_path,
    bigint_result,
    bind_a_port,
    busy_wait_on_the_clock,
    bytes_multiplication_bomb,
    calls_in_flight_at_return,
    calls_in_flight_at_throw,
    caught_memory_error_goes_on,
    ctypes,
    cyclic_call_input,
    cyclic_result,
    decompression_bomb,
    deep_value_512_levels,
    deep_value_513_levels,
    dot_dot_out_of_work,
    environment_is_empty,
    fork,
    generator_that_never_ends,
    huge_tool_name,
    lone_surrogate_result,
    microtask_storm,
    nan_and_infinity_become_null,
    odd_state_keys,
    odd_tool_names,
    only_the_job_folders,
    proc_is_not_there,
    progress_flood,
    promise_chain_storm,
    regex_backtracking,
    sleep_past_the_deadline,
    stderr_flood,
    stdin_is_empty,
    stdin_readline_is_empty,
    stdout_flood,
    subprocess,
    symlink_out_of_output,
    text_flood,
    threads,
    tojson_sabotage,
    tojson_sabotage_in_a_call,
    typed_array_bomb,
    typed_array_growth,
    udp_socket,
    write_into_input,
    forged_disk_limit_is_a_plain_failure,
    disk_full_caught,
    disk_full_uncaught,
    sparse_file_past_the_quota,
    truncate_past_the_quota,
    lone_surrogate_in_call_input,
    bigint_in_call_input,
    deep_state_value,
    symlink_out_of_work,
    hard_link_out_of_input,
    write_to_the_root,
    http_request,
    multiprocessing,
    many_open_files,
    sys_exit,
    signal_alarm,
    compression_bz2_round_trip,
    compression_lzma_round_trip,
}
