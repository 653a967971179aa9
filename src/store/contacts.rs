//! Contacts, keyed by (account, the caller's id).

use super::schema::contacts;
use super::{Conn, Db, StoreError, Tx};
use crate::engine::ContactView;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = contacts)]
pub struct ContactRow {
    pub account_id: String,
    pub id: String,
    pub email: Option<String>,
    /// E.164.
    pub phone: Option<String>,
    pub tz: Option<String>,
    /// ISO 3166-1 alpha-2, for the `contact` holiday calendar (docs/timing.md, "Holiday calendars and quiet hours").
    pub country: Option<String>,
    /// A JSON object.
    pub attributes: String,
    /// A sorted JSON array of channel names.
    pub opted_out: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl ContactRow {
    /// The contact as the engine sees it (an enrollment's [`ContactView`]).
    pub fn view(&self) -> ContactView {
        ContactView {
            id: self.id.clone(),
            email: self.email.clone(),
            phone: self.phone.clone(),
            tz: self.tz.clone(),
            country: self.country.clone(),
            opted_out: serde_json::from_str(&self.opted_out).unwrap_or_default(),
            attributes: serde_json::from_str(&self.attributes).unwrap_or_default(),
        }
    }

    /// True when `other` has the same email, phone, zone and attributes: what an upsert
    /// replaces. Attributes compare as JSON, not as text.
    pub fn same_fields(&self, other: &ContactRow) -> bool {
        let attributes =
            |r: &ContactRow| serde_json::from_str::<serde_json::Value>(&r.attributes).ok();
        self.email == other.email
            && self.phone == other.phone
            && self.tz == other.tz
            && self.country == other.country
            && attributes(self) == attributes(other)
    }
}

impl Tx {
    /// Inserts the contact unless the account has one with its id; true when it did.
    pub async fn insert_contact(&mut self, row: &ContactRow) -> Result<bool, StoreError> {
        Ok(
            on_conn!(&mut self.conn, c => diesel::insert_into(contacts::table)
            .values(row)
            .on_conflict((contacts::account_id, contacts::id))
            .do_nothing()
            .execute(c)
            .await)?
                == 1,
        )
    }

    /// The contact, locked against concurrent writers until this transaction ends
    /// (PostgreSQL `FOR UPDATE`; SQLite has one writer).
    pub async fn lock_contact(
        &mut self,
        account_id: &str,
        id: &str,
    ) -> Result<Option<ContactRow>, StoreError> {
        macro_rules! find {
            () => {
                contacts::table
                    .find((account_id, id))
                    .select(ContactRow::as_select())
            };
        }
        Ok(match &mut self.conn {
            Conn::Postgres(c) => find!().for_update().first(&mut **c).await.optional()?,
            Conn::Sqlite(c) => find!().first(&mut **c).await.optional()?,
        })
    }

    /// Replaces the contact's opt-out list (a sorted JSON array of channel names).
    pub async fn set_opted_out(
        &mut self,
        account_id: &str,
        id: &str,
        json: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::update(contacts::table.find((account_id, id)))
            .set((contacts::opted_out.eq(json), contacts::updated_at.eq(now_ms)))
            .execute(c)
            .await)?;
        Ok(())
    }

    /// Replaces the contact's email, phone, zone and attributes (keeping `created_at` and the
    /// opt-outs).
    pub async fn update_contact(&mut self, row: &ContactRow) -> Result<(), StoreError> {
        on_conn!(&mut self.conn, c => diesel::update(contacts::table.find((&row.account_id, &row.id)))
            .set((
                contacts::email.eq(&row.email),
                contacts::phone.eq(&row.phone),
                contacts::tz.eq(&row.tz),
                contacts::country.eq(&row.country),
                contacts::attributes.eq(&row.attributes),
                contacts::updated_at.eq(row.updated_at),
            ))
            .execute(c)
            .await)?;
        Ok(())
    }
}

pub async fn get(db: &Db, account_id: &str, id: &str) -> Result<Option<ContactRow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => contacts::table
        .find((account_id, id))
        .select(ContactRow::as_select())
        .first(c)
        .await
        .optional())?)
}

/// The account's contacts with these ids (those that exist), read 1,000 at a time.
pub async fn get_many(
    db: &Db,
    account_id: &str,
    ids: &[String],
) -> Result<Vec<ContactRow>, StoreError> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids.dedup();
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(1_000) {
        let conn = db.conn().await?;
        found.extend(match conn {
            Conn::Postgres(mut c) => {
                super::pg_batch::contacts_by_id(&mut c, account_id, chunk).await?
            }
            Conn::Sqlite(mut c) => {
                contacts::table
                    .filter(contacts::account_id.eq(account_id))
                    .filter(contacts::id.eq_any(chunk))
                    .select(ContactRow::as_select())
                    .load::<ContactRow>(&mut *c)
                    .await?
            }
        });
    }
    Ok(found)
}
