//! TEMPORARY seam to the timing core while branches `timing` and `windows` are being built
//! (TIMING-API.md). The interpreter calls timing only through this module; when those branches
//! land, every item here becomes a one-line delegation or re-export and the simplified bodies
//! below are deleted. Nothing here is meant to outlive the merge: calendar patterns, holidays
//! and explicit window zones are not modelled in these stand-ins.

use crate::code::Code;
use crate::flow::model::{Duration, Holidays, SendWindow, Until};
use crate::timing::{phone_zones, TimingError, Zone};
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, NaiveTime, Timelike, Utc};
use rand::{Rng, SeedableRng};

/// `t` plus `d` in `zone` (SPEC §2.1).
pub fn add_to(d: &Duration, t: DateTime<Utc>, zone: &Zone, _h: &Holidays) -> DateTime<Utc> {
    let base = if d.is_fixed() {
        t
    } else {
        let local = zone.to_local(t);
        let mut date = local.date();
        date = date
            .checked_add_months(Months::new(d.years * 12 + d.months))
            .unwrap_or(date);
        date = date + Days::new(u64::from(d.weeks) * 7 + u64::from(d.days));
        date = add_business_days(date, d.business_days);
        zone.to_instant(date.and_time(local.time()))
    };
    base + chrono::Duration::milliseconds(d.fixed_ms as i64)
}

fn add_business_days(mut date: NaiveDate, n: u32) -> NaiveDate {
    let mut left = n;
    while left > 0 {
        date = date + Days::new(1);
        if date.weekday().num_days_from_monday() < 5 {
            left -= 1;
        }
    }
    date
}

/// An `until` resolved at `now` in `zone` (may be in the past).
pub fn resolve(u: &Until, now: DateTime<Utc>, zone: &Zone, _h: &Holidays) -> DateTime<Utc> {
    match u {
        Until::Absolute(t) => t.with_timezone(&Utc),
        Until::WallClock(local) => zone.to_instant(*local),
        Until::Offset {
            days,
            business,
            time,
        } => {
            let today = zone.to_local(now).date();
            let date = if *business {
                add_business_days(today, *days)
            } else {
                today + Days::new(u64::from(*days))
            };
            zone.to_instant(date.and_time(*time))
        }
        Until::Pattern(_) => now,
    }
}

/// An outreach or task channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Email,
    Sms,
    Call,
    LinkedIn,
}

/// The contact as the zone rule sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    pub tz: Option<Zone>,
    pub phone: Option<String>,
}

/// The zones a step uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedZones {
    pub arithmetic: Zone,
    pub window: Option<Zone>,
    pub sms: Vec<Zone>,
}

fn window_zone_is(window: &SendWindow, name: &str) -> bool {
    format!("{:?}", window.zone) == name
}

/// SPEC §2.3 and §4.
pub fn resolve_zones(
    window: Option<&SendWindow>,
    recipient: &Recipient,
    sender: &Zone,
    channel: Channel,
) -> Result<ResolvedZones, TimingError> {
    let inferred: Vec<Zone> = match (&recipient.tz, &recipient.phone) {
        (Some(z), _) => vec![*z],
        (None, Some(p)) => phone_zones(p)?.zones,
        (None, None) => Vec::new(),
    };
    let contact_zone = match (&recipient.tz, channel) {
        (Some(z), _) => Some(*z),
        (None, Channel::Sms) if inferred.len() == 1 => Some(inferred[0]),
        _ => None,
    };
    let uses_sender = window.is_some_and(|w| !window_zone_is(w, "Contact"));
    let arithmetic = if uses_sender {
        *sender
    } else {
        contact_zone.unwrap_or(*sender)
    };
    Ok(ResolvedZones {
        arithmetic,
        window: window.map(|_| arithmetic),
        sms: if channel == Channel::Sms {
            inferred
        } else {
            Vec::new()
        },
    })
}

/// Whether the step may go at `t`.
pub fn is_open(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    _h: &Holidays,
) -> bool {
    if let (Some(w), Some(z)) = (window, &zones.window) {
        let local = z.to_local(t);
        let day = local.weekday().num_days_from_monday() as usize;
        if !(w.days[day] && w.from <= local.time() && local.time() < w.to) {
            return false;
        }
    }
    if channel == Channel::Sms {
        let from = NaiveTime::from_hms_opt(8, 0, 0).expect("08:00");
        let to = NaiveTime::from_hms_opt(21, 0, 0).expect("21:00");
        return !zones.sms.is_empty()
            && zones.sms.iter().all(|z| {
                let l = z.to_local(t).time();
                from <= l && l < to
            });
    }
    true
}

/// The earliest instant at or after `t` when the step may go.
pub fn next_opening(
    t: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
) -> Result<DateTime<Utc>, TimingError> {
    if channel == Channel::Sms && zones.sms.is_empty() {
        return Err(TimingError::new(
            Code::ZoneUnknown,
            "",
            None,
            "the recipient's zone is unknown: set the contact's tz",
        ));
    }
    if is_open(t, window, zones, channel, h) {
        return Ok(t);
    }
    let mut m = t
        .with_second(0)
        .and_then(|x| x.with_nanosecond(0))
        .unwrap_or(t);
    for _ in 0..(31 * 24 * 60) {
        m += chrono::Duration::minutes(1);
        if is_open(m, window, zones, channel, h) {
            return Ok(m);
        }
    }
    Err(TimingError::new(
        Code::NoOpening,
        "",
        None,
        "the send window and the SMS window never overlap within 31 days",
    ))
}

/// SPEC §3 steps 1–3.
pub fn schedule(
    entry: DateTime<Utc>,
    window: Option<&SendWindow>,
    zones: &ResolvedZones,
    channel: Channel,
    h: &Holidays,
    jitter: Option<&Duration>,
    seed: u64,
) -> Result<DateTime<Utc>, TimingError> {
    let t0 = next_opening(entry, window, zones, channel, h)?;
    let max = jitter.map(|j| j.fixed_ms).unwrap_or(0);
    if max == 0 {
        return Ok(t0);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let delay = rng.gen_range(0..=max);
    next_opening(
        t0 + chrono::Duration::milliseconds(delay as i64),
        window,
        zones,
        channel,
        h,
    )
}
