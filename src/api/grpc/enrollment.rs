//! `nudge.v1.EnrollmentService`: thin adapter over [`crate::service::enrollments`].

use super::auth::principal;
use super::convert::{json_to_struct, opt_timestamp, timestamp};
use super::error::item_error;
use crate::api::AppState;
use crate::engine::{Input, WaitReason};
use crate::proto::v1 as pb;
use crate::proto::v1::enrollment_service_server::EnrollmentService;
use crate::service::enrollments::{self, EnrollInput, Enrollment, Entry, ListFilter};
use crate::service::ids::EnrollmentId;
use tonic::{Request, Response, Status};

pub struct EnrollmentApi {
    pub state: AppState,
}

impl From<Enrollment> for pb::Enrollment {
    fn from(e: Enrollment) -> pb::Enrollment {
        let run = e.state.run.as_ref();
        pb::Enrollment {
            id: e.id.into_string(),
            flow_id: e.flow_id,
            flow_version: e.flow_version,
            contact_id: e.contact_id,
            sender_id: e.sender_id,
            status: e.status.as_str().to_string(),
            current_step: run.map(|r| r.step.clone()).unwrap_or_default(),
            current_run: run.map(|r| r.id as i64).unwrap_or_default(),
            next_run_at: opt_timestamp(e.state.next_run_at),
            outcome: e.state.outcome.unwrap_or_default(),
            reason: e.state.reason.unwrap_or_default(),
            input: e.state.input.to_string(),
            client_key: e.client_key.unwrap_or_default(),
            created_at: Some(timestamp(e.created_at)),
            updated_at: Some(timestamp(e.updated_at)),
            woken: e.state.woken.map(|w| *w).map(|w| pb::Woken {
                run: w.run as i64,
                step: w.step,
                signal_id: w.signal,
                branch: w.branch,
                payload: w.payload.payload.map(|p| p.to_string()).unwrap_or_default(),
                payload_truncated: w.payload.payload_truncated.unwrap_or_default() as i64,
            }),
        }
    }
}

impl From<Entry> for pb::JourneyEntry {
    fn from(e: Entry) -> pb::JourneyEntry {
        pb::JourneyEntry {
            seq: e.seq,
            at: Some(timestamp(e.at)),
            kind: e.kind,
            detail: Some(json_to_struct(e.detail)),
            summary: e.summary,
        }
    }
}

fn enroll_input(r: pb::EnrollRequest) -> EnrollInput {
    EnrollInput {
        contact_id: r.contact_id,
        flow_id: r.flow_id,
        flow_version: r.flow_version,
        sender_id: r.sender_id,
        input: r.input,
        client_key: r.client_key,
        allow_duplicate: r.allow_duplicate,
    }
}

/// The responses that carry the enrollment an RPC acted on: one message per RPC, one shape.
trait EnrollmentReply {
    fn of(enrollment: pb::Enrollment) -> Self;
}

macro_rules! enrollment_reply {
    ($($message:ident),+) => {$(
        impl EnrollmentReply for pb::$message {
            fn of(enrollment: pb::Enrollment) -> Self {
                pb::$message { enrollment: Some(enrollment) }
            }
        }
    )+};
}

enrollment_reply!(
    PauseResponse,
    ResumeResponse,
    ExitResponse,
    MoveToResponse,
    GetEnrollmentResponse
);

fn reply<R: EnrollmentReply>(e: Enrollment) -> Response<R> {
    Response::new(R::of(e.into()))
}

/// Watch's stream: entries as the service's reader hands them over.
pub type WatchStream = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<pb::WatchResponse, Status>> + Send + 'static>,
>;

