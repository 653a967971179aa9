//! A custom event's payload in the journey and on the enrollment (docs/signals.md, "Custom events"; docs/service.md, "The journey"): the
//! `woke`, `buffered` and `consumed` entries carry it (up to 4 KiB of JSON; a larger one is
//! recorded by its size only), and `GetEnrollment` shows the signal that ended the last wait
//! with its payload.

use super::support::*;
use crate::common::{spawn_app, Backend};
use serde_json::{json, Value};

backend_tests!(
    a_payload_that_wakes_a_wait_is_recorded_and_readable,
    a_buffered_payload_is_carried_when_consumed,
    an_oversized_payload_is_recorded_by_its_size,
);

/// Two waits for custom events in a row.
const TWO_EVENTS: &str = r#"{
  "name": "two-events",
  "start": "first",
  "steps": {
    "first":  { "type": "wait_for", "params": { "events": ["deal.opened"], "timeout": "1d" },
                "next": { "deal.opened": "second", "timeout": "late" } },
    "second": { "type": "wait_for", "params": { "events": ["payment.received"], "timeout": "1d" },
                "next": { "payment.received": "paid", "timeout": "late" } },
    "paid": { "type": "end", "params": { "outcome": "paid" } },
    "late": { "type": "end", "params": { "outcome": "late" } }
  }
}"#;

/// The journey's signal entry of `signal` with `effect`.
async fn signal_entry(
    app: &crate::common::TestApp,
    enrollment: &str,
    signal: &str,
    effect: &str,
) -> Value {
    journey(app, enrollment)
        .await
        .into_iter()
        .find(|(k, d)| k == "signal" && d["signal"] == signal && d["effect"] == effect)
        .map(|(_, d)| d)
        .unwrap_or_else(|| panic!("no {effect} entry for {signal}"))
}

async fn a_payload_that_wakes_a_wait_is_recorded_and_readable(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    let payload = json!({"amount": 42, "currency": "EUR", "lines": [{"sku": "a-1"}]});
    let receipt = post_event(&app, "ann", "payment.received", &payload.to_string()).await;
    let woke = signal_entry(&app, &id, &receipt.signal_id, "woke").await;
    assert_eq!(woke["payload"], payload, "{woke}");
    assert!(woke.get("payload_truncated").is_none());

    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "completed");
    let w = e.woken.expect("the signal that ended the wait");
    assert_eq!(
        (
            w.run,
            w.step.as_str(),
            w.signal_id.as_str(),
            w.branch.as_str()
        ),
        (1, "wait_1", receipt.signal_id.as_str(), "payment.received")
    );
    assert_eq!(serde_json::from_str::<Value>(&w.payload).unwrap(), payload);
    assert_eq!(w.payload_truncated, 0);
    app.stop().await;
}

async fn a_buffered_payload_is_carried_when_consumed(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TWO_EVENTS).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    // Nobody waits for a payment yet: buffered, with its payload.
    let paid = json!({"amount": 7});
    let early = post_event(&app, "ann", "payment.received", &paid.to_string()).await;
    let buffered = signal_entry(&app, &id, &early.signal_id, "buffered").await;
    assert_eq!(buffered["payload"], paid, "{buffered}");
    // The deal opens (no payload: nothing recorded); the second wait consumes the payment.
    let opened = post_event(&app, "ann", "deal.opened", "").await;
    let woke = signal_entry(&app, &id, &opened.signal_id, "woke").await;
    assert!(
        woke.get("payload").is_none(),
        "an empty payload is not written: {woke}"
    );
    let consumed = signal_entry(&app, &id, &early.signal_id, "consumed").await;
    assert_eq!(consumed["payload"], paid, "{consumed}");
    assert_eq!(consumed["branch"], "payment.received");

    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "paid")
    );
    let w = e.woken.expect("the consumed signal");
    assert_eq!(
        (w.step.as_str(), w.signal_id.as_str()),
        ("second", early.signal_id.as_str())
    );
    assert_eq!(serde_json::from_str::<Value>(&w.payload).unwrap(), paid);
    app.stop().await;
}

async fn an_oversized_payload_is_recorded_by_its_size(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    // 10 KB: accepted (the limit is 64 KiB), too large for the journey's 4 KiB.
    let big = json!({"note": "x".repeat(10_000)}).to_string();
    let receipt = post_event(&app, "ann", "payment.received", &big).await;
    let woke = signal_entry(&app, &id, &receipt.signal_id, "woke").await;
    assert!(woke.get("payload").is_none(), "{woke}");
    assert_eq!(woke["payload_truncated"], big.len(), "{woke}");
    assert!(big.len() > nudge::engine::MAX_RECORDED_PAYLOAD);

    let w = enrollment(&app, &id).await.woken.expect("woken");
    assert_eq!(
        (w.payload.as_str(), w.payload_truncated),
        ("", big.len() as i64)
    );
    // The receipt is an ordinary success: a large payload is never an error.
    assert_eq!(receipt.deliveries[0].effect, "woke");
    app.stop().await;
}
