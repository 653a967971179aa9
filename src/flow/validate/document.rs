//! The top level of a flow document: its fields, the `input` schema, `settings`, and the lists
//! of event names that `settings.exit_on` and `wait_for` share.

use super::graph::{raw_node, RawNode};
use super::{child, describe, Validator};
use crate::code::Code;
use crate::flow::events::Event;
use crate::flow::model::{FieldType, Flow, Holidays, InputSchema, OutOfOffice, Settings};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const TOP_FIELDS: &[&str] = &["name", "start", "settings", "input", "steps"];
const SETTINGS_FIELDS: &[&str] = &[
    "send_window",
    "jitter",
    "exit_on",
    "holidays",
    "out_of_office",
];
const OOO_FIELDS: &[&str] = &["action", "extra", "default_pause", "max_pause"];

impl Validator<'_> {
    pub(super) fn flow(&mut self, json: &Value) -> Option<Flow> {
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
        let shadowed = match &settings {
            Some(settings) => self.exits_first(&steps, &settings.exit_on),
            None => Vec::new(),
        };
        self.graph(&nodes, start.as_deref(), !nodes.is_empty(), &shadowed);
        self.shared_experiments(&steps);

        Some(Flow {
            name: name?,
            start: start?,
            settings: settings?,
            input: input?,
            steps: if steps_ok { steps } else { return None },
        })
    }

    // ---- input schemas ---------------------------------------------------------------------

    pub(super) fn schema(&mut self, v: &Value, path: &str) -> Option<InputSchema> {
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
        let send_window = match self.send_window(s.get("send_window")) {
            Ok(w) => w,
            Err(()) => {
                ok = false;
                None
            }
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
        let out_of_office = match s.get("out_of_office") {
            None => OutOfOffice::default(),
            Some(v) => match self.out_of_office(v) {
                Some(o) => o,
                None => {
                    ok = false;
                    OutOfOffice::default()
                }
            },
        };
        ok.then_some(Settings {
            send_window,
            jitter,
            exit_on,
            holidays,
            out_of_office,
        })
    }

    /// `settings.out_of_office`: an action and three literal durations.
    fn out_of_office(&mut self, v: &Value) -> Option<OutOfOffice> {
        let path = "/settings/out_of_office";
        let Some(obj) = v.as_object() else {
            self.wrong_type(
                path,
                "an object such as `{\"action\": \"pause_until_return\", \"extra\": \"1bd\"}`",
                v,
            );
            return None;
        };
        self.unknown_fields(obj, path, OOO_FIELDS);
        let mut out = OutOfOffice::default();
        let mut ok = true;
        if let Some(a) = obj.get("action") {
            match a.as_str().and_then(crate::routing::OooAction::parse) {
                Some(action) => out.action = action,
                None => {
                    self.error(
                        Code::BadSchema,
                        child(path, "action"),
                        format!(
                            "{} is not an out-of-office action: use `pause_until_return`, \
                             `ignore` or `exit`",
                            describe(a)
                        ),
                    );
                    ok = false;
                }
            }
        }
        for (name, slot) in [
            ("extra", &mut out.extra),
            ("default_pause", &mut out.default_pause),
            ("max_pause", &mut out.max_pause),
        ] {
            let Some(v) = obj.get(name) else { continue };
            let p = child(path, name);
            if !(v.is_string() || v.is_number()) {
                self.wrong_type(&p, "a duration such as `\"1bd\"` or `\"7d\"`", v);
                ok = false;
                continue;
            }
            match crate::timing::Duration::from_json(v) {
                Ok(d) => *slot = d,
                Err(e) => {
                    self.timing(&p, e);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    fn holidays(&mut self, v: &Value) -> Option<Holidays> {
        let path = "/settings/holidays";
        let Some(items) = v.as_array() else {
            self.wrong_type(
                path,
                "a list of dates `YYYY-MM-DD` and calendars (`US`, `DE-BY`, `contact`)",
                v,
            );
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
                    self.wrong_type(&p, "a date `YYYY-MM-DD` or a calendar such as `US`", item);
                    ok = false;
                }
            }
        }
        if !ok {
            return None;
        }
        if let Some(i) = dates
            .iter()
            .position(|d| *d == crate::timing::holidays::CONTACT)
        {
            // Whether a contact has a country or a phone is only known at run time; say now
            // what happens to one that has neither.
            self.warning(
                Code::ContactHolidays,
                child(path, &i.to_string()),
                "`contact` takes the contact's `country`, else its phone number's region; a contact \
                 with neither gets no holidays of its own (the journey says so): set `country` on \
                 such contacts, or list a calendar such as `US` as well",
            );
        }
        match Holidays::parse(&dates) {
            Ok(h) => Some(h),
            Err(e) => {
                self.timing(path, e);
                None
            }
        }
    }

    /// A list of event names (`exit_on`, `wait_for.events`).
    pub(super) fn event_list(
        &mut self,
        v: &Value,
        path: &str,
        non_empty: bool,
    ) -> Option<Vec<Event>> {
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
}

/// A field name usable in `input.<field>`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, end, flow, found, run, Case};
    use super::super::ValidateOptions;
    use serde_json::{json, Value};

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
                    json!({"a": {"type": "approval", "params": {"title": "ok?"}, "next": {"approved": "b", "maybe": "b"}}, "b": end()}),
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
    fn step_names_must_not_be_empty() {
        let v = run(json!({"name": "t", "start": "", "steps": {"": end()}}));
        assert_eq!(found(&v), [("BAD_SCHEMA".into(), "/steps/".into())]);
    }
}
