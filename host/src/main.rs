//! The `forge-host` binary: exit code 0 when the script succeeded, 1 when it failed, timed out
//! or was cancelled or forge-host itself failed, 2 on bad usage or invalid input. The command
//! line lives here, in the binary, so that the library's API has no clap types in it.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
