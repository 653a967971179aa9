//! Sending capacity per sender (docs/capacity.md): the caps a sender carries per channel, and the
//! arithmetic that says when one more send fits them.
//!
//! Pure core: no I/O, no clock. The [`Book`] (a sender's caps, zone and recent sends) is read by
//! the caller (the planner, under a lock; the campaign simulator, in memory) and passed in;
//! [`Book::earliest_fit`] answers "the earliest instant at or after `t` at which a send on this
//! channel, to this domain, breaks no cap", and the engine combines it with the windows.
//!
//! Rolling windows are exact: a send at `s` counts in every window `(u − 24 h, u]` that contains
//! it, so its slot is free again at exactly `s + 24 h`. A send fits at `t` when every window that
//! would contain it stays within its cap. The only instants at which "does not fit" can turn
//! into "fits" are: a past send leaving a window (`s + 24 h`, `s + 7 d`), a gap ending, and a
//! ramp day beginning; [`Book::earliest_fit`] tries exactly those candidates, in order.

use crate::timing::{Channel, Duration, Zone};
use chrono::{DateTime, NaiveDate, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// 24 hours in milliseconds: the daily and domain window.
pub const DAY_MS: i64 = 86_400_000;
/// 7 days in milliseconds: the weekly window, and how far back a ledger is read.
pub const WEEK_MS: i64 = 7 * DAY_MS;
/// The shortest ramp `every` accepted (docs/capacity.md, "The caps": "a ramp `every` under an hour" is refused).
pub const MIN_RAMP_EVERY_MS: u64 = 3_600_000;

/// Why a step was deferred for capacity: which cap it would have broken. Stored in the journey's
/// `deferred` entry (`reason`) so Explain and people reading the journey can name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CapReason {
    /// The rolling 24 h cap (or the ramp's cap of the day).
    CapDaily,
    /// The rolling 7-day cap.
    CapWeekly,
    /// The least time between two sends (`min_gap` + the drawn `gap_jitter`).
    CapGap,
    /// The rolling 24 h cap per recipient email domain.
    CapDomain,
}

impl CapReason {
    /// The wire spelling (`CAP_DAILY`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            CapReason::CapDaily => "CAP_DAILY",
            CapReason::CapWeekly => "CAP_WEEKLY",
            CapReason::CapGap => "CAP_GAP",
            CapReason::CapDomain => "CAP_DOMAIN",
        }
    }
}

impl std::fmt::Display for CapReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warm-up: the effective daily cap on ramp day `n` is `min(daily, start + step·n)`, day 0
/// beginning at `from` 00:00 in the sender's zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ramp {
    /// The cap of day 0 (at least 1).
    pub start: u32,
    /// Added per `every`.
    pub step: u32,
    /// The length of a ramp day: whole days (`1d`, `2d`, `1w`, calendar days in the sender's
    /// zone) or fixed hours/minutes of at least an hour.
    pub every: Duration,
    /// Day 0, a date in the sender's zone.
    pub from: NaiveDate,
}

impl Ramp {
    /// The ramp day index of `t` (0 before `from`).
    fn day(&self, t: DateTime<Utc>, zone: &Zone) -> i64 {
        let start = self.start_instant(zone);
        if t < start {
            return 0;
        }
        if self.every.is_fixed() {
            let every = self.every.fixed_ms.max(1) as i64;
            (t - start).num_milliseconds() / every
        } else {
            let days = i64::from(self.every.days) + 7 * i64::from(self.every.weeks);
            let local = zone.to_local(t).date();
            (local - self.from).num_days() / days.max(1)
        }
    }

    fn start_instant(&self, zone: &Zone) -> DateTime<Utc> {
        zone.to_instant(self.from.and_hms_opt(0, 0, 0).expect("midnight exists"))
    }

    /// The instant ramp day `n` begins.
    fn day_start(&self, n: i64, zone: &Zone) -> DateTime<Utc> {
        if self.every.is_fixed() {
            self.start_instant(zone)
                + chrono::Duration::milliseconds(n * self.every.fixed_ms as i64)
        } else {
            let days = i64::from(self.every.days) + 7 * i64::from(self.every.weeks);
            let date = self.from + chrono::Duration::days(n * days);
            zone.to_instant(date.and_hms_opt(0, 0, 0).expect("midnight exists"))
        }
    }

