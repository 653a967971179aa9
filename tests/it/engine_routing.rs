//! docs/signals.md, "Routing", rule by rule, through the interpreter (the pure decisions themselves are unit
//! tested in `src/routing`).

use crate::engine_support as support;

use nudge::engine::effect::{JourneyEntry, SignalEffect};
use nudge::engine::state::Status;
use nudge::engine::{Input, Signal};
use nudge::routing::{Dropped, BUFFER_CAP};
use serde_json::json;
use support::*;

const T0: &str = "2026-12-04T20:00:00Z";

fn listening(events: &[&str]) -> nudge::flow::Flow {
    let mut next = serde_json::Map::new();
    for e in events {
        next.insert(
            e.to_string(),
            json!(format!("end_{}", e.replace([':', '.'], "_"))),
        );
    }
    next.insert("timeout".into(), json!("end_timeout"));
    let mut steps = serde_json::Map::new();
    steps.insert(
        "wf".into(),
        json!({"type": "wait_for", "params": {"events": events, "timeout": "5d"}, "next": next}),
    );
    for e in events
        .iter()
        .map(|e| e.replace([':', '.'], "_"))
        .chain(["timeout".to_string()])
    {
        steps.insert(
            format!("end_{e}"),
            json!({"type": "end", "params": {"outcome": e}}),
        );
    }
    flow_of(
        "wf",
        json!({"exit_on": ["meeting_booked"]}),
        serde_json::Value::Object(steps),
    )
}

/// Rule 3, precedence: which listed event a signal wakes.
#[test]
fn wake_picks_the_specific_event() {
    // (listed, signal, expected branch)
    let cases = [
        (
            vec!["reply", "call_connected"],
            Signal::call_connected("s"),
            "call_connected",
        ),
        (
            vec!["call_connected", "reply"],
            Signal::call_connected("s"),
            "call_connected",
        ),
        (vec!["reply"], Signal::call_connected("s"), "reply"),
        (
            vec!["reply", "reply:sms"],
            Signal::reply("s", "sms"),
            "reply:sms",
        ),
        (
            vec!["reply:sms", "reply"],
            Signal::reply("s", "email"),
            "reply",
        ),
        (
            vec!["payment.done"],
            Signal::raising("s", &["payment.done"]),
            "payment.done",
        ),
    ];
    for (listed, signal, want) in cases {
        let mut d = Driver::new(listening(&listed), contact(None, None, None), "UTC");
        d.apply(Input::Start, T0);
        d.apply(Input::Signal(signal), "2026-12-05T10:00:00Z");
        assert_eq!(d.closed()[0], cb("wf", want, Some("s")), "{listed:?}");
        assert_eq!(
            d.signal_effects("s"),
            vec![SignalEffect::Woke {
                run: 1,
                branch: want.into(),
                payload: Default::default()
            }]
        );
        assert_eq!(d.state.status, Status::Completed);
    }
}

/// Rule 4: a reply that arrives during the first wait is buffered and consumed, oldest first and
/// once, by the second wait when it is entered.
#[test]
fn buffered_reply_consumed_by_the_second_wait() {
    let f = flow_of(
        "first",
        json!({}),
        json!({
            "first": {"type": "wait_for", "params": {"events": ["payment.done"], "timeout": "1d"}, "next": {"payment.done": "paid", "timeout": "second"}},
            "second": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "third", "timeout": "late"}},
            "third": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "replied", "timeout": "late"}},
            "paid": {"type": "end"}, "replied": {"type": "end", "params": {"outcome": "replied"}}, "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(Signal::reply("r1", "email")),
        "2026-12-04T21:00:00Z",
    );
    d.apply(
        Input::Signal(Signal::reply("r2", "sms")),
        "2026-12-04T22:00:00Z",
    );
    assert_eq!(d.state.buffer.len(), 2);
    assert_eq!(
        d.signal_effects("r1"),
        vec![SignalEffect::Buffered {
            payload: Default::default()
        }]
    );
    // the first wait times out; the second consumes r1 (the oldest) without suspending, the
    // third consumes r2.
    d.wake();
    assert_eq!(
        d.closed(),
        vec![
            cb("first", "timeout", None),
            cb("second", "reply", Some("r1")),
            cb("third", "reply", Some("r2")),
            c("replied")
        ]
    );
    assert_eq!(
        d.signal_effects("r1")[1],
        SignalEffect::Consumed {
            run: 2,
            branch: "reply".into(),
            payload: Default::default()
        }
    );
    assert!(
        d.state.buffer.is_empty(),
        "each buffered signal is consumed once"
    );
}

