//! The interpreter's `Migrate`: a run carries on as a step of another version of its flow —
//! its wake time, timeout and buffered signals kept, nothing entered again (so nothing sent
//! twice), the new version's branches taken from there; a `wait_for` listens for the new
//! version's events (a buffered signal one of them matches is taken as on entry); a step of
//! another type, or one the version lacks, is refused and nothing changes.

use crate::engine_support::*;
use nudge::engine::effect::{Effect, JourneyEntry};
use nudge::engine::input::Signal;
use nudge::engine::Input;
use serde_json::json;

fn v1() -> nudge::flow::Flow {
    flow_of(
        "mail",
        json!({}),
        json!({
            "mail": {"type": "email", "params": {"template": "t1"}, "next": {"then": "listen"}},
            "listen": {"type": "wait_for", "params": {"events": ["meeting_booked"], "timeout": {"for": "3d"}},
                       "next": {"meeting_booked": "done", "timeout": "done"}},
            "done": {"type": "end"}
        }),
    )
}

/// Version 2 renames `listen` to `wait_reply`, listens for replies too, and sends a follow-up
/// on a reply.
fn v2() -> nudge::flow::Flow {
    flow_of(
        "mail",
        json!({}),
        json!({
            "mail": {"type": "email", "params": {"template": "t1"}, "next": {"then": "wait_reply"}},
            "wait_reply": {"type": "wait_for", "params": {"events": ["reply", "meeting_booked"], "timeout": {"for": "3d"}},
                           "next": {"reply": "thanks", "meeting_booked": "done", "timeout": "done"}},
            "thanks": {"type": "email", "params": {"template": "thanks"}, "next": {"then": "done"}},
            "done": {"type": "end"}
        }),
    )
}

fn started() -> Driver {
    let mut d = Driver::new(
        v1(),
        contact(Some("UTC"), None, Some("a@example.com")),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-07T10:00:00Z");
    d
}

#[test]
fn a_waiting_run_keeps_its_timer_and_takes_a_buffered_signal_the_new_version_listens_for() {
    let mut d = started();
    // A reply the first version does not listen for is buffered.
    d.apply(
        Input::Signal(Signal::reply("sg-1", "email")),
        "2026-12-07T11:00:00Z",
    );
    let before = d.state.clone();
    let run = before.run.clone().unwrap();
    assert_eq!(run.step, "listen");
    assert!(!before.buffer.is_empty(), "the reply is buffered");

    d.flow = v2();
    let fx = d.apply(
        Input::Migrate {
            to_version: 2,
            step: "wait_reply".into(),
        },
        "2026-12-07T12:00:00Z",
    );
    assert_eq!(d.state.flow.version, 2);
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Journey(JourneyEntry::Migrated {
        from_version: 1, to_version: 2, from_step, to_step
    }) if from_step == "listen" && to_step == "wait_reply")),
        "{fx:?}"
    );
    // The buffered reply is taken as on entry: the new branch runs, the follow-up is sent once.
    let sent: Vec<&str> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch(x) => Some(x.template.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, ["thanks"], "{fx:?}");
    assert!(
        !fx.iter().any(
            |e| matches!(e, Effect::RunOpened(r) if r.step == "wait_reply" || r.step == "mail")
        ),
        "nothing is entered again: {fx:?}"
    );
}

#[test]
fn without_a_matching_signal_the_run_waits_on_with_its_timeout() {
    let mut d = started();
    let until = d.state.run.clone().unwrap().until;
    let run_id = d.state.run.clone().unwrap().id;
    d.flow = v2();
    let fx = d.apply(
        Input::Migrate {
            to_version: 2,
            step: "wait_reply".into(),
        },
        "2026-12-07T12:00:00Z",
    );
    let run = d.state.run.clone().unwrap();
    assert_eq!(
        (run.id, run.step.as_str(), run.until),
        (run_id, "wait_reply", until)
    );
    assert_eq!(run.events, ["reply", "meeting_booked"]);
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::Dispatch(_) | Effect::RunOpened(_))),
        "{fx:?}"
    );
    // The new version's branch is taken by a reply from now on.
    let fx = d.apply(
        Input::Signal(Signal::reply("sg-2", "email")),
        "2026-12-07T13:00:00Z",
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Dispatch(x) if x.template == "thanks")),
        "{fx:?}"
    );
}

