//! Send windows, the SMS window, jitter and the zone rule (docs/timing.md, "Zones", "Daylight-saving changes" and "Send windows").
//!
//! An outreach step (or task) may happen only while every window that applies to it is open:
//! the flow's send window (listed weekdays that are not holidays, `from`..`to` in the window's
//! zone) and, for SMS, the fixed SMS window 08:00–21:00 in **every** candidate recipient zone.
//! Each window is a union of half-open intervals `[from, to)` per local day, each bound turned
//! into an instant by docs/timing.md, "Daylight-saving changes" ([`Zone::to_instant`]), so a window whose `from` lies in a DST
//! gap opens when the gap ends. [`next_opening`] finds the earliest instant at or after `t` in
//! the intersection by jumping from interval to interval (never minute stepping), and gives up
//! after [`SEARCH_DAYS`] days with `NO_OPENING` (or `ZONE_UNKNOWN` when the SMS candidate zones
//! alone never overlap).

use crate::code::Code;
use crate::timing::duration::Duration;
use crate::timing::error::TimingError;
use crate::timing::holidays::Holidays;
use crate::timing::phone::phone_zones;
use crate::timing::quiet::{PlaceRule, QuietHours};
use crate::timing::zone::Zone;
use chrono::{DateTime, Datelike, NaiveTime, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::sync::Arc;

/// The channel decides whether the SMS window applies; named here too, where the windows are.
pub use crate::timing::channel::Channel;

/// How far ahead [`next_opening`] looks before refusing with `NO_OPENING` (docs/timing.md, "Send windows").
pub const SEARCH_DAYS: i64 = 31;

/// The SMS window: 08:00 to 21:00 in the recipient's zone, every day (docs/timing.md, "Send windows").
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

/// What the timing core needs of a contact: its set zone and its phone number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipient {
    /// The contact's zone, when set explicitly.
    pub tz: Option<Zone>,
    /// The contact's phone number (E.164), for zone inference on SMS steps.
    pub phone: Option<String>,
}

/// The zones a step uses (docs/timing.md, "Zones" and "Send windows").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedZones {
    /// The zone durations, `until` and business days of the step are computed in.
    pub arithmetic: Zone,
    /// The zone the send window is read in; `None` without a send window.
    pub window: Option<Zone>,
    /// SMS and calls ([`Channel::has_quiet_hours`]): every zone quiet hours apply in. Empty for
    /// other channels; empty for an SMS or call means the recipient's zone is unknown
    /// (`ZONE_UNKNOWN` at [`next_opening`]).
    pub sms: Vec<Zone>,
    /// The quiet-hours policy's place rule for the number (`US-FL`), applied in every zone of
    /// `sms` on top of the federal 08:00–21:00 (docs/timing.md, "Holiday calendars and quiet hours").
    pub place: Option<Arc<PlaceRule>>,
    /// A call to a contact with neither a phone number nor a zone: nobody is dialled by
    /// nudge, so there are no quiet hours to keep (an SMS without a zone is held instead).
    pub no_number: bool,
}

/// What kept a step past the instant it asked for: the window part of Explain's
/// [`crate::engine::WaitReason`], recorded on the run and in the journey.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosedBy {
    /// The send window is closed (outside its hours or days).
    Window,
    /// The send window is closed for a holiday.
    Holiday,
    /// Quiet hours: the federal 08:00–21:00, or a place rule (then named).
    QuietHours,
}

impl ClosedBy {
    /// The wire spelling, as Explain's reasons spell them (docs/operations.md): `window`, `holiday`, `quiet_hours`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClosedBy::Window => "window",
            ClosedBy::Holiday => "holiday",
            ClosedBy::QuietHours => "quiet_hours",
        }
    }
}

/// An opening and what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// The earliest instant at or after the asked one when the step may go.
    pub at: DateTime<Utc>,
    /// Why it is later than asked; `None` when it is not.
    pub reason: Option<ClosedBy>,
    /// The place rule that decided (`US-FL`), when one did.
    pub rule: Option<String>,
}

/// Decides which zones a step uses (docs/timing.md, "Zones" and "Send windows").
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
    resolve_zones_with(window, recipient, sender, channel, &QuietHours::federal())
}

