//! Flows: create (as an immutable version), get, list.
//!
//! [`check_definition`] is the one place a definition is judged before it is stored; the flow
//! validator (`crate::flow`) hooks in there.

use super::{ServiceError, Violation, Violations};
use crate::clock::{from_millis, to_millis};
use crate::code::Code;
use crate::store::{self, flows::StoredFlow, Db};
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

/// A problem that does not refuse the flow (SPEC §1: `UNREACHABLE` is a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: Code,
    pub path: String,
    pub message: String,
}

/// What a definition must satisfy to be stored: for now, JSON text holding an object with a
/// string `name` (the key versions are grouped by). Returns the name and any warnings.
pub fn check_definition(definition: &str) -> Result<(String, Vec<Warning>), Vec<Violation>> {
    let value: Value = serde_json::from_str(definition).map_err(|e| {
        vec![Violation::new(
            "definition",
            Code::BadSchema,
            format!(
                "the definition is not JSON: {e} (line {}, column {}); send the flow document as JSON text",
                e.line(),
                e.column()
            ),
        )]
    })?;
    let Value::Object(map) = value else {
        return Err(vec![Violation::new(
            "definition",
            Code::BadSchema,
            "the definition must be a JSON object such as `{\"name\": \"outbound-v1\", \"start\": …, \"steps\": {…}}`",
        )]);
    };
    match map.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => Ok((name.clone(), Vec::new())),
        _ => Err(vec![Violation::new(
            "definition/name",
            Code::BadSchema,
            "the flow needs a non-empty string `name`; versions of one flow share it",
        )]),
    }
}

/// Stores `definition` as the next version of the flow it names.
pub async fn create(
    db: &Db,
    account_id: &str,
    definition: &str,
    now: DateTime<Utc>,
) -> Result<(Flow, Vec<Warning>), ServiceError> {
    let (name, warnings) = check_definition(definition).map_err(ServiceError::Invalid)?;
    let stored =
        store::flows::create_version(db, account_id, &name, definition, to_millis(now)).await?;
    Ok((from_stored(stored), warnings))
}

/// One version (0: the latest) of the flow with this id or name.
pub async fn get(
    db: &Db,
    account_id: &str,
    id_or_name: &str,
    version: i32,
) -> Result<Flow, ServiceError> {
    let mut problems = Violations::default();
    if id_or_name.is_empty() {
        problems.push(Violation::new(
            "id",
            Code::BadSchema,
            "give the flow's id or name",
        ));
    }
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
    db: &Db,
    account_id: &str,
    page_size: i32,
    page_token: &str,
) -> Result<(Vec<Flow>, String), ServiceError> {
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
    let after = Some(page_token).filter(|t| !t.is_empty());
    // One extra row tells whether another page follows.
    let mut rows = store::flows::list(db, account_id, after, size + 1).await?;
    let next = if rows.len() as i64 > size {
        rows.truncate(size as usize);
        rows.last().map(|r| r.flow.name.clone()).unwrap_or_default()
    } else {
        String::new()
    };
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

    #[test]
    fn definitions_must_be_json_objects_with_a_name() {
        assert_eq!(
            check_definition(r#"{"name": "outbound-v1", "steps": {}}"#)
                .unwrap()
                .0,
            "outbound-v1"
        );
        let not_json = check_definition("{\"name\": ").unwrap_err();
        assert_eq!(not_json[0].code, Code::BadSchema);
        assert!(
            not_json[0].message.contains("line 1"),
            "{}",
            not_json[0].message
        );
        assert_eq!(check_definition("[1]").unwrap_err()[0].field, "definition");
        assert_eq!(
            check_definition(r#"{"steps": {}}"#).unwrap_err()[0].field,
            "definition/name"
        );
    }
}
