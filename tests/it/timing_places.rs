//! Holidays and quiet hours by place (docs/timing.md, "Holiday calendars and quiet hours"), against oracles nudge shares no code with.
//!
//! `fixtures/timing/holiday_cases.jsonl` and `fixtures/timing/busdays.tsv` are written by
//! `scripts/gen_holiday_cases.py` from the Python `holidays` package, `numpy.busday_offset` /
//! `numpy.is_busday`, `zoneinfo` with a minute-by-minute window scan, and `phonenumbers`' zones,
//! regions and geocoding. The engine tests check what the journey says when a step waits for a
//! holiday or for quiet hours, and the version test that the shipped tables and their
//! generators' pins agree.

use crate::engine_support::{contact, flow_of, t, Driver};
use chrono::{Days, NaiveDate};
use nudge::engine::{Effect, Input, JourneyEntry};
use nudge::timing::question::{answer, error_answer};
use nudge::timing::{
    business_days::is_business_day, ClosedBy, Holidays, QuietHours, QuietHoursPolicy,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::OnceLock;

const CASES: &str = include_str!("../../fixtures/timing/holiday_cases.jsonl");
const BUSDAYS: &str = include_str!("../../fixtures/timing/busdays.tsv");

/// Compares an answer with a case: errors by code; otherwise `at`, the zones (each once, in
/// any order: the oracle lists libphonenumber's order, nudge its table's) and `rule`, which
/// must be present exactly when the oracle has it.
fn check(case: &Value) -> Result<(), String> {
    let got = match answer(&case["request"]) {
        Ok(v) => v,
        Err(e) => error_answer(&e),
    };
    let expect = &case["expect"];
    if let Some(code) = expect.pointer("/error/code") {
        return match got.pointer("/error/code") {
            Some(c) if c == code => Ok(()),
            _ => Err(format!("expected {code}, got {got}")),
        };
    }
    if got["at"] != expect["at"] || got.get("rule") != expect.get("rule") {
        return Err(format!("expected {expect}, got {got}"));
    }
    if let Some(zones) = expect.get("zones").and_then(Value::as_array) {
        let got_zones = got["zones"].as_array().cloned().unwrap_or_default();
        let set = |z: &[Value]| z.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>();
        if set(&got_zones) != set(zones) || got_zones.len() != zones.len() {
            return Err(format!("expected zones {zones:?}, got {got}"));
        }
    }
    Ok(())
}

#[test]
fn golden_place_cases_match_the_oracles() {
    let mut failures = Vec::new();
    let mut total = 0;
    for (i, line) in CASES
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let case: Value = serde_json::from_str(line).unwrap();
        total += 1;
        if let Err(why) = check(&case) {
            failures.push(format!("line {}: {} -> {why}", i + 1, case["request"]));
        }
    }
    for f in &failures {
        println!("{f}");
    }
    assert!(total >= 500, "only {total} cases");
    // The kinds of case the issue lists are all there.
    for needle in [
        "\"holidays\": [\"US\"]",
        "\"DE-BY\"",
        "\"GB-ENG\"",
        "\"+4915112345678\"",
        "\"country\": \"FR\"",
        "\"rule\": \"US-FL\"",
        "\"rule\": \"US-SD\"",
        "\"channel\": \"call\"",
        "\"+12125551234\"",
    ] {
        assert!(CASES.contains(needle), "no case with {needle}");
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed",
        failures.len()
    );
}

fn busdays() -> &'static Vec<(String, Vec<bool>)> {
    static ROWS: OnceLock<Vec<(String, Vec<bool>)>> = OnceLock::new();
    ROWS.get_or_init(|| {
        BUSDAYS
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (code, bits) = l.split_once('\t').unwrap();
                (code.to_string(), bits.bytes().map(|b| b == b'1').collect())
            })
            .collect()
    })
}

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(2020, 1, 1).unwrap()
}

