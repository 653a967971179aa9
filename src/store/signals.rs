//! Stored signals (docs/signals.md, "Kinds of signal and the events they raise"): every signal once, deduplicated by its provider id; which
//! enrollments it reached and what it did there (`signal_deliveries`); webhook signatures
//! already used (`webhook_replays`); and the lookups that address a signal (a contact by id,
//! email or phone; an email thread by the `Message-ID` nudge assigned).

use super::enrollments::{EnrollmentRow, Writes, LIVE};
use super::schema::{
    accounts, contacts, dispatches, enrollment_keys, enrollments, senders, signal_deliveries,
    signals, webhook_replays,
};
use super::{pg_batch, Conn, Db, StoreError, Tx};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashSet;

diesel::define_sql_function! {
    /// SQL `lower()`: emails are matched without regard to case.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// How long a used webhook signature is remembered: twice the signature tolerance, so a
/// signature is refused as a replay for as long as its timestamp could still be accepted.
pub const REPLAY_MEMORY_MS: i64 = 2 * crate::inbound::signing::TOLERANCE_SECS * 1000;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = signals)]
pub struct SignalRow {
    pub id: String,
    pub account_id: String,
    /// The first contact it is addressed to (a phone number shared by several contacts
    /// reaches all of them; `signal_deliveries` lists every enrollment).
    pub contact_id: String,
    /// What reported it: `api`, `event`, `email`, `sms`, `calendar`, `task`.
    pub source: String,
    /// The provider's id (`twilio:SM…`, `email:<…>`, the caller's); unique per account.
    pub provider_id: Option<String>,
    /// JSON array of the events it raises.
    pub raises: String,
    /// JSON: the custom event's payload, or what the webhook carried.
    pub payload: String,
    /// When it arrived.
    pub created_at: i64,
    /// `reply`, `call_connected`, `connection_accepted`, `meeting_booked`, `event`, `opt_out`.
    pub kind: String,
    /// The reply or opt-out channel.
    pub channel: Option<String>,
    /// JSON array of every contact it is addressed to.
    pub contact_ids: String,
    /// Set once every enrollment it reached has been processed; a duplicate arrival of a
    /// signal whose fan-out was cut short (a crash) finishes it.
    pub routed_at: Option<i64>,
}

/// What a signal did in one enrollment, written in the same transaction as the enrollment's
/// new state (so a signal is applied to an enrollment at most once).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = signal_deliveries)]
pub struct DeliveryRow {
    pub signal_id: String,
    pub enrollment_id: String,
    /// `woke`, `buffered`, `exited`, `ignored_paused`, or `none` (the enrollment had finished).
    pub effect: String,
    /// The branch taken when it woke a wait.
    pub branch: Option<String>,
    pub at: i64,
}

/// A contact found by its phone number, with what a reply's words are read against (its zone
/// and its own address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneContact {
    pub account_id: String,
    pub phone: Option<String>,
    pub id: String,
    pub tz: Option<String>,
    pub email: Option<String>,
}

/// What inserting a signal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    /// Stored now; `reach` are the enrollments to route it to (empty: it is already marked
    /// routed, unless it is an opt-out, whose contact update comes first).
    New { row: SignalRow, reach: Vec<String> },
    /// A signal with the same provider id was stored before: this is it, and the enrollments
    /// still to route it to when its fan-out was cut short (else empty).
    Duplicate { row: SignalRow, reach: Vec<String> },
    /// The webhook signature was used before (nothing stored).
    Replayed,
}

impl Tx {
    /// Remembers a webhook signature; false when it was seen before (a replay). Signatures
    /// older than `forget_before` can no longer pass the timestamp check and are forgotten.
    pub async fn remember_replay(
        &mut self,
        account_id: &str,
        signature: &str,
        at: i64,
    ) -> Result<bool, StoreError> {
        let fresh = on_conn!(&mut self.conn, c => diesel::insert_into(webhook_replays::table)
            .values((
                webhook_replays::account_id.eq(account_id),
                webhook_replays::signature.eq(signature),
                webhook_replays::seen_at.eq(at),
            ))
            .on_conflict((webhook_replays::account_id, webhook_replays::signature))
            .do_nothing()
            .execute(c)
            .await)?;
        Ok(fresh == 1)
    }

