//! The group-commit queue in front of the signal service: callers enqueue a signal and wait
//! for its answer; a few tasks each take whatever is queued (up to [`MAX_GROUP`]) and route it
//! as one group ([`super::group`]).
//!
//! A commit and the round trips around it cost far more than the engine step, so under load
//! per-signal transactions cap throughput; grouping amortises them. The router holds only the
//! [`Core`]: its tasks and the one-signal fallback need nothing else.

use super::{Pending, Received};
use crate::runtime::Core;
use crate::service::ServiceError;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Mutex};

/// The most signals one transaction routes: enough to amortise a commit, small enough that a
/// group's locks are held briefly.
pub const MAX_GROUP: usize = 256;
/// Tasks draining the queue: while one group commits, the next is being built. Two, not more:
/// a group costs the server and PostgreSQL mostly per statement, so fewer, larger groups
/// spend less a signal (signals bench, 32 connections, alternated: with 2 tasks 99–112 µs of
/// the server's CPU a signal and 4,268–4,818/s, with 3 tasks 120–124 µs and 3,899–4,242/s, with
/// 6 or 10 tasks fewer still). One task spends less a signal (112–128 µs against 121–134) but
/// each group then waits for the last one's commit: 3,887–4,279/s against 4,204–4,787/s (four
/// alternated pairs).
const WORKERS: usize = 2;
/// Times a task lets the other tasks run (`yield_now`) when the queue is empty, before it
/// closes its group: callers whose signals are on their way get into this group instead of
/// the next, and a group's statements cost mostly per statement (signals bench, 32
/// connections, eight alternated runs a side: 2,822–2,914 → 3,357–3,470 signals/s medians,
/// the server's CPU a signal 161 → 148 µs, p99 unchanged). Bounded, so a lone signal waits
/// only for a few turns of the scheduler.
const LINGER: usize = 8;
/// Signals queued before callers wait to enqueue.
const QUEUE: usize = 4 * MAX_GROUP;

/// The signal service's entry: the [`Core`] and, when started, the group-commit queue. Cheap
/// to clone. [`Router::detached`] routes every signal alone (tests, tools).
#[derive(Clone)]
pub struct Router {
    core: Core,
    tx: Option<mpsc::Sender<Job>>,
}

struct Job {
    signal: Pending,
    /// `Err` gives the signal back: the group could not read its words alone.
    reply: oneshot::Sender<Result<Result<Received, ServiceError>, Box<Pending>>>,
}

impl Router {
    /// Starts the group tasks on the current runtime. They stop when every clone of the
    /// returned router is gone.
    pub fn start(core: Core) -> Router {
        let (tx, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..WORKERS {
            tokio::spawn(work(core.clone(), rx.clone()));
        }
        Router { core, tx: Some(tx) }
    }

    /// A router with no queue: every signal takes the one-signal path.
    pub fn detached(core: Core) -> Router {
        Router { core, tx: None }
    }

    /// The runtime it routes with.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Routes `signal` in the next group; `Err` gives it back when no queue runs, or when the
    /// group could not read its words without more from the store.
    pub(super) async fn submit(
        &self,
        signal: Pending,
    ) -> Result<Result<Received, ServiceError>, Pending> {
        let Some(tx) = &self.tx else {
            return Err(signal);
        };
        let (reply, answer) = oneshot::channel();
        if let Err(mpsc::error::SendError(job)) = tx.send(Job { signal, reply }).await {
            return Err(job.signal);
        }
        match answer.await {
            Ok(answered) => answered.map_err(|signal| *signal),
            Err(_) => Ok(Err(ServiceError::Unavailable(
                "the signal router stopped while routing this signal; send it again".into(),
            ))),
        }
    }
}

async fn work(core: Core, rx: Arc<Mutex<mpsc::Receiver<Job>>>) {
    loop {
        let mut jobs = Vec::new();
        {
            let mut rx = rx.lock().await;
            let Some(first) = rx.recv().await else { return };
            jobs.push(first);
            let mut lingered = 0;
            while jobs.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) if lingered < LINGER => {
                        lingered += 1;
                        tokio::task::yield_now().await;
                    }
                    Err(_) => break,
                }
            }
        }
        core.metrics.signal_group(jobs.len());
        // Its own task, so a panic drops this group's answers (its callers get an error)
        // instead of stopping the router.
        let core = core.clone();
        let _ = tokio::spawn(async move {
            let (signals, replies): (Vec<Pending>, Vec<_>) =
                jobs.into_iter().map(|j| (j.signal, j.reply)).unzip();
            let answers = super::group::receive_jobs(&core, signals).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                let _ = reply.send(answer);
            }
        })
        .await;
    }
}
