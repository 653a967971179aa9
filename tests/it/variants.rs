//! Step variants end to end: each contact's dispatch carries the variant GrowthBook's hashing
//! gives it (`nudge::experiment::assign`, itself checked against the `growthbook` package) and
//! that variant's params; the journey's dispatch entry names it; steps sharing an experiment
//! give a contact the same variant at each; the simulator assigns the same way.

use crate::common::{spawn_app, Backend, TestApp};
use nudge::experiment::{assign, seed};
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::collections::BTreeMap;

backend_tests!(each_contact_gets_its_variant_and_keeps_it_across_a_shared_experiment);

const CONTACTS: usize = 40;

async fn claim(app: &TestApp) -> Vec<Dispatch> {
    DispatchServiceClient::new(app.channel().await)
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 600_000,
            max_count: 500,
            channels: vec!["email".into()],
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches
}

async fn each_contact_gets_its_variant_and_keeps_it_across_a_shared_experiment(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/flows/subject-test.json"
    ))
    .unwrap();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition: flow }))
        .await
        .unwrap();
    let mut e = EnrollmentServiceClient::new(app.channel().await);
    let mut contacts = BTreeMap::new();
    for i in 0..CONTACTS {
        let id = format!("prospect-{i}");
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: id.clone(),
                    email: format!("p{i}@example.com"),
                    tz: "America/Denver".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
        let enrolled = e
            .enroll(app.authed(EnrollRequest {
                contact_id: id.clone(),
                flow_id: "subject-test".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .enrollment
            .unwrap();
        contacts.insert(enrolled.id, id);
    }
    // The shared experiment's seed is its name; weights 1 and 2.
    let expected = |contact: &str| {
        ["a", "b"][assign(
            &seed("subject-test", "email_1", Some("subject-lines")),
            contact,
            &[1.0, 2.0],
            &[false, false],
        )
        .index]
    };
    let first = claim(&app).await;
    assert_eq!(first.len(), CONTACTS);
    let mut by_variant: BTreeMap<String, usize> = BTreeMap::new();
    for d in &first {
        let contact = &contacts[&d.enrollment_id];
        assert_eq!(d.step, "email_1");
        assert_eq!(d.variant, expected(contact), "{contact}");
        let subject: serde_json::Value = serde_json::from_str(&d.channel_params).unwrap();
        let want = if d.variant == "a" {
            "Quick question"
        } else {
            "An idea for {{company}}"
        };
        assert_eq!(subject["subject"], want, "the variant's params are sent");
        *by_variant.entry(d.variant.clone()).or_default() += 1;
    }
    assert_eq!(
        by_variant.len(),
        2,
        "both variants are used: {by_variant:?}"
    );

    // The journey's dispatch entry names the variant.
    let some = &first[0];
    let journey = app.journey(&some.enrollment_id).await;
    let dispatched = journey
        .iter()
        .find(|j| j.kind == "dispatch")
        .expect("a dispatch entry");
    let detail = dispatched.detail.as_ref().expect("a detail");
    assert!(detail.fields.contains_key("variant"), "{detail:?}");
    assert_eq!(
        detail.fields["variant"].kind,
        Some(prost_types::value::Kind::StringValue(some.variant.clone())),
        "{detail:?}"
    );

    // Two business days on: the second step of the same experiment, the same variant each.
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(5 * 86_400_000)),
        }))
        .await
        .unwrap();
    // (The first step's dispatches, never acknowledged here, are claimed again too.)
    let second: Vec<Dispatch> = claim(&app)
        .await
        .into_iter()
        .filter(|d| d.step == "email_2")
        .collect();
    assert_eq!(second.len(), CONTACTS);
    let first_of: BTreeMap<&str, &str> = first
        .iter()
        .map(|d| (d.enrollment_id.as_str(), d.variant.as_str()))
        .collect();
    for d in &second {
        assert_eq!(
            d.variant,
            first_of[d.enrollment_id.as_str()],
            "the same variant"
        );
    }
    app.stop().await;
}

/// The simulator assigns as the service does: by the scenario contact's `id`, so a scenario run
/// for a real contact shows the variant that contact gets (and each shared step the same one).
#[test]
fn the_simulator_assigns_by_the_scenario_contacts_id() {
    use nudge::engine::simulate::{simulate, Scenario};
    let flow = crate::engine_support::flow(
        serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/flows/subject-test.json"
            ))
            .unwrap(),
        )
        .unwrap(),
    );
    let mut seen = BTreeMap::new();
    for i in 0..12 {
        let contact = format!("prospect-{i}");
        let scenario: Scenario = serde_json::from_value(serde_json::json!({
            "start": "2026-12-07T15:00:00Z", "horizon": "2026-12-20T00:00:00Z",
            "contact": {"id": contact, "tz": "America/Denver", "email": "p@example.com"}
        }))
        .unwrap();
        let timeline = simulate(&flow, &scenario).unwrap();
        let want = ["a", "b"][assign(
            &seed("subject-test", "email_1", Some("subject-lines")),
            &contact,
            &[1.0, 2.0],
            &[false, false],
        )
        .index];
        let variants: Vec<(&str, Option<&str>)> = timeline
            .runs
            .iter()
            .filter(|r| r.step.starts_with("email_"))
            .map(|r| (r.step.as_str(), r.variant.as_deref()))
            .collect();
        assert_eq!(
            variants,
            [("email_1", Some(want)), ("email_2", Some(want))],
            "{contact}"
        );
        *seen.entry(want).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 2, "both variants appear: {seen:?}");
}
