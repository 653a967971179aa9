//! Flows: create (as an immutable version), get, list.
//!
//! [`check_definition`] is the one place a definition is judged before it is stored: the flow
//! validator (`crate::flow`) with the account's `max_wait` (docs/flows.md, "Plan limits"). Errors refuse the
//! definition, warnings are returned beside the stored version.

use super::fields::{self, Limit};
use super::{next_page_token, ServiceError, Violation, Violations};
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::flow::{self, Problem, Severity, ValidateOptions, Validation};
use crate::runtime::Core;
use crate::store::{self, accounts, flows::StoredFlow, StoreError};
use crate::timing::Duration;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The most flows one list page returns.
pub const MAX_PAGE_SIZE: i64 = 500;
/// The page size when the caller gives none.
pub const DEFAULT_PAGE_SIZE: i64 = 50;

/// One version of a flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    pub id: String,
    pub name: String,
    pub version: i32,
    /// The JSON text as created.
    pub definition: String,
    pub created_at: DateTime<Utc>,
}

/// A problem that does not refuse the flow (docs/flows.md: `UNREACHABLE` is a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: Code,
    pub path: String,
    pub message: String,
}

/// Judges a definition with the flow validator (docs/flows.md): every problem, errors and warnings,
/// and the typed flow when there is no error. Text that is not JSON is one `BAD_SCHEMA` problem
/// at the root, so `ValidateFlow` can answer it like any other problem.
pub fn judge(definition: &str, opts: &ValidateOptions) -> Validation {
    match serde_json::from_str::<Value>(definition) {
        Ok(value) => check_name(flow::validate(&value, opts)),
        Err(e) => Validation {
            flow: None,
            problems: vec![Problem {
                severity: Severity::Error,
                code: Code::BadSchema,
                path: String::new(),
                message: format!(
                    "the definition is not JSON: {e} (line {}, column {}); send the flow document as JSON text",
                    e.line(),
                    e.column()
                ),
            }],
        },
    }
}

/// A flow's name is what versions are grouped by and what callers enroll by: docs/service.md, "Errors"'s
/// limit for names, as a problem at `/name` (so `ValidateFlow` reports it too).
fn check_name(mut validation: Validation) -> Validation {
    let Some(flow) = &validation.flow else {
        return validation;
    };
    if let Err(v) = fields::check_text("name", &flow.name, Limit::Name) {
        validation.problems.insert(
            0,
            Problem {
                severity: Severity::Error,
                code: v.code,
                path: "/name".to_string(),
                message: format!("the flow's name: {}", v.message),
            },
        );
        validation.flow = None;
    }
    validation
}

/// What a definition must satisfy to be stored: no validation error. Returns the flow's name
/// (the key versions are grouped by) and the warnings; otherwise every error as a violation of
/// `definition/<JSON Pointer>`.
pub fn check_definition(
    definition: &str,
    opts: &ValidateOptions,
) -> Result<(String, Vec<Warning>), Vec<Violation>> {
    let Validation { flow, problems } = judge(definition, opts);
    match flow {
        Some(flow) => Ok((
            flow.name,
            problems
                .into_iter()
                .map(|p| Warning {
                    code: p.code,
                    path: p.path,
                    message: p.message,
                })
                .collect(),
        )),
        None => Err(problems
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .map(|p| Violation::new(definition_field(&p.path), p.code, p.message))
            .collect()),
    }
}

/// The request field of a problem at JSON Pointer `path` inside the definition:
/// `definition/steps/wait_2d/params/duration`, or `definition` for the root.
pub fn definition_field(path: &str) -> String {
    format!("definition{path}")
}

/// The validator's options for an account: its plan's `max_wait` (docs/flows.md, "Plan limits").
pub async fn validate_options(
    core: &Core,
    account_id: &str,
) -> Result<ValidateOptions, ServiceError> {
    Ok(account_limits(core, account_id).await?.1)
}

/// The account's `max_wait` as stored (e.g. `7d`) and the validator's options it gives.
pub async fn account_limits(
    core: &Core,
    account_id: &str,
) -> Result<(Option<String>, ValidateOptions), ServiceError> {
    let db = &core.db;
    let account = accounts::find(db, account_id)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("account `{account_id}` is gone")))?;
    let text = account
        .max_wait
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let max_wait = match &text {
        None => None,
        Some(text) => Some(Duration::parse(text).map_err(|e| {
            StoreError::Corrupt(format!(
                "account `{account_id}` has a max_wait that does not parse: {e}"
            ))
        })?),
    };
    Ok((
        text,
        ValidateOptions {
            max_wait,
            allowed_hosts: None,
        },
    ))
}

/// Stores `definition` as the next version of the flow it names, when the validator finds no
/// error (checked against the account's `max_wait`). Nothing is stored otherwise.
pub async fn create(
    core: &Core,
    account_id: &str,
    definition: &str,
    now: DateTime<Utc>,
) -> Result<(Flow, Vec<Warning>), ServiceError> {
    let db = &core.db;
    let opts = validate_options(core, account_id).await?;
    let (name, warnings) = check_definition(definition, &opts).map_err(ServiceError::Invalid)?;
    let stored =
        store::flows::create_version(db, account_id, &name, definition, to_millis(now)).await?;
    Ok((from_stored(stored), warnings))
}

