//! The console (docs/operations.md) over real HTTP: sign-in and its cookies, CSRF, forged and expired
//! sessions, escaping, the pages; and a real headless browser (Debian chromium) that signs in,
//! opens an enrollment page, checks the timeline's SVG and saves a screenshot.

use crate::common::{browser, http, spawn_app, Backend, TestApp};
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;

backend_tests!(console_sign_in_sessions_and_pages);

fn cookie_of(set_cookie: &[&str], name: &str) -> Option<String> {
    set_cookie
        .iter()
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(|c| c.split(';').next().unwrap().to_string())
}

/// The CSRF token a page's form carries.
fn form_csrf(body: &str) -> String {
    let at = body
        .find("name=\"csrf\" value=\"")
        .unwrap_or_else(|| panic!("no CSRF field in {body}"));
    let rest = &body[at + "name=\"csrf\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// Signs in through the form; returns the `Cookie` header of the session (csrf included).
pub(crate) async fn sign_in(
    app: &TestApp,
    token: &str,
    extra: &[(&str, &str)],
) -> (http::Answer, String) {
    let page = http::get(app.addr, "/console/sign-in", extra).await;
    assert_eq!(page.status, 200);
    let set = page.all("set-cookie");
    let csrf_cookie = cookie_of(&set, "nudge_csrf").expect("a CSRF cookie");
    let nonce = csrf_cookie.split_once('=').unwrap().1.to_string();
    let csrf = form_csrf(&page.body);
    assert_ne!(
        csrf, nonce,
        "the form's token is derived, not the cookie itself"
    );
    let mut headers = vec![
        ("Cookie", csrf_cookie.as_str()),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    headers.extend_from_slice(extra);
    let body = format!("token={token}&csrf={csrf}");
    let answer = http::request(app.addr, "POST", "/console/sign-in", &headers, &body).await;
    let session = cookie_of(&answer.all("set-cookie"), "nudge_session").unwrap_or_default();
    (answer, format!("{csrf_cookie}; {session}"))
}

async fn console_sign_in_sessions_and_pages(backend: Backend) {
    let app = spawn_app(backend).await;
    let id = crate::explain_api::sms_flow(&app).await;
    let page = format!("/console/enrollments/{id}");

    // Without a session every page sends the browser to sign in.
    for path in [
        "/console",
        "/console/flows",
        page.as_str(),
        "/console/simulate",
    ] {
        let a = http::get(app.addr, path, &[]).await;
        assert!(matches!(a.status, 303), "{path}: {}", a.status);
        let to = a.header("location").unwrap();
        assert!(
            to == "/console/sign-in" || path == "/console",
            "{path} → {to}"
        );
    }

    // The sign-in form's cookie: HttpOnly, SameSite=Strict, no Secure over plain HTTP.
    let form = http::get(app.addr, "/console/sign-in", &[]).await;
    let set = form.all("set-cookie").join("\n");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains("Secure"), "{set}");

    // A post without the matching CSRF token is refused; so is a wrong API token.
    let no_csrf = http::request(
        app.addr,
        "POST",
        "/console/sign-in",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &format!("token={}&csrf=guess", app.token),
    )
    .await;
    assert_eq!(no_csrf.status, 403);
    assert!(no_csrf.all("set-cookie").is_empty());
    // A cookie and a field planted together (the double-submit pair an attacker on a sibling
    // domain can set) are refused: the field must be the server's HMAC of the cookie.
    let planted = http::request(
        app.addr,
        "POST",
        "/console/sign-in",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", "nudge_csrf=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        ],
        &format!("token={}&csrf=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", app.token),
    )
    .await;
    assert_eq!(planted.status, 403, "{}", planted.body);
    assert!(planted.all("set-cookie").is_empty());
    let (wrong, _) = sign_in(&app, "nudge_tok_wrong", &[]).await;
    assert_eq!(wrong.status, 401);
    assert!(cookie_of(&wrong.all("set-cookie"), "nudge_session").is_none());
    let scoped = app.token(nudge::auth::Scope::Enrollment(id.clone())).await;
    let (refused, _) = sign_in(&app, &scoped, &[]).await;
    assert_eq!(
        refused.status, 401,
        "an enrollment-scoped token cannot sign in"
    );

    // A good token: a session cookie, HttpOnly and SameSite=Strict; Secure behind TLS.
    let (ok, cookies) = sign_in(&app, &app.token, &[]).await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    let session = ok
        .all("set-cookie")
        .into_iter()
        .find(|c| c.starts_with("nudge_session="))
        .unwrap()
        .to_string();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Strict"),
        "{session}"
    );
    assert!(
        !session.contains(&app.token),
        "the cookie never holds the API token"
    );
    let (tls, _) = sign_in(&app, &app.token, &[("X-Forwarded-Proto", "https")]).await;
    assert!(tls
        .all("set-cookie")
        .iter()
        .any(|c| c.starts_with("nudge_session=") && c.contains("; Secure")));

    // The enrollment page: Explain's sentence and the timeline.
    let a = http::get(app.addr, &page, &[("Cookie", &cookies)]).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.contains("id=\"timeline\""), "{}", a.body);
    assert!(a.body.contains("class=\"run\""), "{}", a.body);
    assert!(
        a.body.contains("class=\"window\""),
        "the send window is shaded"
    );
    assert!(a.body.contains("data-reason=\"signal\""), "{}", a.body);
    assert!(
        a.body.contains("Waiting at step `listen` for reply"),
        "{}",
        a.body
    );
    assert!(!a.body.contains("<script"), "no JavaScript");
    let flows = http::get(app.addr, "/console/flows", &[("Cookie", &cookies)]).await;
    assert!(flows.body.contains("explain-sms"), "{}", flows.body);
    let list = http::get(
        app.addr,
        "/console/enrollments?contact=dee&status=active",
        &[("Cookie", &cookies)],
    )
    .await;
    assert!(list.body.contains(&id), "{}", list.body);
    let none = http::get(
        app.addr,
        "/console/enrollments?status=completed",
        &[("Cookie", &cookies)],
    )
    .await;
    assert!(!none.body.contains(&id), "the status filter applies");

    // Everything is escaped: a contact id with markup comes back as text.
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "<b>x</b>".into(),
                tz: "UTC".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let evil = nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient::new(
        app.channel().await,
    )
    .enroll(app.authed(EnrollRequest {
        contact_id: "<b>x</b>".into(),
        flow_id: "explain-sms".into(),
        ..Default::default()
    }))
    .await
    .unwrap()
    .into_inner()
    .enrollment
    .unwrap();
    let shown = http::get(
        app.addr,
        &format!("/console/enrollments/{}", evil.id),
        &[("Cookie", &cookies)],
    )
    .await;
    assert!(
        shown.body.contains("&lt;b&gt;x&lt;/b&gt;"),
        "{}",
        shown.body
    );
    assert!(!shown.body.contains("<b>x</b>"));

    // An unknown enrollment: 404, nothing of another account's.
    let missing = http::get(
        app.addr,
        "/console/enrollments/en_nosuch",
        &[("Cookie", &cookies)],
    )
    .await;
    assert_eq!(missing.status, 404);

    // The simulator: a scenario in, a timeline out, nothing stored. Its form's token is the
    // session's; another session's token is refused.
    let form = http::get(app.addr, "/console/simulate", &[("Cookie", &cookies)]).await;
    let csrf = form_csrf(&form.body);
    let second = app.token(nudge::auth::Scope::Full).await;
    let (_, other_session) = sign_in(&app, &second, &[]).await;
    let other = http::get(app.addr, "/console/simulate", &[("Cookie", &other_session)]).await;
    let foreign =
        serde_urlencoded::to_string([("flow", "explain-sms"), ("csrf", &form_csrf(&other.body))])
            .unwrap();
    let crossed = http::request(
        app.addr,
        "POST",
        "/console/simulate",
        &[
            ("Cookie", &cookies),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &foreign,
    )
    .await;
    assert_eq!(crossed.status, 403, "{}", crossed.body);
    let csrf = csrf.as_str();
    let scenario = r#"{"start": "2026-12-04T20:00:00Z", "horizon": "2026-12-20T00:00:00Z", "contact": {"tz": "America/Denver", "phone": "+13035551234"}}"#;
    let body = serde_urlencoded::to_string([
        ("flow", "explain-sms"),
        ("scenario", scenario),
        ("csrf", csrf),
    ])
    .unwrap();
    let sim = http::request(
        app.addr,
        "POST",
        "/console/simulate",
        &[
            ("Cookie", &cookies),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &body,
    )
    .await;
    assert_eq!(sim.status, 200, "{}", sim.body);
    assert!(
        sim.body.contains("id=\"timeline\"") && sim.body.contains("class=\"run\""),
        "{}",
        sim.body
    );

    // A reply's words, read: the timeline's mark and the journey say what it said and which
    // words decided, escaped like everything else.
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            text: "Sounds good <b>Thursday</b>".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let a = http::get(app.addr, &page, &[("Cookie", &cookies)]).await;
    assert!(a.body.contains("Reply: interested ("), "{}", a.body);
    // Each entry is its sentence, in Dee's zone, with the raw entry one click away.
    for said in [
        "<summary>Sent SMS *hello* to +1 303-555-1234</summary>",
        "<summary>Woken by a reply: interested — “Sounds good”</summary>",
        "<summary>Waiting at step listen for a reply — until Mon 7 Dec, 13:00 (America/Denver)</summary>",
        "Times in America/Denver.",
        "Fri 4 Dec 2026, 13:00",
    ] {
        assert!(a.body.contains(said), "no {said:?} in {}", a.body);
    }
    assert!(
        a.body.contains("<pre>dispatch: {"),
        "the raw entry: {}",
        a.body
    );
    assert!(a.body.contains("“Sounds good”"), "{}", a.body);
    assert!(
        a.body
            .contains("<title>Woken by a reply: interested — “Sounds good” at "),
        "the mark's title is the entry's sentence: {}",
        a.body
    );
    assert!(!a.body.contains("<b>Thursday</b>"), "{}", a.body);

    // A forged cookie, then an expired one (nine hours later): back to sign-in.
    let forged = cookies.replace("nudge_session=", "nudge_session=x");
    let a = http::get(app.addr, &page, &[("Cookie", &forged)]).await;
    assert_eq!(a.status, 303);
    TestClockServiceClient::new(app.channel().await)
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(9 * 3_600_000)),
        }))
        .await
        .unwrap();
    let a = http::get(app.addr, &page, &[("Cookie", &cookies)]).await;
    assert_eq!(a.status, 303, "an expired session signs in again");
    app.stop().await;
}

