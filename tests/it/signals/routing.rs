//! One signal, one enrollment, by the rules of docs/signals.md, "Kinds of signal and the events they raise" and docs/signals.md, "Routing": which kind wakes which wait,
//! a reply kept for a later wait, a paused enrollment, an opt-out, a timed wait.

use super::support::*;
use crate::common::{spawn_app, Backend};
use chrono::Duration;
use nudge::proto::v1::*;

backend_tests!(
    every_signal_kind_routes_by_the_rules,
    a_buffered_reply_is_consumed_by_the_second_wait,
    a_paused_enrollment_ignores_a_signal_but_an_opt_out_exits_it,
    a_signal_never_wakes_a_timed_wait,
);

/// Every row of docs/signals.md, "Kinds of signal and the events they raise" through the service, against one `wait_for` listing `reply`, `reply:sms`,
/// `call_connected` and `payment.received`, with `exit_on: ["meeting_booked"]`.
async fn every_signal_kind_routes_by_the_rules(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;

    /// (name, how the signal arrives, expected status, outcome or reason, effect, branch)
    type Row<'a> = (&'a str, Via, &'a str, &'a str, &'a str, Option<&'a str>);
    enum Via {
        Report(&'static str, &'static str),
        Event(&'static str, &'static str),
        Sms(&'static str),
    }
    // (name, how the signal arrives, expected status, outcome or reason, effect, branch)
    let rows: Vec<Row> = vec![
        (
            "email reply: reply (reply:email not listed)",
            Via::Report("reply", "email"),
            "completed",
            "reply",
            "woke",
            Some("reply"),
        ),
        (
            "SMS reply: reply:sms beats reply",
            Via::Report("reply", "sms"),
            "completed",
            "reply:sms",
            "woke",
            Some("reply:sms"),
        ),
        (
            "LinkedIn reply: reply",
            Via::Report("reply", "linkedin"),
            "completed",
            "reply",
            "woke",
            Some("reply"),
        ),
        (
            "connected call: call_connected beats reply",
            Via::Report("call_connected", ""),
            "completed",
            "call_connected",
            "woke",
            Some("call_connected"),
        ),
        (
            "connection accepted: not listed, buffered",
            Via::Report("connection_accepted", ""),
            "active",
            "",
            "buffered",
            None,
        ),
        (
            "meeting booked: exit_on exits",
            Via::Report("meeting_booked", ""),
            "exited",
            "exit_on:meeting_booked",
            "exited",
            None,
        ),
        (
            "custom event listed",
            Via::Event("payment.received", r#"{"amount": 5}"#),
            "completed",
            "paid",
            "woke",
            Some("payment.received"),
        ),
        (
            "custom event not listed: buffered",
            Via::Event("payment.refunded", ""),
            "active",
            "",
            "buffered",
            None,
        ),
        (
            "email opt-out exits",
            Via::Report("opt_out", "email"),
            "exited",
            "opt_out:email",
            "exited",
            None,
        ),
        (
            "inbound SMS by webhook",
            Via::Sms("yes please"),
            "completed",
            "reply:sms",
            "woke",
            Some("reply:sms"),
        ),
        (
            "SMS STOP by webhook",
            Via::Sms(" Stop\n"),
            "exited",
            "opt_out:sms",
            "exited",
            None,
        ),
    ];
    for (i, (name, via, status, detail, effect, branch)) in rows.into_iter().enumerate() {
        let id = format!("c{i}");
        let phone = format!("+1212555{:04}", 1000 + i);
        contact(&app, &id, &format!("c{i}@example.com"), &phone).await;
        let enrollment_id = enroll(&app, &id, &flow).await;
        let signal_id = match via {
            Via::Report(kind, channel) => report(&app, &id, kind, channel, "").await.signal_id,
            Via::Event(key, payload) => post_event(&app, &id, key, payload).await.signal_id,
            Via::Sms(text) => {
                let (code, body) = sms(&app, &phone, text, &format!("SM{i}")).await;
                assert_eq!(code, 200, "{name}: {body}");
                assert!(body.contains("<Response/>"), "{name}: {body}");
                // The webhook answers TwiML; the signal id is in the journey.
                journey(&app, &enrollment_id)
                    .await
                    .into_iter()
                    .find(|(k, _)| k == "signal")
                    .map(|(_, d)| d["signal"].as_str().unwrap().to_string())
                    .unwrap_or_else(|| panic!("{name}: no signal in the journey"))
            }
        };
        let e = enrollment(&app, &enrollment_id).await;
        assert_eq!(e.status, status, "{name}");
        match status {
            "completed" => assert_eq!(e.outcome, detail, "{name}"),
            "exited" => assert_eq!(e.reason, detail, "{name}"),
            _ => assert_eq!(e.current_step, "wait_1", "{name}: still waiting"),
        }
        assert_eq!(
            signal_effects(&app, &enrollment_id, &signal_id).await,
            [effect],
            "{name}"
        );
        let closed = closed_by(&app, &enrollment_id, &signal_id).await;
        match (effect, branch) {
            ("woke", Some(b)) => assert_eq!(closed.unwrap()["branch"], b, "{name}"),
            ("exited", _) => assert_eq!(
                closed.unwrap()["branch"],
                "exit",
                "{name}: run closes on exit"
            ),
            _ => assert!(closed.is_none(), "{name}: {closed:?}"),
        }
        if name.contains("opt-out") || name.contains("STOP") {
            let c = app
                .contacts()
                .await
                .get_contact(app.authed(GetContactRequest { id: id.clone() }))
                .await
                .unwrap()
                .into_inner()
                .contact
                .unwrap();
            let channel = if name.contains("STOP") {
                "sms"
            } else {
                "email"
            };
            assert_eq!(c.opted_out, [channel], "{name}");
        }
    }
    app.stop().await;
}

async fn a_buffered_reply_is_consumed_by_the_second_wait(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TWO_WAITS_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;

    let reply = report(&app, "ann@example.com", "reply", "email", "").await;
    assert_eq!(reply.deliveries.len(), 1);
    assert_eq!(reply.deliveries[0].effect, "buffered");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_pay");

    let paid = post_event(&app, "ann", "payment.received", "null").await;
    assert_eq!(paid.deliveries[0].effect, "woke");
    assert_eq!(paid.deliveries[0].branch, "payment.received");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    // The second wait took the buffered reply when it was entered.
    assert_eq!(
        signal_effects(&app, &id, &reply.signal_id).await,
        ["buffered", "consumed"]
    );
    let closed = closed_by(&app, &id, &reply.signal_id).await.unwrap();
    assert_eq!(closed["step"], "wait_reply");
    assert_eq!(closed["branch"], "reply");
    // A null payload arrived as {}.
    let woke = closed_by(&app, &id, &paid.signal_id).await.unwrap();
    assert_eq!(woke["step"], "wait_pay");
    app.stop().await;
}

async fn a_paused_enrollment_ignores_a_signal_but_an_opt_out_exits_it(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    let mut enrollments = app.enrollments().await;
    enrollments
        .pause(app.authed(PauseRequest { id: id.clone() }))
        .await
        .unwrap();

    let reply = report(&app, "ann", "reply", "sms", "").await;
    assert_eq!(reply.deliveries[0].effect, "ignored_paused");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("paused", "wait_1")
    );

    // Not buffered: after resume the wait still waits, and the old reply never wakes it.
    enrollments
        .resume(app.authed(ResumeRequest { id: id.clone() }))
        .await
        .unwrap();
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("active", "wait_1")
    );

    // A meeting (exit_on) while paused is ignored too; an opt-out exits even a paused one.
    enrollments
        .pause(app.authed(PauseRequest { id: id.clone() }))
        .await
        .unwrap();
    let booked = report(&app, "ann", "meeting_booked", "", "").await;
    assert_eq!(booked.deliveries[0].effect, "ignored_paused");
    let out = report(&app, "+1 212 555 0100", "opt_out", "sms", "").await;
    assert_eq!(out.deliveries[0].effect, "exited");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.reason.as_str()),
        ("exited", "opt_out:sms")
    );
    app.stop().await;
}

async fn a_signal_never_wakes_a_timed_wait(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, TIMED_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let reply = report(&app, "ann", "reply", "email", "").await;
    assert_eq!(reply.deliveries[0].effect, "buffered");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("active", "pause_2h")
    );
    // When the wait ends, the next wait_for takes the kept reply at once.
    app.advance(Duration::hours(2)).await;
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    assert_eq!(
        signal_effects(&app, &id, &reply.signal_id).await,
        ["buffered", "consumed"]
    );
    app.stop().await;
}
