//! The sandbox of one execution: a store whose WASI context sees only the job folders, with the
//! memory limiter, fuel, the epoch yield and the host-call byte cap, and the race between the
//! guest and the host's own stops.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::cancel::CancelHandle;
use super::verdict::{GuestOutcome, HostDecision};
use crate::engines::ExecState;
use crate::engines::bindings::{GuestLimits, InputFile, RunRequest, ScriptEnginePre};
use crate::error::{Error, ErrorCode, Result};
use crate::files::{DiskQuota, InputRecord, JobDir};
use crate::limits::{Limits, MemoryLimiter, MemoryStats};
use crate::output::{EventSink, OutputState, TailPipe, Texts};
use crate::packages::{MOUNT_POINT, Mounts};
use crate::permissions::{Approval, Asker, Policy};
use crate::state::{Snapshot, StateView};
use crate::tape::Deck;
use crate::tape::wasi::{TapedMonotonicClock, TapedRng, TapedWallClock};
use crate::tools::{CallLog, ToolCalls, ToolRegistry, WaitNote};

/// What survives the store, whatever happens to it: the kernel reads these after a stop.
pub struct Observers {
    pub stdout: TailPipe,
    pub stderr: TailPipe,
    pub texts: Texts,
    pub calls: CallLog,
    /// What the guest waits for while it sleeps in a timer's wait, for the deadline's message.
    pub waiting: WaitNote,
    pub memory: Arc<MemoryStats>,
    pub disk: Arc<DiskQuota>,
}

/// Everything needed to build the store of one execution.
pub struct SandboxSpec<'a> {
    pub limits: &'a Limits,
    pub policy: Policy,
    pub asker: Option<Asker>,
    pub tools: Arc<ToolRegistry>,
    pub snapshot: Snapshot,
    pub job: &'a JobDir,
    /// Locked Python packages, mounted read-only.
    pub packages: Option<&'a Mounts>,
    /// The engine's library (its unpacked tree and where it goes), mounted read-only.
    pub library: Option<(&'a std::path::Path, &'a str)>,
    /// The folder mounted read-only at `/`, listing the mount points ([`crate::files::root_folder`]).
    pub root: &'a std::path::Path,
    pub events: Option<EventSink>,
    /// Records the clocks, random bytes and tool answers, or plays them from a tape.
    pub deck: Deck,
    /// What `wasi:random/insecure-seed` answers (recorded with the tape).
    pub insecure_seed: u128,
    /// A person's answer to the call a paused run stopped at (`resume`).
    pub approval: Option<Approval>,
}

fn preopen_failed(error: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::IsolateFailure,
        format!("cannot give the engine its folders: {error}"),
    )
}

