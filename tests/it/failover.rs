//! A real failover: a primary and a synchronous standby started by the test
//! ([`crate::pg_cluster`]), nudge serving on libpq's multi-host URL with the planner on the
//! system clock, load running ([`crate::pg_load`]: BatchEnroll, due steps,
//! ClaimDispatches/AckDispatch, signed Twilio webhooks), then the primary killed (`pg_ctl stop
//! -m immediate`) and the standby promoted once nudge has noticed. Afterwards: everything a client got an OK for is
//! there, every due step ran once, no acked dispatch was handed out again, health went
//! NOT_SERVING and back to SERVING within 10 s of the promotion, and every call in between
//! answered UNAVAILABLE within its deadline.
//!
//! PostgreSQL only (it is the failover of PostgreSQL), in the PostgreSQL phase of `.ci/run`.

use crate::pg_cluster::{connect, Pair};
use crate::pg_load::{Load, Served};
use std::time::{Duration, Instant};

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL's server binaries (pg_config --bindir); bash .ci/run runs it"]
    async fn a_failover_loses_nothing_doubles_nothing_and_heals_itself() {
        super::failover().await
    }
}

async fn failover() {
    let mut pair = Pair::start().await;
    let admin = connect(&pair.primary.url("postgres")).await;
    admin.batch_execute("CREATE DATABASE nudge").await.unwrap();
    drop(admin);
    let served = Served::start(&pair.url("nudge"), |c| {
        c.database.postgres.connect = Duration::from_secs(2);
    })
    .await;
    let load = Load::start(&served);
    load.wait_running().await;

    // The primary dies; the standby is promoted once nudge has noticed (health NOT_SERVING,
    // calls refused), as a failover manager would after its own detection.
    let killed = Instant::now();
    pair.primary.kill();
    load.wait_health(killed, false, Duration::from_secs(15))
        .await;
    load.wait_refused(Duration::from_secs(15)).await;
    let promoted = Instant::now();
    pair.standby.promote();
    let serving_again = load
        .wait_health(promoted, true, Duration::from_secs(30))
        .await;
    let working_again = load.wait_working(Duration::from_secs(30)).await;
    // More of everything on the new primary before the load stops.
    load.wait_running_more().await;
    let record = load.finish().await;

    let gap = serving_again - killed;
    let after_promotion = serving_again - promoted;
    eprintln!(
        "failover: health SERVING again {:.1} s after the primary died, {:.1} s after the \
         promotion; calls working again {:.1} s after health; {} enrollments, {} signals, {} \
         acks answered OK; {} gRPC and {} webhook calls refused",
        gap.as_secs_f64(),
        after_promotion.as_secs_f64(),
        working_again.as_secs_f64(),
        record.enrolled.len(),
        record.signals.len(),
        record.acked.len(),
        record.failures.len(),
        record.http_failures.len()
    );
    assert!(
        record
            .health
            .iter()
            .any(|(at, serving)| *at > killed && *at < promoted && !*serving),
        "health stayed SERVING with no primary"
    );
    assert!(
        after_promotion <= Duration::from_secs(10),
        "SERVING {after_promotion:?} after the promotion"
    );
    assert!(
        !record.failures.is_empty() || !record.http_failures.is_empty(),
        "no call failed: was the primary really gone?"
    );
    record.check_failures(&[tonic::Code::Unavailable]);
    record.verify(&pair.standby.url("nudge")).await;

    // The new primary told to wait for a synchronous standby it does not have (the primary's
    // `synchronous_standby_names` kept after a promotion): every commit hangs. Health must say
    // so, and calls answer UNAVAILABLE within their deadline, until the setting is fixed.
    let admin = connect(&pair.standby.url("postgres")).await;
    for sql in [
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
        "SELECT pg_reload_conf()",
    ] {
        admin.batch_execute(sql).await.unwrap();
    }
    let hung = Instant::now();
    let load = Load::start(&served);
    let not_serving = load.wait_health(hung, false, Duration::from_secs(15)).await;
    // A call has waited on a hung commit and been answered.
    load.wait_refused(Duration::from_secs(15)).await;
    for sql in [
        "ALTER SYSTEM RESET synchronous_standby_names",
        "SELECT pg_reload_conf()",
    ] {
        admin.batch_execute(sql).await.unwrap();
    }
    let fixed = Instant::now();
    load.wait_working(Duration::from_secs(15)).await;
    let serving = load.wait_health(fixed, true, Duration::from_secs(15)).await;
    let record = load.finish().await;
    eprintln!(
        "commits waiting for a missing standby: NOT_SERVING after {:.1} s, SERVING {:.1} s \
         after the fix; {} gRPC and {} webhook calls refused",
        (not_serving - hung).as_secs_f64(),
        (serving - fixed).as_secs_f64(),
        record.failures.len(),
        record.http_failures.len()
    );
    assert!(
        !record.failures.is_empty(),
        "no call waited on a hung commit"
    );
    record.check_failures(&[tonic::Code::Unavailable]);
    record.verify(&pair.standby.url("nudge")).await;
    served.stop().await;
}
