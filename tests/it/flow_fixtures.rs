//! Runs every flow fixture through the validator.
//!
//! - `fixtures/flows/*.json`: valid flows; they must produce no problem at all, except warnings
//!   listed in an optional sidecar `<name>.expect.json`.
//! - `fixtures/flows/invalid/<name>.json`: each must produce exactly the problems (code and
//!   JSON Pointer) its sidecar `<name>.expect.json` lists, and no typed flow when one of them is
//!   an error. A sidecar may set `max_wait` (e.g. `"7d"`) for `WAIT_EXCEEDS_LIMIT`.
//!
//! Every file of docs/flows.md's code table that a flow document can produce has an invalid fixture;
//! the test checks that none is missing.

use nudge::flow::model::Duration;
use nudge::flow::{report, validate, Severity, ValidateOptions};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/flows")
        .join(sub)
}

fn read(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The flow documents of a directory (sidecars excluded), sorted.
fn flows(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".json") && !name.ends_with(".expect.json")
        })
        .collect();
    out.sort();
    out
}

fn sidecar(flow: &Path) -> Option<Value> {
    let p = flow.with_extension("expect.json");
    p.exists().then(|| read(&p))
}

/// (code, path) pairs of a sidecar's `expect`.
fn expected(side: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = side["expect"]
        .as_array()
        .expect("`expect` is a list")
        .iter()
        .map(|e| {
            (
                e["code"].as_str().unwrap().to_string(),
                e["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn options(side: Option<&Value>) -> ValidateOptions {
    let max_wait = side
        .and_then(|s| s.get("max_wait"))
        .and_then(Value::as_str)
        .map(|m| Duration::parse(m).expect("max_wait parses"));
    ValidateOptions {
        max_wait,
        allowed_hosts: None,
    }
}

#[test]
fn valid_flows_have_no_errors() {
    let paths = flows(&dir(""));
    assert!(
        paths.len() >= 6,
        "expected the valid fixtures, found {paths:?}"
    );
    for path in paths {
        let side = sidecar(&path);
        let v = validate(&read(&path), &options(side.as_ref()));
        let mut got: Vec<(String, String)> = v
            .problems
            .iter()
            .map(|p| (p.code.as_str().to_string(), p.path.clone()))
            .collect();
        got.sort();
        let want = side.as_ref().map(expected).unwrap_or_default();
        assert_eq!(
            got,
            want,
            "{}:\n{}",
            path.display(),
            report::render_text(&v.problems)
        );
        assert!(
            v.problems.iter().all(|p| p.severity == Severity::Warning),
            "{}",
            path.display()
        );
        let flow = v
            .flow
            .unwrap_or_else(|| panic!("{}: no flow built", path.display()));
        assert!(flow.step(&flow.start).is_some());
        for step in flow.steps.values() {
            for (_, target) in step.successors() {
                assert!(flow.step(target).is_some(), "{}: {target}", path.display());
            }
        }
    }
}

#[test]
fn invalid_flows_produce_exactly_their_codes() {
    let paths = flows(&dir("invalid"));
    let mut covered = BTreeSet::new();
    let mut failures = Vec::new();
    for path in &paths {
        let side = sidecar(path).unwrap_or_else(|| panic!("{}: no sidecar", path.display()));
        let v = validate(&read(path), &options(Some(&side)));
        let mut got: Vec<(String, String)> = v
            .problems
            .iter()
            .map(|p| (p.code.as_str().to_string(), p.path.clone()))
            .collect();
        got.sort();
        let want = expected(&side);
        if got != want {
            failures.push(format!(
                "{}: expected {want:?}, got:\n{}",
                path.display(),
                report::render_text(&v.problems)
            ));
            continue;
        }
        let has_error = v.problems.iter().any(|p| p.severity == Severity::Error);
        assert_eq!(v.flow.is_none(), has_error, "{}", path.display());
        // The file is named after the code it demonstrates.
        let stem = path
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .to_ascii_uppercase();
        assert!(
            want.iter().any(|(c, _)| *c == stem),
            "{}: does not produce {stem}",
            path.display()
        );
        covered.insert(stem);
        let json = report::render_json(&v.problems);
        assert_eq!(json["valid"], Value::Bool(!has_error));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every code a flow document can produce (docs/flows.md) has a fixture. BAD_PHONE, ZONE_UNKNOWN
    // and NO_OPENING are about contacts and run time, not flow documents.
    for code in [
        "BAD_SCHEMA",
        "UNKNOWN_TARGET",
        "BAD_EVENT",
        "CYCLE",
        "BAD_DURATION",
        "BAD_UNTIL",
        "BAD_TZ",
        "BAD_PATTERN",
        "FOR_AND_UNTIL",
        "QUOTED_NUMBER",
        "INTERPOLATION_REFUSED",
        "EXPR_TYPE",
        "UNTIL_NOT_ALLOWED",
        "WAIT_EXCEEDS_LIMIT",
        "BAD_WINDOW",
        "NEVER_MATCHES",
        "UNREACHABLE",
    ] {
        assert!(covered.contains(code), "no fixture for {code}");
    }
}

/// The complete flow in docs/flows.md is the docs/flows.md example, and it is valid, with the warnings
/// its sidecar lists (its `meeting_booked` branch is never taken: `exit_on` wins).
#[test]
fn docs_example_is_the_valid_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = fs::read_to_string(root.join("docs/flows.md")).unwrap();
    let start = docs.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + docs[start..].find("```").unwrap();
    let example: Value = serde_json::from_str(&docs[start..end]).expect("the example parses");
    assert_eq!(example, read(&dir("").join("outbound-v1.json")));
    let v = validate(&example, &ValidateOptions::default());
    assert!(v.flow.is_some(), "{}", report::render_text(&v.problems));
    let mut got: Vec<(String, String)> = v
        .problems
        .iter()
        .map(|p| (p.code.as_str().to_string(), p.path.clone()))
        .collect();
    got.sort();
    let side = sidecar(&dir("").join("outbound-v1.json")).expect("its sidecar");
    assert_eq!(got, expected(&side), "{}", report::render_text(&v.problems));
}

/// The JSON block of docs/flows.md that contains `needle`: exactly one must.
pub(crate) fn docs_flow_with(needle: &str) -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = fs::read_to_string(root.join("docs/flows.md")).unwrap();
    let blocks: Vec<&str> = docs
        .split("```json\n")
        .skip(1)
        .map(|b| &b[..b.find("```").expect("a closed block")])
        .filter(|b| b.contains(needle))
        .collect();
    assert_eq!(
        blocks.len(),
        1,
        "one json block of docs/flows.md has {needle}"
    );
    serde_json::from_str(blocks[0]).expect("the example parses")
}

/// The "not now" example of docs/flows.md (`signal.*`), whole: it waits for `intent:not_now`,
/// branches on `exists signal.resume_on` and waits `until` it, and validates without a single
/// problem.
#[test]
fn docs_not_now_example_is_valid() {
    let v = validate(
        &docs_flow_with("\"intent:not_now\""),
        &ValidateOptions::default(),
    );
    assert!(
        v.problems.is_empty(),
        "{}",
        report::render_text(&v.problems)
    );
    assert!(v.flow.is_some());
}
