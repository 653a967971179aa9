//! `nudge simulate` and `TimingService.Simulate` (docs/service.md): one enrollment driven through
//! virtual time in memory, by the same [`step`] function the planner uses, so a simulated
//! timeline is what reality would do (the jitter seed included).
//!
//! Virtual time advances to the earlier of the enrollment's `next_run_at` and the next script
//! entry, and stops at the horizon. When a timer and a script entry fall on the same instant,
//! the timer fires first (it was due; the signal arrives to what the timer left).

use crate::code::Code;
use crate::engine::effect::Effect;
use crate::engine::input::{Input, Signal};
use crate::engine::instant;
use crate::engine::interpret::{enrollable, step, Ctx};
use crate::engine::state::{ContactView, EnrollmentState, FlowRef, Status};

use crate::flow::Flow;
use crate::timing::{phone_zones, Duration, TimingError, Zone};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The enrollment id a simulation runs under (part of the jitter seed).
pub const SIM_ENROLLMENT_ID: &str = "sim";

/// At most this many interpreter calls per simulation: a guard against a flow that wakes
/// every millisecond until a far horizon.
pub const MAX_SIM_STEPS: usize = 100_000;

/// The contact of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioContact {
    /// The contact's id: what a step's variants are assigned by, as for a stored contact;
    /// `contact` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The contact's set zone, if any: what arithmetic and windows use (docs/timing.md, "Zones").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// E.164; without a `tz`, the SMS window applies in every zone it maps to (docs/timing.md, "Send windows").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// Without one, an `email` step is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// ISO 3166-1 alpha-2: the `contact` holiday calendar (docs/timing.md, "Holiday calendars and quiet hours").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// The CRM's attributes, as `UpsertContact` takes them: `contact.attributes.*` in a
    /// `branch` or a template's input.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// What a script entry does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// A reply on `channel`: raises `reply` and `reply:<channel>`; with `text`, its words are
    /// read into an intent as in production (`intent:<name>` first; an unsubscribe in words
    /// opts out of the channel, as for an account with the default `reply_unsubscribe`).
    Reply {
        /// `email`, `sms` or `linkedin`.
        channel: String,
        /// The reply's words, read into an intent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A connected call reported by a dialer: raises `call_connected` and `reply`.
    CallConnected,
    /// A LinkedIn connection accepted: raises `connection_accepted`.
    ConnectionAccepted,
    /// A meeting booked: raises `meeting_booked`.
    MeetingBooked,
    /// An opt-out: exits the enrollment and blocks the channel.
    OptOut {
        /// The channel opted out of.
        channel: String,
    },
    /// A custom event (`payment.42`).
    Event {
        /// The custom event key: the event raised.
        key: String,
        /// Its payload; `{}` when absent.
        #[serde(default)]
        payload: serde_json::Value,
    },
    /// The task of step `step` completed with `outcome` (ignored unless that task is the
    /// current run).
    TaskOutcome {
        /// The task's step (a script cannot know run ids in advance).
        step: String,
        /// The outcome reported.
        outcome: String,
    },
    /// An inbound email in the enrollment's thread, classified as docs/signals.md, "Inbox signals" says: a reply, an
    /// auto-reply, an out-of-office with its return date, a bounce, an unsubscribe.
    Email {
        /// Header name → value (`Auto-Submitted`, `Subject`, `Date`, …).
        #[serde(default)]
        headers: serde_json::Map<String, serde_json::Value>,
        /// The subject (or a `Subject` header).
        #[serde(default)]
        subject: Option<String>,
        /// The body text.
        #[serde(default)]
        text: Option<String>,
    },
    /// A bounce reported by the provider: `hard`, `soft` (three in 7 days count as hard) or
    /// `delayed`.
    Bounce {
        /// `hard`, `soft` or `delayed`.
        #[serde(rename = "type")]
        bounce: crate::inbound::classify::BounceType,
    },
    /// The contact changes (zone, phone, email), as `UpsertContact` would.
    Contact {
        /// The new contact.
        contact: ScenarioContact,
    },
    /// A person decides the waiting approval (docs/flows.md, "approval"), as its link or `Decide` would.
    Approval {
        /// `approved` or `rejected`.
        decision: crate::engine::Decision,
        /// The form's values.
        #[serde(default = "empty_object")]
        input: serde_json::Value,
        /// Who decided.
        #[serde(default)]
        by: Option<String>,
    },
    /// An operator pauses the enrollment.
    Pause,
    /// An operator resumes it.
    Resume,
}

