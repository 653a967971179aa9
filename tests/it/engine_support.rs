//! Shared helpers of the engine tests (`engine_props`, `engine_routing`, `engine_steps`); it has no
//! tests of its own.
#![allow(dead_code)]

use chrono::{DateTime, Utc};
use nudge::engine::effect::{Effect, JourneyEntry, SignalEffect};
use nudge::engine::{step, ContactView, Ctx, EnrollmentState, FlowRef, Input, Run};
use nudge::flow::{Flow, ValidateOptions};
use serde_json::Value;

/// A validated flow, or a panic listing the validator's problems.
pub fn flow(json: Value) -> Flow {
    Flow::from_json(&json, &ValidateOptions::default())
        .unwrap_or_else(|problems| panic!("test flow refused: {problems:#?}"))
}

/// A flow whose `steps` are given, with `start` and optional settings.
pub fn flow_of(start: &str, settings: Value, steps: Value) -> Flow {
    flow(serde_json::json!({
        "name": "test", "start": start, "settings": settings,
        "input": {"wait_ms": "number", "at": "timestamp"}, "steps": steps
    }))
}

pub fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

pub fn contact(tz: Option<&str>, phone: Option<&str>, email: Option<&str>) -> ContactView {
    ContactView {
        id: "c1".into(),
        email: email.map(str::to_string),
        phone: phone.map(str::to_string),
        tz: tz.map(str::to_string),
        ..ContactView::default()
    }
}

/// One enrollment driven by hand: every call's effects are kept.
pub struct Driver {
    pub state: EnrollmentState,
    pub flow: Flow,
    pub ctx: Ctx,
    pub effects: Vec<Effect>,
}

impl Driver {
    pub fn new(flow: Flow, contact: ContactView, sender_tz: &str) -> Driver {
        Driver::with_input(flow, contact, sender_tz, serde_json::json!({}))
    }

    pub fn with_input(flow: Flow, contact: ContactView, sender_tz: &str, input: Value) -> Driver {
        Driver {
            state: EnrollmentState::new(
                "enr-1",
                FlowRef {
                    id: "test".into(),
                    version: 1,
                },
                contact,
                sender_tz,
                input,
            ),
            flow,
            ctx: Ctx::default(),
            effects: Vec::new(),
        }
    }

    /// Applies `input` at `now`; returns this call's effects.
    pub fn apply(&mut self, input: Input, now: &str) -> Vec<Effect> {
        let (next, fx) = step(&self.state, &self.flow, input, t(now), &self.ctx);
        self.state = next;
        self.effects.extend(fx.clone());
        fx
    }

    /// Wakes the enrollment at its `next_run_at` (panics when there is none).
    pub fn wake(&mut self) -> Vec<Effect> {
        let at = self.state.next_run_at.expect("a wake time");
        let (next, fx) = step(&self.state, &self.flow, Input::Wake, at, &self.ctx);
        self.state = next;
        self.effects.extend(fx.clone());
        fx
    }

    pub fn run(&self) -> &Run {
        self.state.run.as_ref().expect("a current run")
    }

    /// (step, branch, woken_by) of every closed run so far, in order.
    pub fn closed(&self) -> Vec<(String, Option<String>, Option<String>)> {
        let mut names = std::collections::BTreeMap::new();
        let mut out = Vec::new();
        for e in &self.effects {
            match e {
                Effect::RunOpened(r) => {
                    names.insert(r.id, r.step.clone());
                }
                Effect::RunClosed {
                    run,
                    branch,
                    woken_by,
                    ..
                } => {
                    out.push((names[run].clone(), branch.clone(), woken_by.clone()));
                }
                _ => {}
            }
        }
        out
    }

    /// The steps entered so far, in order.
    pub fn entered(&self) -> Vec<String> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::RunOpened(r) => Some(r.step.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn journey(&self) -> Vec<JourneyEntry> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Journey(j) => Some(j.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn signal_effects(&self, signal: &str) -> Vec<SignalEffect> {
        self.journey()
            .into_iter()
            .filter_map(|j| match j {
                JourneyEntry::Signal {
                    signal: s, effect, ..
                } if s == signal => Some(effect),
                _ => None,
            })
            .collect()
    }
}

pub fn c(s: &str) -> (String, Option<String>, Option<String>) {
    (s.to_string(), None, None)
}

/// (step, Some(branch), woken_by) shorthand.
pub fn cb(
    s: &str,
    branch: &str,
    woken_by: Option<&str>,
) -> (String, Option<String>, Option<String>) {
    (
        s.to_string(),
        Some(branch.to_string()),
        woken_by.map(str::to_string),
    )
}
