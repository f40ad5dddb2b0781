//! The `forge-host` binary: exit code 0 when the script succeeded, 1 when it failed, timed out
//! or was cancelled, 2 on bad usage or invalid input.

fn main() -> std::process::ExitCode {
    forge_host::cli::main()
}
