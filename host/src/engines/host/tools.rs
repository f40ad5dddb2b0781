//! The `tools`, `timers`, `catalog` and `types` imports: thin adapters from the WIT bindings to
//! [`ToolCalls`].

use wasmtime::component::HasData;

use crate::engines::bindings::{catalog, timers, tools, types};
use crate::tools::binding::function_path;
use crate::tools::{Effect, ToolCalls, ToolError, ToolInfo};

/// `HasData` marker: the imports see only the execution's [`ToolCalls`].
pub(crate) struct ToolsData;

impl HasData for ToolsData {
    type Data<'a> = &'a mut ToolCalls;
}

pub(crate) fn error_info(error: ToolError) -> types::ErrorInfo {
    types::ErrorInfo {
        code: error.code.as_str().to_string(),
        message: error.message,
    }
}

impl tools::Host for ToolCalls {
    async fn begin_call(
        &mut self,
        name: String,
        input: String,
    ) -> wasmtime::Result<Result<u64, types::ErrorInfo>> {
        Ok(self.begin(&name, &input)?.map_err(error_info))
    }

    async fn wait_any(&mut self) -> wasmtime::Result<Option<tools::Completion>> {
        Ok(ToolCalls::wait_any(self)
            .await?
            .map(|done| tools::Completion {
                id: done.id,
                outcome: done.outcome.map_err(error_info),
            }))
    }

    async fn call(
        &mut self,
        name: String,
        input: String,
    ) -> wasmtime::Result<Result<String, types::ErrorInfo>> {
        Ok(ToolCalls::call(self, &name, &input)
            .await?
            .map_err(error_info))
    }
}

impl timers::Host for ToolCalls {
    async fn wait_for(
        &mut self,
        nanos: u64,
        pending: String,
    ) -> wasmtime::Result<Option<tools::Completion>> {
        Ok(ToolCalls::wait_for(self, nanos, &pending)
            .await?
            .map(|done| tools::Completion {
                id: done.id,
                outcome: done.outcome.map_err(error_info),
            }))
    }
}

fn wit_effect(effect: Effect) -> types::Effect {
    match effect {
        Effect::Read => types::Effect::Read,
        Effect::Write => types::Effect::Write,
        Effect::Process => types::Effect::Process,
        Effect::External => types::Effect::External,
        Effect::Internal => types::Effect::Internal,
    }
}

fn wit_tool(info: &ToolInfo) -> catalog::ToolInfo {
    catalog::ToolInfo {
        name: info.name.clone(),
        description: info.description.clone(),
        input_schema: info.input_schema.to_string(),
        effect: wit_effect(info.effect),
        function_path: function_path(&info.name),
    }
}

impl catalog::Host for ToolCalls {
    async fn list_tools(&mut self) -> wasmtime::Result<Vec<catalog::ToolInfo>> {
        Ok(self.registry().list().map(wit_tool).collect())
    }

    async fn search_tools(
        &mut self,
        query: String,
        limit: u32,
    ) -> wasmtime::Result<Vec<catalog::ToolInfo>> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(self
            .registry()
            .search(&query, limit)
            .into_iter()
            .map(wit_tool)
            .collect())
    }

    async fn describe_tool(&mut self, name: String) -> wasmtime::Result<Option<catalog::ToolInfo>> {
        Ok(self.registry().get(&name).map(|tool| wit_tool(tool.info())))
    }
}

impl types::Host for ToolCalls {}
