//! The interpreter on the steps that reach outside (docs/flows.md, "approval", "fetch" and "branch"), table-driven:
//! `branch` picks the first case that holds, `fetch` records each attempt and is fed its answer
//! (retries with a backoff on nudge's clock, `ok`/`error`/`timeout`), `approval` makes a link and
//! waits for a decision or its timeout.

use crate::engine_support::{c, cb, contact, flow, flow_of, t, Driver};
use nudge::engine::{enrollable, Decision, Effect, FetchAnswer, Input, JourneyEntry, Status};
use serde_json::{json, Value};

fn branch_flow() -> nudge::flow::Flow {
    flow(
        json!({"name": "t", "start": "check", "input": {"seats": "number"}, "steps": {
            "check": {"type": "branch", "params": {"cases": [
                {"name": "big", "when": {"gte": ["$: input.seats", 100]}},
                {"name": "texting", "when": {"all": [{"exists": "contact.phone"},
                                                     {"not": {"in": ["$: contact.attributes.country", ["DE", "AT"]]}}]}}]},
                      "next": {"big": "end_big", "texting": "end_text", "else": "end_else"}},
            "end_big": {"type": "end", "params": {"outcome": "big"}},
            "end_text": {"type": "end", "params": {"outcome": "text"}},
            "end_else": {"type": "end", "params": {"outcome": "else"}}
        }}),
    )
}

#[test]
fn every_step_type_is_enrollable() {
    assert!(enrollable(&branch_flow()).is_ok());
    assert!(enrollable(&fetch_flow(json!({"url": "https://crm.example.com/x"}))).is_ok());
    assert!(enrollable(&approval_flow(json!({"title": "ok?"}))).is_ok());
}

#[test]
fn branch_takes_the_first_case_that_holds() {
    let cases: &[(Value, Option<&str>, Option<&str>, &str)] = &[
        (json!({"seats": 100}), Some("+12125551234"), None, "big"),
        (json!({"seats": 99}), Some("+12125551234"), None, "text"),
        (
            json!({"seats": 99}),
            Some("+12125551234"),
            Some("DE"),
            "else",
        ),
        (json!({"seats": 99}), None, None, "else"),
        // A missing value makes the comparison false: on to the next case.
        (json!({}), Some("+12125551234"), Some("FR"), "text"),
    ];
    for (input, phone, country, outcome) in cases {
        let mut who = contact(None, *phone, None);
        if let Some(c) = country {
            who.attributes.insert("country".into(), json!(c));
        }
        let mut d = Driver::with_input(branch_flow(), who, "UTC", input.clone());
        d.apply(Input::Start, "2026-12-04T20:00:00Z");
        assert_eq!(d.state.status, Status::Completed, "{input}");
        assert_eq!(
            d.state.outcome.as_deref(),
            Some(*outcome),
            "{input} {phone:?} {country:?}"
        );
        let branch = match *outcome {
            "text" => "texting",
            o => o,
        };
        assert_eq!(d.closed()[0], cb("check", branch, None));
    }
}

fn fetch_flow(params: Value) -> nudge::flow::Flow {
    flow_of(
        "deal",
        json!({}),
        json!({
            "deal": {"type": "fetch", "params": params, "next": {"ok": "check", "error": "end_err", "timeout": "end_slow"}},
            "check": {"type": "branch", "params": {"cases": [{"name": "won", "when": {"eq": ["$: fetch.body.stage", "won"]}}]},
                      "next": {"won": "end_won", "else": "end_open"}},
            "end_won": {"type": "end", "params": {"outcome": "won"}},
            "end_open": {"type": "end", "params": {"outcome": "open"}},
            "end_err": {"type": "end", "params": {"outcome": "error"}},
            "end_slow": {"type": "end", "params": {"outcome": "slow"}}
        }),
    )
}

fn requests(effects: &[Effect]) -> Vec<(String, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::FetchRequested(r) => Some((r.idempotency_key.clone(), r.attempt)),
            _ => None,
        })
        .collect()
}

fn ok(status: u16, body: Value) -> FetchAnswer {
    FetchAnswer::Response {
        status,
        body,
        ms: 12,
    }
}

