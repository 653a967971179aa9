//! `AccountService` end to end (docs/service.md): settings read and changed through a real server,
//! refusals with field violations and nothing stored, full-account tokens only, and a change
//! that applies to new transitions but not to a wait already fixed (docs/timing.md, "Fixed once").

use crate::common::{spawn_app, with_token, Backend, TestApp};
use nudge::auth::Scope;
use nudge::proto::v1::account_service_client::AccountServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use nudge::service::accounts::ReplyUnsubscribe;
use tonic::transport::Channel;
use tonic::Code;
use tonic_types::StatusExt;

backend_tests!(
    update_then_get_round_trips,
    bad_settings_are_refused_with_fields_and_nothing_stored,
    an_enrollment_token_cannot_read_or_change_the_account,
    max_wait_applies_to_new_waits_not_fixed_ones,
    the_accounts_quiet_hours_time_new_steps,
    reply_unsubscribe_defaults_to_opt_out_and_is_set_by_value_or_mask,
    a_bad_reply_unsubscribe_is_refused_and_nothing_in_the_request_stored,
    a_corrupt_stored_reply_unsubscribe_is_an_internal_error,
);

async fn client(app: &TestApp) -> AccountServiceClient<Channel> {
    AccountServiceClient::new(app.channel().await)
}

fn mask(paths: &[&str]) -> Option<prost_types::FieldMask> {
    Some(prost_types::FieldMask {
        paths: paths.iter().map(|p| p.to_string()).collect(),
    })
}

fn quiet(policy: &str) -> prost_types::Struct {
    let serde_json::Value::Object(m) = serde_json::json!({"policy": policy, "overrides": []})
    else {
        unreachable!()
    };
    nudge::api::grpc::convert::json_to_struct(m)
}

fn allow(host: &str, port: u32, allow_private: bool) -> FetchAllow {
    FetchAllow {
        host: host.into(),
        port,
        allow_private,
    }
}

async fn get(app: &TestApp) -> Account {
    client(app)
        .await
        .get_account(app.authed(GetAccountRequest {}))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap()
}

async fn update_then_get_round_trips(backend: Backend) {
    let app = spawn_app(backend).await;
    let before = get(&app).await;
    assert_eq!(before.id, "default");
    assert!(before.max_wait.is_empty() && before.fetch_allow.is_empty());
    assert_eq!(before.default_sender_id, "default");

    let mut c = client(&app).await;
    upsert_rep(&app).await;
    let updated = c
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                max_wait: "7d".into(),
                fetch_allow: vec![
                    allow("CRM.example.com", 0, false),
                    allow("*.corp.test", 8443, true),
                ],
                quiet_hours: Some(quiet("us_states")),
                default_sender_id: "rep".into(),
                ..Default::default()
            }),
            update_mask: mask(&[
                "max_wait",
                "fetch_allow",
                "quiet_hours",
                "default_sender_id",
            ]),
        }))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    assert_eq!(updated.max_wait, "7d");
    assert_eq!(
        updated.fetch_allow,
        [
            allow("crm.example.com", 0, false),
            allow("*.corp.test", 8443, true)
        ]
    );
    assert_eq!(updated.default_sender_id, "rep");
    assert_eq!(get(&app).await, updated, "GetAccount shows what was stored");

    // A mask naming one field changes only that one; a named empty field is cleared.
    let cleared = c
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account::default()),
            update_mask: mask(&["max_wait"]),
        }))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    assert!(cleared.max_wait.is_empty());
    assert_eq!(cleared.fetch_allow.len(), 2);
    assert_eq!(cleared.default_sender_id, "rep");
    app.stop().await;
}

async fn upsert_rep(app: &TestApp) {
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                tz: "Europe/Prague".into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();
}