    fn cap_on(&self, n: i64) -> u64 {
        u64::from(self.start) + u64::from(self.step) * n.max(0) as u64
    }
}

/// The caps of one channel of a sender. Every field is optional; an absent one does not limit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChannelCaps {
    /// At most this many in any rolling 24 h.
    pub daily: Option<u32>,
    /// At most this many in any rolling 7 days.
    pub weekly: Option<u32>,
    /// The least time between two sends, ms.
    pub min_gap_ms: u64,
    /// A uniform random extra on top of `min_gap`, ms, drawn per send (seeded, docs/timing.md, "Fixed once").
    pub gap_jitter_ms: u64,
    /// Email only: at most this many per recipient domain in any rolling 24 h.
    pub domain_daily: Option<u32>,
    /// A warm-up of the daily cap.
    pub ramp: Option<Ramp>,
}

impl ChannelCaps {
    /// The daily cap in effect at `t` (the ramp's cap of that day, never above `daily`).
    pub fn daily_at(&self, t: DateTime<Utc>, zone: &Zone) -> Option<u64> {
        let ramp = self.ramp.as_ref().map(|r| r.cap_on(r.day(t, zone)));
        match (self.daily.map(u64::from), ramp) {
            (Some(d), Some(r)) => Some(d.min(r)),
            (d, r) => d.or(r),
        }
    }

    /// The gap this send imposes before the next one: `min_gap` + U[0, `gap_jitter`], drawn
    /// from `seed` (the send's run seed, so simulation and reality draw the same).
    pub fn gap_after(&self, seed: u64) -> u64 {
        if self.gap_jitter_ms == 0 {
            return self.min_gap_ms;
        }
        // A different stream from the step jitter drawn from the same run seed.
        let extra = ChaCha8Rng::seed_from_u64(seed ^ 0x6761_705f_6a69_7474)
            .gen_range(0..=self.gap_jitter_ms);
        self.min_gap_ms + extra
    }
}

/// A sender's caps, per channel (docs/capacity.md `caps`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caps {
    /// `email`.
    pub email: Option<ChannelCaps>,
    /// `sms`.
    pub sms: Option<ChannelCaps>,
    /// `call` (tasks count when created).
    pub call: Option<ChannelCaps>,
    /// `linkedin` (both LinkedIn task types).
    pub linkedin: Option<ChannelCaps>,
}

/// One refused field of a `caps` document: a path below `caps` (`/email/daily`) and how to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapProblem {
    /// JSON Pointer below the `caps` object.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Caps {
    /// The caps of `channel`, if it has any.
    pub fn of(&self, channel: Channel) -> Option<&ChannelCaps> {
        match channel {
            Channel::Email => self.email.as_ref(),
            Channel::Sms => self.sms.as_ref(),
            Channel::Call => self.call.as_ref(),
            Channel::Linkedin => self.linkedin.as_ref(),
        }
    }

    /// True when no channel has a cap: nothing to check or reserve.
    pub fn is_empty(&self) -> bool {
        Channel::ALL.iter().all(|c| self.of(*c).is_none())
    }

    /// Parses and checks a `caps` document, collecting every problem.
    pub fn parse(doc: &serde_json::Value) -> Result<Caps, Vec<CapProblem>> {
        let mut problems = Vec::new();
        let mut caps = Caps::default();
        let Some(obj) = doc.as_object() else {
            return Err(vec![CapProblem {
                path: String::new(),
                message: "caps must be a JSON object keyed by channel (email, sms, call, linkedin)"
                    .into(),
            }]);
        };
        for (key, value) in obj {
            let channel = match key.as_str() {
                "email" => Channel::Email,
                "sms" => Channel::Sms,
                "call" => Channel::Call,
                "linkedin" => Channel::Linkedin,
                other => {
                    problems.push(CapProblem {
                        path: format!("/{other}"),
                        message: format!(
                            "`{other}` is not a channel; caps are keyed by email, sms, call or linkedin"
                        ),
                    });
                    continue;
                }
            };
            let parsed = parse_channel(channel, value, &format!("/{key}"), &mut problems);
            match channel {
                Channel::Email => caps.email = parsed,
                Channel::Sms => caps.sms = parsed,
                Channel::Call => caps.call = parsed,
                Channel::Linkedin => caps.linkedin = parsed,
            }
        }
        if problems.is_empty() {
            Ok(caps)
        } else {
            Err(problems)
        }
    }
}

