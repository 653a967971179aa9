//! API tokens, stored as SHA-256 hashes (the token itself is shown once and never stored).

use super::schema::api_tokens;
use super::{Db, StoreError};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_tokens)]
pub struct ApiToken {
    pub id: String,
    pub account_id: String,
    /// Hex SHA-256 of the token.
    pub hash: String,
    /// `full` or `enrollment:<id>` (see `crate::auth::Scope`).
    pub scope: String,
    pub created_at: i64,
}

pub async fn insert(db: &Db, token: &ApiToken) -> Result<(), StoreError> {
    let conn = db.conn().await?;
    with_conn!(conn, c => diesel::insert_into(api_tokens::table)
        .values(token)
        .execute(c)
        .await)?;
    Ok(())
}

pub async fn find_by_hash(db: &Db, hash: &str) -> Result<Option<ApiToken>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => api_tokens::table
        .filter(api_tokens::hash.eq(hash))
        .select(ApiToken::as_select())
        .first(c)
        .await
        .optional())?)
}

/// How many tokens the account has (a first start issues one only when there are none).
pub async fn count(db: &Db, account_id: &str) -> Result<i64, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => api_tokens::table
        .filter(api_tokens::account_id.eq(account_id))
        .count()
        .get_result(c)
        .await)?)
}
