//! Booking providers: Calendly v2 signs `Calendly-Webhook-Signature: t=…,v1=…` (hex
//! HMAC-SHA256 of `t.body`, 3 minutes' tolerance; Calendly's
//! developer.calendly.com/api-docs/overview/webhooks/webhook-signatures); Cal.com signs
//! `X-Cal-Signature-256` (hex HMAC-SHA256 of the body) and carries `createdAt` inside the signed
//! body, which is checked as its timestamp (the calcom/cal.com repository's
//! `packages/features/webhooks/lib/sendPayload.ts` and
//! `docs/developing/guides/automation/webhooks.mdx`). Both become [`MeetingNotice`]s.

use super::{
    check_fresh, forged, hmac_sha256_matches, malformed, MeetingChange, MeetingNotice, Notice,
    Provider, Reading, Refusal,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Calendly's signature header.
pub const CALENDLY_HEADER: &str = "calendly-webhook-signature";
/// How far Calendly's `t` may be from the clock (Calendly's own sample code: 3 minutes).
pub const CALENDLY_TOLERANCE_SECS: i64 = 180;
/// Cal.com's signature header.
pub const CALCOM_HEADER: &str = "x-cal-signature-256";
/// How far Cal.com's signed `createdAt` may be from the clock.
pub const CALCOM_TOLERANCE_SECS: i64 = 300;

/// Calendly's webhook events; those nudge does not act on answer 2xx.
pub const CALENDLY_EVENTS: [&str; 11] = [
    "invitee.created",
    "invitee.canceled",
    "invitee_no_show.created",
    "invitee_no_show.deleted",
    "routing_form_submission.created",
    "event_type.created",
    "event_type.updated",
    "event_type.deleted",
    "meeting_recap.created",
    "contact.created",
    "contact.updated",
];

/// Cal.com's webhook triggers; those nudge does not act on answer 2xx.
pub const CALCOM_TRIGGERS: [&str; 17] = [
    "BOOKING_CREATED",
    "BOOKING_RESCHEDULED",
    "BOOKING_CANCELLED",
    "BOOKING_REJECTED",
    "BOOKING_REQUESTED",
    "BOOKING_PAYMENT_INITIATED",
    "BOOKING_PAID",
    "BOOKING_NO_SHOW_UPDATED",
    "MEETING_STARTED",
    "MEETING_ENDED",
    "RECORDING_READY",
    "RECORDING_TRANSCRIPTION_GENERATED",
    "FORM_SUBMITTED",
    "INSTANT_MEETING",
    "OOO_CREATED",
    "AFTER_HOSTS_CAL_VIDEO_NO_SHOW",
    "PING",
];

/// Checks `Calendly-Webhook-Signature` over the raw body at `now`; returns the replay key.
pub fn verify_calendly(
    key: &str,
    header: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<String, Refusal> {
    let header = header.ok_or_else(|| {
        forged("missing signature: Calendly sends `Calendly-Webhook-Signature: t=…,v1=…`")
    })?;
    let (mut t, mut v1s) = (None, Vec::new());
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = Some(value.trim().to_string()),
            Some(("v1", value)) => v1s.push(value.trim().to_string()),
            _ => {}
        }
    }
    let (Some(t), false) = (t, v1s.is_empty()) else {
        return Err(forged(
            "the `Calendly-Webhook-Signature` header is not `t=<unix seconds>,v1=<hex>`",
        ));
    };
    let matched = v1s
        .into_iter()
        .find(|v1| hmac_sha256_matches(key.as_bytes(), &[t.as_bytes(), b".", body], v1))
        .ok_or_else(|| {
            forged(
                "the Calendly signature does not match: the key set with `nudge \
                 provider-secret set calendly` must be this webhook subscription's signing key",
            )
        })?;
    let at: i64 = t
        .parse()
        .map_err(|_| forged("the Calendly `t` is not unix seconds"))?;
    check_fresh("the Calendly `t`", at, now, CALENDLY_TOLERANCE_SECS)?;
    Ok(format!("calendly:{}", matched.to_ascii_lowercase()))
}

fn json(body: &[u8]) -> Result<Value, Refusal> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| malformed(format!("the body is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(malformed("the body is not a JSON object"));
    }
    Ok(v)
}

fn str_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.trim().is_empty())
}

