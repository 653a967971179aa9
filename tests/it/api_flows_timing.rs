//! End-to-end tests of flow validation in `FlowService` (CreateFlow, ValidateFlow, the account's
//! `max_wait`) and of `TimingService` (Resolve, Simulate): the real server on port 0, real tonic
//! clients, SQLite always and PostgreSQL with `NUDGE_TEST_DATABASE_URL`.
//!
//! Expected instants are derived by hand in the comments (weekday, zone offset, DST dates), or
//! are the hand-derived simulation answers in `fixtures/scenarios/*.expected.json`.

use crate::common::{self, spawn_app, Backend, TestApp};
use chrono::{DateTime, Utc};
use nudge::api::grpc::convert::timestamp;
use nudge::proto::v1::resolve_request::Question;
use nudge::proto::v1::simulate_request::Flow as FlowChoice;
use nudge::proto::v1::timing_service_client::TimingServiceClient;
use nudge::proto::v1::*;
use nudge::store::accounts::{self, DEFAULT_ACCOUNT_ID};
use serde_json::Value;
use std::collections::BTreeSet;
use tonic::transport::Channel;
use tonic::Code;
use tonic_types::StatusExt;

backend_tests!(
    an_invalid_flow_is_refused_with_every_problem_and_nothing_stored,
    a_flow_with_warnings_is_stored_with_its_problems,
    validate_flow_answers_every_problem_and_stores_nothing,
    the_accounts_max_wait_limits_waits,
    resolve_answers_each_question,
    resolve_refusals_name_the_field,
    resolve_uses_a_stored_contact,
    resolve_times_by_place_and_quiet_hours,
    simulate_a_definition_or_a_stored_flow,
    simulate_refusals_name_the_field,
    simulate_refuses_what_enroll_refuses,
    the_quickstart_flow_enrolls_as_the_readme_says,
);

/// Three errors (a bad duration, a bad zone, a `next` to nowhere) and one warning.
const BROKEN: &str = r#"{"name": "broken", "start": "w", "steps": {
    "w": {"type": "wait", "params": {"duration": "2H"}, "next": {"then": "u"}},
    "u": {"type": "wait", "params": {"until": "mon 09:00", "tz": "CET"}, "next": {"then": "nowhere"}},
    "orphan": {"type": "end"}}}"#;

/// Valid, with one warning: `orphan` is unreachable.
const WITH_ORPHAN: &str = r#"{"name": "orphaned", "start": "done", "steps": {
    "done": {"type": "end"}, "orphan": {"type": "end"}}}"#;

/// A 10-day wait: valid unless the account's `max_wait` is shorter.
const TEN_DAYS: &str = r#"{"name": "ten-days", "start": "w", "steps": {
    "w": {"type": "wait", "params": {"duration": "10d"}, "next": {"then": "done"}},
    "done": {"type": "end"}}}"#;

const NOJITTER: &str = include_str!("../../fixtures/scenarios/outbound-v1-nojitter.flow.json");
const HOLIDAYS_REPLY: &str = include_str!("../../fixtures/scenarios/holidays-reply.json");
const HOLIDAYS_REPLY_EXPECTED: &str =
    include_str!("../../fixtures/scenarios/holidays-reply.expected.json");

fn create(definition: &str) -> CreateFlowRequest {
    CreateFlowRequest {
        definition: definition.into(),
    }
}

async fn flow_names(app: &TestApp) -> Vec<(String, i32)> {
    app.flows()
        .await
        .list_flows(app.authed(ListFlowsRequest { page: None }))
        .await
        .unwrap()
        .into_inner()
        .flows
        .into_iter()
        .map(|f| (f.name, f.version))
        .collect()
}

