//! What a provider's verified request does (docs/providers.md): each [`Notice`] the
//! pure readers in [`crate::inbound::providers`] made becomes the signal nudge already routes,
//! a delivery failure on a dispatch's journey, or a call task's outcome. Mail from every path
//! (`/webhooks/email`, Mailgun, SendGrid, Postmark, SES) goes through [`receive_mail`], so it
//! is classified and routed one way: a DSN is a bounce on every path, never a reply.
//!
//! Nothing here refuses a provider's event for being about someone nudge does not know: the
//! answer is [`Outcome::Ignored`] (2xx at the edge), so the provider does not retry forever.

use super::signals::words::{self, Words};
use super::signals::{self, lookup, Arrival, Receipt, Received, Replay, Router, Source};
use super::{accounts, dispatches, tasks, ServiceError};
use crate::auth::{Principal, Scope};
use crate::inbound::classify;
use crate::inbound::mail::Mail;
use crate::inbound::providers::{
    CallNotice, CallOutcome, EmailEvent, EmailNotice, MeetingChange, MeetingNotice, Notice,
    Reading, SmsNotice, TWILIO_OPTED_OUT,
};
use crate::inbound::SignalKind;
use crate::store;
use chrono::{DateTime, Utc};
use serde_json::json;

/// What one notice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A signal was stored and routed (or was a duplicate of one: `duplicate` says so).
    Signal(Receipt),
    /// Recorded elsewhere than as a signal: a dispatch's delivery failure, a task's outcome.
    Recorded(String),
    /// Nothing nudge acts on, or about no one it knows; nothing stored.
    Ignored(String),
}

/// What a request did: one outcome per notice, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handled {
    pub outcomes: Vec<Outcome>,
}

/// Acts on a verified request's notices. `replay` (a Mailgun token, a Calendly signature) is
/// spent with the first signal stored, or on its own when none is: sent again, the request is
/// [`Received::Replayed`] and changes nothing. `task` is a call callback's `?task=` id.
pub async fn apply(
    router: &Router,
    account_id: &str,
    reading: Reading,
    seen_at: DateTime<Utc>,
    task: Option<&str>,
) -> Result<Result<Handled, Replayed>, ServiceError> {
    let mut replay = reading.replay.map(|key| Replay { key, seen_at });
    let mut outcomes = Vec::with_capacity(reading.notices.len());
    for notice in reading.notices {
        let outcome = match notice {
            Notice::Mail(mail) => receive_mail(router, account_id, &mail, &mut replay).await?,
            Notice::Email(n) => email_event(router, account_id, &n, &mut replay).await?,
            Notice::Sms(n) => sms_status(router, account_id, &n, &mut replay).await?,
            Notice::Call(n) => call_status(router, account_id, &n, task, &mut replay).await?,
            Notice::Meeting(n) => meeting(router, account_id, &n, &mut replay).await?,
            Notice::Ignored(why) => Ok(Outcome::Ignored(why)),
        };
        match outcome {
            Ok(o) => outcomes.push(o),
            Err(Replayed) => return Ok(Err(Replayed)),
        }
    }
    // Nothing stored took the replay with it: spent on its own.
    if let Some(replay) = replay {
        if !signals::remember_replay(router.core(), account_id, &replay).await? {
            return Ok(Err(Replayed));
        }
    }
    Ok(Ok(Handled { outcomes }))
}

/// The request's signature (or Mailgun token) was used before: nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed;

type Step = Result<Outcome, Replayed>;

/// Stores and routes `arrival`, spending `replay` with it.
async fn store_signal(
    router: &Router,
    account_id: &str,
    mut arrival: Arrival,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    arrival.replay = replay.take();
    let now = router.core().clock.now();
    Ok(
        match signals::receive(router, account_id, arrival, now).await? {
            Received::Done(receipt) => Ok(Outcome::Signal(receipt)),
            Received::Replayed => Err(Replayed),
        },
    )
}