fn instant(v: &Value, pointer: &str) -> Result<Option<DateTime<Utc>>, Refusal> {
    match str_at(v, pointer) {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(&text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| malformed(format!("`{}` is not an RFC 3339 instant", &pointer[1..]))),
    }
}

/// A Calendly webhook body (verified first) as at most one notice.
pub fn calendly(body: &[u8]) -> Result<Notice, Refusal> {
    let v = json(body)?;
    let event = str_at(&v, "/event").ok_or_else(|| malformed("no `event`"))?;
    if !CALENDLY_EVENTS.contains(&event.as_str()) {
        return Err(malformed(format!(
            "`event` {} is not a Calendly webhook event",
            crate::quote::quote(&event)
        )));
    }
    let change = match event.as_str() {
        "invitee.created" => match str_at(&v, "/payload/old_invitee") {
            Some(old) => MeetingChange::Rescheduled { from: Some(old) },
            None => MeetingChange::Booked,
        },
        "invitee.canceled" => {
            if v.pointer("/payload/rescheduled") == Some(&Value::Bool(true)) {
                // The first half of a reschedule: the new time arrives as `invitee.created`
                // with `old_invitee`, and nothing that already ran moves.
                return Ok(Notice::Ignored(
                    "the cancellation half of a Calendly reschedule (the booking moves with \
                     the invitee.created that follows)"
                        .into(),
                ));
            }
            MeetingChange::Cancelled
        }
        other => {
            return Ok(Notice::Ignored(format!(
                "a Calendly `{other}` event, which nudge does not act on"
            )))
        }
    };
    let booking = str_at(&v, "/payload/uri")
        .ok_or_else(|| malformed(format!("the `{event}` event has no `payload.uri`")))?;
    let invitee = str_at(&v, "/payload/email")
        .ok_or_else(|| malformed(format!("the `{event}` event has no `payload.email`")))?;
    let mut attendees = vec![invitee];
    if let Some(guests) = v
        .pointer("/payload/scheduled_event/event_guests")
        .and_then(Value::as_array)
    {
        attendees.extend(guests.iter().filter_map(|g| str_at(g, "/email")));
    }
    let hosts = v
        .pointer("/payload/scheduled_event/event_memberships")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(|h| str_at(h, "/user_email")).collect())
        .unwrap_or_default();
    Ok(Notice::Meeting(MeetingNotice {
        provider: Provider::Calendly,
        booking,
        change,
        hosts,
        attendees,
        start: instant(&v, "/payload/scheduled_event/start_time")?,
        title: str_at(&v, "/payload/scheduled_event/name"),
    }))
}

/// Checks `X-Cal-Signature-256` over the raw body, then the signed `createdAt` at `now`.
pub fn verify_calcom(
    secret: &str,
    header: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    let header = header.ok_or_else(|| {
        forged(
            "missing signature: Cal.com sends `X-Cal-Signature-256` when the webhook has a secret",
        )
    })?;
    let header = header.trim();
    if header == "no-secret-provided" {
        return Err(forged(
            "Cal.com sent `no-secret-provided`: give the webhook a secret in Cal.com and set the \
             same one with `nudge provider-secret set calcom`",
        ));
    }
    let hex = header.strip_prefix("sha256=").unwrap_or(header);
    if !hmac_sha256_matches(secret.as_bytes(), &[body], hex) {
        return Err(forged(
            "the Cal.com signature does not match: the secret set with `nudge provider-secret \
             set calcom` must be the webhook's secret, and the body must arrive as Cal.com sent it",
        ));
    }
    let v = json(body)?;
    let created = instant(&v, "/createdAt")?
        .ok_or_else(|| forged("the signed body has no `createdAt` to check its age by"))?;
    check_fresh(
        "the Cal.com `createdAt`",
        created.timestamp(),
        now,
        CALCOM_TOLERANCE_SECS,
    )
}

