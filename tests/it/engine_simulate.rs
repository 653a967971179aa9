//! `simulate` walks the docs/flows.md example flow through weeks of virtual time. Every expected
//! instant is cross-checked by `fixtures/scenarios/expected_instants.py` (numpy business days
//! with the flow's holidays, zoneinfo wall clocks), not taken from this code.

use chrono::{DateTime, Duration, Utc};
use nudge::engine::simulate::{render_table, simulate, Scenario, SimError, Timeline};
use nudge::flow::{Flow, ValidateOptions};
use serde_json::{json, Value};

fn load_flow(path: &str) -> Flow {
    let text = std::fs::read_to_string(path).unwrap();
    Flow::from_json(
        &serde_json::from_str(&text).unwrap(),
        &ValidateOptions::default(),
    )
    .unwrap_or_else(|p| panic!("{path}: {p:#?}"))
}

fn load_scenario(name: &str) -> Scenario {
    let text = std::fs::read_to_string(format!("fixtures/scenarios/{name}")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(flow: &str, scenario: &str) -> Value {
    let timeline = simulate(&load_flow(flow), &load_scenario(scenario)).unwrap();
    serde_json::to_value(timeline).unwrap()
}

/// A hand-derived answer kept beside its scenario (for the CLI's tests too).
fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("fixtures/scenarios/{name}.expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

const EXACT: &str = "fixtures/scenarios/outbound-v1-nojitter.flow.json";
const EXAMPLE_FLOW: &str = "fixtures/flows/outbound-v1.json";

/// Enrolled Tuesday 22 December 09:30 New York: 2bd skips the 24th and 25th (holidays) and the
/// weekend, so the SMS goes Monday the 28th; a reply on the 30th wakes the wait_for.
#[test]
fn holidays_then_a_reply() {
    assert_eq!(
        run(EXACT, "holidays-reply.json"),
        expected("holidays-reply")
    );
}

/// An SMS reply that arrives during the 2bd wait is buffered; the wait_for consumes it when
/// entered and does not suspend.
#[test]
fn early_reply_is_buffered_and_consumed() {
    let got = run(EXACT, "holidays-early-reply.json");
    assert_eq!(got["state"], "completed");
    assert_eq!(got["outcome"], "replied");
    assert_eq!(
        got["runs"][3],
        json!({"step": "wait_reply", "type": "wait_for", "entered": "2026-12-28T14:30:00Z", "until": "2027-01-04T14:30:00Z", "closed": "2026-12-28T14:30:00Z", "branch": "reply", "woken_by": 0})
    );
}

/// `meeting_booked` is in `exit_on`: it exits instead of waking the branch wired for it.
#[test]
fn booked_meeting_exits() {
    let got = run(EXACT, "holidays-booked.json");
    assert_eq!(got["state"], "exited");
    assert_eq!(got["outcome"], "exit_on:meeting_booked");
    assert_eq!(got["runs"].as_array().unwrap().len(), 4);
    assert_eq!(got["runs"][3]["branch"], "exit");
    assert_eq!(got["runs"][3]["woken_by"], 0);
    assert_eq!(got["runs"][3]["closed"], "2026-12-29T16:00:00Z");
}

/// Enrolled Friday 18:00 New York: the email waits for Monday 09:00; the wait_for times out into
/// the call task; a pause and resume while the task is open; the outcome completes it.
#[test]
fn after_hours_timeout_call_and_pause() {
    assert_eq!(
        run(EXACT, "after-hours-pause.json"),
        expected("after-hours-pause")
    );
}

/// Across New York's fall-back (1 November): 2bd from Friday 15:00 EDT is Tuesday 15:00 EST,
/// 20:00Z. The horizon stops the simulation with the wait_for still open.
#[test]
fn dst_and_the_horizon() {
    let got = run(EXACT, "dst-horizon.json");
    assert_eq!(got["state"], "active");
    assert_eq!(got["runs"][1]["until"], "2026-11-03T20:00:00Z");
    assert_eq!(
        got["runs"][3],
        json!({"step": "wait_reply", "type": "wait_for", "entered": "2026-11-03T20:00:00Z", "until": "2026-11-10T20:00:00Z"})
    );
}

fn at(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

/// The docs/flows.md example flow as written (20m jitter, seed 7): instants are within the jitter of the
/// window openings, business days keep the jittered time of day, and the same scenario gives
/// the same timeline twice; another seed moves the jitter.
#[test]
fn spec_flow_with_jitter() {
    let got = run(EXAMPLE_FLOW, "call-after-timeout.json");
    assert_eq!(
        got,
        run(EXAMPLE_FLOW, "call-after-timeout.json"),
        "deterministic"
    );
    let runs = got["runs"].as_array().unwrap();
    let steps: Vec<&str> = runs.iter().map(|r| r["step"].as_str().unwrap()).collect();
    assert_eq!(
        steps,
        [
            "email_1",
            "wait_2d",
            "sms_1",
            "wait_reply",
            "call_1",
            "end_done"
        ]
    );
    let email = at(&runs[0]["scheduled"]);
    let start = at(&json!("2026-12-04T20:00:00Z"));
    assert!(
        email >= start && email <= start + Duration::minutes(20),
        "{email}"
    );
    // Fri + 2bd = Tue 8 December, same New York time of day (no DST change in between).
    assert_eq!(at(&runs[1]["until"]), email + Duration::days(4));
    let sms = at(&runs[2]["scheduled"]);
    assert!(
        sms >= email + Duration::days(4)
            && sms <= email + Duration::days(4) + Duration::minutes(20)
    );
    // Tue + 5bd = Tue 15 December.
    assert_eq!(at(&runs[3]["until"]), sms + Duration::days(7));
    assert_eq!(runs[3]["branch"], "timeout");
    // The task: no jitter, created when due, closed by the scripted outcome (entry 0).
    assert_eq!(runs[4]["scheduled"], runs[4]["entered"]);
    assert_eq!(runs[4]["closed"], "2026-12-16T15:00:00Z");
    assert_eq!(runs[4]["woken_by"], 0);
    assert_eq!(got["state"], "completed");

    let mut other = load_scenario("call-after-timeout.json");
    other.seed = 8;
    let moved = serde_json::to_value(simulate(&load_flow(EXAMPLE_FLOW), &other).unwrap()).unwrap();
    assert_ne!(
        moved["runs"][0]["scheduled"], runs[0]["scheduled"],
        "the seed feeds the jitter"
    );
}

#[test]
fn table_rendering() {
    let timeline: Timeline =
        simulate(&load_flow(EXACT), &load_scenario("holidays-reply.json")).unwrap();
    let table = render_table(&timeline);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "state: completed  outcome: replied");
    assert!(lines[1].starts_with("#  step"));
    assert!(
        lines[5].contains("wait_reply") && lines[5].contains("script[0]"),
        "{table}"
    );
    assert_eq!(lines.len(), 2 + 5);
}

#[test]
fn bad_scenarios_are_refused() {
    let flow = load_flow(EXACT);
    let base = load_scenario("holidays-reply.json");
    let mut s = base.clone();
    s.horizon = at(&json!("2026-01-01T00:00:00Z"));
    assert!(
        matches!(simulate(&flow, &s), Err(SimError::Scenario(m)) if m.contains("before the start"))
    );
    let mut s = base.clone();
    s.sender_tz = "EST".into();
    assert_eq!(simulate(&flow, &s).unwrap_err().code().as_str(), "BAD_TZ");
    let mut s = base.clone();
    s.contact.phone = Some("+1 555 555 5555".into());
    assert_eq!(
        simulate(&flow, &s).unwrap_err().code().as_str(),
        "BAD_PHONE"
    );
    let mut s = base;
    s.script[0].at = at(&json!("2026-12-01T00:00:00Z"));
    assert!(
        matches!(simulate(&flow, &s), Err(SimError::Scenario(m)) if m.contains("before the start"))
    );
    let unknown = serde_json::from_value::<Scenario>(
        json!({"start": "2026-12-01T00:00:00Z", "horizon": "2026-12-02T00:00:00Z", "colour": 1}),
    );
    assert!(unknown.is_err(), "unknown fields are refused");
}

/// docs/timing.md, "Fixed once": with a real enrollment's id and seed 0, `simulate` draws the same jitter as the
/// interpreter does for that enrollment in production.
#[test]
fn simulate_and_reality_agree() {
    use nudge::engine::{step, ContactView, Ctx, EnrollmentState, FlowRef, Input};
    let flow = load_flow(EXAMPLE_FLOW);
    let mut scenario = load_scenario("call-after-timeout.json");
    scenario.enrollment_id = Some("enr-42".into());
    scenario.seed = 0;
    let simulated = simulate(&flow, &scenario).unwrap();

    let contact = ContactView {
        id: "c".into(),
        email: scenario.contact.email.clone(),
        phone: scenario.contact.phone.clone(),
        tz: scenario.contact.tz.clone(),
        ..ContactView::default()
    };
    let state = EnrollmentState::new(
        "enr-42",
        FlowRef::default(),
        contact,
        "Europe/Prague",
        json!({}),
    );
    let (real, _) = step(&state, &flow, Input::Start, scenario.start, &Ctx::default());
    assert_eq!(real.run.unwrap().scheduled, simulated.runs[0].scheduled);

    scenario.enrollment_id = Some("enr-43".into());
    let other = simulate(&flow, &scenario).unwrap();
    assert_ne!(
        other.runs[0].scheduled, simulated.runs[0].scheduled,
        "another enrollment, another draw"
    );
}

/// A scenario's `contact.attributes` reach `contact.attributes.*` in a `branch`
/// (they were refused as an unknown field, so such a branch could not be simulated).
#[test]
fn contact_attributes_reach_a_branch() {
    let flow = Flow::from_json(
        &json!({
            "name": "by-tier",
            "start": "route",
            "steps": {
                "route": { "type": "branch",
                           "params": { "cases": [
                               { "name": "gold", "when": { "eq": ["$: contact.attributes.tier", "gold"] } }
                           ] },
                           "next": { "gold": "end_gold", "else": "end_other" } },
                "end_gold":  { "type": "end", "params": { "outcome": "gold" } },
                "end_other": { "type": "end", "params": { "outcome": "other" } }
            }
        }),
        &ValidateOptions::default(),
    )
    .unwrap();
    let outcome = |attributes: Value| {
        let scenario: Scenario = serde_json::from_value(json!({
            "start": "2026-12-22T14:30:00Z",
            "horizon": "2026-12-23T00:00:00Z",
            "contact": { "tz": "America/New_York", "email": "ann@example.com",
                         "attributes": attributes },
        }))
        .expect("a scenario's contact takes attributes");
        let timeline = serde_json::to_value(simulate(&flow, &scenario).unwrap()).unwrap();
        let text = timeline.to_string();
        match (text.contains("\"gold\""), text.contains("\"other\"")) {
            (true, false) => "gold",
            (false, true) => "other",
            _ => panic!("no single outcome in {timeline:#}"),
        }
    };
    assert_eq!(outcome(json!({"tier": "gold"})), "gold");
    assert_eq!(outcome(json!({"tier": "silver"})), "other");
    assert_eq!(outcome(json!({})), "other");
}

/// A scripted reply with words is read as in production: in the contact's zone, its intent
/// ahead of `reply`, and `signal.resume_on` waits until the day it named (00:00 in New York on
/// 1 March 2027 is 05:00Z, by Python's zoneinfo). An unsubscribe in words opts out and exits.
#[test]
fn a_scripted_reply_is_read_for_its_intent() {
    let flow = Flow::from_json(
        &json!({
          "name": "not-now",
          "start": "wait",
          "steps": {
            "wait": { "type": "wait_for", "params": { "events": ["intent:not_now", "reply"], "timeout": "10d" },
                      "next": { "intent:not_now": "dated", "reply": "end_reply", "timeout": "end_silent" } },
            "dated": { "type": "branch", "params": { "cases": [ { "name": "dated", "when": { "exists": "signal.resume_on" } } ] },
                       "next": { "dated": "until", "else": "end_later" } },
            "until": { "type": "wait", "params": { "until": "$: signal.resume_on" }, "next": { "then": "end_resumed" } },
            "end_resumed": { "type": "end", "params": { "outcome": "resumed" } },
            "end_later":   { "type": "end", "params": { "outcome": "later" } },
            "end_reply":   { "type": "end", "params": { "outcome": "reply" } },
            "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
          }
        }),
        &ValidateOptions::default(),
    )
    .unwrap_or_else(|p| panic!("{p:#?}"));
    let scenario = |text: &str| -> Scenario {
        serde_json::from_value(json!({
          "start": "2026-12-04T15:00:00Z",
          "horizon": "2027-04-01T00:00:00Z",
          "contact": { "tz": "America/New_York", "email": "ann@example.com" },
          "sender_tz": "Europe/Prague",
          "script": [ { "at": "2026-12-05T16:00:00Z", "kind": "reply", "channel": "email", "text": text } ]
        }))
        .unwrap()
    };
    let dated = serde_json::to_value(
        simulate(
            &flow,
            &scenario("Not now — please reach out again in March."),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(dated["outcome"], "resumed", "{dated:#}");
    assert_eq!(dated["runs"][0]["branch"], "intent:not_now", "{dated:#}");
    let until = dated["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["step"] == "until")
        .expect("the dated wait ran");
    assert_eq!(until["until"], "2027-03-01T05:00:00Z", "{dated:#}");
    let thanks = serde_json::to_value(simulate(&flow, &scenario("Thanks!")).unwrap()).unwrap();
    assert_eq!(thanks["outcome"], "reply", "{thanks:#}");
    let stop = serde_json::to_value(
        simulate(&flow, &scenario("Please remove me from your list.")).unwrap(),
    )
    .unwrap();
    assert_eq!(stop["state"], "exited", "{stop:#}");
}
