//! Wake-ups: timers are rows, so a planner sleeps until the earliest `next_run_at` it knows of;
//! a writer that stores an earlier one must say so. In-process that is a [`Wakeup`]; across
//! replicas of one PostgreSQL it is `NOTIFY` on [`CHANNEL`], heard by [`listen`]; [`Core::announce`] says it.

use super::Core;
use crate::clock::to_millis;
use std::sync::Arc;
use tokio::sync::Notify;

/// The longest the planner loop sleeps without looking: the safety net under the wake-ups, and
/// the horizon within which a write is worth a `NOTIFY` to other replicas.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(5);
/// The PostgreSQL channel replicas wake each other on.
pub const CHANNEL: &str = "nudge_planner";

/// Tells this process's planner that an earlier timer may have been written. Cheap to clone.
#[derive(Clone, Default)]
pub struct Wakeup(Arc<Notify>);

impl Wakeup {
    /// Wakes the planner (or its next sleep, if it is not sleeping now).
    pub fn wake(&self) {
        self.0.notify_one();
    }

    /// Completes at the next [`Wakeup::wake`].
    pub async fn woken(&self) {
        self.0.notified().await
    }
}

/// Fires once when the server shuts down; every background task holds a clone.
#[derive(Clone)]
pub struct Stop(tokio::sync::watch::Receiver<bool>);

impl Stop {
    /// A stop signal and the sender that fires it.
    pub fn new() -> (tokio::sync::watch::Sender<bool>, Stop) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Stop(rx))
    }

    /// Completes once the stop has fired (or its sender is gone).
    pub async fn stopped(&mut self) {
        // An error means the sender was dropped: stop too.
        let _ = self.0.wait_for(|stopped| *stopped).await;
    }
}

impl Core {
    /// Tells the planners an enrollment wants waking at `wake_ms`: this process's at once,
    /// other replicas' through `NOTIFY` when the time is sooner than their fallback poll.
    /// Errors are logged, not returned: the write is already committed and the poll catches up.
    /// The runs the writes entered are counted here too, once they are committed.
    pub async fn announce(&self, committed: crate::store::Committed) {
        if !committed.transitions.is_empty() {
            self.metrics.transitions(&committed.transitions);
        }
        let Some(wake_ms) = committed.wake else {
            return;
        };
        self.wakeup.wake();
        let soon = to_millis(self.clock.now()) + POLL.as_millis() as i64;
        if wake_ms > soon {
            return;
        }
        if let Err(e) = self.db.notify(CHANNEL).await {
            tracing::warn!(error = %e, "cannot notify other replicas");
        }
    }
}

/// PostgreSQL: listens on [`CHANNEL`] with a dedicated connection and wakes this process's
/// planner on every notification. Reconnects after a failure; stops when `stop` fires.
pub async fn listen(
    url: String,
    timeouts: crate::store::pg_connect::PgTimeouts,
    wakeup: Wakeup,
    mut stop: Stop,
) {
    loop {
        let session = async {
            // Through every host of the URL, so after a failover it listens on the new primary.
            let (client, mut notices) =
                crate::store::pg_connect::connect_client(&url, &timeouts).await?;
            client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
            // Anything written while we were not listening is caught by this first wake.
            wakeup.wake();
            while let Some(note) = notices.recv().await {
                note?;
                wakeup.wake();
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        };
        tokio::select! {
            result = session => {
                if let Err(e) = result {
                    tracing::warn!(error = %e, "planner LISTEN connection lost; reconnecting");
                }
            }
            () = stop.stopped() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
            () = stop.stopped() => return,
        }
    }
}