/// A Cal.com webhook body (verified first) as at most one notice.
pub fn calcom(body: &[u8]) -> Result<Notice, Refusal> {
    let v = json(body)?;
    let trigger = str_at(&v, "/triggerEvent").ok_or_else(|| malformed("no `triggerEvent`"))?;
    if !CALCOM_TRIGGERS.contains(&trigger.as_str()) {
        return Err(malformed(format!(
            "`triggerEvent` {} is not a Cal.com webhook trigger",
            crate::quote::quote(&trigger)
        )));
    }
    let change = match trigger.as_str() {
        "BOOKING_CREATED" => MeetingChange::Booked,
        "BOOKING_RESCHEDULED" => MeetingChange::Rescheduled {
            from: str_at(&v, "/payload/rescheduleUid"),
        },
        "BOOKING_CANCELLED" => MeetingChange::Cancelled,
        other => {
            return Ok(Notice::Ignored(format!(
                "a Cal.com `{other}` trigger, which nudge does not act on"
            )))
        }
    };
    let booking = str_at(&v, "/payload/uid")
        .ok_or_else(|| malformed(format!("the `{trigger}` payload has no `uid`")))?;
    let attendees: Vec<String> = v
        .pointer("/payload/attendees")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|p| str_at(p, "/email")).collect())
        .unwrap_or_default();
    if attendees.is_empty() {
        return Err(malformed(format!(
            "the `{trigger}` payload has no `attendees`"
        )));
    }
    let mut hosts: Vec<String> = str_at(&v, "/payload/organizer/email").into_iter().collect();
    if let Some(team) = v.pointer("/payload/team/members").and_then(Value::as_array) {
        hosts.extend(team.iter().filter_map(|m| str_at(m, "/email")));
    }
    Ok(Notice::Meeting(MeetingNotice {
        provider: Provider::Calcom,
        booking,
        change,
        hosts,
        attendees,
        start: instant(&v, "/payload/startTime")?,
        title: str_at(&v, "/payload/title"),
    }))
}