/// An inbound mail: a reply, an auto-reply or a DSN in a thread nudge started is classified and
/// routed (`reply`, `auto_reply`, `bounce`, …); mail in no nudge thread is ignored.
pub async fn receive_mail(
    router: &Router,
    account_id: &str,
    mail: &Mail,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    let core = router.core();
    let candidates = mail.thread_candidates();
    let Some((contact, thread_id)) = lookup::thread_contact(core, account_id, &candidates).await?
    else {
        return Ok(Ok(Outcome::Ignored(
            "no In-Reply-To or References id (nor a bounced message's Message-ID) is a \
             Message-ID nudge assigned"
                .into(),
        )));
    };
    let arrived = core.clock.now();
    let class = classify::classify(mail, arrived.date_naive());
    let contacts = vec![contact];
    let kind = signals::count_bounce(
        core,
        account_id,
        &contacts,
        SignalKind::of_mail(&class),
        arrived,
    )
    .await?;
    let message_id = mail.header("Message-ID").map(str::to_string);
    let mut payload = json!({
        "from": mail.from,
        "to": mail.to,
        "subject": mail.subject,
        "message_id": message_id,
        "thread": thread_id,
        "class": class.name(),
    });
    if let classify::MailClass::Bounce { status, note, .. } = &class {
        payload["status"] = json!(status);
        if let Some(note) = note {
            payload["note"] = json!(note);
        }
    }
    // A human reply's words: an auto-reply or a bounce has no intent.
    let words = Words {
        text: mail.text.clone().unwrap_or_default(),
        subject: mail.subject.clone(),
        from: mail.from.clone(),
    };
    let (kind, intent) =
        words::read_and_settle(core, account_id, &contacts[0], kind, &words, arrived).await?;
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Email,
        provider_id: message_id.as_ref().map(|m| format!("email:{}", m.trim())),
        payload,
        replay: None,
        intent,
    };
    store_signal(router, account_id, arrival, replay).await
}

/// The contacts an email event is about: the thread of nudge's own Message-ID, else the
/// dispatch the provider's message id was acked with, else the recipient's address.
async fn email_contacts(
    router: &Router,
    account_id: &str,
    n: &EmailNotice,
) -> Result<Vec<String>, ServiceError> {
    let core = router.core();
    if let Some(id) = &n.message_id {
        let id = id.trim();
        let bare = id.trim_start_matches('<').trim_end_matches('>');
        let candidates = vec![id.to_string(), format!("<{bare}>")];
        if let Some((contact, _)) = lookup::thread_contact(core, account_id, &candidates).await? {
            return Ok(vec![contact]);
        }
    }
    for id in n.provider_message_id.iter().chain(n.message_id.iter()) {
        if let Some(d) = store::dispatches::by_provider_message_id(&core.db, account_id, id).await?
        {
            let rows = store::tasks::contacts_of(&core.db, account_id, &[d.enrollment_id.as_str()])
                .await?;
            if let Some((_, contact)) = rows.into_iter().next() {
                return Ok(vec![contact.id]);
            }
        }
    }
    if n.recipient.contains('@') {
        return lookup::contacts_by_email(core, account_id, n.recipient.trim()).await;
    }
    Ok(Vec::new())
}

/// A bounce, a complaint or an unsubscribe reported by an email provider.
async fn email_event(
    router: &Router,
    account_id: &str,
    n: &EmailNotice,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    let contacts = email_contacts(router, account_id, n).await?;
    if contacts.is_empty() {
        return Ok(Ok(Outcome::Ignored(format!(
            "no contact has the address {}, and no dispatch was acked with this message's id",
            crate::quote::quote(&n.recipient)
        ))));
    }
    let now = router.core().clock.now();
    let kind = match n.event {
        EmailEvent::Bounce(bounce) => {
            signals::count_bounce(
                router.core(),
                account_id,
                &contacts,
                SignalKind::Bounce { bounce },
                now,
            )
            .await?
        }
        EmailEvent::Complaint => SignalKind::Complaint,
        EmailEvent::Unsubscribe => SignalKind::OptOut {
            channel: "email".into(),
        },
    };
    let mut payload = json!({
        "recipient": n.recipient,
        "message_id": n.message_id,
        "provider_message_id": n.provider_message_id,
        "detail": n.detail,
    });
    if let EmailEvent::Bounce(b) = n.event {
        payload["bounce"] = json!(b.as_str());
    }
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Email,
        provider_id: Some(n.provider_id.clone()),
        payload,
        replay: None,
        intent: None,
    };
    store_signal(router, account_id, arrival, replay).await
}