/// One scripted happening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptEntry {
    /// When it happens; entries apply in time order.
    #[serde(with = "instant::required")]
    pub at: DateTime<Utc>,
    /// A campaign: the contact (its `id`) it happens to; every contact when absent. Not
    /// `contact`: that is the new contact of a `{"kind": "contact"}` entry (docs/service.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_id: Option<String>,
    /// What happens.
    #[serde(flatten)]
    pub action: Action,
}

/// docs/service.md's scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// When the contact is enrolled.
    #[serde(with = "instant::required")]
    pub start: DateTime<Utc>,
    /// Where the simulation stops: what falls after it does not happen.
    #[serde(with = "instant::required")]
    pub horizon: DateTime<Utc>,
    /// The contact enrolled.
    #[serde(default)]
    pub contact: ScenarioContact,
    /// The sender's zone; `UTC` when absent.
    #[serde(default = "utc_name")]
    pub sender_tz: String,
    /// The enrollment input, checked against the flow's `input` schema.
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
    /// Mixed into every jitter seed, to see other draws; 0 draws what production draws.
    #[serde(default)]
    pub seed: u64,
    /// What happens to the contact meanwhile.
    #[serde(default)]
    pub script: Vec<ScriptEntry>,
    /// The account's plan limit (docs/flows.md, "Plan limits"), e.g. `"7d"`; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait: Option<serde_json::Value>,
    /// The account's quiet-hours setting (docs/timing.md, "Holiday calendars and quiet hours"), `{"policy": "us_states"}`; federal when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_hours: Option<crate::timing::QuietHours>,
    /// The enrollment id the jitter seed is drawn from ([`SIM_ENROLLMENT_ID`] when absent). With
    /// a real enrollment's id and `seed` 0, the simulation draws exactly that enrollment's
    /// jitter (docs/timing.md, "Fixed once": "so `Simulate` and reality agree").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enrollment_id: Option<String>,
    /// A campaign (docs/service.md; docs/capacity.md): the sender every contact goes out as, with its caps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<super::campaign::ScenarioSender>,
    /// A campaign: the contacts enrolled, instead of one `contact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contacts: Option<Vec<super::campaign::CampaignContact>>,
    /// The answers a `fetch` step gets, by step, one per attempt in order (docs/service.md): a
    /// response `{"status", "body", "ms"}`, `{"error": "connect"}` or `{"timeout": true}`. An
    /// attempt with no answer listed is an error (`no answer scripted`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fetch: BTreeMap<String, Vec<ScriptedAnswer>>,
}

/// One scripted `fetch` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ScriptedAnswer {
    /// The peer answered.
    Response {
        /// The HTTP status.
        status: u16,
        /// The JSON body.
        #[serde(default)]
        body: serde_json::Value,
        /// How long it took (the answer arrives this much later).
        #[serde(default)]
        ms: u64,
    },
    /// No usable answer (`connect`, `tls`, …).
    Error {
        /// What went wrong.
        error: String,
        /// How long it took.
        #[serde(default)]
        ms: u64,
    },
    /// The attempt ran out of its budget.
    Timeout {
        /// Always `true`.
        timeout: bool,
    },
}

fn utc_name() -> String {
    "UTC".to_string()
}

fn empty_object() -> serde_json::Value {
    serde_json::json!({})
}