/// [`resolve_zones`] under a quiet-hours policy: SMS and calls also get the policy's place rule
/// for the number (docs/timing.md, "Holiday calendars and quiet hours"). Calls read the phone as SMS do: quiet hours apply in every
/// candidate zone, and a single candidate is the contact's inferred zone.
pub fn resolve_zones_with(
    window: Option<&SendWindow>,
    recipient: &Recipient,
    sender: &Zone,
    channel: Channel,
    quiet: &QuietHours,
) -> Result<ResolvedZones, TimingError> {
    let quiet_hours = channel.has_quiet_hours();
    let phone = match (quiet_hours, &recipient.phone) {
        (true, Some(phone)) => Some(phone_zones(phone)?),
        _ => None,
    };
    let sms = match (quiet_hours, recipient.tz, &phone) {
        (true, Some(tz), _) => vec![tz],
        (true, None, Some(found)) => found.zones.clone(),
        _ => Vec::new(),
    };
    let place = phone.as_ref().and_then(|p| quiet.place_rule(&p.e164));
    let no_number = channel == Channel::Call && recipient.tz.is_none() && phone.is_none();
    let contact = match (recipient.tz, quiet_hours, sms.as_slice()) {
        (Some(tz), _, _) => Some(tz),
        (None, true, [only]) => Some(*only),
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
        place,
        no_number,
    })
}

/// A found interval: `(asked at, start, end)`.
type Found = (DateTime<Utc>, DateTime<Utc>, DateTime<Utc>);

/// Which rule a daily window stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The flow's send window.
    Send,
    /// The federal quiet hours, 08:00–21:00, in one recipient zone.
    Federal,
    /// A place rule (`US-FL`) in one recipient zone.
    Place,
}

/// One daily window in one zone: the send window, or a quiet-hours rule in one recipient zone.
struct Daily<'a> {
    zone: Zone,
    /// Open hours per weekday (Monday first); `None` is a closed day.
    hours: [Option<(NaiveTime, NaiveTime)>; 7],
    /// Dates it is closed on: the send window's holidays, a place rule's no-call days.
    closed: Option<&'a Holidays>,
    kind: Kind,
    /// The last interval found, `(asked at, start, end)`: the search asks again and again at
    /// later instants, and until `end` the answer comes from the same interval.
    last: Cell<Option<Found>>,
}

impl<'a> Daily<'a> {
    fn new(
        zone: Zone,
        hours: [Option<(NaiveTime, NaiveTime)>; 7],
        closed: Option<&'a Holidays>,
        kind: Kind,
    ) -> Self {
        Daily {
            zone,
            hours,
            closed,
            kind,
            last: Cell::new(None),
        }
    }

    fn every_day(zone: Zone, from: NaiveTime, to: NaiveTime, kind: Kind) -> Self {
        Daily::new(zone, [Some((from, to)); 7], None, kind)
    }