/// Rule 4: a signal that arrives after a wait timed out is buffered like any other, and a later
/// wait picks it up.
#[test]
fn signal_after_a_timeout_is_buffered() {
    let f = flow_of(
        "a",
        json!({}),
        json!({
            "a": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1h"}, "next": {"reply": "done", "timeout": "pause"}},
            "pause": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "b"}},
            "b": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "done", "timeout": "late"}},
            "done": {"type": "end", "params": {"outcome": "replied"}}, "late": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.wake(); // a times out into the 1d wait
    d.apply(
        Input::Signal(Signal::reply("late-reply", "email")),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(
        d.signal_effects("late-reply"),
        vec![SignalEffect::Buffered {
            payload: Default::default()
        }],
        "a wait is never woken"
    );
    d.wake();
    assert_eq!(d.closed().last().unwrap(), &c("done"));
    assert!(d.closed().contains(&cb("b", "reply", Some("late-reply"))));
}

/// Rule 1: a paused enrollment ignores signals and does not buffer them.
#[test]
fn signal_during_a_pause() {
    let mut d = Driver::new(listening(&["reply"]), contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(Input::Pause, "2026-12-04T21:00:00Z");
    assert_eq!(
        d.state.next_run_at, None,
        "the planner leaves a paused enrollment alone"
    );
    d.apply(
        Input::Signal(Signal::reply("s", "email")),
        "2026-12-04T22:00:00Z",
    );
    assert_eq!(d.signal_effects("s"), vec![SignalEffect::IgnoredPaused]);
    assert!(d.state.buffer.is_empty());
    d.apply(Input::Resume, "2026-12-04T23:00:00Z");
    assert_eq!(d.state.status, Status::Active);
    assert_eq!(
        d.closed(),
        vec![],
        "the ignored reply does not wake it after resume"
    );
    assert_eq!(
        d.state.next_run_at,
        Some(t("2026-12-09T20:00:00Z")),
        "the timer kept running"
    );
}

/// docs/timing.md, "A target already in the past": timers run during a pause; a target that passed meanwhile fires at resume.
#[test]
fn resume_after_a_past_target() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"duration": "1h"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "2h"}, "next": {"reply": "done", "timeout": "late"}},
            "done": {"type": "end"}, "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(Input::Pause, "2026-12-04T20:30:00Z");
    d.apply(Input::Wake, "2026-12-04T21:00:00Z");
    assert_eq!(d.closed(), vec![], "a wake while paused does nothing");
    d.apply(Input::Resume, "2026-12-05T09:00:00Z");
    // the wait wakes at once; the wait_for's timeout counts from its entry (now)
    assert_eq!(d.closed(), vec![cb("w", "then", None)]);
    assert_eq!(d.run().entered, t("2026-12-05T09:00:00Z"));
    assert_eq!(d.state.next_run_at, Some(t("2026-12-05T11:00:00Z")));
}

/// Rule 2: an `exit_on` event while waiting exits; the waiting run closes on `exit` with the
/// signal as `woken_by`, even when the wait lists that event.
#[test]
fn exit_while_waiting() {
    let mut d = Driver::new(
        listening(&["reply", "meeting_booked"]),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(Signal::raising("m", &["meeting_booked"])),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.closed(), vec![cb("wf", "exit", Some("m"))]);
    assert_eq!(d.state.status, Status::Exited);
    assert_eq!(d.state.reason.as_deref(), Some("exit_on:meeting_booked"));
    assert_eq!(
        d.signal_effects("m"),
        vec![SignalEffect::Exited {
            reason: "exit_on:meeting_booked".into()
        }]
    );
    assert_eq!(d.state.next_run_at, None);
}