#[test]
fn fetch_records_the_attempt_then_applies_the_answer() {
    let f = fetch_flow(
        json!({"url": "https://crm.example.com/deals", "query": {"contact": "$: contact.email"},
                              "headers": {"X-Who": "$: contact.id"}, "retry": {"attempts": 3, "backoff": "30s"}}),
    );
    let err = || FetchAnswer::Error {
        error: "connect".into(),
        ms: 3,
        refused: false,
    };
    let cases: Vec<(&str, Vec<FetchAnswer>, &str)> = vec![
        ("2xx at once", vec![ok(200, json!({"stage": "won"}))], "won"),
        (
            "2xx, other stage",
            vec![ok(201, json!({"stage": "open"}))],
            "open",
        ),
        (
            "500 then 200",
            vec![ok(500, json!(null)), ok(200, json!({"stage": "won"}))],
            "won",
        ),
        ("three errors", vec![err(), err(), err()], "error"),
        (
            "timeouts: the last one takes timeout",
            vec![
                FetchAnswer::Timeout { ms: 10_000 },
                err(),
                FetchAnswer::Timeout { ms: 10_000 },
            ],
            "slow",
        ),
        (
            "a refused address is not retried",
            vec![FetchAnswer::Error {
                error: "refused".into(),
                ms: 0,
                refused: true,
            }],
            "error",
        ),
    ];
    for (name, answers, outcome) in cases {
        let mut d = Driver::new(
            f.clone(),
            contact(None, None, Some("ann@example.com")),
            "UTC",
        );
        let fx = d.apply(Input::Start, "2026-12-04T20:00:00Z");
        let first = requests(&fx);
        assert_eq!(
            first,
            [("enr-1:1:1".to_string(), 1)],
            "{name}: attempt recorded at entry"
        );
        let Some(Effect::FetchRequested(r)) =
            fx.iter().find(|e| matches!(e, Effect::FetchRequested(_)))
        else {
            unreachable!()
        };
        assert_eq!(
            r.call.url,
            "https://crm.example.com/deals?contact=ann%40example.com"
        );
        assert_eq!(r.call.headers["X-Who"], "c1");
        assert_eq!(
            d.state.next_run_at, None,
            "{name}: waits for the answer, not a timer"
        );
        let mut now = t("2026-12-04T20:00:01Z");
        for (i, answer) in answers.into_iter().enumerate() {
            let attempt = i as u32 + 1;
            let (st, _) = nudge::engine::step(
                &d.state,
                &d.flow,
                Input::FetchAnswer {
                    run: 1,
                    attempt,
                    answer,
                },
                now,
                &d.ctx,
            );
            d.state = st;
            if d.state.status == Status::Active {
                // A retry waits its backoff on nudge's clock: 30s doubled, jittered by half.
                let at = d.state.next_run_at.expect("a retry time");
                let base = 30_000 * (1 << (attempt - 1));
                let waited = (at - now).num_milliseconds();
                assert!(
                    waited >= base / 2 && waited <= base,
                    "{name}: backoff {waited}"
                );
                let fx = d.wake();
                assert_eq!(
                    requests(&fx),
                    [(format!("enr-1:1:{}", attempt + 1), attempt + 1)],
                    "{name}"
                );
                now = at + chrono::Duration::seconds(1);
            }
        }
        assert_eq!(d.state.status, Status::Completed, "{name}");
        assert_eq!(d.state.outcome.as_deref(), Some(outcome), "{name}");
    }
}

#[test]
fn a_stale_or_repeated_answer_is_refused() {
    let f = fetch_flow(json!({"url": "https://crm.example.com/x", "retry": {"attempts": 2}}));
    let mut d = Driver::new(f, contact(None, None, None), "UTC");
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let fx = d.apply(
        Input::FetchAnswer {
            run: 1,
            attempt: 2,
            answer: ok(200, json!({})),
        },
        "2026-12-04T20:00:01Z",
    );
    assert!(
        matches!(&fx[..], [Effect::Journey(JourneyEntry::Rejected { .. })]),
        "{fx:?}"
    );
    d.apply(
        Input::FetchAnswer {
            run: 1,
            attempt: 1,
            answer: ok(200, json!({"stage": "won"})),
        },
        "2026-12-04T20:00:01Z",
    );
    assert_eq!(d.state.outcome.as_deref(), Some("won"));
    let fx = d.apply(
        Input::FetchAnswer {
            run: 1,
            attempt: 1,
            answer: ok(200, json!({})),
        },
        "2026-12-04T20:00:02Z",
    );
    assert!(
        matches!(&fx[..], [Effect::Journey(JourneyEntry::Rejected { .. })]),
        "{fx:?}"
    );
}

