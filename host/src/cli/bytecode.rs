//! The bytecode step of `packages add` and `packages compile`: each locked package without
//! bytecode has its modules compiled once, inside the Python engine (`Kernel::compile_bytecode`),
//! and the zip stored beside its wheel and pinned in the lock.

use std::path::Path;

use forge_host::{DataDir, Kernel, packages};
use pyodide_fetch::{Bytecode, PyodideLock, bytecode_file_name, normalize};

/// What happened to one package's bytecode.
pub(super) struct Compiled {
    pub name: String,
    pub outcome: Result<(Bytecode, u64), String>,
}

/// Compiles the bytecode of the packages of the lock at `lock_path` that have none, or whose
/// bytecode is not in the store as pinned (gone, or quarantined by `packages verify`): those
/// named in `only` (normalized), or all.
pub(super) async fn compile_missing(
    data: &DataDir,
    lock_path: &Path,
    only: Option<&[String]>,
) -> anyhow::Result<Vec<Compiled>> {
    let lock = PyodideLock::read(lock_path).map_err(packages::error)?;
    let store = packages::store(data);
    let wanted: Vec<_> = lock
        .packages
        .values()
        .filter(|p| {
            p.bytecode
                .as_ref()
                .is_none_or(|b| store.verify(&b.sha256, &b.file_name).is_err())
        })
        .filter(|p| only.is_none_or(|names| names.contains(&normalize(&p.name))))
        .cloned()
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let kernel = Kernel::builder(data.clone()).build().await?;
    let mut compiled = Vec::new();
    for package in wanted {
        let outcome = async {
            let wheel = store
                .verify(&package.sha256, &package.file_name)
                .map_err(|e| forge_host::error::chain_text(&e))?;
            let mount = packages::bytecode_mount(&package);
            let built = kernel
                .compile_bytecode(&wheel, &mount)
                .await
                .map_err(|e| format!("{}: {}", e.code, e.message))?;
            let file_name = bytecode_file_name(&package.file_name);
            let sha256 = store
                .add(&built.zip, &file_name, None)
                .map_err(|e| forge_host::error::chain_text(&e))?;
            let bytecode = Bytecode {
                file_name,
                sha256,
                cache_tag: built.cache_tag.clone(),
            };
            packages::pin_bytecode(lock_path, &package.name, &package.sha256, bytecode.clone())
                .map_err(|e| e.message)?;
            Ok((bytecode, built.modules))
        }
        .await;
        compiled.push(Compiled {
            name: package.name.clone(),
            outcome,
        });
    }
    Ok(compiled)
}
