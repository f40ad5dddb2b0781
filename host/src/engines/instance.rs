//! The data of one execution's store: WASI, the memory limiter, and one piece per import
//! (tools, state, output). Each import sees only its own piece (wasmtime's view pattern).

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::files::DiskQuota;
use crate::limits::MemoryLimiter;
use crate::output::OutputState;
use crate::state::StateView;
use crate::tools::ToolCalls;

/// Everything a running guest can reach, and nothing more.
pub struct ExecState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) tools: ToolCalls,
    pub(crate) state: StateView,
    pub(crate) output: OutputState,
    pub(crate) quota: Arc<DiskQuota>,
}

impl ExecState {
    /// Assembles the store data of one execution.
    pub fn new(
        wasi: WasiCtx,
        limiter: MemoryLimiter,
        tools: ToolCalls,
        state: StateView,
        output: OutputState,
        quota: Arc<DiskQuota>,
    ) -> Self {
        ExecState {
            wasi,
            table: ResourceTable::new(),
            limiter,
            tools,
            state,
            output,
            quota,
        }
    }

    /// The execution's state view (its pending changes are committed on success).
    pub fn state(&self) -> &StateView {
        &self.state
    }
}

impl WasiView for ExecState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
