//! Golden cases for the timing core from independent oracles.
//!
//! `fixtures/timing/golden.jsonl` is written by `scripts/golden/gen_timing_golden.py` from code
//! nobody on this team wrote: the TC39 Temporal polyfill, numpy's business days, Python's
//! zoneinfo, `systemd-analyze calendar`, the `phonenumbers` package, a brute-force window scan
//! written in Python, and hand cases for docs/timing.md, "Daylight-saving changes". Each line is a `nudge timing` request and the
//! answer the oracle gave; this test runs every request through [`answer`] and compares. Errors
//! compare by code only (messages are ours). Zones inferred from phone numbers may come back under
//! another tzdata name of the same zone: each case lists those names in `aliases`.

use crate::golden;
use nudge::timing::question::{answer, error_answer};
use serde_json::Value;
use std::collections::HashMap;

const GOLDEN: &str = include_str!("../../fixtures/timing/golden.jsonl");

/// Every answer-level field: a case fails on any difference.
fn check(case: &Value) -> Result<(), String> {
    let got = match answer(&case["request"]) {
        Ok(v) => v,
        Err(e) => error_answer(&e),
    };
    golden::compare(case, &got)
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
