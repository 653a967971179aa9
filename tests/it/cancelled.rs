//! A statement cancelled under a call (`pg_cancel_backend`, as an operator or a pooler does):
//! the call answers UNAVAILABLE (HTTP 503 with `Retry-After`), never INTERNAL; nothing it was
//! refused for is stored; and the same call again succeeds. One test per path: a gRPC write, a
//! gRPC read, BatchEnroll (a part cancelled while the others commit), a signed webhook (the
//! signal stored, its delivery cancelled, the provider's identical retry), and the planner.
//!
//! Each test holds a lock in a second session, so nudge's statement waits on it, and cancels
//! exactly the backends that wait on that session (`pg_blocking_pids`), again and again while
//! the call is in flight: the call is cancelled whenever it reaches the lock.

use crate::common::{spawn_app, Backend, TestApp};
use crate::signals::support::*;
use nudge::config::DatabaseUrl;
use nudge::proto::v1::*;
use serde_json::json;
use std::time::Duration;
use tokio_postgres::Client;

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_grpc_write_cancelled_mid_call() {
        super::a_grpc_write_cancelled_mid_call().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_grpc_read_cancelled_mid_call() {
        super::a_grpc_read_cancelled_mid_call().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn batch_enroll_with_one_part_cancelled() {
        super::batch_enroll_with_one_part_cancelled().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_signed_webhook_cancelled_after_its_signal_is_stored() {
        super::a_signed_webhook_cancelled_after_its_signal_is_stored().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn the_planner_cancelled_mid_batch() {
        super::the_planner_cancelled_mid_batch().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn error_classes_by_sqlstate_end_to_end() {
        super::error_classes_by_sqlstate_end_to_end().await
    }
}

/// A second session that holds locks, and cancels the backends waiting on it.
struct Holder {
    client: Client,
    pid: i32,
    admin: Client,
}

impl Holder {
    async fn open(app: &TestApp) -> Holder {
        let DatabaseUrl::Postgres(url) = app.database_url.clone() else {
            unreachable!("a PostgreSQL test")
        };
        let client = crate::pg_cluster::connect(&url).await;
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let admin = crate::pg_cluster::connect(&url).await;
        Holder { client, pid, admin }
    }

    /// Opens a transaction and runs `sql` in it (a `FOR UPDATE`, a `LOCK TABLE`).
    async fn hold(&self, sql: &str) {
        self.client
            .batch_execute(&format!("BEGIN; {sql}"))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn release(&self) {
        self.client.batch_execute("ROLLBACK").await.unwrap();
    }

    /// Cancels every backend that waits on this session's locks; how many.
    async fn cancel_waiters(&self) -> i64 {
        self.admin
            .query_one(
                "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
                &[&self.pid],
            )
            .await
            .unwrap()
            .get(0)
    }

    /// Runs `call` while cancelling whatever waits on this session every 10 ms; its result,
    /// and how many cancels were sent (at least one, or the test proves nothing).
    async fn cancelling<T: Send + 'static>(
        &self,
        call: impl std::future::Future<Output = T> + Send + 'static,
    ) -> (T, i64) {
        let mut call = tokio::spawn(call);
        let mut cancels = 0;
        for _ in 0..3_000 {
            cancels += self.cancel_waiters().await;
            tokio::select! {
                done = &mut call => return (done.unwrap(), cancels),
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
        panic!("the call did not end within 30 s of cancels");
    }

    async fn count(&self, sql: &str) -> i64 {
        self.admin.query_one(sql, &[]).await.unwrap().get(0)
    }
}

/// A flow that waits for a reply (or a booked meeting, which exits) for three days.
async fn enrolled(app: &TestApp, contact_id: &str) -> String {
    let flow = create_flow(app, ROUTING_FLOW).await;
    contact(app, contact_id, &format!("{contact_id}@example.com"), "").await;
    enroll(app, contact_id, &flow).await
}

/// A gRPC write (Pause) whose `FOR UPDATE` waits on another session's lock and is cancelled:
/// UNAVAILABLE saying nothing was changed (it answered INTERNAL, "canceling statement due to
/// user request"); the enrollment is still active; Pause again succeeds.
async fn a_grpc_write_cancelled_mid_call() {
    let app = spawn_app(Backend::Postgres).await;
    let id = enrolled(&app, "ann").await;
    let holder = Holder::open(&app).await;
    holder
        .hold(&format!(
            "SELECT 1 FROM enrollments WHERE id = '{id}' FOR UPDATE"
        ))
        .await;
    let mut client = app.enrollments().await;
    let request = app.authed(PauseRequest { id: id.clone() });
    let (answer, cancels) = holder
        .cancelling(async move { client.pause(request).await })
        .await;
    assert!(cancels >= 1, "no statement was cancelled");
    let e = answer.expect_err("a cancelled Pause is refused");
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    assert!(e.message().contains("nothing was changed"), "{e:?}");
    holder.release().await;
    assert_eq!(enrollment(&app, &id).await.status, "active");
    let paused = app
        .enrollments()
        .await
        .pause(app.authed(PauseRequest { id: id.clone() }))
        .await
        .expect("Pause again succeeds")
        .into_inner();
    assert_eq!(paused.enrollment.unwrap().status, "paused");
    app.stop().await;
}

/// A gRPC read (GetEnrollment) waiting on a table lock, cancelled: UNAVAILABLE; then it reads.
async fn a_grpc_read_cancelled_mid_call() {
    let app = spawn_app(Backend::Postgres).await;
    let id = enrolled(&app, "ann").await;
    let holder = Holder::open(&app).await;
    holder
        .hold("LOCK TABLE enrollments IN ACCESS EXCLUSIVE MODE")
        .await;
    let mut client = app.enrollments().await;
    let request = app.authed(GetEnrollmentRequest { id: id.clone() });
    let (answer, cancels) = holder
        .cancelling(async move { client.get_enrollment(request).await })
        .await;
    assert!(cancels >= 1, "no statement was cancelled");
    let e = answer.expect_err("a cancelled read is refused");
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    holder.release().await;
    assert_eq!(enrollment(&app, &id).await.id, id);
    app.stop().await;
}

/// BatchEnroll of 40 contacts, written in parts side by side; another session is inserting
/// c7's client key, so the part with c7's enrollment waits on the unique index and is
/// cancelled while the other parts commit. Every item answered OK is stored, every item refused is not (the whole
/// call answered INTERNAL while the other parts' enrollments were stored), the refused ones say
/// UNAVAILABLE, and the same call again answers every item, the stored ones `created: false`.
async fn batch_enroll_with_one_part_cancelled() {
    let app = spawn_app(Backend::Postgres).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    let ids: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
    for id in &ids {
        contact(&app, id, &format!("{id}@example.com"), "").await;
    }
    let items: Vec<EnrollRequest> = ids
        .iter()
        .map(|c| EnrollRequest {
            contact_id: c.clone(),
            flow_id: flow.clone(),
            client_key: format!("key-{c}"),
            ..Default::default()
        })
        .collect();
    let holder = Holder::open(&app).await;
    // An uncommitted row with c7's client key: the part writing c7's enrollment waits on the
    // unique index for this transaction to end.
    holder
        .hold(&format!(
            "INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, \
             client_key, allow_duplicate) \
             VALUES ('held', 'default', 'c7', '{flow}', 'completed', 'key-c7', false)"
        ))
        .await;
    let mut client = app.enrollments().await;
    let request = app.authed(BatchEnrollRequest {
        items: items.clone(),
    });
    let (answer, cancels) = holder
        .cancelling(async move { client.batch_enroll(request).await })
        .await;
    assert!(cancels >= 1, "no statement was cancelled");
    let results = answer
        .expect("the call answers item by item")
        .into_inner()
        .results;
    holder.release().await;
    assert_eq!(results.len(), 40);
    let mut refused = Vec::new();
    for (c, r) in ids.iter().zip(&results) {
        let stored = holder
            .count(&format!(
                "SELECT count(*) FROM enrollments WHERE contact_id = '{c}'"
            ))
            .await;
        if r.error_code.is_empty() {
            assert!(r.created, "{c}: {r:?}");
            assert_eq!(stored, 1, "{c} answered OK but is not stored");
        } else {
            assert_eq!(r.error_code, "UNAVAILABLE", "{c}: {r:?}");
            assert_eq!(
                stored, 0,
                "{c} was refused ({}) but is stored",
                r.error_message
            );
            refused.push(c.clone());
        }
    }
    assert!(
        refused.contains(&"c7".to_string()),
        "c7's part was cancelled: {refused:?}"
    );
    assert!(refused.len() < 40, "the other parts committed: {refused:?}");
    let again = app
        .enrollments()
        .await
        .batch_enroll(app.authed(BatchEnrollRequest { items }))
        .await
        .unwrap()
        .into_inner()
        .results;
    for (c, r) in ids.iter().zip(&again) {
        assert!(r.error_code.is_empty(), "{c}: {r:?}");
        assert_eq!(r.created, refused.contains(c), "{c}: {r:?}");
    }
    assert_eq!(holder.count("SELECT count(*) FROM enrollments").await, 40);
    app.stop().await;
}

/// A signed calendar webhook (a meeting booked, which exits the enrollment) whose delivery
/// waits on the enrollment's lock and is cancelled: 503 with `Retry-After`, saying the signal
/// is stored; the provider's retry, the same request with the same signature, finishes the
/// delivery (it was refused as a replay, 401, and the booking never reached the enrollment).
async fn a_signed_webhook_cancelled_after_its_signal_is_stored() {
    let app = spawn_app(Backend::Postgres).await;
    let id = enrolled(&app, "ann").await;
    calendar_sender(&app, "rep@acme.com").await;
    let secret = webhook_secret(&app).await;
    let body = json!({"id": "evt_1", "organizer": "rep@acme.com", "attendees": ["ann@example.com"],
                      "start": "2026-12-10T15:00:00Z"})
    .to_string();
    let headers: Vec<(&'static str, String)> = signed(&secret, signing_now(), body.as_bytes());
    let holder = Holder::open(&app).await;
    holder
        .hold(&format!(
            "SELECT 1 FROM enrollments WHERE id = '{id}' FOR UPDATE"
        ))
        .await;
    let addr = app.addr;
    let (sent_body, sent_headers) = (body.clone(), headers.clone());
    let ((code, text), cancels) = holder
        .cancelling(async move {
            raw_post(
                addr,
                "/webhooks/calendar",
                &sent_headers,
                sent_body.as_bytes(),
            )
            .await
        })
        .await;
    assert!(cancels >= 1, "no statement was cancelled: {code} {text}");
    assert_eq!(code, 503, "{text}");
    assert!(text.contains("retry-after: 5"), "{text}");
    holder.release().await;
    assert_eq!(enrollment(&app, &id).await.status, "active");
    let (code, text) = raw_post(addr, "/webhooks/calendar", &headers, body.as_bytes()).await;
    assert_eq!(code, 200, "the provider's retry: {text}");
    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "exited", "{e:?}");
    // Once delivered, the same request is a replay again.
    let (code, text) = raw_post(addr, "/webhooks/calendar", &headers, body.as_bytes()).await;
    assert_eq!(code, 401, "{text}");
    app.stop().await;
}

/// Inserts, for every enrollment, the journey row its next step will write: run inside an
/// open transaction, it makes that step's writer wait on the unique key until the transaction
/// ends (its rollback gives the key back).
pub const TAKE_NEXT_JOURNEY_ROW: &str =
    "INSERT INTO journey_steps (enrollment_id, seq, n, at, account_id, xid, entries) \
     SELECT id, journey_seq + 1, 1, 0, account_id, 0, '[[\"enrolled\",{}]]' FROM enrollments";

/// The planner's batch (run by the test clock's Advance, the same drain the loop runs) waits on
/// a journey row another session holds and is cancelled: UNAVAILABLE; once the lock is gone, Advance again
/// steps the enrollment, once.
async fn the_planner_cancelled_mid_batch() {
    let app = spawn_app(Backend::Postgres).await;
    let flow = create_flow(&app, TIMED_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let holder = Holder::open(&app).await;
    holder.hold(TAKE_NEXT_JOURNEY_ROW).await;
    let channel = app.channel().await;
    let advance = |app: &TestApp| {
        let request = app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(3 * 3_600_000)),
        });
        let mut clock = nudge::proto::v1::test_clock_service_client::TestClockServiceClient::new(
            channel.clone(),
        );
        async move { clock.advance(request).await }
    };
    let (answer, cancels) = holder.cancelling(advance(&app)).await;
    assert!(cancels >= 1, "no statement was cancelled");
    let e = answer.expect_err("a cancelled batch is refused");
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    holder.release().await;
    assert_eq!(enrollment(&app, &id).await.current_step, "pause_2h");
    advance(&app).await.expect("Advance again succeeds");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");
    let entered: Vec<_> = journey(&app, &id)
        .await
        .into_iter()
        .filter(|(kind, d)| kind == "run_opened" && d["step"] == "wait_reply")
        .collect();
    assert_eq!(entered.len(), 1, "stepped once: {entered:?}");
    app.stop().await;
}

/// Each class of the mapping end to end: a trigger raises the SQLSTATE under UpsertContact,
/// and the answer is the class's (a conflict is retried inside nudge first: the trigger
/// raises 40P01 twice, then lets the write through; 40001 nine times outlasts the retries).
/// A sequence counts the raises, since a rolled-back transaction keeps nothing else.
async fn error_classes_by_sqlstate_end_to_end() {
    let app = spawn_app(Backend::Postgres).await;
    let holder = Holder::open(&app).await;
    holder
        .admin
        .batch_execute(
            "CREATE TABLE raise_next (code text, times int); \
             CREATE SEQUENCE raised; \
             CREATE FUNCTION raise_next() RETURNS trigger LANGUAGE plpgsql AS $$ \
             DECLARE r raise_next; BEGIN \
               SELECT * INTO r FROM raise_next; \
               IF r.code IS NOT NULL AND nextval('raised') <= r.times THEN \
                 RAISE EXCEPTION 'raised for a test' USING ERRCODE = r.code; \
               END IF; \
               RETURN NEW; END $$; \
             CREATE TRIGGER raise_next BEFORE INSERT OR UPDATE ON contacts \
               FOR EACH ROW EXECUTE FUNCTION raise_next();",
        )
        .await
        .unwrap();
    let upsert = |id: &str| {
        let request = app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: format!("{id}@example.com"),
                ..Default::default()
            }),
        });
        async { app.contacts().await.upsert_contact(request).await }
    };
    for (code, times, want, stored) in [
        ("57014", 1, Some(tonic::Code::Unavailable), false),
        ("57P01", 1, Some(tonic::Code::Unavailable), false),
        ("53300", 1, Some(tonic::Code::Unavailable), false),
        ("08006", 1, Some(tonic::Code::Unavailable), false),
        ("58030", 1, Some(tonic::Code::Unavailable), false),
        ("55P03", 1, Some(tonic::Code::Unavailable), false),
        ("40P01", 2, None, true),
        ("40001", 9, Some(tonic::Code::Aborted), false),
        ("23503", 1, Some(tonic::Code::FailedPrecondition), false),
        ("XX000", 1, Some(tonic::Code::Internal), false),
        ("42P01", 1, Some(tonic::Code::Internal), false),
    ] {
        holder
            .admin
            .execute(
                "WITH reset AS (SELECT setval('raised', 1, false)) \
                 INSERT INTO raise_next SELECT $1, $2 FROM reset",
                &[&code, &times],
            )
            .await
            .unwrap();
        let id = format!("c_{}", code.to_lowercase());
        let answer = upsert(&id).await;
        match want {
            Some(want) => {
                let e = answer.expect_err(code);
                assert_eq!(e.code(), want, "{code}: {e:?}");
                assert!(!e.message().contains("raised for a test"), "{code}: {e:?}");
            }
            None => {
                answer.unwrap_or_else(|e| panic!("{code} retried inside nudge: {e:?}"));
            }
        }
        let n = holder
            .count(&format!("SELECT count(*) FROM contacts WHERE id = '{id}'"))
            .await;
        assert_eq!(n, stored as i64, "{code}");
        holder
            .admin
            .batch_execute("DELETE FROM raise_next")
            .await
            .unwrap();
    }
    app.stop().await;
}

/// A POST with its headers, returning the status and the whole response (headers and body),
/// so a test can read `Retry-After`.
async fn raw_post(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: nudge.test\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_lowercase();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    (status, text)
}
