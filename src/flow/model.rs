//! The flow model: a validated flow document (docs/flows.md) as Rust types.
//!
//! This is what the engine interprets. Every value in it has already been checked by
//! [`mod@crate::flow::validate`], which is the only way to build a [`Flow`] from JSON: the validator
//! walks the document once, collects every problem, and builds these types from the same walk,
//! so there is one definition of the format (no serde mirror that could drift from it).
//! Timing slots hold *parsed* values ([`Duration`], [`Until`], [`Zone`], [`SendWindow`],
//! [`Holidays`]), or a parsed `$:` [`Expr`] that the engine evaluates when the step is entered.
//!
//! The original JSON document is what gets stored (a flow version is immutable); load it again
//! with [`Flow::from_json`].

use crate::flow::events::Event;
use crate::flow::expr::{ContactView, Expr};
use crate::flow::validate::{validate, Problem, ValidateOptions};
use crate::timing::Zone;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::timing::{Duration, Holidays, SendWindow, Until};

/// The name of a step: a key of the flow's `steps` object.
pub type StepId = String;

/// A validated flow document.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    /// The flow's name (`outbound-v1`); versions of a flow share it.
    pub name: String,
    /// The step every enrollment enters first. Always names a step of `steps`.
    pub start: StepId,
    /// Flow-wide timing and exits: send window, jitter, `exit_on`, holidays.
    pub settings: Settings,
    /// The typed schema of the enrollment's input (`input.*` in expressions).
    pub input: InputSchema,
    /// Every step by name. Every `next` target names one of them.
    pub steps: BTreeMap<StepId, Step>,
}

impl Flow {
    /// Validates `json` and builds the flow, or returns every problem (errors and warnings) when
    /// there is at least one error. Warnings alone do not stop the flow from being built.
    pub fn from_json(
        json: &serde_json::Value,
        opts: &ValidateOptions,
    ) -> Result<Flow, Vec<Problem>> {
        let v = validate(json, opts);
        match v.flow {
            Some(flow) => Ok(flow),
            None => Err(v.problems),
        }
    }

    /// The step named `id`.
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.get(id)
    }

    /// Every step once, in the order an enrollment meets them: breadth-first from `start`
    /// along each step's branches, then steps no branch reaches, by id.
    pub fn steps_in_order(&self) -> Vec<(&str, &Step)> {
        let mut order: Vec<&str> = vec![self.start.as_str()];
        let mut i = 0;
        while i < order.len() {
            if let Some(step) = self.steps.get(order[i]) {
                for (_, target) in step.successors() {
                    if !order.contains(&target.as_str()) {
                        order.push(target.as_str());
                    }
                }
            }
            i += 1;
        }
        for id in self.steps.keys() {
            if !order.contains(&id.as_str()) {
                order.push(id.as_str());
            }
        }
        order
            .into_iter()
            .filter_map(|id| self.steps.get(id).map(|s| (id, s)))
            .collect()
    }

    /// True when some step has variants: only then do its enrollments' exposures and
    /// conversions need writing.
    pub fn has_experiments(&self) -> bool {
        self.steps.values().any(|s| !s.variants.is_empty())
    }

    /// Step `id`'s experiment, when it has variants: its key in the statistics (the assignment
    /// seed without its colon, `"<flow name>/<step id>"` or the shared name), whether it is
    /// shared, and its settings (the defaults when the step gives none).
    pub fn experiment_of(&self, id: &str) -> Option<(String, bool, Experiment)> {
        let step = self.step(id)?;
        if step.variants.is_empty() {
            return None;
        }
        let settings = step.experiment.clone().unwrap_or(Experiment {
            name: None,
            goal: Goal::Reply,
            alpha: Experiment::DEFAULT_ALPHA,
            auto_stop: false,
            tuning: Experiment::DEFAULT_TUNING,
        });
        let key = match &settings.name {
            Some(name) => name.clone(),
            None => format!("{}/{id}", self.name),
        };
        Some((key, settings.name.is_some(), settings))
    }

    /// The step every enrollment enters first.
    pub fn start_step(&self) -> &Step {
        &self.steps[&self.start]
    }
}

/// `settings` (docs/flows.md, "Settings"). Every field is optional in JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// When outreach and tasks may happen. `None`: any time (the SMS window still applies).
    pub send_window: Option<SendWindow>,
    /// The largest random delay added to each outreach step. Always fixed units only.
    pub jitter: Option<Duration>,
    /// Events that end the enrollment instead of waking it (docs/signals.md, "Routing").
    pub exit_on: Vec<Event>,
    /// Dates business days skip and send windows treat as closed. Empty when absent.
    pub holidays: Holidays,
    /// What an out-of-office notice does (docs/signals.md, "Inbox signals").
    pub out_of_office: OutOfOffice,
}

/// `settings.out_of_office` (docs/signals.md, "Inbox signals"): pause until the return date plus `extra` (or
/// `default_pause` without a date), counted from the message's arrival, never past `max_pause`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfOffice {
    /// `pause_until_return` (default), `ignore` or `exit`.
    pub action: crate::routing::OooAction,
    /// Added to the start of the return date in the contact's zone (default `1bd`: not the
    /// first hour back, when the inbox is fullest).
    pub extra: Duration,
    /// The pause when no usable date is stated (default `7d`).
    pub default_pause: Duration,
    /// The longest pause, from the message's arrival (default `30d`).
    pub max_pause: Duration,
}

