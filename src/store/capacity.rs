//! The capacity ledger (docs/capacity.md): one row per reserved send or created task of a capped sender.
//!
//! Correctness under several replicas rests on one rule: a transaction that may reserve for a
//! sender first locks that sender's row (`SELECT … FOR UPDATE`, senders sorted, so two batches
//! never deadlock), then reads the ledger, then writes its reservations with the dispatches.
//! The lock serializes reservers of one sender; READ COMMITTED gives the next holder a fresh
//! snapshot with every committed reservation. SQLite has one writer. See `docs/capacity.md`.

use super::schema::{capacity_ledger, senders};
use super::{Conn, StoreError, Tx};
use crate::capacity::{Book, Caps, Entry};
use crate::clock::{from_millis, to_millis};
use crate::timing::{Channel, Zone};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashMap;

/// One ledger row.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = capacity_ledger, treat_none_as_default_value = false)]
pub struct LedgerRow {
    /// The dispatch's or task's idempotency key (`<enrollment>:<run>`).
    pub key: String,
    pub account_id: String,
    pub sender_id: String,
    pub channel: String,
    pub at: i64,
    pub domain: Option<String>,
    pub gap_until: i64,
}

impl LedgerRow {
    /// The row of a reservation.
    pub fn of(key: &str, account_id: &str, sender_id: &str, e: &Entry) -> LedgerRow {
        LedgerRow {
            key: key.to_string(),
            account_id: account_id.to_string(),
            sender_id: sender_id.to_string(),
            channel: e.channel.to_string(),
            at: to_millis(e.at),
            domain: e.domain.clone(),
            gap_until: to_millis(e.gap_until),
        }
    }

    fn entry(&self) -> Option<Entry> {
        Some(Entry {
            channel: self.channel.parse::<Channel>().ok()?,
            at: from_millis(self.at),
            domain: self.domain.clone(),
            gap_until: from_millis(self.gap_until),
        })
    }
}

/// A sender, keyed as the ledger keys it: (account, sender id).
pub type SenderKey = (String, String);

/// The caps and zone of the capped senders among `keys` (senders without caps are absent).
pub fn parse_caps(tz: &str, caps: &str) -> Option<(Caps, Zone)> {
    let doc: serde_json::Value = serde_json::from_str(caps).ok()?;
    let caps = Caps::parse(&doc).ok()?;
    if caps.is_empty() {
        return None;
    }
    Some((caps, Zone::parse(tz).ok()?))
}

/// A capped sender's stored (account, id, tz, caps), as [`senders_with_caps`] reads them.
pub(super) type CapsRow = (String, String, String, Option<String>);

/// The senders with caps whose account is one of `keys`' and id one of `keys`' (one statement
/// whatever the accounts; [`caps_of`] keeps the pairs asked for).
pub(super) fn senders_with_caps(
    keys: &[SenderKey],
) -> senders::BoxedQuery<
    'static,
    diesel::pg::Pg,
    (
        diesel::sql_types::Text,
        diesel::sql_types::Text,
        diesel::sql_types::Text,
        diesel::sql_types::Nullable<diesel::sql_types::Text>,
    ),
> {
    let (mut accounts, mut ids): (Vec<String>, Vec<String>) = keys.iter().cloned().unzip();
    accounts.sort();
    accounts.dedup();
    ids.sort();
    ids.dedup();
    senders::table
        .filter(senders::account_id.eq_any(accounts))
        .filter(senders::id.eq_any(ids))
        .filter(senders::caps.is_not_null())
        .select((senders::account_id, senders::id, senders::tz, senders::caps))
        .into_boxed()
}

/// The caps and zones of `rows` ([`senders_with_caps`]) that `keys` asked for and that parse.
pub(super) fn caps_of(keys: &[SenderKey], rows: Vec<CapsRow>) -> HashMap<SenderKey, (Caps, Zone)> {
    let mut out = HashMap::new();
    for (account, id, tz, caps) in rows {
        let key = (account, id);
        if !keys.contains(&key) {
            continue;
        }
        if let Some(parsed) = caps.as_deref().and_then(|c| parse_caps(&tz, c)) {
            out.insert(key, parsed);
        }
    }
    out
}

impl Tx {
    /// The caps of those of `keys` that have any, with their zones: one statement (none
    /// without keys).
    pub async fn sender_caps(
        &mut self,
        keys: &[SenderKey],
    ) -> Result<HashMap<SenderKey, (Caps, Zone)>, StoreError> {
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<CapsRow> = match &mut self.conn {
            Conn::Postgres(c) => senders_with_caps(keys).load(&mut **c).await?,
            Conn::Sqlite(c) => {
                let (accounts, ids): (Vec<&str>, Vec<&str>) =
                    keys.iter().map(|(a, s)| (a.as_str(), s.as_str())).unzip();
                senders::table
                    .filter(senders::account_id.eq_any(accounts))
                    .filter(senders::id.eq_any(ids))
                    .filter(senders::caps.is_not_null())
                    .select((senders::account_id, senders::id, senders::tz, senders::caps))
                    .load(&mut **c)
                    .await?
            }
        };
        Ok(caps_of(keys, rows))
    }

