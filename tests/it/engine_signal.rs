//! `signal.*` through the interpreter: what the signal that closed the last `wait_for` carried,
//! read by a `branch` and by a timing slot (the pure parts are unit tested in `src/flow/expr.rs`).
//!
//! The flows wait for `reply` and set the classified facts on the `Signal` directly, the way the
//! edges fill them for a classified reply.

use crate::engine_support as support;

use chrono::NaiveDate;
use nudge::code::Code;
use nudge::engine::effect::{JourneyEntry, SignalEffect};
use nudge::engine::state::Status;
use nudge::engine::{EnrollmentState, Input, Signal, SignalFacts};
use nudge::inbound::intent::{Intent, Referral};
use serde_json::json;
use support::*;

const T0: &str = "2026-12-04T20:00:00Z";
const DENVER: &str = "America/Denver";

/// 2027-03-01 00:00 in America/Denver (MST, UTC-7), from Python rather than chrono-tz:
/// `datetime(2027,3,1,tzinfo=ZoneInfo('America/Denver')).astimezone(ZoneInfo('UTC'))`.
const MARCH_1_DENVER: &str = "2027-03-01T07:00:00Z";

/// Wait for a reply; a dated "not now" waits until that day, an undated one 90 days, anything
/// else mails at once.
fn not_now_flow() -> serde_json::Value {
    json!({
        "wf": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "5d"},
               "next": {"reply": "check", "timeout": "end"}},
        "check": {"type": "branch",
                  "params": {"cases": [
                      {"name": "dated", "when": {"exists": "signal.resume_on"}},
                      {"name": "not_now", "when": {"eq": ["$: signal.intent", "not_now"]}}]},
                  "next": {"dated": "until_resume", "not_now": "later", "else": "mail"}},
        "until_resume": {"type": "wait", "params": {"until": "$: signal.resume_on"}, "next": {"then": "mail"}},
        "later": {"type": "wait", "params": {"duration": "90d"}, "next": {"then": "mail"}},
        "mail": {"type": "email", "params": {"template": "again"}, "next": {"then": "end"}},
        "end": {"type": "end"}
    })
}

fn reply(id: &str, intent: Intent, resume_on: Option<NaiveDate>) -> Signal {
    let mut s = Signal::reply(id, "email");
    s.facts = SignalFacts {
        channel: Some("email".into()),
        intent: Some(intent),
        resume_on,
        referral: None,
    };
    s
}

fn march_1() -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(2027, 3, 1)
}

fn driver(steps: serde_json::Value, start: &str) -> Driver {
    // The sender is in Prague: the contact's zone must win.
    Driver::new(
        flow_of(start, json!({}), steps),
        contact(Some(DENVER), None, Some("ann@example.com")),
        "Europe/Prague",
    )
}

fn failed(d: &Driver) -> Option<(Code, Option<String>, String)> {
    d.journey().into_iter().find_map(|j| match j {
        JourneyEntry::Failed {
            code,
            step,
            message,
        } => Some((code, step, message)),
        _ => None,
    })
}

#[test]
fn a_dated_not_now_waits_until_that_day_in_the_contacts_zone() {
    let mut d = driver(not_now_flow(), "wf");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, march_1())),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.run().step, "until_resume", "{:?}", d.closed());
    assert_eq!(d.run().until, Some(t(MARCH_1_DENVER)));
    assert_eq!(d.state.next_run_at, Some(t(MARCH_1_DENVER)));
    // The wait reads what the woken signal carried, kept on the enrollment.
    let woken = d.state.woken.as_ref().expect("the reply that closed wf");
    assert_eq!((woken.step.as_str(), woken.signal.as_str()), ("wf", "s1"));
    assert_eq!(woken.facts.resume_on, march_1());
    assert_eq!(woken.facts.intent, Some(Intent::NotNow));
    // And on that day it mails again.
    d.wake();
    assert_eq!(
        d.closed()[2..4],
        [cb("until_resume", "then", None), cb("mail", "then", None)],
        "{:?}",
        d.closed()
    );
}

#[test]
fn a_contact_without_a_zone_resumes_at_the_start_of_the_day_in_the_senders_zone() {
    let mut d = Driver::new(
        flow_of("wf", json!({}), not_now_flow()),
        contact(None, None, Some("ann@example.com")),
        "Europe/Prague",
    );
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, march_1())),
        "2026-12-05T10:00:00Z",
    );
    // zoneinfo: datetime(2027,3,1,tzinfo=ZoneInfo('Europe/Prague')) is 2027-02-28 23:00 UTC.
    assert_eq!(d.run().until, Some(t("2027-02-28T23:00:00Z")));
}

