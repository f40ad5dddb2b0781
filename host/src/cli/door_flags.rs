//! The flags of an HTTP door's limits (`forge-host mcp --http`): timeouts, connection caps and the
//! request rate. Their defaults are `DoorLimits::default()`'s.

use std::time::Duration;

use forge_host::limits::{format_duration, parse_duration};
use forge_host::mcp_server::DoorLimits;

fn defaults() -> DoorLimits {
    DoorLimits::default()
}

/// Requests a second a token may make unless told otherwise.
const DEFAULT_REQUESTS_PER_SECOND: u32 = 1000;

/// What a client of the HTTP door may hold.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "HTTP connections (with --http)")]
pub struct DoorFlags {
    /// Closes a connection that has not sent a whole request head this long after connecting
    /// (TLS handshake included) or after the head's first byte
    #[arg(long, value_name = "DURATION", value_parser = parse_duration,
        default_value = format_duration(defaults().header_timeout))]
    pub header_timeout: Duration,
    /// Fails a request whose body has not all arrived this long after its head
    #[arg(long, value_name = "DURATION", value_parser = parse_duration,
        default_value = format_duration(defaults().body_timeout))]
    pub body_timeout: Duration,
    /// Closes a keep-alive connection that sends no new request this long after a response
    #[arg(long, value_name = "DURATION", value_parser = parse_duration,
        default_value = format_duration(defaults().idle_timeout))]
    pub idle_timeout: Duration,
    /// Closes a connection whose client reads nothing of a response for this long (a stalled
    /// event stream): the unsent rest is dropped, the run goes on, and `get_run` reads it
    #[arg(long, value_name = "DURATION", value_parser = parse_duration,
        default_value = format_duration(defaults().send_timeout))]
    pub send_timeout: Duration,
    /// Connections open at once; past it the oldest one serving no request is closed, or the
    /// new one is refused when all are serving
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000),
        default_value_t = defaults().max_connections as u32)]
    pub max_connections: u32,
    /// Connections open at once from one client address (behind a proxy all clients share its)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000),
        default_value_t = defaults().max_per_client as u32)]
    pub max_connections_per_client: u32,
    /// Connections open at once that serve no request (waiting for a request head, or idle);
    /// past it the oldest of them is closed
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000),
        default_value_t = defaults().max_pending as u32)]
    pub max_pending_connections: u32,
    /// Requests a second the bearer token may make, after a burst of two seconds' worth; more
    /// are answered 429 with Retry-After (0: no bound)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REQUESTS_PER_SECOND)]
    pub max_requests_per_second: u32,
}

impl DoorFlags {
    /// The limits these flags give.
    pub fn limits(&self) -> DoorLimits {
        DoorLimits {
            header_timeout: self.header_timeout,
            body_timeout: self.body_timeout,
            idle_timeout: self.idle_timeout,
            send_timeout: self.send_timeout,
            max_connections: self.max_connections as usize,
            max_per_client: self.max_connections_per_client as usize,
            max_pending: self.max_pending_connections as usize,
        }
    }

    /// The request rate, `None` for none.
    pub fn max_requests_per_second(&self) -> Option<u32> {
        (self.max_requests_per_second > 0).then_some(self.max_requests_per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        door: DoorFlags,
    }

    #[test]
    fn the_defaults_are_the_doors_and_flags_override_them() {
        let parsed = Probe::try_parse_from(["probe"]).expect("parsed");
        assert_eq!(parsed.door.limits(), DoorLimits::default());
        assert_eq!(parsed.door.max_requests_per_second(), Some(1000));
        let parsed = Probe::try_parse_from([
            "probe",
            "--header-timeout",
            "2s",
            "--max-connections-per-client",
            "8",
            "--max-requests-per-second",
            "0",
        ])
        .expect("parsed");
        assert_eq!(parsed.door.limits().header_timeout, Duration::from_secs(2));
        assert_eq!(parsed.door.limits().max_per_client, 8);
        assert_eq!(parsed.door.max_requests_per_second(), None);
        assert!(Probe::try_parse_from(["probe", "--max-connections", "0"]).is_err());
        assert!(Probe::try_parse_from(["probe", "--idle-timeout", "soon"]).is_err());
    }
}
