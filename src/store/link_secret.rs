//! The server's link secret: the HMAC key of signed links ([`crate::inbound::link`]). One row,
//! made at first start ([`ensure`]); [`rotate`] replaces it, and every link signed before stops
//! working. Read where it is used, not cached per process: a rotation by `nudge link-secret
//! rotate` takes effect at once on every replica, and links are opened by people, rarely.

use super::schema::link_secret;
use super::{Db, StoreError, Tx};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Creates the secret when there is none; several replicas starting at once keep one of them.
pub async fn ensure(db: &Db, now_ms: i64) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::insert_into(link_secret::table)
        .values((
            link_secret::id.eq(1),
            link_secret::secret.eq(super::accounts::random_secret()),
            link_secret::created_at.eq(now_ms),
        ))
        .on_conflict(link_secret::id)
        .do_nothing()
        .execute(c)
        .await)?;
    Ok(())
}

/// The current secret's bytes.
pub async fn load(db: &Db) -> Result<Vec<u8>, StoreError> {
    let conn = db.conn().await?;
    let secret = with_conn!(conn, c => link_secret::table
        .find(1)
        .select(link_secret::secret)
        .first::<String>(c)
        .await
        .optional())?;
    into_key(secret)
}

/// Replaces the secret with a new random one: every link signed before is refused from now on.
pub async fn rotate(db: &Db, now_ms: i64) -> Result<(), StoreError> {
    let secret = super::accounts::random_secret();
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::insert_into(link_secret::table)
        .values((
            link_secret::id.eq(1),
            link_secret::secret.eq(&secret),
            link_secret::created_at.eq(now_ms),
        ))
        .on_conflict(link_secret::id)
        .do_update()
        .set((
            link_secret::secret.eq(&secret),
            link_secret::created_at.eq(now_ms),
        ))
        .execute(c)
        .await)?;
    Ok(())
}

impl Tx {
    /// The current secret's bytes, read inside this transaction (to sign links in the same
    /// transaction that writes the dispatch carrying them).
    pub async fn link_secret(&mut self) -> Result<Vec<u8>, StoreError> {
        let secret = on_conn!(&mut self.conn, c => link_secret::table
            .find(1)
            .select(link_secret::secret)
            .first::<String>(c)
            .await
            .optional())?;
        into_key(secret)
    }
}

fn into_key(secret: Option<String>) -> Result<Vec<u8>, StoreError> {
    secret.map(String::into_bytes).ok_or_else(|| {
        StoreError::Corrupt(
            "the link secret is missing: start `nudge serve` once to create it".into(),
        )
    })
}
