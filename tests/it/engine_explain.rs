//! `Explain` as a pure function (docs/operations.md): one case per wait reason, the states made by the
//! interpreter itself. Expected instants are worked out by hand (New York is UTC−5 in
//! December, Denver UTC−7), not copied from this code's output.

use crate::engine_support::*;
use nudge::code::Code;
use nudge::engine::{explain, Input, WaitReason};
use serde_json::json;

const WEEKDAYS: [&str; 5] = ["mon", "tue", "wed", "thu", "fri"];

fn window(extra: serde_json::Value) -> serde_json::Value {
    let mut s =
        json!({"send_window": {"days": WEEKDAYS, "from": "09:00", "to": "17:00", "tz": "contact"}});
    if let (Some(s), Some(e)) = (s.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    s
}

fn email_then_end() -> serde_json::Value {
    json!({"e": {"type": "email", "params": {"template": "t1"}, "next": {"then": "done"}},
           "done": {"type": "end"}})
}

#[test]
fn timer_names_the_wake_time_and_zone() {
    let f = flow_of(
        "w",
        json!({}),
        json!({"w": {"type": "wait", "params": {"duration": "2d"}, "next": {"then": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-05T00:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Timer));
    assert_eq!(e.until, Some(t("2026-12-06T20:00:00Z")));
    assert_eq!(e.zone.as_deref(), Some("America/New_York"));
    assert_eq!(e.step.as_deref(), Some("w"));
    assert_eq!(
        e.sentence,
        "Waiting at step `w` until 2026-12-06 15:00 (America/New_York)."
    );
}

#[test]
fn signal_names_the_events_and_the_timeout() {
    let f = flow_of(
        "wf",
        json!({}),
        json!({"wf": {"type": "wait_for", "params": {"events": ["reply", "meeting_booked"], "timeout": {"for": "3d"}},
                      "next": {"reply": "done", "meeting_booked": "done", "timeout": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-05T00:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Signal));
    assert_eq!(e.events, vec!["reply", "meeting_booked"]);
    assert_eq!(e.until, Some(t("2026-12-07T20:00:00Z")));
    assert!(
        e.sentence.contains("for reply or meeting_booked")
            && e.sentence.contains("2026-12-07 15:00 (America/New_York)"),
        "{}",
        e.sentence
    );
}

#[test]
fn window_closed_on_a_saturday() {
    // Sat 10:00 in New York: the window opens Mon 09:00 = 14:00Z.
    let f = flow_of("e", window(json!({})), email_then_end());
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), None, Some("a@example.com")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-05T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-05T15:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Window));
    assert_eq!(e.until, Some(t("2026-12-07T14:00:00Z")));
    assert_eq!(e.zone.as_deref(), Some("America/New_York"));
    assert_eq!(
        e.sentence,
        "Send window closed in America/New_York until 2026-12-07 09:00; the email of step `e` goes then."
    );
}

/// An email step with variants, held by the window: Explain names the variant this contact
/// gets (GrowthBook's assignment of contact `c1` under seed `test/e:`), and the email sent
/// when the window opens is that variant.
#[test]
fn a_held_step_with_variants_names_the_contacts_variant() {
    let steps = json!({"e": {"type": "email", "params": {"template": "t1"},
                             "variants": [{"name": "plain"}, {"name": "bold", "params": {"template": "t1_bold"}}],
                             "next": {"then": "done"}},
                       "done": {"type": "end"}});
    let f = flow_of("e", window(json!({})), steps);
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), None, Some("a@example.com")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-05T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-05T15:00:00Z"));
    let want = ["plain", "bold"]
        [nudge::experiment::assign("test/e:", "c1", &[1.0, 1.0], &[false, false]).index];
    assert_eq!(e.reason, Some(WaitReason::Window));
    assert_eq!(e.variant.as_deref(), Some(want));
    assert!(
        e.sentence
            .ends_with(&format!("Its variant of `e` is `{want}`.")),
        "{}",
        e.sentence
    );
    // With the contact's variant stopped, Explain names the one it gets now, and the stop.
    let stopped: nudge::engine::variant::Stopped = [(
        "test/e".to_string(),
        [want.to_string()].into_iter().collect(),
    )]
    .into_iter()
    .collect();
    let other = if want == "plain" { "bold" } else { "plain" };
    let e2 = nudge::engine::explain_in(
        &d.state,
        &d.flow,
        t("2026-12-05T15:00:00Z"),
        &nudge::timing::QuietHours::federal(),
        Some(&stopped),
    );
    assert_eq!(e2.variant.as_deref(), Some(other));
    assert!(
        e2.sentence.ends_with(&format!(
            "Its variant of `e` is `{other}`. Stopped (taking no new contacts): `{want}`."
        )),
        "{}",
        e2.sentence
    );
    let fx = d.apply(Input::Wake, "2026-12-07T14:00:00Z");
    let sent = fx
        .iter()
        .find_map(|f| match f {
            nudge::engine::Effect::Dispatch(d) => Some(d.clone()),
            _ => None,
        })
        .expect("sent when the window opens");
    assert_eq!(sent.variant.as_deref(), Some(want));
    assert_eq!(sent.template, if want == "bold" { "t1_bold" } else { "t1" });
}

#[test]
fn quiet_hours_in_the_phone_zone() {
    // +1 303 is Denver: 21:30 there on Thursday; the SMS window opens Fri 08:00 = 15:00Z.
    let f = flow_of(
        "s",
        json!({}),
        json!({"s": {"type": "sms", "params": {"template": "t1"}, "next": {"then": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(
        f,
        contact(None, Some("+13035551234"), None),
        "Europe/Prague",
    );
    d.apply(Input::Start, "2026-12-04T04:30:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T04:30:00Z"));
    assert_eq!(e.reason, Some(WaitReason::QuietHours));
    assert_eq!(e.until, Some(t("2026-12-04T15:00:00Z")));
    assert_eq!(e.zone.as_deref(), Some("America/Denver"));
    assert_eq!(
        e.sentence,
        "SMS window closed in America/Denver until 08:00 on Fri 2026-12-04; the sms of step `s` goes then."
    );
}

#[test]
fn holiday_closes_the_window() {
    // Fri 2026-12-25 10:00 in New York is inside 09:00–17:00 but a listed holiday: Mon 09:00.
    let f = flow_of(
        "e",
        window(json!({"holidays": ["2026-12-25"]})),
        email_then_end(),
    );
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), None, Some("a@example.com")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-25T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-25T15:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Holiday));
    assert_eq!(e.until, Some(t("2026-12-28T14:00:00Z")));
    assert_eq!(e.zone.as_deref(), Some("America/New_York"));
    assert!(
        e.sentence.contains("holiday (2026-12-25)"),
        "{}",
        e.sentence
    );
    // The same instant a week earlier is an open weekday: nothing waits.
    let mut plain = Driver::new(
        flow_of("e", window(json!({})), email_then_end()),
        contact(Some("America/New_York"), None, Some("a@example.com")),
        "UTC",
    );
    plain.apply(Input::Start, "2026-12-24T15:00:00Z");
    assert_eq!(plain.state.run, None, "an open window sends at once");
}

/// docs/timing.md, "Holiday calendars and quiet hours": a country calendar's holiday (`contact` from a +49 number: German Unity Day,
/// Tuesday 2028-10-03) is named with its date and name.
#[test]
fn a_country_calendar_holiday_is_named() {
    let f = flow_of(
        "e",
        window(json!({"holidays": ["contact"]})),
        email_then_end(),
    );
    let mut d = Driver::new(
        f,
        contact(
            Some("Europe/Berlin"),
            Some("+4915112345678"),
            Some("a@example.com"),
        ),
        "UTC",
    );
    d.apply(Input::Start, "2028-10-03T08:00:00Z");
    let e = explain(&d.state, &d.flow, t("2028-10-03T08:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Holiday));
    assert_eq!(e.until, Some(t("2028-10-04T07:00:00Z")));
    assert!(
        e.sentence.contains("holiday (2028-10-03 German Unity Day)"),
        "{}",
        e.sentence
    );
}

/// docs/timing.md, "Holiday calendars and quiet hours": under `us_states` a Florida number's call at 20:30 EST waits for the state rule,
/// and Explain names it; under the federal rule alone nothing would wait.
#[test]
fn a_us_states_quiet_hour_names_the_rule() {
    let f = flow_of(
        "c",
        json!({}),
        json!({"c": {"type": "call", "params": {}, "next": {"then": "done"}},
               "done": {"type": "end"}}),
    );
    let us = nudge::timing::QuietHours::policy(nudge::timing::QuietHoursPolicy::UsStates);
    let mut d = Driver::new(f, contact(None, Some("+13055551234"), None), "UTC");
    d.ctx.quiet_hours = us.clone();
    d.apply(Input::Start, "2027-03-05T01:30:00Z");
    let e = nudge::engine::explain_with(&d.state, &d.flow, t("2027-03-05T01:30:00Z"), &us);
    assert_eq!(e.reason, Some(WaitReason::QuietHours));
    assert_eq!(e.until, Some(t("2027-03-05T13:00:00Z")));
    assert_eq!(e.zone.as_deref(), Some("America/New_York"));
    assert!(
        e.sentence.contains("(quiet hours rule US-FL)"),
        "{}",
        e.sentence
    );
    assert!(
        e.sentence.starts_with("Quiet hours for calls closed"),
        "{}",
        e.sentence
    );
    // At 21:30 the federal hours are closed too: the rule is not what holds it.
    let late = nudge::engine::explain_with(&d.state, &d.flow, t("2027-03-05T02:30:00Z"), &us);
    assert!(!late.sentence.contains("US-FL"), "{}", late.sentence);
}

/// A valid number with no zone (+800 international freephone) and no set zone: ZONE_UNKNOWN.
#[test]
fn held_when_the_zone_is_unknown() {
    let f = flow_of(
        "s",
        json!({}),
        json!({"s": {"type": "sms", "params": {"template": "t1"}, "next": {"then": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(None, Some("+80012345678"), None), "UTC");
    d.apply(Input::Start, "2026-12-04T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T15:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Held));
    assert_eq!(e.code, Some(Code::ZoneUnknown));
    assert_eq!(e.until, None);
    assert!(
        e.sentence.starts_with("Step `s` is held (ZONE_UNKNOWN)"),
        "{}",
        e.sentence
    );
}

#[test]
fn paused_wins_over_the_timer() {
    let f = flow_of(
        "w",
        json!({}),
        json!({"w": {"type": "wait", "params": {"duration": "2d"}, "next": {"then": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(Input::Pause, "2026-12-04T21:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T22:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Paused));
    assert_eq!(e.until, Some(t("2026-12-06T20:00:00Z")));
    assert!(
        e.sentence.starts_with("Paused by an operator at step `w`"),
        "{}",
        e.sentence
    );
    d.apply(Input::Resume, "2026-12-04T23:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T23:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Timer));
}

#[test]
fn jitter_inside_an_open_window_is_a_timer() {
    let f = flow_of("e", json!({"jitter": "20m"}), email_then_end());
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), None, Some("a@example.com")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T15:00:00Z");
    let scheduled = d.run().scheduled.expect("scheduled");
    assert!(
        scheduled > t("2026-12-04T15:00:00Z"),
        "a seeded jitter of 0 would not wait"
    );
    let e = explain(&d.state, &d.flow, t("2026-12-04T15:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Timer));
    assert_eq!(e.until, Some(scheduled));
    assert!(e.sentence.contains("jitter"), "{}", e.sentence);
}

#[test]
fn an_open_task_waits_for_its_outcome() {
    let f = flow_of(
        "c",
        json!({}),
        json!({"c": {"type": "call", "params": {"timeout": {"for": "1d"}}, "next": {"then": "done", "timeout": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), Some("+12125551234"), None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T16:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Signal));
    assert_eq!(e.until, Some(t("2026-12-05T15:00:00Z")));
}

#[test]
fn a_finished_enrollment_waits_for_nothing() {
    let f = flow_of(
        "done",
        json!({}),
        json!({"done": {"type": "end", "params": {"outcome": "won"}}}),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T15:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T15:00:00Z"));
    assert_eq!(e.reason, None);
    assert_eq!(
        e.sentence,
        "Completed with outcome `won`; it waits for nothing."
    );
}

#[test]
fn every_reason_has_its_spec_spelling() {
    let names: Vec<&str> = WaitReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        names,
        [
            "timer",
            "signal",
            "window",
            "quiet_hours",
            "holiday",
            "cap",
            "held",
            "approval",
            "fetch",
            "paused"
        ]
    );
}

#[test]
fn capacity_used_up_names_the_cap_and_the_slot() {
    // One email a day; the sender sent at 2026-12-04 20:00Z. A step due an hour later waits
    // for the slot, exactly 24 h after that send.
    use nudge::capacity::{Book, Caps, Entry};
    use nudge::engine::{step_with, CapacityView, Ctx, EnrollmentState, FlowRef};
    use nudge::timing::{Channel, Zone};
    let f = flow_of("e", json!({}), email_then_end());
    let caps = Caps::parse(&json!({"email": {"daily": 1}})).unwrap();
    let mut book = Book::new(caps, Zone::parse("UTC").unwrap());
    book.reserve(Entry {
        channel: Channel::Email,
        at: t("2026-12-04T20:00:00Z"),
        domain: None,
        gap_until: t("2026-12-04T20:00:00Z"),
    });
    let before = EnrollmentState::new(
        "en-cap",
        FlowRef::default(),
        contact(Some("UTC"), None, Some("a@example.com")),
        "UTC",
        json!({}),
    );
    let (state, _) = step_with(
        &before,
        &f,
        Input::Start,
        t("2026-12-04T21:00:00Z"),
        &Ctx::default(),
        CapacityView::Ledger(&book),
    );
    let e = explain(&state, &f, t("2026-12-04T22:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Cap));
    assert_eq!(e.until, Some(t("2026-12-05T20:00:00Z")));
    assert!(e.sentence.contains("CAP_DAILY"), "{}", e.sentence);
    assert!(e.sentence.contains("2026-12-05 20:00"), "{}", e.sentence);
}

/// An approval waits for a person: the sentence names the link's expiry (`link_ttl`, 2 days
/// here, before the 3-day timeout) and the timeout; once the link has expired it says so.
#[test]
fn an_approval_names_its_link_and_its_timeout() {
    let f = flow_of(
        "approve",
        json!({}),
        json!({"approve": {"type": "approval", "params": {"title": "Send?", "timeout": "3d", "link_ttl": "2d"},
                           "next": {"approved": "done", "rejected": "done", "timeout": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-05T00:00:00Z"));
    assert_eq!(e.reason, Some(WaitReason::Approval));
    assert_eq!(e.until, Some(t("2026-12-07T20:00:00Z")));
    assert_eq!(
        e.sentence,
        "Waiting at step `approve` for a person to approve or reject (its link works until \
         2026-12-06 20:00 UTC); it times out at 2026-12-07 20:00 UTC."
    );
    let later = explain(&d.state, &d.flow, t("2026-12-07T00:00:00Z"));
    assert!(
        later
            .sentence
            .contains("its link expired at 2026-12-06 20:00 UTC"),
        "{}",
        later.sentence
    );
}

/// A fetch waits for the answer to the attempt in flight; after a failed attempt with retries
/// left, for the backoff's end (a jittered 30 s: later than now, within a minute).
#[test]
fn a_fetch_names_its_attempt_and_its_retry() {
    let f = flow_of(
        "deal",
        json!({}),
        json!({"deal": {"type": "fetch", "params": {"url": "https://crm.example.com/d", "retry": {"attempts": 3, "backoff": "30s"}},
                        "next": {"ok": "done", "error": "done", "timeout": "done"}},
               "done": {"type": "end"}}),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let e = explain(&d.state, &d.flow, t("2026-12-04T20:00:01Z"));
    assert_eq!(e.reason, Some(WaitReason::Fetch));
    assert_eq!(
        e.sentence,
        "Waiting at step `deal` for another system's answer (attempt 1 of 3)."
    );
    d.apply(
        Input::FetchAnswer {
            run: 1,
            attempt: 1,
            answer: nudge::engine::FetchAnswer::Response {
                status: 500,
                body: json!({}),
                ms: 5,
            },
        },
        "2026-12-04T20:00:02Z",
    );
    let e = explain(&d.state, &d.flow, t("2026-12-04T20:00:03Z"));
    assert_eq!(e.reason, Some(WaitReason::Fetch));
    let retry = e.until.expect("the retry's instant");
    assert!(
        retry > t("2026-12-04T20:00:03Z") && retry < t("2026-12-04T20:01:03Z"),
        "{retry}"
    );
    assert!(
        e.sentence
            .starts_with("Waiting at step `deal` to retry: attempt 2 of 3 goes at "),
        "{}",
        e.sentence
    );
}
