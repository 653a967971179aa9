//! The application runtime: what the services and the planner share, below the edge.
//!
//! A [`Core`] is the database, the clock, the parsed-flow cache and this process's planner
//! wake-up. The services take `&Core`; the planner loop owns one; the edge (`api`) keeps a
//! `Core` inside its own state beside what only the edge needs (webhook key cache, public URL).
//! Nothing here knows the wire or the planner loop, so imports point one way:
//! `api → service → runtime → store → pure core`, and `planner → runtime`.
//!
//! - [`mod@apply`] turns one engine step on a stored enrollment into rows ([`crate::store::Writes`]),
//!   with the flow definitions and account settings a transaction loaded ([`StepContext`]).
//! - [`wakeup`] tells planners an earlier timer exists: in-process ([`Wakeup`]) and across
//!   replicas (`LISTEN/NOTIFY`, [`Core::announce`], [`listen`]); [`Stop`] ends background tasks.
//! - [`flows`] is the cache of parsed flow versions.
//! - [`mod@metrics`] is this process's Prometheus metrics and the refresher of its gauges.

pub mod apply;
pub mod flows;
pub mod metrics;
pub mod outbound;
pub mod sns;
pub mod wakeup;

pub use apply::{apply, apply_unread, ctx_for, StepContext};
pub use flows::{FlowCache, FlowKey};
pub use metrics::Metrics;
pub use wakeup::{listen, Stop, Wakeup, CHANNEL, POLL};

use crate::clock::SharedClock;
use crate::store::Db;

/// What every service call and the planner run with. Cheap to clone (every field is shared).
#[derive(Clone)]
pub struct Core {
    /// The pool of the one database (SQLite or PostgreSQL).
    pub db: Db,
    /// The one place time is read; a manual clock in tests and demos.
    pub clock: SharedClock,
    /// Parsed flow versions, shared so a version is parsed once per process.
    pub flows: FlowCache,
    /// This process's planner wake-up, rung by every writer of an earlier timer.
    pub wakeup: Wakeup,
    /// The server's quiet-hours policy (`--quiet-hours`), under which SMS and calls are timed
    /// ([`ctx_for`] is where it is applied).
    pub quiet_hours: std::sync::Arc<crate::timing::QuietHours>,
    /// This process's metrics (its own recorder, not a global one).
    pub metrics: std::sync::Arc<Metrics>,
}

impl Core {
    /// A core over `db` and `clock`, with an empty flow cache and its own wake-up.
    pub fn new(db: Db, clock: SharedClock) -> Core {
        Core {
            db,
            clock,
            flows: FlowCache::default(),
            wakeup: Wakeup::default(),
            quiet_hours: Default::default(),
            metrics: std::sync::Arc::new(Metrics::new()),
        }
    }
}
