//! The interpreter, one step type at a time. Expected instants were worked out by hand and
//! checked with Python's `zoneinfo` (`datetime(..., tzinfo=ZoneInfo(z), fold=0)`), not copied
//! from this code.

use crate::engine_support as support;

use nudge::engine::effect::{Effect, JourneyEntry};
use nudge::engine::state::{Status, TaskPhase};
use nudge::engine::{Input, Signal};
use serde_json::json;
use support::*;

/// `wait` (duration / until / expression, zone rule, DST, past targets).
#[test]
fn wait_targets() {
    // (name, wait params, contact tz, start, input, expected until)
    let cases = [
        // Fri 15:00 New York + 2bd = Tue 15:00 (contact zone, the default `send_window.tz`).
        (
            "2bd from Friday",
            json!({"duration": "2bd"}),
            Some("America/New_York"),
            "2026-12-04T20:00:00Z",
            json!({}),
            "2026-12-08T20:00:00Z",
        ),
        // 1d across the spring-forward night in New York is 23 hours.
        (
            "1d across DST",
            json!({"duration": "1d"}),
            Some("America/New_York"),
            "2026-03-07T17:00:00Z",
            json!({}),
            "2026-03-08T16:00:00Z",
        ),
        // no contact zone: the sender's (Europe/Prague), 1d across the fall-back night = 25h.
        (
            "sender zone",
            json!({"for": "1d"}),
            None,
            "2026-10-24T10:00:00Z",
            json!({}),
            "2026-10-25T11:00:00Z",
        ),
        // an explicit tz wins over the contact's.
        (
            "explicit tz",
            json!({"duration": "1d", "tz": "Europe/Prague"}),
            Some("America/New_York"),
            "2026-10-24T10:00:00Z",
            json!({}),
            "2026-10-25T11:00:00Z",
        ),
        // a wall clock read in the contact's zone.
        (
            "until wall clock",
            json!({"until": "2026-12-10 09:00"}),
            Some("America/New_York"),
            "2026-12-04T20:00:00Z",
            json!({}),
            "2026-12-10T14:00:00Z",
        ),
        // an expression: milliseconds of input.
        (
            "expression",
            json!({"duration": "$: input.wait_ms"}),
            None,
            "2026-12-04T20:00:00Z",
            json!({"wait_ms": 90000}),
            "2026-12-04T20:01:30Z",
        ),
        (
            "zero",
            json!({"duration": "0s"}),
            None,
            "2026-12-04T20:00:00Z",
            json!({}),
            "2026-12-04T20:00:00Z",
        ),
    ];
    for (name, params, tz, start, input, want) in cases {
        let f = flow_of(
            "w",
            json!({}),
            json!({
                "w": {"type": "wait", "params": params, "next": {"then": "done"}},
                "done": {"type": "end", "params": {"outcome": "ok"}}
            }),
        );
        let mut d = Driver::with_input(f, contact(tz, None, None), "Europe/Prague", input);
        d.apply(Input::Start, start);
        let opened = d.effects.iter().find_map(|e| match e {
            Effect::RunOpened(r) if r.step == "w" => Some(r.clone()),
            _ => None,
        });
        assert_eq!(opened.unwrap().until, Some(t(want)), "{name}");
        if want == start {
            // no time to wait: the same call ran through to the end
            assert_eq!(d.state.status, Status::Completed, "{name}");
        } else {
            assert_eq!(d.state.next_run_at, Some(t(want)), "{name}");
            // an early wake does nothing
            let before = d.state.clone();
            d.apply(Input::Wake, start);
            assert_eq!(d.state, before, "{name}: early wake");
            d.wake();
            assert_eq!(d.state.status, Status::Completed, "{name}");
        }
        assert_eq!(d.state.outcome.as_deref(), Some("ok"), "{name}");
        assert_eq!(d.closed(), vec![cb("w", "then", None), c("done")], "{name}");
    }
}

/// A timing slot whose expression reads a value that is absent when the step is entered fails
/// the step with `EXPR_MISSING` (the flow should test it with `exists` first); an expression that
/// cannot be computed from values that are there stays `EXPR_TYPE`.
#[test]
fn a_missing_value_in_a_timing_slot_is_expr_missing() {
    // (wait params, input, code, text the message names)
    let cases = [
        (
            json!({"until": "$: input.at"}),
            json!({}),
            "EXPR_MISSING",
            "`input.at` is missing",
        ),
        (
            json!({"duration": "$: input.wait_ms * 2"}),
            json!({}),
            "EXPR_MISSING",
            "`input.wait_ms` is missing",
        ),
        (
            json!({"duration": "$: fetch.status"}),
            json!({}),
            "EXPR_MISSING",
            "`fetch.status` is missing",
        ),
        (
            json!({"duration": "$: 1000 / (input.wait_ms - 5)"}),
            json!({"wait_ms": 5}),
            "EXPR_TYPE",
            "division by zero",
        ),
    ];
    for (params, input, code, needle) in cases {
        let f = flow_of(
            "w",
            json!({}),
            json!({
                "w": {"type": "wait", "params": params, "next": {"then": "done"}},
                "done": {"type": "end"}
            }),
        );
        let mut d = Driver::with_input(f, contact(None, None, None), "UTC", input);
        d.apply(Input::Start, "2026-12-04T20:00:00Z");
        assert_eq!(d.state.status, Status::Failed, "{params}");
        let failed = d.journey().into_iter().find_map(|j| match j {
            JourneyEntry::Failed {
                code,
                step,
                message,
            } => Some((code, step, message)),
            _ => None,
        });
        let (got, step, message) = failed.expect("a failed entry");
        assert_eq!(got.as_str(), code, "{params}: {message}");
        assert_eq!(step.as_deref(), Some("w"), "{params}");
        assert!(message.contains(needle), "{params}: {message}");
        if code == "EXPR_MISSING" {
            assert!(message.contains("`exists`"), "{params}: {message}");
        }
    }
}

