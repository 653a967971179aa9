//! Property tests: random scripts and random inputs never panic the interpreter, runs are in
//! order, no run closes before it opens, and a due timer is never left behind.

use crate::engine_support as support;

use chrono::{DateTime, Duration, Utc};
use nudge::engine::simulate::{simulate, Action, Scenario, ScenarioContact, ScriptEntry};
use nudge::engine::state::Status;
use nudge::engine::{step, Ctx, EnrollmentState, FlowRef, Input, Signal};
use nudge::flow::Flow;
use proptest::prelude::*;
use serde_json::json;
use support::*;

fn spec_flow() -> Flow {
    let text = std::fs::read_to_string("fixtures/flows/outbound-v1.json").unwrap();
    flow(serde_json::from_str(&text).unwrap())
}

/// A flow with a loop through a wait_for with a timeout, tasks with outcome keys and timeouts,
/// and an SMS.
fn loop_flow() -> Flow {
    flow_of(
        "sms",
        json!({
            "send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"},
            "jitter": "45m", "exit_on": ["meeting_booked"]
        }),
        json!({
            "sms": {"type": "sms", "params": {"template": "t"}, "next": {"then": "wf"}},
            "wf": {"type": "wait_for", "params": {"events": ["reply", "reply:sms", "call_connected", "payment.done"], "timeout": "1bd"},
                   "next": {"reply": "call", "reply:sms": "li", "call_connected": "done", "payment.done": "wf", "timeout": "sms"}},
            "call": {"type": "call", "params": {"connected_outcomes": ["connected"], "timeout": "2h"}, "next": {"then": "wf", "connected": "done", "timeout": "wf"}},
            "li": {"type": "linkedin_message", "params": {}, "next": {"then": "wf", "replied": "done"}},
            "done": {"type": "end", "params": {"outcome": "done"}}
        }),
    )
}

fn start() -> DateTime<Utc> {
    t("2026-12-04T20:00:00Z")
}