/// Rule 2: an opt-out exits too, whatever the step, and blocks the channel.
#[test]
fn opt_out_exits() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "done"}}, "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, Some("+12125551234"), None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(Signal::opt_out("stop", "sms")),
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(d.closed(), vec![cb("w", "exit", Some("stop"))]);
    assert_eq!(d.state.status, Status::Exited);
    assert_eq!(d.state.reason.as_deref(), Some("opt_out:sms"));
    assert!(d.state.contact.opted_out.contains("sms"));
}

/// A signal never wakes a `wait`, a task, or a `wait_for` not listing its events: buffered.
#[test]
fn signals_never_wake_what_does_not_wait_for_them() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["payment.done"], "timeout": "1d"}, "next": {"payment.done": "done", "timeout": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(Signal::reply("r", "email")),
        "2026-12-04T21:00:00Z",
    );
    assert_eq!(d.run().step, "w");
    d.wake();
    assert_eq!(d.run().step, "wf", "the buffered reply is not listed by wf");
    d.apply(
        Input::Signal(Signal::reply("r2", "sms")),
        "2026-12-05T21:00:00Z",
    );
    assert_eq!(d.run().step, "wf");
    assert_eq!(d.state.buffer.len(), 2);
}

/// Rule 4: a buffered signal is dropped after 7 days, with a journey entry.
#[test]
fn buffered_signals_expire_after_seven_days() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"duration": "8d"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "replied", "timeout": "late"}},
            "replied": {"type": "end", "params": {"outcome": "replied"}}, "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(
        Input::Signal(Signal::reply("old", "email")),
        "2026-12-04T21:00:00Z",
    );
    d.wake(); // 8 days later: the reply expired 7 days after it arrived
    assert_eq!(
        d.signal_effects("old"),
        vec![
            SignalEffect::Buffered {
                payload: Default::default()
            },
            SignalEffect::Expired {
                why: Dropped::Expired,
                at: t("2026-12-11T21:00:00Z")
            }
        ]
    );
    assert_eq!(d.run().step, "wf", "not consumed");
}

/// Rule 4: at most 1,000 are kept, the oldest dropped first.
#[test]
fn buffer_cap() {
    let mut d = Driver::new(
        listening(&["payment.done"]),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, T0);
    for i in 0..=BUFFER_CAP {
        d.apply(
            Input::Signal(Signal::reply(format!("r{i}"), "email")),
            "2026-12-04T21:00:00Z",
        );
    }
    assert_eq!(d.state.buffer.len(), BUFFER_CAP);
    assert_eq!(
        d.signal_effects("r0")[1],
        SignalEffect::Expired {
            why: Dropped::BufferFull,
            at: t("2026-12-04T21:00:00Z")
        }
    );
    assert_eq!(d.state.buffer.iter().next().unwrap().id, "r1");
}