    /// Remembers the webhook signatures `keys` (account, signature, seen at) and forgets those
    /// seen before `forget_before`; answers, for each key in order, whether it is fresh (not
    /// seen before, nor earlier in `keys`). PostgreSQL: one round trip for the group.
    pub async fn remember_replays(
        &mut self,
        keys: &[(&str, &str, i64)],
        forget_before: i64,
    ) -> Result<Vec<bool>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        match &mut self.conn {
            Conn::Postgres(c) => {
                let stored = pg_batch::remember_replays(c, keys, forget_before).await?;
                let mut stored: HashSet<(&str, &str)> = stored
                    .iter()
                    .map(|(account, key)| (account.as_str(), key.as_str()))
                    .collect();
                // The first of a pair takes it; a later one is its replay.
                Ok(keys
                    .iter()
                    .map(|(account, key, _)| stored.remove(&(*account, *key)))
                    .collect())
            }
            Conn::Sqlite(_) => {
                let mut fresh = Vec::with_capacity(keys.len());
                for (account, key, at) in keys {
                    fresh.push(self.remember_replay(account, key, *at).await?);
                }
                self.forget_replays(forget_before).await?;
                Ok(fresh)
            }
        }
    }

    /// Forgets the webhook signatures seen before `before`.
    pub async fn forget_replays(&mut self, before: i64) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::delete(
            webhook_replays::table.filter(webhook_replays::seen_at.lt(before))
        )
        .execute(c)
        .await)?;
        Ok(())
    }

    /// Inserts the signals unless their provider ids are stored; returns the ids inserted.
    /// PostgreSQL: one array-bound statement; SQLite: a statement a row (no multi-row inserts
    /// through the async wrapper).
    pub async fn insert_signals(&mut self, rows: &[SignalRow]) -> Result<Vec<String>, StoreError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        match &mut self.conn {
            Conn::Postgres(c) => Ok(pg_batch::insert_signals(c, rows).await?),
            Conn::Sqlite(c) => {
                let mut inserted = Vec::new();
                for row in rows {
                    let n = diesel::insert_into(signals::table)
                        .values(row)
                        .on_conflict_do_nothing()
                        .execute(&mut **c)
                        .await?;
                    if n == 1 {
                        inserted.push(row.id.clone());
                    }
                }
                Ok(inserted)
            }
        }
    }

    /// The active or paused enrollments of a stored signal's contacts, oldest first, but
    /// `except` (a task outcome's own enrollment, which took its branch already).
    pub async fn reach(
        &mut self,
        row: &SignalRow,
        except: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        let contacts: Vec<String> = row.contact_ids()?;
        Ok(on_conn!(&mut self.conn, c => enrollments::table
            .inner_join(enrollment_keys::table)
            .filter(enrollment_keys::account_id.eq(&row.account_id))
            .filter(enrollment_keys::contact_id.eq_any(&contacts))
            .filter(enrollment_keys::status.eq_any(LIVE))
            .filter(enrollments::id.ne(except.unwrap_or("")))
            .order((enrollments::created_at.asc(), enrollments::id.asc()))
            .select(enrollments::id)
            .load::<String>(c)
            .await)?)
    }

    /// Marks the fan-out of these signals complete.
    pub async fn mark_routed(&mut self, signal_ids: &[&str], at: i64) -> Result<(), StoreError> {
        if signal_ids.is_empty() {
            return Ok(());
        }
        on_conn!(&mut self.conn, c => diesel::update(
            signals::table.filter(signals::id.eq_any(signal_ids))
        )
        .set(signals::routed_at.eq(Some(at)))
        .execute(c)
        .await)?;
        Ok(())
    }

    /// The account's signal with this provider id.
    pub async fn signal_by_provider(
        &mut self,
        account_id: &str,
        provider_id: Option<&str>,
    ) -> Result<SignalRow, StoreError> {
        Ok(on_conn!(&mut self.conn, c => signals::table
            .filter(signals::account_id.eq(account_id))
            .filter(signals::provider_id.eq(provider_id))
            .select(SignalRow::as_select())
            .first(c)
            .await)?)
    }

    /// The stored signal with this provider id while its delivery is not finished (`routed_at`
    /// unset): what a replayed webhook signature may still finish. A signal without a provider
    /// id, or one delivered already, is `None`: its replay is refused.
    pub async fn undelivered(
        &mut self,
        account_id: &str,
        provider_id: Option<&str>,
    ) -> Result<Option<SignalRow>, StoreError> {
        if provider_id.is_none() {
            return Ok(None);
        }
        match self.signal_by_provider(account_id, provider_id).await {
            Ok(stored) => Ok(Some(stored).filter(|s| s.routed_at.is_none())),
            Err(StoreError::Query(diesel::result::Error::NotFound)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The signals of these accounts with these provider ids (a superset: the caller keeps
    /// each (account, provider id) pair it asked for).
    pub async fn signals_by_provider(
        &mut self,
        account_ids: &[&str],
        provider_ids: &[&str],
    ) -> Result<Vec<SignalRow>, StoreError> {
        if provider_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(on_conn!(&mut self.conn, c => signals::table
            .filter(signals::account_id.eq_any(account_ids))
            .filter(signals::provider_id.eq_any(provider_ids))
            .select(SignalRow::as_select())
            .load(c)
            .await)?)
    }

    /// Whether `signal_id` already reached `enrollment_id`.
    pub async fn delivered(
        &mut self,
        signal_id: &str,
        enrollment_id: &str,
    ) -> Result<bool, StoreError> {
        let seen: i64 = on_conn!(&mut self.conn, c => signal_deliveries::table
            .filter(signal_deliveries::signal_id.eq(signal_id))
            .filter(signal_deliveries::enrollment_id.eq(enrollment_id))
            .count()
            .get_result(c)
            .await)?;
        Ok(seen > 0)
    }

    /// Every (signal, enrollment) these signals reached already.
    pub async fn delivered_pairs(
        &mut self,
        signal_ids: &[&str],
    ) -> Result<HashSet<(String, String)>, StoreError> {
        if signal_ids.is_empty() {
            return Ok(HashSet::new());
        }
        Ok(on_conn!(&mut self.conn, c => signal_deliveries::table
            .filter(signal_deliveries::signal_id.eq_any(signal_ids))
            .select((signal_deliveries::signal_id, signal_deliveries::enrollment_id))
            .load::<(String, String)>(c)
            .await)?
        .into_iter()
        .collect())
    }

    /// The deliveries of these signals, in the order they were written.
    pub async fn deliveries_of(
        &mut self,
        signal_ids: &[&str],
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        if signal_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(on_conn!(&mut self.conn, c => signal_deliveries::table
            .filter(signal_deliveries::signal_id.eq_any(signal_ids))
            .order((signal_deliveries::at.asc(), signal_deliveries::enrollment_id.asc()))
            .select(DeliveryRow::as_select())
            .load(c)
            .await)?)
    }

    /// Inserts delivery rows. PostgreSQL: one array-bound statement; SQLite: a row at a time.
    pub async fn insert_deliveries(&mut self, rows: &[DeliveryRow]) -> Result<(), StoreError> {
        match &mut self.conn {
            Conn::Postgres(c) => {
                pg_batch::insert_deliveries(c, rows).await?;
            }
            Conn::Sqlite(c) => {
                for row in rows {
                    diesel::insert_into(signal_deliveries::table)
                        .values(row)
                        .execute(&mut **c)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// Every contact with one of the (account, E.164 phone) `pairs`, oldest contact first
    /// (SQLite answers the cross product of accounts and phones; the caller keeps each
    /// signal's own pair).
    pub async fn contacts_by_phone(
        &mut self,
        pairs: &[(String, String)],
    ) -> Result<Vec<PhoneContact>, StoreError> {
        match &mut self.conn {
            Conn::Postgres(c) => Ok(pg_batch::contacts_by_phone(c, pairs).await?),
            Conn::Sqlite(c) => {
                let accounts: Vec<&str> = pairs.iter().map(|(a, _)| a.as_str()).collect();
                let phones: Vec<&str> = pairs.iter().map(|(_, p)| p.as_str()).collect();
                Ok(contacts::table
                    .filter(contacts::account_id.eq_any(accounts))
                    .filter(contacts::phone.eq_any(phones))
                    .order((contacts::created_at.asc(), contacts::id.asc()))
                    .select((
                        contacts::account_id,
                        contacts::phone,
                        contacts::id,
                        contacts::tz,
                        contacts::email,
                    ))
                    .load::<(
                        String,
                        Option<String>,
                        String,
                        Option<String>,
                        Option<String>,
                    )>(&mut **c)
                    .await?
                    .into_iter()
                    .map(|(account_id, phone, id, tz, email)| PhoneContact {
                        account_id,
                        phone,
                        id,
                        tz,
                        email,
                    })
                    .collect())
            }
        }
    }

    /// The active or paused enrollments of the (account, contact) `pairs`, in id order; locked
    /// on PostgreSQL (in that order, so concurrent groups cannot deadlock). SQLite answers the
    /// cross product of accounts and contacts; the caller keeps each signal's own.
    pub async fn reached(
        &mut self,
        pairs: &[(String, String)],
    ) -> Result<Vec<EnrollmentRow>, StoreError> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        match &mut self.conn {
            Conn::Postgres(c) => Ok(pg_batch::reached_enrollments(c, pairs).await?),
            Conn::Sqlite(c) => Ok(sqlite_reached(c, pairs).await?),
        }
    }

    /// Inserts the new signal rows of a group, and reads the enrollments the (account,
    /// contact) `wanted` pairs reach ([`Tx::reached`]) and the settings (`id`, `max_wait`, `quiet_hours`) of
    /// `accounts`: `(ids inserted, enrollments, settings)`. PostgreSQL gets the three
    /// statements pipelined, in one round trip.
    pub async fn insert_and_reach(
        &mut self,
        candidates: &[SignalRow],
        wanted: &[(String, String)],
        accounts: &[String],
    ) -> Result<
        (
            Vec<String>,
            Vec<EnrollmentRow>,
            Vec<super::accounts::AccountSettings>,
        ),
        StoreError,
    > {
        match &mut self.conn {
            Conn::Postgres(c) => {
                let c: &diesel_async::AsyncPgConnection = c;
                let (inserted, reached, settings) = futures_util::join!(
                    pg_batch::insert_signals(c, candidates),
                    pg_batch::reached_enrollments(c, wanted),
                    accounts::table
                        .filter(accounts::id.eq_any(accounts))
                        .select((accounts::id, accounts::max_wait, accounts::quiet_hours))
                        .load::<super::accounts::AccountSettings>(&mut &*c),
                );
                let ((inserted, reached), settings) =
                    pg_batch::both(pg_batch::both(inserted, reached), settings)?;
                Ok((inserted, reached, settings))
            }
            Conn::Sqlite(_) => {
                let inserted = self.insert_signals(candidates).await?;
                let rows = self.reached(wanted).await?;
                let ids: Vec<&str> = accounts.iter().map(String::as_str).collect();
                let settings = self.account_settings(&ids).await?;
                Ok((inserted, rows, settings))
            }
        }
    }

    /// Writes what a signal group did: the engine's rows ([`Tx::write_all`]), the delivery
    /// rows, and `routed_at` on `routed`. PostgreSQL sends the statements pipelined (one round
    /// trip, [`pg_batch::write_with`]); SQLite takes them one by one.
    pub async fn write_group(
        &mut self,
        writes: &Writes,
        deliveries: &[DeliveryRow],
        routed: &[&str],
        at: i64,
    ) -> Result<(), StoreError> {
        // Approval links are signed, and fetch attempts inserted, by `write_all` only: a group
        // whose signals led to one takes the plain path (pipelined, they were dropped).
        let plain = writes.approvals.is_empty() && writes.fetches.is_empty();
        let locked = std::mem::take(&mut self.locked);
        match &mut self.conn {
            Conn::Postgres(c) if plain => {
                let c: &diesel_async::AsyncPgConnection = c;
                let mut more = vec![pg_batch::insert_deliveries(c, deliveries)];
                if !routed.is_empty() {
                    more.push(
                        diesel::update(signals::table.filter(signals::id.eq_any(routed)))
                            .set(signals::routed_at.eq(Some(at)))
                            .execute(&mut &*c),
                    );
                }
                pg_batch::write_with(c, writes, &locked, more).await?;
            }
            _ => {
                self.write_all(writes).await?;
                // After the journey was numbered: its heads stay locked a little longer.
                self.insert_deliveries(deliveries).await?;
                self.mark_routed(routed, at).await?;
            }
        }
        Ok(())
    }
}

async fn sqlite_reached(
    c: &mut super::SqliteConn,
    pairs: &[(String, String)],
) -> diesel::QueryResult<Vec<EnrollmentRow>> {
    let accounts: Vec<&str> = pairs.iter().map(|(a, _)| a.as_str()).collect();
    let contacts: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
    enrollments::table
        .filter(enrollments::account_id.eq_any(accounts))
        .filter(enrollments::contact_id.eq_any(contacts))
        .filter(enrollments::status.eq_any(LIVE))
        .order(enrollments::id.asc())
        .select(EnrollmentRow::as_select())
        .load::<EnrollmentRow>(c)
        .await
}

impl SignalRow {
    /// Every contact it is addressed to.
    pub fn contact_ids(&self) -> Result<Vec<String>, StoreError> {
        serde_json::from_str(&self.contact_ids)
            .map_err(|e| StoreError::Corrupt(format!("signal {}: contact_ids: {e}", self.id)))
    }
}

/// Stores `row` unless its provider id is known, remembers `replay` (a webhook signature and
/// when it was seen, by the system clock) and lists the active or paused enrollments of its
/// contacts, all in one transaction. A replayed signature stores nothing.
pub async fn insert(
    db: &Db,
    row: &SignalRow,
    replay: Option<(&str, i64)>,
) -> Result<Inserted, StoreError> {
    crate::transaction!(db, |tx| insert_in(tx, row, replay).await)
}

/// Remembers a webhook signature seen at `at` (system clock) on its own; false when it was
/// seen before.
pub async fn remember_replay(
    db: &Db,
    account_id: &str,
    signature: &str,
    at: i64,
) -> Result<bool, StoreError> {
    crate::transaction!(db, |tx| async {
        let fresh = tx.remember_replay(account_id, signature, at).await?;
        if fresh {
            tx.forget_replays(at - REPLAY_MEMORY_MS).await?;
        }
        Ok(fresh)
    }
    .await)
}

async fn insert_in(
    tx: &mut Tx,
    row: &SignalRow,
    replay: Option<(&str, i64)>,
) -> Result<Inserted, StoreError> {
    if let Some((key, at)) = replay {
        if !tx.remember_replay(&row.account_id, key, at).await? {
            // The same signed request again. Refused, unless the signal it stored is not
            // delivered yet: its first answer was a retryable failure after the signal was
            // stored (a statement cancelled part way), and this is the provider's retry, which
            // may only finish what the first arrival was promised.
            let unfinished = tx
                .undelivered(&row.account_id, row.provider_id.as_deref())
                .await?;
            let Some(existing) = unfinished else {
                return Ok(Inserted::Replayed);
            };
            let reach = tx.reach(&existing, None).await?;
            return Ok(Inserted::Duplicate {
                row: existing,
                reach,
            });
        }
        tx.forget_replays(at - REPLAY_MEMORY_MS).await?;
    }
    let inserted = tx.insert_signals(std::slice::from_ref(row)).await?;
    if !inserted.is_empty() {
        let reach = tx.reach(row, None).await?;
        let mut row = row.clone();
        if reach.is_empty() && !row.is_opt_out() && !row.is_inbox() {
            tx.mark_routed(&[&row.id], row.created_at).await?;
            row.routed_at = Some(row.created_at);
        }
        return Ok(Inserted::New { row, reach });
    }
    let existing = tx
        .signal_by_provider(&row.account_id, row.provider_id.as_deref())
        .await?;
    let reach = if existing.routed_at.is_none() {
        tx.reach(&existing, None).await?
    } else {
        Vec::new()
    };
    Ok(Inserted::Duplicate {
        row: existing,
        reach,
    })
}

/// The active or paused enrollments a stored signal reaches, oldest first, but `except`.
pub async fn reach(
    db: &Db,
    row: &SignalRow,
    except: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    crate::transaction!(db, |tx| tx.reach(row, except).await)
}

/// Stored signals whose fan-out was cut short (a crash between chunks), oldest first, but task
/// outcomes: repeating `CompleteTask` finishes those, without the task's own enrollment.
pub async fn unrouted(db: &Db, limit: i64) -> Result<Vec<SignalRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => signals::table
        .filter(signals::routed_at.is_null())
        .filter(signals::source.ne("task"))
        .order((signals::created_at.asc(), signals::id.asc()))
        .limit(limit)
        .select(SignalRow::as_select())
        .load(c)
        .await)?)
}

/// The signals of `kind` addressed first to one of `contact_ids` since `since_ms`: what the
/// three-soft-bounces rule counts (docs/signals.md, "Inbox signals").
pub async fn recent_of_kind(
    db: &Db,
    account_id: &str,
    contact_ids: &[String],
    kind: &str,
    since_ms: i64,
) -> Result<Vec<SignalRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => signals::table
        .filter(signals::account_id.eq(account_id))
        .filter(signals::contact_id.eq_any(contact_ids))
        .filter(signals::kind.eq(kind))
        .filter(signals::created_at.gt(since_ms))
        .order((signals::created_at.asc(), signals::id.asc()))
        .limit(100)
        .select(SignalRow::as_select())
        .load(c)
        .await)?)
}

