//! The gRPC side: nudge.v1 services as thin adapters over [`crate::service`], standard health
//! checking and server reflection, all behind the token layer of [`auth`] (health and
//! reflection excepted).

pub mod account;
pub mod auth;
pub mod contact;
pub mod convert;
pub mod deadline;
pub mod dispatch;
pub mod enrollment;
pub mod error;
pub mod flow;
pub mod health;
pub mod sender;
pub mod signal;
pub mod testclock;
pub mod timing;

use super::AppState;
use crate::proto::v1::account_service_server::AccountServiceServer;
use crate::proto::v1::contact_service_server::ContactServiceServer;
use crate::proto::v1::dispatch_service_server::DispatchServiceServer;
use crate::proto::v1::enrollment_service_server::EnrollmentServiceServer;
use crate::proto::v1::flow_service_server::FlowServiceServer;
use crate::proto::v1::sender_service_server::SenderServiceServer;
use crate::proto::v1::signal_service_server::SignalServiceServer;
use crate::proto::v1::test_clock_service_server::TestClockServiceServer;
use crate::proto::v1::timing_service_server::TimingServiceServer;
use account::AccountApi;
use contact::ContactApi;
use dispatch::DispatchApi;
use enrollment::EnrollmentApi;
use flow::FlowApi;
use sender::SenderApi;
use signal::SignalApi;
use testclock::TestClockApi;
use timing::TimingApi;

/// The gRPC routes as an axum router. Requests larger than `max_message_bytes` are refused with
/// `OUT_OF_RANGE` while decoding, before any handler runs. Health follows the database, probed
/// every `health_probe_every` ([`health::follow_database`]).
pub async fn router(
    state: AppState,
    max_message_bytes: usize,
    health_probe_every: std::time::Duration,
) -> anyhow::Result<axum::Router> {
    let accounts = AccountServiceServer::new(AccountApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let contacts = ContactServiceServer::new(ContactApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let senders = SenderServiceServer::new(SenderApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let flows = FlowServiceServer::new(FlowApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let timing = TimingServiceServer::new(TimingApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);

    let enrollments = EnrollmentServiceServer::new(EnrollmentApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let dispatches = DispatchServiceServer::new(DispatchApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    let signals = SignalServiceServer::new(SignalApi {
        state: state.clone(),
    })
    .max_decoding_message_size(max_message_bytes);
    // Virtual time exists only with the manual clock (docs/service.md).
    let test_clock = state.core.clock.as_manual().is_some().then(|| {
        TestClockServiceServer::new(TestClockApi {
            state: state.clone(),
            lock: tokio::sync::Mutex::new(()),
        })
    });

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<ContactServiceServer<ContactApi>>()
        .await;
    health.set_serving::<SenderServiceServer<SenderApi>>().await;
    health
        .set_serving::<AccountServiceServer<AccountApi>>()
        .await;
    health.set_serving::<FlowServiceServer<FlowApi>>().await;
    health.set_serving::<TimingServiceServer<TimingApi>>().await;
    health
        .set_serving::<EnrollmentServiceServer<EnrollmentApi>>()
        .await;
    health
        .set_serving::<DispatchServiceServer<DispatchApi>>()
        .await;
    health.set_serving::<SignalServiceServer<SignalApi>>().await;
    let probe = health::follow_database(state.core.db.clone(), health, health_probe_every);

    let served = served_descriptors(test_clock.is_some())?;
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_file_descriptor_set(served.clone())
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            // google.rpc's error details, so a reflection client decodes a status's BadRequest
            // and ErrorInfo instead of showing base64.
            .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
    };

    let mut routes = tonic::service::Routes::new(health_service)
        .add_service(reflection().build_v1()?)
        .add_service(reflection().build_v1alpha()?)
        .add_service(accounts)
        .add_service(contacts)
        .add_service(senders)
        .add_service(flows)
        .add_service(timing)
        .add_service(enrollments)
        .add_service(dispatches)
        .add_service(signals);
    if let Some(test_clock) = test_clock {
        routes = routes.add_service(test_clock);
    }
    Ok(routes
        .into_axum_router()
        .layer(axum::middleware::from_fn_with_state(
            state,
            auth::require_token,
        ))
        .layer(axum::middleware::from_fn(deadline::keep))
        .layer(axum::Extension(probe)))
}

/// The file of `TestClockService`, which exists only with the manual clock (docs/service.md).
const TEST_CLOCK_FILE: &str = "nudge/v1/testclock.proto";

/// nudge's descriptors as reflection serves them: without `TestClockService`'s file unless the
/// server runs the manual clock, so a client never lists a service that would answer
/// UNIMPLEMENTED.
fn served_descriptors(with_test_clock: bool) -> anyhow::Result<prost_types::FileDescriptorSet> {
    use prost::Message;
    let mut set = prost_types::FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET)?;
    if !with_test_clock {
        set.file.retain(|f| f.name() != TEST_CLOCK_FILE);
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn services(set: &prost_types::FileDescriptorSet) -> Vec<String> {
        set.file
            .iter()
            .flat_map(|f| f.service.iter().map(|s| s.name().to_string()))
            .collect()
    }

    #[test]
    fn the_test_clock_is_served_only_with_the_manual_clock() {
        let system = services(&served_descriptors(false).unwrap());
        assert!(
            system.contains(&"EnrollmentService".to_string()),
            "{system:?}"
        );
        assert!(
            !system.contains(&"TestClockService".to_string()),
            "{system:?}"
        );
        let manual = services(&served_descriptors(true).unwrap());
        assert!(
            manual.contains(&"TestClockService".to_string()),
            "{manual:?}"
        );
    }
}
