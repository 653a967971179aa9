//! The flow as a graph of steps: every `next` target and `start` must name a step
//! (`UNKNOWN_TARGET`), no cycle may spin without letting time pass (`CYCLE`), and a step that
//! `start` cannot reach is a warning (`UNREACHABLE`). The graph algorithms themselves are
//! [`crate::flow::graph`].

use super::{child, Validator};
use crate::code::Code;
use crate::flow::graph::{is_cyclic, reachable, strongly_connected};
use crate::flow::model::StepKind;
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

    pub(super) fn graph(&mut self, nodes: &[RawNode], start: Option<&str>, has_steps: bool) {
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

        for comp in strongly_connected(&adj) {
            if !is_cyclic(&comp, &adj) || comp.iter().any(|&i| nodes[i].lets_time_pass) {
                continue;
            }
            // A long cycle is named by its first few steps: the whole list of a 10,000-step
            // cycle would not fit in a status (SPEC §13).
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
}
