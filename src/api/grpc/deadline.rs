//! A call's deadline, kept by the server: a client that sends `grpc-timeout` gets
//! its answer before the deadline passes. Work that has not finished a little before it — a
//! commit waiting on a database that stopped answering, a lock held across a failover — is
//! dropped (its transaction rolls back) and answered `UNAVAILABLE`, which a client retries,
//! rather than left to the client's own `DEADLINE_EXCEEDED` with nothing said.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The most taken off a deadline, so the answer reaches the client in time.
const MARGIN: Duration = Duration::from_millis(200);

/// `grpc-timeout`'s value (`100m`, `5S`: digits and a unit, gRPC over HTTP/2 spec).
pub fn parse_timeout(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Runs the call within its `grpc-timeout` less a margin (a tenth of it, at most 200 ms).
pub async fn keep(request: Request, next: Next) -> Response {
    let Some(timeout) = request
        .headers()
        .get("grpc-timeout")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_timeout)
    else {
        return next.run(request).await;
    };
    let budget = timeout.saturating_sub(MARGIN.min(timeout / 10));
    match tokio::time::timeout(budget, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(?timeout, "a call ran out of its deadline: UNAVAILABLE");
            tonic::Status::unavailable(
                "the call did not finish within its deadline: the database is slow or \
                 unavailable; nothing it began was kept, retry",
            )
            .into_http::<axum::body::Body>()
            .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts() {
        assert_eq!(parse_timeout("5S"), Some(Duration::from_secs(5)));
        assert_eq!(parse_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_timeout("7u"), Some(Duration::from_micros(7)));
        assert_eq!(parse_timeout("S"), None);
        assert_eq!(parse_timeout("5s"), None);
        assert_eq!(parse_timeout("123456789S"), None, "at most 8 digits");
        assert_eq!(parse_timeout("-5S"), None);
    }
}
