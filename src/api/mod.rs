//! The adapters around the services: gRPC ([`grpc`]) and HTTP ([`http`]), served together on
//! one port by [`crate::app`].

pub mod grpc;
pub mod http;

use crate::clock::SharedClock;
use crate::store::Db;

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub clock: SharedClock,
}
