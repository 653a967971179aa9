//! The real `nudge` binary as a child process: for tests that need separate processes (a kill,
//! several replicas on one database).

use std::process::{Child, Command, Stdio};
use tonic::transport::Channel;

/// The `nudge` binary Cargo built for this test run.
pub const NUDGE: &str = env!("CARGO_BIN_EXE_nudge");

/// Runs a `nudge` subcommand to completion and returns its stdout; panics if it fails.
pub fn nudge(args: &[&str]) -> String {
    let out = Command::new(NUDGE)
        .args(args)
        .env_remove("NUDGE_DATABASE_URL")
        .output()
        .expect("run nudge");
    assert!(out.status.success(), "nudge {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Starts `nudge serve --clock manual` on `db`, listening on `127.0.0.1:port`.
pub fn serve(db: &str, port: u16) -> Child {
    serve_command(db, port)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nudge serve")
}

/// The command [`serve`] runs, for a test that adds flags, environment or a stderr pipe first.
pub fn serve_command(db: &str, port: u16) -> Command {
    let mut command = Command::new(NUDGE);
    command
        .args([
            "serve",
            "--clock",
            "manual",
            "--database-url",
            db,
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .env_remove("NUDGE_DATABASE_URL");
    command
}

/// A migrated SQLite database in `dir` and an API token of its default account.
pub fn database_with_token(dir: &std::path::Path) -> (String, String) {
    let db = dir.join("nudge.db").to_string_lossy().into_owned();
    nudge(&["migrate", "--database-url", &db]);
    let token = nudge(&["token", "create", "--database-url", &db]);
    (db, token.trim().to_string())
}

/// A child process killed (SIGKILL) and reaped when dropped, so a failing assertion leaves no
/// server behind.
pub struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// Kills it now.
    pub fn take(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Stops it as a container stop would (SIGTERM) and waits for it to exit. Blocking.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let kill = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(kill.success(), "kill -TERM: {kill:?}");
        self.0.wait().expect("wait for nudge")
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.take();
    }
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Connects once the server listens (it migrates first): a bounded poll, about 10 s.
pub async fn connect(port: u16) -> Channel {
    for _ in 0..1_000 {
        if let Ok(ch) = Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect()
            .await
        {
            return ch;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("nudge serve did not start on port {port}");
}

/// On a running server: creates `flow` and upserts the contact `c` (UTC) that the process
/// tests enroll.
pub async fn create_flow_and_contact(ch: &Channel, token: &str, flow: &str) {
    use nudge::proto::v1::contact_service_client::ContactServiceClient;
    use nudge::proto::v1::flow_service_client::FlowServiceClient;
    use nudge::proto::v1::{Contact, CreateFlowRequest, UpsertContactRequest};
    FlowServiceClient::new(ch.clone())
        .create_flow(super::with_token(
            CreateFlowRequest {
                definition: flow.into(),
            },
            token,
        ))
        .await
        .unwrap();
    ContactServiceClient::new(ch.clone())
        .upsert_contact(super::with_token(
            UpsertContactRequest {
                contact: Some(Contact {
                    id: "c".into(),
                    email: "c@example.com".into(),
                    tz: "UTC".into(),
                    ..Default::default()
                }),
            },
            token,
        ))
        .await
        .unwrap();
}

/// `n` enrollments of the contact `c` in `flow_id`, with client keys `k0`, `k1`, … (and
/// duplicates allowed, since they share the contact).
pub fn enroll_items(flow_id: &str, n: usize) -> Vec<nudge::proto::v1::EnrollRequest> {
    (0..n)
        .map(|i| nudge::proto::v1::EnrollRequest {
            contact_id: "c".into(),
            flow_id: flow_id.into(),
            client_key: format!("k{i}"),
            allow_duplicate: true,
            ..Default::default()
        })
        .collect()
}

/// Every enrollment of the token's account, read page by page.
pub async fn all_enrollments(ch: &Channel, token: &str) -> Vec<nudge::proto::v1::Enrollment> {
    use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
    use nudge::proto::v1::{ListEnrollmentsRequest, PageRequest};
    let mut enrollments = EnrollmentServiceClient::new(ch.clone());
    let mut all = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = enrollments
            .list_enrollments(super::with_token(
                ListEnrollmentsRequest {
                    page: Some(PageRequest {
                        page_size: 500,
                        page_token: page_token.clone(),
                    }),
                    ..Default::default()
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner();
        all.extend(page.enrollments);
        if page.next_page_token.is_empty() {
            return all;
        }
        page_token = page.next_page_token;
    }
}

/// Claims every due dispatch of the token's account (an hour's lease), 1,000 at a time.
pub async fn claim_all(ch: &Channel, token: &str) -> Vec<nudge::proto::v1::Dispatch> {
    use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
    use nudge::proto::v1::ClaimDispatchesRequest;
    let mut dispatches = DispatchServiceClient::new(ch.clone());
    let mut all = Vec::new();
    loop {
        let got = dispatches
            .claim_dispatches(super::with_token(
                ClaimDispatchesRequest {
                    lease_ms: 3_600_000,
                    max_count: 1_000,
                    ..Default::default()
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner()
            .dispatches;
        if got.is_empty() {
            return all;
        }
        all.extend(got);
    }
}

/// The first 500 entries of an enrollment's journey (every entry of the process tests' short
/// flows).
pub async fn journey_of(
    ch: &Channel,
    token: &str,
    id: &str,
) -> Vec<nudge::proto::v1::JourneyEntry> {
    use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
    use nudge::proto::v1::{GetJourneyRequest, PageRequest};
    EnrollmentServiceClient::new(ch.clone())
        .get_journey(super::with_token(
            GetJourneyRequest {
                enrollment_id: id.into(),
                page: Some(PageRequest {
                    page_size: 500,
                    page_token: String::new(),
                }),
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .entries
}
