//! The lookups that address an inbound webhook before it becomes a signal: the account's keys
//! to check its signature, the contact of an email thread nudge started, the sender whose
//! calendar an event is on, the contacts of an attendee's address.

use crate::runtime::Core;
use crate::service::ServiceError;
use crate::store;

/// The account's webhook secret (for `X-Nudge-Signature`) and its providers' secrets, or
/// `None` when there is no such account.
pub async fn webhook_keys(
    core: &Core,
    account_id: &str,
) -> Result<Option<store::provider_secrets::Keys>, ServiceError> {
    Ok(store::provider_secrets::keys(&core.db, account_id).await?)
}

/// `(contact, the Message-ID it matched)` for the first of `candidates` (a reply's
/// `In-Reply-To` and `References` ids) that an email dispatch of nudge carried.
pub async fn thread_contact(
    core: &Core,
    account_id: &str,
    candidates: &[String],
) -> Result<Option<(String, String)>, ServiceError> {
    Ok(store::signals::thread_contact(&core.db, account_id, candidates).await?)
}

/// The sender whose calendar (or email, when it has no calendar) is `address`.
pub async fn sender_by_calendar(
    core: &Core,
    account_id: &str,
    address: &str,
) -> Result<Option<String>, ServiceError> {
    Ok(store::signals::sender_by_calendar(&core.db, account_id, address).await?)
}

/// The contacts with this email, in any case, oldest first.
pub async fn contacts_by_email(
    core: &Core,
    account_id: &str,
    email: &str,
) -> Result<Vec<String>, ServiceError> {
    Ok(store::signals::contacts_by_email(&core.db, account_id, email).await?)
}