/// Builds the store.
pub fn build_store(
    pre: &ScriptEnginePre<ExecState>,
    spec: SandboxSpec<'_>,
) -> Result<(Store<ExecState>, Observers)> {
    let limits = spec.limits;
    let events = spec.events;
    let stdout = TailPipe::new(limits.max_output_bytes, events.clone().map(|s| (s, false)));
    let stderr = TailPipe::new(limits.max_output_bytes, events.clone().map(|s| (s, true)));
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(stdout.clone())
        .stderr(stderr.clone())
        // Sockets can be created, as libraries expect, but no address may be connected or
        // bound, and names do not resolve: there is no network.
        .allow_tcp(true)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .initial_cwd("/work")
        .wall_clock(TapedWallClock::new(spec.deck.clone()))
        .monotonic_clock(TapedMonotonicClock::new(spec.deck.clone()))
        .secure_random(TapedRng::new(spec.deck.clone(), false))
        .insecure_random(TapedRng::new(spec.deck.clone(), true))
        .insecure_random_seed(spec.insecure_seed)
        .preopened_dir(spec.root, "/", FsPerms::ReadOnly)
        .map_err(preopen_failed)?
        .preopened_dir(spec.job.input(), "/input", FsPerms::ReadOnly)
        .map_err(preopen_failed)?
        .preopened_dir(spec.job.output(), "/output", FsPerms::ReadWrite)
        .map_err(preopen_failed)?
        .preopened_dir(spec.job.work(), "/work", FsPerms::ReadWrite)
        .map_err(preopen_failed)?;
    if let Some((tree, mount)) = spec.library {
        wasi.preopened_dir(tree, mount, FsPerms::ReadOnly)
            .map_err(preopen_failed)?;
    }
    if let Some(mounts) = spec.packages {
        wasi.preopened_dir(&mounts.index_dir, MOUNT_POINT, FsPerms::ReadOnly)
            .map_err(preopen_failed)?;
        for package in &mounts.packages {
            wasi.preopened_dir(&package.host_dir, &package.guest_dir, FsPerms::ReadOnly)
                .map_err(preopen_failed)?;
        }
    }
    let limiter = MemoryLimiter::new(limits.memory_bytes);
    let memory = limiter.stats();
    let tools = ToolCalls::new(spec.tools, spec.policy, limits)
        .with_asker(spec.asker)
        .with_deck(spec.deck)
        .with_approval(spec.approval);
    let calls = tools.log();
    let waiting = tools.wait_note();
    let texts = Texts::default();
    let output = OutputState::new(texts.clone(), limits.max_output_bytes, events);
    let state = StateView::new(spec.snapshot, limits);
    let disk = Arc::new(DiskQuota::new(limits.max_disk_bytes, limits.max_open_files));
    let exec = ExecState::new(wasi.build(), limiter, tools, state, output, disk.clone());

    let mut store = Store::new(pre.engine(), exec);
    store.limiter(|s| &mut s.limiter);
    // Every epoch tick the guest yields to the executor, so a deadline or a cancellation can
    // drop it even in a tight loop.
    store.set_epoch_deadline(1);
    store.epoch_deadline_async_yield_and_update(1);
    if let Some(fuel) = limits.fuel {
        store
            .set_fuel(fuel)
            .map_err(|e| Error::engine_unavailable(format!("cannot set fuel: {e}")))?;
    }
    // Bytes one host call may carry from the guest: a legitimate engine checks the budgets
    // itself and never comes near this; a hostile one traps here instead of making the host
    // allocate without bound.
    let largest_budget = [
        limits.max_call_input_bytes,
        limits.max_state_value_bytes,
        limits.max_output_bytes,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let hostcall_bytes = largest_budget.saturating_mul(2).saturating_add(1 << 20);
    store.set_hostcall_fuel(usize::try_from(hostcall_bytes).unwrap_or(usize::MAX));
    Ok((
        store,
        Observers {
            stdout,
            stderr,
            texts,
            calls,
            waiting,
            memory,
            disk,
        },
    ))
}

/// The request the engine's `run` receives.
pub fn run_request(
    source: &str,
    filename: &str,
    limits: &Limits,
    inputs: &[InputRecord],
) -> RunRequest {
    RunRequest {
        source: source.to_string(),
        filename: filename.to_string(),
        limits: GuestLimits::from(limits),
        inputs: inputs
            .iter()
            .map(|input| InputFile {
                name: input.name.clone(),
                size: input.size,
                sha256: input.sha256.clone(),
            })
            .collect(),
        pass_through_codes: ErrorCode::PASS_THROUGH
            .iter()
            .map(|code| code.as_str().to_string())
            .collect(),
    }
}

/// Runs the guest until it finishes or the host stops it. The host's own stops are polled
/// first, so they win a tie; a stop drops the guest's future, and its store with it.
pub async fn race(
    pre: ScriptEnginePre<ExecState>,
    mut store: Store<ExecState>,
    request: RunRequest,
    deadline: tokio::time::Instant,
    cancel: CancelHandle,
) -> Result<(GuestOutcome, Store<ExecState>), HostDecision> {
    let guest = async move {
        let outcome = match pre.instantiate_async(&mut store).await {
            Ok(engine) => match engine
                .forge_engine_engine()
                .call_run(&mut store, &request)
                .await
            {
                Ok(Ok(value)) => GuestOutcome::Returned(value),
                Ok(Err(e)) => GuestOutcome::Failed {
                    code: e.code,
                    message: e.message,
                    stack: e.stack,
                },
                Err(trap) => GuestOutcome::Trapped(trap),
            },
            Err(trap) => GuestOutcome::Trapped(trap),
        };
        (outcome, store)
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(HostDecision::Cancelled),
        _ = tokio::time::sleep_until(deadline) => Err(HostDecision::Deadline),
        done = guest => Ok(done),
    }
}
