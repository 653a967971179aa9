//! gRPC health that follows the database (docs/service.md, "Errors"): a background probe runs `SELECT 1` every
//! few seconds and answers `NOT_SERVING` for every service (and the server, `""`) while it
//! fails, `SERVING` again once it works. `/healthz` stays a liveness check of the process.

use crate::proto::v1::contact_service_server::ContactServiceServer;
use crate::proto::v1::dispatch_service_server::DispatchServiceServer;
use crate::proto::v1::enrollment_service_server::EnrollmentServiceServer;
use crate::proto::v1::flow_service_server::FlowServiceServer;
use crate::proto::v1::sender_service_server::SenderServiceServer;
use crate::proto::v1::signal_service_server::SignalServiceServer;
use crate::proto::v1::timing_service_server::TimingServiceServer;
use crate::store::Db;
use std::sync::Arc;
use std::time::Duration;
use tonic::server::NamedService;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// Keeps the probe running: the router holds it, and the probe ends once every clone of the
/// router (the server and its open connections) is gone.
#[derive(Clone)]
pub struct Probe(#[allow(dead_code)] Arc<tokio::sync::watch::Sender<()>>);

/// The names health answers for: the server as a whole and each nudge service.
fn services() -> [&'static str; 8] {
    type Contact = ContactServiceServer<super::ContactApi>;
    type Sender = SenderServiceServer<super::SenderApi>;
    type Flow = FlowServiceServer<super::FlowApi>;
    type Timing = TimingServiceServer<super::TimingApi>;
    type Enrollment = EnrollmentServiceServer<super::EnrollmentApi>;
    type Dispatch = DispatchServiceServer<super::DispatchApi>;
    type Signal = SignalServiceServer<super::SignalApi>;
    [
        "",
        Contact::NAME,
        Sender::NAME,
        Flow::NAME,
        Timing::NAME,
        Enrollment::NAME,
        Dispatch::NAME,
        Signal::NAME,
    ]
}

/// Starts the probe of `db` every `every`, reporting through `health`; it runs until the
/// returned [`Probe`] and its clones are dropped.
pub fn follow_database(db: Db, health: HealthReporter, every: Duration) -> Probe {
    let (alive, mut dropped) = tokio::sync::watch::channel(());
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut serving = true;
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                // Only an error ever arrives: the sender is dropped with the router.
                _ = dropped.changed() => return,
            }
            // A probe that hangs (a server that stopped answering) counts as a failure.
            let answer = tokio::time::timeout(every.max(Duration::from_secs(1)), db.ping()).await;
            let ok = matches!(answer, Ok(Ok(())));
            if ok == serving {
                continue;
            }
            serving = ok;
            match &answer {
                Ok(Ok(())) => tracing::info!("the database answers again: health SERVING"),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "database probe failed: health NOT_SERVING")
                }
                Err(_) => tracing::warn!("database probe timed out: health NOT_SERVING"),
            }
            let status = if ok {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            for name in services() {
                health.set_service_status(name, status).await;
            }
        }
    });
    Probe(Arc::new(alive))
}
