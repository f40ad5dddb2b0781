//! Small building blocks every layer uses: sha256 digests, UTC timestamps, atomic file writes,
//! folders made whole or not at all, cutting text at a character boundary, secrets that never
//! print, and telling a loopback address from its text. It imports nothing from the crate, so
//! any module may use it: it sits at the bottom of the layers (ARCHITECTURE.md).

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// sha256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Now, as [`utc_timestamp`] writes it.
pub fn now_utc() -> String {
    utc_timestamp(SystemTime::now())
}

/// `time` as RFC 3339 UTC with milliseconds (`2026-11-29T15:04:05.123Z`), without a calendar
/// dependency.
pub fn utc_timestamp(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Writes `bytes` to `path` through a synced temporary file in the same folder and a rename, so
/// that a reader (or a crash) never sees half a file and concurrent writers do not collide.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Makes the folder `target` whole or not at all, for caches that several processes may fill at
/// once: `fill` writes into a fresh staging folder beside it, which is then renamed into place.
/// If another process finished first, its folder stands (callers key `target` by its content).
/// `io` turns a failure of the host's own file operations into the caller's error.
pub fn make_dir_whole<E>(
    target: &Path,
    fill: impl FnOnce(&Path) -> Result<(), E>,
    io: impl Fn(&'static str, &Path, std::io::Error) -> E,
) -> Result<(), E> {
    if target.is_dir() {
        return Ok(());
    }
    let parent = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".making-")
        .tempdir_in(parent)
        .map_err(|e| io("cannot create", parent, e))?;
    fill(staging.path())?;
    match std::fs::rename(staging.path(), target) {
        Ok(()) => {
            // Renamed away: nothing is left for the guard to remove.
            let _ = staging.keep();
            Ok(())
        }
        Err(_) if target.is_dir() => Ok(()),
        Err(e) => Err(io("cannot move into place", target, e)),
    }
}

/// The longest prefix of `text` that is at most `max_bytes` long and ends on a character
/// boundary.
pub fn truncate_at(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Crash points for the crash-safety tests: with `FORGE_HOST_FAULT=NAME` in its environment, the
/// process aborts at the point called `NAME` (no destructor runs, as under `kill -9`), so a test
/// can crash it exactly between two durable steps. Points: `after-state-commit`,
/// `during-publication` (staged, not yet renamed into place), `while-replacing-publication`
/// (an earlier publication swapped out, the new one not yet in place) and, in a worker,
/// `after-storing-the-outcome` (in the run's record, before the reply and the ack).
pub fn fault_point(name: &str) {
    if std::env::var_os("FORGE_HOST_FAULT").is_some_and(|wanted| wanted == name) {
        std::process::abort();
    }
}

/// A password, token or key seed. Its `Debug` shows `***`, and it has no `Display`: a message
/// or log line that formats one shows nothing of it. [`Secret::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Secret(text.into())
    }

    /// The secret itself, for the one call that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The variables the command line takes secrets from (a NATS URL's password or token, an etcd
/// location's or user's password): no process forge-host starts inherits them.
pub const SECRET_VARIABLES: [&str; 3] = [
    "FORGE_HOST_NATS",
    "FORGE_HOST_STATE",
    "FORGE_HOST_ETCD_PASSWORD",
];

/// Whether `host` (an IP address, `[v6]` or a name) names this machine's loopback interface:
/// 127.0.0.0/8, `::1` (or `::ffff:127.x.y.z`), or the name `localhost`. No name is looked up:
/// any other name counts as not loopback, whatever it would resolve to.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(std::net::IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => {
            let name = bare.strip_suffix('.').unwrap_or(bare);
            name.eq_ignore_ascii_case("localhost")
        }
    }
}

/// Makes rustls's `ring` provider the process's default, once: the TLS clients (reqwest's,
/// async-nats's) use it. Idempotent, and harmless when an embedder installed another first.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// `text` with its `%XX` escapes decoded (as a URL's user, password or token is written);
/// `None` when the bytes are not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|decoded| decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_055_845_123);
        assert_eq!(utc_timestamp(t), "2026-11-30T16:24:05.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_timestamp(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_folder_is_made_whole_or_not_at_all() {
        let parent = tempfile::tempdir().expect("dir");
        let target = parent.path().join("made");
        let io = |_: &'static str, _: &Path, e: std::io::Error| e.to_string();
        let failed = make_dir_whole(&target, |_| Err("half-way".to_string()), io);
        assert_eq!(failed, Err("half-way".to_string()));
        assert_eq!(std::fs::read_dir(parent.path()).expect("list").count(), 0);
        let fill = |dir: &Path| std::fs::write(dir.join("a"), b"1").map_err(|e| e.to_string());
        make_dir_whole(&target, fill, io).expect("made");
        assert_eq!(std::fs::read(target.join("a")).expect("file"), b"1");
        make_dir_whole(&target, |_| Err("not called".to_string()), io).expect("already there");
        assert_eq!(std::fs::read_dir(parent.path()).expect("list").count(), 1);
    }

    #[test]
    fn hashes_and_truncates() {
        assert_eq!(
            sha256_hex(b"hello"),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(truncate_at("héllo", 2), "h", "never inside a character");
        assert_eq!(truncate_at("héllo", 3), "hé");
        assert_eq!(truncate_at("abc", 10), "abc");
    }

    #[test]
    fn loopback_is_told_from_its_text_alone_and_secrets_do_not_show() {
        for host in [
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
            "localhost",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "10.1.2.3",
            "0.0.0.0",
            "::",
            "[::ffff:10.0.0.1]",
            "example.com",
            "local",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        assert!(is_loopback_host("::ffff:127.0.0.1"));
        assert_eq!(
            percent_decode("p%40ss%3Aw%2Fd").as_deref(),
            Some("p@ss:w/d")
        );
        assert_eq!(percent_decode("%ff"), None);
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn an_atomic_write_replaces_the_whole_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/file.json");
        write_atomic(&path, b"first").expect("write");
        write_atomic(&path, b"second").expect("replace");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .expect("read dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["file.json"], "no temporary file is left");
    }
}