/// A Twilio message status: the failure on the dispatch's journey; a 21610 also opts the
/// number out of SMS.
async fn sms_status(
    router: &Router,
    account_id: &str,
    n: &SmsNotice,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    let core = router.core();
    let recorded = dispatches::delivery_failed(
        core,
        account_id,
        &n.message_sid,
        "twilio",
        n.status.as_str(),
        n.error_code,
        n.error_message.as_deref(),
    )
    .await?;
    let opted_out = n.error_code == Some(TWILIO_OPTED_OUT);
    if opted_out {
        if let Some(to) = &n.to {
            let arrival = Arrival {
                contacts: Vec::new(),
                kind: SignalKind::OptOut {
                    channel: "sms".into(),
                },
                source: Source::Sms,
                provider_id: Some(format!("twilio:{}:opted_out", n.message_sid)),
                payload: json!({"to": to, "message_sid": n.message_sid, "error_code": n.error_code}),
                replay: replay.take(),
                intent: None,
            };
            let now = core.clock.now();
            let no_words = Words::default();
            match signals::receive_from_phone(router, account_id, to, arrival, &no_words, now).await
            {
                Ok(Received::Done(r)) => return Ok(Ok(Outcome::Signal(r))),
                Ok(Received::Replayed) => return Ok(Err(Replayed)),
                Err(ServiceError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(Ok(match recorded {
        Some(dispatch) => Outcome::Recorded(format!(
            "dispatch `{dispatch}` failed: {}",
            n.status.as_str()
        )),
        None => Outcome::Ignored(format!(
            "no dispatch was acked with MessageSid {}{}",
            crate::quote::quote(&n.message_sid),
            if opted_out {
                ", and no contact has the number it was sent to"
            } else {
                ""
            }
        )),
    }))
}

/// A Voice call's final status: the outcome of the contact's open call task, or (no task, a
/// connected call) `call_connected`.
async fn call_status(
    router: &Router,
    account_id: &str,
    n: &CallNotice,
    task_id: Option<&str>,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    let core = router.core();
    let outcome = n.outcome(accounts::call_connected_threshold(core, account_id).await?);
    let contacts =
        store::signals::contacts_by_phone(&core.db, account_id, &n.contact_phone).await?;
    let task = match task_id {
        Some(id) => {
            super::fields::parse_id("task", id).map_err(|v| ServiceError::Invalid(vec![v]))?;
            store::tasks::get(&core.db, account_id, id).await?
        }
        None => store::tasks::open_of_contacts(&core.db, account_id, &contacts, "call")
            .await?
            .into_iter()
            .next(),
    };
    if let Some(task) = task {
        let params: serde_json::Value = serde_json::from_str(&task.params).unwrap_or_default();
        let list = |key: &str| -> Option<Vec<String>> {
            params.get(key)?.as_array().map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
        };
        let name = match outcome {
            CallOutcome::Connected => list("connected_outcomes")
                .and_then(|c| c.into_iter().next())
                .unwrap_or_else(|| "connected".into()),
            other => other.as_str().to_string(),
        };
        if let Some(allowed) = list("outcomes") {
            if !allowed.contains(&name) {
                return Ok(Ok(Outcome::Ignored(format!(
                    "the call was `{name}`, which is not one of task `{}`'s outcomes ({}); \
                     complete it with CompleteTask",
                    task.id,
                    allowed.join(", ")
                ))));
            }
        }
        let who = Principal {
            account_id: account_id.to_string(),
            token_id: "webhook:twilio".into(),
            scope: Scope::Full,
        };
        let id: super::ids::TaskId = task.id.clone().into();
        return match tasks::complete(core, &who, &id, &name, "").await {
            Ok(_) => {
                // Spent here: a completed task is not stored as a signal of its own.
                if let Some(replay) = replay.take() {
                    if !signals::remember_replay(core, account_id, &replay).await? {
                        return Ok(Err(Replayed));
                    }
                }
                Ok(Ok(Outcome::Recorded(format!(
                    "task `{}` completed: {name}",
                    task.id
                ))))
            }
            // Completed already (Twilio retries, or a person did it first): nothing changes.
            Err(ServiceError::FailedPrecondition(why)) => Ok(Ok(Outcome::Ignored(why))),
            Err(e) => Err(e),
        };
    }
    if outcome != CallOutcome::Connected || contacts.is_empty() {
        return Ok(Ok(Outcome::Ignored(format!(
            "no open call task for {} to take the outcome `{}`",
            crate::quote::quote(&n.contact_phone),
            outcome.as_str()
        ))));
    }
    let arrival = Arrival {
        contacts,
        kind: SignalKind::CallConnected,
        source: Source::Call,
        provider_id: Some(format!("twilio:{}", n.call_sid)),
        payload: json!({"call_sid": n.call_sid, "duration_secs": n.duration_secs, "phone": n.contact_phone}),
        replay: None,
        intent: None,
    };
    store_signal(router, account_id, arrival, replay).await
}

/// A booking made, moved or cancelled on a sender's calendar.
async fn meeting(
    router: &Router,
    account_id: &str,
    n: &MeetingNotice,
    replay: &mut Option<Replay>,
) -> Result<Step, ServiceError> {
    let core = router.core();
    let mut sender = None;
    for host in &n.hosts {
        if let Some(s) = lookup::sender_by_calendar(core, account_id, host).await? {
            sender = Some((host.clone(), s));
            break;
        }
    }
    let Some((organizer, sender)) = sender else {
        return Ok(Ok(Outcome::Ignored(format!(
            "no host of the booking ({}) is a sender's calendar: set the sender's `calendar` with \
             UpsertSender",
            n.hosts.join(", ")
        ))));
    };
    let mut contacts: Vec<String> = Vec::new();
    for attendee in &n.attendees {
        if n.hosts.iter().any(|h| h.eq_ignore_ascii_case(attendee)) || !attendee.contains('@') {
            continue;
        }
        for id in lookup::contacts_by_email(core, account_id, attendee.trim()).await? {
            if !contacts.contains(&id) {
                contacts.push(id);
            }
        }
    }
    if contacts.is_empty() {
        return Ok(Ok(Outcome::Ignored(
            "no attendee of the booking is a contact (matched by email)".into(),
        )));
    }
    let provider = n.provider.as_str();
    let payload = json!({
        "event_id": n.booking,
        "provider": provider,
        "organizer": organizer,
        "sender_id": sender,
        "start": n.start.map(|s| s.to_rfc3339()),
        "title": n.title,
    });
    let booked_id = |booking: &str| format!("{provider}:{booking}");
    let (kind, provider_id) = match &n.change {
        MeetingChange::Booked => (SignalKind::MeetingBooked, booked_id(&n.booking)),
        MeetingChange::Cancelled => (
            SignalKind::MeetingCancelled,
            format!("{}:cancelled", booked_id(&n.booking)),
        ),
        MeetingChange::Rescheduled { from } => {
            // The booking it moves is updated in place: nothing that already ran moves, and
            // nothing new is raised. An unknown one (booked before nudge heard of it) is a
            // booking.
            for old in from.iter().chain(std::iter::once(&n.booking)) {
                if let Some(booked) =
                    store::signals::by_provider_id(&core.db, account_id, &booked_id(old)).await?
                {
                    let updated = payload.to_string();
                    if booked.payload != updated {
                        store::signals::set_payload(&core.db, &booked.id, &updated).await?;
                    }
                    if let Some(replay) = replay.take() {
                        if !signals::remember_replay(core, account_id, &replay).await? {
                            return Ok(Err(Replayed));
                        }
                    }
                    return Ok(Ok(Outcome::Recorded(format!(
                        "booking `{old}` moved to `{}`",
                        n.booking
                    ))));
                }
            }
            (SignalKind::MeetingBooked, booked_id(&n.booking))
        }
    };
    let arrival = Arrival {
        contacts,
        kind,
        source: Source::Calendar,
        provider_id: Some(provider_id),
        payload,
        replay: None,
        intent: None,
    };
    store_signal(router, account_id, arrival, replay).await
}