/// A stored signal by its provider id.
pub async fn by_provider_id(
    db: &Db,
    account_id: &str,
    provider_id: &str,
) -> Result<Option<SignalRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => signals::table
        .filter(signals::account_id.eq(account_id))
        .filter(signals::provider_id.eq(provider_id))
        .select(SignalRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Marks the fan-out of `signal_id` complete.
pub async fn mark_routed(db: &Db, signal_id: &str, at: i64) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::update(signals::table.find(signal_id))
        .set(signals::routed_at.eq(Some(at)))
        .execute(c)
        .await)?;
    Ok(())
}

/// Replaces a stored signal's payload (a moved calendar event updates its booking).
pub async fn set_payload(db: &Db, signal_id: &str, payload: &str) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::update(signals::table.find(signal_id))
        .set(signals::payload.eq(payload))
        .execute(c)
        .await)?;
    Ok(())
}

/// The deliveries of a signal, in the order they were written.
pub async fn deliveries(db: &Db, signal_id: &str) -> Result<Vec<DeliveryRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => signal_deliveries::table
        .filter(signal_deliveries::signal_id.eq(signal_id))
        .order((signal_deliveries::at.asc(), signal_deliveries::enrollment_id.asc()))
        .select(DeliveryRow::as_select())
        .load(c)
        .await)?)
}