async fn timing(app: &TestApp) -> TimingServiceClient<Channel> {
    TimingServiceClient::new(app.channel().await)
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

fn ts(text: &str) -> Option<prost_types::Timestamp> {
    Some(timestamp(at(text)))
}

/// (field, code) of every field violation, and the ErrorInfo reason.
fn violations(status: &tonic::Status) -> (Vec<(String, String)>, String) {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let fields = status
        .get_details_bad_request()
        .expect("BadRequest details")
        .field_violations
        .into_iter()
        .map(|v| (v.field, v.reason))
        .collect();
    let reason = status.get_details_error_info().expect("ErrorInfo").reason;
    (fields, reason)
}

async fn an_invalid_flow_is_refused_with_every_problem_and_nothing_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    flows
        .create_flow(app.authed(create(TEN_DAYS)))
        .await
        .unwrap();
    let status = flows
        .create_flow(app.authed(create(BROKEN)))
        .await
        .unwrap_err();
    let (fields, reason) = violations(&status);
    let got: BTreeSet<(String, String)> = fields.iter().cloned().collect();
    let want: BTreeSet<(String, String)> = [
        ("definition/steps/w/params/duration", "BAD_DURATION"),
        ("definition/steps/u/params/tz", "BAD_TZ"),
        ("definition/steps/u/next/then", "UNKNOWN_TARGET"),
    ]
    .iter()
    .map(|(f, c)| (f.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want, "only the errors, each as a field violation");
    assert_eq!(fields.len(), 3);
    assert_eq!(reason, fields[0].1, "ErrorInfo names the first code");
    // The description carries the validator's message: the offending text and a fix.
    let details = status.get_details_bad_request().unwrap().field_violations;
    let tz = details.iter().find(|v| v.field.ends_with("/tz")).unwrap();
    assert!(tz.description.contains("CET"), "{}", tz.description);

    assert_eq!(flow_names(&app).await, [("ten-days".to_string(), 1)]);
    app.stop().await;
}

async fn a_flow_with_warnings_is_stored_with_its_problems(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let created = flows
        .create_flow(app.authed(create(WITH_ORPHAN)))
        .await
        .unwrap()
        .into_inner();
    let flow = created.flow.unwrap();
    assert_eq!((flow.name.as_str(), flow.version), ("orphaned", 1));
    assert_eq!(flow.definition, WITH_ORPHAN, "stored exactly as sent");
    assert_eq!(created.problems.len(), 1);
    let p = &created.problems[0];
    assert_eq!(
        (p.severity.as_str(), p.code.as_str(), p.path.as_str()),
        ("warning", "UNREACHABLE", "/steps/orphan")
    );
    assert!(!p.message.is_empty());
    let got = flows
        .get_flow(app.authed(GetFlowRequest {
            id: flow.id.clone(),
            version: 0,
        }))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!(got, flow);
    app.stop().await;
}

async fn validate_flow_answers_every_problem_and_stores_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let validate = |definition: &str| {
        app.authed(ValidateFlowRequest {
            definition: definition.into(),
        })
    };
    let broken = flows
        .validate_flow(validate(BROKEN))
        .await
        .unwrap()
        .into_inner();
    assert!(!broken.valid);
    let got: BTreeSet<(String, String, String)> = broken
        .problems
        .iter()
        .map(|p| (p.severity.clone(), p.code.clone(), p.path.clone()))
        .collect();
    let want: BTreeSet<(String, String, String)> = [
        ("error", "BAD_DURATION", "/steps/w/params/duration"),
        ("error", "BAD_TZ", "/steps/u/params/tz"),
        ("error", "UNKNOWN_TARGET", "/steps/u/next/then"),
        ("warning", "UNREACHABLE", "/steps/orphan"),
    ]
    .iter()
    .map(|(s, c, p)| (s.to_string(), c.to_string(), p.to_string()))
    .collect();
    assert_eq!(got, want);

    let orphan = flows
        .validate_flow(validate(WITH_ORPHAN))
        .await
        .unwrap()
        .into_inner();
    assert!(orphan.valid, "warnings alone keep it valid");
    assert_eq!(orphan.problems.len(), 1);

    let clean = flows
        .validate_flow(validate(TEN_DAYS))
        .await
        .unwrap()
        .into_inner();
    assert!(clean.valid);
    assert!(clean.problems.is_empty());

    let not_json = flows
        .validate_flow(validate("{\"name\": "))
        .await
        .unwrap()
        .into_inner();
    assert!(!not_json.valid);
    assert_eq!(not_json.problems[0].code, "BAD_SCHEMA");
    assert_eq!(not_json.problems[0].path, "");

    assert!(
        flow_names(&app).await.is_empty(),
        "ValidateFlow stores nothing"
    );
    app.stop().await;
}

