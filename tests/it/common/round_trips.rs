//! How many times a call waits on the database: its round trips, counted from diesel's
//! instrumentation of every connection this process opens ([`install`] before the app starts).
//!
//! A statement is counted when its future is made (`StartQuery`) and done when its answer came
//! (`FinishQuery`); statements sent together (pipelined, `try_join`) are all started before the
//! first answer, so a round trip is each time a statement starts while none is waiting. Only
//! the statements of a future run by [`count`] are counted (a task-local), so the tests running
//! beside it in this process do not add theirs; a statement run on another task (the signal
//! router, a planner worker) is not counted either, nor one of SQLite (run on the blocking pool).
//! Counting starts at the call's first `BEGIN`: what the pool does to lend a connection before
//! (check it, or open and set up a new one) depends on what the tests beside it took.

use diesel::connection::{Instrumentation, InstrumentationEvent};
use std::future::Future;
use std::sync::{Arc, Mutex, Once};

/// What [`count`] saw.
#[derive(Debug, Default, Clone)]
pub struct Trips {
    /// Round trips: statements started while none was waiting for its answer.
    pub trips: usize,
    /// Every statement's SQL, in the order started.
    pub statements: Vec<String>,
    waiting: usize,
    begun: bool,
    /// `+` a statement started, `-` one answered, `|` a round trip began: the order seen.
    pub trace: String,
}

tokio::task_local! {
    static COUNTING: Arc<Mutex<Trips>>;
}

struct Counter;

impl Instrumentation for Counter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        let _ = COUNTING.try_with(|t| {
            let mut t = t.lock().unwrap();
            match event {
                InstrumentationEvent::StartQuery { query, .. } => {
                    let text = query.to_string();
                    t.begun |= text.starts_with("BEGIN");
                    if !t.begun {
                        return;
                    }
                    if t.waiting == 0 {
                        t.trips += 1;
                        t.trace.push('|');
                    }
                    t.trace.push('+');
                    t.waiting += 1;
                    // The text without its binds (a batch's arrays).
                    let sql = text.split(" -- binds:").next().unwrap_or_default();
                    t.statements.push(sql.to_string());
                }
                InstrumentationEvent::FinishQuery { .. } if t.begun => {
                    t.waiting = t.waiting.saturating_sub(1);
                    t.trace.push('-');
                }
                _ => {}
            }
        });
    }
}

fn counter() -> Option<Box<dyn Instrumentation>> {
    Some(Box::new(Counter))
}

/// Instruments every connection opened from now on (once per process; idempotent).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| diesel::connection::set_default_instrumentation(counter).unwrap());
}

/// Runs `work` and answers its output with the round trips it made from its first `BEGIN`.
pub async fn count<F: Future>(work: F) -> (F::Output, Trips) {
    counted(work, Trips::default()).await
}

/// Runs `work` and answers its output with every statement it ran (and the round trips),
/// from the start: for work outside a transaction.
pub async fn count_all<F: Future>(work: F) -> (F::Output, Trips) {
    counted(
        work,
        Trips {
            begun: true,
            ..Trips::default()
        },
    )
    .await
}

async fn counted<F: Future>(work: F, start: Trips) -> (F::Output, Trips) {
    let trips = Arc::new(Mutex::new(start));
    let out = COUNTING.scope(trips.clone(), work).await;
    let seen = trips.lock().unwrap().clone();
    (out, seen)
}
