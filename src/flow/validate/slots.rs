//! Timing slots (docs/timing.md): durations, `until`, `tz`, the deadlines and timeouts of step params,
//! and the settings' `jitter` and `send_window`. A slot holds a literal, parsed here by the timing
//! core's grammars, or a `$:` expression typed against the flow's `input` (docs/timing.md, "Expressions in timing slots"); a `${ }`
//! interpolation is refused by name.

use super::{child, describe, Validator};
use crate::code::Code;
use crate::flow::expr::{self, Expr, Type};
use crate::flow::model::{
    Deadline, Duration, DurationSlot, FetchTimeout, Holidays, SendWindow, Target, Until, UntilSlot,
};
use crate::timing::Zone;
use serde_json::{Map, Value};

impl Validator<'_> {
    /// `settings.send_window`: `None` when absent or `null`, `Err` when refused (reported).
    pub(super) fn send_window(&mut self, v: Option<&Value>) -> Result<Option<SendWindow>, ()> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        // A `${ }` in the window's times or zone is refused by name before the window parser
        // sees it (it would only call it a bad time).
        let interpolated: Vec<String> = v
            .as_object()
            .map(|w| {
                w.iter()
                    .filter(|(_, v)| v.as_str().is_some_and(expr::is_interpolation))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        for field in &interpolated {
            let text = v[field].as_str().unwrap_or_default().to_string();
            self.interpolation(&child("/settings/send_window", field), &text);
        }
        if !interpolated.is_empty() {
            return Err(());
        }
        match SendWindow::from_json(v) {
            Ok(w) => Ok(Some(w)),
            Err(e) => {
                // Point at the field when the error names one.
                let path = match e.code {
                    Code::BadTz => "/settings/send_window/tz".to_string(),
                    Code::BadSchema if v.as_object().is_some_and(|o| o.contains_key(&e.text)) => {
                        child("/settings/send_window", &e.text)
                    }
                    _ => "/settings/send_window".to_string(),
                };
                self.timing(&path, e);
                Err(())
            }
        }
    }

    pub(super) fn jitter(&mut self, v: &Value) -> Option<Duration> {
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
    pub(super) fn deadline_fields(
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

    pub(super) fn fetch_timeout(&mut self, v: &Value, path: &str) -> Option<FetchTimeout> {
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

    pub(super) fn opt_timeout(
        &mut self,
        p: &Map<String, Value>,
        path: &str,
    ) -> Result<Option<Deadline>, ()> {
        match p.get("timeout") {
            None => Ok(None),
            Some(v) => self.timeout(v, &child(path, "timeout")).map(Some).ok_or(()),
        }
    }
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
    use super::super::tests::{check, end, flow, run, Case};
    use super::super::ValidateOptions;
    use super::*;
    use serde_json::json;

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
                "until the resume date",
                wait(json!({"until": "$: signal.resume_on"})),
                &[],
            ),
            (
                "until a day after the resume date",
                wait(json!({"until": "$: signal.resume_on + 86400000"})),
                &[],
            ),
            (
                "until the intent",
                wait(json!({"until": "$: signal.intent"})),
                &[("EXPR_TYPE", "/steps/a/params/until")],
            ),
            (
                "duration of the intent",
                wait(json!({"duration": "$: signal.intent"})),
                &[("EXPR_TYPE", "/steps/a/params/duration")],
            ),
            (
                "duration of the resume date",
                wait(json!({"duration": "$: signal.resume_on"})),
                &[("EXPR_TYPE", "/steps/a/params/duration")],
            ),
            (
                "duration until the resume date",
                wait(json!({"duration": "$: signal.resume_on - input.at"})),
                &[],
            ),
            (
                "an unknown signal field",
                wait(json!({"until": "$: signal.date"})),
                &[("BAD_UNTIL", "/steps/a/params/until")],
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
}