#[test]
fn an_undated_not_now_takes_the_other_branch() {
    let mut d = driver(not_now_flow(), "wf");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, None)),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.run().step, "later", "{:?}", d.closed());
    // 90 calendar days at the same wall clock in Denver (both dates in MST).
    assert_eq!(d.run().until, Some(t("2027-03-05T10:00:00Z")));

    // Another intent fails both cases: the branch's `else`, mail at once.
    let mut d = driver(not_now_flow(), "wf");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s2", Intent::Interested, None)),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.closed()[1], cb("check", "else", None), "{:?}", d.closed());
}

#[test]
fn a_timing_slot_reading_a_missing_resume_on_fails_with_expr_missing() {
    let steps = json!({
        "wf": {"type": "wait_for", "params": {"events": ["reply"]}, "next": {"reply": "until_resume"}},
        "until_resume": {"type": "wait", "params": {"until": "$: signal.resume_on"}, "next": {"then": "end"}},
        "end": {"type": "end"}
    });
    let mut d = driver(steps, "wf");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, None)),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.state.status, Status::Failed);
    let (code, step, message) = failed(&d).expect("a failed entry");
    assert_eq!(code, Code::ExprMissing);
    assert_eq!(code.as_str(), "EXPR_MISSING");
    assert_eq!(step.as_deref(), Some("until_resume"));
    assert!(
        message.contains("`signal.resume_on` is missing"),
        "{message}"
    );
    assert!(message.contains("`exists`"), "{message}");
    assert_eq!(
        d.state
            .reason
            .as_deref()
            .map(|r| r.starts_with("EXPR_MISSING: ")),
        Some(true),
        "{:?}",
        d.state.reason
    );
    // What the signal itself did is kept: it closed the wait.
    assert_eq!(d.closed()[0], cb("wf", "reply", Some("s1")));
}

#[test]
fn a_buffered_signal_keeps_its_facts_until_a_wait_consumes_it() {
    let mut steps = not_now_flow();
    steps["first"] = json!({"type": "wait", "params": {"duration": "1h"}, "next": {"then": "wf"}});
    let mut d = driver(steps, "first");
    d.apply(Input::Start, T0);
    // Nobody waits for a reply yet: kept, with its facts.
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, march_1())),
        "2026-12-04T20:10:00Z",
    );
    assert!(matches!(
        d.signal_effects("s1").as_slice(),
        [SignalEffect::Buffered { .. }]
    ));
    let kept: Vec<_> = d.state.buffer.iter().collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].facts.resume_on, march_1());
    // A stored state keeps them too (the buffer is part of it).
    let back =
        nudge::store::state_encoding::decode(&nudge::store::state_encoding::encode(&d.state))
            .unwrap();
    assert_eq!(back, d.state);
    d.state = back;
    // An hour later wf is entered, consumes it and reads its date.
    d.wake();
    assert!(matches!(
        d.signal_effects("s1").as_slice(),
        [SignalEffect::Buffered { .. }, SignalEffect::Consumed { .. }]
    ));
    assert_eq!(d.run().step, "until_resume", "{:?}", d.closed());
    assert_eq!(d.run().until, Some(t(MARCH_1_DENVER)));
    assert_eq!(
        d.state.woken.as_ref().map(|w| w.facts.resume_on),
        Some(march_1())
    );
}

#[test]
fn after_a_timeout_signal_paths_are_missing() {
    // The reply to wf1 named a date; wf2 then times out. `signal.*` names the signal that closed
    // the *last* wait_for, and none did: the dated case must not see wf1's reply.
    let steps = json!({
        "wf1": {"type": "wait_for", "params": {"events": ["reply"]}, "next": {"reply": "wf2"}},
        "wf2": {"type": "wait_for", "params": {"events": ["payment.done"], "timeout": "1d"},
                "next": {"payment.done": "check", "timeout": "check"}},
        "check": {"type": "branch",
                  "params": {"cases": [{"name": "dated", "when": {"exists": "signal.resume_on"}},
                                       {"name": "any", "when": {"exists": "signal.channel"}}]},
                  "next": {"dated": "until_resume", "any": "until_resume", "else": "later"}},
        "until_resume": {"type": "wait", "params": {"until": "$: signal.resume_on"}, "next": {"then": "end"}},
        "later": {"type": "wait", "params": {"duration": "90d"}, "next": {"then": "end"}},
        "end": {"type": "end"}
    });
    let mut d = driver(steps.clone(), "wf1");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, march_1())),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.run().step, "wf2");
    assert!(
        d.state.woken.is_some(),
        "wf1's reply is kept while wf2 waits"
    );
    d.wake();
    assert_eq!(
        d.closed()[1..3],
        [cb("wf2", "timeout", None), cb("check", "else", None)],
        "{:?}",
        d.closed()
    );
    assert_eq!(d.run().step, "later");
    assert_eq!(d.state.woken, None, "no signal closed the last wait_for");

    // The same wait closed by its signal reads that signal (no facts: a custom event).
    let mut d = driver(steps, "wf1");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(reply("s1", Intent::NotNow, march_1())),
        "2026-12-05T10:00:00Z",
    );
    d.apply(
        Input::Signal(Signal::raising("p1", &["payment.done"])),
        "2026-12-05T11:00:00Z",
    );
    assert_eq!(d.closed()[2], cb("check", "else", None), "{:?}", d.closed());
    assert_eq!(
        d.state.woken.as_ref().map(|w| w.signal.as_str()),
        Some("p1")
    );
}

