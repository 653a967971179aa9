//! `nudge.v1.TimingService`: `Resolve` and `Simulate`, answered in memory.
//!
//! `Resolve` turns the typed request into the JSON request of `nudge timing` and answers it with
//! [`crate::timing::question::answer`], so the CLI and the API share one implementation of the
//! semantics. Before that, each field is parsed by the timing core's own parser under its field
//! name, so a refusal names the field (and every bad field is reported at once).

use super::auth::principal;
use super::convert::timestamp;
use crate::api::AppState;
use crate::code::Code;
use crate::engine::simulate::{Answer, Timeline};
use crate::proto::v1::resolve_request::Question;
use crate::proto::v1::simulate_request::Flow as FlowChoice;
use crate::proto::v1::timing_service_server::TimingService;
use crate::proto::v1::*;
use crate::service::simulate::{self, FlowSource};
use crate::service::{accounts, contacts, ServiceError, Violation, Violations};
use crate::timing::question::answer;
use crate::timing::{
    phone_zones, Duration, Holidays, SendWindow as CoreWindow, TimingError, Until, Zone,
};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{json, Map, Value};
use tonic::{Request, Response, Status};

pub struct TimingApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl TimingService for TimingApi {
    async fn resolve(
        &self,
        request: Request<ResolveRequest>,
    ) -> Result<Response<ResolveResponse>, Status> {
        let who = principal(&request)?;
        let mut req = request.into_inner();
        // A stored contact stands in for the recipient's zone and phone.
        if let Some(contact) = req.contact.as_mut() {
            if !contact.contact_id.is_empty() {
                if !contact.tz.is_empty()
                    || !contact.phone.is_empty()
                    || !contact.country.is_empty()
                {
                    return Err(ServiceError::Invalid(vec![Violation::new(
                        "contact.contact_id",
                        Code::BadSchema,
                        "give either `contact_id` (a stored contact) or `tz`/`phone`/`country`, not both",
                    )])
                    .into());
                }
                let stored =
                    contacts::get(&self.state.core, &who.account_id, &contact.contact_id).await?;
                contact.tz = stored.tz.unwrap_or_default();
                contact.phone = stored.phone.unwrap_or_default();
                contact.country = stored.country.unwrap_or_default();
            }
        }
        let now = match &req.now {
            Some(t) => instant("now", t)?,
            None => self.state.core.clock.now(),
        };
        // The policy execution would use when the question names none.
        let default_quiet = match accounts::get(&self.state.core, &who.account_id)
            .await?
            .quiet_hours
        {
            Some(stored) => stored,
            None => serde_json::to_value(&*self.state.core.quiet_hours)
                .map_err(|e| internal(format!("the server's quiet hours as JSON: {e}")))?,
        };
        let (question, json) = to_json(&req, now, default_quiet)?;
        let answer = answer(&json)
            .map_err(|e| ServiceError::Invalid(vec![violation(refused_field(question, &e), e)]))?;
        Ok(Response::new(from_answer(&answer)?))
    }

    async fn simulate(
        &self,
        request: Request<SimulateRequest>,
    ) -> Result<Response<SimulateResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let source = match req.flow {
            Some(FlowChoice::Definition(text)) => FlowSource::Definition(text),
            Some(FlowChoice::Stored(r)) => FlowSource::Stored {
                id: r.id,
                version: r.version,
            },
            None => {
                return Err(ServiceError::Invalid(vec![Violation::new(
                    "flow",
                    Code::BadSchema,
                    "give the flow: `definition` (JSON text) or `stored` (a stored flow's id and version)",
                )])
                .into())
            }
        };
        let answer =
            simulate::simulate(&self.state.core, &who.account_id, source, &req.scenario).await?;
        match answer {
            Answer::Single(timeline) => Ok(Response::new(simulate_response(&timeline)?)),
            // A campaign's answer is docs/service.md's `{"enrollments": [...]}`, in `timeline`.
            Answer::Campaign(campaign) => Ok(Response::new(SimulateResponse {
                timeline: serde_json::to_string(&campaign)
                    .map_err(|e| internal(format!("serializing a campaign: {e}")))?,
                ..Default::default()
            })),
        }
    }
}