/// Every day of 2020–2040 of every calendar in the fixture.
#[test]
fn business_days_equal_numpy_on_every_day() {
    for (code, bits) in busdays() {
        let h = Holidays::parse(&[code.as_str()]).unwrap();
        assert_eq!(bits.len(), 7671, "{code}");
        for (i, &expected) in bits.iter().enumerate() {
            let d = epoch() + Days::new(i as u64);
            assert_eq!(is_business_day(d, &h), expected, "{code} {d}");
        }
    }
}

proptest! {
    /// A day is a business day for a calendar iff the oracle's (numpy with the `holidays`
    /// package's dates) says so; and stepping one business day from it lands on the first
    /// later day the oracle marks.
    #[test]
    fn a_business_day_iff_the_oracle_says_so(row in 0usize..10, day in 0usize..7600) {
        let (code, bits) = &busdays()[row % busdays().len()];
        let h = Holidays::parse(&[code.as_str()]).unwrap();
        let d = epoch() + Days::new(day as u64);
        prop_assert_eq!(is_business_day(d, &h), bits[day], "{} {}", code, d);
        let next = (day + 1..bits.len()).find(|&i| bits[i]).unwrap();
        prop_assert_eq!(
            nudge::timing::add_business_days(d, 1, &h),
            epoch() + Days::new(next as u64)
        );
    }
}

/// docs/service.md; docs/timing.md, "Send windows": a window answer lists each zone once (a London window for a London mobile).
#[test]
fn window_zones_are_listed_once() {
    let got = answer(&json!({
        "now": "2026-12-23T10:00:00Z",
        "window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00", "tz": "Europe/London"},
        "channel": "sms", "contact": {"phone": "+447400123456"}
    }))
    .unwrap();
    assert_eq!(got["zones"], json!(["Europe/London"]));
}

/// The shipped tables, their generators and scripts/requirements.txt name the same releases,
/// so a refresh that bumps one pin and not the others (or a table edited by hand) fails here.
#[test]
fn shipped_tables_match_the_generators_pins() {
    fn pinned(script: &str) -> String {
        let line = script
            .lines()
            .find(|l| l.starts_with("PINNED = \""))
            .expect("a PINNED line");
        line.trim_start_matches("PINNED = \"")
            .trim_end_matches('"')
            .to_string()
    }
    fn required(package: &str) -> String {
        include_str!("../../scripts/requirements.txt")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{package}==")))
            .unwrap_or_else(|| panic!("{package} is not pinned in requirements.txt"))
            .to_string()
    }
    let phonenumbers = required("phonenumbers");
    assert_eq!(
        pinned(include_str!("../../scripts/gen_phone_zones.py")),
        phonenumbers
    );
    assert_eq!(
        pinned(include_str!("../../scripts/gen_phone_cases.py")),
        phonenumbers
    );
    let source = format!("phonenumbers=={phonenumbers} ");
    assert!(
        include_str!("../../src/timing/phone_zones.tsv").contains(&source),
        "phone_zones.tsv was not generated from phonenumbers {phonenumbers}: run scripts/refresh-phone-data.sh"
    );
    assert!(
        include_str!("../../src/timing/us_area_codes.tsv").contains(&source),
        "us_area_codes.tsv was not generated from phonenumbers {phonenumbers}: run scripts/refresh-phone-data.sh"
    );
    let holidays = required("holidays");
    assert_eq!(
        pinned(include_str!("../../scripts/gen_holidays.py")),
        holidays
    );
    assert_eq!(nudge::timing::holiday_calendars::data_version(), holidays);
    assert!(
        include_str!("../../scripts/gen_holiday_cases.py").contains(&format!(
            "\"holidays\": \"{holidays}\", \"phonenumbers\": \"{phonenumbers}\""
        ))
    );
}

// ---- the engine: what the journey says -----------------------------------------------------

fn call_flow(settings: Value) -> nudge::flow::Flow {
    flow_of(
        "c",
        settings,
        json!({
            "c": {"type": "call", "params": {}, "next": {"then": "e"}},
            "e": {"type": "end"}
        }),
    )
}