impl Default for OutOfOffice {
    fn default() -> Self {
        let d = |t: &str| Duration::parse(t).expect("a valid default duration");
        OutOfOffice {
            action: crate::routing::OooAction::default(),
            extra: d("1bd"),
            default_pause: d("7d"),
            max_pause: d("30d"),
        }
    }
}

/// The type of an `input` field (docs/flows.md, "Settings", docs/timing.md, "Expressions in timing slots").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A JSON number.
    Number,
    /// A JSON string.
    String,
    /// An RFC 3339 instant with an offset, as a JSON string (`2026-09-01T08:00:00Z`).
    Timestamp,
    /// `true` or `false`.
    Boolean,
}

impl FieldType {
    /// The spelling used in flow documents.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Number => "number",
            FieldType::String => "string",
            FieldType::Timestamp => "timestamp",
            FieldType::Boolean => "boolean",
        }
    }

    /// Parses a spelling of a flow document.
    pub fn parse(text: &str) -> Option<FieldType> {
        match text {
            "number" => Some(FieldType::Number),
            "string" => Some(FieldType::String),
            "timestamp" => Some(FieldType::Timestamp),
            "boolean" => Some(FieldType::Boolean),
            _ => None,
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed schema: field name → type. Used for the flow's `input` and an approval's form.
pub type InputSchema = BTreeMap<String, FieldType>;

/// One step: what it does and where the flow goes next.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step's type with its parsed `params`.
    pub action: Action,
    /// `next`: branch key → step. Which keys exist depends on the step type; the validator has
    /// checked them (see [`Step::next`] and docs/flows.md).
    pub next: BTreeMap<String, StepId>,
    /// An outreach step's variants (none, or at least two): each contact gets one
    /// ([`crate::experiment::assign`]), the first is the control.
    pub variants: Vec<Variant>,
    /// The experiment the variants are judged by; `Some` exactly when there are variants.
    pub experiment: Option<Experiment>,
}

/// One version of an outreach step's message.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// `[a-z0-9_]`, at most 40 characters; what the dispatch and the journey show.
    pub name: String,
    /// Its share of new contacts, relative to the other variants' (positive).
    pub weight: f64,
    /// The step's action with the variant's `params` laid over the step's.
    pub action: Action,
}

/// What a step's variants are compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// A human reply (never an auto-reply or an out-of-office notice).
    Reply,
    /// A meeting booked (a calendar webhook's `meeting_booked`).
    MeetingBooked,
    /// A reply read as `interested`.
    IntentInterested,
}

impl Goal {
    /// Every goal, in the order the docs list them.
    pub const ALL: [Goal; 3] = [Goal::Reply, Goal::MeetingBooked, Goal::IntentInterested];

    /// The spelling in a flow document: the event the goal is.
    pub fn as_str(self) -> &'static str {
        match self {
            Goal::Reply => "reply",
            Goal::MeetingBooked => "meeting_booked",
            Goal::IntentInterested => "intent:interested",
        }
    }

    /// The goal spelled `text`.
    pub fn parse(text: &str) -> Option<Goal> {
        Goal::ALL.into_iter().find(|g| g.as_str() == text)
    }
}

/// A step's `experiment`: the goal, the error rate, whether the loser stops by itself, and the
/// name that shares one experiment across steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Steps naming the same experiment give a contact the same variant at each.
    pub name: Option<String>,
    /// What counts as a conversion.
    pub goal: Goal,
    /// The always-valid test's error rate, in (0, 1); default 0.05.
    pub alpha: f64,
    /// Stop the worse variant once the test says so; default false.
    pub auto_stop: bool,
    /// The confidence sequence's tuning (its sample size of best width); default 5,000.
    pub tuning: f64,
}

impl Experiment {
    /// `alpha` when the flow gives none.
    pub const DEFAULT_ALPHA: f64 = 0.05;
    /// `tuning` when the flow gives none.
    pub const DEFAULT_TUNING: f64 = 5_000.0;
}

impl Step {
    /// The step type.
    pub fn kind(&self) -> StepKind {
        self.action.kind()
    }

    /// The step wired to branch `key` (`then`, `timeout`, an event name, an outcome, a case…).
    pub fn next(&self, key: &str) -> Option<&StepId> {
        self.next.get(key)
    }

