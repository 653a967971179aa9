//! The flow as a graph of steps: every `next` target and `start` must name a step
//! (`UNKNOWN_TARGET`), no cycle may spin without letting time pass (`CYCLE`), no path may make
//! one transition enter more than [`LOOP_GUARD`] steps (`TRANSITION_TOO_LONG`), and a step that
//! `start` cannot reach is a warning (`UNREACHABLE`). The graph algorithms themselves are
//! [`crate::flow::graph`].

use super::{child, Validator};
use crate::code::Code;
use crate::flow::events::Event;
use crate::flow::graph::{is_cyclic, longest_run, reachable, strongly_connected};
use crate::flow::model::{Action, Step, StepKind};
use crate::flow::LOOP_GUARD;
use crate::quote::quote;
use serde_json::Value;
use std::collections::BTreeMap;

/// How many steps of a cycle its message names.
const CYCLE_NAMES_SHOWN: usize = 5;

/// What the graph rules need of a step, read from the raw JSON so that a step with a bad
/// parameter still takes part.
pub(super) struct RawNode<'j> {
    id: &'j str,
    lets_time_pass: bool,
    next: Vec<(&'j str, &'j str)>,
}

impl Validator<'_> {
    // ---- graph -----------------------------------------------------------------------------

    /// Warns (`UNREACHABLE`, at the listed event) about each event a `wait_for` lists that
    /// `settings.exit_on` always takes first, and returns those branches as `(step, event)`,
    /// which the graph then does not follow: a step only they lead to is unreachable too.
    pub(super) fn exits_first(
        &mut self,
        steps: &BTreeMap<String, Step>,
        exit_on: &[Event],
    ) -> Vec<(String, String)> {
        let mut shadowed = Vec::new();
        for (id, step) in steps {
            let Action::WaitFor(p) = &step.action else {
                continue;
            };
            for (i, event) in p.events.iter().enumerate() {
                if !event.always_exits(exit_on) {
                    continue;
                }
                let by = if exit_on.contains(event) {
                    format!("`{event}` is in `settings.exit_on`")
                } else {
                    format!("`{event}` always comes with `reply`, which is in `settings.exit_on`")
                };
                self.warning(
                    Code::Unreachable,
                    child(
                        &child(&child(&child("/steps", id), "params"), "events"),
                        &i.to_string(),
                    ),
                    format!(
                        "{by}, so it exits the enrollment before this step can wake on it and \
                         its branch is never taken: remove it from `settings.exit_on` or from \
                         this list"
                    ),
                );
                shadowed.push((id.clone(), event.as_str().to_string()));
            }
        }
        shadowed
    }

    pub(super) fn graph(
        &mut self,
        nodes: &[RawNode],
        start: Option<&str>,
        has_steps: bool,
        shadowed: &[(String, String)],
    ) {
        let index: BTreeMap<&str, usize> =
            nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            for (key, target) in &n.next {
                match index.get(target) {
                    Some(&j) => {
                        let never_taken = shadowed.iter().any(|(s, e)| s == n.id && e == key);
                        if !never_taken && !adj[i].contains(&j) {
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

        for comp in strongly_connected(&adj) {
            if !is_cyclic(&comp, &adj) || comp.iter().any(|&i| nodes[i].lets_time_pass) {
                continue;
            }
            // A long cycle is named by its first few steps: the whole list of a 10,000-step
            // cycle would not fit in a status (docs/service.md, "Errors").
            let names: Vec<String> = comp.iter().map(|&i| quote(nodes[i].id)).collect();
            let first = comp.iter().map(|&i| nodes[i].id).min().expect("non-empty");
            let what = if comp.len() == 1 {
                format!("step {} leads straight back to itself", quote(first))
            } else {
                format!(
                    "steps {} form a cycle",
                    crate::quote::list(&names, CYCLE_NAMES_SHOWN)
                )
            };
            self.error(
                Code::Cycle,
                child("/steps", first),
                format!("{what}, and nothing in it lets time pass, so it could spin forever: put a `wait`, a task, an `approval` or a `wait_for` with a `timeout` in it, or break it"),
            );
        }

        self.transition_length(nodes, &adj);

        if let Some(s) = start_index {
            let seen = reachable(&adj, s);
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

impl Validator<'_> {
    /// docs/service.md, "Errors": one transition commits every effect or none, so it must be able to finish. The
    /// engine stops a call at [`LOOP_GUARD`] entered steps; a path of more steps than that with
    /// none that lets time pass (a 10,001-step chain of emails) would fail every enrollment
    /// that walks it, so it is refused here, naming the path.
    fn transition_length(&mut self, nodes: &[RawNode], adj: &[Vec<usize>]) {
        let stops: Vec<bool> = nodes.iter().map(|n| n.lets_time_pass).collect();
        let path = longest_run(adj, &stops);
        if path.len() <= LOOP_GUARD {
            return;
        }
        let name = |i: usize| format!("`{}`", nodes[i].id);
        let shown = if path.len() <= 6 {
            path.iter()
                .map(|&i| name(i))
                .collect::<Vec<_>>()
                .join(" → ")
        } else {
            let head: Vec<String> = path[..3].iter().map(|&i| name(i)).collect();
            let tail: Vec<String> = path[path.len() - 2..].iter().map(|&i| name(i)).collect();
            format!("{} → … → {}", head.join(" → "), tail.join(" → "))
        };
        let first = nodes[path[0]].id;
        self.error(
            Code::TransitionTooLong,
            child("/steps", first),
            format!(
                "from step `{first}`, {} steps can run one after another without time passing \
                 ({shown}), more than the {LOOP_GUARD} one transition may enter: put a `wait`, \
                 a task, an `approval` or a `wait_for` with a `timeout` in the path, or split the \
                 flow",
                path.len()
            ),
        );
    }
}

pub(super) fn raw_node<'j>(id: &'j str, raw: &'j Value) -> RawNode<'j> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{check, end, flow, found, run, Case};
    use super::super::{Severity, ValidateOptions};
    use crate::flow::LOOP_GUARD;
    use serde_json::{json, Value};

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

    /// `a` waits for `events` (each wired to its own end step `end_<n>`) under `exit_on`.
    fn waiting(exit_on: Value, events: &[&str]) -> Value {
        let mut steps = serde_json::Map::new();
        let mut next = serde_json::Map::new();
        for (i, e) in events.iter().enumerate() {
            next.insert(e.to_string(), json!(format!("end_{i}")));
            steps.insert(format!("end_{i}"), end());
        }
        next.insert("timeout".into(), json!("done"));
        steps.insert("done".into(), end());
        steps.insert(
            "a".into(),
            json!({"type": "wait_for", "params": {"events": events, "timeout": "2d"}, "next": next}),
        );
        json!({"name": "t", "start": "a", "settings": {"exit_on": exit_on}, "steps": steps})
    }

    #[test]
    fn an_event_that_always_exits_never_wakes_its_wait() {
        let cases: &[Case] = &[
            (
                "listed and in exit_on",
                waiting(json!(["meeting_booked"]), &["reply", "meeting_booked"]),
                &[
                    ("UNREACHABLE", "/steps/a/params/events/1"),
                    ("UNREACHABLE", "/steps/end_1"),
                ],
            ),
            (
                "a channel reply under an exit on any reply",
                waiting(
                    json!(["reply"]),
                    &["reply:sms", "call_connected", "payment.received"],
                ),
                &[
                    ("UNREACHABLE", "/steps/a/params/events/0"),
                    ("UNREACHABLE", "/steps/a/params/events/1"),
                    ("UNREACHABLE", "/steps/end_0"),
                    ("UNREACHABLE", "/steps/end_1"),
                ],
            ),
            (
                "any reply under an exit on SMS replies only still wakes on email",
                waiting(json!(["reply:sms"]), &["reply"]),
                &[],
            ),
            (
                "a custom key",
                waiting(json!(["payment.received"]), &["payment.received", "reply"]),
                &[
                    ("UNREACHABLE", "/steps/a/params/events/0"),
                    ("UNREACHABLE", "/steps/end_0"),
                ],
            ),
        ];
        check(cases, &ValidateOptions::default());
        let v = run(waiting(json!(["meeting_booked"]), &["meeting_booked"]));
        let warning = &v.problems[0];
        assert_eq!(warning.severity, Severity::Warning);
        assert!(
            warning
                .message
                .contains("`meeting_booked` is in `settings.exit_on`"),
            "{warning}"
        );
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
                    "x": {"type": "branch", "params": {"cases": [{"name": "has_phone", "when": {"exists": "contact.phone"}}]},
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
                    json!({"type": "approval", "params": {"title": "again?"}, "next": {"approved": "b", "rejected": "b"}}),
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

    /// A chain of `n` emails from `e0`, then an `end`, with `stop` (a step that lets time
    /// pass) in place of email `at` when given.
    fn chain(n: usize, stop: Option<(usize, Value)>) -> Value {
        let mut steps = serde_json::Map::new();
        for i in 0..n {
            let next = if i + 1 < n {
                format!("e{}", i + 1)
            } else {
                "done".into()
            };
            let step = match &stop {
                Some((at, s)) if *at == i => {
                    let mut s = s.clone();
                    s["next"] = json!({"then": next});
                    s
                }
                _ => json!({"type": "email", "params": {"template": "x"}, "next": {"then": next}}),
            };
            steps.insert(format!("e{i}"), step);
        }
        steps.insert("done".into(), end());
        json!({"name": "t", "start": "e0", "steps": steps})
    }

    #[test]
    fn transitions_that_cannot_finish() {
        let wait = json!({"type": "wait", "params": {"duration": "1h"}});
        let call = json!({"type": "call"});
        let wait_for =
            json!({"type": "wait_for", "params": {"events": ["reply"], "timeout": "1d"}});
        let open_wait_for = json!({"type": "wait_for", "params": {"events": ["reply"]}});
        let too_long = &[("TRANSITION_TOO_LONG", "/steps/e0")][..];
        let cases: Vec<Case> = vec![
            // 9,999 emails and the end: 10,000 steps, exactly what one transition may enter.
            ("at the guard", chain(LOOP_GUARD - 1, None), &[]),
            // 10,000 emails and the end: one step too many.
            ("one over the guard", chain(LOOP_GUARD, None), too_long),
            ("cut by a wait", chain(LOOP_GUARD, Some((5_000, wait))), &[]),
            ("cut by a task", chain(LOOP_GUARD, Some((5_000, call))), &[]),
            (
                "cut by a wait_for with a timeout",
                chain(LOOP_GUARD, Some((5_000, wait_for))),
                &[],
            ),
            (
                "not cut by a wait_for without a timeout",
                chain(LOOP_GUARD, Some((5_000, open_wait_for))),
                too_long,
            ),
            ("a short flow", chain(3, None), &[]),
        ];
        for (name, flow, want) in cases {
            let v = run(flow);
            let got: Vec<(String, String)> = found(&v)
                .into_iter()
                .filter(|(c, _)| c != "BAD_EVENT" && c != "BAD_SCHEMA")
                .collect();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(c, p)| (c.to_string(), p.to_string()))
                .collect();
            assert_eq!(got, want, "{name}");
        }
        let v = run(chain(LOOP_GUARD, None));
        let p = &v.problems[0];
        assert!(
            p.message.contains("10001 steps")
                && p.message
                    .contains("`e0` → `e1` → `e2` → … → `e9999` → `done`"),
            "the message names the path: {p}"
        );
        assert!(
            p.message.len() < 400,
            "and stays short: {}",
            p.message.len()
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
}