/// The question's field name and the `nudge timing` request for it, after every field has
/// passed its parser.
fn to_json(
    req: &ResolveRequest,
    now: DateTime<Utc>,
    default_quiet: Value,
) -> Result<(&'static str, Value), ServiceError> {
    let mut problems = Violations::default();
    let mut obj = Map::new();
    obj.insert("now".into(), Value::String(instant_text(now)));
    let question = match &req.question {
        None => {
            problems.push(Violation::new(
                "question",
                Code::BadSchema,
                "the request asks nothing: set exactly one of `duration`, `duration_ms`, `until`, `window`, `no_window`, `phone`",
            ));
            ""
        }
        Some(Question::Duration(text)) => {
            let v = json!(text);
            check(&mut problems, "duration", Duration::from_json(&v));
            obj.insert("duration".into(), v);
            "duration"
        }
        Some(Question::DurationMs(ms)) => {
            obj.insert("duration".into(), json!(ms));
            "duration_ms"
        }
        Some(Question::Until(text)) => {
            check(&mut problems, "until", Until::parse(text));
            obj.insert("until".into(), json!(text));
            "until"
        }
        Some(Question::Window(w)) => {
            let mut window = json!({ "days": w.days, "from": w.r#from, "to": w.to });
            if !w.tz.is_empty() {
                window["tz"] = json!(w.tz);
            }
            check(&mut problems, "window", CoreWindow::from_json(&window));
            obj.insert("window".into(), window);
            "window"
        }
        Some(Question::NoWindow(yes)) => {
            if !yes {
                problems.push(Violation::new(
                    "no_window",
                    Code::BadSchema,
                    "`no_window` asks the window question without a send window: set it to true, or set `window`",
                ));
            }
            obj.insert("window".into(), Value::Null);
            "no_window"
        }
        Some(Question::Phone(text)) => {
            check(&mut problems, "phone", phone_zones(text));
            obj.insert("phone".into(), json!(text));
            "phone"
        }
    };
    let is_window = matches!(question, "window" | "no_window");
    let takes_tz = matches!(question, "duration" | "duration_ms" | "until");
    // A field the question takes is parsed and goes into the request; one it does not take is
    // refused (and not parsed: one violation per field).
    let extra = |problems: &mut Violations, field: &str, allowed: bool| {
        if !allowed && !question.is_empty() {
            problems.push(Violation::new(
                field,
                Code::BadSchema,
                format!("`{field}` is not a field of the `{question}` question: remove it"),
            ));
        }
        allowed
    };
    if !req.tz.is_empty() && extra(&mut problems, "tz", takes_tz) {
        check(&mut problems, "tz", Zone::parse(&req.tz));
        obj.insert("tz".into(), json!(req.tz));
    }
    if !req.holidays.is_empty() && extra(&mut problems, "holidays", question != "phone") {
        check(&mut problems, "holidays", Holidays::parse(&req.holidays));
        obj.insert("holidays".into(), json!(req.holidays));
    }
    if !req.channel.is_empty() && extra(&mut problems, "channel", is_window) {
        if !["email", "sms", "call", "linkedin"].contains(&req.channel.as_str()) {
            problems.push(Violation::new(
                "channel",
                Code::BadSchema,
                format!(
                    "{} is not a channel: use `email` (the default), `sms`, `call` or `linkedin`",
                    crate::quote::quote(&req.channel)
                ),
            ));
        }
        obj.insert("channel".into(), json!(req.channel));
    }
    if !req.sender_tz.is_empty() && extra(&mut problems, "sender_tz", is_window) {
        check(&mut problems, "sender_tz", Zone::parse(&req.sender_tz));
        obj.insert("sender_tz".into(), json!(req.sender_tz));
    }
    if let Some(c) = &req.contact {
        if extra(&mut problems, "contact", is_window) {
            let mut contact = Map::new();
            if !c.tz.is_empty() {
                check(&mut problems, "contact.tz", Zone::parse(&c.tz));
                contact.insert("tz".into(), json!(c.tz));
            }
            if !c.phone.is_empty() {
                contact.insert("phone".into(), json!(c.phone));
            }
            if !c.country.is_empty() {
                if !crate::timing::holiday_calendars::is_country(&c.country) {
                    problems.push(Violation::new(
                        "contact.country",
                        Code::BadSchema,
                        format!(
                            "{} is not a country nudge has calendars for: use an ISO 3166-1 alpha-2 code in upper case, such as `DE`",
                            crate::quote::quote(&c.country)
                        ),
                    ));
                }
                contact.insert("country".into(), json!(c.country));
            }
            obj.insert("contact".into(), Value::Object(contact));
        }
    }
    if !req.quiet_hours.is_empty() && extra(&mut problems, "quiet_hours", is_window) {
        match quiet_hours(&req.quiet_hours) {
            Ok(v) => {
                obj.insert("quiet_hours".into(), v);
            }
            Err(message) => problems.push(Violation::new("quiet_hours", Code::BadSchema, message)),
        }
    } else if is_window {
        obj.insert("quiet_hours".into(), default_quiet);
    }
    problems.finish()?;
    Ok((question, Value::Object(obj)))
}

/// A request's `quiet_hours`: a policy's name, or a policy with overrides as JSON text, checked
/// by the timing core's own parser (what execution would run).
fn quiet_hours(text: &str) -> Result<Value, String> {
    use crate::timing::{QuietHours, QuietHoursPolicy};
    if text.trim_start().starts_with('{') {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("`quiet_hours` is not JSON: {e}"))?;
        QuietHours::from_json(&v).map_err(|problems| {
            let first = &problems[0];
            format!("`quiet_hours{}`: {}", first.path, first.message)
        })?;
        Ok(v)
    } else {
        text.parse::<QuietHoursPolicy>().map_err(|e| e.hint)?;
        Ok(Value::String(text.to_string()))
    }
}

fn check<T>(problems: &mut Violations, field: &str, result: Result<T, TimingError>) {
    if let Err(e) = result {
        problems.push(violation(field, e));
    }
}

/// A timing refusal as a field violation: the message quotes the text, its position and the
/// hint, as `nudge timing` does.
fn violation(field: &str, e: TimingError) -> Violation {
    let message = match crate::timing::question::error_answer(&e)["error"]["message"].as_str() {
        Some(m) => m.to_string(),
        None => e.hint.clone(),
    };
    Violation::new(field, e.code, message)
}

/// The field a refusal of the core (after every field parsed) concerns: the recipient for a
/// zone or phone problem of the window question, else the question itself.
fn refused_field(question: &'static str, e: &TimingError) -> &'static str {
    match (question, e.code) {
        ("window" | "no_window", Code::BadPhone) => "contact.phone",
        ("window" | "no_window", Code::ZoneUnknown) => "contact",
        ("", _) => "question",
        _ => question,
    }
}

fn from_answer(answer: &Value) -> Result<ResolveResponse, Status> {
    let at = match answer.get("at").and_then(Value::as_str) {
        Some(text) => Some(timestamp(
            DateTime::parse_from_rfc3339(text)
                .map_err(|e| internal(format!("the timing answer's `at` {text:?}: {e}")))?
                .with_timezone(&Utc),
        )),
        None => None,
    };
    let strings = |key: &str| -> Vec<String> {
        answer
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|z| z.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(ResolveResponse {
        at,
        past: answer.get("past").and_then(Value::as_bool).unwrap_or(false),
        zones: strings("zones"),
        e164: answer
            .get("e164")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        rule: answer
            .get("rule")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

fn simulate_response(timeline: &Timeline) -> Result<SimulateResponse, Status> {
    let text = serde_json::to_string(timeline)
        .map_err(|e| internal(format!("serializing a timeline: {e}")))?;
    Ok(SimulateResponse {
        timeline: text,
        state: timeline.state.as_str().to_string(),
        outcome: timeline.outcome.clone().unwrap_or_default(),
        runs: timeline
            .runs
            .iter()
            .map(|r| SimulatedRun {
                step: r.step.clone(),
                r#type: r.step_type.clone(),
                entered: Some(timestamp(r.entered)),
                until: r.until.map(timestamp),
                scheduled: r.scheduled.map(timestamp),
                closed: r.closed.map(timestamp),
                branch: r.branch.clone().unwrap_or_default(),
                woken_by: r.woken_by.map(|w| w as u32),
            })
            .collect(),
    })
}

/// A protobuf timestamp as an instant; out of range is refused under `field`.
fn instant(field: &str, t: &prost_types::Timestamp) -> Result<DateTime<Utc>, ServiceError> {
    u32::try_from(t.nanos)
        .ok()
        .and_then(|nanos| Utc.timestamp_opt(t.seconds, nanos).single())
        .ok_or_else(|| {
            ServiceError::Invalid(vec![Violation::new(
                field,
                Code::BadSchema,
                format!(
                    "{}s {}ns is not a valid instant; send a timestamp between years 0 and 9999",
                    t.seconds, t.nanos
                ),
            )])
        })
}

/// RFC 3339 with every digit kept; the question cuts `now` to milliseconds itself.
fn instant_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

fn internal(what: String) -> Status {
    tracing::error!(error = %what, "timing adapter");
    Status::internal("internal error; the server log has the details")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn fields(err: ServiceError) -> Vec<(String, Code)> {
        match err {
            ServiceError::Invalid(v) => v.into_iter().map(|v| (v.field, v.code)).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_typed_request_becomes_the_json_question() {
        let req = ResolveRequest {
            question: Some(Question::Window(SendWindow {
                days: vec!["mon".into()],
                r#from: "09:00".into(),
                to: "17:00".into(),
                tz: String::new(),
            })),
            channel: "sms".into(),
            contact: Some(ResolveContact {
                tz: "America/New_York".into(),
                ..Default::default()
            }),
            holidays: vec!["2026-12-25".into()],
            ..Default::default()
        };
        let (q, json) = to_json(&req, at("2026-03-02T03:00:00.250Z"), json!("federal")).unwrap();
        assert_eq!(q, "window");
        assert_eq!(
            json,
            json!({"now": "2026-03-02T03:00:00.250Z", "window": {"days": ["mon"], "from": "09:00", "to": "17:00"},
                   "channel": "sms", "contact": {"tz": "America/New_York"}, "holidays": ["2026-12-25"],
                   "quiet_hours": "federal"})
        );
        // The request's own policy and the contact's country go in as the question names them.
        let req = ResolveRequest {
            quiet_hours: r#"{"policy": "us_states"}"#.into(),
            contact: Some(ResolveContact {
                phone: "+13055550100".into(),
                country: "US".into(),
                ..Default::default()
            }),
            ..req
        };
        let (_, json) = to_json(&req, at("2026-03-02T03:00:00Z"), json!("federal")).unwrap();
        assert_eq!(json["quiet_hours"], json!({"policy": "us_states"}));
        assert_eq!(
            json["contact"],
            json!({"phone": "+13055550100", "country": "US"})
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let req = ResolveRequest {
            question: Some(Question::Duration("2H".into())),
            tz: "CET".into(),
            channel: "sms".into(),
            holidays: vec!["2026-13-01".into()],
            ..Default::default()
        };
        let got = fields(to_json(&req, at("2026-03-02T03:00:00Z"), Value::Null).unwrap_err());
        assert_eq!(
            got,
            [
                ("duration".to_string(), Code::BadDuration),
                ("tz".to_string(), Code::BadTz),
                ("holidays".to_string(), Code::BadSchema),
                ("channel".to_string(), Code::BadSchema),
            ]
        );
        let none = fields(
            to_json(
                &ResolveRequest::default(),
                at("2026-03-02T03:00:00Z"),
                Value::Null,
            )
            .unwrap_err(),
        );
        assert_eq!(none, [("question".to_string(), Code::BadSchema)]);
        // A window question with a bad policy and a bad country; a policy on another question.
        let req = ResolveRequest {
            question: Some(Question::NoWindow(true)),
            quiet_hours: "strict".into(),
            contact: Some(ResolveContact {
                tz: "UTC".into(),
                country: "de".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let got = fields(to_json(&req, at("2026-03-02T03:00:00Z"), Value::Null).unwrap_err());
        assert_eq!(
            got,
            [
                ("contact.country".to_string(), Code::BadSchema),
                ("quiet_hours".to_string(), Code::BadSchema),
            ]
        );
        let req = ResolveRequest {
            question: Some(Question::Duration("1d".into())),
            quiet_hours: "federal".into(),
            ..Default::default()
        };
        let got = fields(to_json(&req, at("2026-03-02T03:00:00Z"), Value::Null).unwrap_err());
        assert_eq!(got, [("quiet_hours".to_string(), Code::BadSchema)]);
    }
}
