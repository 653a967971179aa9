//! The storage boundary's errors, and what each database error means for a caller.
//!
//! PostgreSQL says what went wrong in an error's SQLSTATE; [`classify`] maps every code to one
//! [`ErrorClass`] on purpose, by class and then by exception, and the table in
//! `docs/service.md` ("Storage failures") is the same rule written out. SQLite has no SQLSTATE:
//! its few conditions that are the disk's, not the query's, are read from the message.

use super::BoxError;
use diesel::result::{DatabaseErrorKind, Error as DieselError, SqlState};
use diesel_async::pooled_connection::deadpool::PoolError;

/// The errors of the storage boundary. Each keeps its cause as its `source`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A query failed: a constraint the caller may handle (a unique key), or a bug.
    #[error("database query failed: {0}")]
    Query(DieselError),
    /// The database cannot be reached at start.
    #[error("cannot connect to the database at {url}: {source}")]
    Connect {
        /// The URL as configured (password hidden).
        url: String,
        /// Why not.
        #[source]
        source: BoxError,
    },
    /// The database cannot answer now, and said so or was never reached: no pooled connection
    /// within the pool timeout, the statement cancelled (by its timeout, an operator or a
    /// pooler), the server shutting down or out of resources. The server rolled back what the
    /// call had done: nothing was committed. Retryable.
    #[error("the database is unavailable: {0}")]
    Unavailable(#[source] BoxError),
    /// The connection broke before an answer came (reset, closed, the answer deadline passed).
    /// A transaction whose COMMIT was not yet sent is rolled back, but one lost as it
    /// committed (or a single statement that commits itself) may have been stored, and nothing
    /// can tell which: the caller is told it may have happened. Retryable where a retry finds
    /// what the first attempt stored (client keys, idempotent writes).
    #[error("the connection to the database was lost: {0}")]
    ConnectionLost(#[source] BoxError),
    /// A migration failed to apply.
    #[error("migrations failed: {0}")]
    Migration(#[source] BoxError),
    /// A stored value does not decode: the data changed under us, or a bug wrote it.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// SQLite stayed busy past its timeout, or PostgreSQL aborted the transaction for a
    /// conflict with another (serialization failure, deadlock) as often as nudge retries it:
    /// try again.
    #[error("too many concurrent writers: {0}")]
    Contention(String),
    /// The database answers but refuses writes: it is read-only (a standby, or
    /// `default_transaction_read_only`) or out of disk space. Nothing was changed; retryable
    /// once an operator (or a failover) fixes it.
    #[error("the database refuses writes: {0}")]
    Unwritable(String),
    /// A storage task stopped (it panicked or was cancelled).
    #[error("a storage worker task stopped: {0}")]
    Worker(#[from] tokio::task::JoinError),
}

impl StoreError {
    /// The SQLSTATE the server answered with, when it answered with one (PostgreSQL only).
    pub fn sqlstate(&self) -> Option<SqlState> {
        match self {
            StoreError::Query(DieselError::DatabaseError(_, info)) => info.sqlstate(),
            _ => None,
        }
    }

    /// What a caller is told of a failure it may retry, or `None` for one it may not: whether
    /// nothing was stored, or something may have been.
    pub fn retry_advice(&self) -> Option<&'static str> {
        match self {
            StoreError::Unavailable(_) | StoreError::Connect { .. } => Some(UNAVAILABLE),
            StoreError::ConnectionLost(_) => Some(CONNECTION_LOST),
            _ => None,
        }
    }

    /// Another transaction's conflict aborted this one (PostgreSQL's 40001 and 40P01): the
    /// same work in a new transaction may well succeed.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Contention(_))
    }

    /// A unique index refused the write: what the caller reads again decides the answer.
    pub fn is_unique_violation(&self) -> bool {
        matches!(
            self,
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                _
            ))
        )
    }
}

/// What a call that met an unavailable database is told.
pub const UNAVAILABLE: &str = "the database is unavailable; nothing was changed, retry later";

/// What a call that lost its connection is told.
pub const CONNECTION_LOST: &str = "the connection to the database was lost during the call: \
     what it changed may have been stored; retry (a retry with the same client key, or of an \
     idempotent call, finds what was stored)";

impl From<PoolError> for StoreError {
    fn from(e: PoolError) -> StoreError {
        StoreError::Unavailable(Box::new(e))
    }
}

