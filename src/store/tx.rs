//! [`Tx`]: one transaction type over both backends.
//!
//! A workflow above the store is an ordinary `async fn` over `&mut Tx`, compiled once: it calls
//! small methods (`lock_enrollment`, `claim_due`, `reach`, `write_all`, …, each in the file of
//! its table) that match on the backend inside, where the two differ only in a `FOR UPDATE` or in
//! how rows are batched. Commit with [`Tx::commit`] or [`Tx::finish`]. A `Tx` dropped without
//! either (an error path that returned early, a panic, a cancelled request) leaves its
//! connection inside an open transaction, which the pool refuses to reuse: the connection is
//! closed and the database rolls the transaction back.

use super::{Conn, StoreError};
use diesel_async::{AsyncConnection, TransactionManager};

/// An open transaction on one pooled connection.
pub struct Tx {
    pub(super) conn: Conn,
    /// Where the enrollment rows this transaction claimed are, until it writes them.
    pub(super) locked: super::LockedRows,
}

impl Tx {
    pub(super) async fn begin(mut conn: Conn) -> Result<Tx, StoreError> {
        on_conn!(&mut conn, c => begin(c).await)?;
        Ok(Tx {
            conn,
            locked: Default::default(),
        })
    }

    /// [`Db::begin_planned`](super::Db::begin_planned): `BEGIN` with [`BEGIN_PLANNED`]'s
    /// settings on PostgreSQL, a plain `BEGIN` on SQLite.
    pub(super) async fn begin_planned(mut conn: Conn) -> Result<Tx, StoreError> {
        let Conn::Postgres(c) = &mut conn else {
            return Tx::begin(conn).await;
        };
        diesel_async::AnsiTransactionManager::begin_transaction_sql(&mut **c, BEGIN_PLANNED)
            .await?;
        Ok(Tx {
            conn,
            locked: Default::default(),
        })
    }

    /// Commits everything done through this transaction.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        Ok(on_conn!(&mut self.conn, c => commit(c).await)?)
    }

    /// Undoes everything done through this transaction.
    pub async fn rollback(mut self) -> Result<(), StoreError> {
        Ok(on_conn!(&mut self.conn, c => rollback(c).await)?)
    }

    /// Commits when `result` is `Ok` (and returns its value), else rolls back and returns the
    /// error: the end of every workflow, `tx.finish(work(&mut tx).await).await`.
    pub async fn finish<T, E: From<StoreError>>(self, result: Result<T, E>) -> Result<T, E> {
        match result {
            Ok(value) => {
                self.commit().await?;
                Ok(value)
            }
            Err(e) => {
                // The error that ended the work is the one to report; a failed rollback
                // leaves the connection broken, and the pool drops it.
                if let Err(rollback) = self.rollback().await {
                    tracing::warn!(error = %rollback, "rollback failed");
                }
                Err(e)
            }
        }
    }
}

/// What [`Db::begin_planned`](super::Db::begin_planned) sends: `BEGIN` and the settings that
/// hold until the transaction ends, as one simple query (one round trip).
pub const BEGIN_PLANNED: &str = "BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; \
     SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
     SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off";

async fn begin<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::begin_transaction(c).await
}

async fn commit<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::commit_transaction(c).await
}

async fn rollback<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::rollback_transaction(c).await
}

/// How many times [`transaction!`](crate::transaction) runs a transaction that PostgreSQL
/// aborted for a conflict with another one (serialization failure 40001, deadlock 40P01),
/// before the conflict is the answer (`ABORTED`).
pub const CONFLICT_ATTEMPTS: usize = 4;

/// The wait before attempt `attempt` (2, 3, …) of a conflicted transaction: 10, 20, 40 ms
/// and a random part as long, so two transactions that deadlocked do not meet again in step.
pub fn conflict_backoff(attempt: usize) -> std::time::Duration {
    use rand::Rng;
    let base = 10u64 << attempt.saturating_sub(2).min(6);
    std::time::Duration::from_millis(base + rand::thread_rng().gen_range(0..=base))
}

/// An error that may be another transaction's conflict (see [`StoreError::is_conflict`]).
pub trait Conflicted {
    /// The same work in a new transaction may succeed.
    fn is_conflict(&self) -> bool;
}

impl Conflicted for StoreError {
    fn is_conflict(&self) -> bool {
        StoreError::is_conflict(self)
    }
}

/// Runs `$work`, an expression (usually an `.await`) over `$tx: &mut Tx`, in a new transaction
/// of `$db` (a `Db`), committing it when the work is `Ok` and rolling it back otherwise, like
/// [`Tx::finish`]; when PostgreSQL aborted it for a conflict with another transaction, runs it
/// again in a new one, [`CONFLICT_ATTEMPTS`] times in all. Evaluates to the last attempt's
/// result, whose error type (`StoreError` or one made from it) implements [`Conflicted`].
/// `$work` runs again only after a rollback, which left nothing behind.
#[macro_export]
macro_rules! transaction {
    ($db:expr, |$tx:ident| $work:expr) => {{
        let mut attempt = 1usize;
        loop {
            let result = match $db.begin().await {
                Ok(mut tx) => {
                    let worked = {
                        let $tx = &mut tx;
                        $work
                    };
                    tx.finish(worked).await
                }
                Err(e) => Err(e.into()),
            };
            match result {
                Err(e)
                    if $crate::store::Conflicted::is_conflict(&e)
                        && attempt < $crate::store::CONFLICT_ATTEMPTS =>
                {
                    attempt += 1;
                    tracing::info!(attempt, error = %e, "a transaction conflicted; running it again");
                    tokio::time::sleep($crate::store::conflict_backoff(attempt)).await;
                }
                result => break result,
            }
        }
    }};
}
