//! Tenant isolation, end to end through a real server.
//!
//! A CRM serving a thousand customers from one nudge gives each customer an account, and each
//! customer must be alone in it: one customer can never see, change or count another's
//! prospects. These tests make two accounts whose data looks alike — the same contact ids, the
//! same emails and phone numbers, the same sender ids, the same flow names, the same
//! enrollments — and then, from one account, try everything nudge offers on the other's:
//!
//! - every RPC of every `nudge.v1` service (the set is checked against what server reflection
//!   lists, so a new RPC fails here until it is covered): another account's id (enrollment,
//!   dispatch, task, flow, contact, sender, cursor) answers exactly as an id that exists
//!   nowhere (same code, same message, same details, the id aside); lists hold only the
//!   caller's own; writes leave the other account exactly as it was, read through its own
//!   token before and after; a signal about `ann@example.com` reaches only the caller's ann;
//! - every webhook path, for `?account=B` signed with A's secret (or A's provider secret):
//!   refused (401) with nothing changed in either account, and the request signed with B's
//!   own secret reaches B alone; `/events/{key}` with B's token reaches only B;
//! - Watch: B's stream carries B's entries only, and A's cursor is refused exactly as any
//!   other account's cursor is;
//! - the console signed in as B: A's enrollment and flow pages answer as unknown ids do, the
//!   lists show B's only;
//! - `/metrics`: summed over accounts, no label or text names an account, contact,
//!   enrollment, email or phone, and an account's token cannot read it;
//! - approval and unsubscribe links: A's link opens A's subject alone, and a link whose
//!   account was changed inside is refused as a forged one is (the MAC covers the account).

use crate::common::reflection;
use crate::common::{http, spawn_app_with, with_token, Backend, TestApp};
use crate::signals::support::{signed, AppExt};
use nudge::auth::Scope;
use nudge::clock::{to_millis, Clock, ManualClock};
use nudge::proto::v1::account_service_client::AccountServiceClient;
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::flow_service_client::FlowServiceClient;
use nudge::proto::v1::sender_service_client::SenderServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::timing_service_client::TimingServiceClient;
use nudge::proto::v1::*;
use nudge::runtime::sns::PinnedSns;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration as StdDuration;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

backend_tests!(
    every_rpc_answers_another_accounts_ids_as_unknown_ones,
    webhooks_reach_only_the_account_they_are_signed_for,
    watch_console_metrics_and_links_stay_inside_their_account,
);

/// The second account (the first is `default`).
const B: &str = "acme-42";
const ANN_EMAIL: &str = "ann@example.com";
const ANN_PHONE: &str = "+13035550100";
const ALICE_EMAIL: &str = "alice@example.com";
const ALICE_PHONE: &str = "+14155550100";
const METRICS_TOKEN: &str = "ops-metrics-token-0123456789";
const PUBLIC_URL: &str = "https://nudge.example.com";
/// The instant the provider fixtures were signed at: the server's signature clock.
const SIGNED_AT: i64 = 1768478400;

/// An email, then a wait for a reply.
const OUTREACH: &str = r#"{
  "name": "outreach",
  "start": "e1",
  "steps": {
    "e1": { "type": "email", "params": { "template": "intro" }, "next": { "then": "w" } },
    "w":  { "type": "wait_for", "params": { "events": ["reply", "payment.received"], "timeout": "5d" },
            "next": { "reply": "end_replied", "payment.received": "end_paid", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_paid":    { "type": "end", "params": { "outcome": "paid" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// A call task (what Twilio Voice callbacks complete).
const CALLS: &str = r#"{
  "name": "calls",
  "start": "c1",
  "steps": {
    "c1": { "type": "call",
            "params": { "instructions": "call", "outcomes": ["connected", "short_call", "voicemail", "no_answer", "busy", "failed"] },
            "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// A person's approval (a signed link).
const APPROVE: &str = r#"{
  "name": "approve",
  "start": "ask",
  "steps": {
    "ask": { "type": "approval", "params": { "title": "Send it?", "timeout": "3d", "link_ttl": "2d" },
             "next": { "approved": "yes", "rejected": "no", "timeout": "no" } },
    "yes": { "type": "end", "params": { "outcome": "approved" } },
    "no":  { "type": "end", "params": { "outcome": "rejected" } }
  }
}"#;

/// A flow only account A has (its name is probed from B).
const A_ONLY: &str = r#"{"name": "a-only-4711", "start": "w", "steps": {
  "w": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "done"}},
  "done": {"type": "end"}}}"#;

/// One account's view: its token and the ids nudge generated for its look-alike data.
struct Side {
    account: String,
    token: String,
    outreach_flow: String,
    /// ann in `outreach`, ann in `approve`, alice in `outreach`, alice in `calls`.
    ann_outreach: String,
    ann_approve: String,
    alice_outreach: String,
    alice_calls: String,
    task: String,
}

impl Side {
    fn enrollments(&self) -> BTreeSet<String> {
        [
            &self.ann_outreach,
            &self.ann_approve,
            &self.alice_outreach,
            &self.alice_calls,
        ]
        .into_iter()
        .cloned()
        .collect()
    }

    fn req<T>(&self, message: T) -> tonic::Request<T> {
        with_token(message, &self.token)
    }
}

struct World {
    app: TestApp,
    ch: Channel,
    a: Side,
    b: Side,
    /// A's flow `a-only`.
    a_only_flow: String,
}

fn enrollments_client(ch: &Channel) -> EnrollmentServiceClient<Channel> {
    EnrollmentServiceClient::new(ch.clone())
}
fn signals_client(ch: &Channel) -> SignalServiceClient<Channel> {
    SignalServiceClient::new(ch.clone())
}
fn dispatches_client(ch: &Channel) -> DispatchServiceClient<Channel> {
    DispatchServiceClient::new(ch.clone())
}

