//! Campaign simulation (docs/service.md; docs/capacity.md): every contact of a scenario enrolled in the same flow under
//! one sender, sharing its capacity, in memory.
//!
//! It does what the planner does, instant by instant, so a simulated campaign is what reality
//! will do: an enrollment starts with its capped step handed off (as `Enroll` does); at each
//! instant the due enrollments are stepped in docs/capacity.md's priority order ([`priority`]) against one
//! ledger, each deferred step keeping its place for the rest of that instant (as in one planner
//! batch); the gap jitter is drawn from the same seeds. Script entries name their contact
//! (`"contact": id`; all contacts when absent) and apply after the timers of their instant.

use crate::capacity::{domain_of, Book, Caps, Entry};
use crate::engine::effect::{Effect, JourneyEntry};
use crate::engine::input::Input;
use crate::engine::instant;
use crate::engine::interpret::{channel_of, enrollable, step_with, CapacityView, Ctx};
use crate::engine::simulate::{
    contact_view, RunRecord, Scenario, ScenarioContact, Sim, SimError, MAX_SIM_STEPS,
};
use crate::engine::state::{EnrollmentState, FlowRef, Status};
use crate::flow::Flow;
use crate::timing::{Duration, Zone};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The sender of a campaign: its zone and caps (docs/capacity.md's `caps` document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSender {
    /// The sender's zone; `UTC` when absent.
    #[serde(default = "utc_name")]
    pub tz: String,
    /// Its caps; none when absent.
    #[serde(default)]
    pub caps: serde_json::Value,
}

fn utc_name() -> String {
    "UTC".to_string()
}

/// One contact of a campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignContact {
    /// Its id: names it in the answer, and is its enrollment's id (the jitter seed).
    pub id: String,
    /// As a scenario's `contact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// As a scenario's `contact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// As a scenario's `contact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// As a scenario's `contact` (its holiday calendar, docs/timing.md, "Holiday calendars and quiet hours").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// As a scenario's `contact`: `contact.attributes.*`.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// When it is enrolled; the scenario's `start` when absent.
    #[serde(
        default,
        with = "instant::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub enroll_at: Option<DateTime<Utc>>,
}

/// One enrollment of a campaign's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignEnrollment {
    /// The contact's id.
    pub contact: String,
    /// As a single simulation's answer.
    pub state: Status,
    /// As a single simulation's answer.
    pub outcome: Option<String>,
    /// Its runs, deferrals included.
    pub runs: Vec<RunRecord>,
}

/// A campaign's answer: one entry per contact, in the order of `contacts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    /// The enrollments.
    pub enrollments: Vec<CampaignEnrollment>,
    /// Sends (dispatches and created tasks) per day in the sender's zone, for the table.
    #[serde(skip)]
    pub per_day: BTreeMap<NaiveDate, usize>,
}

/// docs/capacity.md's priority of an enrollment's current step, lower first: `(class, due ms)` with class
/// 0 an operator's `MoveTo`, 1 a follow-up (it already sent on the step's channel), 2 a first
/// touch; due is the step's scheduled instant (windows applied). Ties go to the lower id.
pub fn priority(state: &EnrollmentState) -> (u8, i64) {
    let Some(run) = &state.run else {
        return (
            2,
            state.next_run_at.map_or(i64::MAX, |t| t.timestamp_millis()),
        );
    };
    let due = run
        .scheduled
        .or(state.next_run_at)
        .map_or(i64::MAX, |t| t.timestamp_millis());
    let outreach = run.step_type.is_outreach() || run.step_type.is_task();
    let class = if run.moved {
        0
    } else if outreach && state.sent.contains(&channel_of(run.step_type)) {
        1
    } else {
        2
    };
    (class, due)
}

/// The slot a step deferred for capacity in `effects` will take when it wakes (kept only for
/// the rest of the instant, like a planner batch keeps it).
pub fn queued_slot(after: &EnrollmentState, effects: &[Effect], caps: &Caps) -> Option<Entry> {
    let deferred = effects.iter().any(|e| {
        matches!(
            e,
            Effect::Journey(JourneyEntry::Deferred { cap: Some(_), .. })
        )
    });
    let run = after.run.as_ref()?;
    let at = run.deferred_to?;
    if !deferred || run.deferred_reason.is_none() {
        return None;
    }
    let channel = channel_of(run.step_type);
    let gap = caps.of(channel).map_or(0, |c| c.min_gap_ms) as i64;
    Some(Entry {
        channel,
        at,
        domain: match channel {
            crate::timing::Channel::Email => after.contact.email.as_deref().and_then(domain_of),
            _ => None,
        },
        gap_until: at + chrono::Duration::milliseconds(gap),
    })
}