/// A real browser: headless Debian chromium signs in, opens an enrollment page and checks the
/// timeline's SVG (runs as bars, the reply as a mark, the window shaded); the screenshot's path
/// is printed for CI to keep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_signs_in_and_sees_the_timeline() {
    let app = spawn_app(Backend::Sqlite).await;
    let id = crate::explain_api::sms_flow(&app).await;
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let base = format!("http://{}", app.addr);
    let token = app.token.clone();
    let shot = browser::screenshot_path("console-enrollment");
    let shot_path = shot.clone();
    let found = tokio::task::spawn_blocking(move || {
        use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
        let browser = browser::launch();
        let tab = browser.new_tab().unwrap();
        tab.navigate_to(&format!("{base}/console/enrollments/{id}"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        // Sent to sign in first.
        assert!(
            tab.get_url().ends_with("/console/sign-in"),
            "{}",
            tab.get_url()
        );
        browser::sign_in(&tab, &token);
        tab.wait_for_element("#enrollments").unwrap();
        tab.navigate_to(&format!("{base}/console/enrollments/{id}"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element("#timeline").unwrap();
        let runs = tab.find_elements("#timeline rect.run").unwrap().len();
        let signals = tab.find_elements("#timeline circle.signal").unwrap().len();
        let windows = tab.find_elements("#timeline rect.window").unwrap().len();
        let explain = tab
            .wait_for_element("#explain")
            .unwrap()
            .get_inner_text()
            .unwrap();
        let png = tab
            .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
            .unwrap();
        std::fs::write(&shot_path, &png).unwrap();
        (runs, signals, windows, explain, png.len())
    })
    .await
    .unwrap();
    println!("console screenshot: {}", shot.display());
    let (runs, signals, windows, explain, png) = found;
    // sms, wait_for and end: three runs, the reply one mark.
    assert!(runs >= 2, "{runs} run bars");
    assert_eq!(signals, 1, "the reply is one mark");
    assert!(windows >= 1, "the send window is shaded");
    assert!(explain.starts_with("Completed"), "{explain}");
    assert!(png > 1000, "a real PNG");
    app.stop().await;
}

/// As a person and a screen reader would: the real browser signs in, opens each page (the
/// flows and enrollments lists, a flow, an enrollment, the simulator), runs axe-core inside it
/// — no critical, serious or moderate violation —, checks that the keyboard's first stop skips
/// to the content and that every control is reachable by Tab, and saves a screenshot of each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_page_passes_axe_and_the_keyboard_reaches_it() {
    let app = spawn_app(Backend::Sqlite).await;
    let id = crate::explain_api::sms_flow(&app).await;
    SignalServiceClient::new(app.channel().await)
        .report_signal(app.authed(ReportSignalRequest {
            contact: "dee".into(),
            kind: "reply".into(),
            channel: "sms".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let flow_id = EnrollmentServiceClient::new(app.channel().await)
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.clone() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
        .flow_id;
    let base = format!("http://{}", app.addr);
    let token = app.token.clone();
    let pages = [
        ("page-flows", "/console/flows".to_string()),
        ("page-enrollments", "/console/enrollments".to_string()),
        ("page-flow", format!("/console/flows/{flow_id}")),
        ("page-enrollment", format!("/console/enrollments/{id}")),
        ("page-simulator", "/console/simulate".to_string()),
    ];
    let found = tokio::task::spawn_blocking(move || {
        use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
        let axe = browser::axe_script();
        let browser = browser::launch();
        let tab = browser.new_tab().unwrap();
        tab.navigate_to(&format!("{base}/console/sign-in"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        browser::sign_in(&tab, &token);
        let mut out = Vec::new();
        for (name, path) in pages {
            tab.navigate_to(&format!("{base}{path}"))
                .unwrap()
                .wait_until_navigated()
                .unwrap();
            tab.wait_for_element("main").unwrap();
            let violations = browser::axe_violations(&tab, &axe);
            let png = tab
                .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
                .unwrap();
            // The keyboard's first stop is the skip link; Tab reaches every control.
            tab.press_key("Tab").unwrap();
            let first = tab
                .evaluate("document.activeElement.className", false)
                .unwrap()
                .value
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let unreachable = tab
                .evaluate(
                    "Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary'))\
                     .filter(e => e.tabIndex < 0 || e.disabled).length",
                    false,
                )
                .unwrap()
                .value
                .and_then(|v| v.as_u64())
                .unwrap_or(u64::MAX);
            let shot = browser::screenshot_path(name);
            std::fs::write(&shot, &png).unwrap();
            out.push((name, path, violations, first, unreachable, shot, png.len()));
        }
        out
    })
    .await
    .unwrap();
    for (name, path, violations, first, unreachable, shot, png) in found {
        println!("{name} screenshot: {}", shot.display());
        let blocking: Vec<_> = violations
            .iter()
            .filter(|(_, impact, _)| ["critical", "serious", "moderate"].contains(&impact.as_str()))
            .collect();
        assert!(blocking.is_empty(), "{path}: axe-core found {blocking:?}");
        assert_eq!(first, "skip", "{path}: the first Tab stop is the skip link");
        assert_eq!(unreachable, 0, "{path}: every control is reachable by Tab");
        assert!(png > 1000, "{path}: a real screenshot");
    }
    app.stop().await;
}

/// What every console answer carries, redirects and errors included.
fn assert_console_headers(what: &str, header: impl Fn(&str) -> Option<String>) {
    assert_eq!(
        header("content-security-policy").as_deref(),
        Some(nudge::api::http::console::CONSOLE_CSP),
        "{what}"
    );
    assert_eq!(header("x-frame-options").as_deref(), Some("DENY"), "{what}");
    assert_eq!(
        header("x-content-type-options").as_deref(),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(
        header("referrer-policy").as_deref(),
        Some("no-referrer"),
        "{what}"
    );
}

/// The console's policy allows nothing inline: no `unsafe-inline`, no script at all, and no
/// page may frame it.
#[test]
fn the_consoles_policy_allows_nothing_inline() {
    let csp = nudge::api::http::console::CONSOLE_CSP;
    assert!(!csp.contains("unsafe"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(!csp.contains("script-src"), "{csp}");
}

/// Over plain HTTP, the answers a browser does not show as a page: a redirect to sign in, a
/// 405, a 404 under the console; and under the token pages, a mistyped link (a trailing
/// slash, OPTIONS, PUT) answers without quoting its token and is never cached.
#[tokio::test]
async fn redirects_and_errors_carry_the_page_headers_and_no_token() {
    let app = spawn_app(Backend::Sqlite).await;
    for (method, path, status) in [
        ("GET", "/console/flows", 303),
        ("GET", "/console/sign-out", 405),
        ("GET", "/console/nosuch", 404),
        ("GET", "/console", 303),
    ] {
        let a = http::request(app.addr, method, path, &[], "").await;
        assert_eq!(a.status, status, "{method} {path}: {}", a.body);
        assert_console_headers(&format!("{method} {path}"), |h| {
            a.header(h).map(str::to_string)
        });
        assert_eq!(a.header("cache-control"), Some("no-store"), "{path}");
    }
    let token = "eyJlbnJvbGxtZW50IjoiZW5fMSJ9.c2lnbmF0dXJlLXRoYXQtbXVzdC1ub3QtbGVhaw";
    for (method, path) in [
        ("GET", format!("/approvals/{token}/")),
        ("OPTIONS", format!("/approvals/{token}")),
        ("PUT", format!("/unsubscribe/{token}")),
        ("GET", format!("/unsubscribe/{token}/x")),
        ("DELETE", format!("/approvals/{token}")),
    ] {
        let a = http::request(app.addr, method, &path, &[], "").await;
        assert!(
            a.status == 404 || a.status == 405,
            "{method} {path}: {}",
            a.status
        );
        assert!(
            !a.body.contains("c2lnbmF0dXJl") && !a.body.contains("eyJlbnJvbGxtZW50"),
            "{method}: the token is quoted back: {}",
            a.body
        );
        assert!(
            a.body.contains("{token}"),
            "{method}: names the route: {}",
            a.body
        );
        assert_eq!(
            a.header("cache-control"),
            Some("no-store"),
            "{method} {path}"
        );
        assert_eq!(
            a.header("referrer-policy"),
            Some("no-referrer"),
            "{method} {path}"
        );
    }
    app.stop().await;
}

/// The real browser's responses: the sign-in page, its stylesheet and a console 404 each carry
/// the policy, `DENY`, `nosniff` and `no-referrer`; and the stylesheet is applied under the
/// policy (the page's margin is the stylesheet's), so nothing inline is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_receives_the_consoles_headers() {
    use std::sync::{Arc, Mutex};
    let app = spawn_app(Backend::Sqlite).await;
    let base = format!("http://{}", app.addr);
    let (seen, margin) = tokio::task::spawn_blocking(move || {
        let browser = browser::launch();
        let tab = browser.new_tab().unwrap();
        let seen: Arc<Mutex<Vec<(String, u32, serde_json::Value)>>> = Arc::default();
        let into = seen.clone();
        let (arrived, urls) = std::sync::mpsc::channel::<String>();
        tab.register_response_handling(
            "headers",
            Box::new(move |params, _| {
                let r = params.response;
                into.lock().unwrap().push((
                    r.url.clone(),
                    r.status,
                    r.headers.0.clone().unwrap_or_default(),
                ));
                let _ = arrived.send(r.url);
            }),
        )
        .unwrap();
        tab.navigate_to(&format!("{base}/console/nosuch"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.navigate_to(&format!("{base}/console/sign-in"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element("input[name=token]").unwrap();
        let margin = tab
            .evaluate(
                "getComputedStyle(document.querySelector('main')).maxWidth",
                false,
            )
            .unwrap()
            .value
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        // The stylesheet's response event may come a moment after the page's: wait for it
        // (every response's URL arrives on the channel), 5 s at the most.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while let Ok(url) =
            urls.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
        {
            if url.ends_with("style.css") {
                break;
            }
        }
        let seen = seen.lock().unwrap().clone();
        (seen, margin)
    })
    .await
    .unwrap();
    for suffix in ["/console/nosuch", "/console/sign-in", "/console/style.css"] {
        let (url, status, headers) = seen
            .iter()
            .find(|(u, _, _)| u.ends_with(suffix))
            .unwrap_or_else(|| panic!("the browser got no {suffix}: {seen:?}"));
        let header = |name: &str| {
            headers.as_object().and_then(|h| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .and_then(|(_, v)| v.as_str().map(str::to_string))
            })
        };
        assert_console_headers(&format!("{url} ({status})"), header);
    }
    // 72rem: only the console's stylesheet sets it.
    assert_eq!(margin, "1152px", "the stylesheet applies under the policy");
    app.stop().await;
}
