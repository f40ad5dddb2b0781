//! Where a run goes: this process's kernel, or the workers of a queue (`cluster`). A caller
//! builds one [`ExecutionRequest`] either way, with the same hooks, and gets one
//! [`RunReport`] back.

use futures::future::BoxFuture;

use super::{ExecutionRequest, Kernel, RunReport};
use crate::error::Result;

/// Runs execution requests.
pub trait Runner: Send + Sync {
    /// Runs `request`. `Err` means it could not start; every run that started ends in a report.
    /// Its [`cancel`](super::Hooks::cancel) hook cancels it wherever it runs, and the report
    /// then says so.
    fn run(&self, request: ExecutionRequest) -> BoxFuture<'_, Result<RunReport>>;
}

impl Runner for Kernel {
    fn run(&self, request: ExecutionRequest) -> BoxFuture<'_, Result<RunReport>> {
        Box::pin(Kernel::run(self, request))
    }
}
