//! A real browser for the page tests (approval links, the console): Debian's `chromium`,
//! headless, driven over the Chrome DevTools Protocol by `headless_chrome`.
//!
//! [`launch`] installs the package when `/usr/bin/chromium` is missing (`apt-get install -y
//! chromium`, as CI does on a fresh machine) and panics with the reason when it cannot: a
//! browser test never skips itself silently. Calls are blocking: run them in
//! `tokio::task::spawn_blocking` (or a plain thread) while the server runs on the test's runtime.

use headless_chrome::{Browser, LaunchOptions, Tab};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// Where Debian's package puts the browser.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser's path, installing the package first when it is missing (once per process:
/// parallel tests wait for the one install).
pub fn chromium() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let path = Path::new(CHROMIUM);
    if !path.exists() {
        let out = Command::new("apt-get")
            .args(["install", "-y", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .unwrap_or_else(|e| panic!("{CHROMIUM} is missing and apt-get could not run: {e}"));
        assert!(
            out.status.success() && path.exists(),
            "{CHROMIUM} is missing and `apt-get install -y chromium` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    path.to_path_buf()
}

/// A fresh headless browser with its own profile. The sandbox is off because tests run as
/// root in CI, where chromium refuses to start sandboxed.
pub fn launch() -> Browser {
    let options = LaunchOptions::default_builder()
        .path(Some(chromium()))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .idle_browser_timeout(Duration::from_secs(120))
        .build()
        .expect("browser launch options");
    Browser::new(options).expect("launching headless chromium")
}

/// Signs in on the console's sign-in page `tab` shows (where a console page sends a person
/// without a session): types `token`, submits, and waits for the page it leads to.
pub fn sign_in(tab: &Tab, token: &str) {
    tab.wait_for_element("input[name=token]")
        .unwrap()
        .click()
        .unwrap();
    tab.type_str(token).unwrap();
    tab.wait_for_element("button[type=submit]")
        .unwrap()
        .click()
        .unwrap();
    // The click only starts the form's navigation: wait for a signed-in page (its sign-out
    // form), or the next `navigate_to` may abort the one in flight (`net::ERR_ABORTED`).
    tab.wait_for_element("form[action='/console/sign-out']")
        .unwrap();
}

/// Where a test's screenshot goes: `target/screenshots/NAME.png` under the build directory
/// (kept after the run; the test prints the path so CI's log names it).
pub fn screenshot_path(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).expect("creating the screenshot directory");
    dir.join(format!("{name}.png"))
}

/// The axe-core version the accessibility checks run (npm `axe-core`, Deque's rules engine).
const AXE_VERSION: &str = "4.10.3";

/// axe-core's browser script, installed with npm into the build directory the first time
/// (`npm install axe-core@AXE_VERSION`, as a new machine would); panics with the reason when
/// npm cannot install it: an accessibility check never skips itself silently.
pub fn axe_script() -> String {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let prefix = screenshot_path("x")
        .parent()
        .and_then(Path::parent)
        .expect("the build directory")
        .join("npm-axe");
    let script = prefix.join("node_modules/axe-core/axe.min.js");
    let installed = prefix.join("node_modules/axe-core/package.json");
    let current = std::fs::read_to_string(&installed)
        .is_ok_and(|p| p.contains(&format!("\"version\": \"{AXE_VERSION}\"")));
    if !current {
        std::fs::create_dir_all(&prefix).expect("creating the npm directory");
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(format!("axe-core@{AXE_VERSION}"))
            .output()
            .unwrap_or_else(|e| panic!("npm could not run to install axe-core: {e}"));
        assert!(
            out.status.success() && script.exists(),
            "`npm install axe-core@{AXE_VERSION}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::read_to_string(&script).expect("reading axe.min.js")
}

/// axe-core's violations on the tab's page, as `(rule, impact, nodes)`: the script is added
/// through the DevTools protocol (the page's CSP forbids inline scripts, and rightly), then
/// `axe.run` over the whole document.
pub fn axe_violations(tab: &headless_chrome::Tab, axe: &str) -> Vec<(String, String, u64)> {
    tab.evaluate(axe, false)
        .expect("loading axe-core into the page");
    let found = tab
        .evaluate(
            "axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(\
             r.violations.map(v => [v.id, v.impact || '', v.nodes.length])))",
            true,
        )
        .expect("running axe-core");
    let text = found
        .value
        .and_then(|v| v.as_str().map(str::to_string))
        .expect("axe-core's answer as JSON text");
    serde_json::from_str(&text).expect("axe-core's violations")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper itself works against a real page: a form, a click, the next page's text.
    #[test]
    fn a_real_browser_submits_a_form() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // Serves the form until its POST comes (the browser asks for /favicon.ico too).
        let server = std::thread::spawn(move || loop {
            {
                let (mut stream, _) = listener.accept().unwrap();
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).unwrap();
                let request = String::from_utf8_lossy(&buf[..n]).to_string();
                let body = if request.starts_with("POST") {
                    "<!doctype html><title>done</title><p id=done>posted</p>"
                } else {
                    "<!doctype html><title>form</title><form method=post action=/x>\
                     <button id=go name=decision value=approved>Approve</button></form>"
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(response.as_bytes()).unwrap();
                if request.starts_with("POST") {
                    return;
                }
            }
        });
        let browser = launch();
        let tab = browser.new_tab().unwrap();
        tab.navigate_to(&format!("http://{addr}/"))
            .unwrap()
            .wait_until_navigated()
            .unwrap();
        tab.wait_for_element("#go").unwrap().click().unwrap();
        let done = tab.wait_for_element("#done").unwrap();
        assert_eq!(done.get_inner_text().unwrap(), "posted");
        server.join().unwrap();
    }
}