impl From<DieselError> for StoreError {
    /// PostgreSQL's errors by their SQLSTATE ([`classify`]); a connection lost before an answer
    /// came (no SQLSTATE) is [`StoreError::ConnectionLost`]; SQLite's by the few messages that
    /// are the disk's fault.
    fn from(e: DieselError) -> StoreError {
        match e {
            DieselError::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                _,
            )
            | DieselError::BrokenTransactionManager => StoreError::ConnectionLost(Box::new(e)),
            // The commit failed and so did the rollback: what the commit met decides (a lost
            // connection, mostly).
            DieselError::RollbackErrorOnCommit { commit_error, .. } => {
                StoreError::from(*commit_error)
            }
            DieselError::DatabaseError(_, ref info) => match info.sqlstate() {
                Some(code) => match classify(code) {
                    ErrorClass::Unavailable => StoreError::Unavailable(Box::new(e)),
                    ErrorClass::Unwritable => {
                        let why = match code.as_str() {
                            "25006" => "it is read-only",
                            _ => "it is out of space",
                        };
                        StoreError::Unwritable(format!(
                            "{why} ({}, SQLSTATE {code})",
                            info.message()
                        ))
                    }
                    ErrorClass::Conflict => {
                        StoreError::Contention(format!("{} (SQLSTATE {code})", info.message()))
                    }
                    ErrorClass::Constraint | ErrorClass::Internal => StoreError::Query(e),
                },
                None => match sqlite_condition(info.message()) {
                    Some(SqliteCondition::Full) => {
                        StoreError::Unwritable(format!("it is out of space ({})", info.message()))
                    }
                    Some(SqliteCondition::Io) => StoreError::Unavailable(Box::new(e)),
                    None => StoreError::Query(e),
                },
            },
            e => StoreError::Query(e),
        }
    }
}

/// What a PostgreSQL error means for the call that met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The server or the link, not the request: nothing was committed, and the same call
    /// later (after a restart, a failover, a cancel) succeeds. gRPC `UNAVAILABLE`, HTTP 503
    /// with `Retry-After`.
    Unavailable,
    /// The server answers but takes no writes: read-only (a standby) or out of disk.
    /// `UNAVAILABLE`, like the class above, with the reason.
    Unwritable,
    /// Another transaction's conflict aborted this one (serialization failure, deadlock):
    /// nudge runs the transaction again a few times, then answers `ABORTED`.
    Conflict,
    /// A constraint that is the answer: a unique key (`ALREADY_EXISTS`, or the existing record
    /// read back) or a row referred to that is gone (`FAILED_PRECONDITION`).
    Constraint,
    /// A fault of nudge's (a query the schema refuses, corrupt data): `INTERNAL`, with the
    /// SQLSTATE in the log.
    Internal,
}

/// The [`ErrorClass`] of a PostgreSQL SQLSTATE: whole classes first (08 connection, 53
/// resources, 57 operator intervention, 58 system: unavailable), then the codes of other
/// classes that are retryable too (a lock or idle timeout, a read-only transaction, a
/// statement's completion unknown), then the two constraints that answer a request.
pub fn classify(code: SqlState) -> ErrorClass {
    use ErrorClass::*;
    match code.as_str() {
        // Read-only transaction (a standby, `default_transaction_read_only`) and a full disk.
        "25006" | "53100" => Unwritable,
        // Serialization failure (also a standby's recovery conflict) and deadlock.
        "40001" | "40P01" => Conflict,
        // The transaction's fate is unknown to the server itself: retry, as for a lost link.
        "40003" => Unavailable,
        // Lock timeout (`lock_timeout`: "canceling statement due to lock timeout").
        "55P03" => Unavailable,
        // Idle-in-transaction and transaction timeouts end the session.
        "25P03" | "25P04" => Unavailable,
        // Unique key; foreign key (the row referred to was deleted meanwhile).
        "23505" | "23503" => Constraint,
        other => match &other[..2] {
            "08" | "53" | "57" | "58" => Unavailable,
            _ => Internal,
        },
    }
}

/// SQLite's conditions that are the disk's, not the query's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SqliteCondition {
    /// `SQLITE_FULL`: no space left (or `max_page_count` reached).
    Full,
    /// `SQLITE_IOERR`: the disk failed a read or a write.
    Io,
}

