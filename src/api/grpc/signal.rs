//! `nudge.v1.SignalService`: thin adapter over [`crate::service::tasks`] (tasks) and
//! [`crate::service::signals`] (`ReportSignal`, `PostEvent`).

use super::auth::principal;
use super::convert::{opt_timestamp, timestamp};
use crate::api::AppState;
use crate::inbound::intent::ReplyIntent;
use crate::inbound::{payload, SignalKind};
use crate::proto::v1 as pb;
use crate::proto::v1::signal_service_server::SignalService;
use crate::service::ids::TaskId;
use crate::service::signals::{self, Receipt};
use crate::service::tasks::{self, Task};
use tonic::{Request, Response, Status};

pub struct SignalApi {
    pub state: AppState,
}

impl From<Task> for pb::Task {
    fn from(t: Task) -> pb::Task {
        pb::Task {
            id: t.id.into_string(),
            enrollment_id: t.enrollment_id.into_string(),
            run: t.run,
            kind: t.kind,
            step: t.step,
            status: t.status.as_str().to_string(),
            outcome: t.outcome.unwrap_or_default(),
            params: t.params,
            due_by: opt_timestamp(t.due_by),
            created_at: Some(timestamp(t.created_at)),
            completed_at: opt_timestamp(t.completed_at),
            contact_id: t.contact.id,
            contact_name: t.contact.name.unwrap_or_default(),
            contact_email: t.contact.email.unwrap_or_default(),
            contact_phone: t.contact.phone.unwrap_or_default(),
        }
    }
}

#[tonic::async_trait]
impl SignalService for SignalApi {
    async fn list_tasks(
        &self,
        request: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let page = r.page.unwrap_or_default();
        let (rows, next_page_token) = tasks::list(
            &self.state.core,
            &who.account_id,
            &r.status,
            &r.enrollment_id,
            page.page_size,
            &page.page_token,
        )
        .await?;
        Ok(Response::new(pb::ListTasksResponse {
            tasks: rows.into_iter().map(Into::into).collect(),
            next_page_token,
        }))
    }

    async fn complete_task(
        &self,
        request: Request<pb::CompleteTaskRequest>,
    ) -> Result<Response<pb::CompleteTaskResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let (task, signalled) = tasks::complete(
            &self.state.core,
            &who,
            &TaskId::from(r.task_id),
            &r.outcome,
            &r.text,
        )
        .await?;
        Ok(Response::new(pb::CompleteTaskResponse {
            task: Some(task.into()),
            signalled: signalled as i32,
        }))
    }

    async fn report_signal(
        &self,
        request: Request<pb::ReportSignalRequest>,
    ) -> Result<Response<pb::ReportSignalResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let kind = report_kind(&r.kind, &r.channel, &r.r#type)?;
        let now = self.state.core.clock.now();
        let provider_id = Some(r.provider_id).filter(|p| !p.is_empty());
        let words = signals::Words {
            text: r.text,
            subject: Some(r.subject).filter(|s| !s.is_empty()),
            from: None,
        };
        let receipt = signals::report(
            &self.state.signals,
            &who.account_id,
            signals::Report {
                contact: &r.contact,
                kind,
                provider_id,
                words,
                intent: &r.intent,
            },
            now,
        )
        .await?;
        Ok(Response::new(receipt.into()))
    }

    async fn post_event(
        &self,
        request: Request<pb::PostEventRequest>,
    ) -> Result<Response<pb::PostEventResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let payload = payload::parse(r.payload.as_bytes()).map_err(|e| {
            Status::from(crate::service::ServiceError::Invalid(vec![
                signals::payload_violation(e),
            ]))
        })?;
        let now = self.state.core.clock.now();
        let provider_id = Some(r.provider_id).filter(|p| !p.is_empty());
        let receipt = signals::post_event(
            &self.state.signals,
            &who.account_id,
            &r.key,
            &r.contact,
            payload,
            provider_id,
            now,
        )
        .await?;
        Ok(Response::new(receipt.into()))
    }

    async fn decide(
        &self,
        request: Request<pb::DecideRequest>,
    ) -> Result<Response<pb::DecideResponse>, Status> {
        use crate::code::Code;
        use crate::service::{fields, ServiceError, Violation, Violations};
        let who = principal(&request)?;
        let r = request.into_inner();
        let mut problems = Violations::default();
        problems.check(fields::parse_id("enrollment_id", &r.enrollment_id));
        let decision = crate::engine::Decision::parse(&r.decision);
        if decision.is_none() {
            problems.push(Violation::new(
                "decision",
                Code::BadSchema,
                "the decision is `approved` or `rejected`",
            ));
        }
        problems.check(fields::check_text("by", &r.by, fields::Limit::Email));
        let input = if r.input.trim().is_empty() {
            serde_json::json!({})
        } else {
            match serde_json::from_str::<serde_json::Value>(&r.input) {
                Ok(v @ serde_json::Value::Object(_)) => v,
                _ => {
                    problems.push(Violation::new(
                        "input",
                        Code::BadSchema,
                        "the input is a JSON object of field → value",
                    ));
                    serde_json::Value::Null
                }
            }
        };
        problems.finish()?;
        let id = crate::service::ids::EnrollmentId::from(r.enrollment_id);
        crate::service::enrollments::check_scope(&who, &id)?;
        let by = Some(r.by.trim().to_string()).filter(|b| !b.is_empty());
        let enrollment = crate::service::approvals::decide(
            &self.state.core,
            &who.account_id,
            &id,
            decision.expect("checked"),
            input,
            by,
        )
        .await
        .map_err(|e| match e {
            ServiceError::FailedPrecondition(m) if m.contains("input.") => {
                ServiceError::Invalid(vec![Violation::new("input", Code::BadSchema, m)])
            }
            e => e,
        })?;
        Ok(Response::new(pb::DecideResponse {
            enrollment: Some(enrollment.into()),
        }))
    }
}