fn parse_channel(
    channel: Channel,
    value: &serde_json::Value,
    path: &str,
    problems: &mut Vec<CapProblem>,
) -> Option<ChannelCaps> {
    let Some(obj) = value.as_object() else {
        problems.push(CapProblem {
            path: path.to_string(),
            message: "a channel's caps must be an object such as {\"daily\": 50}".into(),
        });
        return None;
    };
    let mut c = ChannelCaps::default();
    for (key, v) in obj {
        let here = format!("{path}/{key}");
        match key.as_str() {
            "daily" => c.daily = count(v, &here, problems),
            "weekly" => c.weekly = count(v, &here, problems),
            "domain_daily" => {
                if channel != Channel::Email {
                    problems.push(CapProblem {
                        path: here,
                        message: format!(
                            "`domain_daily` counts per recipient email domain; {channel} has no \
                             domains: remove it or move it under `email`"
                        ),
                    });
                } else {
                    c.domain_daily = count(v, &here, problems);
                }
            }
            "min_gap" => c.min_gap_ms = fixed(v, &here, problems).unwrap_or(0),
            "gap_jitter" => c.gap_jitter_ms = fixed(v, &here, problems).unwrap_or(0),
            "ramp" => c.ramp = ramp(v, &here, problems),
            other => problems.push(CapProblem {
                path: here,
                message: format!(
                    "`{other}` is not a cap; use daily, weekly, min_gap, gap_jitter, \
                     domain_daily or ramp"
                ),
            }),
        }
    }
    Some(c)
}

/// A cap count: a JSON integer of at least 1.
fn count(v: &serde_json::Value, path: &str, problems: &mut Vec<CapProblem>) -> Option<u32> {
    match v.as_i64() {
        Some(n) if n >= 1 && n <= i64::from(u32::MAX) => Some(n as u32),
        Some(n) => {
            problems.push(CapProblem {
                path: path.to_string(),
                message: format!(
                    "a cap of {n} is refused: a cap is a whole number of at least 1 (remove the \
                     cap to send without a limit)"
                ),
            });
            None
        }
        None => {
            problems.push(CapProblem {
                path: path.to_string(),
                message: format!("{v} is not a whole number; write a count such as 50"),
            });
            None
        }
    }
}

/// A gap: a fixed duration (`2m`, `10s`, a number of ms); calendar units are refused, since a gap
/// is elapsed time between two sends.
fn fixed(v: &serde_json::Value, path: &str, problems: &mut Vec<CapProblem>) -> Option<u64> {
    match Duration::from_json(v) {
        Ok(d) if d.is_fixed() => Some(d.fixed_ms),
        Ok(_) => {
            problems.push(CapProblem {
                path: path.to_string(),
                message: format!(
                    "{v} has calendar units; a gap is elapsed time: use h, m, s or ms (e.g. \"2m\")"
                ),
            });
            None
        }
        Err(e) => {
            problems.push(CapProblem {
                path: path.to_string(),
                message: e.message(),
            });
            None
        }
    }
}

