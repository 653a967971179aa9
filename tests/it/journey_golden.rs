//! The journey a client reads, pinned: a walk of the docs/flows.md flow without its jitter
//! (`fixtures/scenarios/outbound-v1-nojitter.flow.json`, so every instant is fixed) read back through `GetJourney`, `ListJourney` and `Watch`, compared with
//! `tests/snapshots/journey_walk.json`.
//!
//! The file was recorded before the journey's storage was compacted (one row per transition
//! instead of one per entry), so this test is what proves the compaction changed
//! nothing a client sees: every entry's kind, seq, time and detail, every page, every Watch
//! cursor. Ids the server draws at random are replaced by placeholders in order of first
//! appearance. `NUDGE_BLESS=1` rewrites the file (only for a change meant to alter the journey).

use crate::common::{spawn_app, Backend, TestApp};
use base64::Engine;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use serde_json::{json, Value};

backend_tests!(the_journey_of_the_spec_walk_is_unchanged);

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;
const GOLDEN: &str = "tests/snapshots/journey_walk.json";

fn entry_json(e: &JourneyEntry) -> Value {
    json!({
        "seq": e.seq,
        "at": e.at.as_ref().map(|t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000),
        "kind": e.kind,
        "detail": crate::common::detail_json(e),
    })
}

/// Moves the test clock of `app` on by `by_ms` (the planner runs what fell due).
pub(crate) async fn advance(app: &TestApp, by_ms: i64) {
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(by_ms)),
        }))
        .await
        .unwrap();
}

/// Claims what is due and acks each as sent, in the order of `enrollments` (a claim orders
/// dispatches due at the same instant by their random ids, so the claim's order would make the
/// provider ids and the acks' Watch order differ from run to run).
async fn send_all(app: &TestApp, enrollments: &[String]) {
    let mut d = DispatchServiceClient::new(app.channel().await);
    let mut claimed = d
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 60_000,
            max_count: 10,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    claimed.sort_by_key(|d| enrollments.iter().position(|e| *e == d.enrollment_id));
    for (i, dispatch) in claimed.iter().enumerate() {
        d.ack_dispatch(app.authed(AckDispatchRequest {
            id: dispatch.id.clone(),
            lease_token: dispatch.lease_token.clone(),
            provider_message_id: format!("prov-{i}"),
            failure: String::new(),
            ..Default::default()
        }))
        .await
        .unwrap();
    }
}

