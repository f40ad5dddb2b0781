//! The request rate a token may use (`--max-requests-per-second`): a token bucket that holds two
//! seconds' worth, so a client may burst, and past it is answered 429 with `Retry-After`. It sits
//! behind the token check, so requests without the token never spend the token's budget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::time::Instant;

/// How many seconds' worth of requests the bucket holds.
const BURST_SECONDS: f64 = 2.0;

/// A token bucket of requests.
#[derive(Debug)]
pub(super) struct RequestRate {
    per_second: f64,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    filled_at: Instant,
}

impl RequestRate {
    /// At most `per_second` requests a second, after a burst of twice that.
    pub(super) fn new(per_second: u32) -> Arc<Self> {
        let per_second = f64::from(per_second.max(1));
        Arc::new(RequestRate {
            per_second,
            bucket: Mutex::new(Bucket {
                tokens: per_second * BURST_SECONDS,
                filled_at: Instant::now(),
            }),
        })
    }

    /// Takes one request from the bucket, or says how long until one is there.
    fn take(&self) -> Result<(), Duration> {
        let Ok(mut bucket) = self.bucket.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        let refill = now.duration_since(bucket.filled_at).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.per_second * BURST_SECONDS);
        bucket.filled_at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }
}

/// The axum middleware: lets a request through while the bucket has one, else answers 429.
pub(super) async fn within_rate(
    State(rate): State<Arc<RequestRate>>,
    request: Request,
    next: Next,
) -> Response {
    match rate.take() {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            let seconds = wait.as_secs().max(1);
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "more than {} requests a second with this token (--max-requests-per-second); \
try again in {seconds} s",
                    rate.per_second
                ),
            )
                .into_response();
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_two_seconds_then_the_rate() {
        let rate = RequestRate::new(10);
        for _ in 0..20 {
            assert!(rate.take().is_ok());
        }
        let wait = rate.take().expect_err("the bucket is empty");
        assert!(wait <= Duration::from_millis(100), "{wait:?}");
        tokio::time::advance(Duration::from_millis(500)).await;
        for _ in 0..5 {
            assert!(rate.take().is_ok());
        }
        assert!(rate.take().is_err());
        // A long pause fills the bucket to its burst, no more.
        tokio::time::advance(Duration::from_secs(60)).await;
        for _ in 0..20 {
            assert!(rate.take().is_ok());
        }
        assert!(rate.take().is_err());
    }
}