fn action() -> impl Strategy<Value = Action> {
    let channel = prop::sample::select(vec!["email", "sms", "linkedin"]).prop_map(String::from);
    let step = prop::sample::select(vec!["call_1", "call", "li", "sms"]).prop_map(String::from);
    let outcome = prop::sample::select(vec!["connected", "replied", "no_answer", "accepted"])
        .prop_map(String::from);
    prop_oneof![
        channel.clone().prop_map(|channel| Action::Reply {
            channel,
            text: None,
        }),
        Just(Action::CallConnected),
        Just(Action::ConnectionAccepted),
        Just(Action::MeetingBooked),
        channel.prop_map(|channel| Action::OptOut { channel }),
        prop::sample::select(vec!["payment.done", "other.key"]).prop_map(|k| Action::Event {
            key: k.into(),
            payload: json!({})
        }),
        (step, outcome).prop_map(|(step, outcome)| Action::TaskOutcome { step, outcome }),
        Just(Action::Pause),
        Just(Action::Resume),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    let contact = (
        prop::sample::select(vec![
            None,
            Some("America/New_York"),
            Some("Asia/Tokyo"),
            Some("Australia/Lord_Howe"),
        ]),
        prop::sample::select(vec![
            None,
            Some("+12125551234"),
            Some("+80012345678"),
            Some("+61412345678"),
        ]),
    );
    let entry = (0i64..40 * 86_400_000, action()).prop_map(|(ms, action)| ScriptEntry {
        at: start() + Duration::milliseconds(ms),
        contact_id: None,
        action,
    });
    (
        contact,
        prop::collection::vec(entry, 0..25),
        any::<u64>(),
        prop::sample::select(vec!["UTC", "Europe/Prague"]),
    )
        .prop_map(|((tz, phone), script, seed, sender)| Scenario {
            start: start(),
            horizon: start() + Duration::days(45),
            contact: ScenarioContact {
                id: None,
                tz: tz.map(String::from),
                phone: phone.map(String::from),
                email: Some("a@example.com".into()),
                country: None,
                attributes: Default::default(),
            },
            sender_tz: sender.into(),
            input: json!({}),
            seed,
            script,
            max_wait: None,
            quiet_hours: None,
            enrollment_id: None,
            sender: None,
            contacts: None,
            fetch: Default::default(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_scripts_keep_the_timeline_sane(s in scenario(), which in 0..2usize) {
        let f = if which == 0 { spec_flow() } else { loop_flow() };
        let timeline = simulate(&f, &s).expect("a valid scenario simulates");
        let mut previous = s.start;
        for (i, r) in timeline.runs.iter().enumerate() {
            prop_assert!(r.entered >= previous, "run {i} entered before run {}", i.saturating_sub(1));
            previous = r.entered;
            if let Some(closed) = r.closed {
                prop_assert!(closed >= r.entered, "run {i} closed before it opened");
                prop_assert!(closed <= s.horizon);
            } else {
                prop_assert_eq!(i, timeline.runs.len() - 1, "only the last run may be open");
            }
            if let Some(w) = r.woken_by {
                prop_assert!(w < s.script.len());
            }
            if let Some(sch) = r.scheduled {
                prop_assert!(sch >= r.entered);
            }
        }
        let finished = matches!(timeline.state, Status::Completed | Status::Exited | Status::Failed);
        if finished {
            prop_assert!(timeline.runs.iter().all(|r| r.closed.is_some()));
        }
        // Determinism: the same scenario again gives the same timeline.
        prop_assert_eq!(simulate(&f, &s).unwrap(), timeline);
    }

    #[test]
    fn random_inputs_never_leave_a_due_timer(ops in prop::collection::vec((0i64..3 * 86_400_000, 0usize..11, 0usize..6), 1..40)) {
        let f = loop_flow();
        let steps = ["sms", "wf", "call", "li", "done", "nowhere"];
        let mut state = EnrollmentState::new("p", FlowRef::default(), contact(Some("America/New_York"), Some("+12125551234"), None), "UTC", json!({}));
        let ctx = Ctx {
            max_wait: None,
            seed: 1,
            ..Ctx::default()
        };
        let mut now = start();
        let (s, _) = step(&state, &f, Input::Start, now, &ctx);
        state = s;
        for (advance, kind, arg) in ops {
            now += Duration::milliseconds(advance);
            let run = state.run.as_ref().map(|r| r.id).unwrap_or(0);
            let input = match kind {
                0 => Input::Wake,
                1 => Input::Signal(Signal::reply(format!("s{advance}"), ["email", "sms"][arg % 2])),
                2 => Input::Signal(Signal::call_connected(format!("c{advance}"))),
                3 => Input::Signal(Signal::raising(format!("e{advance}"), &["payment.done"])),
                4 => Input::TaskOutcome { run, outcome: ["connected", "replied", "no"][arg % 3].into() },
                5 => Input::Pause,
                6 => Input::Resume,
                7 => Input::MoveTo { step: steps[arg].into() },
                8 => Input::Signal(Signal::opt_out(format!("o{advance}"), "sms")),
                9 => {
                    let mut c = state.contact.clone();
                    c.tz = [None, Some("Asia/Tokyo".to_string())][arg % 2].clone();
                    Input::ContactChanged(c)
                }
                _ => Input::Exit { reason: "op".into() },
            };
            let (s, _) = step(&state, &f, input, now, &ctx);
            state = s;
            if let Some(at) = state.next_run_at {
                prop_assert!(at > now, "a due timer was left: {at} <= {now}");
                prop_assert_eq!(state.status, Status::Active);
            }
            if state.status.is_finished() {
                prop_assert!(state.run.is_none());
            }
            if state.status == Status::Active && state.run.is_none() {
                prop_assert!(false, "active without a run");
            }
        }
    }
}