    /// Every wired branch and its target, in key order.
    pub fn successors(&self) -> impl Iterator<Item = (&str, &StepId)> {
        self.next.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The timeout of a step that has one (`wait_for`, tasks, `approval`); a `fetch` timeout is
    /// [`FetchParams::timeout`] because it takes `for` only.
    pub fn timeout(&self) -> Option<&Deadline> {
        match &self.action {
            Action::WaitFor(p) => p.timeout.as_ref(),
            Action::Call(p) => p.task.timeout.as_ref(),
            Action::LinkedinConnect(p) | Action::LinkedinMessage(p) => p.timeout.as_ref(),
            Action::Approval(p) => p.timeout.as_ref(),
            _ => None,
        }
    }

    /// True when entering this step always lets time pass before it can move on: a `wait`, a
    /// task, an `approval`, or a `wait_for` with a timeout. A cycle is legal only through one of
    /// these (docs/flows.md, `CYCLE`).
    pub fn lets_time_pass(&self) -> bool {
        match &self.action {
            Action::Wait(_)
            | Action::Call(_)
            | Action::LinkedinConnect(_)
            | Action::LinkedinMessage(_)
            | Action::Approval(_) => true,
            Action::WaitFor(p) => p.timeout.is_some(),
            _ => false,
        }
    }
}

/// The step types of docs/flows.md, without their parameters. Serialized as its `type` spelling
/// ([`StepKind::as_str`]), e.g. in a stored run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Send an email (outreach).
    Email,
    /// Send an SMS (outreach, with the SMS window).
    Sms,
    /// A call task.
    Call,
    /// A LinkedIn connection request task.
    LinkedinConnect,
    /// A LinkedIn message task.
    LinkedinMessage,
    /// Wait for a duration or until an instant.
    Wait,
    /// Wait for events, with an optional timeout.
    WaitFor,
    /// Wait for a person's approval.
    Approval,
    /// Call an HTTP endpoint.
    Fetch,
    /// Pick a branch from contact and input data.
    Branch,
    /// Finish the enrollment.
    End,
}

impl StepKind {
    /// Every step type, in the order docs/flows.md lists them.
    pub const ALL: [StepKind; 11] = [
        StepKind::Email,
        StepKind::Sms,
        StepKind::Call,
        StepKind::LinkedinConnect,
        StepKind::LinkedinMessage,
        StepKind::Wait,
        StepKind::WaitFor,
        StepKind::Approval,
        StepKind::Fetch,
        StepKind::Branch,
        StepKind::End,
    ];

    /// The `type` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Email => "email",
            StepKind::Sms => "sms",
            StepKind::Call => "call",
            StepKind::LinkedinConnect => "linkedin_connect",
            StepKind::LinkedinMessage => "linkedin_message",
            StepKind::Wait => "wait",
            StepKind::WaitFor => "wait_for",
            StepKind::Approval => "approval",
            StepKind::Fetch => "fetch",
            StepKind::Branch => "branch",
            StepKind::End => "end",
        }
    }

    /// Parses a `type` spelling.
    pub fn parse(text: &str) -> Option<StepKind> {
        StepKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Outreach steps hand a dispatch to the delivery side (docs/service.md, "Delivery").
    pub fn is_outreach(self) -> bool {
        matches!(self, StepKind::Email | StepKind::Sms)
    }

    /// Task steps wait for a person (or a dialer) to complete them with an outcome.
    pub fn is_task(self) -> bool {
        matches!(
            self,
            StepKind::Call | StepKind::LinkedinConnect | StepKind::LinkedinMessage
        )
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a step does, with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Next: `then`.
    Email(OutreachParams),
    /// Next: `then`.
    Sms(OutreachParams),
    /// Next: `then`, optional per-outcome keys, optional `timeout`.
    Call(CallParams),
    /// Next: `then`, optional per-outcome keys (`accepted`, …), optional `timeout`.
    LinkedinConnect(TaskParams),
    /// Next: `then`, optional per-outcome keys (`replied`, …), optional `timeout`.
    LinkedinMessage(TaskParams),
    /// Next: `then`.
    Wait(Deadline),
    /// Next: one key per listed event, optional `timeout`.
    WaitFor(WaitForParams),
    /// Next: `approved`, `rejected`, optional `timeout`.
    Approval(ApprovalParams),
    /// Next: `ok`, `error`, optional `timeout` (a timeout takes `error` when it is not wired).
    Fetch(FetchParams),
    /// Next: one key per case name, and `else`.
    Branch(BranchParams),
    /// No next.
    End(EndParams),
}

impl Action {
    /// The step type.
    pub fn kind(&self) -> StepKind {
        match self {
            Action::Email(_) => StepKind::Email,
            Action::Sms(_) => StepKind::Sms,
            Action::Call(_) => StepKind::Call,
            Action::LinkedinConnect(_) => StepKind::LinkedinConnect,
            Action::LinkedinMessage(_) => StepKind::LinkedinMessage,
            Action::Wait(_) => StepKind::Wait,
            Action::WaitFor(_) => StepKind::WaitFor,
            Action::Approval(_) => StepKind::Approval,
            Action::Fetch(_) => StepKind::Fetch,
            Action::Branch(_) => StepKind::Branch,
            Action::End(_) => StepKind::End,
        }
    }
}

/// `email` and `sms` parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct OutreachParams {
    /// The template reference the dispatch carries (docs/service.md, "Delivery"). Non-empty.
    pub template: String,
    /// Optional channel details (e.g. `{"subject": "…", "from_name": "…"}`), an opaque JSON
    /// object copied into the dispatch unchanged for the delivery side.
    pub channel: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Parameters of the `linkedin_connect` and `linkedin_message` tasks (and the shared part of
/// `call`).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskParams {
    /// What the person doing the task is asked to do, shown in `ListTasks`.
    pub instructions: Option<String>,
    /// The outcomes `CompleteTask` accepts. `None`: any outcome name. When present, the
    /// per-outcome `next` keys (and a call's `connected_outcomes`) are among them.
    pub outcomes: Option<Vec<String>>,
    /// When the task is not completed by then, the run closes on `timeout`.
    pub timeout: Option<Deadline>,
}

/// `call` parameters: a task whose connected outcomes raise `call_connected` and `reply`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallParams {
    /// What every task has: instructions, outcomes, timeout.
    pub task: TaskParams,
    /// Outcomes that count as a connected call (docs/signals.md, "Kinds of signal and the events they raise"). Default `["connected"]`.
    pub connected_outcomes: Vec<String>,
}