/// SQLite's error by its message (diesel passes on only SQLite's text, which is fixed English).
fn sqlite_condition(message: &str) -> Option<SqliteCondition> {
    if message.contains("database or disk is full") {
        Some(SqliteCondition::Full)
    } else if message.contains("disk I/O error") {
        Some(SqliteCondition::Io)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, ErrorClass, StoreError};
    use crate::service::ServiceError;
    use diesel::result::{DatabaseErrorKind, Error, SqlState};

    /// PostgreSQL's own list of its codes (`errcodes.txt` from its source tree), as the
    /// PostgreSQL 15 package installs it: every code is classified, by this table of classes
    /// and exceptions written out again independently of [`classify`]'s match.
    const ERRCODES: &str = include_str!("../../fixtures/postgres/errcodes.txt");

    fn expected(code: &str) -> ErrorClass {
        use ErrorClass::*;
        const EXCEPTIONS: [(&str, ErrorClass); 10] = [
            ("25006", Unwritable),
            ("53100", Unwritable),
            ("40001", Conflict),
            ("40P01", Conflict),
            ("40003", Unavailable),
            ("55P03", Unavailable),
            ("25P03", Unavailable),
            ("25P04", Unavailable),
            ("23505", Constraint),
            ("23503", Constraint),
        ];
        if let Some((_, class)) = EXCEPTIONS.iter().find(|(c, _)| *c == code) {
            return *class;
        }
        match &code[..2] {
            "08" | "53" | "57" | "58" => Unavailable,
            _ => Internal,
        }
    }

    fn codes() -> Vec<(String, String)> {
        ERRCODES
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("Section:") && !l.trim().is_empty())
            .map(|l| {
                let mut parts = l.split_whitespace();
                let code = parts.next().unwrap().to_string();
                let name = parts.nth(2).unwrap_or("").to_string();
                (code, name)
            })
            .collect()
    }

    #[test]
    fn every_postgresql_code_is_classified_on_purpose() {
        let codes = codes();
        assert!(
            codes.len() > 250,
            "errcodes.txt read: {} codes",
            codes.len()
        );
        for (code, name) in &codes {
            let parsed: SqlState = code.parse().unwrap();
            assert_eq!(classify(parsed), expected(code), "{code} {name}");
        }
    }

    /// The codes an operator meets, by name, as the docs' table lists them.
    #[test]
    fn the_codes_in_the_docs_table() {
        use ErrorClass::*;
        let names: std::collections::HashMap<String, String> =
            codes().into_iter().map(|(c, n)| (n, c)).collect();
        for (name, class) in [
            ("query_canceled", Unavailable),
            ("admin_shutdown", Unavailable),
            ("crash_shutdown", Unavailable),
            ("cannot_connect_now", Unavailable),
            ("connection_failure", Unavailable),
            ("too_many_connections", Unavailable),
            ("out_of_memory", Unavailable),
            ("disk_full", Unwritable),
            ("io_error", Unavailable),
            ("lock_not_available", Unavailable),
            ("idle_in_transaction_session_timeout", Unavailable),
            ("read_only_sql_transaction", Unwritable),
            ("serialization_failure", Conflict),
            ("deadlock_detected", Conflict),
            ("unique_violation", Constraint),
            ("foreign_key_violation", Constraint),
            ("not_null_violation", Internal),
            ("check_violation", Internal),
            ("undefined_table", Internal),
            ("syntax_error", Internal),
            ("data_corrupted", Internal),
        ] {
            let code = names
                .get(name)
                .unwrap_or_else(|| panic!("{name} in errcodes.txt"));
            assert_eq!(classify(code.parse().unwrap()), class, "{name} ({code})");
        }
    }

    /// A connection lost under a query (the server restarted, a proxy dropped it) is
    /// retryable, and may have committed: `ConnectionLost` here, `ServiceError::Unavailable`
    /// above saying so, gRPC `UNAVAILABLE`.
    #[test]
    fn a_lost_connection_is_unavailable_not_a_failed_query() {
        for kind in [
            DatabaseErrorKind::UnableToSendCommand,
            DatabaseErrorKind::ClosedConnection,
        ] {
            let lost = StoreError::from(Error::DatabaseError(
                kind,
                Box::new("connection closed".to_string()),
            ));
            assert!(matches!(lost, StoreError::ConnectionLost(_)), "{lost:?}");
            let answered = ServiceError::from(lost);
            assert!(
                matches!(&answered, ServiceError::Unavailable(m) if m.contains("may have been stored")),
                "{answered:?}"
            );
        }
        let refused = StoreError::from(Error::DatabaseError(
            DatabaseErrorKind::UniqueViolation,
            Box::new("duplicate key".to_string()),
        ));
        assert!(matches!(refused, StoreError::Query(_)), "{refused:?}");
        assert!(refused.is_unique_violation());
    }

    /// SQLite's disk conditions, read from its messages.
    #[test]
    fn sqlite_disk_conditions() {
        let full = StoreError::from(Error::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("database or disk is full".to_string()),
        ));
        assert!(matches!(full, StoreError::Unwritable(_)), "{full:?}");
        let io = StoreError::from(Error::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("disk I/O error".to_string()),
        ));
        assert!(matches!(io, StoreError::Unavailable(_)), "{io:?}");
        let bug = StoreError::from(Error::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("no such table: x".to_string()),
        ));
        assert!(matches!(bug, StoreError::Query(_)), "{bug:?}");
    }
}