/// The checks of [`create`] without storing anything: every problem, errors and warnings.
pub async fn validate(
    core: &Core,
    account_id: &str,
    definition: &str,
) -> Result<Vec<Problem>, ServiceError> {
    let opts = validate_options(core, account_id).await?;
    Ok(judge(definition, &opts).problems)
}

/// One version (0: the latest) of the flow with this id or name.
pub async fn get(
    core: &Core,
    account_id: &str,
    id_or_name: &str,
    version: i32,
) -> Result<Flow, ServiceError> {
    let db = &core.db;
    let mut problems = Violations::default();
    if id_or_name.is_empty() {
        problems.push(Violation::new(
            "id",
            Code::BadSchema,
            "give the flow's id or name",
        ));
    }
    problems.check(fields::check_text("id", id_or_name, Limit::Name));
    if version < 0 {
        problems.push(Violation::new(
            "version",
            Code::BadSchema,
            format!("version {version} is negative; versions start at 1 (0 means the latest)"),
        ));
    }
    problems.finish()?;
    store::flows::get(db, account_id, id_or_name, version)
        .await?
        .map(from_stored)
        .ok_or_else(|| ServiceError::NotFound {
            what: "flow",
            id: if version == 0 {
                id_or_name.to_string()
            } else {
                format!("{id_or_name}@{version}")
            },
        })
}

/// A page of flows by name, each at its latest version, and the token of the next page.
pub async fn list(
    core: &Core,
    account_id: &str,
    page_size: i32,
    page_token: &str,
) -> Result<(Vec<Flow>, String), ServiceError> {
    let db = &core.db;
    if page_size < 0 {
        return Err(ServiceError::Invalid(vec![Violation::new(
            "page.page_size",
            Code::BadSchema,
            "the page size must not be negative (0 means the default, 50)",
        )]));
    }
    let size = match i64::from(page_size) {
        0 => DEFAULT_PAGE_SIZE,
        n => n.min(MAX_PAGE_SIZE),
    };
    fields::check_text("page.page_token", page_token, Limit::PageToken)
        .map_err(|v| ServiceError::Invalid(vec![v]))?;
    let after = Some(page_token).filter(|t| !t.is_empty());
    // One extra row tells whether another page follows.
    let mut rows = store::flows::list(db, account_id, after, size + 1).await?;
    let next = next_page_token(&mut rows, size, |r| r.flow.name.clone());
    Ok((rows.into_iter().map(from_stored).collect(), next))
}

fn from_stored(stored: StoredFlow) -> Flow {
    Flow {
        id: stored.flow.id,
        name: stored.flow.name,
        version: stored.version.version,
        definition: stored.version.definition,
        created_at: from_millis(stored.version.created_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{"name": "outbound-v1", "start": "w", "steps": {
        "w": {"type": "wait", "params": {"duration": "10d"}, "next": {"then": "end"}},
        "end": {"type": "end"}}}"#;

    #[test]
    fn a_valid_definition_gives_its_name() {
        let (name, warnings) = check_definition(VALID, &ValidateOptions::default()).unwrap();
        assert_eq!(name, "outbound-v1");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn text_that_is_not_json_or_not_an_object_is_refused_at_the_root() {
        let not_json = check_definition("{\"name\": ", &ValidateOptions::default()).unwrap_err();
        assert_eq!(not_json[0].code, Code::BadSchema);
        assert_eq!(not_json[0].field, "definition");
        assert!(
            not_json[0].message.contains("line 1"),
            "{}",
            not_json[0].message
        );
        let array = check_definition("[1]", &ValidateOptions::default()).unwrap_err();
        assert_eq!(array[0].field, "definition");
    }

    #[test]
    fn every_error_becomes_a_violation_inside_definition() {
        let bad = r#"{"name": "x", "start": "nowhere", "steps": {
            "w": {"type": "wait", "params": {"duration": "2H"}, "next": {"then": "end"}},
            "end": {"type": "end"}}}"#;
        let violations = check_definition(bad, &ValidateOptions::default()).unwrap_err();
        let got: Vec<(&str, Code)> = violations
            .iter()
            .map(|v| (v.field.as_str(), v.code))
            .collect();
        assert!(
            got.contains(&("definition/start", Code::UnknownTarget)),
            "{got:?}"
        );
        assert!(
            got.contains(&("definition/steps/w/params/duration", Code::BadDuration)),
            "{got:?}"
        );
    }

    #[test]
    fn max_wait_turns_a_long_wait_into_an_error() {
        let opts = ValidateOptions {
            max_wait: Some(Duration::parse("7d").unwrap()),
            allowed_hosts: None,
        };
        let violations = check_definition(VALID, &opts).unwrap_err();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].code, Code::WaitExceedsLimit);
        assert_eq!(violations[0].field, "definition/steps/w/params/duration");
    }

    #[test]
    fn warnings_do_not_refuse() {
        let orphan = r#"{"name": "x", "start": "end", "steps": {
            "end": {"type": "end"}, "orphan": {"type": "end"}}}"#;
        let (_, warnings) = check_definition(orphan, &ValidateOptions::default()).unwrap();
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, Code::Unreachable);
        assert_eq!(warnings[0].path, "/steps/orphan");
    }
}