#[test]
fn a_fetch_timeout_that_resolves_to_zero_sends_nothing() {
    let flow = flow(
        json!({"name": "t", "start": "deal", "input": {"ms": "number"}, "steps": {
            "deal": {"type": "fetch", "params": {"url": "https://crm.example.com/x", "timeout": "$: input.ms"},
                     "next": {"ok": "e", "error": "e_err", "timeout": "e_slow"}},
            "e": {"type": "end"}, "e_err": {"type": "end", "params": {"outcome": "error"}},
            "e_slow": {"type": "end", "params": {"outcome": "slow"}}
        }}),
    );
    let mut d = Driver::with_input(flow, contact(None, None, None), "UTC", json!({"ms": 0}));
    let fx = d.apply(Input::Start, "2026-12-04T20:00:00Z");
    assert!(requests(&fx).is_empty(), "no request was sent");
    assert_eq!(
        d.state.outcome.as_deref(),
        Some("error"),
        "an error, never a timeout"
    );
}

fn approval_flow(params: Value) -> nudge::flow::Flow {
    flow_of(
        "approve",
        json!({}),
        json!({
            "approve": {"type": "approval", "params": params,
                        "next": {"approved": "yes", "rejected": "no", "timeout": "late"}},
            "yes": {"type": "end", "params": {"outcome": "approved"}},
            "no": {"type": "end", "params": {"outcome": "rejected"}},
            "late": {"type": "end", "params": {"outcome": "late"}}
        }),
    )
}

#[test]
fn approval_links_expire_with_the_timeout_or_their_ttl() {
    let cases = [
        (
            json!({"title": "ok?", "timeout": "3d", "link_ttl": "2d"}),
            "2026-12-06T20:00:00Z",
            Some("2026-12-07T20:00:00Z"),
        ),
        (
            json!({"title": "ok?", "timeout": "1d", "link_ttl": "2d"}),
            "2026-12-05T20:00:00Z",
            Some("2026-12-05T20:00:00Z"),
        ),
        (
            json!({"title": "ok?", "timeout": "2d"}),
            "2026-12-06T20:00:00Z",
            Some("2026-12-06T20:00:00Z"),
        ),
        (json!({"title": "ok?"}), "2026-12-11T20:00:00Z", None),
    ];
    for (params, expires, until) in cases {
        let mut d = Driver::new(
            approval_flow(params.clone()),
            contact(None, None, None),
            "UTC",
        );
        let fx = d.apply(Input::Start, "2026-12-04T20:00:00Z");
        let link = fx.iter().find_map(|e| match e {
            Effect::ApprovalRequested {
                expires_at,
                title,
                run,
                ..
            } => Some((*run, title.clone(), *expires_at)),
            _ => None,
        });
        assert_eq!(link, Some((1, "ok?".to_string(), t(expires))), "{params}");
        assert_eq!(d.run().until, until.map(t), "{params}");
        assert_eq!(d.state.next_run_at, until.map(t));
    }
}

