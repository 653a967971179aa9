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
}

impl Tx {
    pub(super) async fn begin(mut conn: Conn) -> Result<Tx, StoreError> {
        on_conn!(&mut conn, c => begin(c).await)?;
        Ok(Tx { conn })
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

async fn begin<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::begin_transaction(c).await
}

async fn commit<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::commit_transaction(c).await
}

async fn rollback<C: AsyncConnection>(c: &mut C) -> diesel::QueryResult<()> {
    C::TransactionManager::rollback_transaction(c).await
}