async fn the_accounts_max_wait_limits_waits(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    accounts::set_max_wait(&app.state.core.db, DEFAULT_ACCOUNT_ID, Some("7d"))
        .await
        .unwrap();
    let status = flows
        .create_flow(app.authed(create(TEN_DAYS)))
        .await
        .unwrap_err();
    let (fields, reason) = violations(&status);
    assert_eq!(
        fields,
        [(
            "definition/steps/w/params/duration".to_string(),
            "WAIT_EXCEEDS_LIMIT".to_string()
        )]
    );
    assert_eq!(reason, "WAIT_EXCEEDS_LIMIT");
    let checked = flows
        .validate_flow(app.authed(ValidateFlowRequest {
            definition: TEN_DAYS.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!checked.valid);
    assert_eq!(checked.problems[0].code, "WAIT_EXCEEDS_LIMIT");
    assert!(flow_names(&app).await.is_empty());

    // A plan with a longer limit accepts it.
    accounts::set_max_wait(&app.state.core.db, DEFAULT_ACCOUNT_ID, Some("14d"))
        .await
        .unwrap();
    flows
        .create_flow(app.authed(create(TEN_DAYS)))
        .await
        .unwrap();
    assert_eq!(flow_names(&app).await, [("ten-days".to_string(), 1)]);
    app.stop().await;
}

fn resolve(now: &str, question: Question) -> ResolveRequest {
    ResolveRequest {
        now: ts(now),
        question: Some(question),
        ..Default::default()
    }
}

async fn resolve_answers_each_question(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut timing = timing(&app).await;
    let mut ask = async |req: ResolveRequest| {
        timing
            .resolve(app.authed(req))
            .await
            .unwrap_or_else(|s| panic!("{s:?}"))
            .into_inner()
    };
    // Friday 6 March 2026, 11:00 EST in New York. One business day later is Monday 11:00, and
    // by then DST has begun (Sunday 8 March): 11:00 EDT = 15:00Z.
    let friday = "2026-03-06T16:00:00Z";
    let mut req = resolve(friday, Question::Duration("1bd".into()));
    req.tz = "America/New_York".into();
    let got = ask(req).await;
    assert_eq!(got.at, ts("2026-03-09T15:00:00Z"));
    assert!(!got.past && got.zones.is_empty() && got.e164.is_empty());

    // With Monday a holiday, the business day is Tuesday.
    let mut req = resolve(friday, Question::Duration("1bd".into()));
    req.tz = "America/New_York".into();
    req.holidays = vec!["2026-03-09".into()];
    assert_eq!(ask(req).await.at, ts("2026-03-10T15:00:00Z"));

    // 90 000 ms.
    let got = ask(resolve(friday, Question::DurationMs(90_000))).await;
    assert_eq!(got.at, ts("2026-03-06T16:01:30Z"));

    // The next Monday 09:00 in Prague (CET, UTC+1 until 29 March) is 9 March 08:00Z.
    let mut req = resolve(friday, Question::Until("mon 09:00".into()));
    req.tz = "Europe/Prague".into();
    let got = ask(req).await;
    assert_eq!(got.at, ts("2026-03-09T08:00:00Z"));
    assert!(!got.past);

    // An instant before `now` is answered as it is, marked past (docs/timing.md, "A target already in the past").
    let got = ask(resolve(
        friday,
        Question::Until("2026-03-01T00:00:00Z".into()),
    ))
    .await;
    assert_eq!(got.at, ts("2026-03-01T00:00:00Z"));
    assert!(got.past);

    // Monday 2 March 03:00Z. The send window (Mon 09–17 in the sender's zone, Prague, CET) is
    // open from 08:00Z; the SMS window (08–21 in New York, EST) from 13:00Z: both at 13:00Z.
    let monday = "2026-03-02T03:00:00Z";
    let mut req = resolve(
        monday,
        Question::Window(SendWindow {
            days: vec!["mon".into()],
            r#from: "09:00".into(),
            to: "17:00".into(),
            tz: "sender".into(),
        }),
    );
    req.channel = "sms".into();
    req.contact = Some(ResolveContact {
        tz: "America/New_York".into(),
        ..Default::default()
    });
    req.sender_tz = "Europe/Prague".into();
    let got = ask(req).await;
    assert_eq!(got.at, ts("2026-03-02T13:00:00Z"));
    assert_eq!(got.zones, ["Europe/Prague", "America/New_York"]);

    // Email with the same window: 09:00 in Prague = 08:00Z.
    let mut req = resolve(
        monday,
        Question::Window(SendWindow {
            days: vec!["mon".into()],
            r#from: "09:00".into(),
            to: "17:00".into(),
            tz: "sender".into(),
        }),
    );
    req.sender_tz = "Europe/Prague".into();
    let got = ask(req).await;
    assert_eq!(got.at, ts("2026-03-02T08:00:00Z"));
    assert_eq!(got.zones, ["Europe/Prague"]);

    // No send window: only the SMS window of the number's zone (Prague, 08:00 CET = 07:00Z).
    let mut req = resolve(monday, Question::NoWindow(true));
    req.channel = "sms".into();
    req.contact = Some(ResolveContact {
        phone: "+420 601 123 456".into(),
        ..Default::default()
    });
    let got = ask(req).await;
    assert_eq!(got.at, ts("2026-03-02T07:00:00Z"));
    assert_eq!(got.zones, ["Europe/Prague"]);

    let got = ask(resolve(monday, Question::Phone("+420 601 123 456".into()))).await;
    assert_eq!(got.e164, "+420601123456");
    assert_eq!(got.zones, ["Europe/Prague"]);
    assert_eq!(got.at, None);

    // Without `now`, the server's clock (the test's manual clock) is the instant.
    let got = ask(ResolveRequest {
        question: Some(Question::DurationMs(0)),
        ..Default::default()
    })
    .await;
    assert_eq!(got.at, Some(timestamp(common::start_instant())));
    app.stop().await;
}

async fn resolve_refusals_name_the_field(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut timing = timing(&app).await;
    let monday = "2026-03-02T03:00:00Z";

    let status = timing
        .resolve(app.authed(resolve(monday, Question::Duration("2H".into()))))
        .await
        .unwrap_err();
    let (fields, reason) = violations(&status);
    assert_eq!(
        fields,
        [("duration".to_string(), "BAD_DURATION".to_string())]
    );
    assert_eq!(reason, "BAD_DURATION");
    let description = &status.get_details_bad_request().unwrap().field_violations[0].description;
    assert!(
        description.contains("\"2H\" at position 1"),
        "{description}"
    );

    // Every bad field at once: a national number, and fields the phone question does not take.
    let mut req = resolve(monday, Question::Phone("2125551234".into()));
    req.tz = "CET".into();
    req.channel = "sms".into();
    let (fields, reason) = violations(&timing.resolve(app.authed(req)).await.unwrap_err());
    assert_eq!(
        fields,
        [
            ("phone".to_string(), "BAD_PHONE".to_string()),
            ("tz".to_string(), "BAD_SCHEMA".to_string()),
            ("channel".to_string(), "BAD_SCHEMA".to_string()),
        ]
    );
    assert_eq!(reason, "BAD_PHONE");

    let (fields, _) = violations(
        &timing
            .resolve(app.authed(ResolveRequest::default()))
            .await
            .unwrap_err(),
    );
    assert_eq!(fields, [("question".to_string(), "BAD_SCHEMA".to_string())]);

    // An SMS with no recipient zone at all is held: ZONE_UNKNOWN, about the contact.
    let mut req = resolve(monday, Question::NoWindow(true));
    req.channel = "sms".into();
    let (fields, reason) = violations(&timing.resolve(app.authed(req)).await.unwrap_err());
    assert_eq!(
        fields,
        [("contact".to_string(), "ZONE_UNKNOWN".to_string())]
    );
    assert_eq!(reason, "ZONE_UNKNOWN");

    let window = SendWindow {
        days: vec!["mon".into()],
        r#from: "17:00".into(),
        to: "09:00".into(),
        tz: "UTC".into(),
    };
    let (fields, _) = violations(
        &timing
            .resolve(app.authed(resolve(monday, Question::Window(window))))
            .await
            .unwrap_err(),
    );
    assert_eq!(fields, [("window".to_string(), "BAD_WINDOW".to_string())]);
    app.stop().await;
}

/// docs/timing.md, "Holiday calendars and quiet hours" through `Resolve` as through `nudge timing`: `holidays: ["contact"]` with the
/// contact's `country`, the quiet-hours policy named in the request, else the account's, and
/// the place rule that decided. Expected instants worked out by hand and checked with
/// `zoneinfo`: Tuesday 3 March 20:30 EST (01:30Z) is inside the federal 08:00–21:00 window but
/// after Florida's 20:00, so under `us_states` a Miami number waits for 08:00 EST (13:00Z);
/// Germany's 25 and 26 December close a weekday window until Monday 28 December, 09:00 CET.
async fn resolve_times_by_place_and_quiet_hours(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut timing = timing(&app).await;
    let miami = |quiet: &str| {
        let mut req = resolve("2026-03-04T01:30:00Z", Question::NoWindow(true));
        req.channel = "sms".into();
        req.contact = Some(ResolveContact {
            phone: "+1 305 555 0100".into(),
            ..Default::default()
        });
        req.quiet_hours = quiet.into();
        app.authed(req)
    };
    let strict = timing
        .resolve(miami("us_states"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(strict.at, ts("2026-03-04T13:00:00Z"));
    assert_eq!(strict.rule, "US-FL");
    let federal = timing.resolve(miami("federal")).await.unwrap().into_inner();
    assert_eq!(federal.at, ts("2026-03-04T01:30:00Z"));
    assert_eq!(federal.rule, "");
    // No policy named: the account's (none yet: the server's federal default), then the one
    // set with UpdateAccount, as execution uses.
    let default = timing.resolve(miami("")).await.unwrap().into_inner();
    assert_eq!(default.at, federal.at);
    let policy = serde_json::json!({"policy": "us_states", "overrides": []});
    let serde_json::Value::Object(policy) = policy else {
        unreachable!()
    };
    nudge::proto::v1::account_service_client::AccountServiceClient::new(app.channel().await)
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                quiet_hours: Some(nudge::api::grpc::convert::json_to_struct(policy)),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["quiet_hours".into()],
            }),
        }))
        .await
        .unwrap();
    let account = timing.resolve(miami("")).await.unwrap().into_inner();
    assert_eq!((account.at, account.rule), (strict.at, strict.rule));

    // The contact's holidays: its country's calendar; with no country and no phone, none.
    let christmas = |country: &str| {
        let mut req = resolve(
            "2026-12-24T17:00:00Z",
            Question::Window(SendWindow {
                days: ["mon", "tue", "wed", "thu", "fri"]
                    .map(String::from)
                    .to_vec(),
                r#from: "09:00".into(),
                to: "17:00".into(),
                tz: String::new(),
            }),
        );
        req.holidays = vec!["contact".into()];
        req.contact = Some(ResolveContact {
            tz: "Europe/Berlin".into(),
            country: country.into(),
            ..Default::default()
        });
        app.authed(req)
    };
    let german = timing.resolve(christmas("DE")).await.unwrap().into_inner();
    assert_eq!(german.at, ts("2026-12-28T08:00:00Z"));
    let nowhere = timing.resolve(christmas("")).await.unwrap().into_inner();
    assert_eq!(nowhere.at, ts("2026-12-25T08:00:00Z"));

    // A bad policy or country is named.
    let (fields, _) = violations(&timing.resolve(miami("strict")).await.unwrap_err());
    assert_eq!(
        fields,
        [("quiet_hours".to_string(), "BAD_SCHEMA".to_string())]
    );
    let (fields, _) = violations(&timing.resolve(christmas("Germany")).await.unwrap_err());
    assert_eq!(
        fields,
        [("contact.country".to_string(), "BAD_SCHEMA".to_string())]
    );
    app.stop().await;
}