#[test]
fn approval_decisions_and_refusals() {
    let params = json!({"title": "ok?", "input": {"note": "string"}, "timeout": "3d"});
    let decide = |run: Option<u64>, decision: Decision, input: Value| Input::Decide {
        run,
        decision,
        input,
        by: Some("boss@example.com".into()),
    };
    // Approved, with its input and who decided, in the journey.
    let mut d = Driver::new(
        approval_flow(params.clone()),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        decide(Some(1), Decision::Approved, json!({"note": "go"})),
        "2026-12-05T09:00:00Z",
    );
    assert_eq!(d.state.outcome.as_deref(), Some("approved"));
    assert!(d.journey().contains(&JourneyEntry::Decided {
        run: 1,
        decision: Decision::Approved,
        input: json!({"note": "go"}),
        by: Some("boss@example.com".into()),
    }));
    assert_eq!(d.closed(), [cb("approve", "approved", None), c("yes")]);

    // Rejected through the API (no run named).
    let mut d = Driver::new(
        approval_flow(params.clone()),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    d.apply(
        decide(None, Decision::Rejected, json!({"note": "no"})),
        "2026-12-05T09:00:00Z",
    );
    assert_eq!(d.state.outcome.as_deref(), Some("rejected"));

    // Refused, nothing changed: bad input, paused, another run, after the timeout.
    let mut d = Driver::new(
        approval_flow(params.clone()),
        contact(None, None, None),
        "UTC",
    );
    d.apply(Input::Start, "2026-12-04T20:00:00Z");
    let before = d.state.clone();
    for (input, why) in [
        (
            decide(Some(1), Decision::Approved, json!({"note": 3})),
            "input.note",
        ),
        (
            decide(Some(7), Decision::Approved, json!({"note": "x"})),
            "already closed",
        ),
    ] {
        let fx = d.apply(input, "2026-12-05T09:00:00Z");
        assert!(
            matches!(&fx[..], [Effect::Journey(JourneyEntry::Rejected { reason, .. })] if reason.contains(why)),
            "{fx:?}"
        );
        assert_eq!(d.state, before);
    }
    d.apply(Input::Pause, "2026-12-05T09:00:00Z");
    let fx = d.apply(
        decide(Some(1), Decision::Approved, json!({"note": "x"})),
        "2026-12-05T09:01:00Z",
    );
    assert!(
        matches!(&fx[..], [Effect::Journey(JourneyEntry::Rejected { reason, .. })] if reason.contains("paused"))
    );
    d.apply(Input::Resume, "2026-12-05T09:02:00Z");
    d.wake();
    assert_eq!(
        d.state.outcome.as_deref(),
        Some("late"),
        "the timeout takes `timeout`"
    );
    let fx = d.apply(
        decide(Some(1), Decision::Approved, json!({"note": "x"})),
        "2026-12-08T09:00:00Z",
    );
    assert!(
        matches!(&fx[..], [Effect::Journey(JourneyEntry::Rejected { .. })]),
        "{fx:?}"
    );
}

/// docs/service.md: a simulation runs all three with the scenario's `approval` entry and `fetch`
/// answers (one per attempt), before anyone is enrolled.
#[test]
fn simulate_runs_fetch_branch_and_approval() {
    let f = flow(json!({"name": "sim", "start": "deal", "steps": {
        "deal": {"type": "fetch", "params": {"url": "https://crm.example.com/deals", "retry": {"attempts": 3, "backoff": "30s"}},
                 "next": {"ok": "check", "error": "lost", "timeout": "lost"}},
        "check": {"type": "branch", "params": {"cases": [{"name": "won", "when": {"eq": ["$: fetch.body.stage", "won"]}}]},
                  "next": {"won": "approve", "else": "lost"}},
        "approve": {"type": "approval", "params": {"title": "Send?", "timeout": "3d"},
                    "next": {"approved": "done", "rejected": "lost", "timeout": "lost"}},
        "done": {"type": "end", "params": {"outcome": "sent"}},
        "lost": {"type": "end", "params": {"outcome": "lost"}}}}));
    let scenario = |decision: &str, answers: Value| -> nudge::engine::Scenario {
        serde_json::from_value(json!({
            "start": "2026-12-04T20:00:00Z", "horizon": "2026-12-31T00:00:00Z",
            "contact": {"email": "ann@example.com"},
            "fetch": {"deal": answers},
            "script": [{"at": "2026-12-05T10:00:00Z", "kind": "approval", "decision": decision, "input": {}, "by": "boss"}]
        }))
        .unwrap()
    };
    let run = |s: &nudge::engine::Scenario| {
        let t = nudge::engine::simulate(&f, s).unwrap();
        serde_json::to_value(&t).unwrap()
    };
    let won = run(&scenario(
        "approved",
        json!([{"error": "connect"}, {"status": 500, "body": null}, {"status": 200, "body": {"stage": "won"}, "ms": 120}]),
    ));
    assert_eq!(won["outcome"], "sent", "{won:#}");
    let steps: Vec<(&str, &str)> = won["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["step"].as_str().unwrap(),
                r["branch"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("deal", "ok"),
            ("check", "won"),
            ("approve", "approved"),
            ("done", "")
        ]
    );
    assert_eq!(won["runs"][2]["woken_by"], 0, "the script entry decided it");
    let rejected = run(&scenario(
        "rejected",
        json!([{"status": 200, "body": {"stage": "won"}}]),
    ));
    assert_eq!(rejected["outcome"], "lost");
    let slow = run(&scenario(
        "approved",
        json!([{"timeout": true}, {"timeout": true}, {"timeout": true}]),
    ));
    assert_eq!(slow["runs"][0]["branch"], "timeout");
}
