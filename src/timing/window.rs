//! Send windows, the SMS window, jitter and the zone rule (SPEC §2.3, §2.3a, §3, §4).
//!
//! An outreach step (or task) may happen only while every window that applies to it is open:
//! the flow's send window (listed weekdays that are not holidays, `from`..`to` in the window's
//! zone) and, for SMS, the fixed SMS window 08:00–21:00 in **every** candidate recipient zone.
//! Each window is a union of half-open intervals `[from, to)` per local day, each bound turned
//! into an instant by SPEC §2.4 ([`Zone::to_instant`]), so a window whose `from` lies in a DST
//! gap opens when the gap ends. [`next_opening`] finds the earliest instant at or after `t` in
//! the intersection by jumping from interval to interval (never minute stepping), and gives up
//! after [`SEARCH_DAYS`] days with `NO_OPENING` (or `ZONE_UNKNOWN` when the SMS candidate zones
//! alone never overlap).

use crate::code::Code;
use crate::timing::duration::Duration;
use crate::timing::error::TimingError;
use crate::timing::holidays::Holidays;
use crate::timing::phone::phone_zones;
use crate::timing::zone::Zone;
use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How far ahead [`next_opening`] looks before refusing with `NO_OPENING` (SPEC §2.3a).
pub const SEARCH_DAYS: i64 = 31;

/// The SMS window: 08:00 to 21:00 in the recipient's zone, every day (SPEC §3).
pub const SMS_FROM: NaiveTime = match NaiveTime::from_hms_opt(8, 0, 0) {
    Some(t) => t,
    None => panic!("08:00 is a time"),
};
/// The end of the SMS window (exclusive).
pub const SMS_TO: NaiveTime = match NaiveTime::from_hms_opt(21, 0, 0) {
    Some(t) => t,
    None => panic!("21:00 is a time"),
};

const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const FIELDS: [&str; 4] = ["days", "from", "to", "tz"];

/// Which zone a send window is read in (`settings.send_window.tz`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowZone {
    /// `contact` (the default): the contact's zone when it has one, else the sender's.
    Contact,
    /// `sender`: always the sender's zone.
    Sender,
    /// An explicit zone (`Europe/Prague`, `UTC`, `+02:00`).
    Explicit(Zone),
}

/// `settings.send_window`: when outreach may go, in local time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendWindow {
    /// Open weekdays, Monday first.
    pub days: [bool; 7],
    /// Opening local time (inclusive).
    pub from: NaiveTime,
    /// Closing local time (exclusive); always after `from`.
    pub to: NaiveTime,
    /// The zone the times are read in.
    pub zone: WindowZone,
}

impl SendWindow {
    /// Parses `{"days": [...], "from": "HH:MM", "to": "HH:MM", "tz": ...}`.
    ///
    /// `BAD_WINDOW` for no days, an unknown weekday, a bad time of day or `from` >= `to`;
    /// `BAD_TZ` for a bad zone; `BAD_SCHEMA` for a missing or unknown field or a wrong JSON type.
    pub fn from_json(v: &serde_json::Value) -> Result<SendWindow, TimingError> {
        let schema =
            |text: String, hint: String| TimingError::new(Code::BadSchema, text, None, hint);
        let obj = v.as_object().ok_or_else(|| {
            schema(
                v.to_string(),
                "`send_window` is an object: {\"days\": [\"mon\", …], \"from\": \"09:00\", \"to\": \"17:00\", \"tz\": \"contact\"}".into(),
            )
        })?;
        if let Some(unknown) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(schema(
                unknown.clone(),
                format!(
                    "`send_window.{unknown}` is not a field: use `days`, `from`, `to` and `tz`"
                ),
            ));
        }

