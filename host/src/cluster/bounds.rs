//! How much of a request a worker holds: no more than its own limits allow. A request message
//! larger than the worker's `--max-script` plus [`REQUEST_OVERHEAD`] is not parsed, and one
//! whose declared script or inputs are over the limits it would run with is refused before any
//! blob is fetched; each blob is then read only up to the size its request declares. Either way
//! the submitter gets the refusal as its answer.

use super::wire::RunMessage;
use crate::error::Error;
use crate::limits::Limits;

/// What a request's message may hold besides its script: the inputs' names and hashes, the
/// limits, the policy.
pub const REQUEST_OVERHEAD: u64 = 1 << 20;

/// The largest request message a worker with `ceilings` parses: its `--max-script` and
/// [`REQUEST_OVERHEAD`].
pub fn request_bound(ceilings: &Limits) -> u64 {
    ceilings.max_script_bytes.saturating_add(REQUEST_OVERHEAD)
}

/// Refuses `request` before anything of it is fetched when its declared sizes are over
/// `limits` (the request's, lowered to the worker's): the script over `--max-script`, the
/// inputs together over `--max-input`.
pub(super) fn check_declared_sizes(request: &RunMessage, limits: &Limits) -> Result<(), Error> {
    crate::kernel::check_script_size(request.script.size, limits.max_script_bytes)?;
    if let Some(text) = &request.script_text
        && text.len() as u64 != request.script.size
    {
        return Err(Error::invalid_input(
            "the request's script is not the size it declares",
        ));
    }
    let total = request
        .inputs
        .iter()
        .fold(0u64, |sum, input| sum.saturating_add(input.size));
    if total > limits.max_input_bytes {
        return Err(Error::invalid_input(format!(
            "the inputs hold {total} bytes together, over --max-input of {} bytes",
            limits.max_input_bytes
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::wire::FileRef;
    use crate::error::ErrorCode;

    fn request(script: u64, inputs: &[u64]) -> RunMessage {
        let file = |size: u64| FileRef {
            path: "f".into(),
            sha256: "ab".repeat(32),
            size,
        };
        RunMessage {
            id: "s1".into(),
            script: file(script),
            script_text: None,
            engine: None,
            limits: Limits::default(),
            policy: crate::permissions::Policy::default(),
            session: "s".into(),
            inputs: inputs.iter().copied().map(file).collect(),
            progress: false,
            record: crate::journal::RecordMode::Full,
        }
    }

    #[test]
    fn declared_sizes_over_the_limits_are_refused_before_anything_is_fetched() {
        let limits = Limits {
            max_script_bytes: 1000,
            max_input_bytes: 5000,
            ..Limits::default()
        };
        assert!(check_declared_sizes(&request(1000, &[2500, 2500]), &limits).is_ok());
        let script = check_declared_sizes(&request(1001, &[]), &limits).expect_err("script");
        assert_eq!(script.code, ErrorCode::BudgetExceeded);
        let inputs = check_declared_sizes(&request(10, &[u64::MAX, 2]), &limits).expect_err("in");
        assert!(inputs.message.contains("--max-input"), "{}", inputs.message);
        let mut lying = request(3, &[]);
        lying.script_text = Some("return 1".into());
        assert!(check_declared_sizes(&lying, &limits).is_err());
        assert_eq!(request_bound(&limits), 1000 + REQUEST_OVERHEAD);
    }
}
