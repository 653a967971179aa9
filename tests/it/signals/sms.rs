//! SMS through the Twilio webhook: `STOP` opts out and exits every enrollment, and
//! `X-Twilio-Signature` is checked against the public URL.

use super::support::*;
use crate::common::{spawn_app, Backend};
use nudge::inbound::signing;
use nudge::proto::v1::*;

backend_tests!(
    sms_stop_opts_out_and_exits_every_enrollment,
    twilio_signature_is_checked_against_the_public_url,
    twilio_signature_is_checked_before_the_body,
);

async fn sms_stop_opts_out_and_exits_every_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let timed = create_flow(&app, TIMED_FLOW).await;
    // Two records share the number: a STOP blocks SMS to both.
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    contact(&app, "ann-dup", "", "+1 212 555 0100").await;
    let e1 = enroll(&app, "ann", &routing).await;
    let e2 = enroll(&app, "ann", &timed).await;
    let e3 = enroll(&app, "ann-dup", &routing).await;
    // A NUL in a form field (here the id that deduplicates): 422 naming it, nothing changed.
    let (code, body) = sms(&app, "+12125550100", "STOP", "SM\0stop").await;
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("MessageSid"), "{body}");
    assert_eq!(enrollment(&app, &e1).await.status, "active");
    let (code, body) = sms(&app, "+12125550100", "STOP", "SM-stop").await;
    assert_eq!(code, 200, "{body}");
    for id in [&e1, &e2, &e3] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "opt_out:sms"),
            "{id}"
        );
    }
    for id in ["ann", "ann-dup"] {
        let c = app
            .contacts()
            .await
            .get_contact(app.authed(GetContactRequest { id: id.into() }))
            .await
            .unwrap()
            .into_inner()
            .contact
            .unwrap();
        assert_eq!(c.opted_out, ["sms"], "{id}");
    }
    // The same message again (Twilio retries): nothing changes.
    let before = journey(&app, &e1).await;
    let (code, _) = sms(&app, "+12125550100", "STOP", "SM-stop").await;
    assert_eq!(code, 200);
    assert_eq!(journey(&app, &e1).await, before);
    // An unknown number is 404 and stores nothing.
    let (code, body) = sms(&app, "+12125550199", "hi", "SM-x").await;
    assert_eq!(code, 404, "{body}");

    // A number spelled in E.164 whose normal form differs (the national prefix kept after the
    // country code, as the phonenumbers oracle normalizes it) still reaches its contact.
    contact(&app, "bo", "", "+44 20 7123 4567").await;
    let e4 = enroll(&app, "bo", &timed).await;
    let (code, body) = sms(&app, "+4402071234567", "STOP", "SM-bo").await;
    assert_eq!(code, 200, "{body}");
    let e = enrollment(&app, &e4).await;
    assert_eq!(
        (e.status.as_str(), e.reason.as_str()),
        ("exited", "opt_out:sms")
    );
    app.stop().await;
}