fn deferrals(
    d: &Driver,
) -> Vec<(
    chrono::DateTime<chrono::Utc>,
    Option<ClosedBy>,
    Option<String>,
)> {
    d.journey()
        .into_iter()
        .filter_map(|j| match j {
            JourneyEntry::Deferred {
                to, reason, rule, ..
            } => Some((to, reason, rule)),
            _ => None,
        })
        .collect()
}

/// docs/timing.md, "Holiday calendars and quiet hours": a call task is created only inside 08:00–21:00 in the number's zone (as SMS).
#[test]
fn call_tasks_keep_quiet_hours() {
    // 22:30 New York: the task waits for 08:00.
    let mut d = Driver::new(
        call_flow(json!({})),
        contact(None, Some("+12125551234"), None),
        "UTC",
    );
    d.apply(Input::Start, "2027-03-05T03:30:00Z");
    assert_eq!(d.run().scheduled, Some(t("2027-03-05T13:00:00Z")));
    assert_eq!(d.run().wait_reason, Some(ClosedBy::QuietHours));
    assert_eq!(d.run().rule, None);
    assert!(!d
        .effects
        .iter()
        .any(|e| matches!(e, Effect::TaskCreated(_))));
    d.wake();
    assert!(d
        .effects
        .iter()
        .any(|e| matches!(e, Effect::TaskCreated(_))));
}

/// Under `us_states` a Florida number's call at 20:30 waits for 08:00 and names `US-FL`, at
/// planning and at the execution-time re-check; a New York number's goes at once.
#[test]
fn us_states_names_the_rule_in_the_journey() {
    let us = QuietHours::policy(QuietHoursPolicy::UsStates);
    let mut fl = Driver::new(
        call_flow(json!({})),
        contact(None, Some("+13055551234"), None),
        "UTC",
    );
    fl.ctx.quiet_hours = us.clone();
    fl.apply(Input::Start, "2027-03-05T01:30:00Z"); // 20:30 EST
    assert_eq!(fl.run().scheduled, Some(t("2027-03-05T13:00:00Z")));
    assert_eq!(fl.run().wait_reason, Some(ClosedBy::QuietHours));
    assert_eq!(fl.run().rule.as_deref(), Some("US-FL"));

    let mut ny = Driver::new(
        call_flow(json!({})),
        contact(None, Some("+12125551234"), None),
        "UTC",
    );
    ny.ctx.quiet_hours = us.clone();
    ny.apply(Input::Start, "2027-03-05T01:30:00Z");
    assert!(
        ny.effects
            .iter()
            .any(|e| matches!(e, Effect::TaskCreated(_))),
        "New York: federal only"
    );

    // Planned under federal at 22:30 for 08:00; by then the account's override for Florida
    // opens at 09:00: the execution-time gate defers it and says why.
    let mut late = Driver::new(
        call_flow(json!({})),
        contact(None, Some("+13055551234"), None),
        "UTC",
    );
    late.apply(Input::Start, "2027-03-05T03:30:00Z");
    assert_eq!(late.run().scheduled, Some(t("2027-03-05T13:00:00Z")));
    assert_eq!(late.run().rule, None, "federal: no place rule");
    late.ctx.quiet_hours = QuietHours::from_json(&json!({"policy": "us_states", "overrides": [
        {"rule": "US-FL", "windows": [{"days": ["mon","tue","wed","thu","fri","sat","sun"], "from": "09:00", "to": "20:00"}]}
    ]}))
    .unwrap();
    late.wake();
    assert_eq!(
        deferrals(&late),
        vec![(
            t("2027-03-05T14:00:00Z"),
            Some(ClosedBy::QuietHours),
            Some("US-FL".into())
        )]
    );
    assert!(!late
        .effects
        .iter()
        .any(|e| matches!(e, Effect::TaskCreated(_))));
}

