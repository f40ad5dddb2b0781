//! Compiling a locked wheel's modules once, when it is added, inside the Python engine that
//! will import them (so the bytecode is its CPython's exactly): a sandboxed run reads the wheel
//! from `/input` and writes, to `/output`, a zip of the wheel's files with each module's
//! `.pyc` beside its `.py`. A run then mounts that zip in place of the wheel, and `zipimport`
//! loads the `.pyc` instead of compiling the source again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ExecutionRequest, Kernel};
use crate::error::{Error, ErrorCode, Result};
use crate::journal::RecordMode;
use crate::limits::Limits;

/// The script that compiles (its `MOUNT` is prepended: where the zip will be mounted, so that
/// tracebacks name the file the module was imported from).
const COMPILE_SCRIPT: &str = include_str!("compile_bytecode.py");

/// The file the script writes.
const OUTPUT: &str = "bytecode.zip";

/// A wheel's compiled bytecode, in a scratch folder until it is stored.
pub struct CompiledBytecode {
    /// The zip.
    pub zip: PathBuf,
    /// The CPython that compiled it (`sys.implementation.cache_tag`).
    pub cache_tag: String,
    /// How many modules it compiled.
    pub modules: u64,
    /// Modules left as source: they do not compile (a syntax error), so importing them fails as
    /// it did.
    pub skipped: Vec<String>,
    _scratch: tempfile::TempDir,
}

impl Kernel {
    /// Compiles the modules of the wheel at `wheel`, which runs will find at `mount` (the zip's
    /// path inside the guest), in this kernel's pure-Python engine.
    pub async fn compile_bytecode(&self, wheel: &Path, mount: &str) -> Result<CompiledBytecode> {
        let scratch =
            tempfile::tempdir().map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
        let out = scratch.path().join("out");
        let mount_literal = serde_json::to_string(mount)
            .map_err(|e| Error::from_source(ErrorCode::IsolateFailure, e))?;
        let script = format!("MOUNT = {mount_literal}\n{COMPILE_SCRIPT}");
        // A big package has thousands of modules: room for them, and for a zip as big as it.
        let limits = Limits {
            timeout: Duration::from_secs(600),
            memory_bytes: 1 << 30,
            max_publish_file_bytes: 1 << 30,
            max_publish_bytes: 1 << 30,
            max_disk_bytes: 2 << 30,
            max_input_bytes: 1 << 30,
            ..Limits::default()
        };
        let request = ExecutionRequest::builder(script, "compile_bytecode.py")
            .limits(limits)
            .session("packages")
            .inputs(vec![wheel.to_path_buf()])
            .out_dir(out.clone())
            .record(RecordMode::Off)
            .build();
        let report = self.run(request).await?;
        if let Some(error) = report.error {
            return Err(Error::new(
                error.code,
                format!("compiling {} failed: {}", wheel.display(), error.message),
            ));
        }
        let value = report.value.unwrap_or_default();
        let cache_tag = value["cache_tag"].as_str().unwrap_or_default().to_string();
        let zip = out.join(OUTPUT);
        if cache_tag.is_empty() || !zip.is_file() {
            return Err(Error::new(
                ErrorCode::ProtocolViolation,
                format!(
                    "compiling {} gave no bytecode zip: {value}",
                    wheel.display()
                ),
            ));
        }
        Ok(CompiledBytecode {
            zip,
            cache_tag,
            modules: value["modules"].as_u64().unwrap_or_default(),
            skipped: value["skipped"]
                .as_array()
                .map(|names| {
                    names
                        .iter()
                        .filter_map(|n| n.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            _scratch: scratch,
        })
    }
}