/// The kind of a reported signal; a bad kind or channel is `INVALID_ARGUMENT` with a hint.
fn report_kind(kind: &str, channel: &str, bounce: &str) -> Result<SignalKind, Status> {
    let refuse = |field: &str, e: crate::inbound::KindError| {
        Status::from(crate::service::ServiceError::Invalid(vec![
            crate::service::Violation::new(field, e.code, e.message),
        ]))
    };
    match kind {
        "reply" => SignalKind::reply(channel).map_err(|e| refuse("channel", e)),
        "opt_out" => SignalKind::opt_out(channel).map_err(|e| refuse("channel", e)),
        "call_connected" => Ok(SignalKind::CallConnected),
        "connection_accepted" => Ok(SignalKind::ConnectionAccepted),
        "meeting_booked" => Ok(SignalKind::MeetingBooked),
        "meeting_cancelled" => Ok(SignalKind::MeetingCancelled),
        "complaint" => Ok(SignalKind::Complaint),
        "bounce" => match crate::inbound::classify::BounceType::parse(bounce) {
            Some(bounce) => Ok(SignalKind::Bounce { bounce }),
            None => Err(refuse(
                "type",
                crate::inbound::KindError {
                    code: crate::code::Code::BadSchema,
                    text: bounce.to_string(),
                    message: format!(
                        "{} is not a bounce type: use `hard` (5.x.x: the address takes no mail), \
                         `soft` (4.x.x) or `delayed`",
                        crate::quote::quote(bounce)
                    ),
                },
            )),
        },
        other => Err(refuse(
            "kind",
            crate::inbound::KindError {
                code: crate::code::Code::BadSchema,
                text: other.to_string(),
                message: format!(
                    "{} is not a signal kind: use `reply`, `call_connected`, \
                     `connection_accepted`, `meeting_booked`, `meeting_cancelled`, `opt_out`, \
                     `bounce` or `complaint` (a custom event is PostEvent)",
                    crate::quote::quote(other)
                ),
            },
        )),
    }
}

impl From<Receipt> for pb::ReportSignalResponse {
    fn from(r: Receipt) -> pb::ReportSignalResponse {
        use crate::engine::DeliveryEffect as E;
        let count = |e| r.count(e) as i64;
        pb::ReportSignalResponse {
            counts: Some(pb::DeliveryCounts {
                woke: count(E::Woke),
                buffered: count(E::Buffered),
                exited: count(E::Exited),
                ignored_paused: count(E::IgnoredPaused),
                unaffected: count(E::None),
                noted: count(E::Noted),
                paused: count(E::Paused),
            }),
            reached: r.reached as i64,
            truncated: r.deliveries.len() < r.reached,
            signal_id: r.signal_id,
            duplicate: r.duplicate,
            deliveries: r
                .deliveries
                .into_iter()
                .map(|d| pb::SignalDelivery {
                    enrollment_id: d.enrollment_id,
                    effect: d.effect.as_str().to_string(),
                    branch: d.branch.unwrap_or_default(),
                })
                .collect(),
            intent: r.intent.map(Into::into),
        }
    }
}

/// An event's receipt is a signal's without the intent (an event has no words).
impl From<Receipt> for pb::PostEventResponse {
    fn from(r: Receipt) -> pb::PostEventResponse {
        let pb::ReportSignalResponse {
            signal_id,
            duplicate,
            deliveries,
            reached,
            counts,
            truncated,
            intent: _,
        } = r.into();
        pb::PostEventResponse {
            signal_id,
            duplicate,
            deliveries,
            reached,
            counts,
            truncated,
        }
    }
}

impl From<ReplyIntent> for pb::ReplyIntent {
    fn from(r: ReplyIntent) -> pb::ReplyIntent {
        pb::ReplyIntent {
            intent: r.intent.as_str().to_string(),
            confidence: r.confidence,
            language: r.language,
            evidence: r.evidence,
            resume_on: r.resume_on.map(|d| d.to_string()).unwrap_or_default(),
            referral: r.referral.map(|f| pb::Referral {
                email: f.email,
                name: f.name.unwrap_or_default(),
            }),
        }
    }
}
