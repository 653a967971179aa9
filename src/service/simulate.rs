//! `TimingService.Simulate` (docs/service.md): a flow, a scenario in, the timeline out. Nothing is
//! stored; the flow may be a stored version or a definition sent with the request.
//!
//! [`parse_scenario`] is shared with `nudge simulate`, so both refuse a bad scenario the same
//! way, naming the field.

use super::flows::{self, definition_field};
use super::{fields, ServiceError, Violation, Violations};
use crate::code::Code;
use crate::engine::simulate::{simulate_any as run, Answer, Scenario};
use crate::flow::{Flow, Severity, ValidateOptions};
use crate::runtime::Core;
use serde_json::Value;

/// Which flow to simulate.
#[derive(Debug, Clone)]
pub enum FlowSource {
    /// A flow document as JSON text; validated like `CreateFlow`.
    Definition(String),
    /// A stored version (0: the latest) of the flow with this id or name.
    Stored { id: String, version: i32 },
}

/// Reads docs/service.md's scenario from JSON text. A refusal names the field (`script[2].at`,
/// `contact.tz`, …) and says what was expected.
pub fn parse_scenario(text: &str) -> Result<Scenario, String> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        // serde_json's message ends with the line and column.
        let inner = e.into_inner();
        if path == "." {
            format!("the scenario is not valid: {inner}")
        } else {
            format!("the scenario's `{path}` is not valid: {inner}")
        }
    })
}

/// Runs the scenario (JSON text) against the flow for the account. When the scenario sets no
/// `max_wait`, the account's applies, so the simulation fails a long computed wait as the real
/// enrollment would.
pub async fn simulate(
    core: &Core,
    account_id: &str,
    source: FlowSource,
    scenario: &str,
) -> Result<Answer, ServiceError> {
    let (max_wait, opts) = flows::account_limits(core, account_id).await?;
    let flow = match source {
        FlowSource::Definition(text) => flow_from_definition(&text, &opts, definition_field)?,
        FlowSource::Stored { id, version } => {
            let stored = flows::get(core, account_id, &id, version).await?;
            // It was valid when stored; the account's current limit is the scenario's business.
            flow_from_definition(
                &stored.definition,
                &ValidateOptions::default(),
                |path: &str| format!("stored{path}"),
            )?
        }
    };
    let mut scenario = parse_scenario(scenario)
        .map_err(|message| invalid("scenario", Code::BadSchema, message))?;
    check_scenario(&flow, &scenario).map_err(ServiceError::Invalid)?;
    if scenario.max_wait.is_none() {
        scenario.max_wait = max_wait.map(Value::String);
    }
    // Up to MAX_SIM_STEPS interpreter calls: keep them off the async workers.
    tokio::task::spawn_blocking(move || run(&flow, &scenario))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "simulation task failed");
            invalid(
                "scenario",
                Code::BadSchema,
                "the simulation stopped unexpectedly",
            )
        })?
        .map_err(|e| invalid("scenario", e.code(), e.to_string()))
}

/// What `Enroll` and `UpsertContact` would refuse, refused here too with the same codes: the
/// input against the flow's schema, the contact's email, phone and zone. Shared by
/// `TimingService.Simulate` and `nudge simulate`; fields are named `scenario.…`.
pub fn check_scenario(flow: &Flow, scenario: &Scenario) -> Result<(), Vec<Violation>> {
    let mut problems = Violations::default();
    if let Err(input) = fields::check_input("scenario.input", &flow.input, &scenario.input) {
        input.into_iter().for_each(|v| problems.push(v));
    }
    let contact = &scenario.contact;
    if let Some(email) = &contact.email {
        problems.check(fields::parse_email("scenario.contact.email", email));
    }
    if let Some(phone) = &contact.phone {
        problems.check(fields::parse_phone("scenario.contact.phone", phone));
    }
    if let Some(tz) = &contact.tz {
        problems.check(fields::parse_tz("scenario.contact.tz", tz));
    }
    problems.check(fields::parse_tz("scenario.sender_tz", &scenario.sender_tz));
    for (i, c) in scenario.contacts.iter().flatten().enumerate() {
        if let Some(email) = &c.email {
            problems.check(fields::parse_email(
                &format!("scenario.contacts[{i}].email"),
                email,
            ));
        }
        if let Some(phone) = &c.phone {
            problems.check(fields::parse_phone(
                &format!("scenario.contacts[{i}].phone"),
                phone,
            ));
        }
        if let Some(tz) = &c.tz {
            problems.check(fields::parse_tz(&format!("scenario.contacts[{i}].tz"), tz));
        }
    }
    if let Some(sender) = &scenario.sender {
        problems.check(fields::parse_tz("scenario.sender.tz", &sender.tz));
        if !sender.caps.is_null() {
            if let Err(found) = crate::capacity::Caps::parse(&sender.caps) {
                for p in found {
                    problems.push(Violation::new(
                        format!("scenario.sender.caps{}", p.path.replace('/', ".")),
                        Code::BadSchema,
                        p.message,
                    ));
                }
            }
        }
    }
    problems.into_violations()
}

/// The typed flow, or every validation error as a violation at `field(path)`.
fn flow_from_definition(
    text: &str,
    opts: &ValidateOptions,
    field: impl Fn(&str) -> String,
) -> Result<Flow, ServiceError> {
    let validation = flows::judge(text, opts);
    validation.flow.ok_or_else(|| {
        ServiceError::Invalid(
            validation
                .problems
                .into_iter()
                .filter(|p| p.severity == Severity::Error)
                .map(|p| Violation::new(field(&p.path), p.code, p.message))
                .collect(),
        )
    })
}

fn invalid(field: &str, code: Code, message: impl Into<String>) -> ServiceError {
    ServiceError::Invalid(vec![Violation::new(field, code, message)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_scenario_names_the_field() {
        let e = parse_scenario(
            r#"{"start": "2026-12-04T20:00:00Z", "horizon": "2027-01-01T00:00:00Z",
                "script": [{"at": "tomorrow", "kind": "pause"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("`script[0].at`"), "{e}");
        assert!(e.contains("tomorrow"), "{e}");
        let e = parse_scenario(r#"{"start": "2026-12-04T20:00:00Z"}"#).unwrap_err();
        assert!(e.contains("horizon"), "{e}");
        let e = parse_scenario(
            r#"{"start": "2026-12-04T20:00:00Z", "horizon": "2027-01-01T00:00:00Z", "contact": {"zone": "UTC"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("`contact.zone`") && e.contains("`tz`"), "{e}");
    }
}