/// A send window closed for a holiday: the journey says `holiday`, not `send_window`; the
/// `contact` calendar comes from the contact's country, else its phone's region, else none
/// (said on the run).
#[test]
fn holiday_waits_say_holiday_and_contact_calendars_resolve() {
    let settings = json!({
        "send_window": {"days": ["mon","tue","wed","thu","fri"], "from": "09:00", "to": "17:00"},
        "holidays": ["contact"]
    });
    let email = |c| {
        let f = flow_of(
            "o",
            settings.clone(),
            json!({
                "o": {"type": "email", "params": {"template": "t"}, "next": {"then": "e"}},
                "e": {"type": "end"}
            }),
        );
        Driver::new(f, c, "UTC")
    };
    // Germany, 3 October 2028 is a Tuesday: German Unity Day.
    let mut de = email(contact(
        Some("Europe/Berlin"),
        Some("+4915112345678"),
        Some("a@b.c"),
    ));
    de.apply(Input::Start, "2028-10-03T08:00:00Z");
    assert_eq!(de.run().scheduled, Some(t("2028-10-04T07:00:00Z")));
    assert_eq!(de.run().wait_reason, Some(ClosedBy::Holiday));
    assert_eq!(de.run().contact_holidays.as_deref(), Some("DE"));
    // The same contact with `country: US` works that day.
    let mut us = contact(Some("Europe/Berlin"), Some("+4915112345678"), Some("a@b.c"));
    us.country = Some("US".into());
    let mut us = email(us);
    us.apply(Input::Start, "2028-10-03T08:00:00Z");
    assert_eq!(opened(&us).contact_holidays.as_deref(), Some("US"));
    assert_eq!(opened(&us).wait_reason, None);
    assert!(us.effects.iter().any(|e| matches!(e, Effect::Dispatch(_))));
    // No country, no phone: no holidays of its own, and the run says so.
    let mut none = email(contact(Some("Europe/Berlin"), None, Some("a@b.c")));
    none.apply(Input::Start, "2028-10-03T08:00:00Z");
    let note = opened(&none).contact_holidays.unwrap_or_default();
    assert!(
        note.starts_with("none:") && note.contains("no `country`"),
        "{note}"
    );
    // After hours is the send window, not a holiday.
    let mut evening = email(contact(
        Some("Europe/Berlin"),
        Some("+4915112345678"),
        Some("a@b.c"),
    ));
    evening.apply(Input::Start, "2028-10-02T17:00:00Z");
    assert_eq!(
        evening.run().wait_reason,
        Some(ClosedBy::Holiday),
        "Monday evening -> Tuesday is the holiday -> Wednesday"
    );
    let mut friday = email(contact(
        Some("Europe/Berlin"),
        Some("+4915112345678"),
        Some("a@b.c"),
    ));
    friday.apply(Input::Start, "2028-10-06T17:00:00Z");
    assert_eq!(friday.run().wait_reason, Some(ClosedBy::Window));
}

/// The first run as it was opened (the step may have finished since).
fn opened(d: &Driver) -> nudge::engine::Run {
    d.effects
        .iter()
        .find_map(|e| match e {
            Effect::RunOpened(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a run")
}

/// `nudge validate` warns about `contact` (a contact with neither country nor phone gets no
/// holidays of its own) and refuses unknown calendars with their path.
#[test]
fn validation_names_calendar_problems() {
    let doc = |holidays: Value| {
        json!({"name": "h", "start": "e", "settings": {"holidays": holidays},
               "steps": {"e": {"type": "end"}}})
    };
    let report = nudge::flow::validate(&doc(json!(["US", "contact"])), &Default::default());
    assert!(report.is_valid(), "a warning only: {:?}", report.problems);
    let warning = report
        .problems
        .iter()
        .find(|p| p.code == nudge::code::Code::ContactHolidays)
        .expect("a CONTACT_HOLIDAYS warning");
    assert_eq!(warning.path, "/settings/holidays/1");
    let report = nudge::flow::validate(&doc(json!(["US", "DE-XX", "us"])), &Default::default());
    let paths: Vec<&str> = report
        .problems
        .iter()
        .filter(|p| p.code == nudge::code::Code::BadSchema)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(paths, ["/settings/holidays/1", "/settings/holidays/2"]);
}