#[test]
fn a_referral_and_the_channel_are_readable() {
    let steps = json!({
        "wf": {"type": "wait_for", "params": {"events": ["reply"]}, "next": {"reply": "check"}},
        "check": {"type": "branch",
                  "params": {"cases": [{"name": "referred", "when": {"all": [
                      {"eq": ["$: signal.referral.email", "bo@example.com"]},
                      {"eq": ["$: signal.referral.name", "Bo"]},
                      {"eq": ["$: signal.channel", "sms"]}]}}]},
                  "next": {"referred": "yes", "else": "no"}},
        "yes": {"type": "end", "params": {"outcome": "referred"}},
        "no": {"type": "end", "params": {"outcome": "other"}}
    });
    let mut d = driver(steps, "wf");
    d.apply(Input::Start, T0);
    let mut s = Signal::reply("s1", "sms");
    s.facts = SignalFacts {
        channel: Some("sms".into()),
        intent: Some(Intent::WrongPerson),
        resume_on: None,
        referral: Some(Referral {
            email: "bo@example.com".into(),
            name: Some("Bo".into()),
        }),
    };
    d.apply(Input::Signal(s), "2026-12-05T10:00:00Z");
    assert_eq!(d.state.outcome.as_deref(), Some("referred"));
}

/// A state written before signals carried facts (no `facts` key in its `woken` or its buffered
/// signals) still decodes, as JSON and as MessagePack, and reads as no facts.
#[test]
fn a_state_stored_before_facts_still_decodes() {
    let old = json!({
        "id": "enr-1",
        "status": "active",
        "flow": {"id": "test", "version": 1},
        "contact": {"id": "c1", "email": "ann@example.com", "tz": DENVER},
        "sender_tz": "Europe/Prague",
        "input": {},
        "run": {"id": 2, "step": "wf2", "type": "wait_for", "entered": "2026-12-05T10:00:00Z",
                "events": ["payment.done"]},
        "buffer": [{"id": "s9", "raises": ["reply", "reply:email"], "payload": {},
                    "at": "2026-12-05T10:30:00Z"}],
        "last_run_id": 2,
        "woken": {"run": 1, "step": "wf1", "signal": "s1", "branch": "reply"}
    });
    let text = old.to_string();
    let state: EnrollmentState =
        nudge::store::state_encoding::decode(text.as_bytes()).expect("the old JSON decodes");
    let woken = state.woken.as_ref().expect("woken");
    assert_eq!(woken.signal, "s1");
    assert!(woken.facts.is_empty());
    assert!(state.buffer.iter().next().unwrap().facts.is_empty());
    // Written again, nothing about facts appears: MessagePack with named fields as an older
    // build wrote it, which reads back the same.
    let again = serde_json::to_value(&state).unwrap();
    assert!(!again.to_string().contains("facts"), "{again}");
    let packed = nudge::store::state_encoding::encode(&state);
    assert!(!packed.windows(5).any(|w| w == b"facts"));
    assert!(packed.windows(6).any(|w| w == b"signal"), "named fields");
    assert_eq!(
        nudge::store::state_encoding::decode(&packed).unwrap(),
        state
    );
}

/// The "not now" example of docs/flows.md runs as its text says: a reply naming 1 March to a
/// contact in Denver waits until 00:00 that day, Denver time, then mails again.
#[test]
fn the_docs_not_now_example_waits_until_the_named_day() {
    let flow = flow(crate::flow_fixtures::docs_flow_with("\"intent:not_now\""));
    let mut d = Driver::new(
        flow,
        contact(Some(DENVER), None, Some("ann@example.com")),
        "Europe/Prague",
    );
    d.apply(Input::Start, T0);
    let mut s = reply("s1", Intent::NotNow, march_1());
    s.raises.insert(0, "intent:not_now".into());
    d.apply(Input::Signal(s), "2026-12-07T16:00:00Z");
    assert_eq!(d.run().step, "until_named", "{:?}", d.closed());
    assert_eq!(d.run().until, Some(t(MARCH_1_DENVER)));
    d.wake();
    assert_eq!(d.state.outcome.as_deref(), Some("followed_up"));
}
