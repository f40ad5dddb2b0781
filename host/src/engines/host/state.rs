//! The `state` import: a thin adapter from the WIT bindings to [`StateView`].

use wasmtime::component::HasData;

use crate::engines::bindings::{state, types};
use crate::state::{StateFailure, StateView};

/// `HasData` marker: the import sees only the execution's [`StateView`].
pub(crate) struct StateData;

impl HasData for StateData {
    type Data<'a> = &'a mut StateView;
}

fn error_info(failure: StateFailure) -> types::ErrorInfo {
    types::ErrorInfo {
        code: failure.code.as_str().to_string(),
        message: failure.message,
    }
}

impl state::Host for StateView {
    async fn get(
        &mut self,
        key: String,
    ) -> wasmtime::Result<Result<Option<String>, types::ErrorInfo>> {
        Ok(Ok(StateView::read(self, &key).map(str::to_string)))
    }

    async fn set(
        &mut self,
        key: String,
        value: String,
    ) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        Ok(StateView::set_json(self, &key, &value)?.map_err(error_info))
    }

    async fn delete(&mut self, key: String) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        Ok(StateView::delete(self, &key).map_err(error_info))
    }

    async fn keys(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(StateView::list(self))
    }
}
