//! Accounts: the tenant every other row belongs to. A first start creates the default account
//! and its default sender, so `nudge serve` works with no setup.

use super::schema::{accounts, senders};
use super::{Db, StoreError};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

/// The id of the account a fresh database gets.
pub const DEFAULT_ACCOUNT_ID: &str = "default";
/// The id of the default account's first sender.
pub const DEFAULT_SENDER_ID: &str = "default";

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = accounts)]
pub struct Account {
    pub id: String,
    pub name: String,
    /// The plan limit on the longest wait (docs/flows.md, "Plan limits"), e.g. `7d`.
    pub max_wait: Option<String>,
    /// Signs webhooks (`X-Nudge-Signature`). Never returned through the API.
    pub webhook_secret: String,
    pub default_sender_id: Option<String>,
    pub created_at: i64,
    /// The hosts a `fetch` step may call (docs/flows.md, "fetch"), as the JSON list `AccountService` stored.
    pub fetch_allow: Option<String>,
    /// The quiet-hours policy (docs/timing.md, "Holiday calendars and quiet hours") as JSON, stored by `AccountService`.
    pub quiet_hours: Option<String>,
    /// The shortest call that counts as connected (a duration, `30s`); `None`: the default.
    pub call_connected_threshold: Option<String>,
    /// What a reply asking in words to stop does (`opt_out`, `event`); `None`: `opt_out`.
    pub reply_unsubscribe: Option<String>,
}

/// The settings `AccountService.UpdateAccount` changes; `None` in an outer option leaves the
/// column as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsChange {
    pub max_wait: Option<Option<String>>,
    pub fetch_allow: Option<Option<String>>,
    pub quiet_hours: Option<Option<String>>,
    pub default_sender_id: Option<String>,
    pub call_connected_threshold: Option<Option<String>>,
    pub reply_unsubscribe: Option<Option<String>>,
}

/// Writes the settings `change` names, in one statement per column inside one transaction, so
/// an update is all or nothing.
pub async fn update_settings(
    db: &Db,
    account_id: &str,
    change: &SettingsChange,
) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    let change = change.clone();
    let id = account_id.to_string();
    with_conn!(conn, c => c
        .transaction(async |c| {
            let row = accounts::table.find(&id);
            if let Some(v) = &change.max_wait {
                diesel::update(row).set(accounts::max_wait.eq(v)).execute(c).await?;
            }
            if let Some(v) = &change.fetch_allow {
                diesel::update(row).set(accounts::fetch_allow.eq(v)).execute(c).await?;
            }
            if let Some(v) = &change.quiet_hours {
                diesel::update(row).set(accounts::quiet_hours.eq(v)).execute(c).await?;
            }
            if let Some(v) = &change.default_sender_id {
                diesel::update(row).set(accounts::default_sender_id.eq(v)).execute(c).await?;
            }
            if let Some(v) = &change.call_connected_threshold {
                diesel::update(row)
                    .set(accounts::call_connected_threshold.eq(v))
                    .execute(c)
                    .await?;
            }
            if let Some(v) = &change.reply_unsubscribe {
                diesel::update(row).set(accounts::reply_unsubscribe.eq(v)).execute(c).await?;
            }
            Ok::<_, diesel::result::Error>(())
        })
        .await)?;
    Ok(())
}

/// Finds an account by id.
pub async fn find(db: &Db, id: &str) -> Result<Option<Account>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => accounts::table
        .find(id)
        .select(Account::as_select())
        .first(c)
        .await
        .optional())?)
}

/// Creates the default account (and a default sender in UTC) when the database has none.
/// Returns the account and whether this call created it. Safe to run from several replicas:
/// the inserts ignore a row that is already there.
pub async fn ensure_default(db: &Db, now_ms: i64) -> Result<(Account, bool), StoreError> {
    let created = create_with_sender(db, DEFAULT_ACCOUNT_ID, "Default", now_ms).await?;
    let account = find(db, DEFAULT_ACCOUNT_ID)
        .await?
        .ok_or_else(|| StoreError::Corrupt("the default account vanished".into()))?;
    Ok((account, created))
}

