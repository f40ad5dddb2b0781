//! The `state` import: a thin adapter from the WIT bindings to [`StateView`].

use wasmtime::component::HasData;

use super::StateView;
use super::view::StateFailure;
use crate::engines::bindings::{state, types};
use crate::error::HostStop;

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
        Ok(Ok(StateView::get(self, &key).map(str::to_string)))
    }

    async fn set(
        &mut self,
        key: String,
        value: String,
    ) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        // The size check comes first: never parse what is over budget anyway.
        if value.len() as u64 <= self.max_value_bytes()
            && serde_json::from_str::<serde::de::IgnoredAny>(&value).is_err()
        {
            return Err(HostStop::ProtocolViolation(format!(
                "the value set for state key `{key}` is not JSON"
            ))
            .into());
        }
        Ok(StateView::set(self, &key, &value).map_err(error_info))
    }

    async fn delete(&mut self, key: String) -> wasmtime::Result<Result<(), types::ErrorInfo>> {
        Ok(StateView::delete(self, &key).map_err(error_info))
    }

    async fn keys(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(StateView::keys(self))
    }
}
