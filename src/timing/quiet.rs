//! Quiet-hours policies (docs/timing.md, "Holiday calendars and quiet hours"): which hours SMS and calls may reach a number.
//!
//! The floor is federal: 08:00–21:00 in every candidate zone of the number, every day (docs/timing.md, "Send windows";
//! [`crate::timing::window::SMS_FROM`]). The `us_states` policy adds the shipped table of
//! stricter US state rules (`us_states.json`, each row with the statute it comes from),
//! chosen by the number's area code (`us_area_codes.tsv`, from libphonenumber's geocoding data,
//! see `scripts/gen_phone_zones.py`). An account may override rows by `rule` name, or add rows
//! for states the table lacks. A rule only ever narrows: the windows that apply are intersected,
//! so the strictest rule wins and the federal floor always holds.
//!
//! The table is data to review with counsel, not legal advice (`docs/timing.md`).

use crate::code::Code;
use crate::timing::error::TimingError;
use crate::timing::holiday_calendars;
use crate::timing::holidays::Holidays;
use chrono::NaiveTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

const TABLE: &str = include_str!("us_states.json");
const AREA_CODES: &str = include_str!("us_area_codes.tsv");
const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// The named policies an account (or, until accounts carry it, the server flag) picks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuietHoursPolicy {
    /// 08:00–21:00 in every candidate zone: the federal rule, and the default.
    #[default]
    Federal,
    /// The federal rule plus the shipped table of stricter US state rules, by area code.
    UsStates,
}

impl QuietHoursPolicy {
    /// Every policy.
    pub const ALL: [QuietHoursPolicy; 2] = [QuietHoursPolicy::Federal, QuietHoursPolicy::UsStates];

    /// The wire spelling: `federal`, `us_states`.
    pub fn as_str(self) -> &'static str {
        match self {
            QuietHoursPolicy::Federal => "federal",
            QuietHoursPolicy::UsStates => "us_states",
        }
    }
}

impl fmt::Display for QuietHoursPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for QuietHoursPolicy {
    type Err = TimingError;

    fn from_str(text: &str) -> Result<Self, TimingError> {
        QuietHoursPolicy::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| {
                TimingError::new(
                    Code::BadSchema,
                    text,
                    None,
                    format!("`{text}` is not a quiet-hours policy: use `federal` (08:00–21:00, the default) or `us_states` (stricter US state rules by area code)"),
                )
            })
    }
}

/// One daily window of a place rule: the listed weekdays, `from`..`to` local time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleWindow {
    /// Three-letter weekdays, lower case.
    pub days: Vec<String>,
    /// `HH:MM`, inclusive.
    pub from: String,
    /// `HH:MM`, exclusive; after `from`.
    pub to: String,
}

/// A row of the state table, or an account's override of one: when calls and texts may reach
/// a number of that place. A weekday in no window is a no-call day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleRow {
    /// `US-FL`: `US-` and the state's USPS code. What the journey and `nudge timing` name.
    pub rule: String,
    /// The open hours, per weekday.
    pub windows: Vec<RuleWindow>,
    /// Closed on the state's public holidays too (its `US-XX` holiday calendar).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_call_holidays: bool,
    /// Where the row comes from (a statute, or the account's counsel).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// An account's quiet-hours setting: `{"policy": "federal"|"us_states", "overrides": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuietHours {
    /// The policy.
    pub policy: QuietHoursPolicy,
    /// Rows that replace the shipped row of the same `rule`, or add one (`us_states` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<RuleRow>,
}

/// A problem in a quiet-hours setting, at a JSON Pointer into it (`/overrides/0/windows/1/to`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuietProblem {
    /// Where, as a JSON Pointer from the setting's root.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// A rule compiled for the window arithmetic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceRule {
    /// `US-FL`.
    pub rule: String,
    /// Open hours per weekday, Monday first; `None` is a no-call day.
    pub hours: [Option<(NaiveTime, NaiveTime)>; 7],
    /// No-call dates (the state's holidays when the row says so; else empty).
    pub no_call: Holidays,
}

impl QuietHours {
    /// The default: the federal rule alone.
    pub fn federal() -> QuietHours {
        QuietHours::default()
    }

