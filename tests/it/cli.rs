//! The `nudge` binary itself: `migrate`, `token create` (and what it refuses), `timing --help`,
//! and `serve` with its first-start token, health check, graceful shutdown, what reflection
//! lists, and a manual clock's virtual time across a restart.

use crate::common::process::KillOnDrop;
use crate::common::{empty_database, spawn_app_on, with_token, Backend};
use nudge::config::DatabaseUrl;
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::{EnrollRequest, GetContactRequest, GetEnrollmentRequest};
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use tonic::Code;

backend_tests!(
    migrate_applies_once,
    token_create_prints_a_working_token,
    token_create_scopes,
    accounts_and_their_tokens_from_the_command_line,
    virtual_time_survives_a_restart,
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
    // `token create` works on the database of a server that has started (or been migrated).
    let migrated = nudge(&["migrate", "--database-url", &url_arg(&url)]);
    assert!(migrated.status.success(), "{migrated:?}");
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
    let migrated = nudge(&["migrate", "--database-url", &url_text]);
    assert!(migrated.status.success(), "{migrated:?}");
    let create = |scope: &str| {
        nudge(&[
            "token",
            "create",
            "--scope",
            scope,
            "--database-url",
            &url_text,
        ])
    };

    // A token for an enrollment that does not exist would be refused on every call.
    let unknown = create("enrollment:en_nope");
    assert!(!unknown.status.success(), "{unknown:?}");
    assert!(unknown.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("there is no enrollment `en_nope`"),
        "{unknown:?}"
    );
    let bad = create("root");
    assert!(!bad.status.success());
    assert!(bad.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("`root` is not a token scope"),
        "{bad:?}"
    );
    let admin = create("admin");
    assert!(!admin.status.success());
    assert!(
        String::from_utf8_lossy(&admin.stderr).contains("with `--admin`"),
        "{admin:?}"
    );

    let app = spawn_app_on(url, dir, pg).await;
    let ch = app.channel().await;
    crate::common::process::create_flow_and_contact(&ch, &app.token, QUICK_FLOW).await;
    let enrolled = EnrollmentServiceClient::new(ch.clone())
        .enroll(app.authed(EnrollRequest {
            contact_id: "c".into(),
            flow_id: "quick".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let out = create(&format!("enrollment:{}", enrolled.id));
    assert!(out.status.success(), "{out:?}");
    let scoped = String::from_utf8(out.stdout).unwrap().trim().to_string();

    let mut contacts = ContactServiceClient::new(ch.clone());
    let status = contacts
        .get_contact(with_token(GetContactRequest { id: "x".into() }, &scoped))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let own = EnrollmentServiceClient::new(ch)
        .get_enrollment(with_token(
            GetEnrollmentRequest {
                id: enrolled.id.clone(),
            },
            &scoped,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(own.enrollment.unwrap().id, enrolled.id);
    app.stop().await;
}

/// `nudge account create` makes an account a token can then be made for (`--account`), which
/// works on that account alone; `account list` shows it; an admin token (`--admin`) creates
/// accounts over the API and reads nothing inside one; an unknown account is refused with the fix.
async fn accounts_and_their_tokens_from_the_command_line(backend: Backend) {
    use nudge::proto::v1::account_service_client::AccountServiceClient;
    use nudge::proto::v1::{
        Contact, CreateAccountRequest, ListAccountsRequest, UpsertContactRequest,
    };
    let (url, dir, pg) = empty_database(backend).await;
    let url_text = url_arg(&url);
    assert!(nudge(&["migrate", "--database-url", &url_text])
        .status
        .success());
    let made = nudge(&[
        "account",
        "create",
        "acme-42",
        "--name",
        "Acme Corp",
        "--database-url",
        &url_text,
    ]);
    assert!(made.status.success(), "{made:?}");
    assert_eq!(String::from_utf8_lossy(&made.stdout).trim(), "acme-42");
    let again = nudge(&["account", "create", "acme-42", "--database-url", &url_text]);
    assert!(!again.status.success(), "{again:?}");
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exists"),
        "{again:?}"
    );
    let bad = nudge(&[
        "account",
        "create",
        "Acme Corp!",
        "--database-url",
        &url_text,
    ]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not an account id"),
        "{bad:?}"
    );
    let listed = nudge(&["account", "list", "--database-url", &url_text]);
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout),
        "acme-42\tAcme Corp\ndefault\tDefault\n"
    );
    let unknown = nudge(&[
        "token",
        "create",
        "--account",
        "nope",
        "--database-url",
        &url_text,
    ]);
    assert!(!unknown.status.success());
    assert!(unknown.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("nudge account create nope"),
        "{unknown:?}"
    );
    let token_of = |args: &[&str]| {
        let mut all = vec!["token", "create"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--database-url", &url_text]);
        let out = nudge(&all);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let acme = token_of(&["--account", "acme-42"]);
    let admin = token_of(&["--admin"]);

    let app = spawn_app_on(url, dir, pg).await;
    let ch = app.channel().await;
    let mut contacts = ContactServiceClient::new(ch.clone());
    contacts
        .upsert_contact(with_token(
            UpsertContactRequest {
                contact: Some(Contact {
                    id: "ann".into(),
                    email: "ann@acme.example".into(),
                    ..Default::default()
                }),
            },
            &acme,
        ))
        .await
        .unwrap();
    let theirs = contacts
        .get_contact(with_token(GetContactRequest { id: "ann".into() }, &acme))
        .await
        .unwrap();
    assert_eq!(
        theirs.into_inner().contact.unwrap().email,
        "ann@acme.example"
    );
    let other = contacts
        .get_contact(with_token(
            GetContactRequest { id: "ann".into() },
            &app.token,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        other.code(),
        Code::NotFound,
        "the default account does not see acme's"
    );
    let refused = contacts
        .get_contact(with_token(GetContactRequest { id: "ann".into() }, &admin))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    let mut accounts = AccountServiceClient::new(ch);
    let made = accounts
        .create_account(with_token(
            CreateAccountRequest {
                id: "globex".into(),
                name: String::new(),
            },
            &admin,
        ))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    assert_eq!((made.id.as_str(), made.name.as_str()), ("globex", "globex"));
    assert_eq!(made.default_sender_id, "default");
    let ids: Vec<String> = accounts
        .list_accounts(with_token(ListAccountsRequest::default(), &admin))
        .await
        .unwrap()
        .into_inner()
        .accounts
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(ids, ["acme-42", "default", "globex"]);
    let not_admin = accounts
        .list_accounts(with_token(ListAccountsRequest::default(), &acme))
        .await
        .unwrap_err();
    assert_eq!(not_admin.code(), Code::PermissionDenied);
    assert!(not_admin.message().contains("--admin"), "{not_admin:?}");
    app.stop().await;
}

/// A one-step flow for tests that need an enrollment.
const QUICK_FLOW: &str = r#"{"name": "quick", "start": "w", "steps": {
  "w": {"type": "wait", "params": {"duration": "1d"}, "next": {"then": "done"}},
  "done": {"type": "end"}}}"#;

/// Run from a directory without the server's database, `token create` (and the other commands
/// that manage a server's database) used to create a new empty `nudge.db` and print a token the
/// real server rejects. They refuse, name the file, and create nothing.
#[test]
fn commands_refuse_a_database_file_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("other").join("nudge.db");
    for args in [
        vec!["token", "create"],
        vec!["webhook-secret", "show"],
        vec!["twilio-token", "set", "AC_token"],
        vec!["provider-secret", "set", "calcom", "s3cret"],
        vec!["link-secret", "rotate"],
    ] {
        for url in [None, Some(format!("sqlite://{}", elsewhere.display()))] {
            let mut command = Command::new(NUDGE);
            command
                .args(&args)
                .current_dir(dir.path())
                .env_remove("NUDGE_DATABASE_URL");
            if let Some(url) = &url {
                command.args(["--database-url", url]);
            }
            let out = command.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?} {url:?}: {out:?}");
            assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
            assert!(
                stderr.contains("there is no database at"),
                "{args:?}: {stderr}"
            );
            assert!(stderr.contains("nudge.db"), "{args:?}: {stderr}");
        }
    }
    assert!(
        !dir.path().join("nudge.db").exists(),
        "nothing created here"
    );
    assert!(!elsewhere.exists(), "nothing created there");
}

/// `nudge link-secret rotate` replaces the stored secret (every link signed before is refused:
/// `store::…::the_link_secret_is_made_once_and_rotation_replaces_it`).
#[tokio::test]
async fn link_secret_rotate_replaces_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nudge.db");
    let url = format!("sqlite://{}", path.display());
    let parsed = nudge::config::DatabaseUrl::parse(&url).unwrap();
    nudge::store::Db::migrate(&parsed).await.unwrap();
    let db = nudge::store::Db::connect(&parsed).await.unwrap();
    nudge::store::link_secret::ensure(&db, 0).await.unwrap();
    let before = nudge::store::link_secret::load(&db).await.unwrap();
    let out = Command::new(NUDGE)
        .args(["link-secret", "rotate", "--database-url", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("rotated the link secret"));
    let after = nudge::store::link_secret::load(&db).await.unwrap();
    assert_ne!(before, after);
}

/// `nudge timing --help` says what a request and an answer look like.
#[test]
fn timing_help_describes_requests_and_answers() {
    let out = nudge(&["timing", "--help"]);
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "`now` (RFC 3339)",
        "\"duration\": \"2bd\"",
        "\"until\"",
        "\"window\"",
        "\"phone\"",
        "{\"at\": \"...Z\"}",
        "{\"error\": {\"code\": \"BAD_TZ\"",
        "exit status is 1",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from:\n{help}");
    }
}

