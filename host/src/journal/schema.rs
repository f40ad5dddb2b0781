//! The journal's tables and their version (SPEC §9).
//!
//! Versioning: the `meta` table holds `schema_version`. A database without it is new and gets
//! the current version. Records are JSON: a later version may add fields (read back with their
//! defaults by this one, ignored when unknown), and bumps `schema_version` only for a change an
//! older reader cannot ignore, together with a migration in [`migrate`]. An older forge-host
//! refuses a newer schema instead of misreading it. `tests/fixtures/journal-v1.redb`, written by
//! this version, must keep opening in every later one.

use redb::TableDefinition;

/// The schema this build writes.
pub const SCHEMA_VERSION: u64 = 1;

/// `schema_version` and other counters.
pub const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// Execution id -> JSON `ExecutionRecord`. Ids start with the start time, so key order is
/// start order.
pub const EXECUTIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("executions");
/// (execution id, position) -> JSON `CallRecord`.
pub const CALLS: TableDefinition<(&str, u32), &[u8]> = TableDefinition::new("calls");
/// Execution id -> JSON owner of every execution not yet terminal: what reconciliation scans.
pub const OPEN: TableDefinition<&str, &[u8]> = TableDefinition::new("open_executions");

pub const SCHEMA_KEY: &str = "schema_version";

/// Brings a database of schema `from` to [`SCHEMA_VERSION`] inside `txn`. Version 1 is the
/// first: there is nothing to migrate yet.
pub fn migrate(from: u64, _txn: &redb::WriteTransaction) -> Result<(), String> {
    match from {
        SCHEMA_VERSION => Ok(()),
        newer if newer > SCHEMA_VERSION => Err(format!(
            "the journal has schema {newer}, written by a newer forge-host; this one reads up to {SCHEMA_VERSION}"
        )),
        older => Err(format!("no migration from journal schema {older}")),
    }
}