/// A new account's row: its own webhook secret, no settings.
fn new_account(id: &str, name: &str, default_sender_id: Option<&str>, now_ms: i64) -> Account {
    Account {
        id: id.to_string(),
        name: name.to_string(),
        max_wait: None,
        webhook_secret: random_secret(),
        default_sender_id: default_sender_id.map(str::to_string),
        created_at: now_ms,
        fetch_allow: None,
        quiet_hours: None,
        call_connected_threshold: None,
        reply_unsubscribe: None,
    }
}

/// Makes `sender_id` the account's default sender.
pub async fn set_default_sender(
    db: &Db,
    account_id: &str,
    sender_id: &str,
) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::update(accounts::table.find(account_id))
        .set(accounts::default_sender_id.eq(sender_id))
        .execute(c)
        .await)?;
    Ok(())
}

/// 32 random bytes, hex: the webhook signing secret.
pub(crate) fn random_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Sets (or with `None` removes) the account's plan limit on the longest wait (docs/flows.md, "Plan limits"), as
/// text such as `7d`; the caller checks it parses.
pub async fn set_max_wait(
    db: &Db,
    account_id: &str,
    max_wait: Option<&str>,
) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::update(accounts::table.find(account_id))
        .set(accounts::max_wait.eq(max_wait))
        .execute(c)
        .await)?;
    Ok(())
}

impl super::Tx {
    /// `(id, max_wait)` of these accounts: the settings the engine steps with.
    pub async fn account_settings(
        &mut self,
        account_ids: &[&str],
    ) -> Result<Vec<AccountSettings>, StoreError> {
        Ok(on_conn!(&mut self.conn, c => accounts::table
            .filter(accounts::id.eq_any(account_ids))
            .select((accounts::id, accounts::max_wait, accounts::quiet_hours))
            .load(c)
            .await)?)
    }
}

/// What execution reads of an account (docs/flows.md, "Plan limits"; docs/timing.md, "Holiday calendars and quiet hours"): its id, `max_wait` and `quiet_hours`
/// as stored.
pub type AccountSettings = (String, Option<String>, Option<String>);

/// Creates account `id` with its own webhook secret and a default sender (`default`, UTC), in
/// one transaction; `false` when the id is taken (nothing changed). Safe to run from several
/// replicas at once: the insert ignores a row that is already there.
pub async fn create_with_sender(
    db: &Db,
    id: &str,
    name: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let account = new_account(id, name, Some(DEFAULT_SENDER_ID), now_ms);
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let inserted = diesel::insert_into(accounts::table)
                .values(&account)
                .on_conflict(accounts::id)
                .do_nothing()
                .execute(c)
                .await?;
            if inserted == 1 {
                diesel::insert_into(senders::table)
                    .values((
                        senders::account_id.eq(&account.id),
                        senders::id.eq(DEFAULT_SENDER_ID),
                        senders::tz.eq("UTC"),
                        senders::created_at.eq(now_ms),
                        senders::updated_at.eq(now_ms),
                    ))
                    .on_conflict((senders::account_id, senders::id))
                    .do_nothing()
                    .execute(c)
                    .await?;
            }
            Ok::<_, diesel::result::Error>(inserted == 1)
        })
        .await)?)
}

/// Up to `limit` accounts with an id after `after`, by id.
pub async fn list(db: &Db, after: &str, limit: i64) -> Result<Vec<Account>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => accounts::table
        .filter(accounts::id.gt(after))
        .order(accounts::id.asc())
        .limit(limit)
        .select(Account::as_select())
        .load(c)
        .await)?)
}

/// Creates an account with no sender (tests and tools that need a second tenant); an existing
/// id is left as it is.
pub async fn create(db: &Db, id: &str, name: &str, now_ms: i64) -> Result<(), StoreError> {
    let account = new_account(id, name, None, now_ms);
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::insert_into(accounts::table)
        .values(&account)
        .on_conflict(accounts::id)
        .do_nothing()
        .execute(c)
        .await)?;
    Ok(())
}