/// docs/timing.md, "A target already in the past": a `wait` whose target is past clamps to now and wakes in the same call.
#[test]
fn past_until_clamps_to_now() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"until": "2026-01-01T00:00:00Z"}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert_eq!(d.state.status, Status::Completed);
    match &d.effects[1] {
        Effect::RunOpened(r) => assert_eq!(r.until, Some(t("2026-12-04T20:00:00Z"))),
        other => panic!("{other:?}"),
    }
}

fn wait_for_flow(timeout: Option<serde_json::Value>, wire_timeout: bool) -> nudge::flow::Flow {
    let mut params = json!({"events": ["reply"]});
    if let Some(to) = timeout {
        params["timeout"] = to;
    }
    let mut next = json!({"reply": "replied"});
    if wire_timeout {
        next["timeout"] = json!("late");
    }
    flow_of(
        "wf",
        json!({}),
        json!({
            "wf": {"type": "wait_for", "params": params, "next": next},
            "replied": {"type": "end", "params": {"outcome": "replied"}},
            "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    )
}

/// `wait_for` timeouts: wired, unwired (completes, docs/flows.md, "Timeouts"), `{until, tz}`, past (→ timeout at
/// once), none (forever, or `max_wait`, docs/flows.md, "Plan limits").
#[test]
fn wait_for_timeouts() {
    // (name, timeout, wired, max_wait, expected until, expected state after waking, outcome)
    let cases = [
        (
            "wired",
            Some(json!("1d")),
            true,
            None,
            Some("2026-12-05T20:00:00Z"),
            Status::Completed,
            Some("late"),
        ),
        (
            "unwired completes",
            Some(json!("1d")),
            false,
            None,
            Some("2026-12-05T20:00:00Z"),
            Status::Completed,
            None,
        ),
        // Start is Fri 21:00 in Prague: today's 17:00 has passed, so the next Friday's,
        // 2026-12-11 17:00 CET = 16:00Z.
        (
            "until with tz",
            Some(json!({"until": "fri 17:00", "tz": "Europe/Prague"})),
            true,
            None,
            Some("2026-12-11T16:00:00Z"),
            Status::Completed,
            Some("late"),
        ),
        (
            "for object",
            Some(json!({"for": "2h"})),
            true,
            None,
            Some("2026-12-04T22:00:00Z"),
            Status::Completed,
            Some("late"),
        ),
        (
            "no timeout, max_wait",
            None,
            false,
            Some("7d"),
            Some("2026-12-11T20:00:00Z"),
            Status::Completed,
            None,
        ),
        (
            "no timeout, forever",
            None,
            false,
            None,
            None,
            Status::Active,
            None,
        ),
    ];
    for (name, timeout, wired, max_wait, want_until, want_state, want_outcome) in cases {
        let mut d = Driver::new(
            wait_for_flow(timeout, wired),
            contact(Some("America/New_York"), None, None),
            "UTC",
        );
        d.ctx.max_wait = max_wait.map(|m| nudge::timing::Duration::parse(m).unwrap());
        d.apply(Input::Start, "2026-12-04T20:00:00Z");
        assert_eq!(d.run().until, want_until.map(t), "{name}");
        assert_eq!(d.state.next_run_at, want_until.map(t), "{name}");
        assert_eq!(d.run().events, vec!["reply".to_string()], "{name}");
        if want_until.is_some() {
            d.wake();
            assert_eq!(d.closed()[0], cb("wf", "timeout", None), "{name}");
        }
        assert_eq!(d.state.status, want_state, "{name}");
        assert_eq!(d.state.outcome.as_deref(), want_outcome, "{name}");
    }
}

/// docs/timing.md, "A target already in the past": a timeout already past takes the `timeout` branch at once.
#[test]
fn past_timeout_takes_the_timeout_branch() {
    let mut d = Driver::new(
        wait_for_flow(Some(json!({"until": "2026-01-01T00:00:00Z"})), true),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert_eq!(d.closed(), vec![cb("wf", "timeout", None), c("late")]);
    assert_eq!(d.state.status, Status::Completed);
}

/// docs/flows.md, "Plan limits": a wait computed at run time beyond `max_wait` fails the enrollment when it starts.
#[test]
fn max_wait_at_run_time() {
    // (name, wait params, input, fails)
    let cases = [
        (
            "expression over the limit",
            json!({"duration": "$: input.wait_ms"}),
            json!({"wait_ms": 8 * 86_400_000u64}),
            true,
        ),
        (
            "expression within",
            json!({"duration": "$: input.wait_ms"}),
            json!({"wait_ms": 6 * 86_400_000u64}),
            false,
        ),
        (
            "until over the limit",
            json!({"until": "2026-12-20 09:00"}),
            json!({}),
            true,
        ),
        (
            "until within",
            json!({"until": "2026-12-10 09:00"}),
            json!({}),
            false,
        ),
    ];
    for (name, params, input, fails) in cases {
        let f = flow_of(
            "w",
            json!({}),
            json!({
                "w": {"type": "wait", "params": params, "next": {"then": "done"}},
                "done": {"type": "end"}
            }),
        );
        let mut d = Driver::with_input(f, contact(None, None, None), "UTC", input);
        d.ctx.max_wait = Some(nudge::timing::Duration::parse("7d").unwrap());
        d.apply(Input::Start, "2026-12-04T20:00:00Z");
        if fails {
            assert_eq!(d.state.status, Status::Failed, "{name}");
            assert!(
                d.state
                    .reason
                    .as_deref()
                    .unwrap()
                    .starts_with("WAIT_EXCEEDS_LIMIT"),
                "{name}"
            );
            assert_eq!(d.state.next_run_at, None, "{name}");
            assert!(d.journey().iter().any(|j| matches!(j, JourneyEntry::Failed { code, .. } if code == "WAIT_EXCEEDS_LIMIT")), "{name}");
        } else {
            assert_eq!(d.state.status, Status::Active, "{name}");
        }
    }
}

fn outreach_flow(kind: &str, settings: serde_json::Value) -> nudge::flow::Flow {
    flow_of(
        "o",
        settings,
        json!({
            "o": {"type": kind, "params": {"template": "intro", "channel": {"subject": "Hi"}}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    )
}

/// Outreach inside and outside the send window; the dispatch carries the idempotency key, the
/// recipient and, for email, the Message-ID.
#[test]
fn outreach_windows_and_dispatch() {
    let window = json!({"send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    // (name, kind, start, expected scheduled)
    let cases = [
        // Fri 15:00 New York: inside, goes at once.
        (
            "inside",
            "email",
            "2026-12-04T20:00:00Z",
            "2026-12-04T20:00:00Z",
        ),
        // Fri 18:00 New York: next opening Mon 09:00 = 14:00Z.
        (
            "after hours",
            "email",
            "2026-12-04T23:00:00Z",
            "2026-12-07T14:00:00Z",
        ),
        // Sat: Monday 09:00.
        (
            "weekend",
            "sms",
            "2026-12-05T15:00:00Z",
            "2026-12-07T14:00:00Z",
        ),
    ];
    for (name, kind, start, want) in cases {
        let mut d = Driver::new(
            outreach_flow(kind, window.clone()),
            contact(
                Some("America/New_York"),
                Some("+12125551234"),
                Some("ann@example.com"),
            ),
            "Europe/Prague",
        );
        let fx = d.apply(Input::Start, start);
        let opened = fx
            .iter()
            .find_map(|e| match e {
                Effect::RunOpened(r) => Some(r.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(opened.scheduled, Some(t(want)), "{name}");
        if want != start {
            assert!(
                !d.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))),
                "{name}: nothing before the window"
            );
            d.wake();
        }
        let dispatch = d
            .effects
            .iter()
            .find_map(|e| match e {
                Effect::Dispatch(x) => Some(x.clone()),
                _ => None,
            })
            .expect(name);
        assert_eq!(dispatch.idempotency_key, "enr-1:1", "{name}");
        assert_eq!(dispatch.template, "intro");
        assert_eq!(dispatch.channel_params.as_ref().unwrap()["subject"], "Hi");
        if kind == "email" {
            assert_eq!(dispatch.recipient, "ann@example.com");
            assert_eq!(dispatch.message_id.as_deref(), Some("<enr-1.1@nudge>"));
        } else {
            assert_eq!(dispatch.recipient, "+12125551234");
            assert_eq!(dispatch.message_id, None);
        }
        assert_eq!(d.state.status, Status::Completed, "{name}");
    }
}

/// SMS quiet hours: 08:00–21:00 in the recipient's zone, the zone inferred from the phone.
#[test]
fn sms_window_in_the_phone_zone() {
    // +1 212 is New York. At 02:00Z Saturday it is 21:00 Friday in New York: closed until
    // Saturday 08:00 = 13:00Z (no send window).
    let mut d = Driver::new(
        outreach_flow("sms", json!({})),
        contact(None, Some("+12125551234"), None),
        "Europe/Prague",
    );
    d.apply(Input::Start, "2026-12-05T02:00:00Z");
    assert_eq!(d.run().scheduled, Some(t("2026-12-05T13:00:00Z")));
}

/// Jitter: the same enrollment and run ids give the same instant; it stays within
/// `[opening, opening + jitter]` and inside the window.
#[test]
fn jitter_is_deterministic_and_bounded() {
    let settings = json!({"jitter": "20m", "send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    let mut seen = std::collections::BTreeSet::new();
    for n in 0..40 {
        let make = |id: &str| {
            let mut d = Driver::new(
                outreach_flow("email", settings.clone()),
                contact(Some("America/New_York"), None, Some("a@b.c")),
                "UTC",
            );
            d.state.id = id.to_string();
            // Sunday: the opening is Monday 09:00 New York = 14:00Z.
            d.apply(Input::Start, "2026-12-06T12:00:00Z");
            d.run().scheduled.unwrap()
        };
        let id = format!("enr-{n}");
        let a = make(&id);
        assert_eq!(a, make(&id), "same ids, same time");
        assert!(
            a >= t("2026-12-07T14:00:00Z") && a <= t("2026-12-07T14:20:00Z"),
            "{a}"
        );
        seen.insert(a);
    }
    assert!(
        seen.len() > 30,
        "jitter varies between enrollments: {} distinct",
        seen.len()
    );
    // Near the end of the window, jitter that falls past 17:00 is pushed to the next opening.
    let late = json!({"jitter": "2h", "send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    for n in 0..40 {
        let mut d = Driver::new(
            outreach_flow("email", late.clone()),
            contact(Some("America/New_York"), None, Some("a@b.c")),
            "UTC",
        );
        d.state.id = format!("late-{n}");
        d.apply(Input::Start, "2026-12-07T21:30:00Z"); // Mon 16:30 New York
        let s = d.run().scheduled.unwrap();
        let in_monday = s >= t("2026-12-07T21:30:00Z") && s < t("2026-12-07T22:00:00Z");
        let in_tuesday = s >= t("2026-12-08T14:00:00Z") && s <= t("2026-12-08T15:30:00Z");
        assert!(in_monday || in_tuesday, "{s}");
    }
}

/// docs/timing.md, "Send windows" step 4: at execution the gate checks again; the contact moved to Tokyo, where Monday
/// 09:00 New York (23:00 Tokyo) is outside the window: deferred to the next opening in Tokyo.
#[test]
fn deferral_at_execution() {
    let settings = json!({"send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    let mut d = Driver::new(
        outreach_flow("email", settings),
        contact(Some("America/New_York"), None, Some("a@b.c")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-06T12:00:00Z");
    assert_eq!(d.run().scheduled, Some(t("2026-12-07T14:00:00Z")));
    let mut moved = d.state.contact.clone();
    moved.tz = Some("Asia/Tokyo".into());
    d.apply(Input::ContactChanged(moved), "2026-12-06T13:00:00Z");
    assert_eq!(
        d.state.next_run_at,
        Some(t("2026-12-07T14:00:00Z")),
        "not re-planned: the time is fixed once, when the step is entered"
    );
    d.wake();
    // Tuesday 09:00 Tokyo = Tuesday 00:00Z.
    assert!(d.journey().contains(&JourneyEntry::Deferred {
        run: 1,
        step: "o".into(),
        to: t("2026-12-08T00:00:00Z"),
        reason: Some(nudge::timing::ClosedBy::Window),
        rule: None,
        cap: None,
    }));
    assert!(!d.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))));
    assert_eq!(
        d.run().scheduled,
        Some(t("2026-12-07T14:00:00Z")),
        "the planned time stays on the run"
    );
    assert_eq!(d.state.next_run_at, Some(t("2026-12-08T00:00:00Z")));
    d.wake();
    assert!(d.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))));
    assert_eq!(d.state.status, Status::Completed);
}

/// ZONE_UNKNOWN: a valid number with no zone (+800 international freephone) and no set zone.
/// Held: no dispatch, a journey entry, a held row for the dispatch stream, no wake time; a zone
/// set later plans it again.
#[test]
fn zone_unknown_holds_the_sms() {
    let mut d = Driver::new(
        outreach_flow("sms", json!({})),
        contact(None, Some("+80012345678"), None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert_eq!(d.state.status, Status::Active);
    assert_eq!(d.state.next_run_at, None);
    assert_eq!(
        d.run().hold.as_ref().map(|h| h.code.as_str()),
        Some("ZONE_UNKNOWN")
    );
    assert!(d
        .journey()
        .iter()
        .any(|j| matches!(j, JourneyEntry::Held { code, .. } if code == "ZONE_UNKNOWN")));
    assert!(d
        .effects
        .iter()
        .any(|e| matches!(e, Effect::DispatchHeld { code, .. } if code == "ZONE_UNKNOWN")));
    assert!(!d.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))));
    // 20:00Z Friday is 21:00 in Paris: the SMS window reopens Saturday 08:00 Paris = 07:00Z.
    let mut fixed = d.state.contact.clone();
    fixed.tz = Some("Europe/Paris".into());
    d.apply(Input::ContactChanged(fixed), "2026-12-04T20:00:00Z");
    assert_eq!(d.run().hold, None);
    assert_eq!(d.state.next_run_at, Some(t("2026-12-05T07:00:00Z")));
}

/// NO_OPENING: a New York 09:00–17:00 window (sender's zone) and a Tokyo recipient never overlap.
#[test]
fn no_opening_holds_the_sms() {
    let settings = json!({"send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00", "tz": "sender"}});
    let mut d = Driver::new(
        outreach_flow("sms", settings),
        contact(Some("Asia/Tokyo"), Some("+81312345678"), None),
        "America/New_York",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert_eq!(
        d.run().hold.as_ref().map(|h| h.code.as_str()),
        Some("NO_OPENING")
    );
    assert_eq!(d.state.next_run_at, None);
    assert_eq!(d.state.status, Status::Active);
}

/// An SMS to a contact who opted out of SMS is skipped; the flow goes on.
#[test]
fn sms_blocked_after_opt_out() {
    let mut who = contact(Some("America/New_York"), Some("+12125551234"), None);
    who.opted_out.insert("sms".into());
    let mut d = Driver::new(outreach_flow("sms", json!({})), who, "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert!(!d.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))));
    assert_eq!(d.closed(), vec![cb("o", "skipped", None), c("done")]);
    assert!(d.journey().iter().any(
        |j| matches!(j, JourneyEntry::Skipped { reason, .. } if reason.contains("opted out"))
    ));
}

fn task_flow(kind: &str, params: serde_json::Value, next: serde_json::Value) -> nudge::flow::Flow {
    flow_of(
        "task",
        json!({"exit_on": ["meeting_booked"]}),
        json!({
            "task": {"type": kind, "params": params, "next": next},
            "done": {"type": "end", "params": {"outcome": "done"}},
            "other": {"type": "end", "params": {"outcome": "other"}},
            "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    )
}

/// (name, kind, params, next, outcome, expected raised, expected branch, expected outcome)
type TaskCase = (
    &'static str,
    &'static str,
    serde_json::Value,
    serde_json::Value,
    &'static str,
    Vec<&'static str>,
    &'static str,
    &'static str,
);

/// Tasks: created when due, wait for their outcome, raise the events of docs/signals.md, "Kinds of signal and the events they raise", take the
/// outcome's own `next` key or `then`, time out.
#[test]
fn tasks() {
    // (name, kind, params, next, outcome, expected raised, expected branch, expected outcome)
    let cases: Vec<TaskCase> = vec![
        (
            "call connected",
            "call",
            json!({"connected_outcomes": ["connected"]}),
            json!({"then": "done"}),
            "connected",
            vec!["call_connected", "reply"],
            "then",
            "done",
        ),
        (
            "call not connected",
            "call",
            json!({"connected_outcomes": ["connected"]}),
            json!({"then": "done"}),
            "no_answer",
            vec![],
            "then",
            "done",
        ),
        (
            "outcome key",
            "call",
            json!({"connected_outcomes": ["connected"]}),
            json!({"then": "done", "connected": "other"}),
            "connected",
            vec!["call_connected", "reply"],
            "connected",
            "other",
        ),
        (
            "linkedin replied",
            "linkedin_message",
            json!({}),
            json!({"then": "done"}),
            "replied",
            vec!["reply", "reply:linkedin"],
            "then",
            "done",
        ),
        (
            "linkedin accepted",
            "linkedin_connect",
            json!({}),
            json!({"then": "done", "accepted": "other"}),
            "accepted",
            vec!["connection_accepted"],
            "accepted",
            "other",
        ),
    ];
    for (name, kind, params, next, outcome, raised, branch, end) in cases {
        let mut d = Driver::new(
            task_flow(kind, params, next),
            contact(None, None, None),
            "UTC",
        );
        d.apply(Input::Start, "2026-12-04T20:00:00Z");
        let task = d
            .effects
            .iter()
            .find_map(|e| match e {
                Effect::TaskCreated(x) => Some(x.clone()),
                _ => None,
            })
            .expect(name);
        assert_eq!(
            (
                task.step_type.as_str(),
                task.run,
                task.idempotency_key.as_str()
            ),
            (kind, 1, "enr-1:1"),
            "{name}"
        );
        assert_eq!(d.run().task, Some(TaskPhase::Open));
        assert_eq!(
            d.state.next_run_at, None,
            "{name}: no timeout, waits for the outcome"
        );
        // a signal never wakes a task
        d.apply(
            Input::Signal(Signal::reply("s1", "email")),
            "2026-12-04T21:00:00Z",
        );
        assert_eq!(d.run().task, Some(TaskPhase::Open), "{name}");
        let fx = d.apply(
            Input::TaskOutcome {
                run: 1,
                outcome: outcome.into(),
            },
            "2026-12-04T22:00:00Z",
        );
        let got: Vec<String> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::RaiseSignal { raises, .. } => Some(raises.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(got, raised, "{name}");
        assert_eq!(d.closed()[0], cb("task", branch, None), "{name}");
        assert_eq!(d.state.outcome.as_deref(), Some(end), "{name}");
    }
}

#[test]
fn task_timeout_and_window() {
    let settings = json!({"send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    let f = flow_of(
        "task",
        settings,
        json!({
            "task": {"type": "call", "params": {"timeout": "1bd"}, "next": {"then": "done", "timeout": "late"}},
            "done": {"type": "end"}, "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    );
    let mut d = Driver::new(f, contact(Some("America/New_York"), None, None), "UTC");
    // Saturday: the task is created Monday 09:00 New York (14:00Z), times out Tuesday 09:00.
    d.apply(Input::Start, "2026-12-05T15:00:00Z");
    assert_eq!(d.run().task, Some(TaskPhase::Scheduled));
    assert_eq!(d.state.next_run_at, Some(t("2026-12-07T14:00:00Z")));
    // an outcome for a task not created yet is rejected
    d.apply(
        Input::TaskOutcome {
            run: 1,
            outcome: "connected".into(),
        },
        "2026-12-06T15:00:00Z",
    );
    assert!(matches!(
        d.journey().last(),
        Some(JourneyEntry::Rejected { .. })
    ));
    d.wake();
    assert_eq!(d.run().until, Some(t("2026-12-08T14:00:00Z")));
    d.wake();
    assert_eq!(d.closed(), vec![cb("task", "timeout", None), c("late")]);
    assert_eq!(d.state.outcome.as_deref(), Some("late"));
}

/// An outcome raising an `exit_on` event exits this enrollment too.
#[test]
fn task_outcome_in_exit_on_exits() {
    let f = flow_of(
        "task",
        json!({"exit_on": ["call_connected"]}),
        json!({
            "task": {"type": "call", "params": {}, "next": {"then": "done"}}, "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        Input::TaskOutcome {
            run: 1,
            outcome: "connected".into(),
        },
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(d.state.status, Status::Exited);
    assert_eq!(d.state.reason.as_deref(), Some("exit_on:call_connected"));
}

/// Operators: move to a step, exit, complete; unknown steps are rejected without a change.
#[test]
fn operators() {
    let f = wait_for_flow(Some(json!("5d")), true);
    let mut d = Driver::new(f.clone(), contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let before = d.state.clone();
    d.apply(
        Input::MoveTo {
            step: "nowhere".into(),
        },
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(d.state, before);
    d.apply(
        Input::MoveTo {
            step: "late".into(),
        },
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(d.closed(), vec![cb("wf", "moved", None), c("late")]);
    assert!(d.journey().contains(&JourneyEntry::Moved {
        from: Some("wf".into()),
        to: "late".into()
    }));

    let mut d = Driver::new(f.clone(), contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        Input::Exit {
            reason: "operator".into(),
        },
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(
        (d.state.status, d.state.reason.as_deref()),
        (Status::Exited, Some("operator"))
    );
    assert_eq!(d.closed(), vec![cb("wf", "exit", None)]);
    assert_eq!(d.state.next_run_at, None);
    // finished: further operator inputs are rejected
    d.apply(Input::Resume, "2026-12-04T22:00:00Z");
    assert_eq!(d.state.status, Status::Exited);

    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        Input::Complete {
            outcome: Some("manual".into()),
        },
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(
        (d.state.status, d.state.outcome.as_deref()),
        (Status::Completed, Some("manual"))
    );
}

/// The state survives a JSON round trip (storage keeps it as JSON).
#[test]
fn state_round_trips_through_json() {
    let mut d = Driver::new(
        wait_for_flow(Some(json!("1d")), true),
        contact(Some("America/New_York"), None, None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        Input::Signal(Signal::raising("s1", &["payment.1"])),
        "2026-12-04T20:30:00Z",
    );
    let json = serde_json::to_string(&d.state).unwrap();
    let back: nudge::engine::EnrollmentState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d.state);
    assert_eq!(back.buffer.len(), 1);
}

/// The state survives the stored encoding (MessagePack, `store::state_encoding`), and a state
/// stored as JSON before it reads back the same: with a buffered signal, every optional field
/// of a run set, instants with and without a finer part than milliseconds, and JSON values of
/// every kind in the input and the contact's attributes.
#[test]
fn state_round_trips_through_the_stored_encoding() {
    use nudge::store::state_encoding::{decode, encode};
    let mut d = Driver::with_input(
        wait_for_flow(Some(json!("1d")), true),
        contact(
            Some("America/New_York"),
            Some("+14155550100"),
            Some("a@example.com"),
        ),
        "UTC",
        json!({"n": -3, "x": 1.5, "big": u64::MAX, "s": "é \"q\"\n", "a": [null, true, {}]}),
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        Input::Signal(Signal::raising("s1", &["payment.1"])),
        "2026-12-04T20:30:00Z",
    );
    let mut full = d.state.clone();
    full.contact.opted_out.insert("sms".into());
    full.contact.attributes = json!({"tier": "gold", "seats": 12})
        .as_object()
        .unwrap()
        .clone();
    full.sent.insert(nudge::timing::Channel::Email);
    full.reason = Some("why".into());
    full.outcome = Some("won".into());
    full.away = Some(nudge::engine::state::Away {
        until: t("2026-12-06T09:00:00.123456789Z"),
        signal: "s2".into(),
    });
    let run = full.run.as_mut().unwrap();
    run.scheduled = Some(t("2026-12-05T10:00:00.250Z"));
    run.deferred_to = Some(t("1969-07-20T20:17:40.000001Z"));
    run.link_expires = Some(t("2100-01-01T00:00:00Z"));
    run.moved = true;
    run.pending_outcome = Some("interested".into());
    run.rule = Some("US-FL".into());
    run.hold = Some(nudge::engine::state::Hold {
        code: nudge::code::Code::ZoneUnknown,
        message: "set the zone".into(),
    });
    for state in [&d.state, &full] {
        let bytes = encode(state);
        assert_eq!(bytes[0], 1, "tagged");
        assert_eq!(&decode(&bytes).unwrap(), state);
        let json = serde_json::to_vec(state).unwrap();
        assert_eq!(&decode(&json).unwrap(), state, "a state stored as JSON");
        assert!(
            bytes.len() < json.len(),
            "{} bytes against JSON's {}",
            bytes.len(),
            json.len()
        );
    }
}

/// Every effect kind survives a JSON round trip (storage may keep journey entries as JSON), and
/// the tags do not collide (`kind` for the effect, `event` for the journey entry, `effect` for
/// what a signal did).
#[test]
fn effects_round_trip_through_json() {
    let settings = json!({"send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"}});
    let f = flow_of(
        "o",
        settings,
        json!({
            "o": {"type": "email", "params": {"template": "intro"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "call", "timeout": "call"}},
            "call": {"type": "call", "params": {}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(
        f,
        contact(Some("America/New_York"), None, Some("a@b.c")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-06T12:00:00Z");
    d.apply(
        Input::Signal(Signal::raising("p", &["payment.1"])),
        "2026-12-06T12:30:00Z",
    );
    d.apply(Input::Pause, "2026-12-06T13:00:00Z");
    d.apply(
        Input::Signal(Signal::reply("ign", "email")),
        "2026-12-06T13:30:00Z",
    );
    d.apply(Input::Resume, "2026-12-06T14:00:00Z");
    d.wake();
    d.apply(
        Input::Signal(Signal::reply("r", "email")),
        "2026-12-07T15:00:00Z",
    );
    d.apply(
        Input::TaskOutcome {
            run: 3,
            outcome: "connected".into(),
        },
        "2026-12-07T16:00:00Z",
    );
    d.apply(
        Input::MoveTo {
            step: "nowhere".into(),
        },
        "2026-12-07T16:00:00Z",
    );
    let kinds: std::collections::BTreeSet<String> = d
        .effects
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for k in [
        "run_opened",
        "run_closed",
        "dispatch",
        "task_created",
        "raise_signal",
        "journey",
    ] {
        assert!(kinds.contains(k), "{k} missing from {kinds:?}");
    }
    for e in &d.effects {
        let v = serde_json::to_value(e).unwrap();
        let back: Effect =
            serde_json::from_value(v.clone()).unwrap_or_else(|err| panic!("{v}: {err}"));
        assert_eq!(&back, e);
    }
    let woke = d
        .effects
        .iter()
        .find(
            |e| matches!(e, Effect::Journey(JourneyEntry::Signal { signal, .. }) if signal == "r"),
        )
        .unwrap();
    assert_eq!(
        serde_json::to_value(woke).unwrap(),
        json!({"kind": "journey", "event": "signal", "signal": "r", "effect": "woke", "run": 2, "branch": "reply"})
    );
}

/// A cycle through a `wait` of zero is legal to the validator (it contains a wait) but never
/// lets time pass: the loop guard fails the enrollment instead of spinning, and the failed
/// transition leaves nothing but the failure (docs/service.md, "Errors"): none of the 5,000 emails it walked
/// through, no run of a step it entered.
#[test]
fn loop_guard() {
    let f = flow_of(
        "e",
        json!({}),
        json!({
            "e": {"type": "email", "params": {"template": "x"}, "next": {"then": "w"}},
            "w": {"type": "wait", "params": {"duration": "$: input.wait_ms"}, "next": {"then": "e"}}
        }),
    );
    let mut d = Driver::with_input(
        f,
        contact(None, None, Some("a@b.c")),
        "UTC",
        json!({"wait_ms": 0}),
    );
    let fx = d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert_eq!(d.state.status, Status::Failed);
    assert!(
        d.state.reason.as_deref().unwrap().starts_with("LOOP_GUARD"),
        "{:?}",
        d.state.reason
    );
    assert_eq!(
        fx.len(),
        2,
        "only the enrollment and its failure: {:?}",
        &fx[..fx.len().min(4)]
    );
    assert_eq!(
        fx[0],
        Effect::Journey(JourneyEntry::Enrolled { step: "e".into() })
    );
    assert!(
        matches!(&fx[1], Effect::Journey(JourneyEntry::Failed { code, step, .. })
            if code == "LOOP_GUARD" && step.as_deref() == Some("e")),
        "{:?}",
        fx[1]
    );
    assert_eq!(
        d.state.last_run_id, 0,
        "no run of the failed transition is kept"
    );
    assert_eq!((d.state.run.as_ref(), d.state.next_run_at), (None, None));
}

/// docs/service.md, "Errors" for any failure at run time: an email, then a wait computed beyond `max_wait`. The
/// failed transition sends no email; the journey has the wait that woke, closed on `failed`,
/// and the failure naming the step that could not run.
#[test]
fn a_failed_transition_commits_nothing_but_the_failure() {
    let f = flow_of(
        "first",
        json!({}),
        json!({
            "first": {"type": "wait", "params": {"duration": "1h"}, "next": {"then": "e"}},
            "e": {"type": "email", "params": {"template": "x"}, "next": {"then": "long"}},
            "long": {"type": "wait", "params": {"duration": "$: input.wait_ms"}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::with_input(
        f,
        contact(None, None, Some("a@b.c")),
        "UTC",
        json!({"wait_ms": 30 * 86_400_000i64}),
    );
    d.ctx.max_wait = Some(nudge::timing::Duration::parse("7d").unwrap());
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let before = d.state.clone();
    let fx = d.wake();
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Dispatch(_))),
        "{fx:?}"
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::RunOpened(_))),
        "{fx:?}"
    );
    assert_eq!(fx.len(), 2, "{fx:?}");
    assert!(matches!(&fx[0], Effect::RunClosed { step, branch, .. }
        if step == "first" && branch.as_deref() == Some("failed")));
    assert!(
        matches!(&fx[1], Effect::Journey(JourneyEntry::Failed { code, step, .. })
        if code == "WAIT_EXCEEDS_LIMIT" && step.as_deref() == Some("long"))
    );
    assert_eq!(d.state.status, Status::Failed);
    assert_eq!(d.state.last_run_id, before.last_run_id);
    // What the input itself did is kept: a signal that woke a wait still says so.
    let f = flow_of(
        "wf",
        json!({}),
        json!({
            "wf": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "e", "timeout": "done"}},
            "e": {"type": "email", "params": {"template": "x"}, "next": {"then": "long"}},
            "long": {"type": "wait", "params": {"duration": "$: input.wait_ms"}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::with_input(
        f,
        contact(None, None, Some("a@b.c")),
        "UTC",
        json!({"wait_ms": 30 * 86_400_000i64}),
    );
    d.ctx.max_wait = Some(nudge::timing::Duration::parse("7d").unwrap());
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let fx = d.apply(
        Input::Signal(Signal::reply("r", "email")),
        "2026-12-04T21:00:00Z",
    );
    let kinds: Vec<&str> = fx
        .iter()
        .map(|e| nudge::engine::JourneyKind::of(e).as_str())
        .collect();
    assert_eq!(kinds, ["signal", "run_closed", "failed"], "{fx:?}");
}

/// Inputs that cannot apply leave the state unchanged and say why in the journey: an outcome a
/// task does not accept, an outcome for another run, a second start.
#[test]
fn rejected_inputs_change_nothing() {
    let f = flow_of(
        "call",
        json!({}),
        json!({
            "call": {"type": "call", "params": {"outcomes": ["connected", "no_answer"]}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let before = d.state.clone();
    for (input, needle) in [
        (
            Input::TaskOutcome {
                run: 1,
                outcome: "maybe".into(),
            },
            "one of connected, no_answer",
        ),
        (
            Input::TaskOutcome {
                run: 7,
                outcome: "connected".into(),
            },
            "not an open task",
        ),
        (Input::Start, "already started"),
        (Input::Resume, "not paused"),
    ] {
        let fx = d.apply(input, "2026-12-04T21:00:00Z");
        assert_eq!(d.state, before);
        match fx.as_slice() {
            [Effect::Journey(JourneyEntry::Rejected { reason, .. })] => {
                assert!(reason.contains(needle), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
    d.apply(
        Input::TaskOutcome {
            run: 1,
            outcome: "no_answer".into(),
        },
        "2026-12-04T22:00:00Z",
    );
    assert_eq!(d.state.status, Status::Completed);
}
