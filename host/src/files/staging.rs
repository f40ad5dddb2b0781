//! The hidden folders a publication passes through beside its destination `out`:
//! `.NAME.forge-staging-OWNER-ID` (the complete copy before it is renamed into place) and
//! `.NAME.forge-old-OWNER-ID` (an earlier publication while it is swapped out). Each is named
//! for the process that made it, so that a later publication to the same place can tell the
//! leftovers of a killed process from the work of a live one, and mend them: an earlier
//! publication swapped out when the process died goes back into place, and a staging folder is
//! removed.

use std::fs;
use std::path::{Path, PathBuf};

use crate::journal::Owner;

const STAGING: &str = "forge-staging";
const OLD: &str = "forge-old";

/// The folders of one publication to `out` by execution `id` of this process.
#[derive(Debug)]
pub(super) struct StagingNames {
    /// The complete copy, renamed into place by the commit.
    pub staging: PathBuf,
    /// Where an earlier publication waits while the new one is renamed into place.
    pub old: PathBuf,
}

/// The folder `out` is in, and `out`'s own name.
pub(super) fn parent_and_base(out: &Path) -> (PathBuf, String) {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    (parent, base)
}

impl StagingNames {
    pub(super) fn new(out: &Path, id: &str) -> Self {
        let (parent, base) = parent_and_base(out);
        let tag = Owner::current().tag();
        StagingNames {
            staging: parent.join(format!(".{base}.{STAGING}-{tag}-{id}")),
            old: parent.join(format!(".{base}.{OLD}-{tag}-{id}")),
        }
    }
}

/// The owner named in a leftover's name after `prefix` (`PID-TICKS-ID`).
fn owner_of(rest: &str) -> Option<Owner> {
    let mut parts = rest.splitn(3, '-');
    let pid = parts.next()?;
    let ticks = parts.next()?;
    parts.next()?;
    Owner::from_tag(&format!("{pid}-{ticks}"))
}

/// Mends what killed processes left beside `out`: an earlier publication swapped out goes back
/// into place when `out` is missing (otherwise it is removed), and staging folders are removed.
/// The folders of live processes are left alone. Best effort: a leftover that cannot be mended
/// stays for the next publication, and never fails this one.
pub(super) fn sweep_leftovers(out: &Path) {
    let (parent, base) = parent_and_base(out);
    let Ok(entries) = fs::read_dir(&parent) else {
        return;
    };
    let old_prefix = format!(".{base}.{OLD}-");
    let staging_prefix = format!(".{base}.{STAGING}-");
    let mut olds = Vec::new();
    let mut stagings = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let (list, rest) = if let Some(rest) = name.strip_prefix(&old_prefix) {
            (&mut olds, rest)
        } else if let Some(rest) = name.strip_prefix(&staging_prefix) {
            (&mut stagings, rest)
        } else {
            continue;
        };
        if owner_of(rest).is_some_and(|owner| !owner.is_alive()) {
            list.push(entry.path());
        }
    }
    for old in olds {
        if !out.exists() && fs::rename(&old, out).is_ok() {
            continue;
        }
        let _ = fs::remove_dir_all(&old);
    }
    for staging in stagings {
        let _ = fs::remove_dir_all(&staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead_tag() -> String {
        Owner {
            pid: u32::MAX - 7,
            start_ticks: Some(1),
        }
        .tag()
    }

    #[test]
    fn a_dead_processes_old_publication_goes_back_and_its_staging_goes() {
        let parent = tempfile::tempdir().expect("tempdir");
        let out = parent.path().join("report");
        let old = parent
            .path()
            .join(format!(".report.forge-old-{}-run-1", dead_tag()));
        let staging = parent
            .path()
            .join(format!(".report.forge-staging-{}-run-1", dead_tag()));
        fs::create_dir_all(&old).expect("mkdir");
        fs::write(old.join("provenance.json"), "{}").expect("write");
        fs::create_dir_all(&staging).expect("mkdir");
        let live = StagingNames::new(&out, "run-2");
        fs::create_dir_all(&live.staging).expect("mkdir");
        sweep_leftovers(&out);
        assert!(out.join("provenance.json").is_file(), "the old one is back");
        assert!(!old.exists() && !staging.exists());
        assert!(live.staging.exists(), "a live process's folder stays");
    }

    #[test]
    fn an_old_publication_is_removed_when_a_newer_one_is_in_place() {
        let parent = tempfile::tempdir().expect("tempdir");
        let out = parent.path().join("report");
        fs::create_dir_all(&out).expect("mkdir");
        let old = parent
            .path()
            .join(format!(".report.forge-old-{}-x", dead_tag()));
        fs::create_dir_all(&old).expect("mkdir");
        let unrelated = parent.path().join(".report.forge-old-not-a-tag");
        fs::create_dir_all(&unrelated).expect("mkdir");
        sweep_leftovers(&out);
        assert!(!old.exists() && out.exists());
        assert!(
            unrelated.exists(),
            "a name forge-host did not make is left alone"
        );
    }
}
