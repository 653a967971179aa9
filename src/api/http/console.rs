//! The console (docs/operations.md): a read-only web UI on the same port, server-rendered HTML (`maud`,
//! which escapes every interpolated value), no JavaScript.
//!
//! Sign-in takes an API token (full scope) and sets a session cookie: `HttpOnly`,
//! `SameSite=Strict`, `Secure` when the console is reached over TLS (`--public-url https://…`
//! or `X-Forwarded-Proto: https`), valid for [`SESSION_HOURS`]. The cookie holds the token's id,
//! the account and the expiry, signed with HMAC-SHA256 under the server's link secret (so a
//! forged or expired cookie is refused, and `nudge link-secret rotate` signs everyone out); never
//! the token itself. The pages only read. The forms that post (sign-in, sign-out, and the
//! simulator, which stores nothing) carry a CSRF token bound to who posts it: an HMAC, under the
//! server's link secret, of the session cookie (signed in) or of the `nudge_csrf` nonce cookie
//! the sign-in page sets (not yet signed in). A cookie and a field planted together do not
//! match, since only the server can compute the one from the other (`SameSite=Strict` on both
//! cookies besides).

use super::AppState;
use crate::auth::{Principal, Scope};
use crate::clock::{from_millis, to_millis};
use crate::engine::sentence::{self, ShownZone};
use crate::engine::simulate::Timeline;
use crate::service::enrollments::{self, Entry, ListFilter};
use crate::service::ids::EnrollmentId;
use crate::service::simulate::FlowSource;
use crate::service::ServiceError;
use crate::timing::Zone;
use axum::extract::{Form, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Mac, SimpleHmac};
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;
use sha2::Sha256;

/// How long a console session lasts.
pub const SESSION_HOURS: i64 = 8;
const SESSION: &str = "nudge_session";
const CSRF: &str = "nudge_csrf";

/// The console's routes (nested under `/console`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console", get(home))
        .route("/console/sign-in", get(sign_in_page).post(sign_in))
        .route("/console/sign-out", axum::routing::post(sign_out))
        .route("/console/flows", get(flows))
        .route("/console/flows/{id}", get(flow_page))
        .route("/console/enrollments", get(enrollment_list))
        .route("/console/enrollments/{id}", get(enrollment_page))
        .route("/console/simulate", get(simulate_page).post(simulate))
        .route("/console/style.css", get(stylesheet))
}

/// The console's Content-Security-Policy: nothing runs, styles come from the stylesheet nudge
/// serves ([`stylesheet`]), SVG and forms stay on this origin, and no one frames a page (the
/// sign-in page takes a full API token).
pub const CONSOLE_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
                               form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The stylesheet every console page links (no inline style, so the policy allows none).
async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

type Page = Result<Response, Response>;

