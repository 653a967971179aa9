//! The flow validator (docs/flows.md, "Validation codes").
//!
//! [`validate`] walks the JSON document itself rather than deserializing it, so it can report
//! *every* problem (serde stops at the first), each with its problem code, a JSON Pointer
//! (RFC 6901) to the offending value, and a message that says how to fix it. The same walk
//! builds the typed [`Flow`]; it is returned only when no problem is an error.
//!
//! Order of the checks: document shape (`BAD_SCHEMA`), `input`, `settings`, each step (its
//! fields, its timing slots and expressions, its `next` keys), then the graph: `UNKNOWN_TARGET`,
//! `CYCLE`, and `UNREACHABLE` warnings. The graph rules use the raw `next` values, so a step
//! with a bad parameter still takes part in them.
//!
//! The walk is one `Validator` that collects problems; its methods live beside the part of
//! the document they read:
//!
//! - `document` — the top level: the document's fields, `input` schemas, `settings`, and
//!   lists of event names.
//! - `slots` — timing slots: durations, `until`, `tz`, deadlines and timeouts of step params,
//!   and the settings' `jitter` and `send_window`, with their `$:` expressions.
//! - `steps` — one step: its `type`, the params of each step type, branch conditions, and
//!   which `next` keys the type allows.
//! - `graph` — the whole flow as a graph: `UNKNOWN_TARGET`, `CYCLE`, `UNREACHABLE`.

mod document;
mod graph;
mod slots;
mod steps;
mod variants;

use crate::code::Code;
use crate::flow::model::{Duration, Flow, Holidays, InputSchema};
use crate::timing::TimingError;
use serde_json::{Map, Value};
use std::fmt;

/// Account-level limits the validator checks against.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// The plan's longest wait (docs/flows.md, "Plan limits"). A static wait or timeout whose longest possible
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
    /// The spelling in docs/service.md's JSON report (`error`, `warning`).
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
    /// Whether it refuses the flow.
    pub severity: Severity,
    /// The stable problem code, for programs; the message is for people.
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

/// The walk's shared context: the problems found so far, and what later checks depend on.
struct Validator<'a> {
    problems: Vec<Problem>,
    opts: &'a ValidateOptions,
    /// The flow's `input` schema, read first: expressions are typed against it.
    input: InputSchema,
    /// The flow's holidays, read before any duration: `max_span` depends on them.
    holidays: Holidays,
}

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
        let text = crate::quote::quote_debug(&e.text);
        let at = match e.position {
            Some(p) => format!(" (in {text} at position {p})"),
            None => format!(" (in {text})"),
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

#[cfg(test)]
mod tests {
    //! The tests of the whole walk, and the helpers every part's tests share.

    use super::*;
    use crate::flow::events::Event;
    use crate::flow::model::{Action, StepKind};
    use serde_json::json;

    /// (name, flow document, expected (code, path) problems).
    pub(super) type Case<'a> = (&'a str, Value, &'a [(&'a str, &'a str)]);

    pub(super) fn run(v: Value) -> Validation {
        validate(&v, &ValidateOptions::default())
    }

    /// A flow starting at `a` with these steps.
    pub(super) fn flow(steps: Value) -> Value {
        json!({"name": "t", "start": "a", "steps": steps})
    }

    /// (code, path) of every problem, errors and warnings, sorted.
    pub(super) fn found(v: &Validation) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = v
            .problems
            .iter()
            .map(|p| (p.code.as_str().to_string(), p.path.clone()))
            .collect();
        out.sort();
        out
    }

    pub(super) fn check(cases: &[Case], opts: &ValidateOptions) {
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

    pub(super) fn end() -> Value {
        json!({"type": "end"})
    }

    #[test]
    fn spec_example_is_valid() {
        let v: Value =
            serde_json::from_str(include_str!("../../../fixtures/flows/outbound-v1.json")).unwrap();
        let out = run(v);
        // docs/flows.md's example lists `meeting_booked` both in `exit_on` and in `wait_reply`: valid,
        // but the exit always comes first (docs/signals.md, "Routing"), so its branch is never taken.
        assert_eq!(
            found(&out),
            [
                ("UNREACHABLE".to_string(), "/steps/end_booked".to_string()),
                (
                    "UNREACHABLE".to_string(),
                    "/steps/wait_reply/params/events/1".to_string()
                )
            ],
            "{:#?}",
            out.problems
        );
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
    fn problem_display() {
        let v = run(json!({"name": "t", "start": "nope", "steps": {"a": end()}}));
        assert!(v.problems[0]
            .to_string()
            .starts_with("/start: UNKNOWN_TARGET: no step is named `nope`"));
    }
}