#[test]
fn a_step_of_another_type_or_unknown_is_refused_and_nothing_changes() {
    let mut d = started();
    let before = d.state.clone();
    d.flow = v2();
    for step in ["thanks", "nowhere"] {
        let fx = d.apply(
            Input::Migrate {
                to_version: 2,
                step: step.into(),
            },
            "2026-12-07T12:00:00Z",
        );
        assert!(fx.iter().any(|e| matches!(e, Effect::Journey(JourneyEntry::Rejected { input, .. }) if input == "migrate")), "{step}: {fx:?}");
        assert_eq!(d.state.flow, before.flow, "{step}");
        assert_eq!(d.state.run, before.run, "{step}");
    }
}

/// An email scheduled inside its send window keeps the moment it was fixed at (the move
/// computes nothing again) and the variants assigned stay; at that moment the windows are
/// checked again as at every execution, the new version's: narrowed, it defers the email to its
/// opening, where it is sent once.
#[test]
fn a_scheduled_step_keeps_its_moment_and_the_variants_stay() {
    let windowed = |template: &str, window: serde_json::Value| {
        flow_of(
            "mail",
            json!({ "send_window": window }),
            json!({
                "mail": {"type": "email", "params": {"template": template}, "next": {"then": "done"}},
                "done": {"type": "end"}
            }),
        )
    };
    let office = json!({"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00", "tz": "contact"});
    let late = json!({"days": ["mon","tue","wed","thu","fri"], "from": "13:00", "to": "17:00", "tz": "contact"});
    let mut d = Driver::new(
        windowed("t1", office),
        contact(Some("UTC"), None, Some("a@example.com")),
        "UTC",
    );
    // Monday 20:00: the email waits for Tuesday's window.
    d.apply(Input::Start, "2026-12-07T20:00:00Z");
    d.state.variants.insert("test/mail".into(), "b".into());
    let before = d.state.clone();
    let run = before.run.clone().unwrap();
    assert_eq!(run.step, "mail");
    assert!(run.scheduled.is_some(), "{run:?}");

    d.flow = windowed("t2", late);
    let fx = d.apply(
        Input::Migrate {
            to_version: 2,
            step: "mail".into(),
        },
        "2026-12-07T21:00:00Z",
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Dispatch(_))),
        "{fx:?}"
    );
    let after = d.state.run.clone().unwrap();
    assert_eq!(
        (after.id, after.scheduled, d.state.next_run_at),
        (run.id, run.scheduled, before.next_run_at)
    );
    assert_eq!(d.state.variants, before.variants);

    // At the moment fixed before the move, the new window (13:00) is not open yet.
    let at = before.next_run_at.unwrap().to_rfc3339();
    let fx = d.apply(Input::Wake, &at);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Dispatch(_))),
        "{fx:?}"
    );
    assert_eq!(
        d.state.next_run_at.map(|t| t.to_rfc3339()),
        Some("2026-12-08T13:00:00+00:00".to_string())
    );
    let fx = d.apply(Input::Wake, "2026-12-08T13:00:00Z");
    let sent: Vec<&str> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch(x) => Some(x.template.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, ["t2"], "{fx:?}");
}

/// A paused enrollment moves and stays paused; its buffered signal waits for the resume.
#[test]
fn a_paused_run_moves_and_stays_paused() {
    let mut d = started();
    d.apply(Input::Pause, "2026-12-07T10:30:00Z");
    d.apply(
        Input::Signal(Signal::reply("sg-1", "email")),
        "2026-12-07T11:00:00Z",
    );
    d.flow = v2();
    let fx = d.apply(
        Input::Migrate {
            to_version: 2,
            step: "wait_reply".into(),
        },
        "2026-12-07T12:00:00Z",
    );
    assert_eq!(d.state.status, nudge::engine::Status::Paused);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Dispatch(_))),
        "{fx:?}"
    );
    assert_eq!(d.state.run.clone().unwrap().step, "wait_reply");
}
