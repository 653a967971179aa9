//! The pure-core commands through the real binary: `nudge validate`, `nudge timing` and
//! `nudge simulate` (no database). Expected answers come from the fixtures: the validator's
//! sidecars, the oracles' golden timing cases, the hand-derived simulation answers.

use crate::golden;
use nudge::engine::simulate::{simulate, Scenario};
use nudge::flow::{Flow, ValidateOptions};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const NUDGE: &str = env!("CARGO_BIN_EXE_nudge");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn nudge(args: &[&str]) -> Output {
    Command::new(NUDGE)
        .args(args)
        .current_dir(root())
        .output()
        .expect("run nudge")
}

fn nudge_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(NUDGE)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nudge");
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_string();
    // Write from another thread: the child's stdout pipe fills while we write.
    let writer = std::thread::spawn(move || input.write_all(text.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_out(out: &Output) -> Value {
    let text = stdout(out);
    assert_eq!(text.lines().count(), 1, "one line on stdout: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

// ---- nudge validate ----

#[test]
fn validate_a_valid_flow() {
    let quickstart = "fixtures/quickstart/outbound.json";
    let out = nudge(&["validate", quickstart]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), format!("{quickstart}: valid\n"));

    let out = nudge(&["validate", "--json", quickstart]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        json_out(&out),
        serde_json::json!({"valid": true, "problems": []})
    );

    // docs/flows.md's example is valid with two warnings: `meeting_booked` is in `exit_on` and in
    // `wait_reply`, and the exit always wins (docs/signals.md, "Routing"), so `end_booked` is never reached.
    let out = nudge(&["validate", "--json", "fixtures/flows/outbound-v1.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer = json_out(&out);
    assert_eq!(answer["valid"], true);
    let found: Vec<(&str, &str, &str)> = answer["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["severity"].as_str().unwrap(),
                p["code"].as_str().unwrap(),
                p["path"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "warning",
                "UNREACHABLE",
                "/steps/wait_reply/params/events/1"
            ),
            ("warning", "UNREACHABLE", "/steps/end_booked"),
        ]
    );
}

/// Every invalid fixture: exit 1 (0 for a warning-only one), and `--json` lists exactly the
/// (code, path) pairs of its sidecar.
#[test]
fn validate_each_invalid_fixture() {
    let dir = root().join("fixtures/flows/invalid");
    let mut flows: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.ends_with(".json") && !n.ends_with(".expect.json")
        })
        .collect();
    flows.sort();
    assert!(flows.len() >= 15, "{} fixtures", flows.len());
    for flow in flows {
        let side = read_json(&flow.with_extension("expect.json"));
        let path = flow.to_str().unwrap();
        let mut args = vec!["validate", "--json", path];
        let max_wait = side.get("max_wait").and_then(Value::as_str);
        if let Some(m) = max_wait {
            args.extend(["--max-wait", m]);
        }
        let out = nudge(&args);
        let answer = json_out(&out);
        let expected: BTreeSet<(String, String)> = side["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["code"].as_str().unwrap().into(),
                    e["path"].as_str().unwrap().into(),
                )
            })
            .collect();
        let got: BTreeSet<(String, String)> = answer["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["code"].as_str().unwrap().into(),
                    p["path"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(got, expected, "{path}");
        let only_warnings = answer["problems"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["severity"] == "warning");
        assert_eq!(answer["valid"], only_warnings, "{path}");
        assert_eq!(
            out.status.code(),
            Some(if only_warnings { 0 } else { 1 }),
            "{path}: {out:?}"
        );
        for p in answer["problems"].as_array().unwrap() {
            let keys: BTreeSet<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                BTreeSet::from(["code", "message", "path", "severity"])
            );
        }

        // Text mode: one `path: CODE: message` line per problem.
        let mut text_args = vec!["validate", path];
        if let Some(m) = max_wait {
            text_args.extend(["--max-wait", m]);
        }
        let text = stdout(&nudge(&text_args));
        for (code, ptr) in &expected {
            let ptr = if ptr.is_empty() { "/" } else { ptr };
            assert!(
                text.lines()
                    .any(|l| l.starts_with(&format!("{ptr}: ")) && l.contains(&format!("{code}: "))),
                "{path}: no line for {ptr} {code} in\n{text}"
            );
        }
    }
}

#[test]
fn max_wait_turns_a_valid_flow_invalid() {
    let flow = "fixtures/flows/invalid/wait_exceeds_limit.json";
    assert_eq!(nudge(&["validate", flow]).status.code(), Some(0));
    let out = nudge(&["validate", "--json", "--max-wait", "7d", flow]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let answer = json_out(&out);
    assert_eq!(answer["valid"], false);
    assert!(answer["problems"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["code"] == "WAIT_EXCEEDS_LIMIT"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not valid: 2 errors"), "{stderr}");
}

#[test]
fn a_bad_max_wait_is_a_usage_error() {
    let out = nudge(&[
        "validate",
        "--max-wait",
        "7D",
        "fixtures/flows/outbound-v1.json",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--max-wait") && stderr.contains("BAD_DURATION"),
        "{stderr}"
    );
}

#[test]
fn a_file_that_is_not_json_or_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("flow.json");
    std::fs::write(&bad, "{\"name\": \"x\",\n  oops}").unwrap();
    let out = nudge(&["validate", "--json", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let answer = json_out(&out);
    assert_eq!(answer["valid"], false);
    assert_eq!(answer["problems"][0]["code"], "BAD_SCHEMA");
    assert_eq!(answer["problems"][0]["path"], "");
    assert!(
        answer["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("line 2"),
        "{answer}"
    );

    let missing = dir.path().join("missing.json");
    let out = nudge(&["validate", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.json"), "{stderr}");
}

// ---- nudge timing ----

const GOLDEN: &str = include_str!("../../fixtures/timing/golden.jsonl");

/// Every golden case through one `nudge timing` process: the answers come back in order and
/// match the oracles; the refusals among them make the exit status 1.
#[test]
fn timing_answers_the_golden_cases_in_one_process() {
    let cases: Vec<Value> = GOLDEN
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() >= 1000, "{}", cases.len());
    let input: String = cases
        .iter()
        .map(|c| format!("{}\n", c["request"]))
        .collect();
    let out = nudge_with_stdin(&["timing"], &input);
    let text = stdout(&out);
    let answers: Vec<&str> = text.lines().collect();
    assert_eq!(answers.len(), cases.len());
    let mut failures = Vec::new();
    for (i, (case, line)) in cases.iter().zip(&answers).enumerate() {
        let got: Value = serde_json::from_str(line).unwrap();
        if let Err(why) = golden::compare(case, &got) {
            failures.push(format!("case {}: {}: {why}", i + 1, case["request"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let refused = cases
        .iter()
        .filter(|c| c["expect"].get("error").is_some())
        .count();
    assert!(refused > 0);
    assert_eq!(out.status.code(), Some(1), "refusals among the cases");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{refused} of {} requests were refused",
            cases.len()
        )),
        "{stderr}"
    );
}

#[test]
fn timing_goes_on_after_a_refusal_and_skips_blank_lines() {
    let input =
        "{\"now\":\"2026-03-06T16:00:00Z\",\"duration\":\"1bd\",\"tz\":\"America/New_York\"}\n\
                 \n\
                 {\"now\":\"2026-03-06T16:00:00Z\",\"duration\":\"1bd\",\"tz\":\"CET\"}\n\
                 not json\n\
                 {\"now\":\"2026-03-06T16:00:00Z\",\"phone\":\"+420601123456\"}\n";
    let out = nudge_with_stdin(&["timing"], input);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    // Friday 11:00 EST in New York + 1 business day = Monday 11:00 EDT (15:00Z): DST began on
    // Sunday 8 March, and business days keep the wall clock.
    assert_eq!(lines[0], serde_json::json!({"at": "2026-03-09T15:00:00Z"}));
    assert_eq!(lines[1]["error"]["code"], "BAD_TZ");
    assert_eq!(lines[2]["error"]["code"], "BAD_SCHEMA");
    assert_eq!(lines[3]["e164"], "+420601123456");
    assert_eq!(lines[3]["zones"], serde_json::json!(["Europe/Prague"]));

    let ok = nudge_with_stdin(
        &["timing"],
        "{\"now\":\"2026-03-06T16:00:00Z\",\"duration\":0}\n",
    );
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
}

// ---- nudge classify ----

/// Reply intent from the command line: one answer per line, in order; a line that is not a
/// request answers BAD_REQUEST and the next is still answered; exit 0.
#[test]
fn classify_answers_each_line_and_goes_on_after_a_bad_one() {
    let input = "{\"text\": \"Not now, try me again in Q3\", \"received_at\": \"2026-12-04T09:00:00Z\"}\n\
                 \n\
                 not json\n\
                 {\"text\": \"Bitte entfernen Sie mich aus Ihrem Verteiler.\"}\n\
                 {\"text\": \"hi\", \"tz\": \"Mars/Olympus\"}\n\
                 {\"text\": \"I'm not the right person, ask Jane Smith (jane@acme.com)\", \"from\": \"bob@acme.com\"}\n";
    let out = nudge_with_stdin(&["classify"], input);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(lines[0]["intent"], "not_now", "{text}");
    assert_eq!(lines[0]["resume_on"], "2027-07-01", "{text}");
    assert_eq!(lines[0]["language"], "en", "{text}");
    assert_eq!(lines[1]["error"]["code"], "BAD_REQUEST", "{text}");
    assert_eq!(lines[2]["intent"], "unsubscribe", "{text}");
    assert_eq!(lines[2]["language"], "de", "{text}");
    assert!(
        lines[2]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("entfernen")),
        "{text}"
    );
    assert_eq!(lines[3]["error"]["code"], "BAD_REQUEST", "{text}");
    assert!(
        lines[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`tz`"),
        "{text}"
    );
    assert_eq!(lines[4]["intent"], "wrong_person", "{text}");
    assert_eq!(
        lines[4]["referral"],
        serde_json::json!({"email": "jane@acme.com", "name": "Jane Smith"}),
        "{text}"
    );
}

// ---- nudge simulate ----

const EXACT: &str = "fixtures/scenarios/outbound-v1-nojitter.flow.json";
const EXAMPLE_FLOW: &str = "fixtures/flows/outbound-v1.json";

/// The hand-derived answers (cross-checked by `fixtures/scenarios/expected_instants.py`).
#[test]
fn simulate_matches_the_expected_answers() {
    for name in ["holidays-reply", "after-hours-pause"] {
        let scenario = format!("fixtures/scenarios/{name}.json");
        let out = nudge(&["simulate", EXACT, &scenario, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        let expected = read_json(&root().join(format!("fixtures/scenarios/{name}.expected.json")));
        assert_eq!(json_out(&out), expected, "{name}");
    }
}

/// The other scenarios: the command prints exactly what the interpreter answers.
#[test]
fn simulate_prints_the_interpreters_answer() {
    for (flow, name) in [
        (EXACT, "holidays-early-reply"),
        (EXACT, "holidays-booked"),
        (EXACT, "dst-horizon"),
        (EXAMPLE_FLOW, "call-after-timeout"),
    ] {
        let scenario_path = format!("fixtures/scenarios/{name}.json");
        let out = nudge(&["simulate", flow, &scenario_path, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        let flow =
            Flow::from_json(&read_json(&root().join(flow)), &ValidateOptions::default()).unwrap();
        let scenario: Scenario =
            serde_json::from_value(read_json(&root().join(&scenario_path))).unwrap();
        let direct = serde_json::to_value(simulate(&flow, &scenario).unwrap()).unwrap();
        assert_eq!(json_out(&out), direct, "{name}");
    }
}

#[test]
fn simulate_prints_a_table_by_default() {
    let out = nudge(&["simulate", EXACT, "fixtures/scenarios/holidays-reply.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.starts_with("state: completed  outcome: replied\n"),
        "{text}"
    );
    for step in ["email_1", "wait_2d", "sms_1", "wait_reply", "end_replied"] {
        assert!(text.contains(step), "{step} in\n{text}");
    }
}

/// Flags override the scenario: a later start and another zone move every instant.
#[test]
fn simulate_flags_override_the_scenario() {
    let out = nudge(&[
        "simulate",
        EXACT,
        "--json",
        "--start",
        "2026-12-22T14:30:00Z",
        "--horizon",
        "2026-12-23T00:00:00Z",
        "--contact-tz",
        "America/New_York",
        "--input",
        r#"{"demo_at": "2026-12-10T15:00:00Z", "nudge_ms": 60000}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer = json_out(&out);
    assert_eq!(answer["state"], "active");
    assert_eq!(answer["runs"][0]["step"], "email_1");
    assert_eq!(answer["runs"][0]["entered"], "2026-12-22T14:30:00Z");
    // The 2bd wait from Tuesday 22 December skips the 24th and 25th and the weekend.
    assert_eq!(answer["runs"][1]["until"], "2026-12-28T14:30:00Z");

    let out = nudge(&["simulate", EXACT, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--start"));
}

#[test]
fn simulate_refuses_an_invalid_flow_and_a_bad_scenario() {
    let out = nudge(&[
        "simulate",
        "fixtures/flows/invalid/bad_tz.json",
        "fixtures/scenarios/holidays-reply.json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/steps/a/params/tz: BAD_TZ"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("scenario.json");
    std::fs::write(
        &bad,
        r#"{"start": "2026-12-22T14:30:00Z", "horizon": "2027-01-31T00:00:00Z",
            "script": [{"at": "2026-12-23T10:00:00Z", "kind": "reply", "chanel": "email"}]}"#,
    )
    .unwrap();
    let out = nudge(&["simulate", EXACT, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("script[0]") && stderr.contains("channel"),
        "{stderr}"
    );

    std::fs::write(
        &bad,
        r#"{"start": "2026-12-22T14:30:00Z", "horizon": "2027-01-31T00:00:00Z", "contact": {"tz": "CET"}}"#,
    )
    .unwrap();
    let out = nudge(&["simulate", EXACT, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("BAD_TZ") && stderr.contains("CET"),
        "{stderr}"
    );
}
