//! The flow validator (SPEC §1 "Validation").
//!
//! [`validate`] walks the JSON document itself rather than deserializing it, so it can report
//! *every* problem (serde stops at the first), each with its SPEC code, a JSON Pointer
//! (RFC 6901) to the offending value, and a message that says how to fix it. The same walk
//! builds the typed [`Flow`]; it is returned only when no problem is an error.
//!
//! Order of the checks: document shape (`BAD_SCHEMA`), `input`, `settings`, each step (its
//! fields, its timing slots and expressions, its `next` keys), then the graph: `UNKNOWN_TARGET`,
//! `CYCLE`, and `UNREACHABLE` warnings. The graph rules use the raw `next` values, so a step
//! with a bad parameter still takes part in them.

use crate::code::Code;
use crate::flow::events::Event;
use crate::flow::expr::{self, Expr, Type};
use crate::flow::graph;
use crate::flow::model::*;
use crate::timing::{TimingError, Zone};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Account-level limits the validator checks against.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// The plan's longest wait (SPEC §5.7). A static wait or timeout whose longest possible
    /// span exceeds it is `WAIT_EXCEEDS_LIMIT`.
    pub max_wait: Option<Duration>,
    /// Hosts a `fetch` may call (lower case; `None`: not checked here, the engine checks at run
    /// time).
    pub allowed_hosts: Option<Vec<String>>,
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The flow is refused.
    Error,
    /// The flow is accepted, but something is probably a mistake (`UNREACHABLE`).
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding of the validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub severity: Severity,
    pub code: Code,
    /// JSON Pointer (RFC 6901) to the offending value (or where a missing one belongs).
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match self.severity {
            Severity::Error => write!(f, "{path}: {}: {}", self.code, self.message),
            Severity::Warning => write!(f, "{path}: warning: {}: {}", self.code, self.message),
        }
    }
}

/// The outcome of [`validate`].
#[derive(Debug, Clone)]
pub struct Validation {
    /// The typed flow, when no problem is an error.
    pub flow: Option<Flow>,
    /// Every problem found, errors and warnings, in document order of the checks.
    pub problems: Vec<Problem>,
}

impl Validation {
    /// True when no problem is an error.
    pub fn is_valid(&self) -> bool {
        !self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Escapes one reference token of a JSON Pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` + `/token`, escaped.
fn child(base: &str, token: &str) -> String {
    format!("{base}/{}", escape_token(token))
}

/// Validates a flow document; see the module docs.
pub fn validate(json: &Value, opts: &ValidateOptions) -> Validation {
    let mut v = Validator {
        problems: Vec::new(),
        opts,
        input: InputSchema::new(),
        holidays: Holidays::none(),
    };
    let flow = v.flow(json);
    let valid = !v.problems.iter().any(|p| p.severity == Severity::Error);
    Validation {
        flow: if valid { flow } else { None },
        problems: v.problems,
    }
}

struct Validator<'a> {
    problems: Vec<Problem>,
    opts: &'a ValidateOptions,
    /// The flow's `input` schema, read first: expressions are typed against it.
    input: InputSchema,
    /// The flow's holidays, read before any duration: `max_span` depends on them.
    holidays: Holidays,
}

/// What the graph rules need of a step, read from the raw JSON so that a step with a bad
/// parameter still takes part.
struct RawNode<'j> {
    id: &'j str,
    lets_time_pass: bool,
    next: Vec<(&'j str, &'j str)>,
}

const TOP_FIELDS: &[&str] = &["name", "start", "settings", "input", "steps"];
const SETTINGS_FIELDS: &[&str] = &["send_window", "jitter", "exit_on", "holidays"];
const STEP_FIELDS: &[&str] = &["type", "params", "next"];

impl Validator<'_> {
    fn error(&mut self, code: Code, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            severity: Severity::Error,
            code,
            path: path.into(),
            message: message.into(),
        });
    }

    fn warning(&mut self, code: Code, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            severity: Severity::Warning,
            code,
            path: path.into(),
            message: message.into(),
        });
    }

    /// A timing parser's refusal at `path`, with its hint, text and position.
    fn timing(&mut self, path: &str, e: TimingError) {
        let at = match e.position {
            Some(p) => format!(" (in {:?} at position {p})", e.text),
            None => format!(" (in {:?})", e.text),
        };
        self.error(e.code, path, format!("{}{at}", e.hint));
    }

    /// Reports keys of `obj` not in `allowed`.
    fn unknown_fields(&mut self, obj: &Map<String, Value>, path: &str, allowed: &[&str]) {
        for key in obj.keys() {
            if !allowed.contains(&key.as_str()) {
                let list = allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.error(
                    Code::BadSchema,
                    child(path, key),
                    format!("unknown field `{key}`: remove it (allowed here: {list})"),
                );
            }
        }
    }

    fn wrong_type(&mut self, path: &str, want: &str, got: &Value) {
        self.error(
            Code::BadSchema,
            path,
            format!("expected {want}, found {}", describe(got)),
        );
    }

    fn missing(&mut self, path: &str, field: &str, what: &str) {
        self.error(
            Code::BadSchema,
            child(path, field),
            format!("missing required field `{field}`: add {what}"),
        );
    }

    /// A required non-empty string field.
    fn req_string(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        field: &str,
        what: &str,
    ) -> Option<String> {
        match obj.get(field) {
            None => {
                self.missing(path, field, what);
                None
            }
            Some(v) => self.nonempty_string(v, &child(path, field), what),
        }
    }

    /// An optional non-empty string field.
    fn opt_string(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        field: &str,
        what: &str,
    ) -> Result<Option<String>, ()> {
        match obj.get(field) {
            None => Ok(None),
            Some(v) => self
                .nonempty_string(v, &child(path, field), what)
                .map(Some)
                .ok_or(()),
        }
    }

    fn nonempty_string(&mut self, v: &Value, path: &str, what: &str) -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::String(_) => {
                self.error(
                    Code::BadSchema,
                    path,
                    format!("must not be empty: give {what}"),
                );
                None
            }
            other => {
                self.wrong_type(path, &format!("a string ({what})"), other);
                None
            }
        }
    }

    fn flow(&mut self, json: &Value) -> Option<Flow> {
        let Some(root) = json.as_object() else {
            self.wrong_type("", "a flow object with `name`, `start` and `steps`", json);
            return None;
        };
        self.unknown_fields(root, "", TOP_FIELDS);
        let name = self.req_string(root, "", "name", "the flow's name, e.g. `\"outbound-v1\"`");
        let input = match root.get("input") {
            None => Some(InputSchema::new()),
            Some(v) => self.schema(v, "/input"),
        };
        self.input = input.clone().unwrap_or_default();
        let settings = match root.get("settings") {
            None => Some(Settings::default()),
            Some(Value::Object(s)) => self.settings(s),
            Some(other) => {
                self.wrong_type("/settings", "an object", other);
                None
            }
        };

        let mut steps = BTreeMap::new();
        let mut nodes: Vec<RawNode> = Vec::new();
        let mut steps_ok = true;
        match root.get("steps") {
            None => {
                self.missing("", "steps", "an object of steps by name");
                steps_ok = false;
            }
            Some(Value::Object(map)) if map.is_empty() => {
                self.error(
                    Code::BadSchema,
                    "/steps",
                    "a flow needs at least one step: add one, e.g. `\"done\": {\"type\": \"end\"}`",
                );
                steps_ok = false;
            }
            Some(Value::Object(map)) => {
                for (id, raw) in map {
                    let path = child("/steps", id);
                    if id.trim().is_empty() {
                        self.error(
                            Code::BadSchema,
                            &path,
                            "a step needs a name: use a non-empty key such as `\"email_1\"`",
                        );
                        steps_ok = false;
                    }
                    nodes.push(raw_node(id, raw));
                    match self.step(raw, &path) {
                        Some(step) => {
                            steps.insert(id.clone(), step);
                        }
                        None => steps_ok = false,
                    }
                }
            }
            Some(other) => {
                self.wrong_type("/steps", "an object of steps by name", other);
                steps_ok = false;
            }
        }

        let start = match root.get("start") {
            None => {
                self.missing("", "start", "the name of the first step");
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.wrong_type("/start", "the name of a step", other);
                None
            }
        };
        // With no steps, `/steps` is already the problem: no UNKNOWN_TARGET for `start` too.
        self.graph(&nodes, start.as_deref(), !nodes.is_empty());