        let days_value = obj.get("days").ok_or_else(|| {
            TimingError::new(
                Code::BadWindow,
                v.to_string(),
                None,
                "`send_window.days` is missing: list the open weekdays, e.g. [\"mon\", \"tue\", \"wed\", \"thu\", \"fri\"]",
            )
        })?;
        let list = days_value.as_array().ok_or_else(|| {
            schema(
                days_value.to_string(),
                "`send_window.days` is a list of weekdays, e.g. [\"mon\", \"fri\"]".into(),
            )
        })?;
        if list.is_empty() {
            return Err(TimingError::new(
                Code::BadWindow,
                "[]",
                None,
                "`send_window.days` is empty, so the window never opens: list at least one weekday, e.g. [\"mon\"]",
            ));
        }
        let mut days = [false; 7];
        for item in list {
            let name = item.as_str().ok_or_else(|| {
                schema(
                    item.to_string(),
                    "`send_window.days` holds weekday names such as \"mon\"".into(),
                )
            })?;
            let index = WEEKDAYS
                .iter()
                .position(|w| w.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    TimingError::new(
                        Code::BadWindow,
                        name,
                        None,
                        format!("`send_window.days`: `{name}` is not a weekday; use three letters: mon, tue, wed, thu, fri, sat, sun"),
                    )
                })?;
            days[index] = true;
        }

        let from = time_field(v, obj, "from")?;
        let to = time_field(v, obj, "to")?;
        if from >= to {
            return Err(TimingError::new(
                Code::BadWindow,
                format!("{}–{}", from.format("%H:%M"), to.format("%H:%M")),
                None,
                "`send_window.from` must be before `to` on the same day (a window cannot cross midnight); e.g. \"from\": \"09:00\", \"to\": \"17:00\"",
            ));
        }

        let zone = match obj.get("tz") {
            None | Some(serde_json::Value::Null) => WindowZone::Contact,
            Some(serde_json::Value::String(s)) if s == "contact" => WindowZone::Contact,
            Some(serde_json::Value::String(s)) if s == "sender" => WindowZone::Sender,
            Some(serde_json::Value::String(s)) => WindowZone::Explicit(Zone::parse(s).map_err(|mut e| {
                e.hint = format!("`send_window.tz` is `contact`, `sender` or a zone: {}", e.hint);
                e
            })?),
            Some(other) => {
                return Err(schema(
                    other.to_string(),
                    "`send_window.tz` is a string: `contact`, `sender` or a zone such as `Europe/Prague`".into(),
                ))
            }
        };
        Ok(SendWindow {
            days,
            from,
            to,
            zone,
        })
    }

    /// Whether the window is open on local date `d` (a listed weekday that is not a holiday).
    fn opens_on(&self, d: NaiveDate, h: &Holidays) -> bool {
        self.days[d.weekday().num_days_from_monday() as usize] && !h.contains(d)
    }

    /// `mon,tue 09:00–17:00`, for hints.
    fn describe(&self) -> String {
        let days: Vec<&str> = WEEKDAYS
            .iter()
            .zip(self.days)
            .filter_map(|(w, open)| open.then_some(*w))
            .collect();
        format!(
            "{} {}–{}",
            days.join(","),
            self.from.format("%H:%M"),
            self.to.format("%H:%M")
        )
    }
}

/// Reads `send_window.<name>` as `HH:MM` (two digits each, 00:00 to 23:59).
fn time_field(
    whole: &serde_json::Value,
    obj: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<NaiveTime, TimingError> {
    let value = obj.get(name).ok_or_else(|| {
        TimingError::new(
            Code::BadSchema,
            whole.to_string(),
            None,
            format!(
                "`send_window.{name}` is missing: give a local time as \"HH:MM\", e.g. \"09:00\""
            ),
        )
    })?;
    let text = value.as_str().ok_or_else(|| {
        TimingError::new(
            Code::BadSchema,
            value.to_string(),
            None,
            format!("`send_window.{name}` is a string \"HH:MM\", e.g. \"09:00\""),
        )
    })?;
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 5 || b[2] != b':' || !digits(0..2) || !digits(3..5) {
        return Err(TimingError::new(
            Code::BadWindow,
            text,
            Some(0),
            format!("`send_window.{name}` is a local time written \"HH:MM\" (24-hour, two digits each), e.g. \"09:00\""),
        ));
    }
    let (hour, minute): (u32, u32) = (
        text[0..2].parse().unwrap_or(99),
        text[3..5].parse().unwrap_or(99),
    );
    if hour > 23 {
        return Err(TimingError::new(
            Code::BadWindow,
            text,
            Some(0),
            format!(
                "`send_window.{name}`: the hour is 00 to 23 (for the end of the day use \"23:59\")"
            ),
        ));
    }
    NaiveTime::from_hms_opt(hour, minute, 0).ok_or_else(|| {
        TimingError::new(
            Code::BadWindow,
            text,
            Some(3),
            format!("`send_window.{name}`: the minutes are 00 to 59"),
        )
    })
}

/// The channel of an outreach step or task; only SMS has the SMS window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    Email,
    Sms,
    Call,
    LinkedIn,
}

/// What the timing core needs of a contact: its set zone and its phone number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipient {
    /// The contact's zone, when set explicitly.
    pub tz: Option<Zone>,
    /// The contact's phone number (E.164), for zone inference on SMS steps.
    pub phone: Option<String>,
}