fn ramp(v: &serde_json::Value, path: &str, problems: &mut Vec<CapProblem>) -> Option<Ramp> {
    let Some(obj) = v.as_object() else {
        problems.push(CapProblem {
            path: path.to_string(),
            message: "a ramp is an object: {\"start\": 10, \"step\": 5, \"every\": \"1d\", \"from\": \"2026-12-01\"}".into(),
        });
        return None;
    };
    let before = problems.len();
    let mut start = None;
    let mut step = Some(0);
    let mut every = None;
    let mut from = None;
    for (key, v) in obj {
        let here = format!("{path}/{key}");
        match key.as_str() {
            "start" => start = count(v, &here, problems),
            "step" => match v.as_i64() {
                Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => step = Some(n as u32),
                _ => problems.push(CapProblem {
                    path: here,
                    message: format!("{v} is not a step: write a whole number of 0 or more"),
                }),
            },
            "every" => match Duration::from_json(v) {
                Ok(d) => {
                    let whole_days = d.fixed_ms == 0
                        && d.years == 0
                        && d.months == 0
                        && d.business_days == 0
                        && (d.days > 0 || d.weeks > 0);
                    if d.is_fixed() && d.fixed_ms >= MIN_RAMP_EVERY_MS || whole_days {
                        every = Some(d);
                    } else if d.is_fixed() {
                        problems.push(CapProblem {
                            path: here,
                            message: format!(
                                "{v} is under an hour; a ramp steps at most hourly: write \"1h\" \
                                 or more (usually \"1d\")"
                            ),
                        });
                    } else {
                        problems.push(CapProblem {
                            path: here,
                            message: format!(
                                "{v} mixes units; a ramp steps every whole number of days (\"1d\", \
                                 \"1w\") or every fixed time of at least an hour (\"12h\")"
                            ),
                        });
                    }
                }
                Err(e) => problems.push(CapProblem {
                    path: here,
                    message: e.message(),
                }),
            },
            "from" => match v
                .as_str()
                .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
            {
                Some(d) => from = Some(d),
                None => problems.push(CapProblem {
                    path: here,
                    message: format!("{v} is not a date; write YYYY-MM-DD (day 0 of the ramp)"),
                }),
            },
            other => problems.push(CapProblem {
                path: here,
                message: format!("`{other}` is not a ramp field; use start, step, every, from"),
            }),
        }
    }
    for (name, missing) in [
        ("start", start.is_none()),
        ("every", every.is_none()),
        ("from", from.is_none()),
    ] {
        if missing && !obj.contains_key(name) {
            problems.push(CapProblem {
                path: format!("{path}/{name}"),
                message: format!("a ramp needs `{name}`"),
            });
        }
    }
    if problems.len() > before {
        return None;
    }
    Some(Ramp {
        start: start?,
        step: step?,
        every: every?,
        from: from?,
    })
}

/// One reserved send (or created task) in a sender's ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its channel.
    pub channel: Channel,
    /// When it was reserved (the send instant).
    pub at: DateTime<Utc>,
    /// Email: the recipient's domain, lower case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The earliest next send this one allows: `at` + `min_gap` + the drawn jitter.
    pub gap_until: DateTime<Utc>,
}

/// A sender's caps, zone and recent sends: everything [`Book::earliest_fit`] reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Book {
    /// The sender's caps.
    pub caps: Caps,
    /// The sender's zone: ramp days begin at its midnight.
    pub zone: Zone,
    /// The sends of the last 7 days (older ones limit nothing), any order.
    pub entries: Vec<Entry>,
}

/// The recipient domain of an email address, lower case (docs/capacity.md: case-insensitive).
pub fn domain_of(address: &str) -> Option<String> {
    address
        .rsplit_once('@')
        .map(|(_, d)| d.trim().to_ascii_lowercase())
        .filter(|d| !d.is_empty())
}

impl Book {
    /// A book with no sends yet.
    pub fn new(caps: Caps, zone: Zone) -> Book {
        Book {
            caps,
            zone,
            entries: Vec::new(),
        }
    }

