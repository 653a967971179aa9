//! `GET`/`HEAD`/`POST /unsubscribe/{token}`: one-click unsubscribe (RFC 8058; docs/signals.md, "One-click unsubscribe").
//!
//! `POST` with the body `List-Unsubscribe=One-Click` (what a mail client sends for the
//! `List-Unsubscribe-Post` header, and what the page's button sends) opts the contact out of
//! email and exits its enrollments: 200 with a confirmation page, the same on a repeat. `GET`
//! and `HEAD` show a page with that button and change nothing: mail scanners open links.
//!
//! Refusals are pages too, nothing changed: a forged or altered token, or one whose contact is
//! gone, 404; an expired one 410; another body 400. Every page is `Cache-Control: no-store`,
//! `Referrer-Policy: no-referrer` (the URL is a credential) and a strict CSP (no script, the
//! form may only post back here), its text escaped by maud; the form posts to its own URL
//! (`action=""`), so the token is never written into the page.

use super::read_body;
use crate::api::AppState;
use crate::service::unsubscribe::{self, Refused, Subject, ONE_CLICK};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

/// The largest body a POST may carry (the one-click body is 26 bytes).
pub const MAX_BODY: usize = 1024;

fn page(status: StatusCode, title: &str, body: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="robots" content="noindex";
                title { (title) }
                style { "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.5rem 1.25rem}" }
            }
            body {
                h1 { (title) }
                (body)
            }
        }
    };
    // The token pages' headers (policy, no-store, no-referrer, nosniff) are set for every
    // answer under `/unsubscribe/` by the router (`super::page_headers`).
    let mut response = (status, markup.into_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

fn refused(r: Refused) -> Response {
    match r {
        Refused::Forged | Refused::NoContact => page(
            StatusCode::NOT_FOUND,
            "Link not valid",
            html! { p { "This unsubscribe link is not valid. It may have been altered or copied incompletely: open it again from the email." } },
        ),
        Refused::Expired => page(
            StatusCode::GONE,
            "Link expired",
            html! { p { "This link has expired." } },
        ),
        Refused::Error(e) => {
            tracing::error!(error = %e, "unsubscribe page");
            page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                html! { p { "Something went wrong on our side; nothing was changed. Please try again in a minute." } },
            )
        }
    }
}

fn who(subject: &Subject) -> String {
    subject
        .email
        .clone()
        .unwrap_or_else(|| "this address".to_string())
}

/// `GET` and `HEAD`: the page with the button. Changes nothing.
pub async fn show(
    State(state): State<AppState>,
    method: Method,
    Path(token): Path<String>,
) -> Response {
    let now = state.core.clock.now();
    let subject = match unsubscribe::peek(&state.core, &token, now).await {
        Ok(s) => s,
        Err(r) => return refused(r),
    };
    let response = if subject.opted_out {
        page(
            StatusCode::OK,
            "You are unsubscribed",
            html! { p { "No more email goes to " strong { (who(&subject)) } "." } },
        )
    } else {
        page(
            StatusCode::OK,
            "Unsubscribe",
            html! {
                p { "Stop all email to " strong { (who(&subject)) } "?" }
                form method="post" action="" {
                    input type="hidden" name="List-Unsubscribe" value="One-Click";
                    button type="submit" { "Unsubscribe" }
                }
            },
        )
    };
    if method == Method::HEAD {
        let (parts, _) = response.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    response
}

/// `POST`: with `List-Unsubscribe=One-Click`, opts the contact out of email (idempotent).
pub async fn post(
    State(state): State<AppState>,
    Path(token): Path<String>,
    body: Body,
) -> Response {
    let body = match read_body(body, MAX_BODY).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let one_click = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body)
        .ok()
        .is_some_and(|form| form.iter().any(|(k, v)| format!("{k}={v}") == ONE_CLICK));
    if !one_click {
        return page(
            StatusCode::BAD_REQUEST,
            "Nothing changed",
            html! { p { "An unsubscribe request carries the body " code { (ONE_CLICK) } " (RFC 8058); use the button on this page." } },
        );
    }
    let now = state.core.clock.now();
    match unsubscribe::unsubscribe(&state.signals, &token, now).await {
        Ok((subject, _receipt)) => page(
            StatusCode::OK,
            "You are unsubscribed",
            html! { p { "No more email goes to " strong { (who(&subject)) } "." } },
        ),
        Err(r) => refused(r),
    }
}