        Some(Flow {
            name: name?,
            start: start?,
            settings: settings?,
            input: input?,
            steps: if steps_ok { steps } else { return None },
        })
    }

    // ---- input schemas ---------------------------------------------------------------------

    fn schema(&mut self, v: &Value, path: &str) -> Option<InputSchema> {
        let Some(obj) = v.as_object() else {
            self.wrong_type(
                path,
                "an object of field → type, e.g. `{\"demo_at\": \"timestamp\"}`",
                v,
            );
            return None;
        };
        let mut out = InputSchema::new();
        let mut ok = true;
        for (field, t) in obj {
            let p = child(path, field);
            if !is_identifier(field) {
                self.error(
                    Code::BadSchema,
                    &p,
                    format!("`{field}` is not a field name: use letters, digits and `_`, not starting with a digit, so `input.{field}` can be written in an expression"),
                );
                ok = false;
            }
            match t.as_str().and_then(FieldType::parse) {
                Some(ft) => {
                    out.insert(field.clone(), ft);
                }
                None => {
                    self.error(
                        Code::BadSchema,
                        &p,
                        format!(
                            "{} is not a field type: use `number`, `string`, `timestamp` or `boolean`",
                            describe(t)
                        ),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    // ---- settings --------------------------------------------------------------------------

    fn settings(&mut self, s: &Map<String, Value>) -> Option<Settings> {
        self.unknown_fields(s, "/settings", SETTINGS_FIELDS);
        let mut ok = true;
        // Holidays first: every duration's longest span depends on them.
        let holidays = match s.get("holidays") {
            None => Holidays::none(),
            Some(v) => match self.holidays(v) {
                Some(h) => h,
                None => {
                    ok = false;
                    Holidays::none()
                }
            },
        };
        self.holidays = holidays.clone();
        // A `${ }` in the window's times or zone is refused by name before the window parser
        // sees it (it would only call it a bad time).
        let interpolated: Vec<String> = s
            .get("send_window")
            .and_then(Value::as_object)
            .map(|w| {
                w.iter()
                    .filter(|(_, v)| v.as_str().is_some_and(expr::is_interpolation))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        for field in &interpolated {
            let text = s["send_window"][field]
                .as_str()
                .unwrap_or_default()
                .to_string();
            self.interpolation(&child("/settings/send_window", field), &text);
        }
        let send_window = match s.get("send_window") {
            None | Some(Value::Null) => None,
            Some(_) if !interpolated.is_empty() => {
                ok = false;
                None
            }
            Some(v) => match SendWindow::from_json(v) {
                Ok(w) => Some(w),
                Err(e) => {
                    // Point at the field when the error names one.
                    let path = match e.code {
                        Code::BadTz => "/settings/send_window/tz".to_string(),
                        Code::BadSchema
                            if v.as_object().is_some_and(|o| o.contains_key(&e.text)) =>
                        {
                            child("/settings/send_window", &e.text)
                        }
                        _ => "/settings/send_window".to_string(),
                    };
                    self.timing(&path, e);
                    ok = false;
                    None
                }
            },
        };
        let jitter = match s.get("jitter") {
            None => None,
            Some(v) => {
                let j = self.jitter(v);
                ok &= j.is_some();
                j
            }
        };
        let exit_on = match s.get("exit_on") {
            None => Vec::new(),
            Some(v) => match self.event_list(v, "/settings/exit_on", false) {
                Some(e) => e,
                None => {
                    ok = false;
                    Vec::new()
                }
            },
        };
        ok.then_some(Settings {
            send_window,
            jitter,
            exit_on,
            holidays,
        })
    }

    fn holidays(&mut self, v: &Value) -> Option<Holidays> {
        let path = "/settings/holidays";
        let Some(items) = v.as_array() else {
            self.wrong_type(path, "a list of dates `YYYY-MM-DD`", v);
            return None;
        };
        let mut dates = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let p = child(path, &i.to_string());
            match item.as_str() {
                // Parsed one by one so each bad date gets its own pointer.
                Some(s) => match Holidays::parse(&[s]) {
                    Ok(_) => dates.push(s),
                    Err(e) => {
                        self.timing(&p, e);
                        ok = false;
                    }
                },
                None => {
                    self.wrong_type(&p, "a date `YYYY-MM-DD`", item);
                    ok = false;
                }
            }
        }
        if !ok {
            return None;
        }
        match Holidays::parse(&dates) {
            Ok(h) => Some(h),
            Err(e) => {
                self.timing(path, e);
                None
            }
        }
    }

    fn jitter(&mut self, v: &Value) -> Option<Duration> {
        let path = "/settings/jitter";
        if let Some(s) = v.as_str() {
            if expr::is_interpolation(s) {
                self.interpolation(path, s);
                return None;
            }
            if expr::strip_prefix(s).is_some() {
                self.error(
                    Code::BadDuration,
                    path,
                    format!("`jitter` takes a literal fixed duration such as `\"20m\"`, not an expression (in {s:?})"),
                );
                return None;
            }
        } else if !v.is_number() {
            self.wrong_type(path, "a fixed duration such as `\"20m\"`", v);
            return None;
        }
        match Duration::from_json(v) {
            Ok(d) if d.is_fixed() => Some(d),
            Ok(_) => {
                self.error(
                    Code::BadDuration,
                    path,
                    format!("`jitter` takes fixed units only (`ms`, `s`, `m`, `h`): write `\"24h\"` rather than `\"1d\"` (in {v})"),
                );
                None
            }
            Err(e) => {
                self.timing(path, e);
                None
            }
        }
    }

    /// A list of event names (`exit_on`, `wait_for.events`).
    fn event_list(&mut self, v: &Value, path: &str, non_empty: bool) -> Option<Vec<Event>> {
        let Some(items) = v.as_array() else {
            self.wrong_type(path, "a list of event names", v);
            return None;
        };
        if non_empty && items.is_empty() {
            self.error(
                Code::BadSchema,
                path,
                "list at least one event, e.g. `[\"reply\"]`",
            );
            return None;
        }
        let mut out: Vec<Event> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let p = child(path, &i.to_string());
            let Some(name) = item.as_str() else {
                self.wrong_type(&p, "an event name", item);
                ok = false;
                continue;
            };
            match Event::parse(name) {
                Ok(e) if out.contains(&e) => {
                    self.error(
                        Code::BadEvent,
                        &p,
                        format!("`{name}` is listed twice: remove one"),
                    );
                    ok = false;
                }
                Ok(e) => out.push(e),
                Err(hint) => {
                    self.error(Code::BadEvent, &p, hint);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    // ---- timing slots ----------------------------------------------------------------------

    fn interpolation(&mut self, path: &str, s: &str) {
        self.error(
            Code::InterpolationRefused,
            path,
            format!("`${{ }}` interpolation is refused in a timing slot because it produces a string: write `\"$: input.<field>\"` for a number of milliseconds, or a literal (in {s:?})"),
        );
    }

    /// A `$:` expression in a slot of `code`'s grammar that must infer to one of `want`.
    fn slot_expr(
        &mut self,
        path: &str,
        text: &str,
        syntax_code: Code,
        want: &[Type],
        want_msg: &str,
    ) -> Option<Expr> {
        let body = expr::strip_prefix(text).expect("caller checked the prefix");
        let offset = text.len() - body.len();
        let e = match Expr::parse(body) {
            Ok(e) => e,
            Err(err) => {
                let at = err
                    .position
                    .map(|p| format!(" at position {}", p + offset))
                    .unwrap_or_default();
                self.error(
                    syntax_code,
                    path,
                    format!("{} (in {text:?}{at})", err.message),
                );
                return None;
            }
        };
        match e.infer(&self.input) {
            Ok(t) if want.contains(&t) => Some(e),
            Ok(t) => {
                let why = if t == Type::Untyped {
                    ": contact attributes are untyped; declare an `input` field of the right type and pass the value at enrollment"
                } else {
                    ""
                };
                self.error(
                    Code::ExprType,
                    path,
                    format!(
                        "`{}` is a {t}, but this slot needs {want_msg}{why}",
                        e.source
                    ),
                );
                None
            }
            Err(err) => {
                self.error(
                    Code::ExprType,
                    path,
                    format!("{} (in {text:?})", err.message),
                );
                None
            }
        }
    }

    /// A duration slot (`duration`, `for`, a bare `timeout`). `limit`: check a literal against
    /// `max_wait`.
    fn duration_slot(&mut self, v: &Value, path: &str, limit: bool) -> Option<DurationSlot> {
        match v {
            Value::String(s) if expr::is_interpolation(s) => {
                self.interpolation(path, s);
                None
            }
            Value::String(s) if expr::strip_prefix(s).is_some() => self
                .slot_expr(
                    path,
                    s,
                    Code::BadDuration,
                    &[Type::Number],
                    "a number (milliseconds)",
                )
                .map(DurationSlot::Expr),
            Value::String(_) | Value::Number(_) => match Duration::from_json(v) {
                Ok(d) => {
                    if limit && !self.within_limit(&d, path, v) {
                        return None;
                    }
                    Some(DurationSlot::Literal(d))
                }
                Err(e) => {
                    self.timing(path, e);
                    None
                }
            },
            other => {
                self.wrong_type(
                    path,
                    "a duration (`\"2bd\"`, `\"1h30m\"`, a number of milliseconds, or `\"$: …\"`)",
                    other,
                );
                None
            }
        }
    }

    fn within_limit(&mut self, d: &Duration, path: &str, v: &Value) -> bool {
        let Some(max) = &self.opts.max_wait else {
            return true;
        };
        let span = d.max_span(&self.holidays);
        let limit = max.max_span(&Holidays::none());
        if span <= limit {
            return true;
        }
        self.error(
            Code::WaitExceedsLimit,
            path,
            format!(
                "{v} can last up to {} but the account's `max_wait` allows {}: shorten it, or split the wait into steps that do something in between",
                human(span),
                human(limit)
            ),
        );
        false
    }

    fn until_slot(&mut self, v: &Value, path: &str) -> Option<UntilSlot> {
        match v {
            Value::String(s) if expr::is_interpolation(s) => {
                self.interpolation(path, s);
                None
            }
            Value::String(s) if expr::strip_prefix(s).is_some() => self
                .slot_expr(
                    path,
                    s,
                    Code::BadUntil,
                    &[Type::Timestamp, Type::Number],
                    "a timestamp (or a number of epoch milliseconds)",
                )
                .map(UntilSlot::Expr),
            Value::String(s) => match Until::parse(s) {
                Ok(u) => Some(UntilSlot::Literal(u)),
                Err(e) => {
                    self.timing(path, e);
                    None
                }
            },
            other => {
                self.error(
                    Code::BadUntil,
                    path,
                    format!("`until` is a string: an RFC 3339 instant (`\"2026-09-01T08:00:00Z\"`), a wall clock (`\"2026-09-01 08:00\"`), an offset (`\"+2d 08:00\"`), a calendar pattern (`\"mon 09:00\"`) or `\"$: …\"`; found {}", describe(other)),
                );
                None
            }
        }
    }

    fn tz(&mut self, obj: &Map<String, Value>, path: &str) -> Result<Option<Zone>, ()> {
        match obj.get("tz") {
            None => Ok(None),
            Some(Value::String(s))
                if expr::is_interpolation(s) || expr::strip_prefix(s).is_some() =>
            {
                self.error(
                    if expr::is_interpolation(s) { Code::InterpolationRefused } else { Code::BadTz },
                    child(path, "tz"),
                    format!("a `tz` is a literal zone name such as `\"Europe/Prague\"`; it cannot be computed (in {s:?})"),
                );
                Err(())
            }
            Some(Value::String(s)) => match Zone::parse(s) {
                Ok(z) => Ok(Some(z)),
                Err(e) => {
                    self.timing(&child(path, "tz"), e);
                    Err(())
                }
            },
            Some(other) => {
                self.wrong_type(
                    &child(path, "tz"),
                    "a zone name such as `\"Europe/Prague\"`",
                    other,
                );
                Err(())
            }
        }
    }

    /// Exactly one of `for_keys` or `until` in `obj` (a `wait`'s params or a timeout object).
    fn deadline_fields(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        for_keys: &[&str],
        fetch: bool,
    ) -> Option<Deadline> {
        let fors: Vec<&str> = for_keys
            .iter()
            .copied()
            .filter(|k| obj.contains_key(*k))
            .collect();
        let has_until = obj.contains_key("until");
        let tz = self.tz(obj, path);
        if fetch && has_until {
            self.error(
                Code::UntilNotAllowed,
                child(path, "until"),
                "a `fetch` timeout is a budget for the request: use `for` (e.g. `\"30s\"`); `until` is refused because a past deadline would report a timeout for a request never sent",
            );
            return None;
        }
        let spelled = for_keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(" (or ");
        let spelled = if for_keys.len() > 1 {
            format!("{spelled})")
        } else {
            spelled
        };
        let target = match (fors.as_slice(), has_until) {
            ([k], false) => self
                .duration_slot(&obj[*k], &child(path, k), true)
                .map(Target::For),
            ([], true) => self
                .until_slot(&obj["until"], &child(path, "until"))
                .map(Target::Until),
            ([], false) => {
                self.error(
                    Code::ForAndUntil,
                    path,
                    format!("give exactly one of {spelled} (a duration) or `until` (an instant); there is no default"),
                );
                None
            }
            _ => {
                let given: Vec<String> = fors
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .chain(has_until.then(|| "`until`".to_string()))
                    .collect();
                self.error(
                    Code::ForAndUntil,
                    path,
                    format!(
                        "{} are {} given: keep exactly one of {spelled} or `until`",
                        given.join(" and "),
                        if given.len() == 2 { "both" } else { "all" }
                    ),
                );
                None
            }
        };
        Some(Deadline {
            target: target?,
            tz: tz.ok()?,
        })
    }

    /// A `timeout` of `wait_for`, a task or `approval`: a duration or `{for|until, tz}`.
    fn timeout(&mut self, v: &Value, path: &str) -> Option<Deadline> {
        match v {
            Value::Object(obj) => {
                self.unknown_fields(obj, path, &["for", "until", "tz"]);
                self.deadline_fields(obj, path, &["for"], false)
            }
            _ => self.duration_slot(v, path, true).map(|d| Deadline {
                target: Target::For(d),
                tz: None,
            }),
        }
    }

    fn fetch_timeout(&mut self, v: &Value, path: &str) -> Option<FetchTimeout> {
        match v {
            Value::Object(obj) => {
                self.unknown_fields(obj, path, &["for", "until", "tz"]);
                let d = self.deadline_fields(obj, path, &["for"], true)?;
                match d.target {
                    Target::For(duration) => Some(FetchTimeout { duration, tz: d.tz }),
                    Target::Until(_) => None,
                }
            }
            _ => self
                .duration_slot(v, path, true)
                .map(|duration| FetchTimeout { duration, tz: None }),
        }
    }

    fn opt_timeout(&mut self, p: &Map<String, Value>, path: &str) -> Result<Option<Deadline>, ()> {
        match p.get("timeout") {
            None => Ok(None),
            Some(v) => self.timeout(v, &child(path, "timeout")).map(Some).ok_or(()),
        }
    }

    // ---- steps -----------------------------------------------------------------------------

    fn step(&mut self, raw: &Value, path: &str) -> Option<Step> {
        let Some(obj) = raw.as_object() else {
            self.wrong_type(path, "a step object with `type`, `params` and `next`", raw);
            return None;
        };
        self.unknown_fields(obj, path, STEP_FIELDS);
        let kind = match obj.get("type") {
            None => {
                self.missing(path, "type", &format!("one of {}", kinds_list()));
                None
            }
            Some(Value::String(t)) => {
                let k = StepKind::parse(t);
                if k.is_none() {
                    self.error(
                        Code::BadSchema,
                        child(path, "type"),
                        format!("`{t}` is not a step type: use one of {}", kinds_list()),
                    );
                }
                k
            }
            Some(other) => {
                self.wrong_type(&child(path, "type"), "a step type name", other);
                None
            }
        };
        let empty = Map::new();
        let params_path = child(path, "params");
        let params = match obj.get("params") {
            None => Some(&empty),
            Some(Value::Object(p)) => Some(p),
            Some(other) => {
                self.wrong_type(&params_path, "an object", other);
                None
            }
        };
        let next_path = child(path, "next");
        let next = match obj.get("next") {
            None => Some(BTreeMap::new()),
            Some(Value::Object(n)) => {
                let mut out = BTreeMap::new();
                let mut ok = true;
                for (key, target) in n {
                    match target {
                        Value::String(t) => {
                            out.insert(key.clone(), t.clone());
                        }
                        other => {
                            self.wrong_type(&child(&next_path, key), "the name of a step", other);
                            ok = false;
                        }
                    }
                }
                ok.then_some(out)
            }
            Some(other) => {
                self.wrong_type(&next_path, "an object of branch → step name", other);
                None
            }
        };
        let (kind, params) = (kind?, params?);
        let action = self.action(kind, params, &params_path);
        let next_ok = match &next {
            Some(n) => self.next_keys(kind, action.as_ref(), params, n, &next_path),
            None => false,
        };
        let action = action?;
        if !next_ok {
            return None;
        }
        Some(Step {
            action,
            next: next?,
        })
    }

    fn action(&mut self, kind: StepKind, p: &Map<String, Value>, path: &str) -> Option<Action> {
        match kind {
            StepKind::Email | StepKind::Sms => {
                self.unknown_fields(p, path, &["template", "channel"]);
                let template = self.req_string(
                    p,
                    path,
                    "template",
                    "the template reference, e.g. `\"intro\"`",
                );
                let channel = match p.get("channel") {
                    None => Ok(None),
                    Some(Value::Object(c)) => Ok(Some(c.clone())),
                    Some(other) => {
                        self.wrong_type(
                            &child(path, "channel"),
                            "an object of channel details",
                            other,
                        );
                        Err(())
                    }
                };
                let params = OutreachParams {
                    template: template?,
                    channel: channel.ok()?,
                };
                Some(if kind == StepKind::Email {
                    Action::Email(params)
                } else {
                    Action::Sms(params)
                })
            }
            StepKind::Call => {
                self.unknown_fields(
                    p,
                    path,
                    &["instructions", "outcomes", "connected_outcomes", "timeout"],
                );
                let task = self.task(p, path);
                let connected = match p.get("connected_outcomes") {
                    None => Some(vec!["connected".to_string()]),
                    Some(v) => self.outcome_list(v, &child(path, "connected_outcomes")),
                };
                let (task, connected) = (task?, connected?);
                if let Some(declared) = &task.outcomes {
                    let mut ok = true;
                    for (i, c) in connected.iter().enumerate() {
                        if !declared.contains(c) {
                            let p = if p.contains_key("connected_outcomes") {
                                child(&child(path, "connected_outcomes"), &i.to_string())
                            } else {
                                child(path, "outcomes")
                            };
                            self.error(
                                Code::BadSchema,
                                p,
                                format!(
                                    "connected outcome `{c}` is not among `outcomes`: add it there"
                                ),
                            );
                            ok = false;
                        }
                    }
                    if !ok {
                        return None;
                    }
                }
                Some(Action::Call(CallParams {
                    task,
                    connected_outcomes: connected,
                }))
            }
            StepKind::LinkedinConnect | StepKind::LinkedinMessage => {
                self.unknown_fields(p, path, &["instructions", "outcomes", "timeout"]);
                let task = self.task(p, path)?;
                Some(if kind == StepKind::LinkedinConnect {
                    Action::LinkedinConnect(task)
                } else {
                    Action::LinkedinMessage(task)
                })
            }
            StepKind::Wait => {
                self.unknown_fields(p, path, &["duration", "for", "until", "tz"]);
                self.deadline_fields(p, path, &["duration", "for"], false)
                    .map(Action::Wait)
            }
            StepKind::WaitFor => {
                self.unknown_fields(p, path, &["events", "timeout"]);
                let events = match p.get("events") {
                    None => {
                        self.missing(path, "events", "the events to wait for, e.g. `[\"reply\"]`");
                        None
                    }
                    Some(v) => self.event_list(v, &child(path, "events"), true),
                };
                let timeout = self.opt_timeout(p, path);
                Some(Action::WaitFor(WaitForParams {
                    events: events?,
                    timeout: timeout.ok()?,
                }))
            }
            StepKind::Approval => {
                self.unknown_fields(p, path, &["prompt", "input", "timeout"]);
                let prompt = self.req_string(
                    p,
                    path,
                    "prompt",
                    "what the approver is asked, e.g. `\"Send the proposal?\"`",
                );
                let input = match p.get("input") {
                    None => Some(InputSchema::new()),
                    Some(v) => self.schema(v, &child(path, "input")),
                };
                let timeout = self.opt_timeout(p, path);
                Some(Action::Approval(ApprovalParams {
                    prompt: prompt?,
                    input: input?,
                    timeout: timeout.ok()?,
                }))
            }
            StepKind::Fetch => self.fetch(p, path).map(Action::Fetch),
            StepKind::Branch => self.branch(p, path).map(Action::Branch),
            StepKind::End => {
                self.unknown_fields(p, path, &["outcome"]);
                let outcome = self.opt_string(
                    p,
                    path,
                    "outcome",
                    "the enrollment's outcome, e.g. `\"replied\"`",
                );
                Some(Action::End(EndParams {
                    outcome: outcome.ok()?,
                }))
            }
        }
    }

    fn task(&mut self, p: &Map<String, Value>, path: &str) -> Option<TaskParams> {
        let instructions = self.opt_string(p, path, "instructions", "what the person should do");
        let outcomes = match p.get("outcomes") {
            None => Ok(None),
            Some(v) => self
                .outcome_list(v, &child(path, "outcomes"))
                .map(Some)
                .ok_or(()),
        };
        let timeout = self.opt_timeout(p, path);
        Some(TaskParams {
            instructions: instructions.ok()?,
            outcomes: outcomes.ok()?,
            timeout: timeout.ok()?,
        })
    }

    /// A non-empty list of distinct outcome names.
    fn outcome_list(&mut self, v: &Value, path: &str) -> Option<Vec<String>> {
        let Some(items) = v.as_array() else {
            self.wrong_type(path, "a list of outcome names", v);
            return None;
        };
        if items.is_empty() {
            self.error(
                Code::BadSchema,
                path,
                "list at least one outcome, e.g. `[\"connected\"]`",
            );
            return None;
        }
        let mut out: Vec<String> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let p = child(path, &i.to_string());
            match item.as_str() {
                Some(s) if !is_outcome(s) => {
                    self.error(Code::BadSchema, &p, format!("`{s}` is not an outcome name: use lower-case letters, digits and `_` (like `left_voicemail`)"));
                    ok = false;
                }
                Some(s) if out.iter().any(|o| o == s) => {
                    self.error(
                        Code::BadSchema,
                        &p,
                        format!("`{s}` is listed twice: remove one"),
                    );
                    ok = false;
                }
                Some(s) => out.push(s.to_string()),
                None => {
                    self.wrong_type(&p, "an outcome name", item);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    fn fetch(&mut self, p: &Map<String, Value>, path: &str) -> Option<FetchParams> {
        self.unknown_fields(p, path, &["url", "method", "headers", "body", "timeout"]);
        let url_path = child(path, "url");
        let url = self.req_string(
            p,
            path,
            "url",
            "the URL to call, e.g. `\"https://crm.example.com/deals/status\"`",
        );
        let host = url.as_deref().and_then(|u| match url_host(u) {
            Ok(h) => Some(h),
            Err(hint) => {
                self.error(Code::BadSchema, &url_path, format!("{hint} (in {u:?})"));
                None
            }
        });
        if let (Some(h), Some(allowed)) = (&host, &self.opts.allowed_hosts) {
            if !allowed.iter().any(|a| a.eq_ignore_ascii_case(h)) {
                let list = allowed.join(", ");
                self.error(
                    Code::BadSchema,
                    &url_path,
                    format!("host `{h}` is not on the account's fetch allow list ({list}): add it to the list or call an allowed host"),
                );
            }
        }
        let method = match p.get("method") {
            None => Some(Method::Get),
            Some(Value::String(m)) => {
                let parsed = Method::parse(m);
                if parsed.is_none() {
                    self.error(
                        Code::BadSchema,
                        child(path, "method"),
                        format!("`{m}` is not a method: use `GET`, `POST`, `PUT`, `PATCH` or `DELETE` (upper case)"),
                    );
                }
                parsed
            }
            Some(other) => {
                self.wrong_type(
                    &child(path, "method"),
                    "a method name such as `\"GET\"`",
                    other,
                );
                None
            }
        };
        let headers = match p.get("headers") {
            None => Some(BTreeMap::new()),
            Some(Value::Object(h)) => {
                let mut out = BTreeMap::new();
                let mut ok = true;
                for (k, v) in h {
                    match v.as_str() {
                        Some(s) => {
                            out.insert(k.clone(), s.to_string());
                        }
                        None => {
                            self.wrong_type(
                                &child(&child(path, "headers"), k),
                                "a header value (string)",
                                v,
                            );
                            ok = false;
                        }
                    }
                }
                ok.then_some(out)
            }
            Some(other) => {
                self.wrong_type(
                    &child(path, "headers"),
                    "an object of header → value",
                    other,
                );
                None
            }
        };
        let body = p.get("body").cloned();
        if body.is_some() && method == Some(Method::Get) {
            self.error(
                Code::BadSchema,
                child(path, "body"),
                "a `GET` request has no body: remove `body`, or set `\"method\": \"POST\"`",
            );
            return None;
        }
        let timeout = match p.get("timeout") {
            None => Ok(None),
            Some(v) => self
                .fetch_timeout(v, &child(path, "timeout"))
                .map(Some)
                .ok_or(()),
        };
        Some(FetchParams {
            url: url?,
            host: host?,
            method: method?,
            headers: headers?,
            body,
            timeout: timeout.ok()?,
        })
    }

    fn branch(&mut self, p: &Map<String, Value>, path: &str) -> Option<BranchParams> {
        self.unknown_fields(p, path, &["cases"]);
        let cases_path = child(path, "cases");
        let items = match p.get("cases") {
            None => {
                self.missing(
                    path,
                    "cases",
                    "a list of `{\"name\": …, \"when\": …}` cases",
                );
                return None;
            }
            Some(Value::Array(items)) if !items.is_empty() => items,
            Some(Value::Array(_)) => {
                self.error(
                    Code::BadSchema,
                    &cases_path,
                    "list at least one case; `else` is wired in `next`",
                );
                return None;
            }
            Some(other) => {
                self.wrong_type(&cases_path, "a list of cases", other);
                return None;
            }
        };
        let mut cases: Vec<Case> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let cp = child(&cases_path, &i.to_string());
            let Some(obj) = item.as_object() else {
                self.wrong_type(&cp, "a case `{\"name\": …, \"when\": …}`", item);
                ok = false;
                continue;
            };
            self.unknown_fields(obj, &cp, &["name", "when"]);
            let name =
                self.req_string(obj, &cp, "name", "the case's name, which is its `next` key");
            if let Some(n) = &name {
                if n == "else" || !is_outcome(n) {
                    self.error(
                        Code::BadSchema,
                        child(&cp, "name"),
                        format!("`{n}` cannot name a case: use lower-case letters, digits and `_`, and not `else` (wired in `next` for when no case holds)"),
                    );
                    ok = false;
                } else if cases.iter().any(|c| &c.name == n) {
                    self.error(
                        Code::BadSchema,
                        child(&cp, "name"),
                        format!("case `{n}` is named twice: rename one"),
                    );
                    ok = false;
                }
            }
            let when = match obj.get("when") {
                None => {
                    self.missing(
                        &cp,
                        "when",
                        "a condition such as `{\"path\": \"contact.phone\", \"exists\": true}`",
                    );
                    None
                }
                Some(w) => self.condition(w, &child(&cp, "when")),
            };
            match (name, when) {
                (Some(name), Some(when)) => cases.push(Case { name, when }),
                _ => ok = false,
            }
        }
        ok.then_some(BranchParams { cases })
    }

    fn condition(&mut self, v: &Value, path: &str) -> Option<Condition> {
        const SHAPES: &str = "`{\"path\": p, \"exists\": true|false}`, `{\"path\": p, \"equals\": v}`, `{\"path\": p, \"in\": [v, …]}`, `{\"all\": [c, …]}`, `{\"any\": [c, …]}` or `{\"not\": c}`";
        let Some(obj) = v.as_object() else {
            self.wrong_type(path, &format!("a condition: {SHAPES}"), v);
            return None;
        };
        let combinators: Vec<&str> = ["all", "any", "not"]
            .into_iter()
            .filter(|k| obj.contains_key(*k))
            .collect();
        if let [key] = combinators.as_slice() {
            self.unknown_fields(obj, path, &[key]);
            let inner_path = child(path, key);
            if *key == "not" {
                return self
                    .condition(&obj["not"], &inner_path)
                    .map(|c| Condition::Not(Box::new(c)));
            }
            let Some(items) = obj[*key].as_array().filter(|a| !a.is_empty()) else {
                self.wrong_type(&inner_path, "a non-empty list of conditions", &obj[*key]);
                return None;
            };
            let mut out = Vec::new();
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                match self.condition(item, &child(&inner_path, &i.to_string())) {
                    Some(c) => out.push(c),
                    None => ok = false,
                }
            }
            if !ok {
                return None;
            }
            return Some(if *key == "all" {
                Condition::All(out)
            } else {
                Condition::Any(out)
            });
        }
        let tests: Vec<&str> = ["exists", "equals", "in"]
            .into_iter()
            .filter(|k| obj.contains_key(*k))
            .collect();
        if combinators.len() > 1 || tests.len() != 1 || !combinators.is_empty() {
            self.error(
                Code::BadSchema,
                path,
                format!("a condition is exactly one of {SHAPES}"),
            );
            return None;
        }
        let test = tests[0];
        self.unknown_fields(obj, path, &["path", test]);
        let p = match obj.get("path") {
            None => {
                self.missing(
                    path,
                    "path",
                    "the field to test, e.g. `\"contact.phone\"` or `\"input.plan\"`",
                );
                return None;
            }
            Some(Value::String(s)) => self.data_path(s, &child(path, "path"))?,
            Some(other) => {
                self.wrong_type(
                    &child(path, "path"),
                    "a path such as `\"contact.phone\"`",
                    other,
                );
                return None;
            }
        };
        let test_path = child(path, test);
        match test {
            "exists" => match obj["exists"] {
                Value::Bool(b) => Some(Condition::Exists { path: p, exists: b }),
                ref other => {
                    self.wrong_type(&test_path, "`true` or `false`", other);
                    None
                }
            },
            "equals" => {
                let value = self.scalar(&obj["equals"], &test_path, &p)?;
                Some(Condition::Equals { path: p, value })
            }
            _ => {
                let Some(items) = obj["in"].as_array().filter(|a| !a.is_empty()) else {
                    self.wrong_type(&test_path, "a non-empty list of values", &obj["in"]);
                    return None;
                };
                let mut values = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    values.push(self.scalar(item, &child(&test_path, &i.to_string()), &p));
                }
                let values: Option<Vec<Value>> = values.into_iter().collect();
                Some(Condition::In {
                    path: p,
                    values: values?,
                })
            }
        }
    }

    /// A path of a branch condition: `input.<declared field>`, `contact.<field>` or
    /// `contact.attributes.<name>`.
    fn data_path(&mut self, s: &str, path: &str) -> Option<Path> {
        match Expr::parse(s) {
            Ok(Expr {
                node: expr::Node::Path(p),
                ..
            }) => {
                if let Path::Input(name) = &p {
                    if !self.input.contains_key(name) {
                        self.error(
                            Code::BadSchema,
                            path,
                            format!("`input.{name}` is not declared: add it to the flow's `input` with its type"),
                        );
                        return None;
                    }
                }
                Some(p)
            }
            Ok(_) => {
                self.error(Code::BadSchema, path, format!("{s:?} is not a path: write `contact.<field>`, `contact.attributes.<name>` or `input.<field>`"));
                None
            }
            Err(e) => {
                self.error(Code::BadSchema, path, format!("{} (in {s:?})", e));
                None
            }
        }
    }

    /// A value a condition compares with: a JSON scalar, of the declared type for `input.*`
    /// (strings for the typed contact fields).
    fn scalar(&mut self, v: &Value, path: &str, field: &Path) -> Option<Value> {
        let ok_type = match (field, v) {
            (_, Value::Array(_) | Value::Object(_) | Value::Null) => {
                self.wrong_type(
                    path,
                    "a string, number or boolean (use `exists` to test for absence)",
                    v,
                );
                return None;
            }
            (Path::Attribute(_), _) => true,
            (Path::Contact(_), Value::String(_)) => true,
            (Path::Contact(_), _) => false,
            (Path::Input(name), _) => match (self.input[name], v) {
                (FieldType::Number, Value::Number(_))
                | (FieldType::String, Value::String(_))
                | (FieldType::Boolean, Value::Bool(_)) => true,
                (FieldType::Timestamp, Value::String(s)) => {
                    chrono::DateTime::parse_from_rfc3339(s).is_ok()
                }
                _ => false,
            },
        };
        if !ok_type {
            let want = match field {
                Path::Input(name) => self.input[name].as_str(),
                _ => "string",
            };
            self.error(
                Code::ExprType,
                path,
                format!("`{field}` is a {want}, so comparing it with {} can never hold: compare with a {want}", describe(v)),
            );
            return None;
        }
        Some(v.clone())
    }

    // ---- next keys -------------------------------------------------------------------------

    /// Checks the keys of `next` against the step type. Targets are checked by the graph pass.
    fn next_keys(
        &mut self,
        kind: StepKind,
        action: Option<&Action>,
        params: &Map<String, Value>,
        next: &BTreeMap<String, String>,
        path: &str,
    ) -> bool {
        let before = self.problems.len();
        let require = |v: &mut Self, key: &str, what: &str| {
            if !next.contains_key(key) {
                v.missing(path, key, what);
            }
        };
        let only = |v: &mut Self, allowed: &[&str], extra: &dyn Fn(&str) -> bool| {
            for key in next.keys() {
                if !allowed.contains(&key.as_str()) && !extra(key) {
                    let list = allowed
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    v.error(
                        Code::BadSchema,
                        child(path, key),
                        format!(
                            "a `{kind}` step has no branch `{key}`: its `next` keys are {list}"
                        ),
                    );
                }
            }
        };
        match kind {
            StepKind::Email | StepKind::Sms | StepKind::Wait => {
                require(
                    self,
                    "then",
                    "the step that follows, e.g. `\"then\": \"wait_2d\"`",
                );
                only(self, &["then"], &|_| false);
            }
            StepKind::Call | StepKind::LinkedinConnect | StepKind::LinkedinMessage => {
                require(
                    self,
                    "then",
                    "the step that follows when no per-outcome branch matches",
                );
                let declared: Option<Vec<String>> = match action {
                    Some(Action::Call(c)) => c.task.outcomes.clone(),
                    Some(Action::LinkedinConnect(t)) | Some(Action::LinkedinMessage(t)) => {
                        t.outcomes.clone()
                    }
                    _ => None,
                };
                for key in next.keys().filter(|k| *k != "then" && *k != "timeout") {
                    if !is_outcome(key) {
                        self.error(
                            Code::BadSchema,
                            child(path, key),
                            format!("`{key}` is not an outcome name: a task's `next` keys are `then`, `timeout` and outcome names (lower-case letters, digits, `_`)"),
                        );
                    } else if let Some(d) = &declared {
                        if !d.contains(key) {
                            self.error(
                                Code::BadEvent,
                                child(path, key),
                                format!("`next` wires outcome `{key}` that `params.outcomes` does not list: add it there or remove this branch"),
                            );
                        }
                    }
                }
            }
            StepKind::WaitFor => {
                let listed: Vec<Event> = match action {
                    Some(Action::WaitFor(w)) => w.events.clone(),
                    // The events did not parse: still compare the names that did.
                    _ => params
                        .get("events")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|e| e.as_str().and_then(|s| Event::parse(s).ok()))
                                .collect()
                        })
                        .unwrap_or_default(),
                };
                for e in &listed {
                    if !next.contains_key(e.as_str()) {
                        self.error(
                            Code::BadEvent,
                            path,
                            format!("event `{e}` is listed in `events` but not wired: add `\"{e}\": \"<step>\"` to `next`, or remove it from `events`"),
                        );
                    }
                }
                for key in next.keys().filter(|k| *k != "timeout") {
                    match Event::parse(key) {
                        Err(hint) => self.error(Code::BadEvent, child(path, key), hint),
                        Ok(e) if !listed.contains(&e) => self.error(
                            Code::BadEvent,
                            child(path, key),
                            format!("`next` wires event `{key}` that `events` does not list: add it to `events`, or remove this branch"),
                        ),
                        Ok(_) => {}
                    }
                }
            }
            StepKind::Approval => {
                require(self, "approved", "the step that follows an approval");
                require(self, "rejected", "the step that follows a rejection");
                only(self, &["approved", "rejected", "timeout"], &|_| false);
            }
            StepKind::Fetch => {
                require(self, "ok", "the step that follows a 2xx answer");
                require(self, "error", "the step that follows a failed request");
                only(self, &["ok", "error", "timeout"], &|_| false);
            }
            StepKind::Branch => {
                let names: Vec<String> = match action {
                    Some(Action::Branch(b)) => b.cases.iter().map(|c| c.name.clone()).collect(),
                    _ => params
                        .get("cases")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|c| c.get("name")?.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                };
                for n in &names {
                    require(self, n, &format!("the step for case `{n}`"));
                }
                require(self, "else", "the step taken when no case holds");
                let mut allowed: Vec<&str> = names.iter().map(String::as_str).collect();
                allowed.push("else");
                only(self, &allowed, &|_| false);
            }
            StepKind::End => {
                for key in next.keys() {
                    self.error(
                        Code::BadSchema,
                        child(path, key),
                        "an `end` step has no successors: remove `next`",
                    );
                }
            }
        }
        self.problems.len() == before
    }

    // ---- graph -----------------------------------------------------------------------------

    fn graph(&mut self, nodes: &[RawNode], start: Option<&str>, has_steps: bool) {
        let index: BTreeMap<&str, usize> =
            nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            for (key, target) in &n.next {
                match index.get(target) {
                    Some(&j) => {
                        if !adj[i].contains(&j) {
                            adj[i].push(j);
                        }
                    }
                    None => self.error(
                        Code::UnknownTarget,
                        child(&child(&child("/steps", n.id), "next"), key),
                        format!(
                            "no step is named `{target}`: name one of the flow's steps{}",
                            suggest(target, &index)
                        ),
                    ),
                }
            }
        }
        let start_index = match start {
            Some(s) => match index.get(s) {
                Some(&i) => Some(i),
                None => {
                    if has_steps {
                        self.error(
                            Code::UnknownTarget,
                            "/start",
                            format!("no step is named `{s}`: `start` must name one of the flow's steps{}", suggest(s, &index)),
                        );
                    }
                    None
                }
            },
            None => None,
        };

        for comp in graph::strongly_connected(&adj) {
            if !graph::is_cyclic(&comp, &adj) || comp.iter().any(|&i| nodes[i].lets_time_pass) {
                continue;
            }
            let names: Vec<String> = comp.iter().map(|&i| format!("`{}`", nodes[i].id)).collect();
            let first = comp.iter().map(|&i| nodes[i].id).min().expect("non-empty");
            let what = if comp.len() == 1 {
                format!("step `{first}` leads straight back to itself")
            } else {
                format!("steps {} form a cycle", names.join(", "))
            };
            self.error(
                Code::Cycle,
                child("/steps", first),
                format!("{what}, and nothing in it lets time pass, so it could spin forever: put a `wait`, a task, an `approval` or a `wait_for` with a `timeout` in it, or break it"),
            );
        }

        if let Some(s) = start_index {
            let seen = graph::reachable(&adj, s);
            let mut unreached: Vec<&str> = nodes
                .iter()
                .zip(&seen)
                .filter(|(_, r)| !**r)
                .map(|(n, _)| n.id)
                .collect();
            unreached.sort_unstable();
            for id in unreached {
                self.warning(
                    Code::Unreachable,
                    child("/steps", id),
                    format!("no path from `start` reaches step `{id}`: wire it from another step's `next`, or remove it"),
                );
            }
        }
    }
}

fn raw_node<'j>(id: &'j str, raw: &'j Value) -> RawNode<'j> {
    let kind = raw
        .get("type")
        .and_then(Value::as_str)
        .and_then(StepKind::parse);
    let has_timeout = raw
        .get("params")
        .and_then(|p| p.get("timeout"))
        .is_some_and(|t| !t.is_null());
    let lets_time_pass = match kind {
        Some(StepKind::Wait | StepKind::Approval) => true,
        Some(k) if k.is_task() => true,
        Some(StepKind::WaitFor) => has_timeout,
        _ => false,
    };
    // An `end` has no successors; a `next` on one is refused, not followed.
    let next = raw
        .get("next")
        .filter(|_| kind != Some(StepKind::End))
        .and_then(Value::as_object)
        .map(|n| {
            n.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    RawNode {
        id,
        lets_time_pass,
        next,
    }
}

fn suggest(target: &str, index: &BTreeMap<&str, usize>) -> String {
    let lower = target.to_ascii_lowercase();
    index
        .keys()
        .find(|k| {
            k.to_ascii_lowercase() == lower
                || (lower.len() > 3 && (k.starts_with(target) || target.starts_with(**k)))
        })
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

fn kinds_list() -> String {
    StepKind::ALL
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// A field name usable in `input.<field>`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An outcome or case name: lower-case letters, digits and `_`, starting with a letter.
fn is_outcome(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The lower-cased host of an absolute `http(s)://` URL.
fn url_host(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("a `fetch` URL is absolute and starts with `https://` (or `http://`)")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err("put credentials in `headers`, not in the URL".into());
    }
    // An IPv6 literal is bracketed (`[::1]:8443`); its colons are not a port separator.
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((ip, tail)) => (ip, tail.strip_prefix(':')),
            None => {
                return Err(
                    "an IPv6 host is written in brackets, like `https://[2001:db8::1]/`".into(),
                )
            }
        },
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    if let Some(port) = port {
        if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("`{port}` is not a port number"));
        }
    }
    if host.is_empty()
        || host
            .chars()
            .any(|c| c.is_whitespace() || c == '{' || c == '}' || c == '$')
    {
        return Err("the URL has no valid host: write e.g. `https://crm.example.com/path`".into());
    }
    Ok(host.to_ascii_lowercase())
}

/// A span for messages: `7d`, `7d 1h`, `36h 30m`.
fn human(d: chrono::Duration) -> String {
    let mut secs = d.num_seconds();
    let days = secs / 86_400;
    secs %= 86_400;
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let parts: Vec<String> = [(days, "d"), (h, "h"), (m, "m"), (s, "s")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n}{u}"))
        .collect();
    if parts.is_empty() {
        format!("{}ms", d.num_milliseconds())
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (name, flow document, expected (code, path) problems).
    type Case<'a> = (&'a str, Value, &'a [(&'a str, &'a str)]);

    fn run(v: Value) -> Validation {
        validate(&v, &ValidateOptions::default())
    }

    /// A flow starting at `a` with these steps.
    fn flow(steps: Value) -> Value {
        json!({"name": "t", "start": "a", "steps": steps})
    }

    /// (code, path) of every problem, errors and warnings, sorted.
    fn found(v: &Validation) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = v
            .problems
            .iter()
            .map(|p| (p.code.as_str().to_string(), p.path.clone()))
            .collect();
        out.sort();
        out
    }

    fn check(cases: &[Case], opts: &ValidateOptions) {
        for (name, doc, want) in cases {
            let v = validate(doc, opts);
            let mut want: Vec<(String, String)> = want
                .iter()
                .map(|(c, p)| (c.to_string(), p.to_string()))
                .collect();
            want.sort();
            assert_eq!(found(&v), want, "case {name}: {:#?}", v.problems);
            let has_error = want.iter().any(|(c, _)| c != "UNREACHABLE");
            assert_eq!(
                v.flow.is_none(),
                has_error,
                "case {name}: flow built iff no error"
            );
            for p in &v.problems {
                assert!(p.message.len() > 20, "case {name}: message too thin: {p}");
            }
        }
    }

    fn end() -> Value {
        json!({"type": "end"})
    }

    #[test]
    fn spec_example_is_valid() {
        let v: Value =
            serde_json::from_str(include_str!("../../fixtures/flows/outbound-v1.json")).unwrap();
        let out = run(v);
        assert!(out.problems.is_empty(), "{:#?}", out.problems);
        let flow = out.flow.unwrap();
        assert_eq!(flow.start, "email_1");
        let wait_reply = flow.step("wait_reply").unwrap();
        assert_eq!(wait_reply.kind(), StepKind::WaitFor);
        assert_eq!(
            wait_reply.next("timeout").map(String::as_str),
            Some("call_1")
        );
        assert!(wait_reply.lets_time_pass());
        let succ: Vec<&str> = wait_reply.successors().map(|(k, _)| k).collect();
        assert_eq!(succ, ["meeting_booked", "reply", "timeout"]);
        assert_eq!(flow.settings.exit_on, vec![Event::MeetingBooked]);
        match &flow.step("call_1").unwrap().action {
            Action::Call(c) => assert_eq!(
                c.connected_outcomes,
                ["connected", "left_voicemail_callback"]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn schema_problems_are_all_reported() {
        let cases: &[Case] = &[
            ("not an object", json!([1]), &[("BAD_SCHEMA", "")]),
            (
                "missing everything",
                json!({}),
                &[
                    ("BAD_SCHEMA", "/name"),
                    ("BAD_SCHEMA", "/start"),
                    ("BAD_SCHEMA", "/steps"),
                ],
            ),
            (
                "unknown top field and wrong types",
                json!({"name": 3, "start": "a", "stpes": {}, "steps": {"a": {"type": "end"}}, "input": []}),
                &[
                    ("BAD_SCHEMA", "/name"),
                    ("BAD_SCHEMA", "/stpes"),
                    ("BAD_SCHEMA", "/input"),
                ],
            ),
            (
                "several problems in one step",
                flow(
                    json!({"a": {"type": "email", "params": {"tempalte": "x"}, "next": {"then": 7}, "extra": 1}}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/extra"),
                    ("BAD_SCHEMA", "/steps/a/params/tempalte"),
                    ("BAD_SCHEMA", "/steps/a/params/template"),
                    ("BAD_SCHEMA", "/steps/a/next/then"),
                ],
            ),
            (
                "unknown type",
                flow(json!({"a": {"type": "slack", "next": {"then": "b"}}, "b": end()})),
                &[("BAD_SCHEMA", "/steps/a/type")],
            ),
            (
                "missing then",
                flow(json!({"a": {"type": "sms", "params": {"template": "x"}}})),
                &[("BAD_SCHEMA", "/steps/a/next/then")],
            ),
            (
                "end with next",
                flow(json!({"a": {"type": "end", "next": {"then": "a"}}})),
                &[("BAD_SCHEMA", "/steps/a/next/then")],
            ),
            (
                "bad input types",
                json!({"name": "t", "start": "a", "input": {"x": "int", "1y": "number"}, "steps": {"a": end()}}),
                &[("BAD_SCHEMA", "/input/x"), ("BAD_SCHEMA", "/input/1y")],
            ),
            (
                "approval needs both answers",
                flow(
                    json!({"a": {"type": "approval", "params": {"prompt": "ok?"}, "next": {"approved": "b", "maybe": "b"}}, "b": end()}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/next/rejected"),
                    ("BAD_SCHEMA", "/steps/a/next/maybe"),
                ],
            ),
            (
                "empty steps",
                json!({"name": "t", "start": "a", "steps": {}}),
                &[("BAD_SCHEMA", "/steps")],
            ),
        ];
        check(cases, &ValidateOptions::default());
    }

    #[test]
    fn pointers_escape_step_names() {
        let v = run(json!({"name": "t", "start": "a/b", "steps": {
            "a/b": {"type": "email", "params": {"template": "x"}, "next": {"then": "no~pe"}}}}));
        assert_eq!(
            found(&v),
            [("UNKNOWN_TARGET".into(), "/steps/a~1b/next/then".into())]
        );
        assert_eq!(escape_token("~/x"), "~0~1x");
    }

    #[test]
    fn targets() {
        let cases: &[Case] = &[
            (
                "start names no step",
                json!({"name": "t", "start": "nope", "steps": {"a": end()}}),
                &[("UNKNOWN_TARGET", "/start")],
            ),
            (
                "next names no step",
                flow(
                    json!({"a": {"type": "wait", "params": {"duration": "1h"}, "next": {"then": "b"}}}),
                ),
                &[("UNKNOWN_TARGET", "/steps/a/next/then")],
            ),
        ];
        check(cases, &ValidateOptions::default());
        let v = run(json!({"name": "t", "start": "Email_1", "steps": {"email_1": end()}}));
        assert!(
            v.problems[0].message.contains("did you mean `email_1`"),
            "{}",
            v.problems[0]
        );
    }

    #[test]
    fn events() {
        let wait_for = |events: Value, next: Value| {
            let mut n = next;
            n.as_object_mut()
                .unwrap()
                .entry("timeout")
                .or_insert(json!("b"));
            flow(
                json!({"a": {"type": "wait_for", "params": {"events": events, "timeout": "1d"}, "next": n}, "b": end()}),
            )
        };
        let cases: &[Case] = &[
            (
                "ok",
                wait_for(
                    json!(["reply", "payment.received"]),
                    json!({"reply": "b", "payment.received": "b"}),
                ),
                &[],
            ),
            (
                "listed not wired",
                wait_for(json!(["reply", "meeting_booked"]), json!({"reply": "b"})),
                &[("BAD_EVENT", "/steps/a/next")],
            ),
            (
                "unknown listed",
                wait_for(json!(["replied"]), json!({})),
                &[("BAD_EVENT", "/steps/a/params/events/0")],
            ),
            (
                "wired not listed",
                wait_for(json!(["reply"]), json!({"reply": "b", "reply:sms": "b"})),
                &[("BAD_EVENT", "/steps/a/next/reply:sms")],
            ),
            (
                "wired unknown",
                wait_for(json!(["reply"]), json!({"reply": "b", "then": "b"})),
                &[("BAD_EVENT", "/steps/a/next/then")],
            ),
            (
                "listed twice",
                wait_for(json!(["reply", "reply"]), json!({"reply": "b"})),
                &[("BAD_EVENT", "/steps/a/params/events/1")],
            ),
            (
                "empty list",
                wait_for(json!([]), json!({})),
                &[("BAD_SCHEMA", "/steps/a/params/events")],
            ),
            (
                "exit_on unknown",
                json!({"name": "t", "start": "a", "settings": {"exit_on": ["meeting_booked", "unsubscribed"]}, "steps": {"a": end()}}),
                &[("BAD_EVENT", "/settings/exit_on/1")],
            ),
        ];
        check(cases, &ValidateOptions::default());
    }

    /// A two-step loop `a -> b -> a` where `a` is `first` and `b` is an email.
    fn loop_through(first: Value) -> Value {
        flow(
            json!({"a": first, "b": {"type": "email", "params": {"template": "x"}, "next": {"then": "a"}}}),
        )
    }

    #[test]
    fn cycles() {
        let cases: &[Case] = &[
            (
                "self-loop",
                flow(
                    json!({"a": {"type": "email", "params": {"template": "x"}, "next": {"then": "a"}}}),
                ),
                &[("CYCLE", "/steps/a")],
            ),
            (
                "two emails",
                loop_through(
                    json!({"type": "sms", "params": {"template": "x"}, "next": {"then": "b"}}),
                ),
                &[("CYCLE", "/steps/a")],
            ),
            (
                "through a branch",
                json!({"name": "t", "start": "x", "steps": {
                    "x": {"type": "branch", "params": {"cases": [{"name": "has_phone", "when": {"path": "contact.phone", "exists": true}}]},
                          "next": {"has_phone": "y", "else": "z"}},
                    "y": {"type": "sms", "params": {"template": "x"}, "next": {"then": "x"}},
                    "z": end()}}),
                &[("CYCLE", "/steps/x")],
            ),
            (
                "legal through a wait",
                loop_through(
                    json!({"type": "wait", "params": {"duration": "0s"}, "next": {"then": "b"}}),
                ),
                &[],
            ),
            (
                "legal through a task",
                loop_through(json!({"type": "call", "next": {"then": "b"}})),
                &[],
            ),
            (
                "legal through an approval",
                loop_through(
                    json!({"type": "approval", "params": {"prompt": "again?"}, "next": {"approved": "b", "rejected": "b"}}),
                ),
                &[],
            ),
            (
                "legal through a wait_for with a timeout",
                loop_through(
                    json!({"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}, "next": {"reply": "b", "timeout": "b"}}),
                ),
                &[],
            ),
            (
                "illegal through a wait_for without a timeout",
                loop_through(
                    json!({"type": "wait_for", "params": {"events": ["reply"]}, "next": {"reply": "b"}}),
                ),
                &[("CYCLE", "/steps/a")],
            ),
            (
                "two separate cycles, one problem each",
                json!({"name": "t", "start": "a", "steps": {
                    "a": {"type": "fetch", "params": {"url": "https://crm.example.com/x"}, "next": {"ok": "a", "error": "c"}},
                    "c": {"type": "email", "params": {"template": "x"}, "next": {"then": "d"}},
                    "d": {"type": "sms", "params": {"template": "x"}, "next": {"then": "c"}}}}),
                &[("CYCLE", "/steps/a"), ("CYCLE", "/steps/c")],
            ),
            (
                "a cycle with a bad step is still found",
                loop_through(
                    json!({"type": "sms", "params": {"template": 5}, "next": {"then": "b"}}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/params/template"),
                    ("CYCLE", "/steps/a"),
                ],
            ),
        ];
        check(cases, &ValidateOptions::default());
        let v = run(loop_through(
            json!({"type": "sms", "params": {"template": "x"}, "next": {"then": "b"}}),
        ));
        assert!(
            v.problems[0].message.contains("`a`, `b`"),
            "{}",
            v.problems[0]
        );
    }

    #[test]
    fn unreachable_is_a_warning() {
        let v = run(flow(
            json!({"a": end(), "b": {"type": "email", "params": {"template": "x"}, "next": {"then": "c"}}, "c": end()}),
        ));
        assert_eq!(
            found(&v),
            [
                ("UNREACHABLE".into(), "/steps/b".into()),
                ("UNREACHABLE".into(), "/steps/c".into())
            ]
        );
        assert!(v.problems.iter().all(|p| p.severity == Severity::Warning));
        assert!(v.is_valid());
        assert!(v.flow.is_some());
    }

    #[test]
    fn wait_slots() {
        let wait = |params: Value| {
            json!({"name": "t", "start": "a", "input": {"ms": "number", "at": "timestamp", "who": "string"},
                   "steps": {"a": {"type": "wait", "params": params, "next": {"then": "b"}}, "b": end()}})
        };
        let cases: &[Case] = &[
            ("duration", wait(json!({"duration": "2bd"})), &[]),
            ("for alias", wait(json!({"for": 30000})), &[]),
            (
                "until with tz",
                wait(json!({"until": "mon 09:00", "tz": "Europe/Prague"})),
                &[],
            ),
            (
                "both",
                wait(json!({"duration": "1h", "until": "mon 09:00"})),
                &[("FOR_AND_UNTIL", "/steps/a/params")],
            ),
            (
                "duration and for",
                wait(json!({"duration": "1h", "for": "1h"})),
                &[("FOR_AND_UNTIL", "/steps/a/params")],
            ),
            (
                "neither",
                wait(json!({"tz": "UTC"})),
                &[("FOR_AND_UNTIL", "/steps/a/params")],
            ),
            (
                "no params",
                json!({"name": "t", "start": "a", "steps": {"a": {"type": "wait", "next": {"then": "b"}}, "b": end()}}),
                &[("FOR_AND_UNTIL", "/steps/a/params")],
            ),
            (
                "quoted number",
                wait(json!({"duration": "30000"})),
                &[("QUOTED_NUMBER", "/steps/a/params/duration")],
            ),
            (
                "interpolation",
                wait(json!({"duration": "${input.ms}"})),
                &[("INTERPOLATION_REFUSED", "/steps/a/params/duration")],
            ),
            (
                "interpolation in until",
                wait(json!({"until": "2026-09-01 ${input.who}"})),
                &[("INTERPOLATION_REFUSED", "/steps/a/params/until")],
            ),
            (
                "expr number",
                wait(json!({"duration": "$: input.ms * 2"})),
                &[],
            ),
            (
                "expr string",
                wait(json!({"duration": "$: input.who"})),
                &[("EXPR_TYPE", "/steps/a/params/duration")],
            ),
            (
                "expr timestamp for a duration",
                wait(json!({"for": "$: input.at"})),
                &[("EXPR_TYPE", "/steps/a/params/for")],
            ),
            (
                "expr undeclared",
                wait(json!({"duration": "$: input.nope"})),
                &[("EXPR_TYPE", "/steps/a/params/duration")],
            ),
            (
                "expr attribute",
                wait(json!({"duration": "$: contact.attributes.delay"})),
                &[("EXPR_TYPE", "/steps/a/params/duration")],
            ),
            (
                "expr syntax",
                wait(json!({"duration": "$: input.ms +"})),
                &[("BAD_DURATION", "/steps/a/params/duration")],
            ),
            (
                "until expr timestamp",
                wait(json!({"until": "$: input.at - 3600000"})),
                &[],
            ),
            (
                "until expr number",
                wait(json!({"until": "$: input.ms"})),
                &[],
            ),
            (
                "until expr string",
                wait(json!({"until": "$: contact.email"})),
                &[("EXPR_TYPE", "/steps/a/params/until")],
            ),
            (
                "until syntax",
                wait(json!({"until": "$: (input.at"})),
                &[("BAD_UNTIL", "/steps/a/params/until")],
            ),
            (
                "until number",
                wait(json!({"until": 1700000000000u64})),
                &[("BAD_UNTIL", "/steps/a/params/until")],
            ),
            (
                "bad tz",
                wait(json!({"duration": "1h", "tz": "EST"})),
                &[("BAD_TZ", "/steps/a/params/tz")],
            ),
            (
                "tz interpolation",
                wait(json!({"duration": "1h", "tz": "${input.who}"})),
                &[("INTERPOLATION_REFUSED", "/steps/a/params/tz")],
            ),
            (
                "tz expression",
                wait(json!({"duration": "1h", "tz": "$: contact.tz"})),
                &[("BAD_TZ", "/steps/a/params/tz")],
            ),
            (
                "bad duration type",
                wait(json!({"duration": true})),
                &[("BAD_SCHEMA", "/steps/a/params/duration")],
            ),
            (
                "unknown param",
                wait(json!({"duration": "1h", "jitter": "1m"})),
                &[("BAD_SCHEMA", "/steps/a/params/jitter")],
            ),
        ];
        check(cases, &ValidateOptions::default());
        let v = run(wait(json!({"duration": "$: input.ms +"})));
        assert!(
            v.problems[0].message.contains("at position 13"),
            "{}",
            v.problems[0]
        );
    }

    #[test]
    fn timeouts() {
        let wf = |timeout: Value| {
            flow(
                json!({"a": {"type": "wait_for", "params": {"events": ["reply"], "timeout": timeout}, "next": {"reply": "b", "timeout": "b"}}, "b": end()}),
            )
        };
        let fetch = |timeout: Value| {
            flow(
                json!({"a": {"type": "fetch", "params": {"url": "https://crm.example.com/deal", "timeout": timeout}, "next": {"ok": "b", "error": "b"}}, "b": end()}),
            )
        };
        let cases: &[Case] = &[
            ("bare", wf(json!("5bd")), &[]),
            ("ms", wf(json!(60000)), &[]),
            (
                "for object",
                wf(json!({"for": "2h", "tz": "America/New_York"})),
                &[],
            ),
            (
                "until object",
                wf(json!({"until": "fri 17:00", "tz": "America/New_York"})),
                &[],
            ),
            (
                "both",
                wf(json!({"for": "2h", "until": "fri 17:00"})),
                &[("FOR_AND_UNTIL", "/steps/a/params/timeout")],
            ),
            (
                "neither",
                wf(json!({"tz": "UTC"})),
                &[("FOR_AND_UNTIL", "/steps/a/params/timeout")],
            ),
            (
                "duration key is not a timeout key",
                wf(json!({"duration": "2h"})),
                &[
                    ("BAD_SCHEMA", "/steps/a/params/timeout/duration"),
                    ("FOR_AND_UNTIL", "/steps/a/params/timeout"),
                ],
            ),
            ("fetch for", fetch(json!("30s")), &[]),
            ("fetch for object", fetch(json!({"for": "30s"})), &[]),
            (
                "fetch until",
                fetch(json!({"until": "fri 17:00"})),
                &[("UNTIL_NOT_ALLOWED", "/steps/a/params/timeout/until")],
            ),
            (
                "fetch interpolation",
                fetch(json!("${x}")),
                &[("INTERPOLATION_REFUSED", "/steps/a/params/timeout")],
            ),
        ];
        check(cases, &ValidateOptions::default());
    }

    #[test]
    fn max_wait() {
        let opts = ValidateOptions {
            max_wait: Some(Duration::parse("7d").unwrap()),
            allowed_hosts: None,
        };
        let wait = |d: Value| {
            flow(
                json!({"a": {"type": "wait", "params": {"duration": d}, "next": {"then": "b"}}, "b": end()}),
            )
        };
        let task = |t: Value| {
            flow(
                json!({"a": {"type": "call", "params": {"timeout": t}, "next": {"then": "b"}}, "b": end()}),
            )
        };
        let cases: &[Case] = &[
            ("7d fits 7d", wait(json!("7d")), &[]),
            ("5bd fits 7d", wait(json!("5bd")), &[]),
            (
                "5bd with a weekday holiday can take 8 days",
                json!({"name": "t", "start": "a", "settings": {"holidays": ["2026-12-24"]},
                       "steps": {"a": {"type": "wait", "params": {"duration": "5bd"}, "next": {"then": "b"}}, "b": end()}}),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/duration")],
            ),
            (
                "a weekend holiday does not lengthen it",
                json!({"name": "t", "start": "a", "settings": {"holidays": ["2026-12-26"]},
                       "steps": {"a": {"type": "wait", "params": {"duration": "5bd"}, "next": {"then": "b"}}, "b": end()}}),
                &[],
            ),
            (
                "8d",
                wait(json!("8d")),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/duration")],
            ),
            (
                "2w",
                wait(json!("2w")),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/duration")],
            ),
            (
                "ms over",
                wait(json!(8 * 86_400_000u64)),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/duration")],
            ),
            (
                "expression is checked at run time",
                json!({"name": "t", "start": "a", "input": {"ms": "number"}, "steps": {"a": {"type": "wait", "params": {"duration": "$: input.ms"}, "next": {"then": "b"}}, "b": end()}}),
                &[],
            ),
            (
                "until is checked at run time",
                flow(
                    json!({"a": {"type": "wait", "params": {"until": "2030-01-01T00:00:00Z"}, "next": {"then": "b"}}, "b": end()}),
                ),
                &[],
            ),
            (
                "task timeout",
                task(json!("2w")),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/timeout")],
            ),
            (
                "task timeout object",
                task(json!({"for": "10d"})),
                &[("WAIT_EXCEEDS_LIMIT", "/steps/a/params/timeout/for")],
            ),
        ];
        check(cases, &opts);
        // Without a limit nothing is too long.
        check(
            &[("no limit", wait(json!("1y")), &[])],
            &ValidateOptions::default(),
        );
    }

    #[test]
    fn settings() {
        let with = |settings: Value| json!({"name": "t", "start": "a", "settings": settings, "steps": {"a": end()}});
        let cases: &[Case] = &[
            (
                "full",
                with(
                    json!({"send_window": {"days": ["MON", "tue"], "from": "09:00", "to": "17:00", "tz": "sender"}, "jitter": "20m", "exit_on": ["meeting_booked", "payment.received"], "holidays": ["2026-12-24"]}),
                ),
                &[],
            ),
            (
                "jitter calendar",
                with(json!({"jitter": "1d"})),
                &[("BAD_DURATION", "/settings/jitter")],
            ),
            ("jitter ms", with(json!({"jitter": 5000})), &[]),
            (
                "jitter expr",
                with(json!({"jitter": "$: input.x"})),
                &[("BAD_DURATION", "/settings/jitter")],
            ),
            (
                "jitter quoted",
                with(json!({"jitter": "300"})),
                &[("QUOTED_NUMBER", "/settings/jitter")],
            ),
            (
                "window from after to",
                with(json!({"send_window": {"days": ["mon"], "from": "17:00", "to": "09:00"}})),
                &[("BAD_WINDOW", "/settings/send_window")],
            ),
            (
                "window no days",
                with(json!({"send_window": {"days": [], "from": "09:00", "to": "17:00"}})),
                &[("BAD_WINDOW", "/settings/send_window")],
            ),
            (
                "window bad tz",
                with(
                    json!({"send_window": {"days": ["mon"], "from": "09:00", "to": "17:00", "tz": "PST"}}),
                ),
                &[("BAD_TZ", "/settings/send_window/tz")],
            ),
            (
                "window unknown field",
                with(
                    json!({"send_window": {"days": ["mon"], "from": "09:00", "to": "17:00", "zone": "UTC"}}),
                ),
                &[("BAD_SCHEMA", "/settings/send_window/zone")],
            ),
            (
                "window bad time",
                with(json!({"send_window": {"days": ["mon"], "from": "9am", "to": "17:00"}})),
                &[("BAD_WINDOW", "/settings/send_window")],
            ),
            (
                "window interpolation",
                with(
                    json!({"send_window": {"days": ["mon"], "from": "${input.from}", "to": "17:00"}}),
                ),
                &[("INTERPOLATION_REFUSED", "/settings/send_window/from")],
            ),
            (
                "holiday bad",
                with(json!({"holidays": ["2026-12-24", "24/12/2026", 5]})),
                &[
                    ("BAD_SCHEMA", "/settings/holidays/1"),
                    ("BAD_SCHEMA", "/settings/holidays/2"),
                ],
            ),
            (
                "unknown setting",
                with(json!({"timezone": "UTC"})),
                &[("BAD_SCHEMA", "/settings/timezone")],
            ),
            (
                "settings not an object",
                with(json!("x")),
                &[("BAD_SCHEMA", "/settings")],
            ),
        ];
        check(cases, &ValidateOptions::default());
    }

    #[test]
    fn tasks() {
        let call = |params: Value, next: Value| {
            flow(json!({"a": {"type": "call", "params": params, "next": next}, "b": end()}))
        };
        let cases: &[Case] = &[
            ("defaults", call(json!({}), json!({"then": "b"})), &[]),
            (
                "per-outcome",
                call(
                    json!({"outcomes": ["connected", "no_answer"]}),
                    json!({"then": "b", "no_answer": "b", "timeout": "b"}),
                ),
                &[],
            ),
            (
                "outcome not declared",
                call(
                    json!({"outcomes": ["connected"]}),
                    json!({"then": "b", "busy": "b"}),
                ),
                &[("BAD_EVENT", "/steps/a/next/busy")],
            ),
            (
                "connected not declared",
                call(
                    json!({"outcomes": ["no_answer"], "connected_outcomes": ["connected"]}),
                    json!({"then": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/connected_outcomes/0")],
            ),
            (
                "bad outcome name",
                call(
                    json!({"connected_outcomes": ["Connected"]}),
                    json!({"then": "b", "Left VM": "b"}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/params/connected_outcomes/0"),
                    ("BAD_SCHEMA", "/steps/a/next/Left VM"),
                ],
            ),
            (
                "linkedin connect",
                flow(
                    json!({"a": {"type": "linkedin_connect", "params": {"instructions": "say hi", "timeout": "3bd"}, "next": {"then": "b", "accepted": "b", "timeout": "b"}}, "b": end()}),
                ),
                &[],
            ),
            (
                "connected_outcomes only on calls",
                flow(
                    json!({"a": {"type": "linkedin_message", "params": {"connected_outcomes": ["x"]}, "next": {"then": "b"}}, "b": end()}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/connected_outcomes")],
            ),
        ];
        check(cases, &ValidateOptions::default());
    }

    #[test]
    fn fetch_and_branch() {
        let fetch = |params: Value| {
            flow(
                json!({"a": {"type": "fetch", "params": params, "next": {"ok": "b", "error": "b"}}, "b": end()}),
            )
        };
        let branch = |cases: Value, next: Value| {
            json!({"name": "t", "start": "a", "input": {"plan": "string", "seats": "number", "vip": "boolean"},
                   "steps": {"a": {"type": "branch", "params": {"cases": cases}, "next": next}, "b": end()}})
        };
        let hosts = ValidateOptions {
            max_wait: None,
            allowed_hosts: Some(vec!["crm.example.com".into()]),
        };
        let cases: &[Case] = &[
            (
                "ok",
                fetch(
                    json!({"url": "https://CRM.example.com:8443/deals?id=1", "method": "POST", "headers": {"x-k": "v"}, "body": {"a": 1}}),
                ),
                &[],
            ),
            (
                "not absolute",
                fetch(json!({"url": "crm.example.com/x"})),
                &[("BAD_SCHEMA", "/steps/a/params/url")],
            ),
            (
                "host not allowed",
                fetch(json!({"url": "https://evil.example.net/x"})),
                &[("BAD_SCHEMA", "/steps/a/params/url")],
            ),
            (
                "get with body",
                fetch(json!({"url": "https://crm.example.com/x", "body": {}})),
                &[("BAD_SCHEMA", "/steps/a/params/body")],
            ),
            (
                "bad method",
                fetch(json!({"url": "https://crm.example.com/x", "method": "get"})),
                &[("BAD_SCHEMA", "/steps/a/params/method")],
            ),
            (
                "missing url",
                fetch(json!({})),
                &[("BAD_SCHEMA", "/steps/a/params/url")],
            ),
            (
                "branch ok",
                branch(
                    json!([
                    {"name": "has_phone", "when": {"path": "contact.phone", "exists": true}},
                    {"name": "big", "when": {"all": [{"path": "input.seats", "in": [50, 100]}, {"not": {"path": "input.vip", "equals": false}}]}},
                    {"name": "tier", "when": {"path": "contact.attributes.tier", "equals": 3}}]),
                    json!({"has_phone": "b", "big": "b", "tier": "b", "else": "b"}),
                ),
                &[],
            ),
            (
                "case not wired and else missing",
                branch(
                    json!([{"name": "x", "when": {"path": "input.plan", "equals": "pro"}}]),
                    json!({"y": "b"}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/next/x"),
                    ("BAD_SCHEMA", "/steps/a/next/else"),
                    ("BAD_SCHEMA", "/steps/a/next/y"),
                ],
            ),
            (
                "type mismatch",
                branch(
                    json!([{"name": "x", "when": {"path": "input.seats", "equals": "10"}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/equals")],
            ),
            (
                "undeclared input",
                branch(
                    json!([{"name": "x", "when": {"path": "input.nope", "exists": true}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when/path")],
            ),
            (
                "two tests",
                branch(
                    json!([{"name": "x", "when": {"path": "input.plan", "exists": true, "equals": "a"}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when")],
            ),
            (
                "case named else",
                branch(
                    json!([{"name": "else", "when": {"path": "contact.email", "exists": true}}]),
                    json!({"else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/name")],
            ),
        ];
        check(cases, &hosts);
    }

    #[test]
    fn url_hosts() {
        let cases: &[(&str, Option<&str>)] = &[
            ("https://CRM.example.com/x?y=1", Some("crm.example.com")),
            ("http://crm.example.com:8080", Some("crm.example.com")),
            ("https://[2001:db8::1]/deals", Some("2001:db8::1")),
            ("https://[2001:db8::1]:8443/deals", Some("2001:db8::1")),
            ("https://crm.example.com#frag", Some("crm.example.com")),
            ("ftp://crm.example.com/", None),
            ("crm.example.com/x", None),
            ("https://user:pw@crm.example.com/", None),
            ("https://crm.example.com:/x", None),
            ("https://crm.example.com:80a/x", None),
            ("https:///x", None),
            ("https://[2001:db8::1/x", None),
            ("https://${host}/x", None),
        ];
        for (url, want) in cases {
            assert_eq!(url_host(url).ok().as_deref(), *want, "{url}");
        }
    }

    #[test]
    fn step_names_must_not_be_empty() {
        let v = run(json!({"name": "t", "start": "", "steps": {"": end()}}));
        assert_eq!(found(&v), [("BAD_SCHEMA".into(), "/steps/".into())]);
    }

    #[test]
    fn problem_display() {
        let v = run(json!({"name": "t", "start": "nope", "steps": {"a": end()}}));
        assert!(v.problems[0]
            .to_string()
            .starts_with("/start: UNKNOWN_TARGET: no step is named `nope`"));
    }
}