/// The contacts with this id (at most one).
pub async fn contacts_by_id(
    db: &Db,
    account_id: &str,
    id: &str,
) -> Result<Vec<String>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => contacts::table
        .filter(contacts::account_id.eq(account_id))
        .filter(contacts::id.eq(id))
        .select(contacts::id)
        .load(c)
        .await)?)
}

/// The contacts with this email, in any case, oldest first.
pub async fn contacts_by_email(
    db: &Db,
    account_id: &str,
    email: &str,
) -> Result<Vec<String>, StoreError> {
    let conn = db.conn().await?;
    let email = email.trim().to_lowercase();
    Ok(with_conn!(conn, c => contacts::table
        .filter(contacts::account_id.eq(account_id))
        .filter(lower(contacts::email.assume_not_null()).eq(&email))
        .order((contacts::created_at.asc(), contacts::id.asc()))
        .select(contacts::id)
        .load(c)
        .await)?)
}

/// The contacts with this E.164 phone number, oldest first.
pub async fn contacts_by_phone(
    db: &Db,
    account_id: &str,
    e164: &str,
) -> Result<Vec<String>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => contacts::table
        .filter(contacts::account_id.eq(account_id))
        .filter(contacts::phone.eq(e164))
        .order((contacts::created_at.asc(), contacts::id.asc()))
        .select(contacts::id)
        .load(c)
        .await)?)
}