/// The zones a step uses (SPEC §2.3 zone rule, §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedZones {
    /// The zone durations, `until` and business days of the step are computed in.
    pub arithmetic: Zone,
    /// The zone the send window is read in; `None` without a send window.
    pub window: Option<Zone>,
    /// SMS only: every zone the SMS window applies in. Empty for other channels; empty for an
    /// SMS means the recipient's zone is unknown (`ZONE_UNKNOWN` at [`next_opening`]).
    pub sms: Vec<Zone>,
}

/// Decides which zones a step uses (SPEC §2.3, §3, §4).
///
/// The contact's zone is its set `tz`, else — for SMS only — the phone's zone when the number
/// maps to exactly one. With `send_window.tz` = `contact` (or no send window) arithmetic and the
/// window use that zone, else the sender's; `sender` and an explicit zone override. For SMS the
/// SMS window applies in the set zone, else in every zone the phone maps to. A phone that is not
/// valid E.164 is refused with `BAD_PHONE` (only on SMS steps, which read it).
pub fn resolve_zones(
    window: Option<&SendWindow>,
    recipient: &Recipient,
    sender: &Zone,
    channel: Channel,
) -> Result<ResolvedZones, TimingError> {
    let sms = match (channel, recipient.tz, &recipient.phone) {
        (Channel::Sms, Some(tz), _) => vec![tz],
        (Channel::Sms, None, Some(phone)) => phone_zones(phone)?.zones,
        _ => Vec::new(),
    };
    let contact = match (recipient.tz, channel, sms.as_slice()) {
        (Some(tz), _, _) => Some(tz),
        (None, Channel::Sms, [only]) => Some(*only),
        _ => None,
    };
    let arithmetic = match window.map(|w| w.zone) {
        Some(WindowZone::Explicit(zone)) => zone,
        Some(WindowZone::Sender) => *sender,
        Some(WindowZone::Contact) | None => contact.unwrap_or(*sender),
    };
    Ok(ResolvedZones {
        arithmetic,
        window: window.map(|_| arithmetic),
        sms,
    })
}

/// One daily window in one zone: the send window or the SMS window in one recipient zone.
struct Daily<'a> {
    zone: Zone,
    from: NaiveTime,
    to: NaiveTime,
    /// The send window (for its days and holidays); `None` for the SMS window (every day).
    send: Option<(&'a SendWindow, &'a Holidays)>,
}

impl Daily<'_> {
    /// The earliest instant at or after `c`, and not after `limit`, inside this window.
    ///
    /// Walks local days from the day before `c` (a fold around midnight can end yesterday's
    /// interval after `c`): each open day's interval is `[to_instant(from), to_instant(to))`,
    /// empty when DST normalization pushes `from` past `to`.
    fn next_open(&self, c: DateTime<Utc>, limit: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let last = self.zone.to_local(limit).date().succ_opt()?;
        let mut day = self.zone.to_local(c).date().pred_opt()?;
        while day <= last {
            if self.send.is_none_or(|(w, h)| w.opens_on(day, h)) {
                let start = self.zone.to_instant(day.and_time(self.from));
                let end = self.zone.to_instant(day.and_time(self.to));
                if start < end && end > c {
                    let open = start.max(c);
                    return (open <= limit).then_some(open);
                }
            }
            day = day.succ_opt()?;
        }
        None
    }

    fn contains(&self, t: DateTime<Utc>) -> bool {
        self.next_open(t, t) == Some(t)
    }
}

/// The windows that apply: the send window (if any) and, for SMS, one SMS window per zone.
/// `Err(ZONE_UNKNOWN)` for an SMS without a recipient zone.
fn windows<'a>(
    window: Option<&'a SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &'a Holidays,
) -> Result<Vec<Daily<'a>>, TimingError> {
    let mut all = Vec::with_capacity(1 + zones.sms.len());
    if let Some(w) = window {
        all.push(Daily {
            zone: zones.window.unwrap_or(zones.arithmetic),
            from: w.from,
            to: w.to,
            send: Some((w, h)),
        });
    }
    if channel == Channel::Sms {
        if zones.sms.is_empty() {
            return Err(TimingError::new(
                Code::ZoneUnknown,
                "",
                None,
                "the SMS recipient has no zone (no `tz`, and the phone number maps to none), so quiet hours cannot be checked: set the contact's `tz`",
            ));
        }
        for zone in &zones.sms {
            if !all.iter().any(|d| d.send.is_none() && d.zone == *zone) {
                all.push(Daily {
                    zone: *zone,
                    from: SMS_FROM,
                    to: SMS_TO,
                    send: None,
                });
            }
        }
    }
    Ok(all)
}

