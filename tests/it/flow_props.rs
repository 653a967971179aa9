//! Property tests for the validator: random mutations of the valid fixtures never make it panic,
//! it builds a flow exactly when no problem is an error, a built flow is closed (every target
//! names a step), every problem has a JSON Pointer, and the answer is deterministic.

use nudge::flow::{report, validate, Severity, ValidateOptions};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;

fn fixtures() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flows");
    let mut out: Vec<Value> = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".json") && !name.ends_with(".expect.json") {
            out.push(serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap());
        }
    }
    out.sort_by_key(|v| v["name"].to_string());
    out
}

/// Every JSON Pointer in `v` (the root included).
fn pointers(v: &Value, base: String, out: &mut Vec<String>) {
    out.push(base.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let tok = k.replace('~', "~0").replace('/', "~1");
                pointers(c, format!("{base}/{tok}"), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, format!("{base}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Values a mutation may write: wrong types, slot spellings, names of steps and events.
fn replacement(k: usize) -> Value {
    let all = [
        json!(null),
        json!(0),
        json!(-5),
        json!(1.5),
        json!(true),
        json!("30000"),
        json!("1d"),
        json!("2bd"),
        json!("$: input.nudge_ms * 2"),
        json!("$: input.demo_at"),
        json!("${x}"),
        json!("mon 09:00"),
        json!("*-02-30 08:00"),
        json!("Europe/Prague"),
        json!("CET"),
        json!("reply"),
        json!("payment.received"),
        json!("end_done"),
        json!("email_1"),
        json!([]),
        json!(["reply"]),
        json!({}),
        json!({"until": "fri 17:00"}),
        json!({"for": "1h", "until": "fri 17:00"}),
        json!({"type": "end"}),
        json!({"type": "wait", "params": {"duration": "1h"}, "next": {"then": "email_1"}}),
    ];
    all[k % all.len()].clone()
}

fn mutate(doc: &mut Value, at: usize, kind: usize, with: usize) {
    let mut ptrs = Vec::new();
    pointers(doc, String::new(), &mut ptrs);
    let ptr = ptrs[at % ptrs.len()].clone();
    if ptr.is_empty() {
        if kind % 2 == 0 {
            *doc = replacement(with);
        }
        return;
    }
    let (parent_ptr, token) = ptr.rsplit_once('/').unwrap();
    let token = token.replace("~1", "/").replace("~0", "~");
    let Some(parent) = doc.pointer_mut(parent_ptr) else {
        return;
    };
    match (kind % 4, parent) {
        (0, Value::Object(m)) => {
            m.remove(&token);
        }
        (1, Value::Object(m)) => {
            m.insert(format!("{token}_x"), replacement(with));
        }
        (0, Value::Array(a)) => {
            let i: usize = token.parse().unwrap();
            a.remove(i);
        }
        _ => {
            if let Some(slot) = doc.pointer_mut(&ptr) {
                *slot = replacement(with);
            }
        }
    }
}

fn check(doc: &Value, opts: &ValidateOptions) -> Result<(), TestCaseError> {
    let v = validate(doc, opts);
    let has_error = v.problems.iter().any(|p| p.severity == Severity::Error);
    prop_assert_eq!(
        v.flow.is_some(),
        !has_error,
        "{}",
        report::render_text(&v.problems)
    );
    for p in &v.problems {
        prop_assert!(p.path.is_empty() || p.path.starts_with('/'), "{}", p);
        prop_assert!(!p.message.is_empty());
    }
    if let Some(flow) = &v.flow {
        prop_assert!(flow.step(&flow.start).is_some());
        for step in flow.steps.values() {
            for (_, target) in step.successors() {
                prop_assert!(flow.step(target).is_some());
            }
        }
    }
    prop_assert_eq!(
        report::render_json(&v.problems)["valid"].as_bool(),
        Some(!has_error)
    );
    let again = validate(doc, opts);
    prop_assert_eq!(again.problems, v.problems);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn mutated_fixtures(
        which in 0usize..64,
        muts in proptest::collection::vec((0usize..10_000, 0usize..8, 0usize..64), 1..4),
        limit in proptest::option::of(prop_oneof![Just("7d"), Just("1h"), Just("5bd")]),
    ) {
        let all = fixtures();
        let mut doc = all[which % all.len()].clone();
        for (at, kind, with) in muts {
            mutate(&mut doc, at, kind, with);
        }
        let opts = ValidateOptions {
            max_wait: limit.map(|l| nudge::timing::Duration::parse(l).unwrap()),
            allowed_hosts: None,
        };
        check(&doc, &opts)?;
    }
}