async fn bad_settings_are_refused_with_fields_and_nothing_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    let before = get(&app).await;
    let bad_quiet = {
        let serde_json::Value::Object(m) = serde_json::json!({"policy": "eu"}) else {
            unreachable!()
        };
        nudge::api::grpc::convert::json_to_struct(m)
    };
    let status = client(&app)
        .await
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                max_wait: "soon".into(),
                fetch_allow: vec![
                    allow("crm.example.com", 0, false),
                    allow("https://evil.test/x", 70000, false),
                ],
                quiet_hours: Some(bad_quiet),
                default_sender_id: "nobody".into(),
                ..Default::default()
            }),
            update_mask: mask(&[
                "max_wait",
                "fetch_allow",
                "quiet_hours",
                "default_sender_id",
                "name",
            ]),
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let fields: Vec<String> = status
        .get_details_bad_request()
        .expect("a BadRequest")
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(
        fields,
        [
            "update_mask.paths[4]",
            "account.max_wait",
            "account.fetch_allow[1].host",
            "account.fetch_allow[1].port",
            "account.quiet_hours.policy",
            "account.default_sender_id",
        ]
    );
    assert_eq!(get(&app).await, before, "nothing was stored");
    app.stop().await;
}

async fn an_enrollment_token_cannot_read_or_change_the_account(backend: Backend) {
    let app = spawn_app(backend).await;
    let token = app.token(Scope::Enrollment("en_x".into())).await;
    let mut c = client(&app).await;
    let read = c
        .get_account(with_token(GetAccountRequest {}, &token))
        .await
        .unwrap_err();
    assert_eq!(read.code(), Code::PermissionDenied, "{read:?}");
    let write = c
        .update_account(with_token(
            UpdateAccountRequest {
                account: Some(Account {
                    max_wait: "1d".into(),
                    ..Default::default()
                }),
                update_mask: mask(&["max_wait"]),
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_eq!(write.code(), Code::PermissionDenied);
    assert!(get(&app).await.max_wait.is_empty());
    app.stop().await;
}

/// docs/timing.md, "Fixed once" and docs/flows.md, "Plan limits": a `wait_for` without a timeout gets `max_wait` as its timeout when it is
/// entered. Raising the limit later leaves that run's time alone; a new enrollment gets the new
/// limit.
async fn max_wait_applies_to_new_waits_not_fixed_ones(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = r#"{"name": "w", "start": "w",
        "steps": {"w": {"type": "wait_for", "params": {"events": ["reply"]}, "next": {"reply": "e"}},
                  "e": {"type": "end"}}}"#;
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: flow.into(),
        }))
        .await
        .unwrap();
    for id in ["ann", "bob"] {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: id.into(),
                    email: format!("{id}@example.com"),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
    let set = async |limit: &str| {
        client(&app)
            .await
            .update_account(app.authed(UpdateAccountRequest {
                account: Some(Account {
                    max_wait: limit.into(),
                    ..Default::default()
                }),
                update_mask: mask(&["max_wait"]),
            }))
            .await
            .unwrap();
    };
    let mut enrollments = EnrollmentServiceClient::new(app.channel().await);
    let enroll = async |e: &mut EnrollmentServiceClient<Channel>, contact: &str| {
        e.enroll(app.authed(EnrollRequest {
            contact_id: contact.into(),
            flow_id: "w".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
    };
    set("2d").await;
    let ann = enroll(&mut enrollments, "ann").await;
    let start = crate::common::start_instant().timestamp();
    assert_eq!(
        ann.next_run_at.as_ref().unwrap().seconds,
        start + 2 * 86_400
    );
    set("5d").await;
    let bob = enroll(&mut enrollments, "bob").await;
    assert_eq!(
        bob.next_run_at.as_ref().unwrap().seconds,
        start + 5 * 86_400
    );
    let ann_again = enrollments
        .get_enrollment(app.authed(GetEnrollmentRequest { id: ann.id.clone() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(
        ann_again.next_run_at, ann.next_run_at,
        "a fixed wait keeps its time"
    );
    app.stop().await;
}

/// docs/timing.md, "Holiday calendars and quiet hours" through the account: with `quiet_hours` `us_states`, an SMS to a Florida number at
/// 20:30 in New York waits for 08:00 (Florida's 08:00–20:00); under the default (federal) the
/// same SMS at the same instant goes at once (the federal window is open until 21:00).
async fn the_accounts_quiet_hours_time_new_steps(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = r#"{"name": "t", "start": "s",
        "steps": {"s": {"type": "sms", "params": {"template": "hi"}, "next": {"then": "e"}},
                  "e": {"type": "end"}}}"#;
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: flow.into(),
        }))
        .await
        .unwrap();
    for id in ["federal", "florida"] {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: id.into(),
                    phone: "+13055551234".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
    // Friday 2026-12-04 20:30 in America/New_York (Miami's zone).
    app.clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-12-05T01:30:00Z")
            .unwrap()
            .into(),
    );
    let mut enrollments = EnrollmentServiceClient::new(app.channel().await);
    let enroll = async |e: &mut EnrollmentServiceClient<Channel>, contact: &str| {
        e.enroll(app.authed(EnrollRequest {
            contact_id: contact.into(),
            flow_id: "t".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
    };
    let at = |e: &Enrollment| e.next_run_at.as_ref().map(|t| t.seconds);
    let saturday_8am = chrono::DateTime::parse_from_rfc3339("2026-12-05T13:00:00Z")
        .unwrap()
        .timestamp();
    let federal = enroll(&mut enrollments, "federal").await;
    assert_ne!(at(&federal), Some(saturday_8am), "{federal:?}");
    client(&app)
        .await
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                quiet_hours: Some(quiet("us_states")),
                ..Default::default()
            }),
            update_mask: mask(&["quiet_hours"]),
        }))
        .await
        .unwrap();
    let florida = enroll(&mut enrollments, "florida").await;
    assert_eq!(at(&florida), Some(saturday_8am), "{florida:?}");
    app.stop().await;
}

