//! The adapters around the services: gRPC ([`grpc`]) and HTTP ([`http`]), served together on
//! one port by [`crate::app`].

pub mod grpc;
pub mod http;
pub mod observe;
pub mod serve;

use crate::runtime::Core;
use crate::service::signals::Router;

/// What every handler shares: the [`Core`] the services run on, and what only the edge
/// needs. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// Database, clock, flow cache and wake-up.
    pub core: Core,
    /// The group-commit queue inbound signals go through (over the same core).
    pub signals: Router,
    /// The public base URL webhook providers call (`--public-url`); Twilio signs the URL it
    /// called. `None`: rebuilt from the request's headers.
    pub public_url: Option<String>,
    /// Where links nudge hands out point (the unsubscribe link of every email dispatch): the
    /// public URL, or `http://` and the address the server listens on when none is set.
    pub link_base: String,
    /// Webhook keys read recently, so a burst of webhooks does not read the account each time.
    pub webhook_keys: crate::api::http::webhooks::KeyCache,
    /// API tokens found recently ([`crate::auth::TOKEN_TTL`]), so a call does not read its
    /// token each time.
    pub tokens: crate::auth::TokenCache,
    /// What providers' signatures are checked against: the system clock (a signature is the
    /// sender's real time, whatever clock the server runs on), or a test's fixed one.
    pub signature_clock: crate::clock::SharedClock,
    /// Amazon SNS: signing certificates and subscription confirmations.
    pub sns: crate::runtime::sns::SharedSns,
    /// `--metrics-token`: what `GET /metrics` requires, when set.
    pub metrics_token: Option<std::sync::Arc<str>>,
}