fn layout(title: &str, signed_in: bool, csrf: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · nudge" }
                link rel="stylesheet" href="/console/style.css";
            }
            body {
                // Keyboard users jump past the navigation to the page.
                a.skip href="#main" { "Skip to content" }
                header {
                    span.brand { "nudge" }
                    nav aria-label="Console" {
                        a href="/console/flows" { "Flows" }
                        a href="/console/enrollments" { "Enrollments" }
                        a href="/console/simulate" { "Simulator" }
                    }
                    @if signed_in {
                        form method="post" action="/console/sign-out" class="inline" {
                            input type="hidden" name="csrf" value=(csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main id="main" {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// An enrollment's status as a badge: its word, coloured (the colour only repeats the word).
fn status_badge(status: crate::engine::Status) -> Markup {
    html! { span class={ "status status-" (status.as_str()) } { (status.as_str()) } }
}

/// The console's stylesheet, served by nudge itself (no build step, no CDN; the console's CSP
/// allows only this file). Readable type, visible focus, status colours that carry their word.
const STYLE: &str = "\
:root{--ink:#1d2430;--muted:#5b6472;--line:#d7dce3;--bg:#f7f8fa;--accent:#2457a6}\
*{box-sizing:border-box}\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;\
font-size:16px;line-height:1.5;color:var(--ink);background:var(--bg);margin:0}\
header{display:flex;align-items:center;gap:1.5em;padding:.6em 1.5em;background:#fff;\
border-bottom:1px solid var(--line)}\
.brand{font-weight:700;letter-spacing:.02em}\
nav a{margin-right:1.2em;color:var(--accent);text-decoration:none;font-weight:500}\
nav a:hover{text-decoration:underline}\
main{max-width:72rem;margin:0 auto;padding:1em 1.5em 3em}\
h1{font-size:1.6em;margin:.4em 0 .6em}h2{font-size:1.25em;margin:1.4em 0 .5em}\
a{color:var(--accent)}\
:focus-visible{outline:3px solid #f0b400;outline-offset:2px}\
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5em}\
.skip:focus{left:.5em}\
.inline{display:inline;margin-left:auto}\
button{font:inherit;padding:.3em .9em;border:1px solid var(--accent);border-radius:4px;\
background:var(--accent);color:#fff;cursor:pointer}\
input,select{font:inherit;padding:.25em .4em;border:1px solid var(--line);border-radius:4px}\
form label{margin-right:.8em}\
table{border-collapse:collapse;background:#fff;margin:.5em 0 1em}\
td,th{border:1px solid var(--line);padding:.35em .6em;text-align:left;vertical-align:top}\
th{background:#eef1f5;font-weight:600}tr:nth-child(even) td{background:#fafbfc}\
caption{text-align:left;font-weight:600;padding:.3em 0}\
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}\
pre{background:#fff;border:1px solid var(--line);padding:.6em;overflow:auto}\
details summary{cursor:pointer;color:var(--muted)}\
.status{display:inline-block;padding:0 .5em;border-radius:1em;font-size:.85em;font-weight:600;\
border:1px solid}\
.status-active{color:#14532d;background:#dcfce7}.status-paused{color:#713f12;background:#fef9c3}\
.status-completed{color:#1e3a8a;background:#dbeafe}.status-exited{color:#374151;background:#e5e7eb}\
.status-failed{color:#7f1d1d;background:#fee2e2}\
.counts{display:flex;flex-wrap:wrap;gap:.5em;list-style:none;padding:0}\
.explain{background:#eef3fb;border-left:4px solid var(--accent);padding:.5em .8em}\
.run{fill:#4a7}.deferral{fill:#e90}.hold{fill:#c33}.signal{fill:#36c}.window{fill:#dfd}\
.sms-window{fill:#ddf;opacity:.6}.axis{stroke:#555}.tick{font-size:10px}\
.step{fill:#fff;stroke:#333}.edge{stroke:#777}.bar{fill:#4a7}\
.interval{stroke:#36c;stroke-width:3}.estimate{fill:#36c}.control{fill:#555}\
.warning{background:#fee;border:1px solid #c33;padding:.5em}.state-stopped{color:#a22}\
.state-winner{color:#262;font-weight:bold}details.entry pre{font-size:85%;white-space:pre-wrap}\
details.entry summary{cursor:pointer}.zone{color:#555}";

fn html_response(status: StatusCode, m: Markup, cookies: &[String]) -> Response {
    let mut r = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        m.0,
    )
        .into_response();
    for c in cookies {
        r.headers_mut()
            .append(header::SET_COOKIE, c.parse().expect("a cookie header"));
    }
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        "no-store".parse().expect("a static header"),
    );
    r
}

fn redirect(to: &str, cookies: &[String]) -> Response {
    let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response();
    for c in cookies {
        r.headers_mut()
            .append(header::SET_COOKIE, c.parse().expect("a cookie header"));
    }
    r
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state
        .public_url
        .as_deref()
        .is_some_and(|u| u.starts_with("https://"))
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

fn set_cookie(name: &str, value: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{name}={value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={max_age}{}",
        if secure { "; Secure" } else { "" }
    )
}

fn sign(secret: &[u8], payload: &str) -> String {
    let mut mac = SimpleHmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
    mac.update(payload.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Whether `mac_hex` is [`sign`] of `payload` under `secret`, compared in constant time.
fn signed(secret: &[u8], payload: &str, mac_hex: &str) -> bool {
    let Ok(mac) = hex::decode(mac_hex) else {
        return false;
    };
    let mut check = SimpleHmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
    check.update(payload.as_bytes());
    check.verify_slice(&mac).is_ok()
}

/// The session cookie's value: `base64url(token id | account | expiry ms) . hmac`.
fn session_value(secret: &[u8], who: &Principal, expires_ms: i64) -> String {
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{}|{}|{expires_ms}", who.token_id, who.account_id));
    let mac = sign(secret, &payload);
    format!("{payload}.{mac}")
}

/// Why a session cookie is not accepted (each sends the browser to sign in again).
#[derive(Debug, PartialEq, Eq)]
enum SessionError {
    Missing,
    Forged,
    Expired,
}

fn check_session(secret: &[u8], value: &str, now_ms: i64) -> Result<Principal, SessionError> {
    let (payload, mac) = value.rsplit_once('.').ok_or(SessionError::Forged)?;
    if !signed(secret, payload, mac) {
        return Err(SessionError::Forged);
    }
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or(SessionError::Forged)?;
    let mut parts = text.splitn(3, '|');
    let (Some(token_id), Some(account), Some(expires)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(SessionError::Forged);
    };
    let expires: i64 = expires.parse().map_err(|_| SessionError::Forged)?;
    if expires <= now_ms {
        return Err(SessionError::Expired);
    }
    Ok(Principal {
        account_id: account.to_string(),
        token_id: token_id.to_string(),
        scope: Scope::Full,
    })
}

/// The signed-in caller and the page's CSRF token, or the redirect to sign in.
async fn session(state: &AppState, headers: &HeaderMap) -> Result<(Principal, String), Response> {
    let to_sign_in = |why: SessionError| {
        tracing::debug!(?why, "console session refused");
        redirect("/console/sign-in", &[])
    };
    let value = cookie(headers, SESSION).ok_or_else(|| to_sign_in(SessionError::Missing))?;
    let secret = crate::store::link_secret::load(&state.core.db)
        .await
        .map_err(|e| error_page(ServiceError::from(e)))?;
    let now = to_millis(state.core.clock.now());
    let who = check_session(&secret, &value, now).map_err(to_sign_in)?;
    Ok((who, form_token(&secret, Binding::Session(&value))))
}

/// What a form's CSRF token is bound to.
#[derive(Clone, Copy)]
enum Binding<'a> {
    /// The signed-in session: its cookie's value.
    Session(&'a str),
    /// Before sign-in: the `nudge_csrf` nonce cookie.
    Nonce(&'a str),
}

impl Binding<'_> {
    /// What the token signs: the purpose, the kind of binding and its value.
    fn payload(self) -> String {
        match self {
            Binding::Session(value) => format!("csrf|session|{value}"),
            Binding::Nonce(nonce) => format!("csrf|nonce|{nonce}"),
        }
    }
}

/// A form's CSRF token: the HMAC of what it is bound to, under the link secret.
fn form_token(secret: &[u8], binding: Binding) -> String {
    sign(secret, &binding.payload())
}

/// The CSRF check of a form posted before sign-in or by sign-out: its `csrf` field is the token
/// of the cookie sent with it (the session's when `signed_in`, else the nonce's), compared in
/// constant time. (A signed-in page's form is checked against [`session`]'s token.)
fn csrf_ok(secret: &[u8], headers: &HeaderMap, field: &str, signed_in: bool) -> bool {
    let name = if signed_in { SESSION } else { CSRF };
    let Some(bound) = cookie(headers, name).filter(|b| !b.is_empty()) else {
        return false;
    };
    let binding = if signed_in {
        Binding::Session(&bound)
    } else {
        Binding::Nonce(&bound)
    };
    signed(secret, &binding.payload(), field)
}

fn error_page(e: ServiceError) -> Response {
    let status = match &e {
        ServiceError::NotFound { .. } => StatusCode::NOT_FOUND,
        ServiceError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let message = match &e {
        ServiceError::Invalid(v) => v
            .iter()
            .map(|v| format!("{}: {}", v.field, v.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    html_response(
        status,
        layout("Error", false, "", html! { p.error { (message) } }),
        &[],
    )
}

fn new_csrf() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

async fn home() -> Response {
    redirect("/console/enrollments", &[])
}

#[derive(Deserialize)]
struct SignInForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
}

fn sign_in_form(csrf: &str, problem: Option<&str>) -> Markup {
    layout(
        "Sign in",
        false,
        csrf,
        html! {
            @if let Some(p) = problem { p.error { (p) } }
            form method="post" action="/console/sign-in" {
                input type="hidden" name="csrf" value=(csrf);
                label { "API token " input type="password" name="token" autocomplete="off"; }
                button type="submit" { "Sign in" }
            }
        },
    )
}

async fn sign_in_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let secret = match crate::store::link_secret::load(&state.core.db).await {
        Ok(s) => s,
        Err(e) => return error_page(e.into()),
    };
    let nonce = new_csrf();
    let c = set_cookie(CSRF, &nonce, 3600, secure(&state, &headers));
    let token = form_token(&secret, Binding::Nonce(&nonce));
    html_response(StatusCode::OK, sign_in_form(&token, None), &[c])
}

async fn sign_in(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let secret = match crate::store::link_secret::load(&state.core.db).await {
        Ok(s) => s,
        Err(e) => return error_page(e.into()),
    };
    if !csrf_ok(&secret, &headers, &form.csrf, false) {
        return html_response(
            StatusCode::FORBIDDEN,
            sign_in_form("", Some("The form expired; open the sign-in page again.")),
            &[],
        );
    }
    let csrf = form.csrf.clone();
    let refuse = |msg: &str| {
        html_response(
            StatusCode::UNAUTHORIZED,
            sign_in_form(&csrf, Some(msg)),
            &[],
        )
    };
    let header = format!("Bearer {}", form.token.trim());
    let who = match crate::auth::authenticate(&state.core.db, &state.tokens, Some(&header)).await {
        Ok(who) => who,
        Err(_) => return refuse("That token is not valid here."),
    };
    if who.scope != Scope::Full {
        return refuse("The console needs a full-account token, not an enrollment-scoped one.");
    }
    let now = to_millis(state.core.clock.now());
    let expires = now + SESSION_HOURS * 3_600_000;
    let value = session_value(&secret, &who, expires);
    let c = set_cookie(
        SESSION,
        &value,
        SESSION_HOURS * 3600,
        secure(&state, &headers),
    );
    redirect("/console/enrollments", &[c])
}

async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let secret = match crate::store::link_secret::load(&state.core.db).await {
        Ok(s) => s,
        Err(e) => return error_page(e.into()),
    };
    if !csrf_ok(&secret, &headers, &form.csrf, true) {
        return (StatusCode::FORBIDDEN, "the form expired; reload the page").into_response();
    }
    let s = secure(&state, &headers);
    redirect(
        "/console/sign-in",
        &[set_cookie(SESSION, "", 0, s), set_cookie(CSRF, "", 0, s)],
    )
}

async fn flows(State(state): State<AppState>, headers: HeaderMap) -> Page {
    let (who, csrf) = session(&state, &headers).await?;
    let (list, _) = crate::service::flows::list(&state.core, &who.account_id, 500, "")
        .await
        .map_err(error_page)?;
    let counts = enrollments::status_counts(&state.core, &who.account_id, "", "")
        .await
        .map_err(error_page)?;
    let body = html! {
        table id="flows" {
            tr {
                th scope="col" { "Name" } th scope="col" { "Latest version" }
                th scope="col" { "Enrollments by status" } th scope="col" { "Created" }
            }
            @for f in &list {
                tr {
                    td { a href={ "/console/flows/" (f.id) } { (f.name) } br; code { (f.id) } }
                    td { (f.version) }
                    td {
                        @if let Some(by_status) = counts.get(&f.id) {
                            @for (status, n) in by_status {
                                a href={ "/console/enrollments?flow=" (f.id) "&status=" (status.as_str()) } {
                                    (status_badge(*status)) " " (n)
                                } " "
                            }
                        } @else { "none yet" }
                    }
                    td { (f.created_at.to_rfc3339()) }
                }
            }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        layout("Flows", true, &csrf, body),
        &[],
    ))
}

#[derive(Deserialize)]
struct VersionQuery {
    #[serde(default)]
    version: i32,
}

async fn flow_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<VersionQuery>,
) -> Page {
    let (who, csrf) = session(&state, &headers).await?;
    let latest = crate::service::flows::get(&state.core, &who.account_id, &id, 0)
        .await
        .map_err(error_page)?;
    let shown = if q.version > 0 && q.version != latest.version {
        crate::service::flows::get(&state.core, &who.account_id, &id, q.version)
            .await
            .map_err(error_page)?
    } else {
        latest.clone()
    };
    let parsed = crate::runtime::flows::parse(&shown.definition).ok();
    // The funnel of the version shown, or of every version when none is asked for.
    let stats = crate::service::flow_stats::get(
        &state.core,
        &who.account_id,
        &latest.id,
        q.version.max(0),
        None,
    )
    .await
    .map_err(error_page)?;
    // Where the running enrollments are: a version keeps its own until they are moved.
    let live = crate::service::enrollments::migrate::live_by_version(
        &state.core,
        &who.account_id,
        &latest.id,
    )
    .await
    .map_err(error_page)?;
    let body = html! {
        p { "Versions: "
            a href={ "/console/flows/" (latest.id) } { "all" } " "
            @for v in 1..=latest.version {
                a href={ "/console/flows/" (latest.id) "?version=" (v) } { "v" (v) } " "
            }
        }
        table.live-by-version {
            caption { "Running enrollments (active or paused) by version" }
            thead { tr { th scope="col" { "Version" } th scope="col" { "Running" } } }
            tbody {
                @for v in (1..=latest.version).rev() {
                    tr {
                        td { "v" (v) @if v == latest.version { " (latest)" } }
                        td { (live.iter().find(|(version, _)| *version == v).map_or(0, |(_, n)| *n)) }
                    }
                }
            }
        }
        h2 { "Version " (shown.version) }
        @if let Some(flow) = &parsed { (flow_graph(flow)) }
        details { summary { "Definition" } pre { (shown.definition) } }
        (funnel_section(&stats))
    };
    Ok(html_response(
        StatusCode::OK,
        layout(&format!("Flow {}", latest.name), true, &csrf, body),
        &[],
    ))
}

/// A flow's funnel (each step's counts, drawn as bars) and each step experiment's variants
/// (rates, and the always-valid interval of each difference from the control on one axis).
fn funnel_section(stats: &crate::service::flow_stats::FlowStats) -> Markup {
    use crate::engine::funnel::Metric;
    let scope = if stats.version == 0 {
        "every version".to_string()
    } else {
        format!("version {}", stats.version)
    };
    let most = stats
        .steps
        .iter()
        .map(|s| s.count(Metric::Entered))
        .max()
        .unwrap_or(0)
        .max(1);
    let row_h = 26.0;
    let (label_w, bar_w) = (150.0, 420.0);
    let height = 10.0 + stats.steps.len() as f64 * row_h;
    html! {
        section id="funnel" aria-labelledby="funnel-title" {
            h2 id="funnel-title" { "Funnel (" (scope) ")" }
            svg id="funnel-bars" xmlns="http://www.w3.org/2000/svg" role="img"
                aria-label={ "Contacts entering each step, " (scope) }
                width=(label_w + bar_w + 90.0) height=(height) {
                @for (i, s) in stats.steps.iter().enumerate() {
                    @let y = 5.0 + i as f64 * row_h;
                    @let n = s.count(Metric::Entered);
                    @let w = (n as f64 / most as f64 * bar_w).max(if n > 0 { 2.0 } else { 0.0 });
                    text class="tick" x="0" y=(y + 16.0) { (s.step) " (" (s.step_type) ")" }
                    rect class="bar" x=(label_w) y=(y) width=(w) height=(row_h - 6.0) {}
                    text class="tick" x=(label_w + w + 6.0) y=(y + 16.0) { (n) " entered" }
                }
            }
            table {
                thead { tr {
                    th scope="col" { "Step" } th scope="col" { "Entered" } th scope="col" { "Sent" }
                    th scope="col" { "Failed" } th scope="col" { "Bounced" } th scope="col" { "Replies" }
                    th scope="col" { "Interested" } th scope="col" { "Meetings" }
                    th scope="col" { "Opted out" } th scope="col" { "Exited" }
                } }
                tbody {
                    @for s in &stats.steps {
                        tr {
                            th scope="row" { (s.step) }
                            td { (s.count(Metric::Entered)) } td { (s.count(Metric::Sent)) }
                            td { (s.count(Metric::Failed)) } td { (s.count(Metric::Bounced)) }
                            td { (s.count(Metric::Replies)) }
                            td { (s.count(Metric::Intent(crate::inbound::intent::Intent::Interested))) }
                            td { (s.count(Metric::MeetingsBooked)) } td { (s.count(Metric::OptedOut)) }
                            td { (s.count(Metric::Exited)) }
                        }
                    }
                }
            }
            @for s in &stats.steps {
                @if let Some(e) = &s.experiment {
                    (experiment_section(&s.step, e))
                }
            }
        }
    }
}

/// One step experiment: its settings, a warning when the split is off, its variants drawn on
/// one axis of "difference from the control" (each a point and its interval; the control at 0),
/// and the table of figures, with "not enough data yet" where the test does not back a number.
fn experiment_section(step: &str, e: &crate::service::flow_stats::ExperimentStats) -> Markup {
    use crate::service::flow_stats::VariantState;
    let compared: Vec<_> = e.variants.iter().filter_map(|v| v.comparison).collect();
    let low = compared.iter().map(|c| c.ci_low).fold(0.0f64, f64::min);
    let high = compared.iter().map(|c| c.ci_high).fold(0.0f64, f64::max);
    let span = (high - low).max(0.01);
    let (left, width, row_h) = (110.0, 440.0, 28.0);
    let x = |d: f64| left + (d - low) / span * width;
    let height = 30.0 + e.variants.len() as f64 * row_h;
    let pct = |v: f64| format!("{:.1}%", v * 100.0);
    let signed = |v: f64| format!("{:+.1} pts", v * 100.0);
    html! {
        section class="experiment" aria-label={ "Experiment " (e.key) } {
            h3 { "Experiment " (e.key) " at " (step) }
            p { "Goal " code { (e.settings.goal.as_str()) } ", alpha " (e.settings.alpha)
                @if e.settings.auto_stop { ", stops the loser by itself" } "." }
            @if e.sample_ratio_warning {
                p class="warning" role="alert" {
                    "Warning: the exposed counts do not follow the weights (sample-ratio p = "
                    (format!("{:.2e}", e.sample_ratio_p)) "). Read no result until it is explained." }
            }
            svg class="intervals" xmlns="http://www.w3.org/2000/svg" role="img"
                aria-label={ "Difference of each variant's rate from the control, with its always-valid interval" }
                width=(left + width + 20.0) height=(height) {
                line class="axis" x1=(x(0.0)) y1="4" x2=(x(0.0)) y2=(height - 18.0) {}
                @if low < 0.0 { text class="tick" x=(x(low)) y=(height - 4.0) { (signed(low)) } }
                text class="tick" x=(x(0.0) - 3.0) y=(height - 4.0) { "0" }
                @if high > 0.0 { text class="tick" x=(x(high) - 40.0) y=(height - 4.0) { (signed(high)) } }
                @for (i, v) in e.variants.iter().enumerate() {
                    @let y = 14.0 + i as f64 * row_h;
                    text class="tick" x="0" y=(y + 4.0) { (v.name) " " (pct(v.rate)) }
                    @if i == 0 {
                        circle class="control" cx=(x(0.0)) cy=(y) r="5" {}
                        text class="tick" x=(x(0.0) + 8.0) y=(y + 4.0) { "control" }
                    } @else if let Some(c) = v.comparison {
                        line class="interval" x1=(x(c.ci_low)) y1=(y) x2=(x(c.ci_high)) y2=(y) {}
                        circle class="estimate" cx=(x(c.difference)) cy=(y) r="5" {}
                    } @else {
                        text class="tick" x=(left) y=(y + 4.0) { "not enough data yet" }
                    }
                }
            }
            table {
                thead { tr {
                    th scope="col" { "Variant" } th scope="col" { "State" } th scope="col" { "Weight" }
                    th scope="col" { "Exposed" } th scope="col" { "Converted" } th scope="col" { "Rate" }
                    th scope="col" { "Difference" } th scope="col" { "Interval" } th scope="col" { "p" }
                    th scope="col" { "Why" }
                } }
                tbody {
                    @for (i, v) in e.variants.iter().enumerate() {
                        tr {
                            th scope="row" { (v.name) @if i == 0 { " (control)" } }
                            td class={ "state-" (v.state.as_str()) } { (v.state.as_str()) }
                            td { (v.weight) } td { (v.exposed) } td { (v.converted) } td { (pct(v.rate)) }
                            @if let Some(c) = v.comparison {
                                td { (signed(c.difference)) }
                                td { "[" (signed(c.ci_low)) ", " (signed(c.ci_high)) "]" }
                                td { (format!("{:.4}", c.p_value)) }
                            } @else {
                                td colspan="3" { @if let Some(n) = v.not_yet { (n.as_str()) } @else { "the control: the others are compared to it" } }
                            }
                            td { @if v.state != VariantState::Running {
                                (v.stopped_reason.as_deref().unwrap_or(""))
                            } }
                        }
                    }
                }
            }
        }
    }
}

/// The flow as a graph: each step a box in the column of its distance from `start`, each
/// `next` an arrow labelled with its key.
fn flow_graph(flow: &crate::flow::Flow) -> Markup {
    use std::collections::{BTreeMap, VecDeque};
    let mut depth: BTreeMap<String, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([(flow.start.to_string(), 0usize)]);
    while let Some((id, d)) = queue.pop_front() {
        if depth.contains_key(&id) {
            continue;
        }
        depth.insert(id.clone(), d);
        if let Some(step) = flow.step(&id) {
            for (_, to) in step.successors() {
                queue.push_back((to.to_string(), d + 1));
            }
        }
    }
    for id in flow.steps.keys() {
        depth.entry(id.to_string()).or_insert(0);
    }
    let mut rows: BTreeMap<usize, usize> = BTreeMap::new();
    let mut place: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (id, d) in &depth {
        let row = rows.entry(*d).or_insert(0);
        place.insert(
            id.clone(),
            (20.0 + *d as f64 * 170.0, 20.0 + *row as f64 * 60.0),
        );
        *row += 1;
    }
    let width = 40.0 + (rows.len().max(1)) as f64 * 170.0;
    let height = 40.0 + rows.values().max().copied().unwrap_or(1) as f64 * 60.0;
    html! {
        svg id="flow-graph" xmlns="http://www.w3.org/2000/svg" width=(width) height=(height) {
            @for (id, step) in &flow.steps {
                @for (key, to) in step.successors() {
                    @if let (Some(a), Some(b)) = (place.get(id.as_str()), place.get(to.as_str())) {
                        line class="edge" x1=(a.0 + 130.0) y1=(a.1 + 18.0) x2=(b.0) y2=(b.1 + 18.0) {}
                        text class="tick" x=((a.0 + 130.0 + b.0) / 2.0) y=((a.1 + b.1) / 2.0 + 14.0) { (key) }
                    }
                }
            }
            @for (id, step) in &flow.steps {
                @if let Some((x, y)) = place.get(id.as_str()) {
                    g class="step-node" data-step=(id.as_str()) {
                        rect class="step" x=(x) y=(y) width="130" height="36" rx="4" {}
                        text x=(x + 6.0) y=(y + 15.0) { (id.as_str()) }
                        text class="tick" x=(x + 6.0) y=(y + 30.0) { (step.kind().as_str()) }
                    }
                }
            }
        }
    }
}

#[derive(Deserialize, Default)]
struct ListQuery {
    #[serde(default)]
    contact: String,
    #[serde(default)]
    flow: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    after: String,
}

async fn enrollment_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<ListQuery>,
) -> Page {
    let (who, csrf) = session(&state, &headers).await?;
    let (list, next) = enrollments::list(
        &state.core,
        &who.account_id,
        ListFilter {
            flow_id: q.flow.clone(),
            contact_id: q.contact.clone(),
            status: q.status.clone(),
        },
        100,
        &q.after,
    )
    .await
    .map_err(error_page)?;
    // The filter's enrollments by status (the status filter aside): how many of each.
    let mut counts: std::collections::BTreeMap<crate::engine::Status, i64> = Default::default();
    for by_status in enrollments::status_counts(&state.core, &who.account_id, &q.flow, &q.contact)
        .await
        .map_err(error_page)?
        .into_values()
    {
        for (status, n) in by_status {
            *counts.entry(status).or_default() += n;
        }
    }
    let body = html! {
        ul.counts aria-label="Enrollments by status" {
            @for (status, n) in &counts {
                li { (status_badge(*status)) " " (n) }
            }
        }
        form method="get" action="/console/enrollments" {
            label { "Contact " input name="contact" value=(q.contact); } " "
            label { "Flow " input name="flow" value=(q.flow); } " "
            label { "Status "
                select name="status" {
                    option value="" { "any" }
                    @for s in ["active", "paused", "completed", "exited", "failed"] {
                        option value=(s) selected[q.status == s] { (s) }
                    }
                }
            } " "
            button type="submit" { "Filter" }
        }
        table id="enrollments" {
            tr { th { "Enrollment" } th { "Contact" } th { "Flow" } th { "Status" } th { "Step" } th { "Next run" } }
            @for e in &list {
                tr {
                    td { a href={ "/console/enrollments/" (e.id.as_str()) } { (e.id.as_str()) } }
                    td { (e.contact_id) }
                    td { (e.flow_id) " v" (e.flow_version) }
                    td { (status_badge(e.status)) }
                    td { (e.state.run.as_ref().map(|r| r.step.as_str()).unwrap_or("")) }
                    td { (e.state.next_run_at.map(|t| t.to_rfc3339()).unwrap_or_default()) }
                }
            }
        }
        @if !next.is_empty() {
            a href={ "/console/enrollments?contact=" (q.contact) "&flow=" (q.flow) "&status=" (q.status) "&after=" (next) } { "Next page" }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        layout("Enrollments", true, &csrf, body),
        &[],
    ))
}

/// What the timeline draws.
#[derive(Debug, Default)]
struct Drawing {
    /// `(label, start, end, class)`: runs, deferrals, holds.
    bars: Vec<(String, DateTime<Utc>, DateTime<Utc>, &'static str)>,
    /// `(label, at)`: signals.
    marks: Vec<(String, DateTime<Utc>)>,
}

fn ts(v: Option<&serde_json::Value>) -> Option<DateTime<Utc>> {
    v.and_then(|v| v.as_str())
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// What a signal entry's reply said, in words: its intent, how sure and in which language,
/// the words that decided, and a date or referral it named; `None` for a signal whose words
/// were not read.
fn reading(detail: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let r = detail.get("intent")?;
    let text = |k: &str| r.get(k).and_then(|v| v.as_str());
    let mut out = format!(
        "{} ({:.0} % sure, {})",
        text("intent")?,
        r.get("confidence").and_then(|v| v.as_f64()).unwrap_or(0.0) * 100.0,
        text("language").unwrap_or("und")
    );
    let evidence: Vec<String> = r
        .get("evidence")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|e| e.as_str())
                .map(|e| format!("“{e}”"))
                .collect()
        })
        .unwrap_or_default();
    if !evidence.is_empty() {
        out.push_str(" — ");
        out.push_str(&evidence.join(", "));
    }
    if let Some(day) = text("resume_on") {
        out.push_str(&format!("; resume on {day}"));
    }
    if let Some(email) = r
        .get("referral")
        .and_then(|f| f.get("email"))
        .and_then(|v| v.as_str())
    {
        out.push_str(&format!("; refers to {email}"));
    }
    Some(out)
}

/// The journey drawn: a run from its `run_opened` to its `run_closed` (or now), a deferral
/// from when it was deferred to the opening, a hold until released (or now), a signal a mark.
fn drawing(entries: &[Entry], now: DateTime<Utc>) -> Drawing {
    use std::collections::HashMap;
    let mut d = Drawing::default();
    let mut open: HashMap<i64, (String, DateTime<Utc>)> = HashMap::new();
    let mut held: HashMap<i64, (String, DateTime<Utc>)> = HashMap::new();
    for e in entries {
        let run = e
            .detail
            .get("run")
            .or_else(|| e.detail.get("id"))
            .and_then(|v| v.as_i64());
        let step = e
            .detail
            .get("step")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        match e.kind.as_str() {
            "run_opened" => {
                if let Some(r) = run {
                    open.insert(r, (step, e.at));
                }
            }
            "run_closed" => {
                if let Some((s, from)) = run.and_then(|r| open.remove(&r)) {
                    d.bars.push((s, from, e.at, "run"));
                }
            }
            "deferred" => {
                let to = ts(e.detail.get("to")).unwrap_or(e.at);
                d.bars
                    .push((format!("{step} deferred"), e.at, to, "deferral"));
            }
            "held" => {
                if let Some(r) = run {
                    held.insert(r, (step, e.at));
                }
            }
            "released" => {
                if let Some((s, from)) = run.and_then(|r| held.remove(&r)) {
                    d.bars.push((format!("{s} held"), from, e.at, "hold"));
                }
            }
            // A signal's mark says what its journey entry says.
            "signal" => d.marks.push((e.summary.clone(), e.at)),
            _ => {}
        }
    }
    for (_, (s, from)) in open {
        d.bars.push((s, from, now.max(from), "run"));
    }
    for (_, (s, from)) in held {
        d.bars
            .push((format!("{s} held"), from, now.max(from), "hold"));
    }
    d.bars.sort_by_key(|b| b.1);
    d
}

/// The timeline as inline SVG: bars on a time axis whose ticks read in `zone`, signals as
/// marks, and the flow's send window (and the SMS window) shaded day by day in `zone`.
fn timeline_svg(
    d: &Drawing,
    zone: &Zone,
    window: Option<&crate::timing::SendWindow>,
    sms: bool,
    now: DateTime<Utc>,
) -> Markup {
    let start = d
        .bars
        .iter()
        .map(|b| b.1)
        .chain(d.marks.iter().map(|m| m.1))
        .min()
        .unwrap_or(now);
    let end = d
        .bars
        .iter()
        .map(|b| b.2)
        .chain(d.marks.iter().map(|m| m.1))
        .max()
        .unwrap_or(now)
        .max(start + chrono::Duration::hours(1));
    let (left, width) = (140.0, 900.0);
    let span = (end - start).num_milliseconds().max(1) as f64;
    let x = |t: DateTime<Utc>| left + (t - start).num_milliseconds() as f64 / span * width;
    let rows = d.bars.len().max(1);
    let height = 50.0 + rows as f64 * 22.0;
    let mut shades: Vec<(f64, f64, &'static str)> = Vec::new();
    let ticks = axis_ticks(zone, start, end);
    let mut day = zone.to_local(start).date();
    let last = zone.to_local(end).date();
    let mut n = 0;
    while day <= last && n < 400 {
        if let Some(w) = window {
            if w.days[day.weekday().num_days_from_monday() as usize] {
                let (a, b) = (
                    zone.to_instant(day.and_time(w.from)),
                    zone.to_instant(day.and_time(w.to)),
                );
                shades.push((x(a.max(start)), x(b.min(end)), "window"));
            }
        }
        if sms {
            let from = chrono::NaiveTime::from_hms_opt(8, 0, 0).expect("08:00");
            let to = chrono::NaiveTime::from_hms_opt(21, 0, 0).expect("21:00");
            let (a, b) = (
                zone.to_instant(day.and_time(from)),
                zone.to_instant(day.and_time(to)),
            );
            shades.push((x(a.max(start)), x(b.min(end)), "sms-window"));
        }
        day = day.succ_opt().expect("a next day");
        n += 1;
    }
    use chrono::Datelike;
    html! {
        svg id="timeline" xmlns="http://www.w3.org/2000/svg" width=(left + width + 60.0) height=(height) data-zone=(zone.name()) {
            @for (a, b, class) in &shades {
                @if b > a {
                    rect class=(class) x=(a) y="0" width=(b - a) height=(height - 30.0) {}
                }
            }
            line class="axis" x1=(left) y1=(height - 30.0) x2=(left + width) y2=(height - 30.0) {}
            @for (at, label) in &ticks {
                line class="axis" x1=(x(*at)) y1=(height - 34.0) x2=(x(*at)) y2=(height - 26.0) {}
                text class="tick" x=(x(*at)) y=(height - 14.0) { (label) }
            }
            @for (i, (label, from, to, class)) in d.bars.iter().enumerate() {
                g {
                    text class="tick" x="4" y=(16.0 + i as f64 * 22.0) { (label) }
                    rect class=(*class) x=(x(*from)) y=(4.0 + i as f64 * 22.0) width=((x(*to) - x(*from)).max(2.0)) height="16" {
                        title { (label) ": " (crate::engine::sentence::entry_time(*from, zone)) " – " (crate::engine::sentence::entry_time(*to, zone)) }
                    }
                }
            }
            // A signal is a mark a keyboard reaches too: its words on hover and on focus.
            @for (label, at) in &d.marks {
                @let said = format!("{label} at {}", crate::engine::sentence::entry_time(*at, zone));
                g class="mark" tabindex="0" role="img" aria-label=(said) {
                    circle class="signal" cx=(x(*at)) cy=(height - 30.0) r="5" { title { (said) } }
                }
            }
            text class="tick" x=(left) y=(height - 2.0) { "times in " (zone.name()) }
        }
    }
}

/// The time axis's ticks between `start` and `end`, read in `zone`: days over a long span,
/// else every 1, 2, 3, 6 or 12 hours (at most about a dozen), the date written at the first
/// tick and at each midnight.
fn axis_ticks(
    zone: &Zone,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Vec<(DateTime<Utc>, String)> {
    let hours = (end - start).num_minutes() as f64 / 60.0;
    let mut ticks = Vec::new();
    if hours > 48.0 {
        let mut day = zone.to_local(start).date();
        let last = zone.to_local(end).date();
        while day <= last && ticks.len() < 400 {
            let at = zone.to_instant(day.and_hms_opt(0, 0, 0).expect("midnight"));
            if at >= start {
                ticks.push((at, day.format("%a %-d %b").to_string()));
            }
            day = day.succ_opt().expect("a next day");
        }
        return ticks;
    }
    let step = [1, 2, 3, 6, 12]
        .into_iter()
        .find(|h| hours / *h as f64 <= 12.0)
        .unwrap_or(24);
    // The first whole `step` hour of the local day at or after the start.
    let local = zone.to_local(start);
    let mut at_local = local.date().and_hms_opt(0, 0, 0).expect("midnight");
    while zone.to_instant(at_local) < start {
        at_local += chrono::Duration::hours(step);
    }
    while zone.to_instant(at_local) <= end && ticks.len() < 30 {
        let at = zone.to_instant(at_local);
        let label = if ticks.is_empty() || at_local.time() == chrono::NaiveTime::MIN {
            at_local.format("%a %-d %b %H:%M").to_string()
        } else {
            at_local.format("%H:%M").to_string()
        };
        ticks.push((at, label));
        at_local += chrono::Duration::hours(step);
    }
    ticks
}

async fn enrollment_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Page {
    let (who, csrf) = session(&state, &headers).await?;
    let id = EnrollmentId::from(id);
    let (e, x) = enrollments::explain(&state.core, &who, &id)
        .await
        .map_err(error_page)?;
    let mut entries = Vec::new();
    let mut token = String::new();
    loop {
        let (page, next) = enrollments::journey_page(&state.core, &who, &id, 500, &token)
            .await
            .map_err(error_page)?;
        entries.extend(page);
        if next.is_empty() || entries.len() > 5_000 {
            break;
        }
        token = next;
    }
    let flow = enrollments::flow_of(&state.core, &who.account_id, &e)
        .await
        .map_err(error_page)?;
    // The journey's zone: the same one its sentences are written in.
    let shown = ShownZone::of_state(&e.state);
    let zone = shown.zone;
    let sms = flow
        .steps
        .values()
        .any(|s| s.kind() == crate::flow::StepKind::Sms);
    let now = state.core.clock.now();
    let d = drawing(&entries, now);
    let body = html! {
        p.explain id="explain" data-reason=(x.reason.map(|r| r.as_str()).unwrap_or("none")) { (x.sentence) }
        table {
            tr { th { "Contact" } td { (e.contact_id) } }
            tr { th { "Flow" } td { a href={ "/console/flows/" (e.flow_id) "?version=" (e.flow_version) } { (e.flow_id) " v" (e.flow_version) } } }
            tr { th { "Status" } td { (status_badge(e.status)) } }
            tr { th { "Created" } td { (e.created_at.to_rfc3339()) } }
        }
        h2 { "Timeline" }
        (timeline_svg(&d, &zone, flow.settings.send_window.as_ref(), sms, now))
        h2 { "Journey" }
        p.zone { "Times in " (shown.label()) "." }
        table id="journey" {
            tr { th { "#" } th { "At" } th { "What happened" } }
            @for en in &entries {
                tr data-kind=(en.kind) {
                    td { (en.seq) }
                    td { time datetime=(en.at.to_rfc3339()) { (sentence::entry_time(en.at, &zone)) } }
                    td {
                        // The sentence, with the raw entry one click away.
                        details.entry {
                            summary { (en.summary) }
                            @if let Some(said) = reading(&en.detail) {
                                p.intent { "Reply: " (said) }
                            }
                            pre { (en.kind) ": " (serde_json::to_string_pretty(&serde_json::Value::Object(en.detail.clone())).unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        layout(&format!("Enrollment {}", e.id.as_str()), true, &csrf, body),
        &[],
    ))
}

#[derive(Deserialize, Default)]
struct SimForm {
    #[serde(default)]
    flow: String,
    #[serde(default)]
    scenario: String,
    #[serde(default)]
    csrf: String,
}

fn sim_form(f: &SimForm, csrf: &str) -> Markup {
    html! {
        form method="post" action="/console/simulate" {
            input type="hidden" name="csrf" value=(csrf);
            p { label { "Flow (JSON, or a stored flow's id or name)" br; textarea name="flow" rows="12" cols="90" { (f.flow) } } }
            p { label { "Scenario (JSON)" br; textarea name="scenario" rows="8" cols="90" { (f.scenario) } } }
            button type="submit" { "Simulate" }
        }
    }
}

async fn simulate_page(State(state): State<AppState>, headers: HeaderMap) -> Page {
    let (_, csrf) = session(&state, &headers).await?;
    Ok(html_response(
        StatusCode::OK,
        layout(
            "Simulator",
            true,
            &csrf,
            sim_form(&SimForm::default(), &csrf),
        ),
        &[],
    ))
}

/// Runs the simulator (stores nothing) and draws its timeline.
async fn simulate(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SimForm>,
) -> Page {
    let (who, csrf) = session(&state, &headers).await?;
    // The session's own token, made with the secret `session` read: no second read.
    if !crate::inbound::providers::same_bytes(csrf.as_bytes(), form.csrf.as_bytes()) {
        return Err((StatusCode::FORBIDDEN, "the form expired; reload the page").into_response());
    }
    let text = form.flow.trim();
    let source = if text.starts_with('{') {
        FlowSource::Definition(text.to_string())
    } else {
        FlowSource::Stored {
            id: text.to_string(),
            version: 0,
        }
    };
    let result =
        crate::service::simulate::simulate(&state.core, &who.account_id, source, &form.scenario)
            .await;
    let body = match result {
        // A campaign (docs/service.md; docs/capacity.md) answers per enrollment; the page lists them rather than
        // drawing one timeline per contact.
        Ok(crate::engine::Answer::Campaign(c)) => html! {
            (sim_form(&form, &csrf))
            h2 { "Campaign (" (c.enrollments.len()) " enrollments)" }
            table {
                tr { th { "contact" } th { "state" } th { "outcome" } th { "runs" } }
                @for e in &c.enrollments {
                    tr {
                        td { (e.contact) }
                        td { (e.state.as_str()) }
                        td { (e.outcome.as_deref().unwrap_or("")) }
                        td { (e.runs.len()) }
                    }
                }
            }
        },
        Ok(crate::engine::Answer::Single(t)) => {
            let zone = serde_json::from_str::<serde_json::Value>(&form.scenario)
                .ok()
                .and_then(|s| s["contact"]["tz"].as_str().map(str::to_string))
                .and_then(|z| Zone::parse(&z).ok())
                .unwrap_or(Zone::Utc);
            let d = sim_drawing(&t);
            html! {
                (sim_form(&form, &csrf))
                h2 { "Timeline (" (t.state.as_str()) ")" }
                (timeline_svg(&d, &zone, None, false, d.bars.iter().map(|b| b.2).max().unwrap_or_else(|| from_millis(0))))
            }
        }
        Err(e) => {
            let message = match &e {
                ServiceError::Invalid(v) => v
                    .iter()
                    .map(|v| format!("{}: {}", v.field, v.message))
                    .collect::<Vec<_>>()
                    .join("; "),
                other => other.to_string(),
            };
            html! { p.error { (message) } (sim_form(&form, &csrf)) }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        layout("Simulator", true, &csrf, body),
        &[],
    ))
}

fn sim_drawing(t: &Timeline) -> Drawing {
    let mut d = Drawing::default();
    for r in &t.runs {
        let end = r.closed.or(r.until).or(r.scheduled).unwrap_or(r.entered);
        d.bars
            .push((r.step.clone(), r.entered, end.max(r.entered), "run"));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Principal {
        Principal {
            account_id: "acct".into(),
            token_id: "tok_1".into(),
            scope: Scope::Full,
        }
    }

    /// The axis reads in the contact's zone: hours with the date at the first tick and at
    /// midnight over a short span (Denver is UTC-7 in December), days over a long one.
    #[test]
    fn the_axis_ticks_read_in_the_contacts_zone() {
        let zone = Zone::parse("America/Denver").unwrap();
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let labels = |a: &str, b: &str| -> Vec<String> {
            axis_ticks(&zone, t(a), t(b))
                .into_iter()
                .map(|(_, l)| l)
                .collect()
        };
        assert_eq!(
            labels("2026-12-08T15:30:00Z", "2026-12-08T19:00:00Z"),
            ["Tue 8 Dec 09:00", "10:00", "11:00", "12:00"]
        );
        assert_eq!(
            labels("2026-12-08T23:00:00Z", "2026-12-09T13:00:00Z"),
            [
                "Tue 8 Dec 16:00",
                "18:00",
                "20:00",
                "22:00",
                "Wed 9 Dec 00:00",
                "02:00",
                "04:00",
                "06:00"
            ]
        );
        assert_eq!(
            labels("2026-12-08T15:00:00Z", "2026-12-12T15:00:00Z"),
            ["Wed 9 Dec", "Thu 10 Dec", "Fri 11 Dec", "Sat 12 Dec"]
        );
    }

    #[test]
    fn a_session_cookie_is_checked_for_forgery_and_expiry() {
        let v = session_value(b"secret", &who(), 2_000);
        assert_eq!(
            check_session(b"secret", &v, 1_000).map(|p| p.account_id),
            Ok("acct".into())
        );
        assert_eq!(
            check_session(b"secret", &v, 2_000).err(),
            Some(SessionError::Expired)
        );
        assert_eq!(
            check_session(b"other", &v, 1_000).err(),
            Some(SessionError::Forged)
        );
        let (payload, mac) = v.rsplit_once('.').unwrap();
        let longer = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("tok_1|acct|9999999");
        assert_eq!(
            check_session(b"secret", &format!("{longer}.{mac}"), 1_000).err(),
            Some(SessionError::Forged)
        );
        assert_eq!(
            check_session(b"secret", payload, 1_000).err(),
            Some(SessionError::Forged)
        );
    }
}
