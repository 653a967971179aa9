//! Approvals (docs/flows.md, "approval"): what a signed link shows, and a decision, by link or by
//! `SignalService.Decide`. The HTTP page and the gRPC call are thin adapters over this.
//!
//! A link is checked in this order, and every refusal changes nothing: not ours or altered
//! (404), expired (410), the run it was made for is no longer the waiting approval — decided,
//! timed out, exited or moved (409), the enrollment is paused (409, the link works again after
//! `Resume`). The token itself is never logged or shown.

use super::enrollments::act::apply_input;
use super::ids::EnrollmentId;
use super::ServiceError;
use crate::engine::{Decision, Input, Status};
use crate::flow::model::{check_input, Action, FieldType, InputMismatch};
use crate::inbound::link::{self, LinkClaims, LinkError, LinkPurpose};
use crate::runtime::Core;
use crate::store;
use chrono::{DateTime, Utc};

/// Why a link or decision is refused.
#[derive(Debug)]
pub enum Refusal {
    /// Not a token of ours, or altered: 404.
    Forged,
    /// Expired at this instant: 410.
    Expired(DateTime<Utc>),
    /// The run is closed (decided, timed out, exited, moved) or the enrollment finished: 409.
    Closed,
    /// The enrollment is paused: 409 until `Resume`.
    Paused,
    /// The form's values do not match `params.input`: 422, nothing decided.
    Invalid(Vec<InputMismatch>),
    /// Anything else (the database).
    Service(ServiceError),
}

impl From<ServiceError> for Refusal {
    fn from(e: ServiceError) -> Refusal {
        Refusal::Service(e)
    }
}

impl From<store::StoreError> for Refusal {
    fn from(e: store::StoreError) -> Refusal {
        Refusal::Service(e.into())
    }
}

/// What the approval page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalView {
    pub title: String,
    pub description: Option<String>,
    /// The contact's email, or its id.
    pub contact: String,
    pub flow: String,
    pub step: String,
    pub expires_at: DateTime<Utc>,
    /// The form's fields, in name order.
    pub fields: Vec<(String, FieldType)>,
}

/// Checks `token` and returns what its page shows.
pub async fn open(core: &Core, token: &str) -> Result<(LinkClaims, ApprovalView), Refusal> {
    let now = core.clock.now();
    let secret = store::link_secret::load(&core.db).await?;
    let claims = match link::verify(
        &secret,
        token,
        LinkPurpose::Approval,
        crate::clock::to_millis(now),
    ) {
        Ok(c) => c,
        Err(LinkError::Forged) => return Err(Refusal::Forged),
        Err(LinkError::Expired { at_ms }) => {
            return Err(Refusal::Expired(crate::clock::from_millis(at_ms)))
        }
    };
    let row = store::enrollments::get(&core.db, &claims.account, &claims.subject)
        .await?
        .ok_or(Refusal::Forged)?;
    let state = row.engine_state()?;
    let run = state.run.as_ref().filter(|r| {
        Some(r.id as i64) == claims.run && r.step_type == crate::flow::StepKind::Approval
    });
    let Some(run) = run.filter(|_| !state.status.is_finished()) else {
        return Err(Refusal::Closed);
    };
    if state.status == Status::Paused {
        return Err(Refusal::Paused);
    }
    let stored = store::flows::get(&core.db, &row.account_id, &row.flow_id, row.flow_version)
        .await?
        .ok_or(Refusal::Closed)?;
    let flow = core
        .flows
        .get_or_parse(
            &(row.flow_id.clone(), row.flow_version),
            Some(&stored.version.definition),
        )
        .map_err(|m| Refusal::Service(ServiceError::Internal(m)))?;
    let Some(Action::Approval(p)) = flow.step(&run.step).map(|s| &s.action) else {
        return Err(Refusal::Closed);
    };
    let view = ApprovalView {
        title: p.title.clone(),
        description: p.description.clone(),
        contact: state
            .contact
            .email
            .clone()
            .unwrap_or_else(|| state.contact.id.clone()),
        flow: flow.name.clone(),
        step: run.step.clone(),
        expires_at: run.link_expires.unwrap_or(now),
        fields: p.input.iter().map(|(k, t)| (k.clone(), *t)).collect(),
    };
    Ok((claims, view))
}

