//! Every journey entry carries its sentence (`summary`): `GetJourney`, `ListJourney` and Watch
//! give the same words for the same entry, its times in the contact's zone, or the sender's
//! (said so) for a contact without one.

use crate::common::{spawn_app, Backend, TestApp};
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::*;
use std::time::Duration;

backend_tests!(every_reader_carries_the_entrys_sentence);

/// `(seq, summary)` of every entry.
fn said(entries: &[JourneyEntry]) -> Vec<(i64, String)> {
    entries.iter().map(|e| (e.seq, e.summary.clone())).collect()
}

/// Zed has only an email address; enrolled in the SMS flow under a sender in Prague.
async fn enroll_zed(app: &TestApp) -> String {
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "prague".into(),
                tz: "Europe/Prague".into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "zed".into(),
                email: "zed@example.com".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: "zed".into(),
            flow_id: "explain-sms".into(),
            sender_id: "prague".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .id
}

async fn every_reader_carries_the_entrys_sentence(backend: Backend) {
    let app = spawn_app(backend).await;
    // Fri 2026-12-04 20:00Z, 13:00 for Dee in Denver: the SMS goes at once, then she is waited
    // for 3 days; her reply wakes the wait.
    let dee = crate::explain_api::sms_flow(&app).await;
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            text: "Sounds good, see you Thursday".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let journey = app.journey(&dee).await;
    let summaries = said(&journey);
    let text: Vec<&str> = summaries.iter().map(|(_, s)| s.as_str()).collect();
    for want in [
        "Enrolled; starting at step text",
        "Sent SMS *hello* to +1 303-555-1234",
        "Waiting at step listen for a reply — until Mon 7 Dec, 13:00 (America/Denver)",
        "Woken by a reply: interested — “Sounds good”",
        "Step listen ended on a reply",
        "Completed",
    ] {
        assert!(text.contains(&want), "no {want:?} in {text:#?}");
    }
    assert!(journey.iter().all(|e| !e.summary.is_empty()), "{text:#?}");

    // ListJourney: the same words for the same entries.
    let listed = list_journey(&app, "dee").await;
    assert_eq!(said(&listed), summaries);

    // Watch: the same words, in Dee's zone, read with the entries.
    let watched = watch_journey(&app, "dee", journey.len()).await;
    assert_eq!(said(&watched), summaries);

    // A contact without a zone: the sender's zone, said so, on every reader.
    let zed = enroll_zed(&app).await;
    let zed_journey = said(&app.journey(&zed).await);
    let wait = "Waiting at step listen for a reply — until Mon 7 Dec, 21:00 \
                (Europe/Prague, the sender's zone: the contact has none)";
    assert!(
        zed_journey.iter().any(|(_, s)| s == wait),
        "{zed_journey:#?}"
    );
    let listed = list_journey(&app, "zed").await;
    assert_eq!(said(&listed), zed_journey);
    let watched = watch_journey(&app, "zed", zed_journey.len()).await;
    assert_eq!(said(&watched), zed_journey);
}

/// `ListJourney` of a contact: its entries.
async fn list_journey(app: &TestApp, contact: &str) -> Vec<JourneyEntry> {
    EnrollmentServiceClient::new(app.channel().await)
        .list_journey(app.authed(ListJourneyRequest {
            contact_id: contact.into(),
            page: None,
        }))
        .await
        .unwrap()
        .into_inner()
        .entries
        .into_iter()
        .filter_map(|e| e.entry)
        .collect()
}

/// The first `n` entries Watch gives of a contact.
async fn watch_journey(app: &TestApp, contact: &str, n: usize) -> Vec<JourneyEntry> {
    let mut stream = EnrollmentServiceClient::new(app.channel().await)
        .watch(app.authed(WatchRequest {
            contact_id: contact.into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let mut watched = Vec::new();
    while watched.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .expect("Watch gives every entry")
            .unwrap()
            .expect("the stream stays open");
        watched.push(next.entry.unwrap());
    }
    watched
}
