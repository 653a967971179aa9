//! Providers' own webhooks (docs/providers.md): each handler reads the body (413 over
//! [`MAX_WEBHOOK_BYTES`]), checks it with the account's secret for that provider on the raw
//! bytes (401: no secret set, forged, stale, replayed), reads it into notices
//! ([`crate::inbound::providers`]; 415 a wrong content type, 422 a body that does not parse),
//! and hands them to [`crate::service::providers`]. Nothing is stored before all of that passed.
//!
//! Answers: 200 with the signal's receipt (or `{"results": […]}` for a batch); an event nudge
//! does not act on, or about no one it knows, answers 200 `{"status": "ignored"}` so the
//! provider stops retrying.

use super::{public_url, with_keys, WebhookQuery, MAX_WEBHOOK_BYTES};
use crate::api::http::error::HttpError;
use crate::api::http::{read_body, receipt_json};
use crate::api::AppState;
use crate::inbound::providers::form::{self, Field, Form, FormType};
use crate::inbound::providers::{
    basic, calendar, mailgun, postmark, sendgrid, ses, twilio, Provider, Reading, Refusal,
};
use crate::inbound::signing;
use crate::service::providers::{self as service, Outcome};
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

/// The most fields a multipart form may have (SendGrid posts about twenty, plus attachments).
const MAX_FORM_FIELDS: u64 = 200;

impl From<Refusal> for HttpError {
    fn from(r: Refusal) -> HttpError {
        match r {
            Refusal::Unauthenticated(m) | Refusal::Replayed(m) => HttpError::unauthenticated(m),
            Refusal::ContentType(m) => HttpError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                m,
            ),
            Refusal::Malformed(m) => HttpError::unprocessable(m),
        }
    }
}

/// The account's secret for `provider`, or 401 saying how to set it.
fn secret_of<'k>(
    keys: &'k crate::store::provider_secrets::Keys,
    account: &str,
    provider: Provider,
) -> Result<&'k str, HttpError> {
    keys.of(provider).ok_or_else(|| {
        HttpError::unauthenticated(format!(
            "account `{account}` has no {provider} secret to check this webhook with: set {} \
             with `nudge provider-secret set {provider} - --account {account}` (or \
             AccountService.SetProviderSecret)",
            provider.what()
        ))
    })
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    header_text(headers, header::CONTENT_TYPE.as_str())
}

/// Refuses a body that is not JSON by its `Content-Type` (415).
fn expect_json(headers: &HeaderMap, provider: &str) -> Result<(), HttpError> {
    Ok(form::expect_json(content_type(headers), provider)?)
}

/// A form body, URL-encoded or multipart (read with `multer`: each part within the body's own
/// limit, at most [`MAX_FORM_FIELDS`] parts).
async fn read_form(headers: &HeaderMap, body: Bytes, provider: &str) -> Result<Form, HttpError> {
    let ct = content_type(headers);
    let form = match form::form_type(ct, provider)? {
        FormType::UrlEncoded => Form::urlencoded(&body)?,
        FormType::Multipart => {
            let boundary = multer::parse_boundary(ct.unwrap_or("")).map_err(|e| {
                HttpError::from(Refusal::Malformed(format!(
                    "the multipart Content-Type has no usable boundary: {e}"
                )))
            })?;
            let constraints = multer::Constraints::new().size_limit(
                multer::SizeLimit::new()
                    .whole_stream(MAX_WEBHOOK_BYTES as u64)
                    .per_field(MAX_WEBHOOK_BYTES as u64),
            );
            let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(body) });
            let mut multipart = multer::Multipart::with_constraints(stream, boundary, constraints);
            let mut fields = Vec::new();
            let broken = |e: multer::Error| {
                HttpError::from(Refusal::Malformed(format!(
                    "the multipart body is broken: {e}"
                )))
            };
            while let Some(field) = multipart.next_field().await.map_err(broken)? {
                if fields.len() as u64 >= MAX_FORM_FIELDS {
                    return Err(Refusal::Malformed(format!(
                        "the form has more than {MAX_FORM_FIELDS} fields"
                    ))
                    .into());
                }
                let name = field.name().unwrap_or("").to_string();
                let filename = field.file_name().map(str::to_string);
                let content_type = field.content_type().map(|m| m.to_string());
                let bytes = field.bytes().await.map_err(broken)?.to_vec();
                fields.push(Field {
                    name,
                    filename,
                    content_type,
                    bytes,
                });
            }
            Form { fields }
        }
    };
    Ok(form)
}

