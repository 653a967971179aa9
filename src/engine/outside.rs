//! Steps that reach outside (docs/flows.md, "approval" and "fetch"): the request a `fetch` run makes, the answer that
//! comes back as an input, the response kept for later expressions, and an approval's decision.
//!
//! The interpreter never makes the request: it records the attempt ([`FetchCall`] on the run,
//! [`crate::engine::Effect::FetchRequested`] for the outbox) and is fed the answer afterwards
//! ([`crate::engine::Input::FetchAnswer`]), so the request runs outside any transaction and a
//! crash re-sends the same attempt with the same `Idempotency-Key`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A `fetch` request with its expressions evaluated, fixed when the step is entered: every
/// attempt sends the same request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchCall {
    /// `GET`, `POST`, …
    pub method: String,
    /// The absolute URL, with the `query` parameters added.
    pub url: String,
    /// Request headers (the `Idempotency-Key` is added per attempt).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The JSON body, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Each attempt's budget, in milliseconds of real time.
    pub timeout_ms: u64,
    /// The largest response body accepted, in bytes.
    pub response_limit: usize,
    /// How many attempts in all (1–10).
    pub attempts: u32,
    /// The wait before the second attempt; doubled for each further one, jittered.
    pub backoff_ms: u64,
    /// The attempt in flight or next, from 1. It moves on only once an answer is recorded.
    pub attempt: u32,
}

/// One attempt to send, as the outbox stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchRequest {
    /// `{enrollment}:{run}:{attempt}`: the `Idempotency-Key` header, so the peer can deduplicate
    /// a request a crash made us send twice.
    pub idempotency_key: String,
    /// The fetch run.
    pub run: u64,
    /// Which attempt, from 1.
    pub attempt: u32,
    /// What to send.
    pub call: FetchCall,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FetchAnswer {
    /// The peer answered (any status) with a body within the limit.
    Response {
        /// The HTTP status.
        status: u16,
        /// The body as JSON; `null` when empty or not JSON.
        #[serde(default)]
        body: serde_json::Value,
        /// How long the attempt took.
        ms: u64,
    },
    /// No usable answer: connection refused, TLS, a body over the limit, too many redirects.
    Error {
        /// What went wrong, for the journey.
        error: String,
        /// How long the attempt took.
        ms: u64,
        /// A refused host or address is one attempt and is not retried (docs/flows.md, "fetch").
        #[serde(default)]
        refused: bool,
    },
    /// The attempt ran out of its budget.
    Timeout {
        /// How long the attempt took.
        ms: u64,
    },
}

/// The last `fetch` response, kept on the enrollment: `$: fetch.status`, `$: fetch.body.x`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchResponse {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body (`null` when empty or not JSON).
    #[serde(default)]
    pub body: serde_json::Value,
}

impl FetchResponse {
    /// `{"status": …, "body": …}`: what `fetch.*` paths read.
    pub fn as_json(&self) -> serde_json::Value {
        serde_json::json!({"status": self.status, "body": self.body})
    }
}

/// An approval's decision (docs/flows.md, "approval"): the branch it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// `approved`.
    Approved,
    /// `rejected`.
    Rejected,
}

impl Decision {
    /// The branch and form spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Rejected => "rejected",
        }
    }

    /// Parses a form or API spelling.
    pub fn parse(text: &str) -> Option<Decision> {
        match text {
            "approved" => Some(Decision::Approved),
            "rejected" => Some(Decision::Rejected),
            _ => None,
        }
    }
}

/// The delay before attempt `next` (2 or more): `backoff_ms` doubled per earlier retry, with
/// "equal jitter" (half fixed, half drawn from `seed`), so retries of many enrollments spread
/// out yet `Simulate` and reality agree.
pub fn backoff_ms(backoff_ms: u64, next: u32, seed: u64) -> u64 {
    let base = backoff_ms.saturating_mul(1u64 << (next.saturating_sub(2)).min(20));
    let half = base / 2;
    let draw = if half == 0 { 0 } else { seed % (half + 1) };
    base - half + draw
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_within_bounds() {
        for seed in [0u64, 1, 7, 12345, u64::MAX] {
            for (next, base) in [(2u32, 30_000u64), (3, 60_000), (4, 120_000)] {
                let d = backoff_ms(30_000, next, seed);
                assert!(
                    d >= base / 2 && d <= base,
                    "attempt {next} seed {seed}: {d}"
                );
            }
        }
        assert_eq!(backoff_ms(30_000, 2, 0), 15_000);
        assert_eq!(backoff_ms(30_000, 2, 15_000), 30_000);
        assert_eq!(backoff_ms(0, 5, 9), 0);
    }

    #[test]
    fn decisions_round_trip() {
        for d in [Decision::Approved, Decision::Rejected] {
            assert_eq!(Decision::parse(d.as_str()), Some(d));
        }
        assert_eq!(Decision::parse("Approved"), None);
    }
}
