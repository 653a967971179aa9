//! A human reply's words, read where the contact is known: the classifier
//! ([`crate::inbound::intent`]) is pure, and this is the one place every path (the mail
//! webhooks, Twilio SMS, `ReportSignal`, a completed LinkedIn task) gives it what it reads the
//! words against — the arrival time in the contact's zone (for `resume_on`) and the contact's
//! own address (never a referral) — and settles what an unsubscribe in words does.

use super::super::accounts;
use super::super::ServiceError;
use crate::inbound::intent::ReplyUnsubscribe;
use crate::inbound::intent::{self, Intent, Reply, ReplyIntent};
use crate::inbound::SignalKind;
use crate::runtime::Core;
use crate::store;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// The words of a reply as an edge received them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Words {
    /// The body as received (quoted history and signature are cut by the classifier).
    pub text: String,
    /// An email's subject.
    pub subject: Option<String>,
    /// The replier's own address (an email's `From`): never a referral.
    pub from: Option<String>,
}

impl Words {
    /// Just a text (an SMS body, a LinkedIn message, a reported reply).
    pub fn text(text: impl Into<String>) -> Words {
        Words {
            text: text.into(),
            ..Words::default()
        }
    }

    /// True when there is nothing to read: such a reply raises no intent.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.subject.as_deref().is_none_or(|s| s.trim().is_empty())
    }
}

/// What `contact_id`'s reply says, read at `now` in the contact's zone; `None` when it has no
/// words.
pub async fn read(
    core: &Core,
    account_id: &str,
    contact_id: &str,
    words: &Words,
    now: DateTime<Utc>,
) -> Result<Option<ReplyIntent>, ServiceError> {
    if words.is_empty() {
        return Ok(None);
    }
    let contact = store::contacts::get(&core.db, account_id, contact_id).await?;
    let tz = match contact
        .as_ref()
        .and_then(|c| intent::calendar_zone(c.tz.as_deref(), c.phone.as_deref()))
    {
        Some(tz) => Some(tz),
        None => sender_zone(core, account_id).await?,
    };
    let email = contact.as_ref().and_then(|c| c.email.as_deref());
    Ok(Some(classify(words, now, tz, email)))
}

/// What a reply says that needs nothing more than its contact's row to read and settle: the
/// contact's zone is known (else the account's default sender's is read) and the words are no
/// unsubscribe (whose kind the account's policy settles). `None` when they need the store:
/// [`read_and_settle`] reads them then. The signal group reads its replies' words with this,
/// where the contacts it finds by phone number come with these columns, so a reply by SMS
/// costs no statement of its own.
pub fn read_known(
    contact: &store::signals::PhoneContact,
    words: &Words,
    now: DateTime<Utc>,
) -> Option<ReplyIntent> {
    let tz = intent::calendar_zone(contact.tz.as_deref(), contact.phone.as_deref())?;
    let reading = classify(words, now, Some(tz), contact.email.as_deref());
    // An unsubscribe settles by the account's policy; every other reading leaves a reply a reply.
    (reading.intent != Intent::Unsubscribe).then_some(reading)
}

fn classify(
    words: &Words,
    now: DateTime<Utc>,
    tz: Option<Tz>,
    contact_email: Option<&str>,
) -> ReplyIntent {
    let reply = Reply {
        text: &words.text,
        subject: words.subject.as_deref(),
        received_at: Some(now),
        tz,
        from: words.from.as_deref(),
        contact_email,
    };
    intent::classify(&reply)
}

/// An intent someone named (a rep, the CRM): it skips the classifier, so it carries no
/// evidence and full confidence.
pub fn named(intent: Intent) -> ReplyIntent {
    ReplyIntent {
        intent,
        confidence: 1.0,
        language: "und".into(),
        evidence: Vec::new(),
        resume_on: None,
        referral: None,
    }
}

/// Reads `words` and settles `kind` by the account's policy: the kind to store and the
/// reading to store with it.
pub async fn read_and_settle(
    core: &Core,
    account_id: &str,
    contact_id: &str,
    kind: SignalKind,
    words: &Words,
    now: DateTime<Utc>,
) -> Result<(SignalKind, Option<ReplyIntent>), ServiceError> {
    if !matches!(kind, SignalKind::Reply { .. }) {
        return Ok((kind, None));
    }
    let reading = read(core, account_id, contact_id, words, now).await?;
    settled(core, account_id, kind, reading).await
}

/// Settles `kind` with a reading already made (or named).
pub async fn settled(
    core: &Core,
    account_id: &str,
    kind: SignalKind,
    reading: Option<ReplyIntent>,
) -> Result<(SignalKind, Option<ReplyIntent>), ServiceError> {
    let policy = match &reading {
        Some(r) if r.intent == Intent::Unsubscribe => {
            accounts::reply_unsubscribe(core, account_id).await?
        }
        _ => ReplyUnsubscribe::default(),
    };
    Ok((kind.settle(reading.as_ref(), policy), reading))
}

/// The account's default sender's zone: whose calendar a date is read in when the contact's
/// zone is unknown.
async fn sender_zone(core: &Core, account_id: &str) -> Result<Option<Tz>, ServiceError> {
    let Some(account) = store::accounts::find(&core.db, account_id).await? else {
        return Ok(None);
    };
    let Some(sender_id) = account.default_sender_id else {
        return Ok(None);
    };
    Ok(store::senders::get(&core.db, account_id, &sender_id)
        .await?
        .and_then(|s| intent::calendar_zone(Some(&s.tz), None)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(intent: Intent) -> ReplyIntent {
        named(intent)
    }

    #[test]
    fn an_unsubscribe_in_words_is_an_opt_out_of_its_channel_unless_the_flow_decides() {
        let reply = |c: &str| SignalKind::Reply { channel: c.into() };
        let cases = [
            (
                reply("email"),
                Some(Intent::Unsubscribe),
                ReplyUnsubscribe::OptOut,
                SignalKind::OptOut {
                    channel: "email".into(),
                },
            ),
            (
                reply("sms"),
                Some(Intent::Unsubscribe),
                ReplyUnsubscribe::OptOut,
                SignalKind::OptOut {
                    channel: "sms".into(),
                },
            ),
            (
                reply("linkedin"),
                Some(Intent::Unsubscribe),
                ReplyUnsubscribe::Event,
                reply("linkedin"),
            ),
            // "no thanks" ends this sequence, not every one
            (
                reply("email"),
                Some(Intent::NotInterested),
                ReplyUnsubscribe::OptOut,
                reply("email"),
            ),
            (
                reply("email"),
                None,
                ReplyUnsubscribe::OptOut,
                reply("email"),
            ),
            (
                SignalKind::CallConnected,
                Some(Intent::Unsubscribe),
                ReplyUnsubscribe::OptOut,
                SignalKind::CallConnected,
            ),
        ];
        for (kind, intent, policy, want) in cases {
            let r = intent.map(reading);
            assert_eq!(
                kind.clone().settle(r.as_ref(), policy),
                want,
                "{kind:?} {intent:?} {policy:?}"
            );
        }
    }

    #[test]
    fn empty_words_are_not_read() {
        assert!(Words::text("  \n").is_empty());
        assert!(!Words::text("ok").is_empty());
        let subject_only = Words {
            subject: Some("Remove me".into()),
            ..Words::default()
        };
        assert!(!subject_only.is_empty());
    }
}