async fn twilio_signature_is_checked_against_the_public_url(backend: Backend) {
    let app = spawn_app(backend).await;
    contact(&app, "ann", "", "+12125550100").await;
    // No auth token set: refused.
    let (code, text) = sms(&app, "+12125550100", "hi", "SM1").await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("provider-secret set twilio"), "{text}");
    set_twilio_token(&app).await;
    let (code, text) = sms(&app, "+12125550100", "hi", "SM1").await;
    assert_eq!(code, 200, "{text}");

    let params = vec![
        ("From".to_string(), "+12125550100".to_string()),
        ("Body".to_string(), "hello".to_string()),
        ("MessageSid".to_string(), "SM2".to_string()),
    ];
    let body = serde_urlencoded::to_string(&params).unwrap();
    let form = (
        "Content-Type",
        "application/x-www-form-urlencoded".to_string(),
    );
    let cases: Vec<(&str, Headers, u16)> = vec![
        ("no signature", vec![form.clone()], 401),
        (
            "signed for another URL",
            vec![
                form.clone(),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign(
                        TWILIO_TOKEN,
                        "https://elsewhere/webhooks/sms/twilio",
                        &params,
                    ),
                ),
            ],
            401,
        ),
        (
            "signed with another token",
            vec![
                form.clone(),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign("other", "http://nudge.test/webhooks/sms/twilio", &params),
                ),
            ],
            401,
        ),
        // Behind a proxy: the URL Twilio called is rebuilt from X-Forwarded-*.
        (
            "forwarded https",
            vec![
                form.clone(),
                ("X-Forwarded-Proto", "https".into()),
                ("X-Forwarded-Host", "nudge.example.com".into()),
                (
                    "X-Twilio-Signature",
                    signing::twilio_sign(
                        TWILIO_TOKEN,
                        "https://nudge.example.com/webhooks/sms/twilio",
                        &params,
                    ),
                ),
            ],
            200,
        ),
    ];
    for (name, headers, status) in cases {
        let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body.as_bytes()).await;
        assert_eq!(code, status, "{name}: {text}");
    }
    // A correctly signed form without `From` (or with a number that is not E.164) does not
    // parse into an SMS.
    // Spelled as E.164 but no numbering plan assigns it: refused as before, not looked up
    // as an unknown contact (404).
    for from in [None, Some("12125550100"), Some("+15555555555")] {
        let mut params = vec![("Body".to_string(), "hi".to_string())];
        if let Some(f) = from {
            params.push(("From".to_string(), f.to_string()));
        }
        let body = serde_urlencoded::to_string(&params).unwrap();
        let sig = signing::twilio_sign(
            TWILIO_TOKEN,
            "http://nudge.test/webhooks/sms/twilio",
            &params,
        );
        let headers = [form.clone(), ("X-Twilio-Signature", sig)];
        let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body.as_bytes()).await;
        assert_eq!(code, 422, "{from:?}: {text}");
    }
    app.stop().await;
}

/// The signature is judged before the body: an unsigned or wrongly signed request learns
/// nothing about what its body should be (401, never 422), and the refusal names the Twilio
/// auth token Twilio signs with, not nudge's webhook secret.
async fn twilio_signature_is_checked_before_the_body(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let url = "http://nudge.test/webhooks/sms/twilio";
    let form = (
        "Content-Type",
        "application/x-www-form-urlencoded".to_string(),
    );
    let no_from = vec![("Body".to_string(), "hi".to_string())];
    let nul = vec![
        ("From".to_string(), "+12125550100".to_string()),
        ("Body".to_string(), "h\0i".to_string()),
    ];
    // (what is wrong, the form's fields)
    let bodies = [("no From", no_from), ("a NUL", nul)];
    for (name, params) in &bodies {
        let body = serde_urlencoded::to_string(params).unwrap().into_bytes();
        let body = &body;
        for (how, signature) in [
            ("unsigned", None),
            (
                "signed with another token",
                Some(signing::twilio_sign("other", url, params)),
            ),
        ] {
            let mut headers = vec![form.clone()];
            let is_signed = signature.is_some();
            headers.extend(signature.map(|s| ("X-Twilio-Signature", s)));
            let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body).await;
            assert_eq!(code, 401, "{name}, {how}: {text}");
            assert!(!text.contains("webhook secret"), "{name}, {how}: {text}");
            if is_signed {
                assert!(text.contains("Twilio auth token"), "{name}, {how}: {text}");
                assert!(
                    text.contains("provider-secret set twilio"),
                    "{name}, {how}: {text}"
                );
            }
        }
        // Signed as Twilio does: now the body is judged.
        let headers = [
            form.clone(),
            (
                "X-Twilio-Signature",
                signing::twilio_sign(TWILIO_TOKEN, url, params),
            ),
        ];
        let (code, text) = http(&app, "/webhooks/sms/twilio", &headers, body).await;
        assert_eq!(code, 422, "{name}, signed: {text}");
    }
    app.stop().await;
}
