//! The throughput run's settings and lines, shared by the in-process path and `--via grpc`, so
//! the two print the same figures and can be compared line by line.

use crate::{arg, num};
use futures_util::{StreamExt, TryStreamExt};
use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What one throughput run does (`--n`, `--callers`, …).
#[derive(Debug, Clone)]
pub struct Run {
    /// Enrollments, each of its own contact `c0`, `c1`, ….
    pub n: usize,
    /// Concurrent BatchEnroll callers.
    pub callers: usize,
    /// Items per BatchEnroll call.
    pub enroll_batch: usize,
    /// Delivery workers claiming and acking while the steps run (0: none).
    pub consumers: usize,
    /// Acks (or BatchAckDispatch calls) each delivery worker keeps in flight.
    pub acks_in_flight: usize,
    /// Acks per call: 1 is one AckDispatch per dispatch, more is BatchAckDispatch of that
    /// many (a claim's worth, 1,000, by default).
    pub ack_batch: usize,
    /// Reply signals reported after the steps (0: none), to contacts `c0`, `c1`, ….
    pub signals: usize,
    /// Signals in flight.
    pub signal_concurrency: usize,
}

/// A run's rates, per second.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figures {
    pub enrolled: f64,
    pub stepped: f64,
    /// Steps as the delivery side sees them: first wake to last ack.
    pub delivered: Option<f64>,
    pub signalled: Option<f64>,
}

impl Run {
    /// The run the command line asks for; `enroll_batch` is the default of `--enroll-batch`.
    pub fn from_args(enroll_batch: usize, consumers: usize, signals: usize) -> anyhow::Result<Run> {
        let run = Run {
            n: num("--n", 20_000)?,
            callers: num("--callers", 1_usize)?.max(1),
            enroll_batch: num("--enroll-batch", enroll_batch)?,
            consumers: num("--consumers", consumers)?,
            acks_in_flight: num("--acks-in-flight", 8_usize)?.max(1),
            ack_batch: num("--ack-batch", 1_000_usize)?,
            signals: num("--signals", signals)?,
            signal_concurrency: num("--signal-concurrency", 32_usize)?.max(1),
        };
        anyhow::ensure!(
            (1..=nudge::service::dispatches::MAX_ACK_BATCH).contains(&run.ack_batch),
            "--ack-batch {} is out of range: 1 (AckDispatch) to {} (BatchAckDispatch)",
            run.ack_batch,
            nudge::service::dispatches::MAX_ACK_BATCH
        );
        anyhow::ensure!(
            (1..=nudge::service::enrollments::MAX_BATCH).contains(&run.enroll_batch),
            "--enroll-batch {} is out of range: 1 to {}",
            run.enroll_batch,
            nudge::service::enrollments::MAX_BATCH
        );
        anyhow::ensure!(
            run.signals <= run.n,
            "--signals {} is more than --n {}: each signal goes to its own enrolled contact",
            run.signals,
            run.n
        );
        if arg("--via").as_deref() == Some("grpc") {
            anyhow::ensure!(
                run.consumers > 0,
                "--via grpc needs --consumers 1 or more: the run ends at the last ack"
            );
        }
        Ok(run)
    }

    /// The contacts of each BatchEnroll call, in order.
    pub fn enroll_calls(&self) -> std::vec::IntoIter<Range<usize>> {
        (0..self.n)
            .step_by(self.enroll_batch)
            .map(|start| start..(start + self.enroll_batch).min(self.n))
            .collect::<Vec<_>>()
            .into_iter()
    }

    pub fn print_enrolled(&self, via: &str, elapsed: Duration) -> f64 {
        let secs = elapsed.as_secs_f64();
        let rate = self.n as f64 / secs;
        println!(
            "{via}: BatchEnroll {} enrollments in {secs:.2} s = {rate:.0} enrollments/s ({} callers, {} per call)",
            self.n, self.callers, self.enroll_batch
        );
        rate
    }

    pub fn print_delivered(&self, via: &str, acked: usize, elapsed: Duration) -> f64 {
        let secs = elapsed.as_secs_f64();
        let rate = acked as f64 / secs;
        println!(
            "{via}: delivery workers claimed and acked {acked} dispatches, first wake to last ack {secs:.2} s = {rate:.0} steps/s end to end ({} workers, claims of 1000, {} in flight each)",
            self.consumers,
            if self.ack_batch == 1 {
                format!("{} AckDispatch", self.acks_in_flight)
            } else {
                format!("{} BatchAckDispatch of {}", self.acks_in_flight, self.ack_batch)
            }
        );
        rate
    }

    /// Reports `self.signals` signals, `report(i)` for each i, `signal_concurrency` at a time;
    /// how long they took.
    pub async fn report_signals<F, Fut>(&self, report: F) -> anyhow::Result<Duration>
    where
        F: Fn(usize) -> Fut,
        Fut: Future<Output = anyhow::Result<()>>,
    {
        let started = Instant::now();
        futures_util::stream::iter(0..self.signals)
            .map(report)
            .buffer_unordered(self.signal_concurrency)
            .try_collect::<()>()
            .await?;
        Ok(started.elapsed())
    }

    pub fn print_signals(&self, via: &str, elapsed: Duration) -> f64 {
        let secs = elapsed.as_secs_f64();
        let rate = self.signals as f64 / secs;
        println!(
            "{via}: ReportSignal {} replies (each to its own contact's active enrollment) in {secs:.2} s = {rate:.0} signals/s ({} in flight)",
            self.signals, self.signal_concurrency
        );
        rate
    }
}

/// Counts acks of all delivery workers and notes when the last one of `total` landed.
#[derive(Debug)]
pub struct Acks {
    total: usize,
    done: AtomicUsize,
    last: Mutex<Option<Instant>>,
}

impl Acks {
    pub fn new(total: usize) -> Acks {
        Acks {
            total,
            done: AtomicUsize::new(0),
            last: Mutex::new(None),
        }
    }

    pub fn add(&self, n: usize) {
        let before = self.done.fetch_add(n, Ordering::Relaxed);
        if before < self.total && before + n >= self.total {
            *self.last.lock().expect("acks lock") = Some(Instant::now());
        }
    }

    pub fn all_done(&self) -> bool {
        self.done.load(Ordering::Relaxed) >= self.total
    }

    pub fn count(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// From `started` to the last ack (to now if it has not landed).
    pub fn elapsed_since(&self, started: Instant) -> Duration {
        self.last
            .lock()
            .expect("acks lock")
            .unwrap_or_else(Instant::now)
            .duration_since(started)
    }
}
