//! `GET`, `HEAD` and `POST /approvals/{token}` (docs/flows.md, "approval"): the approval page and its answer,
//! over [`crate::service::approvals`]. Opening the link changes nothing (mail scanners open
//! links); only a `POST` decides. Refusals are pages too: 404 forged or altered, 410 expired,
//! 409 closed or paused, 422 a bad value (the form shown again with the field named). The token
//! is never written into a page or a log line.

use super::page::{escape, page};
use crate::api::AppState;
use crate::engine::Decision;
use crate::flow::model::FieldType;
use crate::service::approvals::{self, ApprovalView, Refusal};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::collections::HashMap;

/// `GET` and `HEAD`: the page, or why the link does not work.
pub async fn show(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    match approvals::open(&state.core, &token).await {
        Ok((_, view)) => form(StatusCode::OK, &view, None),
        Err(r) => refused(r),
    }
}

/// `POST`: the decision (`decision=approved|rejected`, the input fields, an optional `by`).
pub async fn decide(
    State(state): State<AppState>,
    Path(token): Path<String>,
    axum::Form(fields): axum::Form<HashMap<String, String>>,
) -> Response {
    let decision = fields.get("decision").and_then(|d| Decision::parse(d));
    let Some(decision) = decision else {
        return match approvals::open(&state.core, &token).await {
            Ok((_, view)) => form(
                StatusCode::UNPROCESSABLE_ENTITY,
                &view,
                Some("Choose Approve or Reject (the form field `decision` is `approved` or `rejected`)."),
            ),
            Err(r) => refused(r),
        };
    };
    let by = fields
        .get("by")
        .map(|b| b.trim().chars().take(200).collect::<String>())
        .filter(|b| !b.is_empty());
    match approvals::decide_by_link(&state.core, &token, decision, &fields, by).await {
        Ok(view) => page(
            StatusCode::OK,
            "Thank you",
            &format!(
                "<p role=\"status\">Recorded: <strong>{}</strong> for “{}”.</p>",
                if decision == Decision::Approved {
                    "approved"
                } else {
                    "rejected"
                },
                escape(&view.title)
            ),
        ),
        Err(Refusal::Invalid(bad)) => match approvals::open(&state.core, &token).await {
            Ok((_, view)) => {
                let list: Vec<String> = bad
                    .iter()
                    .map(|m| format!("{}: {}", m.field, m.message))
                    .collect();
                form(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    &view,
                    Some(&list.join("; ")),
                )
            }
            Err(r) => refused(r),
        },
        Err(r) => refused(r),
    }
}

fn refused(r: Refusal) -> Response {
    let (status, title, text) = match r {
        Refusal::Forged => (
            StatusCode::NOT_FOUND,
            "Link not valid",
            "This approval link is not valid. It may have been altered or copied incompletely."
                .to_string(),
        ),
        Refusal::Expired(at) => (
            StatusCode::GONE,
            "Link expired",
            format!(
                "This approval link expired at {}. Nothing was changed.",
                crate::engine::instant::format(at)
            ),
        ),
        Refusal::Closed => (
            StatusCode::CONFLICT,
            "Already closed",
            "This approval is no longer open: it was decided, timed out, or the enrollment moved \
             on. Nothing was changed."
                .to_string(),
        ),
        Refusal::Paused => (
            StatusCode::CONFLICT,
            "Paused",
            "The enrollment is paused. This link works again once it is resumed.".to_string(),
        ),
        Refusal::Invalid(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "Check the form",
            "Some values do not fit the form.".to_string(),
        ),
        Refusal::Service(e) => {
            tracing::error!(error = %e, "approval page failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                "The approval could not be loaded just now. Please try again.".to_string(),
            )
        }
    };
    page(status, title, &format!("<p>{}</p>", escape(&text)))
}

/// The page with its form; `error` is shown above it (a 422).
fn form(status: StatusCode, v: &ApprovalView, error: Option<&str>) -> Response {
    let mut body = String::new();
    if let Some(e) = error {
        body.push_str(&format!(
            "<p class=\"error\" role=\"alert\">{}</p>",
            escape(e)
        ));
    }
    if let Some(d) = &v.description {
        body.push_str(&format!("<p>{}</p>", escape(d)));
    }
    body.push_str(&format!(
        "<dl><dt>Contact</dt><dd>{}</dd><dt>Flow</dt><dd>{}</dd><dt>Step</dt><dd>{}</dd>\
         <dt>Link expires</dt><dd><time datetime=\"{e}\">{e}</time></dd></dl>",
        escape(&v.contact),
        escape(&v.flow),
        escape(&v.step),
        e = escape(&crate::engine::instant::format(v.expires_at)),
    ));
    body.push_str("<form method=\"post\">");
    for (name, t) in &v.fields {
        let id = format!("f-{}", escape(name));
        let input = match t {
            FieldType::Number => format!(
                "<input id=\"{id}\" name=\"{}\" inputmode=\"decimal\" required>",
                escape(name)
            ),
            FieldType::Boolean => format!(
                "<input id=\"{id}\" name=\"{}\" type=\"checkbox\" value=\"true\">",
                escape(name)
            ),
            FieldType::Timestamp => format!(
                "<input id=\"{id}\" name=\"{}\" placeholder=\"2026-09-01T08:00:00Z\" required>",
                escape(name)
            ),
            FieldType::String => format!("<input id=\"{id}\" name=\"{}\" required>", escape(name)),
        };
        body.push_str(&format!(
            "<label for=\"{id}\">{} ({})</label>{input}",
            escape(name),
            t.as_str()
        ));
    }
    body.push_str(
        "<label for=\"f-by\">Your name or email (optional)</label><input id=\"f-by\" name=\"by\" autocomplete=\"email\">\
         <div><button type=\"submit\" name=\"decision\" value=\"approved\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"rejected\">Reject</button></div></form>",
    );
    page(status, &v.title, &body)
}