/// Acts on a verified reading and answers: one result alone, several as `results`. Mail in
/// no nudge thread on `POST /webhooks/email` answers `ignored_status` (202 there).
pub(super) async fn act(
    state: &AppState,
    account: &str,
    reading: Reading,
    seen_at: DateTime<Utc>,
    task: Option<&str>,
    ignored_status: StatusCode,
) -> Result<Response, HttpError> {
    let handled = service::apply(&state.signals, account, reading, seen_at, task)
        .await?
        .map_err(|service::Replayed| HttpError::from(signing::SignatureError::Replayed))?;
    let mut results: Vec<Value> = handled
        .outcomes
        .iter()
        .map(|o| match o {
            Outcome::Signal(r) => {
                let mut v = receipt_json(r);
                v["status"] = json!(if r.duplicate { "duplicate" } else { "stored" });
                v
            }
            Outcome::Recorded(what) => json!({"status": "recorded", "detail": what}),
            Outcome::Ignored(why) => json!({"status": "ignored", "reason": why}),
        })
        .collect();
    let all_ignored = handled
        .outcomes
        .iter()
        .all(|o| matches!(o, Outcome::Ignored(_)));
    let status = if all_ignored {
        ignored_status
    } else {
        StatusCode::OK
    };
    let body = if results.len() == 1 {
        results.pop().expect("one result")
    } else {
        json!({"results": results})
    };
    Ok((status, Json(body)).into_response())
}

/// When signatures are checked: the server's signature clock (the system's, but for tests).
fn signed_now(state: &AppState) -> DateTime<Utc> {
    state.signature_clock.now()
}

/// `POST /webhooks/email/mailgun`: Mailgun Routes `forward()`.
pub async fn mailgun_inbound(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let form = read_form(&headers, body, "Mailgun").await?;
    let now = signed_now(&state);
    let reading = with_keys(&state, account, |keys| {
        let key = secret_of(keys, account, Provider::Mailgun)?;
        Ok(mailgun::inbound(&form, key, now)?)
    })
    .await?;
    act(&state, account, reading, now, None, StatusCode::OK).await
}

/// `POST /webhooks/email/mailgun/events`: Mailgun's event webhooks.
pub async fn mailgun_events(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    expect_json(&headers, "Mailgun")?;
    let now = signed_now(&state);
    let reading = with_keys(&state, account, |keys| {
        let key = secret_of(keys, account, Provider::Mailgun)?;
        Ok(mailgun::events(&body, key, now)?)
    })
    .await?;
    act(&state, account, reading, now, None, StatusCode::OK).await
}

/// `POST /webhooks/email/sendgrid`: SendGrid Inbound Parse, behind basic auth.
pub async fn sendgrid_inbound(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let auth = header_text(&headers, header::AUTHORIZATION.as_str());
    with_keys(&state, account, |keys| {
        let expected = secret_of(keys, account, Provider::Sendgrid)?;
        Ok(basic::check(expected, auth, "sendgrid")?)
    })
    .await?;
    let form = read_form(&headers, body, "SendGrid's Inbound Parse").await?;
    form::refuse_nul(&form)?;
    let reading = sendgrid::inbound(&form)?;
    act(
        &state,
        account,
        reading,
        signed_now(&state),
        None,
        StatusCode::OK,
    )
    .await
}

