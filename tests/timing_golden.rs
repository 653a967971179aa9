//! Golden cases for the timing core from independent oracles.
//!
//! `fixtures/timing/golden.jsonl` is written by `scripts/golden/gen_timing_golden.py` from code
//! nobody on this team wrote: the TC39 Temporal polyfill, numpy's business days, Python's
//! zoneinfo, `systemd-analyze calendar`, the `phonenumbers` package, a brute-force window scan
//! written in Python, and hand cases for SPEC §2.3a. Each line is a `nudge timing` request and the
//! answer the oracle gave; this test runs every request through [`answer`] and compares. Errors
//! compare by code only (messages are ours). Zones inferred from phone numbers may come back under
//! another tzdata name of the same zone: each case lists those names in `aliases`.

use nudge::timing::question::answer;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

const GOLDEN: &str = include_str!("../fixtures/timing/golden.jsonl");

/// Every answer-level field: a case fails on any difference.
fn check(case: &Value) -> Result<(), String> {
    let request = &case["request"];
    let expect = &case["expect"];
    let aliases = alias_map(case);
    let got = answer(request);
    if let Some(code) = expect.pointer("/error/code") {
        return match got {
            Err(e) if e.code.as_str() == code => Ok(()),
            Err(e) => Err(format!(
                "expected code {code}, got {} ({e})",
                e.code.as_str()
            )),
            Ok(v) => Err(format!("expected code {code}, got answer {v}")),
        };
    }
    let got = got.map_err(|e| format!("expected {expect}, got error {} ({e})", e.code.as_str()))?;
    let same = match (expect.get("at"), expect.get("e164")) {
        (Some(_), _) if request.get("window").is_some() => {
            got["at"] == expect["at"]
                && window_zones(&got, request, &aliases) == window_zones(expect, request, &aliases)
        }
        (Some(_), _) => {
            got["at"] == expect["at"]
                && got.get("past").unwrap_or(&Value::Bool(false))
                    == expect.get("past").unwrap_or(&Value::Bool(false))
                && got.as_object().map(|o| o.len()) == expect.as_object().map(|o| o.len())
        }
        (None, Some(_)) => {
            got["e164"] == expect["e164"]
                && zone_set(&got["zones"], &aliases) == zone_set(&expect["zones"], &aliases)
        }
        (None, None) => return Err(format!("a case with no known answer shape: {expect}")),
    };
    if same {
        Ok(())
    } else {
        Err(format!("expected {expect}, got {got}"))
    }
}

/// alias name -> the expected (canonical) name it stands for.
fn alias_map(case: &Value) -> HashMap<String, String> {
    let mut map = HashMap::new();
    if let Some(obj) = case.get("aliases").and_then(Value::as_object) {
        for (canonical, names) in obj {
            for n in names.as_array().into_iter().flatten() {
                map.insert(n.as_str().unwrap_or_default().to_owned(), canonical.clone());
            }
        }
    }
    map
}

fn canon(name: &Value, aliases: &HashMap<String, String>) -> String {
    let s = name.as_str().unwrap_or_default();
    aliases.get(s).cloned().unwrap_or_else(|| s.to_owned())
}

/// Phone candidates are a set (the oracle's order and links are not the product's business).
fn zone_set(zones: &Value, aliases: &HashMap<String, String>) -> Option<BTreeSet<String>> {
    zones
        .as_array()
        .map(|a| a.iter().map(|z| canon(z, aliases)).collect())
}

/// A window answer's zones: the send window's zone first (when there is a window), then the SMS
/// zones as a set.
fn window_zones(
    answer: &Value,
    request: &Value,
    aliases: &HashMap<String, String>,
) -> Option<(Option<String>, BTreeSet<String>)> {
    let zones = answer["zones"].as_array()?;
    let has_window = !request["window"].is_null();
    let (first, rest) = match (has_window, zones.split_first()) {
        (true, Some((w, rest))) => (Some(canon(w, aliases)), rest),
        (true, None) => return None,
        (false, _) => (None, zones.as_slice()),
    };
    Some((first, rest.iter().map(|z| canon(z, aliases)).collect()))
}

#[test]
fn golden_timing_cases_match_the_oracles() {
    let mut total = 0;
    let mut per_oracle: HashMap<String, (usize, usize)> = HashMap::new();
    let mut failures = Vec::new();
    for (i, line) in GOLDEN.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("golden.jsonl line {}: not JSON: {e}", i + 1));
        let oracle = case["oracle"].as_str().unwrap_or("?").to_owned();
        total += 1;
        let entry = per_oracle.entry(oracle.clone()).or_default();
        entry.0 += 1;
        if let Err(why) = check(&case) {
            entry.1 += 1;
            failures.push(format!(
                "line {} [{oracle}] {}\n    {why}",
                i + 1,
                case["request"]
            ));
        }
    }
    let mut oracles: Vec<_> = per_oracle.into_iter().collect();
    oracles.sort();
    for (oracle, (n, failed)) in &oracles {
        println!("  {oracle}: {n} cases, {failed} failed");
    }
    for f in &failures {
        println!("{f}");
    }
    println!(
        "golden: {} passed, {} failed",
        total - failures.len(),
        failures.len()
    );
    assert!(
        total >= 1000,
        "only {total} golden cases; expected at least 1000"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} golden cases failed (listed above)",
        failures.len()
    );
}