/// The outcome of a `linkedin_connect` task that raises `connection_accepted` (docs/signals.md, "Kinds of signal and the events they raise").
pub const OUTCOME_ACCEPTED: &str = "accepted";
/// The outcome of a `linkedin_message` task that raises `reply` and `reply:linkedin`.
pub const OUTCOME_REPLIED: &str = "replied";

/// A wake-up (`wait`) or a deadline (a `timeout`): exactly one of `for` or `until`, and the
/// optional `tz` both resolve in (absent: the zone rule of docs/timing.md, "Zones").
#[derive(Debug, Clone, PartialEq)]
pub struct Deadline {
    /// `for` a duration or `until` an instant.
    pub target: Target,
    /// The zone calendar units and wall clocks resolve in; `None`: the zone rule decides.
    pub tz: Option<Zone>,
}

/// A timeout is a [`Deadline`] (docs/flows.md, "Timeouts": the same grammar aimed at a deadline).
pub type Timeout = Deadline;

/// Which of the two slots a [`Deadline`] uses.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// `duration` / `for`: measured from the moment the step is entered.
    For(DurationSlot),
    /// `until`: an instant.
    Until(UntilSlot),
}

/// A duration slot: a literal, or a `$:` expression that evaluates to milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum DurationSlot {
    /// Written out (`"2bd"`, `30000`): parsed, and checked against `max_wait`, at validation.
    Literal(Duration),
    /// `"$: …"`: evaluated when the step is entered; `max_wait` is checked then.
    Expr(Expr),
}

/// An `until` slot: a literal, or a `$:` expression that evaluates to a timestamp (or a number
/// of epoch milliseconds).
#[derive(Debug, Clone, PartialEq)]
pub enum UntilSlot {
    /// Written out: an instant, a wall clock, an offset or a calendar pattern.
    Literal(Until),
    /// `"$: …"`: evaluated when the step is entered.
    Expr(Expr),
}

/// `wait_for` parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitForParams {
    /// The events that wake the step, each wired in `next`. Non-empty, no duplicates.
    pub events: Vec<Event>,
    /// Without one, the account's `max_wait` (if any) is the timeout (docs/flows.md, "Plan limits").
    pub timeout: Option<Deadline>,
}

/// `approval` parameters (docs/flows.md, "approval").
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalParams {
    /// What is being approved, shown on the approval page and in the dispatch. Non-empty.
    pub title: String,
    /// More about it, shown on the page.
    pub description: Option<String>,
    /// The form the approver may fill in (field → type); the answer is validated against it.
    /// Empty: no form.
    pub input: InputSchema,
    /// Without an answer by then, the run closes on `timeout`.
    pub timeout: Option<Deadline>,
    /// How long the link works; defaults to the timeout (or 7 days) and never outlives it.
    pub link_ttl: Option<Duration>,
}

/// The default `fetch` timeout (docs/flows.md, "fetch").
pub const FETCH_TIMEOUT_DEFAULT_MS: i64 = 10_000;
/// The longest `fetch` timeout (docs/flows.md, "fetch").
pub const FETCH_TIMEOUT_MAX_MS: i64 = 60_000;
/// The default cap on a `fetch` response body (docs/flows.md, "fetch"): 64 KiB.
pub const FETCH_RESPONSE_LIMIT_DEFAULT: usize = 64 * 1024;
/// The largest `response_limit` a flow may ask for: 1 MiB.
pub const FETCH_RESPONSE_LIMIT_MAX: usize = 1024 * 1024;

/// `fetch` parameters (docs/flows.md, "fetch").
#[derive(Debug, Clone, PartialEq)]
pub struct FetchParams {
    /// An absolute `https://` (or `http://`) URL, a literal; its host must be on the account's
    /// allow list when the request is made.
    pub url: String,
    /// The host part of `url`, lower-cased.
    pub host: String,
    /// The HTTP method; `GET` when absent.
    pub method: Method,
    /// Query parameters added to the URL: literals or `$:` expressions.
    pub query: BTreeMap<String, Operand>,
    /// Extra request headers: literals or `$:` expressions. Names are valid header names.
    pub headers: BTreeMap<String, Operand>,
    /// A JSON request body (not for `GET`); a string in it that starts with `$:` is an
    /// expression, evaluated when the step is entered.
    pub body: Option<serde_json::Value>,
    /// Each attempt's budget: a duration only (`until` is refused, docs/timing.md, "A target already in the past").
    pub timeout: Option<FetchTimeout>,
    /// How many attempts (1–10) and the first backoff, doubled per retry.
    pub retry: Retry,
    /// The largest response body accepted, in bytes; a larger one is an `error`.
    pub response_limit: usize,
}