/// One run in the answer; absent fields are omitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The step's key in the flow.
    pub step: String,
    /// The step's `type`.
    #[serde(rename = "type")]
    pub step_type: String,
    /// When the step was entered.
    #[serde(with = "instant::required")]
    pub entered: DateTime<Utc>,
    /// A `wait`'s wake time, or a timeout's deadline.
    #[serde(
        default,
        with = "instant::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub until: Option<DateTime<Utc>>,
    /// When an outreach step goes, as planned at entry; for a task, when it was created (later
    /// than planned when a cap deferred it).
    #[serde(
        default,
        with = "instant::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub scheduled: Option<DateTime<Utc>>,
    /// When the run ended; none if still open at the horizon.
    #[serde(
        default,
        with = "instant::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub closed: Option<DateTime<Utc>>,
    /// The branch it left on (`then`, an event, `timeout`, `exit`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The index of the script entry that woke the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub woken_by: Option<usize>,
    /// A campaign: each execution-time deferral of the run (docs/capacity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deferrals: Vec<Deferral>,
    /// The step's variant the contact got, when the step has variants (assigned by the
    /// scenario contact's `id`, as a stored enrollment's contact is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// One deferral of a run in a campaign simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deferral {
    /// When the step was deferred.
    #[serde(with = "instant::required")]
    pub at: DateTime<Utc>,
    /// Where it was deferred to.
    #[serde(with = "instant::required")]
    pub to: DateTime<Utc>,
    /// Why: the cap that held it (`CAP_DAILY`, …), else the window (`send_window`,
    /// `holiday`, `quiet_hours`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<DeferralReason>,
}

/// Why a simulated step was deferred: a cap, or a closed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DeferralReason {
    /// A sender's cap (docs/capacity.md).
    Cap(crate::capacity::CapReason),
    /// A window, a holiday or quiet hours (docs/timing.md, "Send windows" and "Holiday calendars and quiet hours").
    Window(crate::timing::ClosedBy),
}

/// docs/service.md's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The enrollment's status at the horizon.
    pub state: Status,
    /// The `end` outcome when completed; the reason when exited or failed.
    pub outcome: Option<String>,
    /// Every run, in entry order.
    pub runs: Vec<RunRecord>,
}

/// Why a simulation could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A zone, phone number or `max_wait` in the scenario was refused.
    #[error("{}", .0.message())]
    Timing(#[from] TimingError),
    /// The flow uses a step type the interpreter does not run yet.
    #[error("the flow cannot be enrolled: {0}")]
    NotEnrollable(String),
    /// The scenario's shape is wrong (a horizon before the start, …).
    #[error("bad scenario: {0}")]
    Scenario(String),
}

impl SimError {
    /// The problem code for adapters.
    pub fn code(&self) -> Code {
        match self {
            SimError::Timing(e) => e.code,
            SimError::NotEnrollable(_) | SimError::Scenario(_) => Code::BadSchema,
        }
    }
}

/// A simulation's answer: one enrollment's timeline, or a campaign's enrollments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// A scenario with one `contact`.
    Single(Timeline),
    /// A scenario with `contacts` (docs/service.md; docs/capacity.md).
    Campaign(super::campaign::Campaign),
}

/// Runs `scenario`: a campaign when it has `contacts`, else one enrollment.
pub fn simulate_any(flow: &Flow, scenario: &Scenario) -> Result<Answer, SimError> {
    if scenario.contacts.is_some() {
        super::campaign::simulate_campaign(flow, scenario).map(Answer::Campaign)
    } else {
        simulate(flow, scenario).map(Answer::Single)
    }
}

/// Runs `scenario` against `flow` in memory (one enrollment; the answer of docs/service.md without
/// deferrals, which only a campaign lists).
pub fn simulate(flow: &Flow, scenario: &Scenario) -> Result<Timeline, SimError> {
    single(flow, scenario).map(|mut t| {
        t.runs.iter_mut().for_each(|r| r.deferrals.clear());
        t
    })
}