#[tonic::async_trait]
impl EnrollmentService for EnrollmentApi {
    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<WatchStream>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let rx = enrollments::watch(
            &self.state.core,
            &who,
            enrollments::WatchFilter {
                flow_id: r.flow_id,
                contact_id: r.contact_id,
                kinds: r.kinds,
                cursor: r.cursor,
            },
        )
        .await?;
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            let item = rx.recv().await?;
            let answer = item.map_err(Status::from).map(|w| pb::WatchResponse {
                cursor: w.cursor,
                enrollment_id: w.enrollment_id,
                flow_id: w.flow_id,
                flow_version: w.flow_version,
                contact_id: w.contact_id,
                entry: Some(w.entry.into()),
            });
            Some((answer, rx))
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn enroll(
        &self,
        request: Request<pb::EnrollRequest>,
    ) -> Result<Response<pb::EnrollResponse>, Status> {
        let who = principal(&request)?;
        let (e, created) = enrollments::enroll(
            &self.state.core,
            &who.account_id,
            enroll_input(request.into_inner()),
        )
        .await?;
        Ok(Response::new(pb::EnrollResponse {
            enrollment: Some(e.into()),
            created,
        }))
    }

    async fn batch_enroll(
        &self,
        request: Request<pb::BatchEnrollRequest>,
    ) -> Result<Response<pb::BatchEnrollResponse>, Status> {
        let who = principal(&request)?;
        let items = request
            .into_inner()
            .items
            .into_iter()
            .map(enroll_input)
            .collect();
        let results = enrollments::batch_enroll(&self.state.core, &who.account_id, items).await?;
        let results = results
            .into_iter()
            .map(|r| match r {
                Ok((e, created)) => pb::BatchEnrollResult {
                    enrollment: Some(e.into()),
                    created,
                    ..Default::default()
                },
                Err(e) => {
                    let (error_code, error_message, problems) = item_error(e);
                    pb::BatchEnrollResult {
                        error_code,
                        error_message,
                        problems,
                        ..Default::default()
                    }
                }
            })
            .collect();
        Ok(Response::new(pb::BatchEnrollResponse { results }))
    }

    async fn pause(
        &self,
        request: Request<pb::PauseRequest>,
    ) -> Result<Response<pb::PauseResponse>, Status> {
        let who = principal(&request)?;
        let id = EnrollmentId::from(request.into_inner().id);
        crate::api::observe::enrollment(id.as_str());
        Ok(reply(
            enrollments::act(&self.state.core, &who, &id, Input::Pause).await?,
        ))
    }

    async fn resume(
        &self,
        request: Request<pb::ResumeRequest>,
    ) -> Result<Response<pb::ResumeResponse>, Status> {
        let who = principal(&request)?;
        let id = EnrollmentId::from(request.into_inner().id);
        crate::api::observe::enrollment(id.as_str());
        Ok(reply(
            enrollments::act(&self.state.core, &who, &id, Input::Resume).await?,
        ))
    }

