//! One-click unsubscribe (RFC 8058; docs/signals.md, "One-click unsubscribe"): the link every
//! email dispatch carries, and what following it does.
//!
//! The token is a [`crate::inbound::link`] token of purpose `Unsubscribe` whose subject is the
//! contact, signed with the server's link secret (read each time, so a rotation takes effect
//! on every replica at once) and without expiry: an unsubscribe link in an old email must keep
//! working. It is computed when a dispatch is read, never stored, and no journey entry or log
//! line holds it.
//!
//! `POST` with `List-Unsubscribe=One-Click` opts the contact out of email through the signal
//! path (an `opt_out` signal, provider id `unsubscribe:<contact>`), so every enrollment of the
//! contact exits and the journey shows it; a second POST is that signal's duplicate: the same
//! answer, nothing changed.

use super::dispatches::Dispatch;
use super::signals::{self, Arrival, Receipt, Received, Source};
use super::ServiceError;
use crate::inbound::link::{self, LinkClaims, LinkError, LinkPurpose};
use crate::inbound::SignalKind;
use crate::runtime::Core;
use crate::store;
use chrono::{DateTime, Utc};

/// The `List-Unsubscribe-Post` value an email carries (RFC 8058 §3.1), and the body a
/// one-click POST sends.
pub const ONE_CLICK: &str = "List-Unsubscribe=One-Click";

/// The token of the unsubscribe link of `contact` in `account`.
pub fn token(secret: &[u8], account: &str, contact: &str) -> String {
    link::sign(
        secret,
        &LinkClaims {
            purpose: LinkPurpose::Unsubscribe,
            account: account.to_string(),
            subject: contact.to_string(),
            run: None,
            expires_at_ms: None,
        },
    )
}

/// Fills `list_unsubscribe` (`<{base}/unsubscribe/{token}>`) and `list_unsubscribe_post` on
/// every email dispatch of `rows` (of `account`).
pub async fn attach(
    core: &Core,
    account: &str,
    base: &str,
    rows: &mut [Dispatch],
) -> Result<(), ServiceError> {
    let ids: Vec<String> = rows
        .iter()
        .filter(|d| d.channel == "email")
        .map(|d| d.enrollment_id.to_string())
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let secret = store::link_secret::load(&core.db).await?;
    let contacts = store::enrollments::contacts_of(&core.db, account, &ids).await?;
    let base = base.trim_end_matches('/');
    for d in rows.iter_mut().filter(|d| d.channel == "email") {
        let enrollment = d.enrollment_id.to_string();
        if let Some((_, contact)) = contacts.iter().find(|(e, _)| *e == enrollment) {
            d.list_unsubscribe = Some(format!(
                "<{base}/unsubscribe/{}>",
                token(&secret, account, contact)
            ));
            d.list_unsubscribe_post = Some(ONE_CLICK.to_string());
        }
    }
    Ok(())
}

/// Why a link was refused: the page's status says which.
#[derive(Debug)]
pub enum Refused {
    /// Not a token of ours (404).
    Forged,
    /// Expired (410); unsubscribe tokens carry no expiry, but a token may.
    Expired,
    /// The contact no longer exists (404 too: nothing to unsubscribe).
    NoContact,
    /// The store failed.
    Error(ServiceError),
}

impl From<ServiceError> for Refused {
    fn from(e: ServiceError) -> Self {
        Refused::Error(e)
    }
}

impl From<store::StoreError> for Refused {
    fn from(e: store::StoreError) -> Self {
        Refused::Error(e.into())
    }
}

/// Whom a link unsubscribes, as the page shows it.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The account.
    pub account: String,
    /// The contact's id.
    pub contact: String,
    /// The contact's email, when it has one.
    pub email: Option<String>,
    /// Already opted out of email.
    pub opted_out: bool,
}

/// Checks `token` and finds its contact; changes nothing (what `GET` shows).
pub async fn peek(core: &Core, token: &str, now: DateTime<Utc>) -> Result<Subject, Refused> {
    let secret = store::link_secret::load(&core.db).await?;
    let claims = match link::verify(
        &secret,
        token,
        LinkPurpose::Unsubscribe,
        crate::clock::to_millis(now),
    ) {
        Ok(c) => c,
        Err(LinkError::Forged) => return Err(Refused::Forged),
        Err(LinkError::Expired { .. }) => return Err(Refused::Expired),
    };
    let contact = store::contacts::get(&core.db, &claims.account, &claims.subject)
        .await?
        .ok_or(Refused::NoContact)?;
    let opted_out = contact.opted_out.contains("\"email\"");
    Ok(Subject {
        account: claims.account,
        contact: claims.subject,
        email: contact.email,
        opted_out,
    })
}

/// Opts the link's contact out of email and exits its enrollments; idempotent (a second call
/// answers the first receipt, `duplicate`).
pub async fn unsubscribe(
    router: &signals::Router,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(Subject, Receipt), Refused> {
    let subject = peek(router.core(), token, now).await?;
    let arrival = Arrival {
        contacts: vec![subject.contact.clone()],
        kind: SignalKind::OptOut {
            channel: "email".into(),
        },
        source: Source::Email,
        provider_id: Some(format!("unsubscribe:{}", subject.contact)),
        payload: serde_json::json!({"via": "one_click_unsubscribe"}),
        replay: None,
        intent: None,
    };
    match signals::receive(router, &subject.account, arrival, now).await? {
        Received::Done(receipt) => Ok((subject, receipt)),
        Received::Replayed => Err(Refused::Error(ServiceError::Internal(
            "a replay refusal without a replay key".into(),
        ))),
    }
}