    /// The earliest instant at or after `c`, and not after `limit`, inside this window.
    ///
    /// Walks local days from the day before `c` (a fold around midnight can end yesterday's
    /// interval after `c`): each open day's interval is `[to_instant(from), to_instant(to))`,
    /// empty when DST normalization pushes `from` past `to`. Intervals come in day order, so the
    /// first one that ends after `c` holds the answer.
    fn next_open(&self, c: DateTime<Utc>, limit: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let within = |open: DateTime<Utc>| (open <= limit).then_some(open);
        if let Some((asked, start, end)) = self.last.get() {
            if asked <= c && c < end {
                return within(start.max(c));
            }
        }
        // Local dates run at most a day ahead of or behind elapsed time.
        let days = (limit - c).num_days().max(0) + 3;
        let mut day = self.zone.to_local(c).date().pred_opt()?;
        for _ in 0..=days {
            let hours = self.hours[day.weekday().num_days_from_monday() as usize];
            if let Some((from, to)) = hours.filter(|_| self.closed.is_none_or(|h| !h.contains(day)))
            {
                let start = self.zone.to_instant(day.and_time(from));
                let end = self.zone.to_instant(day.and_time(to));
                if start < end && end > c {
                    self.last.set(Some((c, start, end)));
                    return within(start.max(c));
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

/// Which of the rules that apply to take into a search (all of them but when explaining).
#[derive(Debug, Clone, Copy)]
struct Parts {
    send: bool,
    holidays: bool,
    federal: bool,
    place: bool,
}

const ALL_PARTS: Parts = Parts {
    send: true,
    holidays: true,
    federal: true,
    place: true,
};

/// The windows that apply: the send window (if any) and, for SMS and calls, the quiet-hours
/// windows in every recipient zone (federal, and the place rule's). `Err(ZONE_UNKNOWN)` for an
/// SMS or call without a recipient zone.
fn windows<'a>(
    window: Option<&'a SendWindow>,
    zones: &'a ResolvedZones,
    channel: Channel,
    h: &'a Holidays,
    parts: Parts,
) -> Result<Vec<Daily<'a>>, TimingError> {
    let mut all = Vec::with_capacity(1 + 2 * zones.sms.len());
    if let Some(w) = window.filter(|_| parts.send) {
        let hours = std::array::from_fn(|i| w.days[i].then_some((w.from, w.to)));
        all.push(Daily::new(
            zones.window.unwrap_or(zones.arithmetic),
            hours,
            parts.holidays.then_some(h),
            Kind::Send,
        ));
    }
    if channel.has_quiet_hours() && !(channel == Channel::Call && zones.no_number) {
        if zones.sms.is_empty() {
            let what = if channel == Channel::Call {
                "call"
            } else {
                "SMS"
            };
            return Err(TimingError::new(
                Code::ZoneUnknown,
                "",
                None,
                format!("the {what} recipient has no zone (no `tz`, and the phone number maps to none), so quiet hours cannot be checked: set the contact's `tz`"),
            ));
        }
        for zone in &zones.sms {
            if parts.federal
                && !all
                    .iter()
                    .any(|d| d.kind == Kind::Federal && d.zone == *zone)
            {
                all.push(Daily::every_day(*zone, SMS_FROM, SMS_TO, Kind::Federal));
            }
            if let Some(rule) = zones.place.as_deref().filter(|_| parts.place) {
                if !all.iter().any(|d| d.kind == Kind::Place && d.zone == *zone) {
                    let closed = (!rule.no_call.is_empty()).then_some(&rule.no_call);
                    all.push(Daily::new(*zone, rule.hours, closed, Kind::Place));
                }
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

/// The earliest instant at or after `t` when the step may go (steps 1–2 of docs/timing.md, "Send windows"): inside the
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
    let all = windows(window, zones, channel, h, ALL_PARTS)?;
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
    let sms_only: Vec<Daily<'_>> = all.into_iter().filter(|d| d.kind != Kind::Send).collect();
    if sms_only.len() > 1 && search(t, &sms_only, limit).is_none() {
        return Err(TimingError::new(
            Code::ZoneUnknown,
            sms_names,
            None,
            "the phone number maps to zones so far apart that its quiet hours are never open in all of them at once, so they cannot be kept: set the contact's `tz`",
        ));
    }
    let send = window.map(|w| {
        format!(
            "the send window ({} in {})",
            w.describe(),
            zones.window.unwrap_or(zones.arithmetic)
        )
    });
    let rule = zones
        .place
        .as_ref()
        .map(|r| format!(" and {}", r.rule))
        .unwrap_or_default();
    let sms = channel
        .has_quiet_hours()
        .then(|| format!("quiet hours (08:00–21:00{rule} in {sms_names})"));
    let fix = match window.map(|w| w.zone) {
        Some(WindowZone::Contact) | None => "widen the send window or list more days",
        Some(_) => {
            "widen the send window, or read it in the contact's zone (`\"tz\": \"contact\"`)"
        }
    };
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
            "{what} within {SEARCH_DAYS} days of {}: {fix}",
            t.to_rfc3339()
        ),
    ))
}

/// Whether the step may go at `t` (the re-check at execution, docs/timing.md, "Send windows"). An SMS with no
/// recipient zone is never open.
pub fn is_open(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
) -> bool {
    windows(window, zones, channel, h, ALL_PARTS).is_ok_and(|all| all.iter().all(|w| w.contains(t)))
}

/// [`next_opening`], and what decided it (for the journey, Explain and `nudge timing`): a
/// place rule (named) when the answer is later than under the federal rule alone; quiet hours
/// when later than under the send window alone; a holiday when later than the send window
/// without holidays; else the send window. `reason` is `None` when the step may go at `t`.
pub fn explain_opening(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
) -> Result<Opening, TimingError> {
    let at = next_opening(t, window, zones, channel, h)?;
    let mut out = Opening {
        at,
        reason: None,
        rule: None,
    };
    if at <= t {
        return Ok(out);
    }
    let limit = t + chrono::Duration::days(SEARCH_DAYS);
    // Each subset has fewer rules than the whole, so it opens no later; `at` when it never
    // opens cannot happen, and is the safe answer if it did.
    let without = |parts: Parts| -> DateTime<Utc> {
        windows(window, zones, channel, h, parts)
            .ok()
            .and_then(|w| search(t, &w, limit))
            .unwrap_or(at)
    };
    let federal_only = Parts {
        place: false,
        ..ALL_PARTS
    };
    let send_only = Parts {
        federal: false,
        place: false,
        ..ALL_PARTS
    };
    let no_holidays = Parts {
        holidays: false,
        ..send_only
    };
    if let Some(rule) = zones.place.as_ref().filter(|_| at > without(federal_only)) {
        out.reason = Some(ClosedBy::QuietHours);
        out.rule = Some(rule.rule.clone());
    } else if channel.has_quiet_hours() && at > without(send_only) {
        out.reason = Some(ClosedBy::QuietHours);
    } else if at > without(no_holidays) {
        out.reason = Some(ClosedBy::Holiday);
    } else {
        out.reason = Some(ClosedBy::Window);
    }
    Ok(out)
}

/// The instant an outreach step is scheduled for (docs/timing.md, "Send windows"): `t0` = [`next_opening`] of `entry`,
/// plus a delay drawn uniformly from `[0, jitter]` at millisecond granularity by ChaCha8 seeded
/// with `seed` (so `Simulate` and reality agree, docs/timing.md, "Fixed once"); a result outside the windows is pushed
/// to the next opening at or after it, or — when there is none within [`SEARCH_DAYS`] days of
/// it — falls back to `t0`.
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
    schedule_explained(entry, window, zones, channel, h, jitter, seed).map(|(at, _)| at)
}

/// [`schedule`] with [`explain_opening`] of the same entry, its next opening searched once:
/// what the engine plans every outreach step with ([`schedule`] is this without the why).
pub fn schedule_explained(
    entry: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
    jitter: Option<&Duration>,
    seed: u64,
) -> Result<(DateTime<Utc>, Opening), TimingError> {
    check_jitter(jitter)?;
    let opening = explain_opening(entry, window, zones, channel, h)?;
    let at = jittered(opening.at, window, zones, channel, h, jitter, seed)?;
    Ok((at, opening))
}

/// A calendar `jitter` refused, as [`schedule`] refuses it.
fn check_jitter(jitter: Option<&Duration>) -> Result<(), TimingError> {
    match jitter.filter(|j| !j.is_fixed()) {
        Some(j) => Err(TimingError::new(
            Code::BadDuration,
            j.to_string(),
            None,
            "`jitter` takes fixed units only (ms, s, m, h), e.g. \"20m\"; a day or business day is not a fixed length",
        )),
        None => Ok(()),
    }
}

/// [`schedule`] from its next opening `t0`: the jitter added, pushed to an opening.
fn jittered(
    t0: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
    jitter: Option<&Duration>,
    seed: u64,
) -> Result<DateTime<Utc>, TimingError> {
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
        return Ok(t);
    }
    // Pushed past the last opening within reach (the windows stop overlapping after a DST
    // change, say): t0 is open and the step is due, so go without the jitter rather than refuse.
    Ok(next_opening(t, window, zones, channel, h).unwrap_or(t0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
    }

    fn window(days: &[&str], from: &str, to: &str, tz: &str) -> SendWindow {
        SendWindow::from_json(&json!({"days": days, "from": from, "to": to, "tz": tz})).unwrap()
    }

    const WEEK: [&str; 5] = ["mon", "tue", "wed", "thu", "fri"];
    const AU: [&str; 8] = [
        "Australia/Adelaide",
        "Australia/Brisbane",
        "Australia/Eucla",
        "Australia/Lord_Howe",
        "Australia/Perth",
        "Australia/Sydney",
        // tzdata links: Indian/Christmas and Indian/Cocos name these zones.
        "Asia/Bangkok",
        "Asia/Yangon",
    ];

    /// One `next_opening` question: (name, t, send window (days, from, to, zone), SMS zones,
    /// holidays, expected answer or None for NO_OPENING). Every expected answer was computed
    /// independently by minute stepping over the documented definition with Python `zoneinfo`
    /// (`fold=0` wall clock -> instant), not by this code.
    type Case = (
        &'static str,
        &'static str,
        Option<(
            &'static [&'static str],
            &'static str,
            &'static str,
            &'static str,
        )>,
        &'static [&'static str],
        &'static [&'static str],
        Option<&'static str>,
    );

    const CASES: &[Case] = &[
        (
            "weekend -> Monday 09:00 CEST",
            "2026-03-28T12:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-03-30T07:00:00Z"),
        ),
        (
            "Prague spring-forward: 02:30 opens at 03:30 CEST",
            "2026-03-29T00:00:00Z",
            Some((&["sun"], "02:30", "05:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-03-29T01:30:00Z"),
        ),
        (
            "Prague fall-back: first 02:30",
            "2026-10-24T23:00:00Z",
            Some((&["sun"], "02:30", "04:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-10-25T00:30:00Z"),
        ),
        (
            "Prague fall-back: second 02:15 is inside",
            "2026-10-25T01:15:00Z",
            Some((&["sun"], "02:30", "04:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-10-25T01:15:00Z"),
        ),
        (
            "New York gap moves both bounds",
            "2026-03-08T05:00:00Z",
            Some((&["sun"], "02:15", "02:45", "America/New_York")),
            &[],
            &[],
            Some("2026-03-08T07:15:00Z"),
        ),
        (
            "New York gap empties the day",
            "2026-03-08T05:00:00Z",
            Some((&["sun"], "02:30", "03:15", "America/New_York")),
            &[],
            &[],
            Some("2026-03-15T06:30:00Z"),
        ),
        (
            "Sydney spring-forward",
            "2026-10-03T12:00:00Z",
            Some((&["sun"], "02:00", "02:30", "Australia/Sydney")),
            &[],
            &[],
            Some("2026-10-03T16:00:00Z"),
        ),
        (
            "Sydney fall-back: first occurrence",
            "2026-04-04T14:00:00Z",
            Some((&["sun"], "02:30", "02:45", "Australia/Sydney")),
            &[],
            &[],
            Some("2026-04-04T15:30:00Z"),
        ),
        (
            "Lord Howe half-hour gap",
            "2026-10-03T12:00:00Z",
            Some((&["sun"], "02:00", "03:00", "Australia/Lord_Howe")),
            &[],
            &[],
            Some("2026-10-03T15:30:00Z"),
        ),
        (
            "Tokyo recipient, New York 09-17 window",
            "2026-06-01T00:00:00Z",
            Some((&WEEK, "09:00", "17:00", "America/New_York")),
            &["Asia/Tokyo"],
            &[],
            None,
        ),
        (
            "Australian mobile, summer",
            "2026-11-10T00:00:00Z",
            None,
            &AU,
            &[],
            Some("2026-11-10T01:30:00Z"),
        ),
        (
            "Australian mobile, winter",
            "2026-07-10T12:00:00Z",
            None,
            &AU,
            &[],
            Some("2026-07-11T01:30:00Z"),
        ),
        (
            "holidays close the send window",
            "2026-12-23T17:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &[],
            &["2026-12-24", "2026-12-25"],
            Some("2026-12-28T08:00:00Z"),
        ),
        (
            "holidays do not close the SMS window",
            "2026-12-24T10:00:00Z",
            None,
            &["Europe/Prague"],
            &["2026-12-24", "2026-12-25"],
            Some("2026-12-24T10:00:00Z"),
        ),
        (
            "holidays with both windows",
            "2026-12-24T10:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &["Europe/Prague"],
            &["2026-12-24", "2026-12-25"],
            Some("2026-12-28T08:00:00Z"),
        ),
        (
            "Prague window, New York recipient",
            "2026-12-07T08:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &["America/New_York"],
            &[],
            Some("2026-12-07T13:00:00Z"),
        ),
        (
            "Prague window, New York recipient, between the DST changes",
            "2026-03-10T07:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &["America/New_York"],
            &[],
            Some("2026-03-10T12:00:00Z"),
        ),
        (
            "SMS alone after 21:00",
            "2026-06-01T20:30:00Z",
            None,
            &["Europe/Prague"],
            &[],
            Some("2026-06-02T06:00:00Z"),
        ),
        (
            "Kathmandu window, Chatham recipient",
            "2026-06-01T00:00:00Z",
            Some((&WEEK, "09:00", "09:30", "Asia/Kathmandu")),
            &["Pacific/Chatham"],
            &[],
            Some("2026-06-01T03:15:00Z"),
        ),
        (
            "inside: the same instant",
            "2026-06-03T10:15:30Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-06-03T10:15:30Z"),
        ),
        (
            "`to` is exclusive",
            "2026-06-03T15:00:00Z",
            Some((&WEEK, "09:00", "17:00", "Europe/Prague")),
            &[],
            &[],
            Some("2026-06-04T07:00:00Z"),
        ),
    ];

    #[test]
    fn next_opening_table() {
        for (name, t, win, sms, holidays, want) in CASES {
            let w = win.map(|(days, from, to, tz)| window(days, from, to, tz));
            let channel = if sms.is_empty() {
                Channel::Email
            } else {
                Channel::Sms
            };
            let zones = ResolvedZones {
                arithmetic: zone("UTC"),
                window: w.as_ref().map(|w| match w.zone {
                    WindowZone::Explicit(z) => z,
                    _ => unreachable!("cases use explicit zones"),
                }),
                sms: sms.iter().map(|z| zone(z)).collect(),
                place: None,
                no_number: false,
            };
            let h = Holidays::parse(holidays).unwrap();
            let got = next_opening(at(t), w.as_ref(), &zones, channel, &h);
            match want {
                Some(want) => {
                    let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(got, at(want), "{name}");
                    assert!(
                        is_open(got, w.as_ref(), &zones, channel, &h),
                        "{name}: not open"
                    );
                    if got > at(t) {
                        let just_before = got - chrono::Duration::milliseconds(1);
                        assert!(
                            !is_open(just_before, w.as_ref(), &zones, channel, &h),
                            "{name}"
                        );
                    }
                }
                None => {
                    let err = got.expect_err(name);
                    assert_eq!(err.code, Code::NoOpening, "{name}: {err}");
                    assert!(err.hint.contains("never overlap"), "{name}: {}", err.hint);
                }
            }
        }
    }

    #[test]
    fn multi_zone_sms() {
        // US toll-free: every NANPA zone (28 distinct tzdata zones once links like
        // America/Anguilla -> America/Puerto_Rico are resolved), Pago Pago (-11) to Guam (+10); 08:00-21:00 holds in
        // all of them only 22:00Z-23:30Z in June (St John's is the last to open). Expected
        // values from Python zoneinfo by minute stepping.
        let sender = zone("Europe/Prague");
        let recipient = Recipient {
            tz: None,
            phone: Some("+18002530000".into()),
        };
        let zones = resolve_zones(None, &recipient, &sender, Channel::Sms).unwrap();
        assert_eq!(zones.sms.len(), 28);
        assert_eq!(zones.arithmetic, sender);
        let h = Holidays::none();
        let t = at("2026-06-01T00:00:00Z");
        assert_eq!(
            next_opening(t, None, &zones, Channel::Sms, &h),
            Ok(at("2026-06-01T22:00:00Z"))
        );
        let winter = at("2026-12-01T00:00:00Z");
        assert_eq!(
            next_opening(winter, None, &zones, Channel::Sms, &h),
            Ok(winter)
        );

        // Russian mobile: every +7 zone, Bucharest to Kamchatka.
        let recipient = Recipient {
            tz: None,
            phone: Some("+79161234567".into()),
        };
        let zones = resolve_zones(None, &recipient, &sender, Channel::Sms).unwrap();
        assert_eq!(zones.sms.len(), 16);
        let t = at("2026-06-01T12:00:00Z");
        assert_eq!(
            next_opening(t, None, &zones, Channel::Sms, &h),
            Ok(at("2026-06-02T05:00:00Z"))
        );
        let w = window(&WEEK, "09:00", "17:00", "Europe/Prague");
        let zones = resolve_zones(Some(&w), &recipient, &sender, Channel::Sms).unwrap();
        assert_eq!(
            next_opening(t, Some(&w), &zones, Channel::Sms, &h),
            Ok(at("2026-06-02T07:00:00Z"))
        );
    }

    #[test]
    fn candidate_zones_that_never_overlap_are_zone_unknown() {
        // Three zones eight hours apart: no instant is 08:00-21:00 in all three.
        let zones = ResolvedZones {
            arithmetic: zone("UTC"),
            window: None,
            sms: ["UTC", "Asia/Shanghai", "America/Los_Angeles"]
                .iter()
                .map(|z| zone(z))
                .collect(),
            place: None,
            no_number: false,
        };
        let err = next_opening(
            at("2026-06-01T00:00:00Z"),
            None,
            &zones,
            Channel::Sms,
            &Holidays::none(),
        )
        .unwrap_err();
        assert_eq!(err.code, Code::ZoneUnknown);
        assert!(err.text.contains("Asia/Shanghai"), "{}", err.text);
    }

    #[test]
    fn sms_without_a_zone_is_held() {
        for phone in [None, Some("+80012345678".to_string())] {
            let recipient = Recipient { tz: None, phone };
            let zones =
                resolve_zones(None, &recipient, &zone("Europe/Prague"), Channel::Sms).unwrap();
            assert!(zones.sms.is_empty());
            let t = at("2026-06-01T10:00:00Z");
            let err = next_opening(t, None, &zones, Channel::Sms, &Holidays::none()).unwrap_err();
            assert_eq!(err.code, Code::ZoneUnknown);
            assert!(!is_open(t, None, &zones, Channel::Sms, &Holidays::none()));
            // The same contact may still be emailed at any time.
            let email =
                resolve_zones(None, &recipient, &zone("Europe/Prague"), Channel::Email).unwrap();
            assert_eq!(
                next_opening(t, None, &email, Channel::Email, &Holidays::none()),
                Ok(t)
            );
        }
    }

    #[test]
    fn zone_rule() {
        let prague = zone("Europe/Prague");
        let denver = zone("America/Denver");
        let contact_win = window(&WEEK, "09:00", "17:00", "contact");
        let sender_win = window(&WEEK, "09:00", "17:00", "sender");
        let tokyo_win = window(&WEEK, "09:00", "17:00", "Asia/Tokyo");
        let set = Recipient {
            tz: Some(zone("America/New_York")),
            phone: Some("+13035551234".into()),
        };
        let phone_only = Recipient {
            tz: None,
            phone: Some("+1 303 555 1234".into()),
        };
        let au_mobile = Recipient {
            tz: None,
            phone: Some("+61412345678".into()),
        };
        let nobody = Recipient::default();
        let ny = zone("America/New_York");
        let au: Vec<Zone> = AU.iter().map(|z| zone(z)).collect();

        // (window, recipient, channel) -> (arithmetic, window zone, sms zones)
        type ZoneCase<'a> = (
            Option<&'a SendWindow>,
            &'a Recipient,
            Channel,
            Zone,
            Option<Zone>,
            Vec<Zone>,
        );
        let cases: Vec<ZoneCase> = vec![
            (
                Some(&contact_win),
                &set,
                Channel::Email,
                ny,
                Some(ny),
                vec![],
            ),
            (
                Some(&contact_win),
                &set,
                Channel::Sms,
                ny,
                Some(ny),
                vec![ny],
            ),
            // Calls have quiet hours too (docs/timing.md, "Holiday calendars and quiet hours"), in the same zones as SMS.
            (None, &set, Channel::Call, ny, None, vec![ny]),
            (None, &phone_only, Channel::Call, denver, None, vec![denver]),
            (
                Some(&contact_win),
                &au_mobile,
                Channel::Call,
                prague,
                Some(prague),
                au.clone(),
            ),
            // Inferred from the phone for SMS and calls only; an email step uses the sender's
            // zone.
            (
                Some(&contact_win),
                &phone_only,
                Channel::Sms,
                denver,
                Some(denver),
                vec![denver],
            ),
            (
                Some(&contact_win),
                &phone_only,
                Channel::Email,
                prague,
                Some(prague),
                vec![],
            ),
            // Several candidates: the sender's zone for arithmetic, all of them for SMS.
            (
                Some(&contact_win),
                &au_mobile,
                Channel::Sms,
                prague,
                Some(prague),
                au.clone(),
            ),
            (
                Some(&sender_win),
                &set,
                Channel::Sms,
                prague,
                Some(prague),
                vec![ny],
            ),
            (
                Some(&tokyo_win),
                &set,
                Channel::Sms,
                zone("Asia/Tokyo"),
                Some(zone("Asia/Tokyo")),
                vec![ny],
            ),
            (
                Some(&contact_win),
                &nobody,
                Channel::Linkedin,
                prague,
                Some(prague),
                vec![],
            ),
        ];
        for (i, (w, r, channel, arithmetic, window_zone, sms)) in cases.into_iter().enumerate() {
            let got = resolve_zones(w, r, &prague, channel).unwrap();
            assert_eq!(
                got,
                ResolvedZones {
                    arithmetic,
                    window: window_zone,
                    sms,
                    place: None,
                    no_number: false,
                },
                "case {i}"
            );
        }

        let bad = Recipient {
            tz: None,
            phone: Some("3035551234".into()),
        };
        assert_eq!(
            resolve_zones(None, &bad, &prague, Channel::Sms)
                .unwrap_err()
                .code,
            Code::BadPhone
        );
        // Only SMS steps read the phone.
        assert!(resolve_zones(None, &bad, &prague, Channel::Email).is_ok());
    }

    #[test]
    fn send_window_from_json() {
        let w =
            SendWindow::from_json(&json!({"days": ["MON", "Fri"], "from": "08:30", "to": "17:45"}))
                .unwrap();
        assert_eq!(w.days, [true, false, false, false, true, false, false]);
        assert_eq!(w.from, NaiveTime::from_hms_opt(8, 30, 0).unwrap());
        assert_eq!(w.to, NaiveTime::from_hms_opt(17, 45, 0).unwrap());
        assert_eq!(w.zone, WindowZone::Contact);
        assert_eq!(
            window(&["sun"], "00:00", "23:59", "sender").zone,
            WindowZone::Sender
        );
        assert_eq!(
            window(&["sun"], "00:00", "23:59", "+05:45").zone,
            WindowZone::Explicit(zone("+05:45"))
        );

        for (v, code, needle) in [
            (
                json!({"days": [], "from": "09:00", "to": "17:00"}),
                Code::BadWindow,
                "empty",
            ),
            (
                json!({"from": "09:00", "to": "17:00"}),
                Code::BadWindow,
                "days` is missing",
            ),
            (
                json!({"days": ["monday"], "from": "09:00", "to": "17:00"}),
                Code::BadWindow,
                "three letters",
            ),
            (
                json!({"days": ["mon"], "from": "17:00", "to": "09:00"}),
                Code::BadWindow,
                "before `to`",
            ),
            (
                json!({"days": ["mon"], "from": "09:00", "to": "09:00"}),
                Code::BadWindow,
                "before `to`",
            ),
            (
                json!({"days": ["mon"], "from": "9:00", "to": "17:00"}),
                Code::BadWindow,
                "HH:MM",
            ),
            (
                json!({"days": ["mon"], "from": "24:00", "to": "23:00"}),
                Code::BadWindow,
                "00 to 23",
            ),
            (
                json!({"days": ["mon"], "from": "09:60", "to": "17:00"}),
                Code::BadWindow,
                "00 to 59",
            ),
            (
                json!({"days": ["mon"], "from": "09:00", "to": "17:00", "tz": "CET"}),
                Code::BadTz,
                "abbreviation",
            ),
            (
                json!({"days": ["mon"], "from": "09:00", "to": "17:00", "tz": "europe/prague"}),
                Code::BadTz,
                "Europe/Prague",
            ),
            (
                json!({"days": ["mon"], "from": "09:00", "to": "17:00", "zone": "UTC"}),
                Code::BadSchema,
                "not a field",
            ),
            (
                json!({"days": ["mon"], "to": "17:00"}),
                Code::BadSchema,
                "from` is missing",
            ),
            (
                json!({"days": "mon", "from": "09:00", "to": "17:00"}),
                Code::BadSchema,
                "list of weekdays",
            ),
            (
                json!({"days": ["mon"], "from": 9, "to": "17:00"}),
                Code::BadSchema,
                "HH:MM",
            ),
            (json!(["mon"]), Code::BadSchema, "object"),
        ] {
            let err = SendWindow::from_json(&v).unwrap_err();
            assert_eq!(err.code, code, "{v}: {err}");
            assert!(err.hint.contains(needle), "{v}: {}", err.hint);
        }
    }

    #[test]
    fn jitter_is_seeded_bounded_and_pushed_back_inside() {
        let w = window(&WEEK, "09:00", "17:00", "Europe/Prague");
        let zones = ResolvedZones {
            arithmetic: zone("Europe/Prague"),
            window: Some(zone("Europe/Prague")),
            sms: vec![],
            place: None,
            no_number: false,
        };
        let h = Holidays::none();
        let jitter = Duration::parse("20m").unwrap();
        // Wednesday 16:50 CEST: ten minutes left, so a delay over ten minutes moves to Thursday 09:00.
        let entry = at("2026-06-03T14:50:00Z");
        let mut inside = 0;
        let mut pushed = 0;
        for seed in 0..200 {
            let a = schedule(
                entry,
                Some(&w),
                &zones,
                Channel::Email,
                &h,
                Some(&jitter),
                seed,
            )
            .unwrap();
            let b = schedule(
                entry,
                Some(&w),
                &zones,
                Channel::Email,
                &h,
                Some(&jitter),
                seed,
            )
            .unwrap();
            assert_eq!(a, b, "same seed, same answer");
            assert!(is_open(a, Some(&w), &zones, Channel::Email, &h));
            if a < at("2026-06-03T15:00:00Z") {
                inside += 1;
                assert_eq!(
                    a.timestamp_subsec_micros() % 1000,
                    0,
                    "millisecond granularity"
                );
            } else {
                pushed += 1;
                assert_eq!(a, at("2026-06-04T07:00:00Z"));
            }
        }
        // U[0, 20m] lands in the first 10 minutes about half the time.
        assert!(
            (60..140).contains(&inside) && inside + pushed == 200,
            "{inside} inside"
        );
        assert_eq!(
            schedule(entry, Some(&w), &zones, Channel::Email, &h, None, 7),
            Ok(entry)
        );
        let bad = Duration::parse("1d").unwrap();
        let err = schedule(entry, Some(&w), &zones, Channel::Email, &h, Some(&bad), 7).unwrap_err();
        assert_eq!(err.code, Code::BadDuration);
    }
}