/// `retry` of a `fetch`.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// 1–10; 1 means no retry.
    pub attempts: u32,
    /// The wait before the second attempt, doubled for each further one and jittered.
    pub backoff: Duration,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            attempts: 1,
            backoff: Duration::from_millis(1_000),
        }
    }
}

/// A `fetch` timeout: `for` only, and an optional `tz` for its calendar units.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchTimeout {
    /// How long the request may take.
    pub duration: DurationSlot,
    /// The zone for calendar units (`1d` across a DST change).
    pub tz: Option<Zone>,
}

/// A `fetch` method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET` (no body).
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method as HTTP writes it (`GET`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Parses a method name (upper case, as HTTP writes it).
    pub fn parse(text: &str) -> Option<Method> {
        match text {
            "GET" => Some(Method::Get),
            "POST" => Some(Method::Post),
            "PUT" => Some(Method::Put),
            "PATCH" => Some(Method::Patch),
            "DELETE" => Some(Method::Delete),
            _ => None,
        }
    }
}

/// `branch` parameters: cases evaluated in order; the first that holds wins, else `else`.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchParams {
    /// In order; names are distinct and none is `else`.
    pub cases: Vec<Case>,
}

/// One named case of a `branch`; its name is its `next` key.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The case's name: lower-case letters, digits and `_`.
    pub name: String,
    /// When the case holds.
    pub when: Condition,
}

/// An operand of a comparison: a `$:` expression or a literal JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// `"$: fetch.body.stage"`: evaluated when the branch is entered.
    Expr(Expr),
    /// A literal: a string, number or boolean (or, as the second operand of `in`, a list).
    Literal(serde_json::Value),
}

/// A comparison operator of a branch condition (docs/flows.md, "branch").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `gt`.
    Gt,
    /// `gte`.
    Gte,
    /// `lt`.
    Lt,
    /// `lte`.
    Lte,
}

impl Compare {
    /// Every comparison, with its spelling.
    pub const ALL: [(Compare, &'static str); 6] = [
        (Compare::Eq, "eq"),
        (Compare::Ne, "ne"),
        (Compare::Gt, "gt"),
        (Compare::Gte, "gte"),
        (Compare::Lt, "lt"),
        (Compare::Lte, "lte"),
    ];

    /// An ordering (numbers or timestamps only), not an equality.
    pub fn is_order(self) -> bool {
        !matches!(self, Compare::Eq | Compare::Ne)
    }
}

/// A branch condition over `input.*`, `contact.*` and `fetch.*` (docs/flows.md, "branch").
/// It reads `signal.*` too: the signal that closed the last `wait_for`.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `{"exists": "contact.phone"}`: present, not null and not `""`.
    Exists(Path),
    /// `{"eq": [a, b]}` and the other comparisons.
    Compare(Compare, Operand, Operand),
    /// `{"in": [a, [v, …]]}`: `a` equals one of the values.
    In(Operand, Operand),
    /// `{"all": [c, …]}`: every condition holds (non-empty).
    All(Vec<Condition>),
    /// `{"any": [c, …]}`: at least one holds (non-empty).
    Any(Vec<Condition>),
    /// `{"not": c}`.
    Not(Box<Condition>),
}

impl BranchParams {
    /// The `next` key to take: the name of the first case that holds, else `"else"`.
    pub fn choose(&self, input: &serde_json::Value, contact: &ContactView) -> &str {
        self.cases
            .iter()
            .find(|c| c.when.holds(input, contact))
            .map_or("else", |c| c.name.as_str())
    }
}

impl Operand {
    /// The operand's value, `None` when a path is missing (or null) or the expression cannot
    /// be evaluated: a missing value makes every comparison false (docs/flows.md, "branch").
    fn value(&self, input: &serde_json::Value, contact: &ContactView) -> Option<serde_json::Value> {
        match self {
            Operand::Literal(v) => Some(v.clone()),
            Operand::Expr(e) => match &e.node {
                crate::flow::expr::Node::Path(p) => contact.get(p, input),
                _ => match crate::flow::expr::eval(e, input, contact).ok()? {
                    crate::flow::expr::Value::Number(n) => {
                        serde_json::Number::from_f64(n).map(serde_json::Value::Number)
                    }
                    crate::flow::expr::Value::Timestamp(t) => Some(serde_json::Value::String(
                        t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    )),
                    crate::flow::expr::Value::String(s) => Some(serde_json::Value::String(s)),
                    crate::flow::expr::Value::Boolean(b) => Some(serde_json::Value::Bool(b)),
                },
            },
        }
    }
}

