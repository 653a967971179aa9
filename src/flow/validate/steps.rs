//! One step: its `type`, the params of each step type (outreach, tasks, waits, `approval`,
//! `fetch`, `branch` and its conditions, `end`), and which `next` keys the type allows. The
//! targets those keys name are checked with the whole graph.

use super::{child, Validator};
use crate::code::Code;
use crate::flow::events::Event;
use crate::flow::expr::Type;
use crate::flow::expr::{self, Expr};
use crate::flow::model::{
    Action, ApprovalParams, BranchParams, CallParams, Case, Compare, Condition, DurationSlot,
    EndParams, FetchParams, InputSchema, Method, Operand, OutreachParams, Path, Retry, Step,
    StepKind, TaskParams, WaitForParams, FETCH_RESPONSE_LIMIT_DEFAULT, FETCH_RESPONSE_LIMIT_MAX,
    FETCH_TIMEOUT_MAX_MS,
};
use crate::timing::Duration;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const STEP_FIELDS: &[&str] = &["type", "params", "next", "variants", "experiment"];

impl Validator<'_> {
    // ---- steps -----------------------------------------------------------------------------

    pub(super) fn step(&mut self, raw: &Value, path: &str) -> Option<Step> {
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
        let variants = self.variants(kind, obj, params, path);
        let action = action?;
        let (variants, experiment) = variants?;
        if !next_ok {
            return None;
        }
        Some(Step {
            action,
            next: next?,
            variants,
            experiment,
        })
    }

    pub(super) fn action(
        &mut self,
        kind: StepKind,
        p: &Map<String, Value>,
        path: &str,
    ) -> Option<Action> {
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
                self.unknown_fields(
                    p,
                    path,
                    &["title", "description", "input", "timeout", "link_ttl"],
                );
                let title = self.req_string(
                    p,
                    path,
                    "title",
                    "what the approver is asked, e.g. `\"Send the contract?\"`",
                );
                let description =
                    self.opt_string(p, path, "description", "more about what is asked");
                let input = match p.get("input") {
                    None => Some(InputSchema::new()),
                    Some(v) => self.schema(v, &child(path, "input")),
                };
                let timeout = self.opt_timeout(p, path);
                let link_ttl = match p.get("link_ttl") {
                    None => Ok(None),
                    Some(v) => match Duration::from_json(v) {
                        Ok(d) if !d.is_zero() => Ok(Some(d)),
                        Ok(_) => {
                            self.error(
                                Code::BadDuration,
                                child(path, "link_ttl"),
                                "a link that expires at once is useless: give a duration such as `2d`",
                            );
                            Err(())
                        }
                        Err(e) => {
                            self.error(
                                e.code,
                                child(path, "link_ttl"),
                                format!(
                                    "{}; `link_ttl` is a literal duration such as `2d`",
                                    e.message()
                                ),
                            );
                            Err(())
                        }
                    },
                };
                Some(Action::Approval(ApprovalParams {
                    title: title?,
                    description: description.ok()?,
                    input: input?,
                    timeout: timeout.ok()?,
                    link_ttl: link_ttl.ok()?,
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
        self.unknown_fields(
            p,
            path,
            &[
                "url",
                "method",
                "query",
                "headers",
                "body",
                "timeout",
                "retry",
                "response_limit",
            ],
        );
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
        let query = self.string_map(p, path, "query", false);
        let headers = self.string_map(p, path, "headers", true);
        let body = p.get("body").cloned();
        if let Some(b) = &body {
            self.body_exprs(b, &child(path, "body"));
        }
        if body.is_some() && method == Some(Method::Get) {
            self.error(
                Code::BadSchema,
                child(path, "body"),
                "a `GET` request has no body: remove `body`, or set `\"method\": \"POST\"`",
            );
            return None;
        }
        let timeout_path = child(path, "timeout");
        let timeout = match p.get("timeout") {
            None => Ok(None),
            Some(v) => match self.fetch_timeout(v, &timeout_path) {
                Some(t) => {
                    if let DurationSlot::Literal(d) = &t.duration {
                        let span = d.max_span(&crate::timing::Holidays::none());
                        if span.num_milliseconds() > FETCH_TIMEOUT_MAX_MS || d.is_zero() {
                            self.error(
                                Code::BadDuration,
                                &timeout_path,
                                "a fetch timeout is more than 0 and at most `60s`: a slower peer is an `error`, retry it with `retry`",
                            );
                        }
                    }
                    Ok(Some(t))
                }
                None => Err(()),
            },
        };
        let retry = match p.get("retry") {
            None => Some(Retry::default()),
            Some(v) => self.retry(v, &child(path, "retry")),
        };
        let response_limit = match p.get("response_limit") {
            None => Some(FETCH_RESPONSE_LIMIT_DEFAULT),
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 && n as usize <= FETCH_RESPONSE_LIMIT_MAX => Some(n as usize),
                _ => {
                    self.error(
                        Code::BadSchema,
                        child(path, "response_limit"),
                        format!("`response_limit` is a number of bytes from 1 to {FETCH_RESPONSE_LIMIT_MAX} (default {FETCH_RESPONSE_LIMIT_DEFAULT})"),
                    );
                    None
                }
            },
        };
        Some(FetchParams {
            url: url?,
            host: host?,
            method: method?,
            query: query?,
            headers: headers?,
            body,
            timeout: timeout.ok()?,
            retry: retry?,
            response_limit: response_limit?,
        })
    }

    /// `query` or `headers`: an object of name → a string literal or a `$:` expression (a
    /// header name is a valid HTTP token).
    fn string_map(
        &mut self,
        p: &Map<String, Value>,
        path: &str,
        key: &str,
        header_names: bool,
    ) -> Option<BTreeMap<String, Operand>> {
        let mpath = child(path, key);
        let obj = match p.get(key) {
            None => return Some(BTreeMap::new()),
            Some(Value::Object(o)) => o,
            Some(other) => {
                self.wrong_type(&mpath, &format!("an object of {key} name → value"), other);
                return None;
            }
        };
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (name, v) in obj {
            let vpath = child(&mpath, name);
            if header_names && http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                self.error(
                    Code::BadSchema,
                    &vpath,
                    format!(
                        "{} is not a header name: use letters, digits and `-` (like `X-Api-Key`)",
                        crate::quote::quote(name)
                    ),
                );
                ok = false;
                continue;
            }
            match v {
                Value::String(s) if expr::strip_prefix(s).is_some() => {
                    match self.operand_expr(s, &vpath) {
                        Some(e) => {
                            out.insert(name.clone(), Operand::Expr(e));
                        }
                        None => ok = false,
                    }
                }
                Value::String(s) => {
                    if header_names && http::HeaderValue::from_str(s).is_err() {
                        self.error(
                            Code::BadSchema,
                            &vpath,
                            "a header value is visible ASCII text without line breaks",
                        );
                        ok = false;
                    }
                    out.insert(name.clone(), Operand::Literal(v.clone()));
                }
                Value::Number(_) | Value::Bool(_) if !header_names => {
                    out.insert(name.clone(), Operand::Literal(v.clone()));
                }
                other => {
                    self.wrong_type(&vpath, "a string, or `\"$: …\"`", other);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Every `$:` string inside a fetch body must parse and type-check.
    fn body_exprs(&mut self, v: &Value, path: &str) {
        match v {
            Value::String(s) if expr::strip_prefix(s).is_some() => {
                self.operand_expr(s, path);
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.body_exprs(item, &child(path, &i.to_string()));
                }
            }
            Value::Object(o) => {
                for (k, item) in o {
                    self.body_exprs(item, &child(path, k));
                }
            }
            _ => {}
        }
    }

    /// `retry`: `{"attempts": 1–10, "backoff": duration}`.
    fn retry(&mut self, v: &Value, path: &str) -> Option<Retry> {
        let Some(obj) = v.as_object() else {
            self.wrong_type(path, "`{\"attempts\": 3, \"backoff\": \"30s\"}`", v);
            return None;
        };
        self.unknown_fields(obj, path, &["attempts", "backoff"]);
        let mut out = Retry::default();
        let mut ok = true;
        if let Some(a) = obj.get("attempts") {
            match a.as_u64() {
                Some(n @ 1..=10) => out.attempts = n as u32,
                _ => {
                    self.error(
                        Code::BadSchema,
                        child(path, "attempts"),
                        format!("{a} is not a number of attempts: use 1 to 10 (1 means no retry)"),
                    );
                    ok = false;
                }
            }
        }
        if let Some(b) = obj.get("backoff") {
            match Duration::from_json(b) {
                Ok(d) if d.is_fixed() => out.backoff = d,
                Ok(_) => {
                    self.error(
                        Code::BadDuration,
                        child(path, "backoff"),
                        "a backoff takes fixed units only (`30s`, `5m`), not days or business days",
                    );
                    ok = false;
                }
                Err(e) => {
                    self.error(e.code, child(path, "backoff"), e.message());
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// A `$:` operand (of a fetch's query, headers or body, or of a branch condition): parsed
    /// and typed against the input schema.
    fn operand_expr(&mut self, text: &str, path: &str) -> Option<Expr> {
        let src = expr::strip_prefix(text).unwrap_or(text);
        let e = match Expr::parse(src) {
            Ok(e) => e,
            Err(e) => {
                self.error(Code::BadSchema, path, format!("{e} (in {text:?})"));
                return None;
            }
        };
        if let Err(err) = e.infer(&self.input) {
            self.error(Code::ExprType, path, format!("{err} (in {text:?})"));
            return None;
        }
        Some(e)
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
                        "a condition such as `{\"exists\": \"contact.phone\"}`",
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
        const SHAPES: &str = "`{\"exists\": \"contact.phone\"}`, `{\"eq\": [a, b]}` (and `ne`, `gt`, `gte`, `lt`, `lte`), `{\"in\": [a, [v, …]]}`, `{\"all\": [c, …]}`, `{\"any\": [c, …]}` or `{\"not\": c}`";
        let Some(obj) = v.as_object() else {
            self.wrong_type(path, &format!("a condition: {SHAPES}"), v);
            return None;
        };
        if obj.len() != 1 {
            self.error(
                Code::BadSchema,
                path,
                format!("a condition is an object with exactly one operator: {SHAPES}"),
            );
            return None;
        }
        let (key, arg) = obj.iter().next().expect("one entry");
        let apath = child(path, key);
        match key.as_str() {
            "not" => self
                .condition(arg, &apath)
                .map(|c| Condition::Not(Box::new(c))),
            "all" | "any" => {
                let Some(items) = arg.as_array().filter(|a| !a.is_empty()) else {
                    self.wrong_type(&apath, "a non-empty list of conditions", arg);
                    return None;
                };
                let mut out = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    match self.condition(item, &child(&apath, &i.to_string())) {
                        Some(c) => out.push(c),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Some(if key == "all" {
                    Condition::All(out)
                } else {
                    Condition::Any(out)
                })
            }
            "exists" => match arg {
                Value::String(s) => self.data_path(s, &apath).map(Condition::Exists),
                other => {
                    self.wrong_type(&apath, "a bare path such as `\"contact.phone\"`", other);
                    None
                }
            },
            "in" => {
                let [a, b] = self.pair(
                    arg,
                    &apath,
                    "`[a, [v, …]]`: a value and the list it may be in",
                )?;
                let left = self.operand(a, &child(&apath, "0"));
                let right = match b {
                    Value::Array(items) => {
                        let mut ok = true;
                        for (i, item) in items.iter().enumerate() {
                            if !matches!(item, Value::String(_) | Value::Number(_) | Value::Bool(_))
                            {
                                self.wrong_type(
                                    &child(&child(&apath, "1"), &i.to_string()),
                                    "a string, number or boolean",
                                    item,
                                );
                                ok = false;
                            }
                        }
                        ok.then(|| (Operand::Literal(b.clone()), None::<Type>))
                    }
                    Value::String(s) if expr::strip_prefix(s).is_some() => self
                        .operand_expr(s, &child(&apath, "1"))
                        .map(|e| (Operand::Expr(e), None)),
                    other => {
                        self.wrong_type(
                            &child(&apath, "1"),
                            "a list of values (or a `$:` path to one)",
                            other,
                        );
                        None
                    }
                };
                let ((left, lt), (right, _)) = (left?, right?);
                if let (Some(lt), Operand::Literal(Value::Array(items))) = (lt, &right) {
                    for (i, item) in items.iter().enumerate() {
                        let it = literal_type(item);
                        if !comparable(lt, it) {
                            self.type_mismatch(&child(&child(&apath, "1"), &i.to_string()), lt, it);
                            return None;
                        }
                    }
                }
                Some(Condition::In(left, right))
            }
            op => {
                let Some(cmp) = Compare::ALL.iter().find(|(_, n)| *n == op).map(|(c, _)| *c) else {
                    self.error(
                        Code::BadSchema,
                        &apath,
                        format!("`{op}` is not a condition operator: {SHAPES}"),
                    );
                    return None;
                };
                let [a, b] = self.pair(
                    arg,
                    &apath,
                    "`[a, b]`: two operands, each a `$:` expression or a literal",
                )?;
                let left = self.operand(a, &child(&apath, "0"));
                let right = self.operand(b, &child(&apath, "1"));
                let ((left, lt), (right, rt)) = (left?, right?);
                if cmp.is_order() {
                    for (t, i) in [(lt, "0"), (rt, "1")] {
                        if let Some(t) = t {
                            if !matches!(t, Type::Number | Type::Timestamp) {
                                self.error(
                                    Code::ExprType,
                                    child(&apath, i),
                                    format!("`{op}` orders numbers or timestamps, and this is a {t}: compare it with `eq`/`ne`/`in` instead"),
                                );
                                return None;
                            }
                        }
                    }
                }
                if let (Some(lt), Some(rt)) = (lt, rt) {
                    if !comparable(lt, rt) {
                        self.type_mismatch(&child(&apath, "1"), lt, rt);
                        return None;
                    }
                }
                Some(Condition::Compare(cmp, left, right))
            }
        }
    }

    /// The two operands of a comparison: exactly two.
    fn pair<'v>(&mut self, arg: &'v Value, path: &str, want: &str) -> Option<[&'v Value; 2]> {
        match arg.as_array().map(Vec::as_slice) {
            Some([a, b]) => Some([a, b]),
            Some(items) => {
                self.error(
                    Code::BadSchema,
                    path,
                    format!(
                        "takes exactly two operands, not {}: write {want}",
                        items.len()
                    ),
                );
                None
            }
            None => {
                self.wrong_type(path, want, arg);
                None
            }
        }
    }

    /// An operand and its static type when known (`None`: untyped, like an attribute).
    fn operand(&mut self, v: &Value, path: &str) -> Option<(Operand, Option<Type>)> {
        match v {
            Value::String(s) if expr::strip_prefix(s).is_some() => {
                let e = self.operand_expr(s, path)?;
                let t = e.infer(&self.input).ok().filter(|t| *t != Type::Untyped);
                Some((Operand::Expr(e), t))
            }
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                Some((Operand::Literal(v.clone()), Some(literal_type(v))))
            }
            other => {
                self.wrong_type(
                    path,
                    "a `$:` expression or a string, number or boolean (use `exists` to test for absence)",
                    other,
                );
                None
            }
        }
    }

    fn type_mismatch(&mut self, path: &str, a: Type, b: Type) {
        self.error(
            Code::ExprType,
            path,
            format!(
                "a {a} is compared with a {b}, which can never hold: compare values of one type"
            ),
        );
    }

    /// A path of `exists`: `input.<declared field>`, `contact.<field>`,
    /// `contact.attributes.<name>`, `fetch.…` or `signal.…`.
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
                self.error(Code::BadSchema, path, format!("{s:?} is not a path: write `contact.<field>`, `contact.attributes.<name>`, `input.<field>`, `fetch.<field>` or `signal.<field>`"));
                None
            }
            Err(e) => {
                self.error(Code::BadSchema, path, format!("{} (in {s:?})", e));
                None
            }
        }
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
                    if !next.contains_key(n) {
                        self.error(
                            Code::BadEvent,
                            path,
                            format!("case `{n}` is not wired: add `\"{n}\": \"<step>\"` to `next`, or remove the case"),
                        );
                    }
                }
                if !next.contains_key("else") {
                    self.error(
                        Code::BadSchema,
                        path,
                        "a branch needs `else`: add `\"else\": \"<step>\"` to `next` for when no case holds",
                    );
                }
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
}

/// The type of a literal operand: a string that reads as an RFC 3339 instant is a timestamp.
fn literal_type(v: &Value) -> Type {
    match v {
        Value::Number(_) => Type::Number,
        Value::Bool(_) => Type::Boolean,
        Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => Type::Timestamp,
        _ => Type::String,
    }
}

/// Two known types that a comparison can find equal or ordered.
fn comparable(a: Type, b: Type) -> bool {
    a == b
}

fn kinds_list() -> String {
    StepKind::ALL
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
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

#[cfg(test)]
mod tests {
    use super::super::tests::{check, end, flow, Case};
    use super::super::ValidateOptions;
    use super::*;
    use serde_json::json;

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
                "fetch with everything",
                fetch(
                    json!({"url": "https://crm.example.com/deals", "query": {"contact": "$: contact.email", "n": 3},
                           "headers": {"Accept": "application/json", "X-Contact": "$: contact.id"},
                           "method": "PUT", "body": {"tz": "$: contact.tz", "x": [1, "$: contact.id"]},
                           "timeout": {"for": "20s"}, "retry": {"attempts": 10, "backoff": "30s"}, "response_limit": 1000}),
                ),
                &[],
            ),
            (
                "credentials in the url",
                fetch(json!({"url": "https://user:pw@crm.example.com/x"})),
                &[("BAD_SCHEMA", "/steps/a/params/url")],
            ),
            (
                "ftp url",
                fetch(json!({"url": "ftp://crm.example.com/x"})),
                &[("BAD_SCHEMA", "/steps/a/params/url")],
            ),
            (
                "bad header name",
                fetch(json!({"url": "https://crm.example.com/x", "headers": {"Bad Header": "v"}})),
                &[("BAD_SCHEMA", "/steps/a/params/headers/Bad Header")],
            ),
            (
                "header value with a line break",
                fetch(
                    json!({"url": "https://crm.example.com/x", "headers": {"X-A": "v\r\nHost: evil"}}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/headers/X-A")],
            ),
            (
                "retry attempts 0",
                fetch(json!({"url": "https://crm.example.com/x", "retry": {"attempts": 0}})),
                &[("BAD_SCHEMA", "/steps/a/params/retry/attempts")],
            ),
            (
                "retry attempts 11",
                fetch(json!({"url": "https://crm.example.com/x", "retry": {"attempts": 11}})),
                &[("BAD_SCHEMA", "/steps/a/params/retry/attempts")],
            ),
            (
                "calendar backoff",
                fetch(json!({"url": "https://crm.example.com/x", "retry": {"backoff": "1d"}})),
                &[("BAD_DURATION", "/steps/a/params/retry/backoff")],
            ),
            (
                "fetch timeout over 60s",
                fetch(json!({"url": "https://crm.example.com/x", "timeout": "61s"})),
                &[("BAD_DURATION", "/steps/a/params/timeout")],
            ),
            (
                "fetch timeout until",
                fetch(
                    json!({"url": "https://crm.example.com/x", "timeout": {"until": "fri 17:00"}}),
                ),
                &[("UNTIL_NOT_ALLOWED", "/steps/a/params/timeout/until")],
            ),
            (
                "bad query expression",
                fetch(json!({"url": "https://crm.example.com/x", "query": {"q": "$: input.nope"}})),
                &[("EXPR_TYPE", "/steps/a/params/query/q")],
            ),
            (
                "response limit too big",
                fetch(json!({"url": "https://crm.example.com/x", "response_limit": 10_000_000})),
                &[("BAD_SCHEMA", "/steps/a/params/response_limit")],
            ),
            (
                "branch ok",
                branch(
                    json!([
                    {"name": "won", "when": {"eq": ["$: fetch.body.stage", "won"]}},
                    {"name": "has_phone", "when": {"exists": "contact.phone"}},
                    {"name": "big", "when": {"all": [{"in": ["$: input.seats", [50, 100]]}, {"not": {"eq": ["$: input.vip", false]}}]}},
                    {"name": "many", "when": {"any": [{"gte": ["$: input.seats * 2", 1000]}, {"lt": ["$: fetch.status", 300]}]}},
                    {"name": "tier", "when": {"ne": ["$: contact.attributes.tier", 3]}}]),
                    json!({"won": "b", "has_phone": "b", "big": "b", "many": "b", "tier": "b", "else": "b"}),
                ),
                &[],
            ),
            (
                "branch on the signal",
                branch(
                    json!([
                    {"name": "dated", "when": {"exists": "signal.resume_on"}},
                    {"name": "later", "when": {"eq": ["$: signal.intent", "not_now"]}},
                    {"name": "referred", "when": {"all": [{"exists": "signal.referral.email"}, {"in": ["$: signal.channel", ["email", "linkedin"]]}]}},
                    {"name": "soon", "when": {"lt": ["$: signal.resume_on", "2027-06-01T00:00:00Z"]}},
                    {"name": "named", "when": {"ne": ["$: signal.referral.name", ""]}}]),
                    json!({"dated": "b", "later": "b", "referred": "b", "soon": "b", "named": "b", "else": "b"}),
                ),
                &[],
            ),
            (
                "an unknown signal field",
                branch(
                    json!([{"name": "x", "when": {"exists": "signal.sentiment"}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when/exists")],
            ),
            (
                "a signal string compared with a number",
                branch(
                    json!([{"name": "x", "when": {"eq": ["$: signal.intent", 3]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/eq/1")],
            ),
            (
                "a resume date compared with a word",
                branch(
                    json!([{"name": "x", "when": {"eq": ["$: signal.resume_on", "march"]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/eq/1")],
            ),
            (
                "ordering the intent",
                branch(
                    json!([{"name": "x", "when": {"gte": ["$: signal.intent", "not_now"]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/gte/0")],
            ),
            (
                "case not wired and else missing",
                branch(
                    json!([{"name": "x", "when": {"eq": ["$: input.plan", "pro"]}}]),
                    json!({"y": "b"}),
                ),
                &[
                    ("BAD_EVENT", "/steps/a/next"),
                    ("BAD_SCHEMA", "/steps/a/next"),
                    ("BAD_SCHEMA", "/steps/a/next/y"),
                ],
            ),
            (
                "type mismatch",
                branch(
                    json!([{"name": "x", "when": {"eq": ["$: input.seats", "10"]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/eq/1")],
            ),
            (
                "ordering a string",
                branch(
                    json!([{"name": "x", "when": {"gt": ["$: input.plan", "a"]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/gt/0")],
            ),
            (
                "in with a wrong type",
                branch(
                    json!([{"name": "x", "when": {"in": ["$: input.seats", [1, "two"]]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("EXPR_TYPE", "/steps/a/params/cases/0/when/in/1/1")],
            ),
            (
                "wrong arity",
                branch(
                    json!([{"name": "x", "when": {"eq": ["$: input.plan"]}}, {"name": "y", "when": {"in": ["$: input.plan", ["a"], ["b"]]}}]),
                    json!({"x": "b", "y": "b", "else": "b"}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/params/cases/0/when/eq"),
                    ("BAD_SCHEMA", "/steps/a/params/cases/1/when/in"),
                ],
            ),
            (
                "undeclared input",
                branch(
                    json!([{"name": "x", "when": {"exists": "input.nope"}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when/exists")],
            ),
            (
                "two operators",
                branch(
                    json!([{"name": "x", "when": {"exists": "input.plan", "eq": ["$: input.plan", "a"]}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when")],
            ),
            (
                "old draft shape",
                branch(
                    json!([{"name": "x", "when": {"path": "contact.phone", "exists": true}}]),
                    json!({"x": "b", "else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/when")],
            ),
            (
                "case named else",
                branch(
                    json!([{"name": "else", "when": {"exists": "contact.email"}}]),
                    json!({"else": "b"}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/cases/0/name")],
            ),
            (
                "approval",
                flow(
                    json!({"a": {"type": "approval", "params": {"title": "Send?", "description": "big deal", "input": {"note": "string"}, "timeout": "3bd", "link_ttl": "2d"},
                                 "next": {"approved": "b", "rejected": "b", "timeout": "b"}}, "b": end()}),
                ),
                &[],
            ),
            (
                "approval input with an unknown type",
                flow(
                    json!({"a": {"type": "approval", "params": {"title": "Send?", "input": {"note": "text"}},
                                 "next": {"approved": "b", "rejected": "b"}}, "b": end()}),
                ),
                &[("BAD_SCHEMA", "/steps/a/params/input/note")],
            ),
            (
                "approval in the draft shape",
                flow(
                    json!({"a": {"type": "approval", "params": {"prompt": "Send?"},
                                 "next": {"approved": "b", "rejected": "b"}}, "b": end()}),
                ),
                &[
                    ("BAD_SCHEMA", "/steps/a/params/prompt"),
                    ("BAD_SCHEMA", "/steps/a/params/title"),
                ],
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
}