/// `POST /webhooks/email/sendgrid/events`: SendGrid's signed Event Webhook.
pub async fn sendgrid_events(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let now = signed_now(&state);
    let signature = header_text(&headers, sendgrid::SIGNATURE_HEADER);
    let timestamp = header_text(&headers, sendgrid::TIMESTAMP_HEADER);
    with_keys(&state, account, |keys| {
        let text = secret_of(keys, account, Provider::SendgridEvents)?;
        let key = sendgrid::VerificationKey::parse(text).map_err(|e| {
            HttpError::unauthenticated(format!("the stored sendgrid-events key: {e}"))
        })?;
        Ok(sendgrid::verify(&key, signature, timestamp, &body, now)?)
    })
    .await?;
    expect_json(&headers, "SendGrid's Event Webhook")?;
    let reading = sendgrid::events(&body)?;
    act(&state, account, reading, now, None, StatusCode::OK).await
}

/// `POST /webhooks/email/postmark`: Postmark's inbound JSON, behind basic auth.
pub async fn postmark_inbound(
    state: State<AppState>,
    query: Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    postmark(state, query, headers, body, postmark::inbound).await
}

/// `POST /webhooks/email/postmark/events`: Bounce, SpamComplaint, SubscriptionChange.
pub async fn postmark_events(
    state: State<AppState>,
    query: Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    postmark(state, query, headers, body, postmark::events).await
}

async fn postmark(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
    read: fn(&[u8]) -> Result<Reading, Refusal>,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let auth = header_text(&headers, header::AUTHORIZATION.as_str());
    with_keys(&state, account, |keys| {
        let expected = secret_of(keys, account, Provider::Postmark)?;
        Ok(basic::check(expected, auth, "postmark")?)
    })
    .await?;
    expect_json(&headers, "Postmark")?;
    let reading = read(&body)?;
    act(
        &state,
        account,
        reading,
        signed_now(&state),
        None,
        StatusCode::OK,
    )
    .await
}

/// `POST /webhooks/email/ses`: SES notifications through SNS. The signing certificate's URL is
/// checked before it is fetched; a subscription is confirmed only for an allowed topic.
pub async fn ses(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let envelope = ses::Envelope::parse(&body)?;
    // The account's topics first: nothing is fetched for a topic no account takes.
    with_keys(&state, account, |keys| {
        let text = secret_of(keys, account, Provider::Ses)?;
        let topics = ses::parse_topics(text)
            .map_err(|e| HttpError::unauthenticated(format!("the stored ses topics: {e}")))?;
        if !topics.contains(&envelope.topic_arn) {
            return Err(HttpError::unauthenticated(format!(
                "the topic {} is not one account `{account}` takes notifications from: add its \
                 ARN to the account's `ses` secret",
                crate::quote::quote(&envelope.topic_arn)
            )));
        }
        Ok(())
    })
    .await?;
    let cert_url = ses::check_sns_url(&envelope.signing_cert_url, "SigningCertURL")?;
    let cert = state.sns.certificate(&cert_url).await.map_err(|e| {
        tracing::warn!(error = %e, "fetching an SNS signing certificate");
        HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the SNS signing certificate could not be fetched; SNS retries",
        )
    })?;
    let now = signed_now(&state);
    envelope.verify(&cert, now)?;
    match envelope.kind {
        ses::MessageType::SubscriptionConfirmation => {
            let url = envelope.subscribe_url.as_deref().ok_or_else(|| {
                HttpError::unprocessable("the SubscriptionConfirmation has no `SubscribeURL`")
            })?;
            let url = ses::check_sns_url(url, "SubscribeURL")?;
            state.sns.confirm(&url).await.map_err(|e| {
                tracing::warn!(error = %e, "confirming an SNS subscription");
                HttpError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "the subscription could not be confirmed with SNS; SNS sends it again",
                )
            })?;
            Ok(Json(json!({"status": "confirmed", "topic": envelope.topic_arn})).into_response())
        }
        // Visiting its URL would subscribe again: never done.
        ses::MessageType::UnsubscribeConfirmation => Ok(Json(json!({
            "status": "ignored",
            "reason": "an UnsubscribeConfirmation: the subscription ended; nothing to do",
        }))
        .into_response()),
        ses::MessageType::Notification => {
            let reading = ses::notices(&envelope)?;
            act(&state, account, reading, now, None, StatusCode::OK).await
        }
    }
}