/// A task outcome reported while paused is kept and applied at resume.
#[test]
fn task_outcome_while_paused() {
    let f = flow_of(
        "call",
        json!({}),
        json!({
            "call": {"type": "call", "params": {}, "next": {"then": "done"}}, "done": {"type": "end", "params": {"outcome": "called"}}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(Input::Pause, "2026-12-04T20:10:00Z");
    d.apply(
        Input::TaskOutcome {
            run: 1,
            outcome: "connected".into(),
        },
        "2026-12-04T20:20:00Z",
    );
    assert_eq!(d.state.status, Status::Paused);
    assert_eq!(d.closed(), vec![]);
    d.apply(Input::Resume, "2026-12-04T20:30:00Z");
    assert_eq!(d.closed(), vec![cb("call", "then", None), c("done")]);
    assert!(d
        .journey()
        .iter()
        .any(|j| matches!(j, JourneyEntry::TaskOutcome { outcome, .. } if outcome == "connected")));
}

/// An opt-out exits every enrollment of the contact (docs/signals.md, "Kinds of signal and the events they raise"), a paused one too; an `exit_on`
/// event does not move a paused one (docs/signals.md, "Routing" rule 1 first).
#[test]
fn opt_out_exits_a_paused_enrollment() {
    let mut d = Driver::new(listening(&["reply"]), contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    d.apply(Input::Pause, "2026-12-04T21:00:00Z");
    d.apply(
        Input::Signal(Signal::raising("m", &["meeting_booked"])),
        "2026-12-04T21:30:00Z",
    );
    assert_eq!(d.signal_effects("m"), vec![SignalEffect::IgnoredPaused]);
    assert_eq!(d.state.status, Status::Paused);
    d.apply(
        Input::Signal(Signal::opt_out("stop", "email")),
        "2026-12-04T22:00:00Z",
    );
    assert_eq!(d.state.status, Status::Exited);
    assert_eq!(d.closed(), vec![cb("wf", "exit", Some("stop"))]);
}

/// A self-loop on a custom event consumes the whole buffer in one call, each signal once, oldest
/// first, then waits.
#[test]
fn a_loop_drains_the_buffer_once_each() {
    let f = flow_of(
        "w",
        json!({}),
        json!({
            "w": {"type": "wait", "params": {"duration": "1h"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["payment.done"], "timeout": "1d"}, "next": {"payment.done": "wf", "timeout": "done"}},
            "done": {"type": "end"}
        }),
    );
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, T0);
    for i in 0..BUFFER_CAP {
        d.apply(
            Input::Signal(Signal::raising(format!("p{i}"), &["payment.done"])),
            "2026-12-04T20:10:00Z",
        );
    }
    d.wake();
    assert!(d.state.buffer.is_empty());
    assert_eq!(d.state.status, Status::Active);
    let woken: Vec<Option<String>> = d.closed().into_iter().skip(1).map(|(_, _, w)| w).collect();
    let want: Vec<Option<String>> = (0..BUFFER_CAP).map(|i| Some(format!("p{i}"))).collect();
    assert_eq!(woken, want);
    assert_eq!(d.run().step, "wf");
    assert_eq!(d.state.next_run_at, Some(t("2026-12-05T21:00:00Z")));
}

/// docs/signals.md, "Inbox signals": `START`/`UNSTOP`/`YES` end an SMS opt-out where there is one (journal-only, the
/// wait goes on); from a contact who never opted out, "Yes" answers the sequence: a reply.
#[test]
fn an_opt_in_keyword_ends_an_opt_out_or_is_a_reply() {
    let opt_in = |id: &str| {
        nudge::inbound::SignalKind::OptIn {
            channel: "sms".into(),
        }
        .to_engine(id, json!({}))
    };
    // Not opted out: the "yes" wakes the reply wait.
    let mut d = Driver::new(
        listening(&["reply"]),
        contact(None, Some("+12125551234"), None),
        "UTC",
    );
    d.apply(Input::Start, T0);
    d.apply(Input::Signal(opt_in("yes")), "2026-12-05T10:00:00Z");
    assert_eq!(
        d.closed(),
        vec![cb("wf", "reply", Some("yes")), c("end_reply")]
    );

    // Opted out of SMS (an enrollment that goes on by email): the opt-out ends, nothing wakes.
    let mut opted = contact(None, Some("+12125551234"), None);
    opted.opted_out.insert("sms".into());
    let mut d = Driver::new(listening(&["reply"]), opted, "UTC");
    d.apply(Input::Start, T0);
    d.apply(Input::Signal(opt_in("start")), "2026-12-05T10:00:00Z");
    assert!(d.closed().is_empty(), "{:?}", d.closed());
    assert!(!d.state.contact.opted_out.contains("sms"));
    assert!(
        matches!(
            d.signal_effects("start").as_slice(),
            [SignalEffect::Noted { .. }]
        ),
        "{:?}",
        d.signal_effects("start")
    );
}
