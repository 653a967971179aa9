//! `simulate` with the inbox script entries of docs/service.md: `email` (classified as docs/signals.md, "Inbox signals" says),
//! `bounce` and `contact`. Expected instants are worked out by hand from docs/signals.md, "Inbox signals" in the
//! comments (the contact is in America/New_York, UTC−5 in December).

use nudge::engine::simulate::{simulate, Scenario};
use nudge::flow::{Flow, ValidateOptions};
use serde_json::{json, Value};

fn flow() -> Flow {
    let doc = json!({
        "name": "inbox-sim", "start": "email_1",
        "steps": {
            "email_1": {"type": "email", "params": {"template": "intro"}, "next": {"then": "wait_reply"}},
            "wait_reply": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "10d"},
                           "next": {"reply": "end_replied", "timeout": "end_silent"}},
            "end_replied": {"type": "end", "params": {"outcome": "replied"}},
            "end_silent": {"type": "end", "params": {"outcome": "silent"}}
        }
    });
    Flow::from_json(&doc, &ValidateOptions::default()).unwrap()
}

fn run(script: Value) -> Value {
    let scenario: Scenario = serde_json::from_value(json!({
        "start": "2026-12-04T20:00:00Z", "horizon": "2027-01-31T00:00:00Z",
        "contact": {"tz": "America/New_York", "email": "ann@example.com"},
        "script": script
    }))
    .unwrap();
    serde_json::to_value(simulate(&flow(), &scenario).unwrap()).unwrap()
}

fn wait_run(t: &Value) -> &Value {
    t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["step"] == "wait_reply")
        .unwrap()
}

#[test]
fn an_out_of_office_pauses_and_the_timeout_closes_at_the_resume() {
    // Back on 2026-12-21 (a Monday): 00:00 New York + 1bd = Tue 2026-12-22 00:00 EST =
    // 05:00Z. The wait's own timeout (2026-12-14T20:00Z) passed during the pause, so it closes
    // on `timeout` at the resume instant.
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "email",
         "headers": {"Auto-Submitted": "auto-replied", "Subject": "Automatic reply: intro",
                     "Date": "Sat, 05 Dec 2026 10:00:00 +0000"},
         "text": "I am out of the office. I'll be back on December 21."}
    ]));
    assert_eq!(t["state"], "completed");
    assert_eq!(t["outcome"], "silent");
    let w = wait_run(&t);
    assert_eq!(w["branch"], "timeout");
    assert_eq!(w["closed"], "2026-12-22T05:00:00Z");
}

#[test]
fn a_reply_during_the_pause_wakes_the_wait() {
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "email",
         "headers": {"Auto-Submitted": "auto-generated"}, "subject": "Out of Office: intro",
         "text": "Ich bin bis 31.12. im Urlaub."},
        {"at": "2026-12-06T10:00:00Z", "kind": "email",
         "headers": {"X-Autoreply": "yes"}, "subject": "Automatic reply", "text": "Still away"},
        {"at": "2026-12-07T10:00:00Z", "kind": "email", "subject": "Re: intro",
         "text": "Sorry, I was out of office. Yes, let's talk."}
    ]));
    assert_eq!(t["outcome"], "replied");
    let w = wait_run(&t);
    assert_eq!(w["branch"], "reply");
    assert_eq!(w["woken_by"], 2, "the person's reply, not an auto-reply");
}

#[test]
fn an_auto_reply_is_not_a_reply() {
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "email",
         "headers": {"Auto-Submitted": "auto-replied"}, "subject": "Re: intro",
         "text": "We received your request #42."}
    ]));
    assert_eq!(t["outcome"], "silent");
    assert_eq!(wait_run(&t)["branch"], "timeout");
    assert_eq!(wait_run(&t)["closed"], "2026-12-14T20:00:00Z");
}

#[test]
fn bounces_hard_and_thrice_soft_exit() {
    let t = run(json!([{"at": "2026-12-05T10:00:00Z", "kind": "bounce", "type": "hard"}]));
    assert_eq!(
        (t["state"].clone(), t["outcome"].clone()),
        (json!("exited"), json!("BOUNCED"))
    );
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "bounce", "type": "soft"},
        {"at": "2026-12-06T10:00:00Z", "kind": "bounce", "type": "soft"}
    ]));
    assert_eq!(t["state"], "completed", "two soft bounces are not enough");
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "bounce", "type": "soft"},
        {"at": "2026-12-06T10:00:00Z", "kind": "bounce", "type": "delayed"},
        {"at": "2026-12-07T10:00:00Z", "kind": "bounce", "type": "soft"},
        {"at": "2026-12-08T10:00:00Z", "kind": "bounce", "type": "soft"}
    ]));
    assert_eq!(
        (t["state"].clone(), t["outcome"].clone()),
        (json!("exited"), json!("BOUNCED"))
    );
    let w = wait_run(&t);
    assert_eq!(
        (w["branch"].clone(), w["woken_by"].clone()),
        (json!("exit"), json!(3))
    );
}

#[test]
fn a_contact_change_and_an_unparseable_date() {
    // "31.02." does not exist: default_pause (7d) from the arrival, to 2026-12-12T10:00Z,
    // before the wait's timeout (2026-12-14T20:00Z), which then closes at its own time. A
    // wrong date (say 28 February) would have held it to max_pause (2027-01-04T10:00Z).
    let t = run(json!([
        {"at": "2026-12-05T09:00:00Z", "kind": "contact",
         "contact": {"tz": "Europe/Prague", "email": "ann@example.com"}},
        {"at": "2026-12-05T10:00:00Z", "kind": "email",
         "headers": {"Auto-Submitted": "auto-replied"}, "subject": "Abwesenheitsnotiz",
         "text": "Ab dem 31.02. bin ich wieder da."}
    ]));
    let w = wait_run(&t);
    assert_eq!(w["branch"], "timeout");
    assert_eq!(w["closed"], "2026-12-14T20:00:00Z");
}

/// A Gmail DSN given as headers and a body (no raw MIME) is a bounce: it exits as a
/// hard bounce and never closes the wait on `reply`.
#[test]
fn a_dsn_given_as_headers_and_body_never_wakes_a_reply() {
    let t = run(json!([
        {"at": "2026-12-05T10:00:00Z", "kind": "email",
         "headers": {"Content-Type": "multipart/report; report-type=delivery-status; boundary=\"00000000000042\"",
                     "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
                     "Return-Path": "<>",
                     "Subject": "Delivery Status Notification (Failure)"},
         "text": "** Address not found **\n\nYour message wasn't delivered to ann@example.com because the address couldn't be found.\n\nReporting-MTA: dns; googlemail.com\nArrival-Date: Sat, 05 Dec 2026 10:00:00 -0800\n\nFinal-Recipient: rfc822; ann@example.com\nAction: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.\n"}
    ]));
    let w = wait_run(&t);
    assert_ne!(w["branch"], "reply", "{t:#}");
    assert_ne!(t["outcome"], "replied", "{t:#}");
    assert_eq!(t["state"], "exited", "a hard bounce exits: {t:#}");
}
