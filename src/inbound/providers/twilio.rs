//! Twilio's status callbacks, signed like its SMS webhook (`X-Twilio-Signature`,
//! [`crate::inbound::signing::twilio_verify`]): a message's status (`MessageStatus`,
//! `ErrorCode`) and a Voice call's (`CallStatus`, `CallDuration`, `AnsweredBy`). Callbacks
//! arrive out of order and more than once; only final statuses are acted on, and acting on one
//! twice changes nothing. Twilio documents them at
//! twilio.com/docs/messaging/guides/track-outbound-message-status (messages),
//! twilio.com/docs/usage/webhooks/voice-webhooks (calls) and
//! twilio.com/docs/voice/answering-machine-detection (`AnsweredBy`).

use super::form::Form;
use super::{
    malformed, AnsweredBy, CallNotice, CallStatus, Notice, Reading, Refusal, SmsNotice, SmsStatus,
};

/// Every `MessageStatus` Twilio sends (its OpenAPI `message_enum_status`).
pub const MESSAGE_STATUSES: [&str; 13] = [
    "queued",
    "sending",
    "sent",
    "failed",
    "delivered",
    "undelivered",
    "receiving",
    "received",
    "accepted",
    "scheduled",
    "read",
    "partially_delivered",
    "canceled",
];

/// Every `CallStatus` Twilio sends.
pub const CALL_STATUSES: [&str; 9] = [
    "queued",
    "initiated",
    "ringing",
    "in-progress",
    "completed",
    "busy",
    "failed",
    "no-answer",
    "canceled",
];

/// A message status callback: a delivery failure (or the recipient's opt-out), or nothing.
pub fn message_status(form: &Form) -> Result<Reading, Refusal> {
    let sid = form
        .text("MessageSid")
        .or_else(|| form.text("SmsSid"))
        .ok_or_else(|| malformed("the form has no `MessageSid`, which Twilio always sends"))?;
    let status = form
        .text("MessageStatus")
        .or_else(|| form.text("SmsStatus"))
        .ok_or_else(|| {
            malformed(
                "the form has no `MessageStatus`: point only a message's StatusCallback here \
                 (inbound SMS go to /webhooks/sms/twilio)",
            )
        })?;
    if !MESSAGE_STATUSES.contains(&status.as_str()) {
        return Err(malformed(format!(
            "`MessageStatus` {} is not a Twilio message status",
            crate::quote::quote(&status)
        )));
    }
    let status = match status.as_str() {
        "undelivered" => SmsStatus::Undelivered,
        "failed" => SmsStatus::Failed,
        other => {
            return Ok(Reading::one(Notice::Ignored(format!(
                "a message `{other}` status, which nudge does not act on"
            ))))
        }
    };
    let error_code = match form.text("ErrorCode").filter(|c| !c.trim().is_empty()) {
        None => None,
        Some(code) => Some(code.trim().parse::<u32>().map_err(|_| {
            malformed(format!(
                "`ErrorCode` {} is not a number",
                crate::quote::quote(&code)
            ))
        })?),
    };
    Ok(Reading::one(Notice::Sms(SmsNotice {
        message_sid: sid,
        status,
        error_code,
        error_message: form.text("ErrorMessage").filter(|m| !m.is_empty()),
        to: form.text("To"),
    })))
}

