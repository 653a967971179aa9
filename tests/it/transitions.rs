//! One transition commits every effect or none (docs/service.md, "Errors"): a flow whose single transition could
//! enter more steps than the engine's guard is refused at `CreateFlow` and `ValidateFlow`
//! (`TRANSITION_TOO_LONG`, with the path), and one that reaches the guard anyway (a loop through
//! a wait that is already over) fails with only its failure written: no dispatch, no run.

use crate::common::{spawn_app, Backend};
use crate::signals::support::{contact, create_flow, enroll, enrollment, journey, AppExt};
use nudge::flow::LOOP_GUARD;
use nudge::proto::v1::*;
use tonic::Code;
use tonic_types::StatusExt;

backend_tests!(
    a_transition_that_cannot_finish_is_refused,
    a_transition_that_reaches_the_guard_leaves_only_its_failure,
);

/// `n` emails in a chain, then the end.
fn email_chain(n: usize) -> String {
    let mut steps = serde_json::Map::new();
    for i in 0..n {
        let next = if i + 1 < n {
            format!("e{}", i + 1)
        } else {
            "done".into()
        };
        steps.insert(
            format!("e{i}"),
            serde_json::json!({"type": "email", "params": {"template": "t"}, "next": {"then": next}}),
        );
    }
    steps.insert("done".into(), serde_json::json!({"type": "end"}));
    serde_json::json!({"name": "chain", "start": "e0", "steps": steps}).to_string()
}

async fn a_transition_that_cannot_finish_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let too_long = email_chain(LOOP_GUARD);
    let answer = flows
        .validate_flow(app.authed(ValidateFlowRequest {
            definition: too_long.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.valid);
    let problems: Vec<(&str, &str)> = answer
        .problems
        .iter()
        .map(|p| (p.code.as_str(), p.path.as_str()))
        .collect();
    assert_eq!(problems, [("TRANSITION_TOO_LONG", "/steps/e0")]);
    assert!(
        answer.problems[0].message.contains("`e0` → `e1`"),
        "{}",
        answer.problems[0].message
    );

    let refused = flows
        .create_flow(app.authed(CreateFlowRequest {
            definition: too_long,
        }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    let details = refused
        .get_details_bad_request()
        .expect("BadRequest details");
    assert!(
        details
            .field_violations
            .iter()
            .any(|v| format!("{} {}", v.description, v.reason).contains("TRANSITION_TOO_LONG")),
        "{details:?}"
    );
    // One step fewer is exactly what a transition may enter.
    create_flow(&app, &email_chain(LOOP_GUARD - 1)).await;
    app.stop().await;
}

/// An email, then a wait of `0s`, then the email again: legal (the loop has a wait), but the
/// wait is over as soon as it starts, so one transition would walk it forever. The guard fails
/// the enrollment and the journey has only `enrolled` and `failed`: none of the 5,000 emails it
/// passed through is claimable.
async fn a_transition_that_reaches_the_guard_leaves_only_its_failure(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(
        &app,
        r#"{"name": "spin", "start": "e",
            "steps": {
              "e": {"type": "email", "params": {"template": "t"}, "next": {"then": "w"}},
              "w": {"type": "wait", "params": {"duration": "0s"}, "next": {"then": "e"}}}}"#,
    )
    .await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "failed");
    assert!(e.reason.starts_with("LOOP_GUARD"), "{}", e.reason);
    let kinds: Vec<String> = journey(&app, &id)
        .await
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(kinds, ["enrolled", "failed"]);
    // Any channel: the request may grow filters, which default to "all".
    #[allow(clippy::needless_update)]
    let request = ClaimDispatchesRequest {
        lease_ms: 60_000,
        max_count: 1_000,
        ..Default::default()
    };
    let claimed = app
        .dispatches()
        .await
        .claim_dispatches(app.authed(request))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    assert!(
        claimed.is_empty(),
        "{} dispatches of the failed transition",
        claimed.len()
    );
    app.stop().await;
}
