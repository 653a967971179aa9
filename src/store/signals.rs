//! Stored signals (SPEC §5.2): every signal once, deduplicated by its provider id; which
//! enrollments it reached and what it did there (`signal_deliveries`); webhook signatures
//! already used (`webhook_replays`); and the lookups that address a signal (a contact by id,
//! email or phone; an email thread by the `Message-ID` nudge assigned).

use super::schema::{
    accounts, contacts, dispatches, enrollments, senders, signal_deliveries, signals,
    webhook_replays,
};
use super::{Db, StoreError};
use crate::with_conn;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

diesel::define_sql_function! {
    /// SQL `lower()`: emails are matched without regard to case.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// How long a used webhook signature is remembered: twice the signature tolerance, so a
/// signature is refused as a replay for as long as its timestamp could still be accepted.
pub const REPLAY_MEMORY_MS: i64 = 2 * crate::signals::signing::TOLERANCE_SECS * 1000;

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

/// The active or paused enrollments of a stored signal's contacts, oldest first, but the one
/// with id `$except` (`""`: none, ids are never empty); inside a function returning
/// `Result<_, diesel::result::Error>`.
macro_rules! reach {
    ($c:expr, $row:expr, $except:expr) => {{
        let row: &SignalRow = $row;
        let contacts: Vec<String> = serde_json::from_str(&row.contact_ids)
            .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?;
        enrollments::table
            .filter(enrollments::account_id.eq(&row.account_id))
            .filter(enrollments::contact_id.eq_any(contacts))
            .filter(enrollments::status.eq_any(["active", "paused"]))
            .filter(enrollments::id.ne($except))
            .order((enrollments::created_at.asc(), enrollments::id.asc()))
            .select(enrollments::id)
            .load::<String>($c)
            .await?
    }};
}

/// Stores `row` unless its provider id is known, remembers `replay_key` (a webhook signature)
/// and lists the active or paused enrollments of its contacts, all in one transaction. A
/// replayed signature stores nothing.
pub async fn insert(
    db: &Db,
    row: &SignalRow,
    replay_key: Option<&str>,
) -> Result<Inserted, StoreError> {
    let conn = db.conn().await?;
    let forget_before = row.created_at - REPLAY_MEMORY_MS;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            if let Some(key) = replay_key {
                let fresh = diesel::insert_into(webhook_replays::table)
                    .values((
                        webhook_replays::account_id.eq(&row.account_id),
                        webhook_replays::signature.eq(key),
                        webhook_replays::seen_at.eq(row.created_at),
                    ))
                    .on_conflict((webhook_replays::account_id, webhook_replays::signature))
                    .do_nothing()
                    .execute(c)
                    .await?;
                if fresh == 0 {
                    return Ok(Inserted::Replayed);
                }
                // Old signatures can no longer pass the timestamp check: forget them.
                diesel::delete(webhook_replays::table.filter(webhook_replays::seen_at.lt(forget_before)))
                    .execute(c)
                    .await?;
            }
            let inserted = diesel::insert_into(signals::table)
                .values(row)
                .on_conflict_do_nothing()
                .execute(c)
                .await?;
            if inserted == 1 {
                let reach = reach!(c, row, "");
                let mut row = row.clone();
                if reach.is_empty() && row.kind != "opt_out" {
                    diesel::update(signals::table.find(&row.id))
                        .set(signals::routed_at.eq(Some(row.created_at)))
                        .execute(c)
                        .await?;
                    row.routed_at = Some(row.created_at);
                }
                return Ok(Inserted::New { row, reach });
            }
            let existing: SignalRow = signals::table
                .filter(signals::account_id.eq(&row.account_id))
                .filter(signals::provider_id.eq(&row.provider_id))
                .select(SignalRow::as_select())
                .first(c)
                .await?;
            let reach = if existing.routed_at.is_none() {
                reach!(c, &existing, "")
            } else {
                Vec::new()
            };
            Ok::<_, diesel::result::Error>(Inserted::Duplicate { row: existing, reach })
        })
        .await)?)
}

/// The active or paused enrollments a stored signal reaches, oldest first, but `except` (a
/// task outcome's own enrollment, which took its branch already).
pub async fn reach(db: &Db, row: &SignalRow, except: &str) -> Result<Vec<String>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => async {
        Ok::<_, diesel::result::Error>(reach!(c, row, except))
    }
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
    let conn = db.conn().await?;
    let found: Vec<(String, String)> = with_conn!(conn, c => dispatches::table
        .inner_join(enrollments::table.on(enrollments::id.eq(dispatches::enrollment_id)))
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

/// The account's webhook secret and Twilio auth token.
pub async fn webhook_keys(
    db: &Db,
    account_id: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => accounts::table
        .find(account_id)
        .select((accounts::webhook_secret, accounts::twilio_auth_token))
        .first(c)
        .await
        .optional())?)
}

/// Sets (or with `None` clears) the account's Twilio auth token. Returns whether the account
/// exists.
pub async fn set_twilio_auth_token(
    db: &Db,
    account_id: &str,
    token: Option<&str>,
) -> Result<bool, StoreError> {
    let conn = db.conn().await?;
    let n = with_conn!(conn, c => diesel::update(accounts::table.find(account_id))
        .set(accounts::twilio_auth_token.eq(token))
        .execute(c)
        .await)?;
    Ok(n == 1)
}
