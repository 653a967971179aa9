//! The secrets providers' webhooks are checked with, one row per account and
//! [`Provider`]. Written by `nudge provider-secret set` and `AccountService.SetProviderSecret`;
//! read back only by the webhooks, never shown.

use super::schema::{accounts, provider_secrets};
use super::{Db, StoreError};
use crate::inbound::providers::Provider;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

/// An account's webhook secret (`X-Nudge-Signature`) and its providers' secrets: what the
/// webhooks check requests with, read in one go and cached for a second.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// The account's own webhook secret.
    pub webhook_secret: String,
    /// Each provider's secret the account set.
    pub providers: Vec<(Provider, String)>,
}

impl Keys {
    /// The secret set for `provider`, if any.
    pub fn of(&self, provider: Provider) -> Option<&str> {
        self.providers
            .iter()
            .find(|(p, _)| *p == provider)
            .map(|(_, s)| s.as_str())
    }
}

/// The account's keys, or `None` when there is no such account.
pub async fn keys(db: &Db, account_id: &str) -> Result<Option<Keys>, StoreError> {
    let conn = db.conn().await?;
    let id = account_id.to_string();
    let found: Option<(String, Vec<(String, String)>)> = with_conn!(conn, c => c
        .transaction(async |c| {
            let secret: Option<String> = accounts::table
                .find(&id)
                .select(accounts::webhook_secret)
                .first(c)
                .await
                .optional()?;
            let Some(secret) = secret else {
                return Ok::<_, diesel::result::Error>(None);
            };
            let rows = provider_secrets::table
                .filter(provider_secrets::account_id.eq(&id))
                .select((provider_secrets::provider, provider_secrets::secret))
                .load(c)
                .await?;
            Ok(Some((secret, rows)))
        })
        .await)?;
    let Some((webhook_secret, rows)) = found else {
        return Ok(None);
    };
    let mut providers = Vec::with_capacity(rows.len());
    for (name, secret) in rows {
        let provider = Provider::parse(&name).map_err(|_| {
            StoreError::Corrupt(format!(
                "account {account_id}: a provider secret for `{name}`, which is no provider"
            ))
        })?;
        providers.push((provider, secret));
    }
    Ok(Some(Keys {
        webhook_secret,
        providers,
    }))
}

/// Sets (with `None`: removes) the account's secret for `provider`, already checked
/// ([`Provider::check_secret`]). Returns whether the account exists.
pub async fn set(
    db: &Db,
    account_id: &str,
    provider: Provider,
    secret: Option<&str>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let conn = db.conn().await?;
    let (id, secret) = (account_id.to_string(), secret.map(str::to_string));
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            let exists: i64 = accounts::table
                .filter(accounts::id.eq(&id))
                .count()
                .get_result(c)
                .await?;
            if exists == 0 {
                return Ok::<_, diesel::result::Error>(false);
            }
            let row = provider_secrets::table
                .filter(provider_secrets::account_id.eq(&id))
                .filter(provider_secrets::provider.eq(provider.as_str()));
            match &secret {
                None => {
                    diesel::delete(row).execute(c).await?;
                }
                Some(secret) => {
                    diesel::insert_into(provider_secrets::table)
                        .values((
                            provider_secrets::account_id.eq(&id),
                            provider_secrets::provider.eq(provider.as_str()),
                            provider_secrets::secret.eq(secret),
                            provider_secrets::updated_at.eq(now_ms),
                        ))
                        .on_conflict((provider_secrets::account_id, provider_secrets::provider))
                        .do_update()
                        .set((
                            provider_secrets::secret.eq(secret),
                            provider_secrets::updated_at.eq(now_ms),
                        ))
                        .execute(c)
                        .await?;
                }
            }
            Ok(true)
        })
        .await)?)
}

/// Which providers the account set a secret for, and when (epoch ms), in [`Provider::ALL`]'s
/// order: what `GetAccount` shows instead of the secrets.
pub async fn list(db: &Db, account_id: &str) -> Result<Vec<(Provider, i64)>, StoreError> {
    let conn = db.conn().await?;
    let rows: Vec<(String, i64)> = with_conn!(conn, c => provider_secrets::table
        .filter(provider_secrets::account_id.eq(account_id))
        .select((provider_secrets::provider, provider_secrets::updated_at))
        .load(c)
        .await)?;
    let mut out: Vec<(Provider, i64)> = rows
        .into_iter()
        .filter_map(|(name, at)| Provider::parse(&name).ok().map(|p| (p, at)))
        .collect();
    out.sort();
    Ok(out)
}