fn single(flow: &Flow, scenario: &Scenario) -> Result<Timeline, SimError> {
    enrollable(flow).map_err(SimError::NotEnrollable)?;
    if scenario.horizon < scenario.start {
        return Err(SimError::Scenario(format!(
            "the horizon {} is before the start {}; put the horizon later",
            instant::format(scenario.horizon),
            instant::format(scenario.start)
        )));
    }
    Zone::parse(&scenario.sender_tz)?;
    let contact = contact_view(&scenario.contact)?;
    let max_wait = match &scenario.max_wait {
        Some(v) => Some(Duration::from_json(v)?),
        None => None,
    };
    let mut script: Vec<(usize, &ScriptEntry)> = scenario.script.iter().enumerate().collect();
    if let Some((i, e)) = script.iter().find(|(_, e)| e.at < scenario.start) {
        return Err(SimError::Scenario(format!(
            "script entry {i} at {} is before the start {}; script entries happen after enrollment",
            instant::format(e.at),
            instant::format(scenario.start)
        )));
    }
    // Stable: entries at the same instant keep their written order.
    script.sort_by_key(|(_, e)| e.at);

    let ctx = Ctx {
        max_wait,
        seed: scenario.seed,
        quiet_hours: scenario.quiet_hours.clone().unwrap_or_default(),
        ..Ctx::default()
    };
    let mut sim = Sim {
        state: EnrollmentState::new(
            scenario
                .enrollment_id
                .as_deref()
                .unwrap_or(SIM_ENROLLMENT_ID),
            FlowRef {
                id: flow.name.clone(),
                version: 0,
            },
            contact,
            scenario.sender_tz.clone(),
            scenario.input.clone(),
        ),
        runs: Vec::new(),
        by_run: BTreeMap::new(),
        soft_bounces: Vec::new(),
        fetch: scenario.fetch.clone(),
    };
    sim.apply(flow, Input::Start, scenario.start, &ctx, None);
    let mut next_entry = 0;
    for _ in 0..MAX_SIM_STEPS {
        let wake = sim.state.next_run_at;
        let entry = script.get(next_entry);
        let wake_first = match (wake, entry) {
            (None, None) => return Ok(sim.timeline()),
            (Some(w), Some((_, e))) => w <= e.at,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if wake_first {
            let at = wake.expect("wake_first implies a wake time");
            if at > scenario.horizon {
                return Ok(sim.timeline());
            }
            sim.apply(flow, Input::Wake, at, &ctx, None);
        } else {
            let (index, e) = entry.expect("not wake_first implies an entry");
            if e.at > scenario.horizon {
                return Ok(sim.timeline());
            }
            let input = sim.input_for(*index, &e.action, e.at)?;
            sim.apply(flow, input, e.at, &ctx, Some(*index));
            next_entry += 1;
        }
    }
    Err(SimError::Scenario(format!(
        "more than {MAX_SIM_STEPS} steps before the horizon; shorten the horizon or the flow's loop"
    )))
}

/// The contact as the interpreter sees it; the phone is normalized to E.164 like the contact
/// layer does, so a bad number is refused with `BAD_PHONE` here too.
pub(super) fn contact_view(c: &ScenarioContact) -> Result<ContactView, SimError> {
    if let Some(tz) = &c.tz {
        Zone::parse(tz)?;
    }
    let phone = match &c.phone {
        Some(p) => Some(phone_zones(p)?.e164),
        None => None,
    };
    Ok(ContactView {
        id: c.id.clone().unwrap_or_else(|| "contact".to_string()),
        email: c.email.clone(),
        phone,
        tz: c.tz.clone(),
        country: c.country.clone(),
        opted_out: Default::default(),
        attributes: c.attributes.clone(),
    })
}

pub(super) struct Sim {
    pub(super) state: EnrollmentState,
    pub(super) runs: Vec<RunRecord>,
    pub(super) by_run: BTreeMap<u64, usize>,
    /// When soft bounces arrived: the third within 7 days counts as hard (docs/signals.md, "Inbox signals").
    pub(super) soft_bounces: Vec<DateTime<Utc>>,
    /// The scenario's fetch answers, by step.
    pub(super) fetch: BTreeMap<String, Vec<ScriptedAnswer>>,
}

impl Sim {
    /// The signal a reply is once its words are read, as the signal path reads them: in the
    /// contact's zone, its intent first among the events, stored in the payload under
    /// `intent`; an unsubscribe in words is an opt-out. Any other kind, or a reply without
    /// words, is the signal it always was.
    fn reply_signal(
        &self,
        id: &str,
        kind: crate::inbound::SignalKind,
        text: &str,
        subject: Option<&str>,
        from: Option<&str>,
        at: DateTime<Utc>,
    ) -> Signal {
        use crate::inbound::intent;
        let has_words = !text.trim().is_empty() || subject.is_some_and(|s| !s.trim().is_empty());
        let reading =
            (matches!(kind, crate::inbound::SignalKind::Reply { .. }) && has_words).then(|| {
                let c = &self.state.contact;
                intent::classify(&intent::Reply {
                    text,
                    subject,
                    received_at: Some(at),
                    tz: intent::calendar_zone(c.tz.as_deref(), c.phone.as_deref()),
                    from,
                    contact_email: c.email.as_deref(),
                })
            });
        let Some(reading) = reading else {
            return kind.to_engine(id, serde_json::json!({}));
        };
        let said = reading.intent;
        let settled = kind.clone().settle(Some(&reading), Default::default());
        let payload = serde_json::json!({ intent::PAYLOAD_KEY: reading });
        let mut signal = settled.to_engine(id, payload);
        signal.raises = settled.raises_with(Some(said));
        signal.facts = kind.facts(Some(&reading));
        signal
    }

    pub(super) fn input_for(
        &mut self,
        index: usize,
        action: &Action,
        at: DateTime<Utc>,
    ) -> Result<Input, SimError> {
        let id = index.to_string();
        Ok(match action {
            Action::Email {
                headers,
                subject,
                text,
            } => {
                let headers = headers
                    .iter()
                    .map(|(k, v)| {
                        let v = match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), v)
                    })
                    .collect();
                let mail = crate::inbound::mail::Mail::from_parts(
                    headers,
                    None,
                    None,
                    subject.clone(),
                    text.clone(),
                );
                let class = crate::inbound::classify::classify(&mail, at.date_naive());
                let kind = crate::inbound::SignalKind::of_mail(&class);
                let kind = self.count_bounce(kind, at);
                let words = text.as_deref().unwrap_or_default();
                let from = mail.from.as_deref();
                Input::Signal(self.reply_signal(&id, kind, words, subject.as_deref(), from, at))
            }
            Action::Bounce { bounce } => {
                let kind =
                    self.count_bounce(crate::inbound::SignalKind::Bounce { bounce: *bounce }, at);
                Input::Signal(kind.to_engine(&id, serde_json::json!({})))
            }
            Action::Contact { contact } => {
                let mut view = contact_view(contact)?;
                view.opted_out = self.state.contact.opted_out.clone();
                Input::ContactChanged(view)
            }
            Action::Reply { channel, text } => {
                let kind = crate::inbound::SignalKind::Reply {
                    channel: channel.clone(),
                };
                let words = text.as_deref().unwrap_or_default();
                Input::Signal(self.reply_signal(&id, kind, words, None, None, at))
            }
            Action::CallConnected => Input::Signal(Signal::call_connected(id)),
            Action::ConnectionAccepted => {
                Input::Signal(Signal::raising(id, &["connection_accepted"]))
            }
            Action::MeetingBooked => Input::Signal(Signal::raising(id, &["meeting_booked"])),
            Action::OptOut { channel } => Input::Signal(Signal::opt_out(id, channel)),
            Action::Event { key, payload } => Input::Signal(Signal {
                id,
                raises: vec![key.clone()],
                opt_out: None,
                payload: if payload.is_null() {
                    serde_json::json!({})
                } else {
                    payload.clone()
                },
                inbox: None,
                facts: crate::engine::SignalFacts::default(),
            }),
            Action::TaskOutcome { step, outcome } => {
                // The task of that step, if it is the current run; run 0 never exists, so an
                // outcome for another step is rejected (and shows in the journey).
                let run = match &self.state.run {
                    Some(r) if &r.step == step => r.id,
                    _ => 0,
                };
                Input::TaskOutcome {
                    run,
                    outcome: outcome.clone(),
                }
            }
            Action::Approval {
                decision,
                input,
                by,
            } => Input::Decide {
                run: None,
                decision: *decision,
                input: input.clone(),
                by: by.clone(),
            },
            Action::Pause => Input::Pause,
            Action::Resume => Input::Resume,
        })
    }

    /// A soft bounce that is the third within 7 days is a hard one (docs/signals.md, "Inbox signals").
    fn count_bounce(
        &mut self,
        kind: crate::inbound::SignalKind,
        at: DateTime<Utc>,
    ) -> crate::inbound::SignalKind {
        use crate::inbound::classify::BounceType;
        if let crate::inbound::SignalKind::Bounce {
            bounce: BounceType::Soft,
        } = kind
        {
            self.soft_bounces.push(at);
            let bounce = crate::inbound::classify::effective_bounce(
                BounceType::Soft,
                &self.soft_bounces,
                at,
            );
            return crate::inbound::SignalKind::Bounce { bounce };
        }
        kind
    }

    /// Applies one input; `entry` is the index of the script entry it came from, so that a
    /// task run closed by a scripted outcome shows that entry as its `woken_by` (signals carry
    /// their index as their id already).
    fn apply(
        &mut self,
        flow: &Flow,
        input: Input,
        now: DateTime<Utc>,
        ctx: &Ctx,
        entry: Option<usize>,
    ) {
        let (next, effects) = step(&self.state, flow, input.clone(), now, ctx);
        let requested = self.record(next, &effects, &input, now, entry);
        self.answer_fetches(flow, requested, now, ctx);
    }

    /// Keeps what one step did: the new state and its runs (with deferrals).
    pub(super) fn record(
        &mut self,
        next: EnrollmentState,
        effects: &[Effect],
        input: &Input,
        now: DateTime<Utc>,
        entry: Option<usize>,
    ) -> Vec<(u64, u32)> {
        let outcome_for = match input {
            Input::TaskOutcome { run, .. } => Some(*run),
            Input::Decide { .. } => self.state.run.as_ref().map(|r| r.id),
            _ => None,
        };
        let mut requested = Vec::new();
        self.state = next;
        for effect in effects.iter().cloned() {
            match effect {
                Effect::RunOpened(run) => {
                    self.by_run.insert(run.id, self.runs.len());
                    self.runs.push(RunRecord {
                        step: run.step,
                        step_type: run.step_type.to_string(),
                        entered: run.entered,
                        until: run.until,
                        scheduled: run.scheduled,
                        closed: None,
                        branch: None,
                        woken_by: None,
                        deferrals: Vec::new(),
                        variant: None,
                    });
                }
                Effect::Journey(crate::engine::JourneyEntry::Deferred {
                    run,
                    to,
                    reason,
                    cap,
                    ..
                }) => {
                    if let Some(&i) = self.by_run.get(&run) {
                        let reason = cap
                            .map(DeferralReason::Cap)
                            .or(reason.map(DeferralReason::Window));
                        self.runs[i].deferrals.push(Deferral {
                            at: now,
                            to,
                            reason,
                        });
                    }
                }
                Effect::Dispatch(d) => {
                    if let Some(&i) = self.by_run.get(&d.run) {
                        self.runs[i].variant = d.variant;
                    }
                }
                Effect::TaskCreated(task) => {
                    if let Some(&i) = self.by_run.get(&task.run) {
                        let r = &mut self.runs[i];
                        r.until = task.due_by;
                        r.variant = task.variant;
                        // A task stays open after it is created, so no `closed` tells when it
                        // was: one deferred for capacity (a LinkedIn `min_gap`) is created
                        // later than planned at entry, and `scheduled` says when.
                        r.scheduled = Some(now);
                    }
                }
                Effect::FetchRequested(r) => requested.push((r.run, r.attempt)),
                Effect::RunClosed {
                    run,
                    closed,
                    branch,
                    woken_by,
                    ..
                } => {
                    if let Some(&i) = self.by_run.get(&run) {
                        let r = &mut self.runs[i];
                        r.closed = Some(closed);
                        r.branch = branch;
                        r.woken_by = match woken_by {
                            Some(w) => w.parse().ok(),
                            None if outcome_for == Some(run) => entry,
                            None => None,
                        };
                    }
                }
                _ => {}
            }
        }
        requested
    }

    /// Applies the scripted answer of each fetch attempt `record` saw requested: it arrives
    /// `ms` later (in order, before any later script entry: an approximation that keeps a
    /// simulation one pass).
    fn answer_fetches(
        &mut self,
        flow: &Flow,
        requested: Vec<(u64, u32)>,
        now: DateTime<Utc>,
        ctx: &Ctx,
    ) {
        for (run, attempt) in requested {
            let step = self
                .by_run
                .get(&run)
                .map(|&i| self.runs[i].step.clone())
                .unwrap_or_default();
            let scripted = self
                .fetch
                .get(&step)
                .and_then(|a| a.get(attempt as usize - 1))
                .cloned();
            let (answer, ms) = match scripted {
                Some(ScriptedAnswer::Response { status, body, ms }) => (
                    crate::engine::FetchAnswer::Response { status, body, ms },
                    ms,
                ),
                Some(ScriptedAnswer::Error { error, ms }) => (
                    crate::engine::FetchAnswer::Error {
                        error,
                        ms,
                        refused: false,
                    },
                    ms,
                ),
                Some(ScriptedAnswer::Timeout { .. }) => {
                    (crate::engine::FetchAnswer::Timeout { ms: 0 }, 0)
                }
                None => (
                    crate::engine::FetchAnswer::Error {
                        error: "no answer scripted".into(),
                        ms: 0,
                        refused: true,
                    },
                    0,
                ),
            };
            let at = now + chrono::Duration::milliseconds(ms as i64);
            self.apply(
                flow,
                Input::FetchAnswer {
                    run,
                    attempt,
                    answer,
                },
                at,
                ctx,
                None,
            );
        }
    }

    pub(super) fn timeline(self) -> Timeline {
        let outcome = match self.state.status {
            Status::Completed => self.state.outcome.clone(),
            Status::Exited | Status::Failed => self.state.reason.clone(),
            Status::Active | Status::Paused => None,
        };
        Timeline {
            state: self.state.status,
            outcome,
            runs: self.runs,
        }
    }
}

/// The readable table of `nudge simulate` without `--json`.
pub fn render_table(t: &Timeline) -> String {
    let opt = |v: &Option<DateTime<Utc>>| v.map(instant::format).unwrap_or_default();
    let header = [
        "#",
        "step",
        "type",
        "entered",
        "until",
        "scheduled",
        "closed",
        "branch",
        "woken_by",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, r) in t.runs.iter().enumerate() {
        rows.push(vec![
            (i + 1).to_string(),
            r.step.clone(),
            r.step_type.clone(),
            instant::format(r.entered),
            opt(&r.until),
            opt(&r.scheduled),
            opt(&r.closed),
            r.branch.clone().unwrap_or_default(),
            r.woken_by
                .map(|w| format!("script[{w}]"))
                .unwrap_or_default(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    out.push_str(&format!("state: {}", t.state.as_str()));
    if let Some(o) = &t.outcome {
        out.push_str(&format!("  outcome: {o}"));
    }
    out.push('\n');
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