    /// Locks the rows of `keys` until this transaction ends (PostgreSQL `FOR UPDATE`, in key
    /// order so that two transactions locking overlapping sets never deadlock; SQLite has one
    /// writer), then reads each one's ledger of the last 7 days before `now_ms` and its caps
    /// again (what committed before the lock was granted).
    pub async fn lock_books(
        &mut self,
        keys: &[SenderKey],
        now_ms: i64,
    ) -> Result<HashMap<SenderKey, Book>, StoreError> {
        let mut keys: Vec<&SenderKey> = keys.iter().collect();
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        if let Conn::Postgres(c) = &mut self.conn {
            let mut by_account: Vec<(&str, Vec<&str>)> = Vec::new();
            for (a, s) in &keys {
                match by_account.last_mut() {
                    Some((last, ids)) if *last == a.as_str() => ids.push(s.as_str()),
                    _ => by_account.push((a.as_str(), vec![s.as_str()])),
                }
            }
            for (account, ids) in by_account {
                let _: Vec<String> = senders::table
                    .filter(senders::account_id.eq(account))
                    .filter(senders::id.eq_any(&ids))
                    .order(senders::id.asc())
                    .select(senders::id)
                    .for_update()
                    .load(&mut **c)
                    .await?;
            }
        }
        let owned: Vec<SenderKey> = keys.iter().map(|k| (*k).clone()).collect();
        let caps = self.sender_caps(&owned).await?;
        let since = now_ms - crate::capacity::WEEK_MS;
        let mut books: HashMap<SenderKey, Book> = caps
            .into_iter()
            .map(|(k, (caps, zone))| (k, Book::new(caps, zone)))
            .collect();
        let mut by_account: HashMap<String, Vec<String>> = HashMap::new();
        for (a, s) in books.keys() {
            by_account.entry(a.clone()).or_default().push(s.clone());
        }
        for (account, ids) in by_account {
            let rows: Vec<LedgerRow> = on_conn!(&mut self.conn, c => capacity_ledger::table
                .filter(capacity_ledger::account_id.eq(&account))
                .filter(capacity_ledger::sender_id.eq_any(&ids))
                .filter(capacity_ledger::at.gt(since))
                .select(LedgerRow::as_select())
                .load(c)
                .await)?;
            for row in rows {
                if let (Some(book), Some(e)) = (
                    books.get_mut(&(row.account_id.clone(), row.sender_id.clone())),
                    row.entry(),
                ) {
                    book.reserve(e);
                }
            }
        }
        Ok(books)
    }

    /// Gives back the slot of `key` (a dispatch acked as failed: nothing was sent).
    pub async fn release_slot(&mut self, key: &str) -> Result<usize, StoreError> {
        Ok(on_conn!(&mut self.conn, c => diesel::delete(
            capacity_ledger::table.filter(capacity_ledger::key.eq(key)))
            .execute(c)
            .await)?)
    }
}

/// True when some sender of some account has caps: the planner shards its concurrent batches
/// by sender only then ([`Tx::claim_due`]), so installations without caps pay nothing.
pub async fn any_capped_sender(db: &super::Db) -> Result<bool, StoreError> {
    let conn = db.conn().await?;
    let found: Option<String> = with_conn!(conn, c => senders::table
        .filter(senders::caps.is_not_null())
        .select(senders::id)
        .first(c)
        .await
        .optional())?;
    Ok(found.is_some())
}

/// How many of a sender's next waiting enrollments a given-back slot looks through for one
/// deferred by a cap.
const WAITER_SCAN: i64 = 500;

impl Tx {
    /// docs/capacity.md: the step first in line for a slot of `channel` given back by the sender: of
    /// its active enrollments deferred by a cap on that channel (the first [`WAITER_SCAN`] due),
    /// the first in the planner's priority order (`MoveTo`, follow-ups, first touches; then
    /// the scheduled instant, then the id), locked.
    /// One a planner holds right now is skipped (`SKIP LOCKED`): that batch reads the ledger
    /// without the slot anyway, and an ack never waits on a planner.
    pub async fn first_cap_waiter(
        &mut self,
        account_id: &str,
        sender_id: &str,
        channel: Channel,
        now_ms: i64,
    ) -> Result<Option<super::EnrollmentRow>, StoreError> {
        use super::schema::enrollments;
        let waiting: Vec<(String, Vec<u8>)> = on_conn!(&mut self.conn, c => enrollments::table
            .filter(enrollments::account_id.eq(account_id))
            .filter(enrollments::sender_id.eq(sender_id))
            .filter(enrollments::status.eq("active"))
            .filter(enrollments::next_run_at.gt(now_ms))
            .order((enrollments::next_run_at.asc(), enrollments::id.asc()))
            .limit(WAITER_SCAN)
            .select((enrollments::id, enrollments::state))
            .load(c)
            .await)?;
        // First in line by the planner's own order (docs/capacity.md): class, scheduled instant, id.
        let first = waiting
            .into_iter()
            .filter_map(|(id, state)| {
                let state = super::state_encoding::decode(&state).ok()?;
                let run = state.run.as_ref()?;
                let waits = run.deferred_reason.is_some()
                    && crate::engine::channel_of(run.step_type) == channel;
                let (class, due) = crate::engine::campaign::priority(&state);
                waits.then_some((class, due, id))
            })
            .min()
            .map(|(_, _, id)| id);
        let Some(id) = first else {
            return Ok(None);
        };
        Ok(match &mut self.conn {
            Conn::Postgres(c) => enrollments::table
                .filter(enrollments::id.eq(&id))
                .select(super::EnrollmentRow::as_select())
                .for_update()
                .skip_locked()
                .first(&mut **c)
                .await
                .optional()?,
            Conn::Sqlite(c) => enrollments::table
                .filter(enrollments::id.eq(&id))
                .select(super::EnrollmentRow::as_select())
                .first(&mut **c)
                .await
                .optional()?,
        })
    }
}