    /// A policy without overrides.
    pub fn policy(policy: QuietHoursPolicy) -> QuietHours {
        QuietHours {
            policy,
            overrides: Vec::new(),
        }
    }

    /// Reads the setting from JSON, reporting every problem with its path.
    pub fn from_json(v: &Value) -> Result<QuietHours, Vec<QuietProblem>> {
        let shape = |path: &str, e: serde_json::Error| {
            QuietProblem {
            path: path.to_string(),
            message: format!(
                "{e}: write {{\"policy\": \"federal\"|\"us_states\", \"overrides\": [{{\"rule\": \"US-FL\", \"windows\": [{{\"days\": [\"mon\"], \"from\": \"08:00\", \"to\": \"20:00\"}}]}}]}}"
            ),
        }
        };
        let Some(obj) = v.as_object() else {
            return Err(vec![shape("", serde::de::Error::custom("not an object"))]);
        };
        let mut problems = Vec::new();
        for key in obj.keys().filter(|k| *k != "policy" && *k != "overrides") {
            problems.push(QuietProblem {
                path: format!("/{key}"),
                message: format!(
                    "`{key}` is not a field of `quiet_hours`: use `policy` and `overrides`"
                ),
            });
        }
        let policy = match obj.get("policy") {
            None => QuietHoursPolicy::Federal,
            Some(Value::String(s)) => match s.parse() {
                Ok(p) => p,
                Err(e) => {
                    problems.push(QuietProblem {
                        path: "/policy".into(),
                        message: TimingError::message(&e),
                    });
                    QuietHoursPolicy::Federal
                }
            },
            Some(other) => {
                problems.push(QuietProblem {
                    path: "/policy".into(),
                    message: format!("`policy` is a string, `federal` or `us_states`, not {other}"),
                });
                QuietHoursPolicy::Federal
            }
        };
        let mut overrides = Vec::new();
        match obj.get("overrides") {
            None | Some(Value::Null) => {}
            Some(Value::Array(rows)) => {
                for (i, row) in rows.iter().enumerate() {
                    match serde_json::from_value::<RuleRow>(row.clone()) {
                        Ok(r) => overrides.push(r),
                        Err(e) => problems.push(shape(&format!("/overrides/{i}"), e)),
                    }
                }
            }
            Some(_) => problems.push(QuietProblem {
                path: "/overrides".into(),
                message: "`overrides` is a list of rows such as {\"rule\": \"US-FL\", \"windows\": [...]}".into(),
            }),
        }
        let out = QuietHours { policy, overrides };
        problems.extend(out.validate());
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(problems)
        }
    }

    /// Every problem of the overrides, with its path: a rule name that is not `US-` and a
    /// state, a rule overridden twice, a window with no or unknown days, a bad time of day,
    /// `from` not before `to`, a weekday in two windows.
    pub fn validate(&self) -> Vec<QuietProblem> {
        let mut problems = Vec::new();
        for (i, row) in self.overrides.iter().enumerate() {
            let at = format!("/overrides/{i}");
            if self.overrides[..i].iter().any(|r| r.rule == row.rule) {
                problems.push(QuietProblem {
                    path: format!("{at}/rule"),
                    message: format!("`{}` is overridden twice: keep one row per rule", row.rule),
                });
            }
            if let Err(e) = compile(row) {
                problems.push(QuietProblem {
                    path: format!("{at}{}", e.path),
                    message: e.message,
                });
            }
        }
        problems
    }

    /// The place rule that applies to `e164` under this policy, if any: the row of the
    /// number's US state (by area code), the account's override first. `None` under `federal`,
    /// for a number outside the US, and for a state without a row.
    pub fn place_rule(&self, e164: &str) -> Option<Arc<PlaceRule>> {
        if self.policy != QuietHoursPolicy::UsStates {
            return None;
        }
        let state = state_of(e164)?;
        let rule = format!("US-{state}");
        if let Some(row) = self.overrides.iter().find(|r| r.rule == rule) {
            return compile(row).ok().map(Arc::new);
        }
        shipped().get(rule.as_str()).cloned()
    }
}

