//! The `output` import: a thin adapter from the WIT bindings to [`OutputState`].

use wasmtime::component::HasData;

use crate::engines::bindings::{output, types};
use crate::output::OutputState;

/// `HasData` marker: the import sees only the execution's [`OutputState`].
pub(crate) struct OutputData;

impl HasData for OutputData {
    type Data<'a> = &'a mut OutputState;
}

impl output::Host for OutputState {
    async fn text(&mut self, value: String) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        Ok(
            OutputState::text(self, &value)?.map_err(|refused| types::ErrorInfo {
                code: refused.code().as_str().to_string(),
                message: refused.to_string(),
            }),
        )
    }

    async fn progress(
        &mut self,
        message: String,
        completed: Option<f64>,
        total: Option<f64>,
    ) -> wasmtime::Result<()> {
        OutputState::progress(self, &message, completed, total);
        Ok(())
    }
}