/// The contact of the email dispatch whose `Message-ID` is the first of `candidates` nudge
/// assigned, with that id; `None` when the mail is in no nudge thread.
pub async fn thread_contact(
    db: &Db,
    account_id: &str,
    candidates: &[String],
) -> Result<Option<(String, String)>, StoreError> {
    if candidates.is_empty() {
        return Ok(None);
    }
    // A Message-ID nudge assigned names its dispatch's key (`enrollment:run`), whose unique
    // index finds it; the stored Message-ID must match as well.
    let keys: Vec<String> = candidates
        .iter()
        .filter_map(|m| crate::engine::parse_message_id(m))
        .map(|(enrollment, run)| format!("{enrollment}:{run}"))
        .collect();
    if keys.is_empty() {
        return Ok(None);
    }
    let conn = db.conn().await?;
    let found: Vec<(String, String)> = with_conn!(conn, c => dispatches::table
        .inner_join(enrollments::table.on(enrollments::id.eq(dispatches::enrollment_id)))
        .filter(dispatches::idempotency_key.eq_any(&keys))
        .filter(dispatches::account_id.eq(account_id))
        .filter(dispatches::message_id.eq_any(candidates))
        .select((dispatches::message_id.assume_not_null(), enrollments::contact_id))
        .load(c)
        .await)?;
    Ok(candidates.iter().find_map(|id| {
        found
            .iter()
            .find(|(m, _)| m == id)
            .map(|(m, contact)| (contact.clone(), m.clone()))
    }))
}