/// The shipped rows, as data (for docs and tests).
pub fn shipped_rows() -> &'static [RuleRow] {
    static ROWS: OnceLock<Vec<RuleRow>> = OnceLock::new();
    ROWS.get_or_init(|| serde_json::from_str(TABLE).unwrap_or_default())
}

fn shipped() -> &'static HashMap<&'static str, Arc<PlaceRule>> {
    static RULES: OnceLock<HashMap<&'static str, Arc<PlaceRule>>> = OnceLock::new();
    RULES.get_or_init(|| {
        shipped_rows()
            .iter()
            .filter_map(|row| Some((row.rule.as_str(), Arc::new(compile(row).ok()?))))
            .collect()
    })
}

/// The US state (USPS code) of a `+1` number's area code, from libphonenumber's geocoding data.
pub fn state_of(e164: &str) -> Option<&'static str> {
    static CODES: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        AREA_CODES
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                (f.next()? == "A").then_some(())?;
                Some((f.next()?, f.next()?))
            })
            .collect()
    });
    let npa = e164.strip_prefix("+1")?.get(..3)?;
    codes.get(npa).copied()
}

fn compile(row: &RuleRow) -> Result<PlaceRule, QuietProblem> {
    let problem = |path: String, message: String| QuietProblem { path, message };
    let state = row.rule.strip_prefix("US-").unwrap_or("");
    if state.len() != 2 || !holiday_calendars::is_calendar(&row.rule) {
        return Err(problem(
            "/rule".into(),
            format!(
                "`{}` is not a US state rule: write `US-` and the state's code, e.g. `US-FL`",
                row.rule
            ),
        ));
    }
    let mut hours = [None; 7];
    for (w, window) in row.windows.iter().enumerate() {
        let at = format!("/windows/{w}");
        if window.days.is_empty() {
            return Err(problem(
                format!("{at}/days"),
                "list at least one weekday, e.g. [\"mon\"]".into(),
            ));
        }
        let time = |name: &str, text: &str| {
            NaiveTime::parse_from_str(text, "%H:%M")
                .ok()
                .filter(|_| text.len() == 5)
                .ok_or_else(|| {
                    problem(
                        format!("{at}/{name}"),
                        format!("`{text}` is not a time of day: write `HH:MM`, e.g. \"08:00\""),
                    )
                })
        };
        let (from, to) = (time("from", &window.from)?, time("to", &window.to)?);
        if from >= to {
            return Err(problem(
                format!("{at}/to"),
                format!(
                    "`to` ({}) must be after `from` ({}) on the same day",
                    window.to, window.from
                ),
            ));
        }
        for (d, day) in window.days.iter().enumerate() {
            let Some(i) = WEEKDAYS.iter().position(|x| x == day) else {
                return Err(problem(
                    format!("{at}/days/{d}"),
                    format!("`{day}` is not a weekday: use mon, tue, wed, thu, fri, sat, sun"),
                ));
            };
            if hours[i].is_some() {
                return Err(problem(
                    format!("{at}/days/{d}"),
                    format!("`{day}` is in two windows: give each weekday one window"),
                ));
            }
            hours[i] = Some((from, to));
        }
    }
    let no_call = if row.no_call_holidays {
        Holidays::parse(&[row.rule.as_str()]).unwrap_or_default()
    } else {
        Holidays::none()
    };
    Ok(PlaceRule {
        rule: row.rule.clone(),
        hours,
        no_call,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shipped_table_compiles_and_names_its_sources() {
        let rows = shipped_rows();
        assert!(rows.len() >= 10);
        for row in rows {
            let rule = compile(row).unwrap_or_else(|e| panic!("{}: {e:?}", row.rule));
            assert!(!row.source.is_empty(), "{} has no source", row.rule);
            // Never looser than the federal floor.
            for (from, to) in rule.hours.iter().flatten() {
                assert!(*from >= NaiveTime::from_hms_opt(8, 0, 0).unwrap());
                assert!(*to <= NaiveTime::from_hms_opt(21, 0, 0).unwrap());
            }
        }
        assert_eq!(shipped().len(), rows.len());
        for state in ["FL", "OK", "MD"] {
            let r = &shipped()[format!("US-{state}").as_str()];
            assert_eq!(
                r.hours[0].unwrap().1,
                NaiveTime::from_hms_opt(20, 0, 0).unwrap()
            );
        }
    }

    #[test]
    fn area_codes_pick_the_state() {
        assert_eq!(state_of("+13055551234"), Some("FL"));
        assert_eq!(state_of("+18505551234"), Some("FL"));
        assert_eq!(state_of("+12125551234"), Some("NY"));
        assert_eq!(state_of("+14165550123"), None); // Toronto
        assert_eq!(state_of("+442079460958"), None);
        let us = QuietHours::policy(QuietHoursPolicy::UsStates);
        assert_eq!(us.place_rule("+13055551234").unwrap().rule, "US-FL");
        assert!(us.place_rule("+12125551234").is_none()); // New York: the federal floor
        assert!(QuietHours::federal().place_rule("+13055551234").is_none());
    }

    #[test]
    fn overrides_replace_or_add_rows() {
        let q = QuietHours::from_json(&json!({"policy": "us_states", "overrides": [
            {"rule": "US-FL", "windows": [{"days": ["mon","tue","wed","thu","fri"], "from": "10:00", "to": "18:00"}]},
            {"rule": "US-NY", "windows": [{"days": ["mon"], "from": "09:00", "to": "17:00"}], "no_call_holidays": true, "source": "counsel, 2026-11"}
        ]}))
        .unwrap();
        let fl = q.place_rule("+13055551234").unwrap();
        assert_eq!(fl.hours[5], None);
        assert_eq!(
            fl.hours[0].unwrap().0,
            NaiveTime::from_hms_opt(10, 0, 0).unwrap()
        );
        let ny = q.place_rule("+12125551234").unwrap();
        assert_eq!(ny.rule, "US-NY");
        assert!(!ny.no_call.is_empty());
        // The JSON round-trips (the account stores it as this JSON).
        let back: QuietHours = serde_json::from_value(serde_json::to_value(&q).unwrap()).unwrap();
        assert_eq!(back, q);
    }

    #[test]
    fn bad_settings_name_the_path() {
        let paths = |v: Value| -> Vec<String> {
            QuietHours::from_json(&v)
                .unwrap_err()
                .into_iter()
                .map(|p| p.path)
                .collect()
        };
        assert_eq!(paths(json!({"policy": "strict"})), ["/policy"]);
        let msg = &QuietHours::from_json(&json!({"policy": "strict"})).unwrap_err()[0].message;
        assert!(msg.contains("`us_states`"), "{msg}");
        assert_eq!(paths(json!({"policy": "federal", "extra": 1})), ["/extra"]);
        assert_eq!(
            paths(json!({"policy": "us_states", "overrides": [
                {"rule": "FL", "windows": []},
                {"rule": "US-FL", "windows": [{"days": ["mon"], "from": "20:00", "to": "08:00"}]},
                {"rule": "US-TX", "windows": [{"days": ["mon", "funday"], "from": "08:00", "to": "20:00"}]},
                {"rule": "US-OK", "windows": [{"days": ["mon"], "from": "8am", "to": "20:00"}]},
                {"rule": "US-MD", "windows": [{"days": ["mon"], "from": "08:00", "to": "20:00"}, {"days": ["mon"], "from": "09:00", "to": "10:00"}]},
                {"rule": "US-MD", "windows": []},
                {"rule": "US-WA", "windows": [], "colour": "red"}
            ]})),
            [
                "/overrides/6",
                "/overrides/0/rule",
                "/overrides/1/windows/0/to",
                "/overrides/2/windows/0/days/1",
                "/overrides/3/windows/0/from",
                "/overrides/4/windows/1/days/0",
                "/overrides/5/rule",
            ]
        );
        assert_eq!(
            "us_states".parse::<QuietHoursPolicy>().unwrap(),
            QuietHoursPolicy::UsStates
        );
        assert_eq!(
            "US_STATES".parse::<QuietHoursPolicy>().unwrap_err().code,
            Code::BadSchema
        );
    }
}