/// Replaces each id the server drew (`xx_<32 hex>`) with `<xx#n>`, numbered by first
/// appearance, everywhere in the document.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut seen: Vec<String> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let is_id = i + 3 + 32 <= bytes.len()
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes[i].is_ascii_lowercase()
            && bytes[i + 1].is_ascii_lowercase()
            && bytes[i + 2] == b'_'
            && bytes[i + 3..i + 35]
                .iter()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if is_id {
            let id = &text[i..i + 35];
            let n = match seen.iter().position(|s| s == id) {
                Some(n) => n,
                None => {
                    seen.push(id.to_string());
                    seen.len() - 1
                }
            };
            out.push_str(&format!("<{}#{n}>", &id[..2]));
            i += 35;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

async fn the_journey_of_the_spec_walk_is_unchanged(backend: Backend) {
    let app = spawn_app(backend).await;
    let definition =
        std::fs::read_to_string("fixtures/scenarios/outbound-v1-nojitter.flow.json").unwrap();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition }))
        .await
        .unwrap();
    for id in ["ann", "bob"] {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: id.into(),
                    email: format!("{id}@example.com"),
                    phone: if id == "ann" {
                        "+12125551234".into()
                    } else {
                        "+12125550000".into()
                    },
                    tz: "America/New_York".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
    let mut enrollments = EnrollmentServiceClient::new(app.channel().await);
    let mut ids = Vec::new();
    for contact in ["ann", "bob"] {
        let e = enrollments
            .enroll(app.authed(EnrollRequest {
                contact_id: contact.into(),
                flow_id: "outbound-v1-nojitter".into(),
                input: r#"{"demo_at": "2026-12-20T15:00:00Z", "nudge_ms": 60000}"#.into(),
                client_key: format!("walk-{contact}"),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        ids.push(e.enrollment.unwrap().id);
    }
    // Both get the first email; two business days later the SMS; bob replies to it, ann does
    // not and gets the call task after the 5bd timeout, which she connects.
    advance(&app, HOUR_MS).await;
    send_all(&app, &ids).await;
    advance(&app, 4 * DAY_MS).await;
    send_all(&app, &ids).await;
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "bob".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            provider_id: "sms-reply-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    advance(&app, 14 * DAY_MS).await;
    let mut signals = SignalServiceClient::new(app.channel().await);
    let tasks = signals
        .list_tasks(app.authed(ListTasksRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    signals
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: tasks[0].id.clone(),
            outcome: "connected".into(),
            ..Default::default()
        }))
        .await
        .unwrap();

    // GetJourney, in pages of 3.
    let mut journeys = Vec::new();
    for id in &ids {
        let mut pages = Vec::new();
        let mut token = String::new();
        loop {
            let page = enrollments
                .get_journey(app.authed(GetJourneyRequest {
                    enrollment_id: id.clone(),
                    page: Some(PageRequest {
                        page_size: 3,
                        page_token: token.clone(),
                    }),
                }))
                .await
                .unwrap()
                .into_inner();
            pages.push(json!({
                "entries": page.entries.iter().map(entry_json).collect::<Vec<_>>(),
                "next_page_token": page.next_page_token,
            }));
            if page.next_page_token.is_empty() {
                break;
            }
            token = page.next_page_token;
        }
        journeys.push(json!({ "enrollment": id, "pages": pages }));
    }
    // ListJourney of each contact, in pages of 4.
    let mut contacts = Vec::new();
    for contact in ["ann", "bob"] {
        let mut pages = Vec::new();
        let mut token = String::new();
        loop {
            let page = enrollments
                .list_journey(app.authed(ListJourneyRequest {
                    contact_id: contact.into(),
                    page: Some(PageRequest {
                        page_size: 4,
                        page_token: token.clone(),
                    }),
                }))
                .await
                .unwrap()
                .into_inner();
            pages.push(json!({
                "entries": page.entries.iter().map(|c| json!({
                    "enrollment": c.enrollment_id,
                    "flow": format!("{}@{}", c.flow_id, c.flow_version),
                    "entry": entry_json(c.entry.as_ref().unwrap()),
                })).collect::<Vec<_>>(),
                "next_page_token": page.next_page_token,
            }));
            if page.next_page_token.is_empty() {
                break;
            }
            token = page.next_page_token;
        }
        contacts.push(json!({ "contact": contact, "pages": pages }));
    }
    // Watch from the start: every entry of the account, with its cursor.
    let total: usize = journeys
        .iter()
        .flat_map(|j| j["pages"].as_array().unwrap())
        .map(|p| p["entries"].as_array().unwrap().len())
        .sum();
    let mut stream = enrollments
        .watch(app.authed(WatchRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let mut watched = Vec::new();
    let mut cursors = Vec::new();
    while watched.len() < total {
        let next = tokio::time::timeout(std::time::Duration::from_secs(20), stream.message())
            .await
            .expect("Watch delivers every entry")
            .unwrap()
            .expect("the stream stays open");
        cursors.push(next.cursor.clone());
        // A cursor is opaque (today it holds the entry's transaction id, which no golden file
        // can fix); the golden records each entry's place in the stream in the form cursors
        // had when it was recorded, and below each cursor is checked to resume after its entry.
        watched.push(json!({
            "cursor": base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(format!("w1:{DEFAULT_ACCOUNT_ID}:{}", watched.len() + 1)),
            "enrollment": next.enrollment_id,
            "contact": next.contact_id,
            "entry": entry_json(next.entry.as_ref().unwrap()),
        }));
    }
    drop(stream);
    for k in [0, total / 3, total - 2] {
        let mut resumed = enrollments
            .watch(app.authed(WatchRequest {
                cursor: cursors[k].clone(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        let next = tokio::time::timeout(std::time::Duration::from_secs(20), resumed.message())
            .await
            .expect("Watch resumes")
            .unwrap()
            .expect("the stream stays open");
        assert_eq!(
            entry_json(next.entry.as_ref().unwrap()),
            watched[k + 1]["entry"],
            "the cursor of entry {k} resumes after it"
        );
    }

    let document = json!({ "get_journey": journeys, "list_journey": contacts, "watch": watched });
    let text = normalize(&serde_json::to_string_pretty(&document).unwrap()) + "\n";
    if std::env::var_os("NUDGE_BLESS").is_some() {
        std::fs::write(GOLDEN, &text).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN).expect("the golden journey exists");
    if text != golden {
        let at = text
            .lines()
            .zip(golden.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "the journey differs from {GOLDEN} at line {}:\n  now:    {}\n  golden: {}",
            at + 1,
            text.lines().nth(at).unwrap_or(""),
            golden.lines().nth(at).unwrap_or("")
        );
    }
    app.stop().await;
}

#[test]
fn normalize_numbers_ids_by_first_appearance() {
    let a = format!("en_{}", "0a".repeat(16));
    let b = format!("dp_{}", "1b".repeat(16));
    let text = format!("{a} x {b} {a}:1 <{a}.1@nudge>");
    assert_eq!(
        normalize(&text),
        "<en#0> x <dp#1> <en#0>:1 <<en#0>.1@nudge>"
    );
}