/// The slot a dispatch or task in `effects` reserved.
pub fn reserved_slots(effects: &[Effect]) -> impl Iterator<Item = &Entry> {
    effects.iter().filter_map(|e| match e {
        Effect::Dispatch(d) => d.reservation.as_ref(),
        Effect::TaskCreated(t) => t.reservation.as_ref(),
        _ => None,
    })
}

/// Runs a campaign scenario (one with `contacts`).
pub fn simulate_campaign(flow: &Flow, scenario: &Scenario) -> Result<Campaign, SimError> {
    enrollable(flow).map_err(SimError::NotEnrollable)?;
    let contacts = scenario.contacts.clone().unwrap_or_default();
    if scenario.horizon < scenario.start {
        return Err(SimError::Scenario(format!(
            "the horizon {} is before the start {}; put the horizon later",
            instant::format(scenario.horizon),
            instant::format(scenario.start)
        )));
    }
    let sender = scenario.sender.clone().unwrap_or(ScenarioSender {
        tz: scenario.sender_tz.clone(),
        caps: serde_json::Value::Null,
    });
    let zone = Zone::parse(&sender.tz)?;
    let caps = match &sender.caps {
        serde_json::Value::Null => Caps::default(),
        doc => Caps::parse(doc).map_err(|problems| {
            SimError::Scenario(
                problems
                    .iter()
                    .map(|p| format!("sender.caps{}: {}", p.path.replace('/', "."), p.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?,
    };
    let max_wait = match &scenario.max_wait {
        Some(v) => Some(Duration::from_json(v)?),
        None => None,
    };
    let ctx = Ctx {
        max_wait,
        seed: scenario.seed,
        quiet_hours: scenario.quiet_hours.clone().unwrap_or_default(),
        ..Ctx::default()
    };
    let mut ids = std::collections::HashSet::new();
    let mut sims = Vec::with_capacity(contacts.len());
    for (i, c) in contacts.iter().enumerate() {
        if !ids.insert(c.id.clone()) {
            return Err(SimError::Scenario(format!(
                "contacts[{i}].id {:?} appears twice; give each contact its own id",
                c.id
            )));
        }
        let mut view = contact_view(&ScenarioContact {
            id: None,
            tz: c.tz.clone(),
            phone: c.phone.clone(),
            email: c.email.clone(),
            country: c.country.clone(),
            attributes: c.attributes.clone(),
        })?;
        view.id = c.id.clone();
        sims.push(Sim {
            state: EnrollmentState::new(
                c.id.clone(),
                FlowRef {
                    id: flow.name.clone(),
                    version: 0,
                },
                view,
                sender.tz.clone(),
                scenario.input.clone(),
            ),
            runs: Vec::new(),
            by_run: BTreeMap::new(),
            soft_bounces: Vec::new(),
            fetch: scenario.fetch.clone(),
        });
    }
    let enroll_at: Vec<DateTime<Utc>> = contacts
        .iter()
        .map(|c| c.enroll_at.unwrap_or(scenario.start).max(scenario.start))
        .collect();
    let mut started = vec![false; sims.len()];
    let mut script: Vec<(usize, &crate::engine::simulate::ScriptEntry)> =
        scenario.script.iter().enumerate().collect();
    script.sort_by_key(|(_, e)| e.at);
    let mut next_entry = 0;
    let mut book = Book::new(caps.clone(), zone);
    let mut per_day: BTreeMap<NaiveDate, usize> = BTreeMap::new();
    let mut steps = 0usize;

    loop {
        // The next instant anything happens.
        let starts = (0..sims.len())
            .filter(|i| !started[*i])
            .map(|i| enroll_at[i]);
        let wakes = sims
            .iter()
            .enumerate()
            .filter(|(i, s)| started[*i] && s.state.status == Status::Active)
            .filter_map(|(_, s)| s.state.next_run_at);
        let script_at = script.get(next_entry).map(|(_, e)| e.at);
        let Some(now) = starts.chain(wakes).chain(script_at).min() else {
            break;
        };
        if now > scenario.horizon {
            break;
        }
        // Sends older than a week limit nothing.
        book.entries
            .retain(|e| e.at > now - chrono::Duration::milliseconds(crate::capacity::WEEK_MS));
        for i in 0..sims.len() {
            if !started[i] && enroll_at[i] <= now {
                started[i] = true;
                let view = hand_off(&caps);
                let (next, effects) =
                    step_with(&sims[i].state, flow, Input::Start, now, &ctx, view);
                count(&effects, &zone, now, &mut per_day);
                sims[i].record(next, &effects, &Input::Start, now, None);
                steps += 1;
            }
        }
        wake_due(
            flow,
            &ctx,
            &caps,
            &zone,
            &mut book,
            &mut sims,
            &started,
            now,
            &mut per_day,
            &mut steps,
        );
        while let Some((index, e)) = script.get(next_entry) {
            if e.at > now {
                break;
            }
            for i in 0..sims.len() {
                let named = e
                    .contact_id
                    .as_deref()
                    .is_none_or(|c| c == sims[i].state.id);
                if !started[i] || !named {
                    continue;
                }
                let input = sims[i].input_for(*index, &e.action, now)?;
                let (next, effects) = step_with(
                    &sims[i].state,
                    flow,
                    input.clone(),
                    now,
                    &ctx,
                    hand_off(&caps),
                );
                count(&effects, &zone, now, &mut per_day);
                sims[i].record(next, &effects, &input, now, Some(*index));
                steps += 1;
            }
            next_entry += 1;
        }
        wake_due(
            flow,
            &ctx,
            &caps,
            &zone,
            &mut book,
            &mut sims,
            &started,
            now,
            &mut per_day,
            &mut steps,
        );
        if steps > MAX_SIM_STEPS {
            return Err(SimError::Scenario(format!(
                "more than {MAX_SIM_STEPS} steps before the horizon; shorten the horizon, the \
                 flow's loop or the contact list"
            )));
        }
    }
    Ok(Campaign {
        enrollments: sims
            .into_iter()
            .map(|s| {
                let t = s.timeline();
                CampaignEnrollment {
                    contact: String::new(),
                    state: t.state,
                    outcome: t.outcome,
                    runs: t.runs,
                }
            })
            .zip(&contacts)
            .map(|(mut e, c)| {
                e.contact = c.id.clone();
                e
            })
            .collect(),
        per_day,
    })
}

fn hand_off(caps: &Caps) -> CapacityView<'_> {
    if caps.is_empty() {
        CapacityView::Unlimited
    } else {
        CapacityView::HandOff(caps)
    }
}

fn count(
    effects: &[Effect],
    zone: &Zone,
    now: DateTime<Utc>,
    per_day: &mut BTreeMap<NaiveDate, usize>,
) {
    let sends = effects
        .iter()
        .filter(|e| matches!(e, Effect::Dispatch(_) | Effect::TaskCreated(_)))
        .count();
    if sends > 0 {
        *per_day.entry(zone.to_local(now).date()).or_default() += sends;
    }
}

/// One planner batch at `now`: every started, active enrollment due by then, in priority order,
/// against the ledger; a deferred step keeps its queued slot until the instant ends.
#[allow(clippy::too_many_arguments)]
fn wake_due(
    flow: &Flow,
    ctx: &Ctx,
    caps: &Caps,
    zone: &Zone,
    book: &mut Book,
    sims: &mut [Sim],
    started: &[bool],
    now: DateTime<Utc>,
    per_day: &mut BTreeMap<NaiveDate, usize>,
    steps: &mut usize,
) {
    let mut due: Vec<usize> = (0..sims.len())
        .filter(|i| started[*i] && sims[*i].state.status == Status::Active)
        .filter(|i| sims[*i].state.next_run_at.is_some_and(|t| t <= now))
        .collect();
    due.sort_by_cached_key(|i| {
        let (class, at) = priority(&sims[*i].state);
        (class, at, sims[*i].state.id.clone())
    });
    let mut batch = book.clone();
    for i in due {
        let view = if caps.is_empty() {
            CapacityView::Unlimited
        } else {
            CapacityView::Ledger(&batch)
        };
        let (next, effects) = step_with(&sims[i].state, flow, Input::Wake, now, ctx, view);
        for slot in reserved_slots(&effects) {
            batch.reserve(slot.clone());
            book.reserve(slot.clone());
        }
        if let Some(q) = queued_slot(&next, &effects, caps) {
            batch.reserve(q);
        }
        count(&effects, zone, now, per_day);
        sims[i].record(next, &effects, &Input::Wake, now, None);
        *steps += 1;
    }
}

/// The readable answer of a campaign: per enrollment its sends and deferrals, then the sends per
/// day (so a rep sees when the 500th prospect gets the first email).
pub fn render_campaign(c: &Campaign) -> String {
    let mut out = String::new();
    out.push_str("contact  state  first send  sends  deferrals\n");
    for e in &c.enrollments {
        let sends: Vec<&RunRecord> = e
            .runs
            .iter()
            .filter(|r| r.branch.as_deref() == Some("then") && r.scheduled.is_some())
            .collect();
        let first = sends
            .first()
            .and_then(|r| r.closed)
            .map(instant::format)
            .unwrap_or_else(|| "-".into());
        let deferrals: usize = e.runs.iter().map(|r| r.deferrals.len()).sum();
        out.push_str(&format!(
            "{}  {}  {}  {}  {}\n",
            e.contact,
            e.state.as_str(),
            first,
            sends.len(),
            deferrals
        ));
    }
    out.push_str("\nday  sends\n");
    for (day, n) in &c.per_day {
        out.push_str(&format!("{day}  {n}\n"));
    }
    out
}