/// The earliest instant in `[t, limit]` inside every window, by jumping each window forward to
/// its next opening until all agree (each jump skips only instants some window excludes).
fn search(t: DateTime<Utc>, windows: &[Daily<'_>], limit: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let mut c = t;
    loop {
        let mut moved = false;
        for w in windows {
            let next = w.next_open(c, limit)?;
            if next > c {
                c = next;
                moved = true;
            }
        }
        if !moved {
            return Some(c);
        }
    }
}

/// The earliest instant at or after `t` when the step may go (SPEC §3 steps 1–2): inside the
/// send window (listed, non-holiday days in its zone) and, for SMS, inside 08:00–21:00 in every
/// recipient zone. Without a send window and not SMS, that is `t`.
///
/// `ZONE_UNKNOWN` for an SMS with no recipient zone, or whose candidate zones' SMS windows never
/// overlap; `NO_OPENING` when the windows never overlap within [`SEARCH_DAYS`] days.
pub fn next_opening(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
) -> Result<DateTime<Utc>, TimingError> {
    let all = windows(window, zones, channel, h)?;
    let limit = t + chrono::Duration::days(SEARCH_DAYS);
    if let Some(open) = search(t, &all, limit) {
        return Ok(open);
    }
    let sms_names = zones
        .sms
        .iter()
        .map(Zone::name)
        .collect::<Vec<_>>()
        .join(", ");
    let sms_only: Vec<Daily<'_>> = all.into_iter().filter(|d| d.send.is_none()).collect();
    if sms_only.len() > 1 && search(t, &sms_only, limit).is_none() {
        return Err(TimingError::new(
            Code::ZoneUnknown,
            sms_names,
            None,
            "the phone number maps to zones so far apart that 08:00–21:00 is never open in all of them at once, so quiet hours cannot be kept: set the contact's `tz`",
        ));
    }
    let send = window.map(|w| {
        format!(
            "the send window ({} in {})",
            w.describe(),
            zones.window.unwrap_or(zones.arithmetic)
        )
    });
    let sms =
        (channel == Channel::Sms).then(|| format!("the SMS window (08:00–21:00 in {sms_names})"));
    let what = match (send, sms) {
        (Some(a), Some(b)) => format!("{a} and {b} never overlap"),
        (Some(a), None) => format!("{a} is closed (holidays)"),
        (None, Some(b)) => format!("{b} never opens"),
        (None, None) => "no window applies".to_string(),
    };
    Err(TimingError::new(
        Code::NoOpening,
        t.to_rfc3339(),
        None,
        format!(
            "{what} within {SEARCH_DAYS} days of {}: widen the send window, or read it in the contact's zone (`\"tz\": \"contact\"`)",
            t.to_rfc3339()
        ),
    ))
}

/// Whether the step may go at `t` (the re-check at execution, SPEC §3 step 4). An SMS with no
/// recipient zone is never open.
pub fn is_open(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
) -> bool {
    windows(window, zones, channel, h).is_ok_and(|all| all.iter().all(|w| w.contains(t)))
}

/// The instant an outreach step is scheduled for (SPEC §3): `t0` = [`next_opening`] of `entry`,
/// plus a delay drawn uniformly from `[0, jitter]` at millisecond granularity by ChaCha8 seeded
/// with `seed` (so `Simulate` and reality agree, §2.7); a result outside the windows is pushed
/// to the next opening at or after it.
///
/// `jitter` is `settings.jitter`, fixed units only; a calendar part is refused with
/// `BAD_DURATION` (the flow validator refuses it earlier).
pub fn schedule(
    entry: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
    jitter: Option<&Duration>,
    seed: u64,
) -> Result<DateTime<Utc>, TimingError> {
    if let Some(j) = jitter.filter(|j| !j.is_fixed()) {
        return Err(TimingError::new(
            Code::BadDuration,
            j.to_string(),
            None,
            "`jitter` takes fixed units only (ms, s, m, h), e.g. \"20m\"; a day or business day is not a fixed length",
        ));
    }
    let t0 = next_opening(entry, window, zones, channel, h)?;
    let max_ms = jitter.map_or(0, |j| j.fixed_ms.min(i64::MAX as u64) as i64);
    if max_ms == 0 {
        return Ok(t0);
    }
    let delay = ChaCha8Rng::seed_from_u64(seed).gen_range(0..=max_ms);
    let t = t0
        .checked_add_signed(chrono::Duration::milliseconds(delay))
        .ok_or_else(|| {
            TimingError::new(
                Code::BadDuration,
                jitter.map(ToString::to_string).unwrap_or_default(),
                None,
                "`jitter` is too large to add to a date: keep it to minutes or hours, e.g. \"20m\"",
            )
        })?;
    if is_open(t, window, zones, channel, h) {
        Ok(t)
    } else {
        next_opening(t, window, zones, channel, h)
    }
}