/// A manual-clock server restarted on the same database goes on from the virtual time it had
/// reached (it used to start again at the host's time), and reflection lists
/// `TestClockService` there.
async fn virtual_time_survives_a_restart(backend: Backend) {
    use crate::common::process::{connect, free_port, serve};
    use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
    use nudge::proto::v1::{advance_request, AdvanceRequest, NowRequest};
    let (url, _dir, _pg) = empty_database(backend).await;
    let url = url_arg(&url);
    let now = |port: u16, token: String| async move {
        TestClockServiceClient::new(connect(port).await)
            .now(with_token(NowRequest {}, &token))
            .await
            .unwrap()
            .into_inner()
            .now
            .unwrap()
    };

    let port = free_port();
    // Killed when dropped, so a failing assertion leaves no server behind.
    let mut first = KillOnDrop(serve(&url, port));
    connect(port).await;
    let out = nudge(&["token", "create", "--database-url", &url]);
    assert!(out.status.success(), "{out:?}");
    let token = &String::from_utf8(out.stdout).unwrap().trim().to_string();
    let started = now(port, token.clone()).await;
    let services = crate::common::reflection::list(&format!("127.0.0.1:{port}")).await;
    assert!(
        services.contains(&"nudge.v1.TestClockService".to_string()),
        "{services:?}"
    );
    let mut clock = TestClockServiceClient::new(connect(port).await);
    let ten_days = 10 * 24 * 3_600_000;
    let advanced = clock
        .advance(with_token(
            AdvanceRequest {
                target: Some(advance_request::Target::ByMs(ten_days)),
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .now
        .unwrap();
    assert_eq!(advanced.seconds - started.seconds, ten_days / 1000);
    // Killed, not stopped: nothing may depend on a clean shutdown.
    first.take();

    let port = free_port();
    let mut second = KillOnDrop(serve(&url, port));
    let restarted = now(port, token.clone()).await;
    second.take();
    // The host's clock has moved on by a few milliseconds since, virtual time by ten days.
    assert_eq!(restarted, advanced, "virtual time after the restart");
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
    // A system-clock server has no virtual time: reflection does not list its service.
    let services = crate::common::reflection::list(&listen).await;
    assert!(
        services.contains(&"nudge.v1.EnrollmentService".to_string()),
        "{services:?}"
    );
    assert!(
        !services.iter().any(|s| s.contains("TestClock")),
        "{services:?}"
    );
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

/// docs/operations.md's configuration table and `nudge serve --help` list the same flags, each
/// with the same environment variable and default (a flag without a default says so in words).
#[test]
fn the_configuration_table_is_what_serve_help_says() {
    let help = nudge(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    // (flag, env, default) from the long help: each option's block runs to the next option.
    let mut from_help: Vec<(String, String, Option<String>)> = Vec::new();
    for line in help.lines() {
        let t = line.trim();
        if line.starts_with("      --") {
            let flag = t.split_whitespace().next().unwrap().to_string();
            if flag != "--help" {
                from_help.push((flag, String::new(), None));
            }
        } else if let Some(last) = from_help.last_mut() {
            if let Some(env) = t.strip_prefix("[env: ").and_then(|e| e.strip_suffix("=]")) {
                last.1 = env.to_string();
            } else if let Some(d) = t
                .strip_prefix("[default: ")
                .and_then(|d| d.strip_suffix(']'))
            {
                last.2 = Some(d.to_string());
            }
        }
    }
    assert!(from_help.len() >= 10, "{help}");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
        .unwrap();
    let section = docs
        .split("## Configuration")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/operations.md has a Configuration section");
    let code = |cell: &str| cell.trim().trim_matches('`').to_string();
    let from_docs: Vec<(String, String, Option<String>)> = section
        .lines()
        .filter(|l| l.starts_with("| `--"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            let default = cells[3].trim();
            let default = (default.starts_with('`')).then(|| code(default));
            (code(cells[1]), code(cells[2]), default)
        })
        .collect();
    let sorted = |mut v: Vec<(String, String, Option<String>)>| {
        v.sort();
        v
    };
    assert_eq!(sorted(from_docs), sorted(from_help));
}