/// A server with the default account A and account B, both holding the same look-alike data.
async fn world(backend: Backend) -> World {
    let sig = Arc::new(ManualClock::new(
        chrono::DateTime::from_timestamp(SIGNED_AT, 0).unwrap(),
    ));
    let mut sns = PinnedSns::default();
    sns.certs.insert(
        "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-nudgetest.pem".into(),
        std::fs::read("fixtures/providers/ses/nudge-test-cert.pem").unwrap(),
    );
    let s = sig.clone();
    let app = spawn_app_with(backend, move |c| {
        c.public_url = Some(PUBLIC_URL.into());
        c.signature_clock = Some(s);
        c.sns = Some(Arc::new(sns));
        c.metrics_token = Some(METRICS_TOKEN.into());
    })
    .await;
    let db = &app.state.core.db;
    let now = to_millis(app.clock.now());
    assert!(
        nudge::store::accounts::create_with_sender(db, B, "Acme Corp", now)
            .await
            .unwrap()
    );
    let b_token = nudge::auth::create_token(db, B, &Scope::Full, now)
        .await
        .unwrap();
    let ch = app.channel().await;
    // A-only things, made first so their generated ids come before the look-alike ones.
    let a_token = app.token.clone();
    let a_only_flow = create_flow(&ch, &a_token, A_ONLY).await.0;
    upsert_contact(&ch, &a_token, "zed-4711", "zed@example.com", "+13035550199").await;
    upsert_contact(&ch, &a_token, "zoe-4711", "zoe@example.com", "+13035550198").await;
    SenderServiceClient::new(ch.clone())
        .upsert_sender(with_token(
            UpsertSenderRequest {
                sender: Some(Sender {
                    id: "only-a-4711".into(),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
                make_default: false,
            },
            &a_token,
        ))
        .await
        .unwrap();
    let mut a = side(&app, &ch, "default", a_token).await;
    let mut b = side(&app, &ch, B, b_token).await;
    app.advance(chrono::Duration::zero()).await;
    for s in [&mut a, &mut b] {
        let tasks = signals_client(&ch)
            .list_tasks(s.req(ListTasksRequest::default()))
            .await
            .unwrap()
            .into_inner()
            .tasks;
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        assert_eq!(tasks[0].enrollment_id, s.alice_calls);
        s.task = tasks[0].id.clone();
    }
    World {
        app,
        ch,
        a,
        b,
        a_only_flow,
    }
}

async fn create_flow(ch: &Channel, token: &str, definition: &str) -> (String, i32) {
    let flow = FlowServiceClient::new(ch.clone())
        .create_flow(with_token(
            CreateFlowRequest {
                definition: definition.into(),
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    (flow.id, flow.version)
}

async fn upsert_contact(ch: &Channel, token: &str, id: &str, email: &str, phone: &str) {
    ContactServiceClient::new(ch.clone())
        .upsert_contact(with_token(
            UpsertContactRequest {
                contact: Some(Contact {
                    id: id.into(),
                    email: email.into(),
                    phone: phone.into(),
                    tz: "America/Denver".into(),
                    ..Default::default()
                }),
            },
            token,
        ))
        .await
        .unwrap();
}

async fn enroll(ch: &Channel, token: &str, contact: &str, flow: &str, key: &str) -> String {
    enrollments_client(ch)
        .enroll(with_token(
            EnrollRequest {
                contact_id: contact.into(),
                flow_id: flow.into(),
                client_key: key.into(),
                ..Default::default()
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .id
}

/// One account's look-alike data: the sender `rep`, contacts ann and alice, the flows
/// `outreach`, `calls` and `approve` (each version 1 in its account), four enrollments.
async fn side(app: &TestApp, ch: &Channel, account: &str, token: String) -> Side {
    let _ = app;
    SenderServiceClient::new(ch.clone())
        .upsert_sender(with_token(
            UpsertSenderRequest {
                sender: Some(Sender {
                    id: "rep".into(),
                    email: "rep@acme.example".into(),
                    calendar: "rep@acme.example".into(),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
                make_default: true,
            },
            &token,
        ))
        .await
        .unwrap();
    upsert_contact(ch, &token, "ann", ANN_EMAIL, ANN_PHONE).await;
    upsert_contact(ch, &token, "alice", ALICE_EMAIL, ALICE_PHONE).await;
    let mut flows = Vec::new();
    for def in [OUTREACH, CALLS, APPROVE] {
        let (id, version) = create_flow(ch, &token, def).await;
        assert_eq!(
            version, 1,
            "{account}: a flow name is versioned per account"
        );
        flows.push(id);
    }
    Side {
        account: account.into(),
        ann_outreach: enroll(ch, &token, "ann", "outreach", "ck-ann").await,
        ann_approve: enroll(ch, &token, "ann", "approve", "").await,
        alice_outreach: enroll(ch, &token, "alice", "outreach", "").await,
        alice_calls: enroll(ch, &token, "alice", "calls", "").await,
        outreach_flow: flows[0].clone(),
        task: String::new(),
        token,
    }
}

/// An id of the same shape as `id` that exists nowhere: each character after the prefix
/// moved on by one within its class (hex digits stay hex).
fn unknown_like(id: &str) -> String {
    let (prefix, rest) = match id.split_once('_') {
        Some((p, r)) => (format!("{p}_"), r),
        None => (String::new(), id),
    };
    let moved: String = rest
        .chars()
        .map(|c| match c {
            '9' => 'a',
            'f' => '0',
            '0'..='8' | 'a'..='e' => (c as u8 + 1) as char,
            'z' => 'g',
            'g'..='y' => (c as u8 + 1) as char,
            'Z' => 'A',
            'A'..='Y' => (c as u8 + 1) as char,
            other => other,
        })
        .collect();
    let out = format!("{prefix}{moved}");
    assert_ne!(out, id);
    out
}

/// An answer with `id` replaced by `<ID>`: what must be the same for another account's id
/// and an unknown one. Errors: code, message and every decoded detail.
fn norm<T: Debug>(answer: &Result<tonic::Response<T>, Status>, ids: &[&str]) -> String {
    let text = match answer {
        Ok(r) => format!("OK {:?}", r.get_ref()),
        Err(s) => format!("{:?} {} {:?}", s.code(), s.message(), s.get_error_details()),
    };
    ids.iter()
        .filter(|id| !id.is_empty())
        .fold(text, |t, id| t.replace(id, "<ID>"))
}

/// Every RPC covered, by full name (`nudge.v1.Service/Method`).
#[derive(Default)]
struct Covered(BTreeSet<String>);

impl Covered {
    fn add(&mut self, name: &str) {
        self.0.insert(format!("nudge.v1.{name}"));
    }
}

/// Calls `$call` (an expression of `$id`) with another account's id and with an unknown id of
/// the same shape, and checks the two answers are the same.
macro_rules! same_as_unknown {
    ($covered:expr, $rpc:literal, $foreign:expr, |$id:ident| $call:expr) => {{
        $covered.add($rpc);
        let foreign: String = $foreign.to_string();
        let unknown = unknown_like(&foreign);
        let f = {
            let $id: String = foreign.clone();
            $call.await
        };
        let u = {
            let $id: String = unknown.clone();
            $call.await
        };
        let (f, u) = (norm(&f, &[&foreign]), norm(&u, &[&unknown]));
        assert_eq!(
            f, u,
            "{}: another account's id must answer exactly as an unknown id",
            $rpc
        );
        f
    }};
}

/// Everything of one account, read through its own token: what another account's calls must
/// leave as it was.
async fn snapshot(w: &World, s: &Side) -> String {
    let ch = &w.ch;
    let mut out = Vec::new();
    let account = AccountServiceClient::new(ch.clone())
        .get_account(s.req(GetAccountRequest {}))
        .await
        .unwrap()
        .into_inner();
    out.push(format!("{account:?}"));
    let secret = nudge::store::accounts::find(&w.app.state.core.db, &s.account)
        .await
        .unwrap()
        .unwrap();
    out.push(format!("{secret:?}"));
    let flows = FlowServiceClient::new(ch.clone())
        .list_flows(s.req(ListFlowsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    out.push(format!("{flows:?}"));
    let list = enrollments_client(ch)
        .list_enrollments(s.req(ListEnrollmentsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .enrollments;
    for e in &list {
        let journey = enrollments_client(ch)
            .get_journey(s.req(GetJourneyRequest {
                enrollment_id: e.id.clone(),
                page: Some(PageRequest {
                    page_size: 500,
                    page_token: String::new(),
                }),
            }))
            .await
            .unwrap()
            .into_inner()
            .entries;
        out.push(format!("{e:?} {journey:?}"));
    }
    for id in ["ann", "alice", "zed-4711", "zoe-4711"] {
        let c = ContactServiceClient::new(ch.clone())
            .get_contact(s.req(GetContactRequest { id: id.into() }))
            .await;
        out.push(norm(&c, &[]));
    }
    for id in ["default", "rep", "only-a-4711"] {
        let c = SenderServiceClient::new(ch.clone())
            .get_sender(s.req(GetSenderRequest { id: id.into() }))
            .await;
        out.push(norm(&c, &[]));
    }
    let d = dispatches_client(ch)
        .list_dispatches(s.req(ListDispatchesRequest::default()))
        .await
        .unwrap()
        .into_inner();
    out.push(format!("{d:?}"));
    let t = signals_client(ch)
        .list_tasks(s.req(ListTasksRequest {
            status: "all".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    out.push(format!("{t:?}"));
    out.join("\n")
}

/// The ids of enrollments an answer names (`en_…`).
fn enrollment_ids_in(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"en_[A-Za-z0-9]+").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_string()).collect()
}

/// The RPCs server reflection lists under `nudge.v1`, by full name.
async fn reflected_rpcs(app: &TestApp) -> BTreeSet<String> {
    let addr = app.addr.to_string();
    let services: Vec<String> = reflection::list(&addr)
        .await
        .into_iter()
        .filter(|s| s.starts_with("nudge.v1."))
        .collect();
    assert!(!services.is_empty());
    let names: Vec<&str> = services.iter().map(String::as_str).collect();
    let pool = reflection::pool(&addr, &names).await;
    let mut out = BTreeSet::new();
    for s in &services {
        let service = pool
            .get_service_by_name(s)
            .unwrap_or_else(|| panic!("{s} in the pool"));
        for m in service.methods() {
            out.insert(format!("{s}/{}", m.name()));
        }
    }
    out
}

async fn every_rpc_answers_another_accounts_ids_as_unknown_ones(backend: Backend) {
    let w = world(backend).await;
    let (a, b, ch) = (&w.a, &w.b, &w.ch);
    let mut cov = Covered::default();
    let accounts = AccountServiceClient::new(ch.clone());
    let contacts = ContactServiceClient::new(ch.clone());
    let senders = SenderServiceClient::new(ch.clone());
    let flows = FlowServiceClient::new(ch.clone());
    let enrollments = enrollments_client(ch);
    let signals = signals_client(ch);
    let dispatches = dispatches_client(ch);
    let timing = TimingServiceClient::new(ch.clone());
    let clock = TestClockServiceClient::new(ch.clone());

    // Claiming takes each account's own due dispatches only.
    cov.add("DispatchService/ClaimDispatches");
    let claim = |s: &Side| {
        let mut d = dispatches.clone();
        let r = s.req(ClaimDispatchesRequest {
            lease_ms: 600_000,
            max_count: 100,
            ..Default::default()
        });
        async move { d.claim_dispatches(r).await.unwrap().into_inner().dispatches }
    };
    let b_claimed = claim(b).await;
    let b_ids: BTreeSet<String> = b_claimed.iter().map(|d| d.enrollment_id.clone()).collect();
    assert_eq!(
        b_ids,
        [&b.ann_outreach, &b.ann_approve, &b.alice_outreach]
            .into_iter()
            .cloned()
            .collect(),
        "B claims its own email and approval dispatches, none of A's"
    );
    let a_claimed = claim(a).await;
    assert_eq!(a_claimed.len(), 3, "B's claim left A's dispatches alone");
    let a_email = a_claimed
        .iter()
        .find(|d| d.enrollment_id == a.ann_outreach)
        .unwrap()
        .clone();
    let b_email = b_claimed
        .iter()
        .find(|d| d.enrollment_id == b.ann_outreach)
        .unwrap()
        .clone();
    assert_eq!(
        (a_email.recipient.as_str(), b_email.recipient.as_str()),
        (ANN_EMAIL, ANN_EMAIL)
    );

    let a_before = snapshot(&w, a).await;

    // AccountService.
    cov.add("AccountService/GetAccount");
    let mine = accounts
        .clone()
        .get_account(b.req(GetAccountRequest {}))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    assert_eq!(mine.id, B);
    cov.add("AccountService/UpdateAccount");
    accounts
        .clone()
        .update_account(b.req(UpdateAccountRequest {
            account: Some(Account {
                max_wait: "7d".into(),
                reply_unsubscribe: "event".into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["max_wait".into(), "reply_unsubscribe".into()],
            }),
        }))
        .await
        .unwrap();
    cov.add("AccountService/SetProviderSecret");
    accounts
        .clone()
        .set_provider_secret(b.req(SetProviderSecretRequest {
            provider: "calcom".into(),
            secret: "b-calcom-secret".into(),
        }))
        .await
        .unwrap();
    same_as_unknown!(cov, "AccountService/CreateAccount", "default", |id| {
        accounts.clone().create_account(b.req(CreateAccountRequest {
            id: id.clone(),
            name: String::new(),
        }))
    });
    cov.add("AccountService/ListAccounts");
    let listed = accounts
        .clone()
        .list_accounts(b.req(ListAccountsRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(listed.code(), Code::PermissionDenied, "{listed:?}");

    // ContactService: ann is in both; zed is A's only.
    let answer = same_as_unknown!(cov, "ContactService/GetContact", "zed-4711", |id| contacts
        .clone()
        .get_contact(b.req(GetContactRequest { id: id.clone() })));
    assert!(answer.starts_with("NotFound"), "{answer}");
    same_as_unknown!(cov, "ContactService/OptOut", "zed-4711", |id| contacts
        .clone()
        .opt_out(b.req(OptOutRequest {
            contact_id: id.clone(),
            channels: vec!["email".into()],
        })));
    same_as_unknown!(cov, "ContactService/LiftOptOut", "zed-4711", |id| contacts
        .clone()
        .lift_opt_out(b.req(LiftOptOutRequest {
            contact_id: id.clone(),
            channels: vec!["email".into()],
        })));
    // UpsertContact of A's id creates B's own; of ann changes B's ann.
    let upsert = |id: &str, email: &str| {
        let mut c = contacts.clone();
        let r = b.req(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: email.into(),
                phone: ANN_PHONE.into(),
                ..Default::default()
            }),
        });
        async move { c.upsert_contact(r).await }
    };
    cov.add("ContactService/UpsertContact");
    let zoe = upsert("zoe-4711", "zoe@b.example")
        .await
        .unwrap()
        .into_inner();
    assert!(
        zoe.created,
        "A's zoe is not B's: B's upsert creates its own"
    );
    let ann = upsert("ann", "ann@b.example").await.unwrap().into_inner();
    assert!(!ann.created);
    assert_eq!(ann.contact.unwrap().email, "ann@b.example");

    // SenderService: `rep` is in both, `only-a` is A's only.
    same_as_unknown!(cov, "SenderService/GetSender", "only-a-4711", |id| senders
        .clone()
        .get_sender(b.req(GetSenderRequest { id: id.clone() })));
    cov.add("SenderService/UpsertSender");
    senders
        .clone()
        .upsert_sender(b.req(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                email: "rep@b.example".into(),
                tz: "Europe/Prague".into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();

    // FlowService.
    same_as_unknown!(cov, "FlowService/GetFlow", a.outreach_flow, |id| flows
        .clone()
        .get_flow(b.req(GetFlowRequest {
            id: id.clone(),
            version: 0,
        })));
    same_as_unknown!(cov, "FlowService/GetFlow", "a-only-4711", |id| flows
        .clone()
        .get_flow(b.req(GetFlowRequest {
            id: id.clone(),
            version: 0,
        })));
    same_as_unknown!(cov, "FlowService/GetFlowStats", a.outreach_flow, |id| flows
        .clone()
        .get_flow_stats(b.req(GetFlowStatsRequest {
            flow_id: id.clone(),
            ..Default::default()
        })));
    same_as_unknown!(cov, "FlowService/GetFlowStats", "a-only-4711", |id| flows
        .clone()
        .get_flow_stats(b.req(GetFlowStatsRequest {
            flow_id: id.clone(),
            ..Default::default()
        })));
    same_as_unknown!(cov, "FlowService/SetVariantState", a.outreach_flow, |id| {
        flows
            .clone()
            .set_variant_state(b.req(SetVariantStateRequest {
                flow_id: id.clone(),
                step: "email_1".into(),
                variant: "a".into(),
                state: VariantState::Stopped as i32,
                ..Default::default()
            }))
    });
    same_as_unknown!(
        cov,
        "FlowService/MigrateEnrollments",
        a.outreach_flow,
        |id| {
            flows
                .clone()
                .migrate_enrollments(b.req(MigrateEnrollmentsRequest {
                    flow_id: id.clone(),
                    to_version: 1,
                    dry_run: true,
                    ..Default::default()
                }))
        }
    );
    same_as_unknown!(cov, "FlowService/MigrateEnrollments", "a-only-4711", |id| {
        flows
            .clone()
            .migrate_enrollments(b.req(MigrateEnrollmentsRequest {
                flow_id: id.clone(),
                to_version: 1,
                ..Default::default()
            }))
    });
    cov.add("FlowService/ListFlows");
    let b_flows: BTreeSet<String> = flows
        .clone()
        .list_flows(b.req(ListFlowsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .flows
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(
        b_flows,
        ["approve", "calls", "outreach"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    cov.add("FlowService/CreateFlow");
    let (again, version) = create_flow(ch, &b.token, OUTREACH).await;
    assert_eq!(version, 2, "B's second `outreach` is B's version 2");
    assert_ne!(again, a.outreach_flow);
    cov.add("FlowService/ValidateFlow");
    let validate = |s: &Side| {
        let mut f = flows.clone();
        let r = s.req(ValidateFlowRequest {
            definition: OUTREACH.into(),
        });
        async move { f.validate_flow(r).await }
    };
    assert_eq!(norm(&validate(b).await, &[]), norm(&validate(a).await, &[]));

    // EnrollmentService.
    same_as_unknown!(cov, "EnrollmentService/Enroll", a.outreach_flow, |id| {
        enrollments.clone().enroll(b.req(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: id.clone(),
            allow_duplicate: true,
            ..Default::default()
        }))
    });
    same_as_unknown!(cov, "EnrollmentService/Enroll", "a-only-4711", |id| {
        enrollments.clone().enroll(b.req(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: id.clone(),
            ..Default::default()
        }))
    });
    same_as_unknown!(cov, "EnrollmentService/Enroll", "only-a-4711", |id| {
        enrollments.clone().enroll(b.req(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: "outreach".into(),
            sender_id: id.clone(),
            allow_duplicate: true,
            ..Default::default()
        }))
    });
    // A's client key is not B's: B's enrollment with the same key is its own (and was made).
    let keyed = enrollments
        .clone()
        .enroll(b.req(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: "outreach".into(),
            client_key: "ck-ann".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(keyed.enrollment.unwrap().id, b.ann_outreach);
    same_as_unknown!(
        cov,
        "EnrollmentService/BatchEnroll",
        a.outreach_flow,
        |id| {
            enrollments.clone().batch_enroll(b.req(BatchEnrollRequest {
                items: vec![EnrollRequest {
                    contact_id: "ann".into(),
                    flow_id: id.clone(),
                    allow_duplicate: true,
                    ..Default::default()
                }],
            }))
        }
    );
    same_as_unknown!(cov, "EnrollmentService/Pause", a.ann_outreach, |id| {
        enrollments
            .clone()
            .pause(b.req(PauseRequest { id: id.clone() }))
    });
    same_as_unknown!(cov, "EnrollmentService/Resume", a.ann_outreach, |id| {
        enrollments
            .clone()
            .resume(b.req(ResumeRequest { id: id.clone() }))
    });
    same_as_unknown!(cov, "EnrollmentService/Exit", a.ann_outreach, |id| {
        enrollments.clone().exit(b.req(ExitRequest {
            id: id.clone(),
            reason: "gone".into(),
        }))
    });
    same_as_unknown!(cov, "EnrollmentService/MoveTo", a.ann_outreach, |id| {
        enrollments.clone().move_to(b.req(MoveToRequest {
            id: id.clone(),
            step: "end_silent".into(),
        }))
    });
    let answer = same_as_unknown!(
        cov,
        "EnrollmentService/GetEnrollment",
        a.ann_outreach,
        |id| {
            enrollments
                .clone()
                .get_enrollment(b.req(GetEnrollmentRequest { id: id.clone() }))
        }
    );
    assert!(answer.starts_with("NotFound"), "{answer}");
    same_as_unknown!(cov, "EnrollmentService/Explain", a.ann_outreach, |id| {
        enrollments
            .clone()
            .explain(b.req(ExplainRequest { id: id.clone() }))
    });
    same_as_unknown!(cov, "EnrollmentService/GetJourney", a.ann_outreach, |id| {
        enrollments.clone().get_journey(b.req(GetJourneyRequest {
            enrollment_id: id.clone(),
            page: None,
        }))
    });
    same_as_unknown!(cov, "EnrollmentService/ListJourney", "zed-4711", |id| {
        enrollments.clone().list_journey(b.req(ListJourneyRequest {
            contact_id: id.clone(),
            page: None,
        }))
    });
    cov.add("EnrollmentService/ListJourney");
    let journey = enrollments
        .clone()
        .list_journey(b.req(ListJourneyRequest {
            contact_id: "ann".into(),
            page: Some(PageRequest {
                page_size: 500,
                page_token: String::new(),
            }),
        }))
        .await
        .unwrap()
        .into_inner()
        .entries;
    let seen: BTreeSet<String> = journey.iter().map(|e| e.enrollment_id.clone()).collect();
    assert!(seen.contains(&b.ann_outreach), "{seen:?}");
    assert!(
        seen.is_disjoint(&a.enrollments()),
        "B's ListJourney of ann holds A's entries: {seen:?}"
    );
    same_as_unknown!(
        cov,
        "EnrollmentService/ListEnrollments",
        a.outreach_flow,
        |id| {
            enrollments
                .clone()
                .list_enrollments(b.req(ListEnrollmentsRequest {
                    flow_id: id.clone(),
                    ..Default::default()
                }))
        }
    );
    same_as_unknown!(cov, "EnrollmentService/ListEnrollments", "zed-4711", |id| {
        enrollments
            .clone()
            .list_enrollments(b.req(ListEnrollmentsRequest {
                contact_id: id.clone(),
                ..Default::default()
            }))
    });
    let listed: BTreeSet<String> = enrollments
        .clone()
        .list_enrollments(b.req(ListEnrollmentsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .enrollments
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert!(listed.is_superset(&b.enrollments()));
    assert!(listed.is_disjoint(&a.enrollments()), "{listed:?}");
    // Watch: B's stream holds B's entries; A's cursor is refused as any other account's is.
    cov.add("EnrollmentService/Watch");
    let b_watch = watch_all(ch, b, "").await.expect("B's Watch");
    assert!(!b_watch.is_empty());
    for e in &b_watch {
        assert!(
            !a.enrollments().contains(&e.enrollment_id),
            "B's Watch carried A's entry {e:?}"
        );
    }
    let a_watch = watch_all(ch, a, "").await.expect("A's Watch");
    let a_cursor = a_watch.first().unwrap().cursor.clone();
    let foreign_cursor = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("w2:1:1:en_nowhere:nowhere")
    };
    let with_a = watch_all(ch, b, &a_cursor).await.unwrap_err();
    let with_other = watch_all(ch, b, &foreign_cursor).await.unwrap_err();
    assert_eq!(with_a.code(), Code::InvalidArgument, "{with_a:?}");
    let field = with_a.get_details_bad_request().unwrap().field_violations[0]
        .field
        .clone();
    assert_eq!(field, "cursor");
    assert_eq!(
        norm::<()>(&Err(with_a), &[&a_cursor]),
        norm::<()>(&Err(with_other), &[&foreign_cursor]),
        "A's cursor is refused exactly as another account's"
    );

    // SignalService.
    cov.add("SignalService/ListTasks");
    let b_tasks = signals
        .clone()
        .list_tasks(b.req(ListTasksRequest {
            status: "all".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(
        b_tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        [b.task.as_str()]
    );
    same_as_unknown!(cov, "SignalService/ListTasks", a.alice_calls, |id| signals
        .clone()
        .list_tasks(b.req(ListTasksRequest {
            enrollment_id: id.clone(),
            status: "all".into(),
            ..Default::default()
        })));
    let answer = same_as_unknown!(cov, "SignalService/CompleteTask", a.task, |id| signals
        .clone()
        .complete_task(b.req(CompleteTaskRequest {
            task_id: id.clone(),
            outcome: "connected".into(),
            text: String::new(),
        })));
    assert!(answer.starts_with("NotFound"), "{answer}");
    same_as_unknown!(cov, "SignalService/Decide", a.ann_approve, |id| signals
        .clone()
        .decide(b.req(DecideRequest {
            enrollment_id: id.clone(),
            decision: "approved".into(),
            ..Default::default()
        })));
    same_as_unknown!(cov, "SignalService/ReportSignal", "zed-4711", |id| signals
        .clone()
        .report_signal(b.req(ReportSignalRequest {
            contact: id.clone(),
            kind: "reply".into(),
            channel: "email".into(),
            ..Default::default()
        })));
    same_as_unknown!(cov, "SignalService/PostEvent", "zed-4711", |id| signals
        .clone()
        .post_event(b.req(PostEventRequest {
            key: "payment.received".into(),
            contact: id.clone(),
            ..Default::default()
        })));
    // A signal about ann's phone (the same in both accounts) and an event about alice's email:
    // B's enrollments only. The same provider id in A later is A's own, not B's duplicate.
    let receipt = signals
        .clone()
        .report_signal(b.req(ReportSignalRequest {
            contact: ANN_PHONE.into(),
            kind: "reply".into(),
            channel: "sms".into(),
            provider_id: "crm-reply-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let reached: BTreeSet<String> = receipt
        .deliveries
        .iter()
        .map(|d| d.enrollment_id.clone())
        .collect();
    assert_eq!(
        reached,
        [b.ann_outreach.clone(), b.ann_approve.clone()]
            .into_iter()
            .collect(),
        "{receipt:?}"
    );
    let event = signals
        .clone()
        .post_event(b.req(PostEventRequest {
            key: "payment.received".into(),
            contact: ALICE_EMAIL.into(),
            provider_id: "crm-pay-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let reached: BTreeSet<String> = event
        .deliveries
        .iter()
        .map(|d| d.enrollment_id.clone())
        .collect();
    assert!(reached.contains(&b.alice_outreach), "{event:?}");
    assert!(reached.is_disjoint(&a.enrollments()), "{event:?}");

    // DispatchService.
    let answer = same_as_unknown!(cov, "DispatchService/GetDispatch", a_email.id, |id| {
        dispatches
            .clone()
            .get_dispatch(b.req(GetDispatchRequest { id: id.clone() }))
    });
    assert!(answer.starts_with("NotFound"), "{answer}");
    same_as_unknown!(cov, "DispatchService/AckDispatch", a_email.id, |id| {
        dispatches.clone().ack_dispatch(b.req(AckDispatchRequest {
            id: id.clone(),
            lease_token: a_email.lease_token.clone(),
            provider_message_id: "mg-1".into(),
            ..Default::default()
        }))
    });
    same_as_unknown!(cov, "DispatchService/BatchAckDispatch", a_email.id, |id| {
        dispatches
            .clone()
            .batch_ack_dispatch(b.req(BatchAckDispatchRequest {
                items: vec![AckDispatchRequest {
                    id: id.clone(),
                    lease_token: a_email.lease_token.clone(),
                    failure: "bounced".into(),
                    ..Default::default()
                }],
            }))
    });
    same_as_unknown!(
        cov,
        "DispatchService/ListDispatches",
        a.ann_outreach,
        |id| {
            dispatches
                .clone()
                .list_dispatches(b.req(ListDispatchesRequest {
                    enrollment_id: id.clone(),
                    ..Default::default()
                }))
        }
    );
    let b_dispatches: BTreeSet<String> = dispatches
        .clone()
        .list_dispatches(b.req(ListDispatchesRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .dispatches
        .into_iter()
        .map(|d| d.enrollment_id)
        .collect();
    assert!(
        b_dispatches.is_disjoint(&a.enrollments()),
        "{b_dispatches:?}"
    );
    assert!(!b_dispatches.is_empty());

    // TimingService: a stored contact, a stored flow.
    same_as_unknown!(cov, "TimingService/Resolve", "zed-4711", |id| timing
        .clone()
        .resolve(b.req(ResolveRequest {
            now: Some(prost_types::Timestamp {
                seconds: SIGNED_AT,
                nanos: 0
            }),
            question: Some(resolve_request::Question::Duration("1h".into())),
            channel: "sms".into(),
            contact: Some(ResolveContact {
                contact_id: id.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })));
    same_as_unknown!(cov, "TimingService/Simulate", a.outreach_flow, |id| timing
        .clone()
        .simulate(b.req(SimulateRequest {
            flow: Some(simulate_request::Flow::Stored(StoredFlowRef {
                id: id.clone(),
                version: 0,
            })),
            scenario: "{}".into(),
        })));

    // TestClockService: the installation's one manual clock, the same for every account
    // (a test server's; it holds nothing of any account). Moving it by nothing changes nothing.
    cov.add("TestClockService/Now");
    let now_of = |s: &Side| {
        let mut c = clock.clone();
        let r = s.req(NowRequest {});
        async move { c.now(r).await.unwrap().into_inner() }
    };
    assert_eq!(now_of(a).await, now_of(b).await);
    cov.add("TestClockService/Advance");
    clock
        .clone()
        .advance(b.req(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(0)),
        }))
        .await
        .unwrap();

    // Opting B's ann out (the same id as A's) and changing B's everything left A as it was.
    contacts
        .clone()
        .opt_out(b.req(OptOutRequest {
            contact_id: "ann".into(),
            channels: vec!["email".into(), "sms".into()],
        }))
        .await
        .unwrap();
    enrollments
        .clone()
        .exit(b.req(ExitRequest {
            id: b.alice_calls.clone(),
            reason: "done".into(),
        }))
        .await
        .unwrap();
    let a_after = snapshot(&w, a).await;
    assert_eq!(a_before, a_after, "B's calls changed something of A's");
    // The same provider id in A is A's own signal, not B's duplicate.
    let a_receipt = signals
        .clone()
        .report_signal(a.req(ReportSignalRequest {
            contact: ANN_PHONE.into(),
            kind: "reply".into(),
            channel: "sms".into(),
            provider_id: "crm-reply-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!a_receipt.duplicate, "{a_receipt:?}");
    assert_ne!(a_receipt.signal_id, receipt.signal_id);
    assert!(a_receipt
        .deliveries
        .iter()
        .all(|d| a.enrollments().contains(&d.enrollment_id)));

    // Every RPC the server offers was covered.
    let offered = reflected_rpcs(&w.app).await;
    assert_eq!(
        cov.0, offered,
        "the RPCs this test covers must be exactly those the server offers: cover a new one here"
    );
    w.app.stop().await;
}

/// The entries a Watch from `cursor` carries until none came for a moment, or its refusal.
async fn watch_all(ch: &Channel, s: &Side, cursor: &str) -> Result<Vec<WatchResponse>, Status> {
    let mut stream = enrollments_client(ch)
        .watch(s.req(WatchRequest {
            cursor: cursor.into(),
            ..Default::default()
        }))
        .await?
        .into_inner();
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(StdDuration::from_millis(1500), stream.message()).await {
            Err(_) | Ok(Ok(None)) => return Ok(out),
            Ok(Ok(Some(e))) => out.push(e),
            Ok(Err(status)) => return Err(status),
        }
    }
}

/// A webhook request: the path with its query, headers, body.
struct Hook {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Fixture request `case` of `fixtures/providers/requests/{name}.json`, for `account`.
fn fixture(name: &str, case: &str, account: &str) -> Hook {
    let path = format!("fixtures/providers/requests/{name}.json");
    let fx: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let r = &fx["requests"][case];
    Hook {
        path: r["path"]
            .as_str()
            .unwrap()
            .replace("account=default", &format!("account={account}")),
        headers: r["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect(),
        body: r["body"].as_str().unwrap().as_bytes().to_vec(),
    }
}

fn fixture_secret(name: &str) -> String {
    let path = format!("fixtures/providers/requests/{name}.json");
    let fx: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    fx["secret"].as_str().unwrap().to_string()
}

impl Hook {
    fn header(mut self, name: &str, value: String) -> Hook {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value));
        self
    }

    /// A Twilio form re-signed for its URL (the account is in it) with `token`.
    fn twilio(self, token: &str) -> Hook {
        let params: Vec<(String, String)> =
            serde_urlencoded::from_bytes(&self.body).expect("a Twilio form");
        let url = format!("{PUBLIC_URL}{}", self.path);
        let sig = nudge::inbound::signing::twilio_sign(token, &url, &params);
        self.header("X-Twilio-Signature", sig)
    }

    fn basic(self, credentials: &str) -> Hook {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(credentials);
        self.header("Authorization", format!("Basic {b64}"))
    }
}

fn hmac_hex(key: &str, parts: &[&[u8]]) -> String {
    nudge::inbound::providers::hmac_sha256_hex(key.as_bytes(), parts)
}

/// What each webhook path needs to reach ann or alice in `account`, signed with `secret`.
/// `thread` is the Message-ID of an email of that account (the mail paths reply in it).
fn hook(path: &str, account: &str, secret: &str, thread: &str, n: usize) -> Hook {
    let bare = thread.trim_start_matches('<').trim_end_matches('>');
    let q = format!("?account={account}");
    match path {
        "/webhooks/email" => {
            let body = serde_json::json!({
                "headers": {"Message-ID": format!("<reply-{n}@mail.example>"), "In-Reply-To": thread},
                "from": ANN_EMAIL, "to": "rep@acme.example", "subject": "Re: hi",
                "text": "Sounds good, call me Tuesday."
            })
            .to_string();
            Hook {
                path: format!("{path}{q}"),
                headers: signed(secret, SIGNED_AT, body.as_bytes())
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                body: body.into_bytes(),
            }
        }
        "/webhooks/calendar" => {
            let body = serde_json::json!({
                "id": format!("evt_{n}"), "organizer": "rep@acme.example",
                "attendees": [ANN_EMAIL], "start": "2026-12-10T15:00:00Z"
            })
            .to_string();
            Hook {
                path: format!("{path}{q}"),
                headers: signed(secret, SIGNED_AT, body.as_bytes())
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                body: body.into_bytes(),
            }
        }
        "/webhooks/sms/twilio" => {
            let params: Vec<(String, String)> = [
                ("From", ANN_PHONE),
                ("To", "+18005551212"),
                ("Body", "Yes, call me"),
                ("MessageSid", &format!("SM{n:032}")),
                ("AccountSid", "AC123"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            Hook {
                path: format!("{path}{q}"),
                headers: vec![(
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                )],
                body: serde_urlencoded::to_string(&params).unwrap().into_bytes(),
            }
            .twilio(secret)
        }
        "/webhooks/sms/twilio/status" => {
            fixture("twilio", "status_undelivered", account).twilio(secret)
        }
        "/webhooks/call/twilio" => fixture("twilio", "call_completed_long", account).twilio(secret),
        "/webhooks/email/mailgun" => {
            let mut h = fixture("mailgun", "reply", account);
            let text = String::from_utf8(h.body.clone())
                .unwrap()
                .replace("NUDGE_THREAD_ID", bare);
            let mut form: Vec<(String, String)> = serde_urlencoded::from_str(&text).unwrap();
            let token = format!("{n:050}");
            let ts = SIGNED_AT.to_string();
            let sig = hmac_hex(secret, &[ts.as_bytes(), token.as_bytes()]);
            form.retain(|(k, _)| !matches!(k.as_str(), "timestamp" | "token" | "signature"));
            form.push(("timestamp".into(), ts));
            form.push(("token".into(), token));
            form.push(("signature".into(), sig));
            h.body = serde_urlencoded::to_string(&form).unwrap().into_bytes();
            h
        }
        "/webhooks/email/mailgun/events" => {
            let mut h = fixture("mailgun", "event_unsubscribed", account);
            let mut v: Value = serde_json::from_slice(&h.body).unwrap();
            let token = format!("{n:050}");
            let ts = SIGNED_AT.to_string();
            v["signature"] = serde_json::json!({
                "timestamp": ts, "token": token,
                "signature": hmac_hex(secret, &[ts.as_bytes(), token.as_bytes()]),
            });
            h.body = v.to_string().into_bytes();
            h
        }
        "/webhooks/email/sendgrid" => fixture("sendgrid", "reply_raw", account).basic(secret),
        "/webhooks/email/sendgrid/events" => fixture("sendgrid-events", "unsubscribe", account),
        "/webhooks/email/postmark" => fixture("postmark", "reply", account).basic(secret),
        "/webhooks/email/postmark/events" => {
            fixture("postmark", "spam_complaint", account).basic(secret)
        }
        "/webhooks/email/ses" => fixture("ses", "complaint", account),
        "/webhooks/calendar/calendly" => {
            let h = fixture("calendly", "invitee_created", account);
            let t = SIGNED_AT.to_string();
            let sig = hmac_hex(secret, &[t.as_bytes(), b".", &h.body]);
            h.header("Calendly-Webhook-Signature", format!("t={t},v1={sig}"))
        }
        "/webhooks/calendar/calcom" => {
            let h = fixture("calcom", "booking_created", account);
            let sig = hmac_hex(secret, &[&h.body]);
            h.header("X-Cal-Signature-256", sig)
        }
        other => panic!("no request for {other}"),
    }
}

/// Every webhook path nudge serves (`src/api/http/mod.rs`), with its provider secret
/// (`None`: the account's webhook secret, `X-Nudge-Signature`).
const WEBHOOKS: &[(&str, Option<&str>)] = &[
    ("/webhooks/email", None),
    ("/webhooks/calendar", None),
    ("/webhooks/sms/twilio", Some("twilio")),
    ("/webhooks/sms/twilio/status", Some("twilio")),
    ("/webhooks/call/twilio", Some("twilio")),
    ("/webhooks/email/mailgun", Some("mailgun")),
    ("/webhooks/email/mailgun/events", Some("mailgun")),
    ("/webhooks/email/sendgrid", Some("sendgrid")),
    ("/webhooks/email/sendgrid/events", Some("sendgrid-events")),
    ("/webhooks/email/postmark", Some("postmark")),
    ("/webhooks/email/postmark/events", Some("postmark")),
    ("/webhooks/email/ses", Some("ses")),
    ("/webhooks/calendar/calendly", Some("calendly")),
    ("/webhooks/calendar/calcom", Some("calcom")),
];

/// The secrets A and B set for `provider`, and whether requests are signed with them by this
/// test (`false`: the fixture's own signature, made with the fixture's key, which A holds and
/// B holds last).
fn provider_secrets(provider: &str) -> (String, String, bool) {
    match provider {
        "sendgrid-events" => (
            fixture_secret("sendgrid-events"),
            fixture_secret("sendgrid-vector"),
            false,
        ),
        "ses" => (
            fixture_secret("ses"),
            "arn:aws:sns:us-east-1:123456789012:another-topic".into(),
            false,
        ),
        "sendgrid" | "postmark" => (
            format!("{provider}-a:pw-a"),
            format!("{provider}-b:pw-b"),
            true,
        ),
        _ => (
            format!("{provider}-a-key-0123"),
            format!("{provider}-b-key-0123"),
            true,
        ),
    }
}

async fn set_secret(w: &World, s: &Side, provider: &str, secret: &str) {
    AccountServiceClient::new(w.ch.clone())
        .set_provider_secret(s.req(SetProviderSecretRequest {
            provider: provider.into(),
            secret: secret.into(),
        }))
        .await
        .unwrap_or_else(|e| panic!("{provider}: {e:?}"));
}

async fn send(w: &World, h: &Hook) -> (u16, String) {
    let headers: Vec<(&str, String)> = h
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    crate::signals::support::http(&w.app, &h.path, &headers, &h.body).await
}

/// Claims every due dispatch of `s`; the Message-ID of each enrollment's email.
async fn claim_threads(w: &World, s: &Side) -> BTreeMap<String, String> {
    dispatches_client(&w.ch)
        .claim_dispatches(s.req(ClaimDispatchesRequest {
            lease_ms: 600_000,
            max_count: 100,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches
        .into_iter()
        .filter(|d| d.channel == "email")
        .map(|d| (d.enrollment_id, d.message_id))
        .collect()
}

async fn webhooks_reach_only_the_account_they_are_signed_for(backend: Backend) {
    let w = world(backend).await;
    let (a, b) = (&w.a, &w.b);
    let db = &w.app.state.core.db;
    let webhook_secret = |id: &'static str| async move {
        nudge::store::accounts::find(db, id)
            .await
            .unwrap()
            .unwrap()
            .webhook_secret
    };
    let (a_hook_secret, b_hook_secret) = (webhook_secret("default").await, webhook_secret(B).await);
    assert_ne!(a_hook_secret, b_hook_secret);
    let a_threads = claim_threads(&w, a).await;
    let b_threads = claim_threads(&w, b).await;
    let mut n = 0;

    // Mail in A's thread, correctly signed for B, is mail in no thread of B's: ignored, as mail
    // in a thread that exists nowhere is.
    let a_thread = a_threads[&a.alice_outreach].clone();
    let unknown = unknown_like(&a_thread);
    let mut answers = Vec::new();
    for (thread, id) in [(&a_thread, &a_thread), (&unknown, &unknown)] {
        n += 1;
        let (code, body) = send(&w, &hook("/webhooks/email", B, &b_hook_secret, thread, n)).await;
        answers.push((code, body.replace(id.as_str(), "<ID>")));
    }
    assert_eq!(
        answers[0], answers[1],
        "A's thread answers as an unknown one"
    );
    assert_eq!(answers[0].0, 202, "{answers:?}");

    for (path, provider) in WEBHOOKS {
        let thread = |s: &Side, threads: &BTreeMap<String, String>| {
            let _ = s;
            threads.values().next().cloned().unwrap_or_default()
        };
        let (a_thread, b_thread) = (thread(a, &a_threads), thread(b, &b_threads));
        let _ = a_thread;
        let (a_sign, b_sign, b_other) = match provider {
            None => (a_hook_secret.clone(), b_hook_secret.clone(), None::<String>),
            Some(p) => {
                let (a_secret, b_secret, self_signed) = provider_secrets(p);
                set_secret(&w, a, p, &a_secret).await;
                if self_signed {
                    (a_secret, b_secret.clone(), Some(b_secret))
                } else {
                    (a_secret.clone(), a_secret, Some(b_secret))
                }
            }
        };
        let a_before = snapshot(&w, a).await;
        // Signed with A's secret, for B: refused, whether B has no secret for the provider yet
        // or its own.
        let mut rounds = vec![false];
        if provider.is_some() {
            rounds.push(true);
        }
        for b_has_own in rounds {
            if b_has_own {
                set_secret(&w, b, provider.unwrap(), b_other.as_deref().unwrap()).await;
            }
            let before = (snapshot(&w, a).await, snapshot(&w, b).await);
            n += 1;
            let (code, body) = send(&w, &hook(path, B, &a_sign, &b_thread, n)).await;
            assert_eq!(
                code, 401,
                "{path} for B signed with A's secret (B has its own: {b_has_own}): {body}"
            );
            let after = (snapshot(&w, a).await, snapshot(&w, b).await);
            assert_eq!(after.0, before.0, "{path}: a refused request changed A");
            assert_eq!(after.1, before.1, "{path}: a refused request changed B");
        }
        // Signed with B's own: it reaches B, and nothing of A's.
        if let Some(p) = provider {
            set_secret(&w, b, p, &b_sign).await;
        }
        n += 1;
        let (code, body) = send(&w, &hook(path, B, &b_sign, &b_thread, n)).await;
        assert!(
            (200..300).contains(&code),
            "{path} for B signed with B's secret: {code} {body}"
        );
        assert_eq!(
            snapshot(&w, a).await,
            a_before,
            "{path}: B's request changed A"
        );
        let named = enrollment_ids_in(&body);
        assert!(
            named.is_disjoint(&a.enrollments()),
            "{path}: B's answer names A's enrollments: {body}"
        );
    }

    // Twilio's call callback (to alice's phone, in both accounts) completed B's call task only.
    let task_status = |s: &Side| {
        let mut c = signals_client(&w.ch);
        let r = s.req(ListTasksRequest {
            status: "all".into(),
            ..Default::default()
        });
        async move {
            c.list_tasks(r).await.unwrap().into_inner().tasks[0]
                .status
                .clone()
        }
    };
    assert_eq!(task_status(b).await, "completed");
    assert_eq!(task_status(a).await, "open");

    // `/events/{key}` with B's token reaches B's ann only.
    let a_before = snapshot(&w, a).await;
    let answer = http::request(
        w.app.addr,
        "POST",
        "/events/payment.received?contact=ann%40example.com",
        &[
            ("Authorization", &format!("Bearer {}", b.token)),
            ("Content-Type", "application/json"),
        ],
        r#"{"amount": 1}"#,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let named = enrollment_ids_in(&answer.body);
    assert!(named.is_disjoint(&a.enrollments()), "{}", answer.body);
    assert!(named.is_subset(&b.enrollments()), "{}", answer.body);
    assert_eq!(snapshot(&w, a).await, a_before);
    w.app.stop().await;
}

async fn watch_console_metrics_and_links_stay_inside_their_account(backend: Backend) {
    let w = world(backend).await;
    let (a, b) = (&w.a, &w.b);
    let addr = w.app.addr;

    // The console, signed in as B.
    let (ok, cookies) = crate::console::sign_in(&w.app, &b.token, &[]).await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    let page = |path: String| {
        let cookies = cookies.clone();
        async move { http::get(addr, &path, &[("Cookie", cookies.as_str())]).await }
    };
    for (foreign, what) in [
        (a.ann_outreach.clone(), "enrollments"),
        (a.outreach_flow.clone(), "flows"),
        (w.a_only_flow.clone(), "flows"),
    ] {
        let unknown = unknown_like(&foreign);
        let f = page(format!("/console/{what}/{foreign}")).await;
        let u = page(format!("/console/{what}/{unknown}")).await;
        assert_eq!(f.status, 404, "{what}/{foreign}: {}", f.body);
        assert_eq!(
            (f.status, f.body.replace(&foreign, "<ID>")),
            (u.status, u.body.replace(&unknown, "<ID>")),
            "the console answers A's {what} id as an unknown one"
        );
    }
    for path in ["/console/enrollments", "/console/flows"] {
        let p = page(path.into()).await;
        assert_eq!(p.status, 200, "{path}");
        for id in a
            .enrollments()
            .iter()
            .chain([&a.outreach_flow, &w.a_only_flow])
        {
            assert!(!p.body.contains(id.as_str()), "{path} shows A's {id}");
        }
        assert!(!p.body.contains("a-only-4711"), "{path} shows A's flow");
    }
    let list = page("/console/enrollments".into()).await;
    for id in b.enrollments() {
        assert!(list.body.contains(&id), "B's list lacks {id}");
    }
    let own = page(format!("/console/enrollments/{}", b.ann_outreach)).await;
    assert_eq!(own.status, 200);

    // `/metrics`: the operator's, not an account's, and naming no account or prospect.
    let denied = http::get(
        addr,
        "/metrics",
        &[("Authorization", &format!("Bearer {}", b.token))],
    )
    .await;
    assert_eq!(denied.status, 401, "an account's token reads no metrics");
    let metrics = http::get(
        addr,
        "/metrics",
        &[("Authorization", &format!("Bearer {METRICS_TOKEN}"))],
    )
    .await;
    assert_eq!(metrics.status, 200);
    let text = metrics.body;
    assert!(text.contains("nudge_"), "{text}");
    let mut private: Vec<String> = vec![
        B.into(),
        ANN_EMAIL.into(),
        ANN_PHONE.into(),
        ALICE_EMAIL.into(),
        ALICE_PHONE.into(),
        "13035550100".into(),
    ];
    private.extend(a.enrollments());
    private.extend(b.enrollments());
    private.extend([a.task.clone(), b.task.clone(), a.outreach_flow.clone()]);
    for p in &private {
        assert!(!text.contains(p.as_str()), "/metrics names {p}");
    }
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    for s in &scrape.samples {
        for (k, v) in s.labels.iter() {
            assert!(
                !k.contains("account") && !k.contains("contact") && !k.contains("enrollment"),
                "{} has label {k}",
                s.metric
            );
            for bad in ["default", B, "ann", "alice", "zed-4711", "rep", "outreach"] {
                assert_ne!(v, bad, "{} labels {k}={v}", s.metric);
            }
        }
    }

    // Links: A's unsubscribe and approval links open A's subject only; the same link with the
    // account changed inside is refused exactly as a forged one.
    let a_dispatches = dispatches_client(&w.ch)
        .list_dispatches(a.req(ListDispatchesRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    let unsubscribe = a_dispatches
        .iter()
        .find(|d| d.enrollment_id == a.ann_outreach)
        .unwrap()
        .list_unsubscribe
        .clone();
    let unsubscribe = unsubscribe
        .trim_start_matches('<')
        .trim_end_matches('>')
        .strip_prefix(PUBLIC_URL)
        .unwrap()
        .to_string();
    let approval: Value = serde_json::from_str(
        &a_dispatches
            .iter()
            .find(|d| d.enrollment_id == a.ann_approve)
            .unwrap()
            .channel_params,
    )
    .unwrap();
    let approval = approval["url"].as_str().unwrap();
    let approval = approval[approval.find("/approvals/").unwrap()..].to_string();
    for link in [&unsubscribe, &approval] {
        let (prefix, token) = link.rsplit_once('/').unwrap();
        let opened = http::get(addr, link, &[]).await;
        assert_eq!(opened.status, 200, "{link}: {}", opened.body);
        let (payload, mac) = token.split_once('.').unwrap();
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine;
        let mut claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!(claims["a"], "default", "{claims}");
        claims["a"] = B.into();
        let moved = format!(
            "{prefix}/{}.{mac}",
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut forged_mac = mac.to_string();
        let last = forged_mac.pop().unwrap();
        forged_mac.push(if last == 'A' { 'B' } else { 'A' });
        let forged = format!("{prefix}/{payload}.{forged_mac}");
        let m = http::get(addr, &moved, &[]).await;
        let f = http::get(addr, &forged, &[]).await;
        assert_ne!(m.status, 200, "{moved}: {}", m.body);
        assert_eq!(
            (m.status, m.body.replace(&moved, "<LINK>")),
            (f.status, f.body.replace(&forged, "<LINK>")),
            "a link moved to B answers as a forged one"
        );
    }
    // Following A's unsubscribe link opts out A's ann, never B's.
    let b_before = snapshot(&w, b).await;
    let done = http::request(
        addr,
        "POST",
        &unsubscribe,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        "List-Unsubscribe=One-Click",
    )
    .await;
    assert!((200..300).contains(&done.status), "{}", done.body);
    let opted = |s: &Side| {
        let mut c = ContactServiceClient::new(w.ch.clone());
        let r = s.req(GetContactRequest { id: "ann".into() });
        async move {
            c.get_contact(r)
                .await
                .unwrap()
                .into_inner()
                .contact
                .unwrap()
                .opted_out
        }
    };
    assert_eq!(opted(a).await, ["email"]);
    assert!(opted(b).await.is_empty());
    assert_eq!(snapshot(&w, b).await, b_before, "A's link changed B");
    w.app.stop().await;
}