/// A decision through a link: the form's text values are read by the field types, checked,
/// and applied to the run the link was made for.
pub async fn decide_by_link(
    core: &Core,
    token: &str,
    decision: Decision,
    form: &std::collections::HashMap<String, String>,
    by: Option<String>,
) -> Result<ApprovalView, Refusal> {
    let (claims, view) = open(core, token).await?;
    let input = form_input(&view.fields, form)?;
    let id = EnrollmentId::from(claims.subject.clone());
    let run = claims.run.map(|r| r as u64);
    apply_decision(core, &claims.account, &id, run, decision, input, by).await?;
    Ok(view)
}

/// The form's values as JSON by the declared types; every mismatch is returned.
pub fn form_input(
    fields: &[(String, FieldType)],
    form: &std::collections::HashMap<String, String>,
) -> Result<serde_json::Value, Refusal> {
    let mut out = serde_json::Map::new();
    for (name, t) in fields {
        let text = form.get(name).map(|s| s.trim()).unwrap_or("");
        let value = match t {
            FieldType::Boolean => serde_json::Value::Bool(matches!(text, "true" | "on" | "yes")),
            _ if text.is_empty() => continue,
            FieldType::Number => match text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => serde_json::Value::Number(n),
                None => serde_json::Value::String(text.to_string()),
            },
            FieldType::String | FieldType::Timestamp => serde_json::Value::String(text.to_string()),
        };
        out.insert(name.clone(), value);
    }
    let schema = fields.iter().cloned().collect();
    let input = serde_json::Value::Object(out);
    check_input(&schema, &input).map_err(Refusal::Invalid)?;
    Ok(input)
}

/// `SignalService.Decide`: the same decision for a CRM's own screens, on the waiting approval.
pub async fn decide(
    core: &Core,
    account_id: &str,
    enrollment_id: &EnrollmentId,
    decision: Decision,
    input: serde_json::Value,
    by: Option<String>,
) -> Result<super::enrollments::Enrollment, ServiceError> {
    let row = apply_input(
        core,
        account_id,
        enrollment_id,
        Input::Decide {
            run: None,
            decision,
            input,
            by,
        },
        true,
    )
    .await?
    .0;
    super::enrollments::Enrollment::from_row(row)
}

async fn apply_decision(
    core: &Core,
    account_id: &str,
    id: &EnrollmentId,
    run: Option<u64>,
    decision: Decision,
    input: serde_json::Value,
    by: Option<String>,
) -> Result<(), Refusal> {
    let applied = apply_input(
        core,
        account_id,
        id,
        Input::Decide {
            run,
            decision,
            input,
            by,
        },
        true,
    )
    .await;
    match applied {
        Ok(_) => Ok(()),
        // Between the check and the decision another decision (or the timeout) won.
        Err(ServiceError::FailedPrecondition(m)) if m.contains("paused") => Err(Refusal::Paused),
        Err(ServiceError::FailedPrecondition(_)) => Err(Refusal::Closed),
        Err(e) => Err(Refusal::Service(e)),
    }
}

/// Puts the absolute `url` (`{base}{path}`) beside the `path` of each approval dispatch of
/// `rows` (docs/flows.md, "approval": params `url`, `title`, `expires_at`). Stored with the path only, because
/// the public address is the edge's (`--public-url`, else the bound address); added on the
/// way out, like an email's unsubscribe link.
pub fn attach_url(base: &str, rows: &mut [crate::service::dispatches::Dispatch]) {
    let base = base.trim_end_matches('/');
    for d in rows.iter_mut().filter(|d| d.channel == "approval") {
        let Some(text) = &d.channel_params else {
            continue;
        };
        let Ok(serde_json::Value::Object(mut params)) = serde_json::from_str(text) else {
            continue;
        };
        if let Some(path) = params.get("path").and_then(|p| p.as_str()) {
            let url = format!("{base}{path}");
            params.insert("url".into(), serde_json::Value::String(url));
            d.channel_params = Some(serde_json::Value::Object(params).to_string());
        }
    }
}