    async fn exit(
        &self,
        request: Request<pb::ExitRequest>,
    ) -> Result<Response<pb::ExitResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        crate::api::observe::enrollment(&r.id);
        let reason = if r.reason.trim().is_empty() {
            "operator".to_string()
        } else {
            r.reason
        };
        Ok(reply(
            enrollments::act(
                &self.state.core,
                &who,
                &EnrollmentId::from(r.id),
                Input::Exit { reason },
            )
            .await?,
        ))
    }

    async fn move_to(
        &self,
        request: Request<pb::MoveToRequest>,
    ) -> Result<Response<pb::MoveToResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        crate::api::observe::enrollment(&r.id);
        Ok(reply(
            enrollments::act(
                &self.state.core,
                &who,
                &EnrollmentId::from(r.id),
                Input::MoveTo { step: r.step },
            )
            .await?,
        ))
    }

    async fn get_enrollment(
        &self,
        request: Request<pb::GetEnrollmentRequest>,
    ) -> Result<Response<pb::GetEnrollmentResponse>, Status> {
        let who = principal(&request)?;
        crate::api::observe::enrollment(&request.get_ref().id);
        Ok(reply(
            enrollments::get(
                &self.state.core,
                &who,
                &EnrollmentId::from(request.get_ref().id.as_str()),
            )
            .await?,
        ))
    }

    async fn list_enrollments(
        &self,
        request: Request<pb::ListEnrollmentsRequest>,
    ) -> Result<Response<pb::ListEnrollmentsResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let page = r.page.unwrap_or_default();
        let (list, next_page_token) = enrollments::list(
            &self.state.core,
            &who.account_id,
            ListFilter {
                flow_id: r.flow_id,
                contact_id: r.contact_id,
                status: r.status,
            },
            page.page_size,
            &page.page_token,
        )
        .await?;
        Ok(Response::new(pb::ListEnrollmentsResponse {
            enrollments: list.into_iter().map(Into::into).collect(),
            next_page_token,
        }))
    }

    async fn get_journey(
        &self,
        request: Request<pb::GetJourneyRequest>,
    ) -> Result<Response<pb::GetJourneyResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let page = r.page.unwrap_or_default();
        crate::api::observe::enrollment(&r.enrollment_id);
        let (entries, next_page_token) = enrollments::journey_page(
            &self.state.core,
            &who,
            &EnrollmentId::from(r.enrollment_id),
            page.page_size,
            &page.page_token,
        )
        .await?;
        Ok(Response::new(pb::GetJourneyResponse {
            entries: entries.into_iter().map(pb::JourneyEntry::from).collect(),
            next_page_token,
        }))
    }

    async fn list_journey(
        &self,
        request: Request<pb::ListJourneyRequest>,
    ) -> Result<Response<pb::ListJourneyResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let page = r.page.unwrap_or_default();
        let (entries, next_page_token) = enrollments::contact_journey_page(
            &self.state.core,
            &who,
            &r.contact_id,
            page.page_size,
            &page.page_token,
        )
        .await?;
        Ok(Response::new(pb::ListJourneyResponse {
            entries: entries
                .into_iter()
                .map(|e| pb::ContactJourneyEntry {
                    enrollment_id: e.enrollment_id.into_string(),
                    flow_id: e.flow_id,
                    flow_version: e.flow_version,
                    entry: Some(e.entry.into()),
                })
                .collect(),
            next_page_token,
        }))
    }

    async fn explain(
        &self,
        request: Request<pb::ExplainRequest>,
    ) -> Result<Response<pb::ExplainResponse>, Status> {
        let who = principal(&request)?;
        let id = EnrollmentId::from(request.into_inner().id);
        crate::api::observe::enrollment(id.as_str());
        let (e, x) = enrollments::explain(&self.state.core, &who, &id).await?;
        Ok(Response::new(pb::ExplainResponse {
            enrollment_id: e.id.into_string(),
            status: e.status.as_str().to_string(),
            reason: x.reason.map_or(pb::WaitReason::Unspecified, wait_reason) as i32,
            step: x.step.unwrap_or_default(),
            run: x.run.unwrap_or_default() as i64,
            until: opt_timestamp(x.until),
            zone: x.zone.unwrap_or_default(),
            events: x.events,
            code: x.code.map(|c| c.as_str().to_string()).unwrap_or_default(),
            sentence: x.sentence,
            variant: x.variant.unwrap_or_default(),
        }))
    }
}

/// The wire enum of the engine's reason (one list, [`WaitReason::ALL`]).
pub fn wait_reason(r: WaitReason) -> pb::WaitReason {
    match r {
        WaitReason::Timer => pb::WaitReason::Timer,
        WaitReason::Signal => pb::WaitReason::Signal,
        WaitReason::Window => pb::WaitReason::Window,
        WaitReason::QuietHours => pb::WaitReason::QuietHours,
        WaitReason::Holiday => pb::WaitReason::Holiday,
        WaitReason::Cap => pb::WaitReason::Cap,
        WaitReason::Held => pb::WaitReason::Held,
        WaitReason::Approval => pb::WaitReason::Approval,
        WaitReason::Fetch => pb::WaitReason::Fetch,
        WaitReason::Paused => pb::WaitReason::Paused,
    }
}
