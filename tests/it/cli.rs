//! The `nudge` binary itself: `migrate`, `token create`, and `serve` with its first-start token,
//! health check and graceful shutdown.

use crate::common::{empty_database, spawn_app_on, with_token, Backend};
use nudge::config::DatabaseUrl;
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::GetContactRequest;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use tonic::Code;

backend_tests!(
    migrate_applies_once,
    token_create_prints_a_working_token,
    token_create_scopes,
);

const NUDGE: &str = env!("CARGO_BIN_EXE_nudge");

/// The URL as the CLI takes it (the password is not redacted, unlike `Display`).
fn url_arg(url: &DatabaseUrl) -> String {
    match url {
        DatabaseUrl::Postgres(u) => u.clone(),
        DatabaseUrl::Sqlite(path) => format!("sqlite://{path}"),
    }
}

fn nudge(args: &[&str]) -> Output {
    Command::new(NUDGE)
        .args(args)
        .env_remove("NUDGE_DATABASE_URL")
        .output()
        .expect("run nudge")
}

async fn migrate_applies_once(backend: Backend) {
    let (url, _dir, _pg) = empty_database(backend).await;
    let url = url_arg(&url);
    let first = nudge(&["migrate", "--database-url", &url]);
    assert!(first.status.success(), "{first:?}");
    // One per directory under migrations/<backend>/ (both backends have the same names).
    let expected = std::fs::read_dir("migrations/sqlite").unwrap().count();
    assert!(
        String::from_utf8_lossy(&first.stdout)
            .starts_with(&format!("applied {expected} migration(s)")),
        "{first:?}"
    );
    let second = nudge(&["migrate", "--database-url", &url]);
    assert!(second.status.success(), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stdout).starts_with("applied 0 migration(s)"),
        "{second:?}"
    );
}

async fn token_create_prints_a_working_token(backend: Backend) {
    let (url, dir, pg) = empty_database(backend).await;
    // Through the environment variable this time.
    let out = Command::new(NUDGE)
        .args(["token", "create"])
        .env("NUDGE_DATABASE_URL", url_arg(&url))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.strip_suffix('\n').expect("one line");
    assert!(
        !token.contains('\n'),
        "the token alone on stdout: {stdout:?}"
    );
    assert!(token.starts_with("nudge_") && token.len() == 70, "{token}");

    let app = spawn_app_on(url, dir, pg).await;
    let mut contacts = ContactServiceClient::new(app.channel().await);
    let status = contacts
        .get_contact(with_token(GetContactRequest { id: "x".into() }, token))
        .await
        .unwrap_err();
    assert_eq!(
        status.code(),
        Code::NotFound,
        "the token was accepted: {status:?}"
    );
    app.stop().await;
}

async fn token_create_scopes(backend: Backend) {
    let (url, dir, pg) = empty_database(backend).await;
    let url_text = url_arg(&url);
    let out = nudge(&[
        "token",
        "create",
        "--scope",
        "enrollment:en_1",
        "--database-url",
        &url_text,
    ]);
    assert!(out.status.success(), "{out:?}");
    let scoped = String::from_utf8(out.stdout).unwrap().trim().to_string();

    let bad = nudge(&[
        "token",
        "create",
        "--scope",
        "admin",
        "--database-url",
        &url_text,
    ]);
    assert!(!bad.status.success());
    assert!(bad.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("`admin` is not a token scope"),
        "{bad:?}"
    );

    let app = spawn_app_on(url, dir, pg).await;
    let mut contacts = ContactServiceClient::new(app.channel().await);
    let status = contacts
        .get_contact(with_token(GetContactRequest { id: "x".into() }, &scoped))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    app.stop().await;
}

/// `nudge serve` on an empty SQLite database in its working directory: prints a first token,
/// answers `nudge healthcheck`, accepts the token, and exits cleanly on SIGTERM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_first_start_healthcheck_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(NUDGE)
        .args(["serve", "--listen", &listen])
        .current_dir(dir.path())
        .env_remove("NUDGE_DATABASE_URL")
        .env_remove("NUDGE_LISTEN")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    // Read stderr until the server says it listens; keep the token line seen on the way.
    let (token, rest) = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stderr).lines();
        let mut token = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(t) = line.trim().strip_prefix("nudge_") {
                token = Some(format!("nudge_{t}"));
            }
            if line.contains("serving gRPC and HTTP") {
                return (token, lines);
            }
        }
        panic!("the server exited before listening");
    })
    .await
    .unwrap();
    let token = token.expect("a first token on stderr");
    assert!(
        dir.path().join("nudge.db").exists(),
        "the default database file"
    );

    let health = nudge(&["healthcheck", "--addr", &listen]);
    assert!(health.status.success(), "{health:?}");
    // Without --addr it follows NUDGE_LISTEN, with an unspecified IP meaning loopback.
    let health = Command::new(NUDGE)
        .arg("healthcheck")
        .env("NUDGE_LISTEN", format!("0.0.0.0:{port}"))
        .output()
        .unwrap();
    assert!(health.status.success(), "{health:?}");

    let mut contacts = ContactServiceClient::connect(format!("http://{listen}"))
        .await
        .unwrap();
    let status = contacts
        .get_contact(with_token(GetContactRequest { id: "x".into() }, &token))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);

    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "graceful exit on SIGTERM: {status:?}");
    let tail: Vec<String> = tokio::task::spawn_blocking(move || rest.map(|l| l.unwrap()).collect())
        .await
        .unwrap();
    assert!(tail.iter().any(|l| l.contains("shutting down")), "{tail:?}");

    // Nothing listens any more: the health check fails.
    let health = nudge(&["healthcheck", "--addr", &listen]);
    assert!(!health.status.success(), "{health:?}");
}

/// `--max-connections` (`NUDGE_MAX_CONNECTIONS`) is documented and must be positive.
#[test]
fn serve_max_connections_is_a_positive_flag() {
    let help = nudge(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    assert!(help.contains("--max-connections"), "{help}");
    assert!(help.contains("NUDGE_MAX_CONNECTIONS"), "{help}");
    let zero = nudge(&["serve", "--max-connections", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{zero:?}");
    assert!(
        String::from_utf8_lossy(&zero.stderr).contains("--max-connections"),
        "{zero:?}"
    );
}