/// A Voice call status callback: a final status becomes a [`CallNotice`], the rest nothing.
pub fn call_status(form: &Form) -> Result<Reading, Refusal> {
    let sid = form
        .text("CallSid")
        .ok_or_else(|| malformed("the form has no `CallSid`, which Twilio always sends"))?;
    let status = form.text("CallStatus").ok_or_else(|| {
        malformed("the form has no `CallStatus`: point a call's StatusCallback here")
    })?;
    if !CALL_STATUSES.contains(&status.as_str()) {
        return Err(malformed(format!(
            "`CallStatus` {} is not a Twilio call status",
            crate::quote::quote(&status)
        )));
    }
    let status = match status.as_str() {
        "completed" => CallStatus::Completed,
        "busy" => CallStatus::Busy,
        "failed" => CallStatus::Failed,
        "no-answer" => CallStatus::NoAnswer,
        "canceled" => CallStatus::Canceled,
        other => {
            return Ok(Reading::one(Notice::Ignored(format!(
                "a call `{other}` status (not final), which nudge does not act on"
            ))))
        }
    };
    let duration_secs = match form.text("CallDuration").filter(|d| !d.trim().is_empty()) {
        None => None,
        Some(d) => Some(d.trim().parse::<u64>().map_err(|_| {
            malformed(format!(
                "`CallDuration` {} is not a number of seconds",
                crate::quote::quote(&d)
            ))
        })?),
    };
    let answered_by = form.text("AnsweredBy").map(|a| match a.as_str() {
        "human" => AnsweredBy::Human,
        "fax" => AnsweredBy::Fax,
        a if a.starts_with("machine") => AnsweredBy::Machine,
        _ => AnsweredBy::Unknown,
    });
    // The contact is the far end: who was called, or who called in.
    let inbound = form.text("Direction").as_deref() == Some("inbound");
    let phone = if inbound {
        form.text("From")
    } else {
        form.text("To")
    }
    .ok_or_else(|| malformed("the form has no `To`/`From` number"))?;
    Ok(Reading::one(Notice::Call(CallNotice {
        call_sid: sid,
        status,
        duration_secs,
        answered_by,
        contact_phone: phone,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Form {
        Form::urlencoded(serde_urlencoded::to_string(pairs).unwrap().as_bytes()).unwrap()
    }

    #[test]
    fn message_statuses() {
        // An undelivered message, with the parameters Twilio's track-outbound-message-status
        // guide lists (illustrative values).
        let r = message_status(&form(&[
            ("AccountSid", "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
            ("ApiVersion", "2010-04-01"),
            ("ErrorCode", "30003"),
            ("From", "+15017122661"),
            ("MessageSid", "SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
            ("MessageStatus", "undelivered"),
            ("SmsSid", "SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
            ("SmsStatus", "undelivered"),
            ("To", "+15558675310"),
        ]))
        .unwrap();
        assert_eq!(
            r.notices,
            [Notice::Sms(SmsNotice {
                message_sid: "SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX".into(),
                status: SmsStatus::Undelivered,
                error_code: Some(30003),
                error_message: None,
                to: Some("+15558675310".into()),
            })]
        );
        for status in ["sent", "delivered", "read", "queued"] {
            let r =
                message_status(&form(&[("MessageSid", "SM1"), ("MessageStatus", status)])).unwrap();
            assert!(matches!(r.notices[0], Notice::Ignored(_)), "{status}");
        }
        for bad in [
            form(&[("MessageStatus", "failed")]),
            form(&[("MessageSid", "SM1")]),
            form(&[("MessageSid", "SM1"), ("MessageStatus", "exploded")]),
            form(&[
                ("MessageSid", "SM1"),
                ("MessageStatus", "failed"),
                ("ErrorCode", "x"),
            ]),
        ] {
            assert!(
                matches!(message_status(&bad), Err(Refusal::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn call_statuses() {
        // A completed call a machine answered, with the parameters of Twilio's voice-webhooks
        // and answering-machine-detection pages (illustrative values).
        let r = call_status(&form(&[
            ("AccountSid", "AC1"),
            ("AnsweredBy", "machine_end_beep"),
            ("CallDuration", "17"),
            ("CallSid", "CA1"),
            ("CallStatus", "completed"),
            ("Direction", "outbound-api"),
            ("From", "+15017122661"),
            ("SequenceNumber", "3"),
            ("To", "+15558675310"),
        ]))
        .unwrap();
        let Notice::Call(c) = &r.notices[0] else {
            panic!()
        };
        assert_eq!(c.status, CallStatus::Completed);
        assert_eq!(c.answered_by, Some(AnsweredBy::Machine));
        assert_eq!(c.duration_secs, Some(17));
        assert_eq!(c.contact_phone, "+15558675310");
        let r = call_status(&form(&[
            ("CallSid", "CA2"),
            ("CallStatus", "no-answer"),
            ("Direction", "inbound"),
            ("From", "+15558675310"),
            ("To", "+1"),
        ]))
        .unwrap();
        assert!(
            matches!(&r.notices[0], Notice::Call(c) if c.status == CallStatus::NoAnswer && c.contact_phone == "+15558675310")
        );
        for status in ["ringing", "in-progress", "initiated"] {
            let r = call_status(&form(&[("CallSid", "CA3"), ("CallStatus", status)])).unwrap();
            assert!(matches!(r.notices[0], Notice::Ignored(_)), "{status}");
        }
        assert!(call_status(&form(&[("CallSid", "CA3"), ("CallStatus", "answered-ish")])).is_err());
        assert!(call_status(&form(&[
            ("CallSid", "CA3"),
            ("CallStatus", "completed"),
            ("CallDuration", "-1"),
            ("To", "+1")
        ]))
        .is_err());
    }
}
