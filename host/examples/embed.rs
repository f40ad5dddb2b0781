//! Embedding forge-host: a tool of the program's own, and a JavaScript script that calls it.
//! Prints the script's result, `300`; `cargo xtask test` runs it. Usage: `embed [ENGINES_DIR]`
//! (`cargo xtask build` puts the engines in `target/engines`).

use std::sync::Arc;

use forge_host::tools::{Effect, Tool, ToolError, ToolFuture, ToolInfo, ToolRegistry};
use forge_host::{DataDir, ExecutionRequest, Kernel};
use serde_json::{Value, json};

/// `price {item}`: the program's price list, in cents.
struct Price(ToolInfo);

impl Tool for Price {
    fn info(&self) -> &ToolInfo {
        &self.0
    }

    fn call(&self, input: Value) -> ToolFuture {
        let price = match input["item"].as_str() {
            Some("apple") => Ok(json!(50)),
            Some("pear") => Ok(json!(75)),
            _ => Err(ToolError::failed("no such item")),
        };
        Box::pin(async move { price })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Price(ToolInfo {
        name: "price".into(),
        description: "The price of one `item`, in cents.".into(),
        input_schema: json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        effect: Effect::Read,
    })));
    let data = tempfile::tempdir()?;
    let mut kernel = Kernel::builder(DataDir::new(data.path())).tools(tools);
    if let Some(engines) = std::env::args_os().nth(1) {
        kernel = kernel.engine_dirs(vec![engines.into()]);
    }
    let script = r#"const [apple, pear] = await Promise.all(
        ["apple", "pear"].map((item) => tools.call("price", { item })));
    return 3 * apple + 2 * pear;"#;
    let request = ExecutionRequest::new(script, "basket.js");
    let report = kernel.build().await?.run(request).await?;
    if !report.succeeded() {
        return Err(format!("the script failed: {:?}", report.error).into());
    }
    println!("{}", report.value.unwrap_or_default());
    Ok(())
}