/// One notice, no replay key (Cal.com's uid and trigger deduplicate).
pub fn reading(notice: Notice, replay: Option<String>) -> Reading {
    Reading {
        notices: vec![notice],
        replay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    // Computed with Calendly's documented scheme and a test key (no vector of Calendly's own).
    const CALENDLY_BODY: &str = r#"{"event":"invitee.created","created_at":"2020-11-23T17:51:19.000000Z","payload":{"email":"test@example.com","scheduled_event":{"start_time":"2020-11-24T17:00:00.000000Z","event_memberships":[{"user_email":"host@example.com"}]}}}"#;
    const CALENDLY_SIG: &str =
        "t=1606153879,v1=f9320843336cd1da5fde5910b8f3b0d4247b120e6f0482b7a51b2fb0f2ad455f";

    #[test]
    fn calendly_vector() {
        let key = "test-calendly-key";
        let body = CALENDLY_BODY.as_bytes();
        let replay = verify_calendly(key, Some(CALENDLY_SIG), body, at(1606153879 + 179)).unwrap();
        assert_eq!(
            replay,
            "calendly:f9320843336cd1da5fde5910b8f3b0d4247b120e6f0482b7a51b2fb0f2ad455f"
        );
        let stale =
            verify_calendly(key, Some(CALENDLY_SIG), body, at(1606153879 + 181)).unwrap_err();
        assert!(stale.to_string().contains("stale"));
        assert!(verify_calendly("other", Some(CALENDLY_SIG), body, at(1606153879)).is_err());
        assert!(verify_calendly(key, Some("v1=abc"), body, at(1606153879)).is_err());
        assert!(verify_calendly(key, None, body, at(1606153879)).is_err());
        let mut altered = body.to_vec();
        altered[3] = b'E';
        assert!(verify_calendly(key, Some(CALENDLY_SIG), &altered, at(1606153879)).is_err());
        // This body lacks `payload.uri`: malformed once verified.
        assert!(matches!(calendly(body), Err(Refusal::Malformed(m)) if m.contains("payload.uri")));
    }

    #[test]
    fn calendly_events() {
        let body = |event: &str, extra: Value| {
            let mut v = serde_json::json!({"event": event, "payload": {
                "uri": "https://api.calendly.com/scheduled_events/E/invitees/I", "email": "ann@example.com",
                "scheduled_event": {"name": "15 Minute Meeting", "start_time": "2020-11-24T17:00:00.000000Z",
                    "event_memberships": [{"user": "u", "user_email": "rep@acme.com"}],
                    "event_guests": [{"email": "bob@example.com"}]}}});
            for (k, val) in extra.as_object().unwrap() {
                v["payload"][k] = val.clone();
            }
            serde_json::to_vec(&v).unwrap()
        };
        let Notice::Meeting(m) = calendly(&body("invitee.created", serde_json::json!({}))).unwrap()
        else {
            panic!()
        };
        assert_eq!(m.change, MeetingChange::Booked);
        assert_eq!(m.hosts, ["rep@acme.com"]);
        assert_eq!(m.attendees, ["ann@example.com", "bob@example.com"]);
        assert_eq!(
            m.start,
            Some(
                DateTime::parse_from_rfc3339("2020-11-24T17:00:00Z")
                    .unwrap()
                    .with_timezone(&Utc)
            )
        );
        let Notice::Meeting(m) = calendly(&body(
            "invitee.created",
            serde_json::json!({"old_invitee": "OLD"}),
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            m.change,
            MeetingChange::Rescheduled {
                from: Some("OLD".into())
            }
        );
        let Notice::Meeting(m) = calendly(&body(
            "invitee.canceled",
            serde_json::json!({"rescheduled": false}),
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(m.change, MeetingChange::Cancelled);
        assert!(matches!(
            calendly(&body(
                "invitee.canceled",
                serde_json::json!({"rescheduled": true})
            ))
            .unwrap(),
            Notice::Ignored(_)
        ));
        assert!(matches!(
            calendly(&body("invitee_no_show.created", serde_json::json!({}))).unwrap(),
            Notice::Ignored(_)
        ));
        assert!(calendly(&body("invitee.exploded", serde_json::json!({}))).is_err());
    }

    // Computed with Cal.com's scheme (sendPayload.ts) and a test secret (Cal.com ships none).
    const CALCOM_BODY: &str = r#"{"triggerEvent":"BOOKING_CREATED","createdAt":"2023-05-24T09:30:00.538Z","payload":{"uid":"bFJeNb2uX8ANpT3JL5EfXw","startTime":"2023-05-25T09:30:00Z","organizer":{"email":"pro@example.com"},"attendees":[{"email":"john.doe@example.com"}]}}"#;
    const CALCOM_SIG: &str = "bdae716480e92d2c7fab17a10eb14423463f7b8ee50dfcc785cd9ecb428a24c8";

    #[test]
    fn calcom_vector() {
        let now = DateTime::parse_from_rfc3339("2023-05-24T09:31:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let body = CALCOM_BODY.as_bytes();
        verify_calcom("test-cal-secret", Some(CALCOM_SIG), body, now).unwrap();
        verify_calcom(
            "test-cal-secret",
            Some(&format!("sha256={CALCOM_SIG}")),
            body,
            now,
        )
        .unwrap();
        assert!(verify_calcom("other", Some(CALCOM_SIG), body, now).is_err());
        assert!(verify_calcom("test-cal-secret", Some("no-secret-provided"), body, now).is_err());
        let late = now + chrono::Duration::minutes(10);
        assert!(
            verify_calcom("test-cal-secret", Some(CALCOM_SIG), body, late)
                .unwrap_err()
                .to_string()
                .contains("stale")
        );
        let Notice::Meeting(m) = calcom(body).unwrap() else {
            panic!()
        };
        assert_eq!(m.booking, "bFJeNb2uX8ANpT3JL5EfXw");
        assert_eq!(m.hosts, ["pro@example.com"]);
        assert_eq!(m.attendees, ["john.doe@example.com"]);
        assert_eq!(m.change, MeetingChange::Booked);
        let moved = CALCOM_BODY
            .replace("BOOKING_CREATED", "BOOKING_RESCHEDULED")
            .replace("\"uid\"", "\"rescheduleUid\":\"old\",\"uid\"");
        assert!(
            matches!(calcom(moved.as_bytes()).unwrap(), Notice::Meeting(m) if m.change == MeetingChange::Rescheduled { from: Some("old".into()) })
        );
        let cancel = CALCOM_BODY.replace("BOOKING_CREATED", "BOOKING_CANCELLED");
        assert!(
            matches!(calcom(cancel.as_bytes()).unwrap(), Notice::Meeting(m) if m.change == MeetingChange::Cancelled)
        );
        assert!(matches!(
            calcom(CALCOM_BODY.replace("BOOKING_CREATED", "PING").as_bytes()).unwrap(),
            Notice::Ignored(_)
        ));
        assert!(calcom(
            CALCOM_BODY
                .replace("BOOKING_CREATED", "BOOKING_EXPLODED")
                .as_bytes()
        )
        .is_err());
    }
}
