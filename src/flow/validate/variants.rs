//! A step's `variants` and `experiment`: two or more versions of an outreach step's message,
//! and what they are compared on. Every problem is `BAD_VARIANTS` at its JSON pointer.
//!
//! A variant changes what is sent, never where the flow goes: its `params` may set the message
//! keys of its step type (`template` and `channel` on `email` and `sms`, `instructions` on
//! `linkedin_message`), laid over the step's own, and nothing that shapes the graph (a
//! task's `outcomes` or `timeout`).

use super::{child, Validator};
use crate::code::Code;
use crate::flow::model::{Experiment, Goal, Step, StepId, StepKind, Variant};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The most characters of a variant's name.
pub const MAX_VARIANT_NAME: usize = 40;
/// The `params` keys a variant may set, by step type; `None`: the type takes no variants.
fn variant_keys(kind: StepKind) -> Option<&'static [&'static str]> {
    match kind {
        StepKind::Email | StepKind::Sms => Some(&["template", "channel"]),
        StepKind::LinkedinMessage => Some(&["instructions"]),
        _ => None,
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_VARIANT_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Validator<'_> {
    /// The variants and experiment of a step of `kind` whose `params` are `params`; `None` when
    /// something was wrong (reported).
    pub(super) fn variants(
        &mut self,
        kind: StepKind,
        step: &Map<String, Value>,
        params: &Map<String, Value>,
        path: &str,
    ) -> Option<(Vec<Variant>, Option<Experiment>)> {
        let vpath = child(path, "variants");
        let Some(raw) = step.get("variants") else {
            if step.contains_key("experiment") {
                self.error(
                    Code::BadVariants,
                    child(path, "experiment"),
                    "an `experiment` compares a step's variants: add `variants` (at least two) or remove it",
                );
                return None;
            }
            return Some((Vec::new(), None));
        };
        let Some(keys) = variant_keys(kind) else {
            self.error(
                Code::BadVariants,
                &vpath,
                format!(
                    "a `{}` step takes no variants: only `email`, `sms` and `linkedin_message` steps do",
                    kind.as_str()
                ),
            );
            return None;
        };
        let Some(list) = raw.as_array() else {
            self.error(
                Code::BadVariants,
                &vpath,
                "expected a list of variants, e.g. `[{\"name\": \"a\"}, {\"name\": \"b\", \"params\": {\"template\": \"intro_b\"}}]`",
            );
            return None;
        };
        if list.len() < 2 {
            self.error(
                Code::BadVariants,
                &vpath,
                format!(
                    "{} variant{}: a test needs at least two (the first is the control)",
                    list.len(),
                    if list.len() == 1 { "" } else { "s" }
                ),
            );
            return None;
        }
        let mut ok = true;
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let mut variants = Vec::new();
        for (i, raw) in list.iter().enumerate() {
            let at = child(&vpath, &i.to_string());
            let Some(obj) = raw.as_object() else {
                self.error(
                    Code::BadVariants,
                    &at,
                    "expected a variant object with `name`, and `params` and `weight` if it needs them",
                );
                ok = false;
                continue;
            };
            for key in obj.keys() {
                if !["name", "params", "weight"].contains(&key.as_str()) {
                    self.error(
                        Code::BadVariants,
                        child(&at, key),
                        format!(
                            "unknown field `{key}`: a variant has `name`, `params` and `weight`"
                        ),
                    );
                    ok = false;
                }
            }
            let name = match obj.get("name") {
                Some(Value::String(n)) if valid_name(n) => {
                    if let Some(first) = seen.insert(n.clone(), i) {
                        self.error(
                            Code::BadVariants,
                            child(&at, "name"),
                            format!(
                                "`{n}` names variant {first} too: each variant needs its own name"
                            ),
                        );
                        ok = false;
                    }
                    Some(n.clone())
                }
                other => {
                    self.error(
                        Code::BadVariants,
                        child(&at, "name"),
                        format!(
                            "{}: a variant's name is 1 to {MAX_VARIANT_NAME} of a-z, 0-9 and `_`, e.g. `\"short_subject\"`",
                            match other {
                                None => "missing".to_string(),
                                Some(v) => format!("{} is not a variant name", super::describe(v)),
                            }
                        ),
                    );
                    ok = false;
                    None
                }
            };
            let weight = match obj.get("weight") {
                None => Some(1.0),
                Some(Value::Number(n)) if n.as_f64().is_some_and(|w| w > 0.0 && w.is_finite()) => {
                    n.as_f64()
                }
                Some(other) => {
                    self.error(
                        Code::BadVariants,
                        child(&at, "weight"),
                        format!(
                            "{} is not a weight: use a positive number (a variant's share is its weight over the sum)",
                            super::describe(other)
                        ),
                    );
                    ok = false;
                    None
                }
            };
            let ppath = child(&at, "params");
            let overrides = match obj.get("params") {
                None => Some(Map::new()),
                Some(Value::Object(p)) => {
                    let mut fine = true;
                    for key in p.keys() {
                        if !keys.contains(&key.as_str()) {
                            self.error(
                                Code::BadVariants,
                                child(&ppath, key),
                                format!(
                                    "a variant of a `{}` step cannot set `{key}`: it may set {} (a variant changes what is sent, not where the flow goes)",
                                    kind.as_str(),
                                    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                                ),
                            );
                            fine = false;
                        }
                    }
                    fine.then(|| p.clone())
                }
                Some(other) => {
                    self.error(
                        Code::BadVariants,
                        &ppath,
                        format!(
                            "expected an object of the params this variant changes, found {}",
                            super::describe(other)
                        ),
                    );
                    None
                }
            };
            let action = overrides.and_then(|o| {
                let mut merged = params.clone();
                merged.extend(o);
                self.action(kind, &merged, &ppath)
            });
            match (name, weight, action) {
                (Some(name), Some(weight), Some(action)) => variants.push(Variant {
                    name,
                    weight,
                    action,
                }),
                _ => ok = false,
            }
        }
        let experiment = self.experiment(step.get("experiment"), &child(path, "experiment"));
        (ok && experiment.is_some()).then_some((variants, experiment))
    }

    /// A step's `experiment`, with its defaults when it is absent.
    fn experiment(&mut self, raw: Option<&Value>, path: &str) -> Option<Experiment> {
        let mut out = Experiment {
            name: None,
            goal: Goal::Reply,
            alpha: Experiment::DEFAULT_ALPHA,
            auto_stop: false,
            tuning: Experiment::DEFAULT_TUNING,
        };
        let Some(raw) = raw else {
            return Some(out);
        };
        let Some(obj) = raw.as_object() else {
            self.error(
                Code::BadVariants,
                path,
                "expected an object: `{\"goal\": \"reply\", \"alpha\": 0.05, \"auto_stop\": false}`",
            );
            return None;
        };
        let mut ok = true;
        for (key, value) in obj {
            let at = child(path, key);
            match key.as_str() {
                "goal" => match value.as_str().and_then(Goal::parse) {
                    Some(g) => out.goal = g,
                    None => {
                        self.error(
                            Code::BadVariants,
                            at,
                            format!(
                                "{} is not a goal: use {}",
                                super::describe(value),
                                Goal::ALL.map(|g| format!("`{}`", g.as_str())).join(", ")
                            ),
                        );
                        ok = false;
                    }
                },
                "alpha" => match value.as_f64() {
                    Some(a) if a > 0.0 && a < 1.0 => out.alpha = a,
                    _ => {
                        self.error(
                            Code::BadVariants,
                            at,
                            "`alpha` is the test's error rate: a number between 0 and 1, e.g. 0.05",
                        );
                        ok = false;
                    }
                },
                "auto_stop" => match value.as_bool() {
                    Some(b) => out.auto_stop = b,
                    None => {
                        self.wrong_type(&at, "true or false", value);
                        ok = false;
                    }
                },
                "tuning" => match value.as_f64() {
                    Some(t) if t >= 1.0 && t.is_finite() => out.tuning = t,
                    _ => {
                        self.error(
                            Code::BadVariants,
                            at,
                            "`tuning` is the sample size the confidence sequence is tightest at: a number of at least 1, e.g. 5000",
                        );
                        ok = false;
                    }
                },
                "name" => match value.as_str() {
                    Some(n) if !n.trim().is_empty() && n.chars().count() <= 200 => {
                        out.name = Some(n.to_string())
                    }
                    _ => {
                        self.error(
                            Code::BadVariants,
                            at,
                            "`name` shares one experiment across steps: a non-empty text of at most 200 characters",
                        );
                        ok = false;
                    }
                },
                _ => {
                    self.error(
                        Code::BadVariants,
                        at,
                        format!("unknown field `{key}`: an experiment has `goal`, `alpha`, `auto_stop`, `tuning` and `name`"),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Steps that share an experiment name list the same variants, in the same order, so a
    /// contact sees the same variant at each and the first is every step's control.
    pub(super) fn shared_experiments(&mut self, steps: &BTreeMap<StepId, Step>) {
        let mut first: BTreeMap<&str, (&str, Vec<&str>)> = BTreeMap::new();
        for (id, step) in steps {
            let Some(name) = step.experiment.as_ref().and_then(|e| e.name.as_deref()) else {
                continue;
            };
            let names: Vec<&str> = step.variants.iter().map(|v| v.name.as_str()).collect();
            match first.get(name) {
                None => {
                    first.insert(name, (id.as_str(), names));
                }
                Some((other, theirs)) if *theirs != names => {
                    let message = format!(
                        "experiment `{name}` is shared with step `{other}`, whose variants are {}: list the same names in the same order",
                        theirs.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    );
                    self.error(
                        Code::BadVariants,
                        child(&child("/steps", id), "variants"),
                        message,
                    );
                }
                Some(_) => {}
            }
        }
    }
}