impl Condition {
    /// Evaluates the condition on an enrollment's input, its contact and its last fetch.
    pub fn holds(&self, input: &serde_json::Value, contact: &ContactView) -> bool {
        match self {
            Condition::Exists(path) => contact
                .get(path, input)
                .is_some_and(|v| v.as_str() != Some("")),
            Condition::Compare(op, a, b) => {
                let (Some(a), Some(b)) = (a.value(input, contact), b.value(input, contact)) else {
                    return false;
                };
                match op {
                    Compare::Eq => same_scalar(&a, &b),
                    Compare::Ne => !same_scalar(&a, &b),
                    _ => order(&a, &b).is_some_and(|o| match op {
                        Compare::Gt => o.is_gt(),
                        Compare::Gte => o.is_ge(),
                        Compare::Lt => o.is_lt(),
                        _ => o.is_le(),
                    }),
                }
            }
            Condition::In(a, list) => {
                let (Some(a), Some(serde_json::Value::Array(items))) =
                    (a.value(input, contact), list.value(input, contact))
                else {
                    return false;
                };
                items.iter().any(|w| same_scalar(&a, w))
            }
            Condition::All(cs) => cs.iter().all(|c| c.holds(input, contact)),
            Condition::Any(cs) => cs.iter().any(|c| c.holds(input, contact)),
            Condition::Not(c) => !c.holds(input, contact),
        }
    }
}

/// Two numbers, or two RFC 3339 instants, in order; anything else has none.
fn order(a: &serde_json::Value, b: &serde_json::Value) -> Option<std::cmp::Ordering> {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (J::String(x), J::String(y)) => {
            let x = chrono::DateTime::parse_from_rfc3339(x).ok()?;
            let y = chrono::DateTime::parse_from_rfc3339(y).ok()?;
            Some(x.cmp(&y))
        }
        _ => None,
    }
}

/// Scalar equality as a person means it: `100` equals `100.0`, and two RFC 3339 strings equal
/// when they name the same instant.
fn same_scalar(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::String(x), J::String(y)) => {
            x == y
                || matches!(
                    (chrono::DateTime::parse_from_rfc3339(x), chrono::DateTime::parse_from_rfc3339(y)),
                    (Ok(p), Ok(q)) if p == q
                )
        }
        _ => a == b,
    }
}

/// A data path of expressions and branch conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// `input.<field>`: a field of the flow's `input` schema.
    Input(String),
    /// `contact.id`, `contact.email`, `contact.phone`, `contact.tz`.
    Contact(ContactField),
    /// `contact.attributes.<name>`: a free-form CRM attribute (untyped).
    Attribute(String),
    /// `fetch.status` or `fetch.body.<field>…`: the last `fetch` response (docs/flows.md, "fetch"). The
    /// first part is `status` or `body`.
    Fetch(Vec<String>),
    /// `signal.intent`, `signal.channel`, `signal.resume_on`, `signal.referral.email`,
    /// `signal.referral.name`: what the signal that closed the last `wait_for` carried. After a
    /// `wait_for` that closed without a signal (its timeout), every one is missing.
    Signal(SignalField),
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Input(n) => write!(f, "input.{n}"),
            Path::Contact(c) => write!(f, "contact.{}", c.as_str()),
            Path::Attribute(n) => write!(f, "contact.attributes.{n}"),
            Path::Fetch(parts) => write!(f, "fetch.{}", parts.join(".")),
            Path::Signal(field) => write!(f, "signal.{}", field.as_str()),
        }
    }
}

/// The fields of the signal that closed the last `wait_for`, as `signal.<field>` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalField {
    /// `signal.intent`: a classified reply's intent (`not_now`, …), a string.
    Intent,
    /// `signal.channel`: the channel it came on (`email`, `sms`, `linkedin`, `call`), a string.
    Channel,
    /// `signal.resume_on`: the date a `not_now` reply named, as a timestamp: the start of that
    /// day in the contact's zone, else the sender's.
    ResumeOn,
    /// `signal.referral.email`: the address of the person a reply pointed to, a string.
    ReferralEmail,
    /// `signal.referral.name`: that person's name, when written with the address, a string.
    ReferralName,
}

impl SignalField {
    /// Every field, in the order messages list them.
    pub const ALL: [SignalField; 5] = [
        SignalField::Intent,
        SignalField::Channel,
        SignalField::ResumeOn,
        SignalField::ReferralEmail,
        SignalField::ReferralName,
    ];

    /// The name after `signal.` in a path (`referral.email` has two parts).
    pub fn as_str(self) -> &'static str {
        match self {
            SignalField::Intent => "intent",
            SignalField::Channel => "channel",
            SignalField::ResumeOn => "resume_on",
            SignalField::ReferralEmail => "referral.email",
            SignalField::ReferralName => "referral.name",
        }
    }

    /// The field named `text` after `signal.` (`resume_on`, `referral.email`); `None` for any
    /// other name.
    pub fn parse(text: &str) -> Option<SignalField> {
        SignalField::ALL.into_iter().find(|f| f.as_str() == text)
    }
}

/// The typed fields of a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactField {
    /// `contact.id`.
    Id,
    /// `contact.email`.
    Email,
    /// `contact.phone`.
    Phone,
    /// `contact.tz`.
    Tz,
}