async fn set(app: &TestApp, account: Account, paths: &[&str]) -> Result<Account, tonic::Status> {
    client(app)
        .await
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(account),
            update_mask: if paths.is_empty() { None } else { mask(paths) },
        }))
        .await
        .map(|r| r.into_inner().account.unwrap())
}

/// What the signal path reads: `accounts::reply_unsubscribe`, the row alone.
async fn read_alone(app: &TestApp) -> ReplyUnsubscribe {
    nudge::service::accounts::reply_unsubscribe(&app.state.core, "default")
        .await
        .unwrap()
}

/// `reply_unsubscribe`: unset reads as `opt_out`; `event` is stored and read back (through
/// GetAccount and by the signal path's own read); an empty mask leaves it alone when it is
/// empty; a mask naming it changes only it; a named empty value is the default again.
async fn reply_unsubscribe_defaults_to_opt_out_and_is_set_by_value_or_mask(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(get(&app).await.reply_unsubscribe, "opt_out");
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::OptOut);

    // An empty mask: every field set, here only this one.
    let event = Account {
        reply_unsubscribe: "event".into(),
        ..Default::default()
    };
    assert_eq!(
        set(&app, event, &[]).await.unwrap().reply_unsubscribe,
        "event"
    );
    assert_eq!(get(&app).await.reply_unsubscribe, "event");
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::Event);

    // An empty mask with the field empty does not touch it.
    let wait = Account {
        max_wait: "3d".into(),
        ..Default::default()
    };
    let after = set(&app, wait, &[]).await.unwrap();
    assert_eq!(
        (after.max_wait.as_str(), after.reply_unsubscribe.as_str()),
        ("3d", "event")
    );

    // A mask naming it changes it and nothing else, even a field set beside it.
    let masked = Account {
        reply_unsubscribe: "opt_out".into(),
        max_wait: "9d".into(),
        ..Default::default()
    };
    let after = set(&app, masked, &["reply_unsubscribe"]).await.unwrap();
    assert_eq!(
        (after.max_wait.as_str(), after.reply_unsubscribe.as_str()),
        ("3d", "opt_out")
    );
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::OptOut);

    // Named and empty: back to the default.
    let event = Account {
        reply_unsubscribe: "event".into(),
        ..Default::default()
    };
    set(&app, event, &["reply_unsubscribe"]).await.unwrap();
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::Event);
    let reset = set(&app, Account::default(), &["reply_unsubscribe"])
        .await
        .unwrap();
    assert_eq!(reset.reply_unsubscribe, "opt_out");
    assert_eq!(get(&app).await, reset, "GetAccount shows what was stored");
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::OptOut);
    assert_eq!(reset.max_wait, "3d");
    app.stop().await;
}