async fn resolve_uses_a_stored_contact(backend: Backend) {
    let app = spawn_app(backend).await;
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "crm-1".into(),
                phone: "+1 212 555 1234".into(),
                tz: "America/Los_Angeles".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let mut timing = timing(&app).await;
    // Monday 2 March 14:00Z is 09:00 EST in New York (the phone's zone: the SMS window is open)
    // but 06:00 PST in Los Angeles (the stored zone, which wins): it opens at 08:00 PST = 16:00Z.
    let sms = |contact: ResolveContact| {
        let mut req = resolve("2026-03-02T14:00:00Z", Question::NoWindow(true));
        req.channel = "sms".into();
        req.contact = Some(contact);
        app.authed(req)
    };
    let got = timing
        .resolve(sms(ResolveContact {
            contact_id: "crm-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.at, ts("2026-03-02T16:00:00Z"));
    assert_eq!(got.zones, ["America/Los_Angeles"]);

    let missing = timing
        .resolve(sms(ResolveContact {
            contact_id: "crm-404".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);

    let both = timing
        .resolve(sms(ResolveContact {
            contact_id: "crm-1".into(),
            tz: "UTC".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    let (fields, _) = violations(&both);
    assert_eq!(
        fields,
        [("contact.contact_id".to_string(), "BAD_SCHEMA".to_string())]
    );
    app.stop().await;
}

async fn simulate_a_definition_or_a_stored_flow(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut timing = timing(&app).await;
    let expected: Value = serde_json::from_str(HOLIDAYS_REPLY_EXPECTED).unwrap();
    let inline = timing
        .simulate(app.authed(SimulateRequest {
            flow: Some(FlowChoice::Definition(NOJITTER.into())),
            scenario: HOLIDAYS_REPLY.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    let timeline: Value = serde_json::from_str(&inline.timeline).unwrap();
    assert_eq!(timeline, expected);
    assert_eq!(inline.state, "completed");
    assert_eq!(inline.outcome, "replied");
    let runs = expected["runs"].as_array().unwrap();
    assert_eq!(inline.runs.len(), runs.len());
    for (got, want) in inline.runs.iter().zip(runs) {
        assert_eq!(got.step, want["step"].as_str().unwrap());
        assert_eq!(got.r#type, want["type"].as_str().unwrap());
        assert_eq!(got.entered, ts(want["entered"].as_str().unwrap()));
        assert_eq!(got.until, want["until"].as_str().and_then(ts));
        assert_eq!(got.closed, want["closed"].as_str().and_then(ts));
        assert_eq!(got.branch, want["branch"].as_str().unwrap_or(""));
        assert_eq!(got.woken_by, want["woken_by"].as_u64().map(|w| w as u32));
    }
    assert!(inline.runs.iter().any(|r| r.woken_by == Some(0)));

    let created = app
        .flows()
        .await
        .create_flow(app.authed(create(NOJITTER)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    let stored = timing
        .simulate(app.authed(SimulateRequest {
            flow: Some(FlowChoice::Stored(StoredFlowRef {
                id: created.name.clone(),
                version: 1,
            })),
            scenario: HOLIDAYS_REPLY.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stored, inline);
    assert_eq!(flow_names(&app).await.len(), 1, "Simulate stores nothing");
    app.stop().await;
}

async fn simulate_refusals_name_the_field(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut timing = timing(&app).await;
    let run = |flow: Option<FlowChoice>, scenario: &str| {
        app.authed(SimulateRequest {
            flow,
            scenario: scenario.into(),
        })
    };
    let (fields, _) = violations(
        &timing
            .simulate(run(
                Some(FlowChoice::Definition(BROKEN.into())),
                HOLIDAYS_REPLY,
            ))
            .await
            .unwrap_err(),
    );
    assert_eq!(fields.len(), 3);
    assert!(fields
        .iter()
        .all(|(f, _)| f.starts_with("definition/steps/")));

    let (fields, _) = violations(
        &timing
            .simulate(run(None, HOLIDAYS_REPLY))
            .await
            .unwrap_err(),
    );
    assert_eq!(fields, [("flow".to_string(), "BAD_SCHEMA".to_string())]);

    let status = timing
        .simulate(run(
            Some(FlowChoice::Definition(NOJITTER.into())),
            r#"{"start": "2026-12-22T14:30:00Z", "horizon": "soon"}"#,
        ))
        .await
        .unwrap_err();
    let (fields, _) = violations(&status);
    assert_eq!(fields, [("scenario".to_string(), "BAD_SCHEMA".to_string())]);
    let description = &status.get_details_bad_request().unwrap().field_violations[0].description;
    assert!(
        description.contains("`horizon`") && description.contains("soon"),
        "{description}"
    );

    let status = timing
        .simulate(run(
            Some(FlowChoice::Definition(NOJITTER.into())),
            r#"{"start": "2026-12-22T14:30:00Z", "horizon": "2027-01-01T00:00:00Z", "sender_tz": "CET",
                 "input": {"demo_at": "2026-12-10T15:00:00Z", "nudge_ms": 60000}}"#,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        violations(&status).0,
        [("scenario.sender_tz".to_string(), "BAD_TZ".to_string())]
    );

    let status = timing
        .simulate(run(
            Some(FlowChoice::Stored(StoredFlowRef {
                id: "missing".into(),
                version: 0,
            })),
            HOLIDAYS_REPLY,
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    app.stop().await;
}

/// A flow whose input schema declares a timestamp: `Enroll`, `TimingService.Simulate` and
/// `nudge simulate` refuse the same inputs the same way (Simulate used to run a scenario
/// without the declared field, or with a bad timestamp in it).
const WITH_INPUT: &str = r#"{"name": "with-input", "start": "w",
  "input": {"demo_at": "timestamp"},
  "steps": {"w": {"type": "wait", "params": {"until": "$: input.demo_at"}, "next": {"then": "done"}},
            "done": {"type": "end"}}}"#;

async fn simulate_refuses_what_enroll_refuses(backend: Backend) {
    let app = spawn_app(backend).await;
    app.flows()
        .await
        .create_flow(app.authed(create(WITH_INPUT)))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "ann".into(),
                email: "ann@example.com".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let mut enrollments = nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient::new(
        app.channel().await,
    );
    let mut timing = timing(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let flow_file = dir.path().join("flow.json");
    std::fs::write(&flow_file, WITH_INPUT).unwrap();

    for (input, want) in [
        ("{}", "missing"),
        (r#"{"demo_at": "tomorrow"}"#, "tomorrow"),
        (r#"{"demo_at": 5}"#, "timestamp"),
    ] {
        let enroll = enrollments
            .enroll(app.authed(EnrollRequest {
                contact_id: "ann".into(),
                flow_id: "with-input".into(),
                input: input.into(),
                ..Default::default()
            }))
            .await
            .unwrap_err();
        let scenario = format!(
            r#"{{"start": "2026-12-04T20:00:00Z", "horizon": "2027-01-04T00:00:00Z", "input": {input}}}"#
        );
        let simulate = timing
            .simulate(app.authed(SimulateRequest {
                flow: Some(FlowChoice::Definition(WITH_INPUT.into())),
                scenario: scenario.clone(),
            }))
            .await
            .unwrap_err();
        assert_eq!(
            violations(&enroll).0,
            [("input.demo_at".to_string(), "BAD_SCHEMA".to_string())],
            "Enroll {input}"
        );
        assert_eq!(
            violations(&simulate).0,
            [(
                "scenario.input.demo_at".to_string(),
                "BAD_SCHEMA".to_string()
            )],
            "Simulate {input}"
        );
        let message = |s: &tonic::Status| {
            s.get_details_bad_request().unwrap().field_violations[0]
                .description
                .clone()
        };
        assert!(message(&enroll).contains(want), "{}", message(&enroll));
        // The same words, so a user reads one explanation whichever call they made.
        assert_eq!(message(&enroll), message(&simulate));

        let scenario_file = dir.path().join("scenario.json");
        std::fs::write(&scenario_file, &scenario).unwrap();
        let cli = std::process::Command::new(common::process::NUDGE)
            .arg("simulate")
            .arg(&flow_file)
            .arg(&scenario_file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&cli.stderr);
        assert!(!cli.status.success(), "nudge simulate {input}: {cli:?}");
        assert!(
            stderr.contains("scenario.input.demo_at: BAD_SCHEMA:") && stderr.contains(want),
            "nudge simulate {input}: {stderr}"
        );
    }

    // The contact of a scenario is checked like UpsertContact checks one.
    let status = timing
        .simulate(
            app.authed(SimulateRequest {
                flow: Some(FlowChoice::Definition(WITH_INPUT.into())),
                scenario: r#"{"start": "2026-12-04T20:00:00Z", "horizon": "2027-01-04T00:00:00Z",
                "input": {"demo_at": "2026-12-10T15:00:00Z"},
                "contact": {"email": "not an address", "phone": "+1 555 555 5555"}}"#
                    .into(),
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(
        violations(&status).0,
        [
            (
                "scenario.contact.email".to_string(),
                "BAD_SCHEMA".to_string()
            ),
            (
                "scenario.contact.phone".to_string(),
                "BAD_PHONE".to_string()
            )
        ]
    );
    app.stop().await;
}

/// The README's quickstart flow validates without a warning and enrolls the README's contact
/// with no input (it used to require inputs no step used, and to wire a `meeting_booked`
/// branch that `exit_on` always took first).
async fn the_quickstart_flow_enrolls_as_the_readme_says(backend: Backend) {
    let quickstart = include_str!("../../fixtures/quickstart/outbound.json");
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let validated = flows
        .validate_flow(app.authed(ValidateFlowRequest {
            definition: quickstart.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(
        validated.valid && validated.problems.is_empty(),
        "{validated:?}"
    );
    let flow = flows
        .create_flow(app.authed(create(quickstart)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "crm-4711".into(),
                email: "ann@example.com".into(),
                phone: "+1 212 555 1234".into(),
                tz: "America/New_York".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let enrolled = nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient::new(
        app.channel().await,
    )
    .enroll(app.authed(EnrollRequest {
        contact_id: "crm-4711".into(),
        flow_id: flow.name.clone(),
        ..Default::default()
    }))
    .await
    .unwrap()
    .into_inner()
    .enrollment
    .unwrap();
    assert_eq!(enrolled.status, "active");
    app.stop().await;
}