/// Checks `X-Twilio-Signature` over the URL Twilio called and the form's fields, then the
/// body: every Twilio webhook (inbound SMS, message status, Voice) is read here.
pub(super) async fn twilio_form(
    state: &AppState,
    account: &str,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
) -> Result<Form, HttpError> {
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    // The signature first: it covers the form's fields, so a body that is no form is checked
    // as one without fields (and cannot match what Twilio signed).
    let form = Form::urlencoded(&body);
    let params = form.as_ref().map(Form::pairs).unwrap_or_default();
    let header = headers
        .get(signing::TWILIO_HEADER)
        .map(|v| {
            v.to_str()
                .map_err(|_| signing::SignatureError::TwilioMismatch)
        })
        .transpose();
    let url = public_url(state, headers, uri);
    with_keys(state, account, |keys| {
        let token = secret_of(keys, account, Provider::Twilio)?;
        let header = header.clone()?;
        signing::twilio_verify(token, &url, &params, header).map_err(|e| {
            let mut e = HttpError::from(e);
            e.message = format!(
                "{} (checked against the URL {url}; set --public-url if Twilio calls another)",
                e.message
            );
            e
        })
    })
    .await?;
    if content_type(headers).is_some() {
        form::form_type(content_type(headers), "Twilio")?;
    }
    let form = form?;
    form::refuse_nul(&form)?;
    Ok(form)
}

/// `POST /webhooks/sms/twilio/status`: message status callbacks.
pub async fn twilio_status(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let form = twilio_form(&state, account, &uri, &headers, body).await?;
    let reading = twilio::message_status(&form)?;
    act(
        &state,
        account,
        reading,
        signed_now(&state),
        None,
        StatusCode::OK,
    )
    .await
}

/// `POST /webhooks/call/twilio`: Voice call status callbacks (`?task=tk_…` names the task).
pub async fn twilio_call(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    if let Some(task) = &query.task {
        crate::api::http::check_id("task", task)?;
    }
    let form = twilio_form(&state, account, &uri, &headers, body).await?;
    let reading = twilio::call_status(&form)?;
    let now = signed_now(&state);
    act(
        &state,
        account,
        reading,
        now,
        query.task.as_deref(),
        StatusCode::OK,
    )
    .await
}

/// `POST /webhooks/calendar/calendly`: Calendly v2 `invitee.created` / `invitee.canceled`.
pub async fn calendly(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let now = signed_now(&state);
    let header = header_text(&headers, calendar::CALENDLY_HEADER);
    let replay = with_keys(&state, account, |keys| {
        let key = secret_of(keys, account, Provider::Calendly)?;
        Ok(calendar::verify_calendly(key, header, &body, now)?)
    })
    .await?;
    expect_json(&headers, "Calendly")?;
    let notice = calendar::calendly(&body)?;
    let reading = calendar::reading(notice, Some(replay));
    act(&state, account, reading, now, None, StatusCode::OK).await
}

/// `POST /webhooks/calendar/calcom`: Cal.com bookings.
pub async fn calcom(
    State(state): State<AppState>,
    Query(query): Query<WebhookQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let account = query.account()?;
    let body = read_body(body, MAX_WEBHOOK_BYTES).await?;
    let now = signed_now(&state);
    let header = header_text(&headers, calendar::CALCOM_HEADER);
    with_keys(&state, account, |keys| {
        let secret = secret_of(keys, account, Provider::Calcom)?;
        Ok(calendar::verify_calcom(secret, header, &body, now)?)
    })
    .await?;
    expect_json(&headers, "Cal.com")?;
    let notice = calendar::calcom(&body)?;
    let reading = calendar::reading(notice, None);
    act(&state, account, reading, now, None, StatusCode::OK).await
}