impl ContactField {
    /// The name after `contact.` in a path.
    pub fn as_str(self) -> &'static str {
        match self {
            ContactField::Id => "id",
            ContactField::Email => "email",
            ContactField::Phone => "phone",
            ContactField::Tz => "tz",
        }
    }

    /// The field named `text` after `contact.`; `None` for any other name (free-form data is
    /// `contact.attributes.<name>`).
    pub fn parse(text: &str) -> Option<ContactField> {
        match text {
            "id" => Some(ContactField::Id),
            "email" => Some(ContactField::Email),
            "phone" => Some(ContactField::Phone),
            "tz" => Some(ContactField::Tz),
            _ => None,
        }
    }
}

/// `end` parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EndParams {
    /// The enrollment's outcome (`replied`, `booked`, …), recorded when it completes.
    pub outcome: Option<String>,
}

/// A value that does not match an [`InputSchema`] (at enrollment, docs/timing.md, "Expressions in timing slots", or an approval
/// answer, docs/flows.md, "approval"): the field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputMismatch {
    /// The field's name (`demo_at`), for the API's field violation.
    pub field: String,
    /// What is wrong with it and what is expected.
    pub message: String,
}

impl fmt::Display for InputMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "input.{}: {}", self.field, self.message)
    }
}

/// Checks `value` against `schema`: every declared field present (not null) with its type; a
/// `timestamp` is an RFC 3339 string with an offset. Fields the schema does not declare are
/// allowed (templates may use them) and not typed. Returns every mismatch.
pub fn check_input(
    schema: &InputSchema,
    value: &serde_json::Value,
) -> Result<(), Vec<InputMismatch>> {
    use serde_json::Value as J;
    let empty = serde_json::Map::new();
    let obj = match value {
        J::Object(o) => o,
        J::Null => &empty,
        _ => {
            return Err(vec![InputMismatch {
                field: String::new(),
                message: "the input is a JSON object of field → value".into(),
            }])
        }
    };
    let mut out = Vec::new();
    for (field, t) in schema {
        let v = obj.get(field).filter(|v| !v.is_null());
        let ok = match (t, v) {
            (_, None) => {
                out.push(InputMismatch {
                    field: field.clone(),
                    message: format!(
                        "missing: the flow's `input` declares `{field}` as a {t}; add it"
                    ),
                });
                continue;
            }
            (FieldType::Number, Some(J::Number(_))) => true,
            (FieldType::String, Some(J::String(_))) => true,
            (FieldType::Boolean, Some(J::Bool(_))) => true,
            (FieldType::Timestamp, Some(J::String(s))) => {
                chrono::DateTime::parse_from_rfc3339(s).is_ok()
            }
            _ => false,
        };
        if !ok {
            let hint = if *t == FieldType::Timestamp {
                " (an RFC 3339 string such as \"2026-09-01T08:00:00Z\")"
            } else {
                ""
            };
            out.push(InputMismatch {
                field: field.clone(),
                message: format!("expected a {t}{hint}, found {}", v.expect("present")),
            });
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_checks() {
        let schema: InputSchema = [
            ("n", FieldType::Number),
            ("s", FieldType::String),
            ("t", FieldType::Timestamp),
            ("b", FieldType::Boolean),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let good =
            json!({"n": 1.5, "s": "x", "t": "2026-09-01T08:00:00+02:00", "b": false, "extra": [1]});
        assert_eq!(check_input(&schema, &good), Ok(()));
        let bad = json!({"n": "1", "s": null, "t": "2026-09-01 08:00", "b": true});
        let fields: Vec<String> = check_input(&schema, &bad)
            .unwrap_err()
            .into_iter()
            .map(|m| m.field)
            .collect();
        assert_eq!(fields, ["n", "s", "t"]);
        assert_eq!(check_input(&InputSchema::new(), &json!(null)), Ok(()));
        assert!(check_input(&InputSchema::new(), &json!([1])).is_err());
    }

    #[test]
    fn branch_choice() {
        let expr = |t: &str| Operand::Expr(Expr::parse(t).unwrap());
        let lit = Operand::Literal;
        let case = |name: &str, when: Condition| Case {
            name: name.into(),
            when,
        };
        let b = BranchParams {
            cases: vec![
                case(
                    "won",
                    Condition::Compare(Compare::Eq, expr("fetch.body.stage"), lit(json!("won"))),
                ),
                case(
                    "big",
                    Condition::In(expr("input.seats"), lit(json!([100, 250]))),
                ),
                case(
                    "many",
                    Condition::Compare(Compare::Gte, expr("input.seats * 2"), lit(json!(1000))),
                ),
                case(
                    "texting",
                    Condition::All(vec![
                        Condition::Exists(Path::Contact(ContactField::Phone)),
                        Condition::Not(Box::new(Condition::In(
                            expr("contact.attributes.country"),
                            lit(json!(["DE", "AT"])),
                        ))),
                    ]),
                ),
                case(
                    "later",
                    Condition::Compare(
                        Compare::Gt,
                        expr("input.at"),
                        lit(json!("2026-09-01T08:00:00Z")),
                    ),
                ),
                case(
                    "not_blue",
                    Condition::Compare(
                        Compare::Ne,
                        expr("contact.attributes.color"),
                        lit(json!("blue")),
                    ),
                ),
            ],
        };
        let mut contact = ContactView {
            id: "c".into(),
            ..ContactView::default()
        };
        for (input, want) in [
            (json!({"seats": 100.0}), "big"),
            (json!({"seats": 499}), "else"),
            (json!({"seats": 500}), "many"),
            (json!({"at": "2026-09-01T10:00:00+02:00"}), "else"),
            (json!({"at": "2026-09-01T10:00:01+02:00"}), "later"),
            (json!({}), "else"),
        ] {
            assert_eq!(b.choose(&input, &contact), want, "{input}");
        }
        contact.phone = Some(String::new());
        assert_eq!(
            b.choose(&json!({}), &contact),
            "else",
            "an empty phone does not exist"
        );
        contact.phone = Some("+12125551234".into());
        assert_eq!(b.choose(&json!({}), &contact), "texting");
        contact.attributes.insert("country".into(), json!("DE"));
        assert_eq!(b.choose(&json!({}), &contact), "else");
        contact.attributes.insert("color".into(), json!("red"));
        assert_eq!(
            b.choose(&json!({}), &contact),
            "not_blue",
            "ne with both present"
        );
        contact.fetch = Some(json!({"status": 200, "body": {"stage": "won"}}));
        assert_eq!(
            b.choose(&json!({"seats": 100}), &contact),
            "won",
            "first match wins"
        );
    }

    #[test]
    fn branch_reads_the_signal() {
        use crate::flow::expr::SignalView;
        use crate::inbound::intent::{Intent, Referral};
        let expr = |t: &str| Operand::Expr(Expr::parse(t).unwrap());
        let lit = Operand::Literal;
        let case = |name: &str, when: Condition| Case {
            name: name.into(),
            when,
        };
        let b = BranchParams {
            cases: vec![
                case(
                    "dated",
                    Condition::All(vec![
                        Condition::Exists(Path::Signal(SignalField::ResumeOn)),
                        Condition::Compare(
                            Compare::Gt,
                            expr("signal.resume_on"),
                            lit(json!("2027-01-01T00:00:00Z")),
                        ),
                    ]),
                ),
                case(
                    "later",
                    Condition::Compare(Compare::Eq, expr("signal.intent"), lit(json!("not_now"))),
                ),
                case(
                    "referred",
                    Condition::Exists(Path::Signal(SignalField::ReferralEmail)),
                ),
                case(
                    "not_sms",
                    Condition::Compare(Compare::Ne, expr("signal.channel"), lit(json!("sms"))),
                ),
            ],
        };
        let with = |v: Option<SignalView>| ContactView {
            id: "c".into(),
            signal: v,
            ..ContactView::default()
        };
        let at = |s: &str| {
            Some(
                chrono::DateTime::parse_from_rfc3339(s)
                    .unwrap()
                    .with_timezone(&chrono::Utc),
            )
        };
        let not_now = SignalView {
            channel: Some("email".into()),
            intent: Some(Intent::NotNow),
            ..SignalView::default()
        };
        let cases = [
            // No signal closed the last wait: every test of it fails, `ne` included.
            (None, "else"),
            (
                Some(SignalView {
                    resume_on: at("2027-03-01T07:00:00Z"),
                    ..not_now.clone()
                }),
                "dated",
            ),
            (
                Some(SignalView {
                    resume_on: at("2026-12-01T07:00:00Z"),
                    ..not_now.clone()
                }),
                "later",
            ),
            (Some(not_now.clone()), "later"),
            (
                Some(SignalView {
                    intent: Some(Intent::WrongPerson),
                    referral: Some(Referral {
                        email: "bo@example.com".into(),
                        name: None,
                    }),
                    ..not_now.clone()
                }),
                "referred",
            ),
            (
                Some(SignalView {
                    intent: Some(Intent::Interested),
                    ..not_now.clone()
                }),
                "not_sms",
            ),
            (
                Some(SignalView {
                    channel: Some("sms".into()),
                    intent: Some(Intent::Interested),
                    ..SignalView::default()
                }),
                "else",
            ),
        ];
        for (view, want) in cases {
            let label = format!("{view:?}");
            assert_eq!(b.choose(&json!({}), &with(view)), want, "{label}");
        }
    }

    #[test]
    fn step_kinds_round_trip() {
        for k in StepKind::ALL {
            assert_eq!(StepKind::parse(k.as_str()), Some(k));
            // A stored run keeps its type through serde: the same spelling.
            let json = serde_json::to_value(k).unwrap();
            assert_eq!(json, serde_json::Value::from(k.as_str()), "{k:?}");
            assert_eq!(serde_json::from_value::<StepKind>(json).unwrap(), k);
        }
        assert_eq!(StepKind::parse("Email"), None);
        let tasks: Vec<StepKind> = StepKind::ALL.into_iter().filter(|k| k.is_task()).collect();
        assert_eq!(
            tasks,
            [
                StepKind::Call,
                StepKind::LinkedinConnect,
                StepKind::LinkedinMessage
            ]
        );
    }
}