    /// Adds a reserved send.
    pub fn reserve(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// The first cap a send on `channel` to `domain` at `t` would break, or `None` when it fits.
    /// Checked in the order weekly, daily, domain, gap: the reason named is the widest window.
    pub fn blocked(
        &self,
        channel: Channel,
        domain: Option<&str>,
        t: DateTime<Utc>,
    ) -> Option<CapReason> {
        let caps = self.caps.of(channel)?;
        let mine: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.channel == channel)
            .collect();
        if let Some(w) = caps.weekly {
            if !window_fits(&mine, t, WEEK_MS, |_| Some(u64::from(w))) {
                return Some(CapReason::CapWeekly);
            }
        }
        if caps.daily.is_some() || caps.ramp.is_some() {
            let cap_at = |u: DateTime<Utc>| caps.daily_at(u, &self.zone);
            if !window_fits(&mine, t, DAY_MS, cap_at) {
                return Some(CapReason::CapDaily);
            }
        }
        if let (Some(d), Some(domain)) = (caps.domain_daily, domain) {
            let same: Vec<&Entry> = mine
                .iter()
                .copied()
                .filter(|e| e.domain.as_deref() == Some(domain))
                .collect();
            if !window_fits(&same, t, DAY_MS, |_| Some(u64::from(d))) {
                return Some(CapReason::CapDomain);
            }
        }
        if caps.min_gap_ms > 0 || caps.gap_jitter_ms > 0 {
            let min_gap = chrono::Duration::milliseconds(caps.min_gap_ms as i64);
            let clash = mine.iter().any(|e| {
                if e.at <= t {
                    t < e.gap_until
                } else {
                    // A send already reserved after `t` (another replica's clock ahead): keep
                    // at least `min_gap` before it too.
                    e.at < t + min_gap
                }
            });
            if clash {
                return Some(CapReason::CapGap);
            }
        }
        None
    }

    /// The earliest instant at or after `t` at which a send on `channel` to `domain` fits every
    /// cap, and the cap that held it at `t` (`None` when it fits at `t`). Windows are the
    /// caller's: it alternates this with the window arithmetic until both agree.
    pub fn earliest_fit(
        &self,
        channel: Channel,
        domain: Option<&str>,
        t: DateTime<Utc>,
    ) -> (DateTime<Utc>, Option<CapReason>) {
        let Some(reason) = self.blocked(channel, domain, t) else {
            return (t, None);
        };
        let Some(caps) = self.caps.of(channel) else {
            return (t, None);
        };
        let mut candidates: Vec<DateTime<Utc>> = Vec::new();
        for e in self.entries.iter().filter(|e| e.channel == channel) {
            candidates.push(e.at + chrono::Duration::milliseconds(DAY_MS));
            candidates.push(e.at + chrono::Duration::milliseconds(WEEK_MS));
            candidates.push(e.gap_until);
            candidates.push(
                e.gap_until
                    .max(e.at + chrono::Duration::milliseconds(caps.min_gap_ms as i64)),
            );
        }
        if let Some(r) = &caps.ramp {
            let n = r.day(t, &self.zone);
            for k in 1..=8 {
                candidates.push(r.day_start(n + k, &self.zone));
            }
            if t < r.start_instant(&self.zone) {
                candidates.push(r.start_instant(&self.zone));
            }
        }
        candidates.retain(|c| *c > t);
        candidates.sort();
        candidates.dedup();
        for c in &candidates {
            if self.blocked(channel, domain, *c).is_none() {
                return (*c, Some(reason));
            }
        }
        // Only a cap that never opens again could get here (it cannot: every send leaves its
        // windows); try again a week on rather than loop.
        let last = candidates.last().copied().unwrap_or(t);
        (
            last.max(t) + chrono::Duration::milliseconds(WEEK_MS),
            Some(reason),
        )
    }
}

/// True when one more send at `t` keeps every rolling window of `len` ms that contains it within
/// its cap: the window ending at `t`, and the window ending at each later send that `t` would
/// fall in. `cap_at(u)` is the cap of the window ending at `u` (`None`: unlimited).
fn window_fits(
    entries: &[&Entry],
    t: DateTime<Utc>,
    len: i64,
    cap_at: impl Fn(DateTime<Utc>) -> Option<u64>,
) -> bool {
    let len = chrono::Duration::milliseconds(len);
    let count_ending = |u: DateTime<Utc>| -> u64 {
        entries
            .iter()
            .filter(|e| e.at > u - len && e.at <= u)
            .count() as u64
    };
    let ends = std::iter::once(t).chain(
        entries
            .iter()
            .map(|e| e.at)
            .filter(|u| *u > t && *u < t + len),
    );
    for u in ends {
        if let Some(cap) = cap_at(u) {
            if count_ending(u) + 1 > cap {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests;