/// A value that is neither `opt_out` nor `event` is refused as a field violation that says
/// both, and the fields beside it in the same request are not stored either.
async fn a_bad_reply_unsubscribe_is_refused_and_nothing_in_the_request_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    let start = Account {
        max_wait: "3d".into(),
        reply_unsubscribe: "event".into(),
        ..Default::default()
    };
    set(&app, start, &[]).await.unwrap();
    let before = get(&app).await;
    for paths in [&[][..], &["max_wait", "reply_unsubscribe"][..]] {
        let bad = Account {
            max_wait: "7d".into(),
            reply_unsubscribe: "events".into(),
            ..Default::default()
        };
        let status = set(&app, bad, paths).await.unwrap_err();
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{paths:?}: {status:?}"
        );
        let violations = status
            .get_details_bad_request()
            .expect("a BadRequest")
            .field_violations;
        assert_eq!(violations.len(), 1, "{paths:?}: {violations:?}");
        let v = &violations[0];
        assert_eq!(v.field, "account.reply_unsubscribe");
        assert_eq!(v.reason, "BAD_SCHEMA");
        assert!(
            v.description.starts_with("`events` is not")
                && v.description.contains("`opt_out`")
                && v.description.contains("`event`"),
            "{}",
            v.description
        );
        let after = get(&app).await;
        assert_eq!(after, before, "{paths:?}: nothing was stored");
        assert_eq!(after.max_wait, "3d", "{paths:?}");
    }
    assert_eq!(read_alone(&app).await, ReplyUnsubscribe::Event);
    app.stop().await;
}

/// A stored value nudge did not write (a hand edit, a newer version's value) is a corrupt
/// account, never read as the default: GetAccount answers INTERNAL and the signal path's read
/// fails naming the account and the value.
async fn a_corrupt_stored_reply_unsubscribe_is_an_internal_error(backend: Backend) {
    use diesel_async::RunQueryDsl;
    let app = spawn_app(backend).await;
    let sql = "UPDATE accounts SET reply_unsubscribe = 'maybe' WHERE id = 'default'";
    let written = match &app.state.core.db {
        nudge::store::Db::Postgres(pool) => {
            let mut c = pool.get().await.unwrap();
            diesel::sql_query(sql).execute(&mut *c).await.unwrap()
        }
        nudge::store::Db::Sqlite(pool) => {
            let mut c = pool.get().await.unwrap();
            diesel::sql_query(sql).execute(&mut *c).await.unwrap()
        }
    };
    assert_eq!(written, 1);
    let status = client(&app)
        .await
        .get_account(app.authed(GetAccountRequest {}))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Internal, "{status:?}");
    match nudge::service::accounts::reply_unsubscribe(&app.state.core, "default").await {
        Err(nudge::service::ServiceError::Internal(m)) => {
            assert!(m.contains("default") && m.contains("`maybe`"), "{m}")
        }
        other => panic!("a corrupt value must not read as a default: {other:?}"),
    }
    app.stop().await;
}
