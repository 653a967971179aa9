//! The HTTP side of the server (same port as gRPC): for now `GET /healthz`. Webhooks, events,
//! approval pages and metrics (SPEC §7) join this router.

use super::AppState;
use axum::routing::get;
use axum::Router;

/// The HTTP routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .with_state(state)
}

/// Liveness: the process answers. (Readiness of the database is gRPC health's job.)
async fn healthz() -> &'static str {
    "ok\n"
}