/// The sender whose calendar (or email, when no calendar is set) is `address`, in any case.
pub async fn sender_by_calendar(
    db: &Db,
    account_id: &str,
    address: &str,
) -> Result<Option<String>, StoreError> {
    let conn = db.conn().await?;
    let address = address.trim().to_lowercase();
    let found: Vec<(String, Option<String>, Option<String>)> = with_conn!(conn, c => senders::table
        .filter(senders::account_id.eq(account_id))
        .select((senders::id, senders::calendar, senders::email))
        .load(c)
        .await)?;
    let matches = |a: &Option<String>| a.as_deref().is_some_and(|a| a.to_lowercase() == address);
    Ok(found
        .iter()
        .find(|(_, calendar, _)| matches(calendar))
        .or_else(|| {
            found
                .iter()
                .find(|(_, calendar, email)| calendar.is_none() && matches(email))
        })
        .map(|(id, _, _)| id.clone()))
}

impl SignalRow {
    /// An opt-out: its contacts are marked opted out of its channel before it is routed.
    pub fn is_opt_out(&self) -> bool {
        self.kind == crate::inbound::SignalKind::OPT_OUT
    }

    /// A signal that may carry a reading of its words: a reply, or the opt-out an unsubscribe
    /// in words became.
    pub fn may_carry_intent(&self) -> bool {
        self.kind == crate::inbound::SignalKind::REPLY || self.is_opt_out()
    }

    /// An inbox signal (docs/signals.md, "Inbox signals"): its payload carries its class under `inbox`.
    pub fn is_inbox(&self) -> bool {
        crate::inbound::SignalKind::INBOX.contains(&self.kind.as_str())
    }
}
