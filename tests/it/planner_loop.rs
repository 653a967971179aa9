//! The planner loop of `nudge serve` (`Planner::run`) on a manual clock: it sleeps through the
//! clock, so virtual time decides when its sleep ends and no test waits for real seconds.
//!
//! With nothing due, the loop sleeps its fallback poll (5 s). A timer written for 1 s later must
//! run at 1 s, not at 5 s: the write wakes the loop (in-process `Wakeup`; on PostgreSQL, from
//! another app on the same database, `NOTIFY`), which recomputes its sleep. The control: a loop
//! that hears no wake-up sleeps on through 1 s and runs the step only at its poll, 5 s.
//!
//! Real time appears only as bounded polls (waiting for the loop to go to sleep, for the step
//! to show up) and one short negative wait in the control.

use crate::common::{fresh_database, spawn_app, spawn_app_on, Backend, TestApp};
use chrono::{DateTime, Duration, Utc};
use nudge::api::AppState;
use nudge::auth::{Principal, Scope};
use nudge::clock::{Clock, ManualClock};
use nudge::config::DatabaseUrl;
use nudge::planner::{Planner, POLL};
use nudge::runtime::{self, Stop, Wakeup};
use nudge::service::contacts::{self, ContactInput};
use nudge::service::enrollments::{self, EnrollInput};
use nudge::service::flows;
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use std::time::Duration as StdDuration;

/// One second's wait, then the end.
const FLOW: &str = r#"{
  "name": "soon",
  "start": "w",
  "steps": {
    "w": { "type": "wait", "params": { "duration": "1s" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

mod sqlite {
    use super::Backend;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn loop_wakes_early_for_an_earlier_timer() {
        super::loop_wakes_early_for_an_earlier_timer(Backend::Sqlite).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn loop_without_the_wakeup_sleeps_its_poll() {
        super::loop_without_the_wakeup_sleeps_its_poll(Backend::Sqlite).await
    }
}

mod postgres {
    use super::Backend;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn loop_wakes_early_for_an_earlier_timer() {
        super::loop_wakes_early_for_an_earlier_timer(Backend::Postgres).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn loop_without_the_wakeup_sleeps_its_poll() {
        super::loop_without_the_wakeup_sleeps_its_poll(Backend::Postgres).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn loop_wakes_on_notify_from_another_app() {
        super::loop_wakes_on_notify_from_another_app().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_batch_in_flight_does_not_hold_back_what_falls_due_next() {
        super::a_batch_in_flight_does_not_hold_back_what_falls_due_next().await
    }
}

/// The flow and a contact, written directly (no planner is woken by these).
async fn setup(state: &AppState) {
    setup_in(state, DEFAULT_ACCOUNT_ID).await
}

/// [`setup`] in the account `account_id`.
async fn setup_in(state: &AppState, account_id: &str) {
    let now = state.core.clock.now();
    flows::create(&state.core, account_id, FLOW, now)
        .await
        .unwrap();
    contacts::upsert(
        &state.core,
        account_id,
        ContactInput {
            id: "c".into(),
            tz: "UTC".into(),
            ..Default::default()
        },
        now,
    )
    .await
    .unwrap();
}

/// Enrolls through the service, which announces the new timer (due 1 s from now).
async fn enroll(state: &AppState) -> String {
    enroll_in(state, DEFAULT_ACCOUNT_ID).await
}

/// [`enroll`] in the account `account_id`.
async fn enroll_in(state: &AppState, account_id: &str) -> String {
    let (enrollment, created) = enrollments::enroll(
        &state.core,
        account_id,
        EnrollInput {
            contact_id: "c".into(),
            flow_id: "soon".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(created);
    enrollment.id.into_string()
}

/// Starts `Planner::run` on `state`; fire the returned sender to stop it.
fn start_loop(
    state: AppState,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, stop) = Stop::new();
    let handle = tokio::spawn(Planner::new(state.core).run(stop));
    (tx, handle)
}

async fn stop_loop(
    loop_: (
        tokio::sync::watch::Sender<bool>,
        tokio::task::JoinHandle<()>,
    ),
) {
    loop_.0.send(true).unwrap();
    tokio::time::timeout(StdDuration::from_secs(10), loop_.1)
        .await
        .expect("the loop stops")
        .unwrap();
}

/// Bounded poll until the loop sleeps on the clock.
async fn until_asleep(clock: &ManualClock) {
    for _ in 0..1_000 {
        if clock.sleepers() == 1 {
            return;
        }
        tokio::time::sleep(StdDuration::from_millis(10)).await;
    }
    panic!("the planner loop never went to sleep");
}

/// Bounded poll until the enrollment has completed; returns when (virtual time) its wait was
/// closed.
async fn until_completed(state: &AppState, id: &str) -> DateTime<Utc> {
    until_completed_in(state, DEFAULT_ACCOUNT_ID, id).await
}

/// [`until_completed`] for an enrollment of the account `account_id`.
async fn until_completed_in(state: &AppState, account_id: &str, id: &str) -> DateTime<Utc> {
    let who = Principal {
        account_id: account_id.into(),
        token_id: "test".into(),
        scope: Scope::Full,
    };
    for _ in 0..1_000 {
        let e = enrollments::get(&state.core, &who, &id.into())
            .await
            .unwrap();
        if e.status.as_str() == "completed" {
            let (entries, _) = enrollments::journey_page(&state.core, &who, &id.into(), 100, "")
                .await
                .unwrap();
            // Run 1 is the wait; run 2, the end, closes at once.
            let closed: Vec<_> = entries.iter().filter(|e| e.kind == "run_closed").collect();
            assert_eq!(closed.len(), 2, "{entries:?}");
            assert_eq!(closed[0].detail["run"], 1, "{entries:?}");
            return closed[0].at;
        }
        tokio::time::sleep(StdDuration::from_millis(10)).await;
    }
    panic!("{id} did not complete");
}

async fn status(state: &AppState, id: &str) -> String {
    let who = Principal {
        account_id: DEFAULT_ACCOUNT_ID.into(),
        token_id: "test".into(),
        scope: Scope::Full,
    };
    enrollments::get(&state.core, &who, &id.into())
        .await
        .unwrap()
        .status
        .as_str()
        .to_string()
}

/// In-process: the enroll's `Wakeup` makes the sleeping loop recompute its sleep.
async fn loop_wakes_early_for_an_earlier_timer(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app.state).await;
    let t = app.clock.now();
    let running = start_loop(app.state.clone());
    // Nothing stored: the loop sleeps its poll, until t + 5 s.
    until_asleep(&app.clock).await;
    let id = enroll(&app.state).await;
    app.clock.set(t + Duration::seconds(1));
    assert_eq!(
        until_completed(&app.state, &id).await,
        t + Duration::seconds(1)
    );
    stop_loop(running).await;
    app.stop().await;
}

/// The control: the same loop, but the enroll's wake-up goes to nobody (the loop has a
/// `Wakeup` of its own). At t + 1 s it still sleeps; its poll at t + 5 s runs the step, late.
async fn loop_without_the_wakeup_sleeps_its_poll(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app.state).await;
    let t = app.clock.now();
    let mut deaf = app.state.clone();
    deaf.core.wakeup = Wakeup::default();
    let running = start_loop(deaf);
    until_asleep(&app.clock).await;
    let id = enroll(&app.state).await;
    app.clock.set(t + Duration::seconds(1));
    tokio::time::sleep(StdDuration::from_millis(300)).await;
    assert_eq!(
        status(&app.state, &id).await,
        "active",
        "not run at t + 1 s"
    );
    assert_eq!(app.clock.sleepers(), 1, "still asleep");
    app.clock.set(t + Duration::from_std(POLL).unwrap());
    assert_eq!(
        until_completed(&app.state, &id).await,
        t + Duration::from_std(POLL).unwrap()
    );
    stop_loop(running).await;
    app.stop().await;
}

/// PostgreSQL: the timer is written by another app on the same database; only its `NOTIFY`
/// reaches the sleeping loop, through `runtime::listen`.
async fn loop_wakes_on_notify_from_another_app() {
    let (url, dir, pg) = fresh_database(Backend::Postgres).await;
    let DatabaseUrl::Postgres(pg_url) = url.clone() else {
        unreachable!()
    };
    let sleeper: TestApp = spawn_app_on(url.clone(), dir, pg).await;
    let writer: TestApp = spawn_app_on(url, tempfile::tempdir().unwrap(), None).await;
    setup(&writer.state).await;
    let t = sleeper.clock.now();
    assert_eq!(writer.clock.now(), t);

    // The listener wakes `heard`; its first wake says LISTEN is in place (it wakes once on
    // connecting, to catch what it missed). From then on, forward each wake to the loop.
    let heard = Wakeup::default();
    let (stop_tx, stop) = Stop::new();
    let listener = tokio::spawn(runtime::listen(
        pg_url,
        Default::default(),
        heard.clone(),
        stop,
    ));
    tokio::time::timeout(StdDuration::from_secs(10), heard.woken())
        .await
        .expect("LISTEN connects");
    let loop_wakeup = sleeper.state.core.wakeup.clone();
    let forward = tokio::spawn(async move {
        loop {
            heard.woken().await;
            loop_wakeup.wake();
        }
    });
    let running = start_loop(sleeper.state.clone());
    until_asleep(&sleeper.clock).await;

    let id = enroll(&writer.state).await;
    sleeper.clock.set(t + Duration::seconds(1));
    assert_eq!(
        until_completed(&sleeper.state, &id).await,
        t + Duration::seconds(1)
    );

    stop_loop(running).await;
    stop_tx.send(true).unwrap();
    listener.await.unwrap();
    forward.abort();
    writer.stop().await;
    sleeper.stop().await;
}

/// PostgreSQL: a batch waiting to commit does not hold back what falls due meanwhile.
/// Another session has inserted, uncommitted, the journey row the batch that wakes the default
/// account's enrollment (due at 1 s) will write, so that batch waits on the unique key. A second
/// account's enrollment falls due at 1.5 s: the loop must wake it then, in a batch of its own,
/// while the first still waits. (The loop of before claimed again only once its batch had
/// committed, so the second waited for the first: a wake's lateness was a whole batch.)
async fn a_batch_in_flight_does_not_hold_back_what_falls_due_next() {
    let app = spawn_app(Backend::Postgres).await;
    let DatabaseUrl::Postgres(url) = app.database_url.clone() else {
        unreachable!()
    };
    nudge::store::accounts::create(&app.state.core.db, "other", "Other", 0)
        .await
        .unwrap();
    nudge::service::senders::upsert(
        &app.state.core,
        "other",
        nudge::service::senders::SenderInput {
            id: "s".into(),
            email: "s@example.com".into(),
            tz: "UTC".into(),
            ..Default::default()
        },
        true,
        app.clock.now(),
    )
    .await
    .unwrap();
    setup(&app.state).await;
    setup_in(&app.state, "other").await;
    let t = app.clock.now();
    let first = enroll(&app.state).await;
    app.clock.set(t + Duration::milliseconds(500));
    let second = enroll_in(&app.state, "other").await;

    let holder = crate::pg_cluster::connect(&url).await;
    holder
        .batch_execute(&format!(
            "BEGIN; {} WHERE id = '{first}'",
            crate::cancelled::TAKE_NEXT_JOURNEY_ROW
        ))
        .await
        .unwrap();
    let running = start_loop(app.state.clone());
    until_asleep(&app.clock).await;
    app.clock.set(t + Duration::seconds(1));
    // The first batch has claimed the first enrollment and waits for the holder's row.
    let mut waiting = 0;
    for _ in 0..1_000 {
        let row = holder
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap();
        waiting = row.get::<_, i64>(0);
        if waiting == 1 {
            break;
        }
        tokio::time::sleep(StdDuration::from_millis(10)).await;
    }
    assert_eq!(waiting, 1, "the first batch waits on the held row");
    until_asleep(&app.clock).await;
    app.clock.set(t + Duration::milliseconds(1_500));
    assert_eq!(
        until_completed_in(&app.state, "other", &second).await,
        t + Duration::milliseconds(1_500),
        "woken at its own time while the first batch waits"
    );
    assert_eq!(status(&app.state, &first).await, "active", "still held");

    holder.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(
        until_completed(&app.state, &first).await,
        t + Duration::seconds(1),
        "the first batch commits once the row is free, with its own time"
    );
    stop_loop(running).await;
    app.stop().await;
}
