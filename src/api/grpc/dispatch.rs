//! `nudge.v1.DispatchService`: thin adapter over [`crate::service::dispatches`].

use super::auth::principal;
use super::convert::{opt_timestamp, timestamp};
use crate::api::AppState;
use crate::proto::v1 as pb;
use crate::proto::v1::ack_dispatch_request::RetryWhen;
use crate::proto::v1::dispatch_service_server::DispatchService;
use crate::service::dispatches::{self, Dispatch, Outcome, RetryAt};
use crate::service::ids::DispatchId;
use crate::service::{approvals, unsubscribe};
use crate::service::{ServiceError, Violation};
use chrono::DateTime;
use tonic::{Request, Response, Status};

pub struct DispatchApi {
    pub state: AppState,
}

impl From<Dispatch> for pb::Dispatch {
    fn from(d: Dispatch) -> pb::Dispatch {
        pb::Dispatch {
            id: d.id.into_string(),
            enrollment_id: d.enrollment_id.into_string(),
            run: d.run,
            step: d.step,
            idempotency_key: d.idempotency_key,
            channel: d.channel,
            recipient: d.recipient,
            template: d.template,
            input: d.input,
            message_id: d.message_id.unwrap_or_default(),
            due_at: Some(timestamp(d.due_at)),
            attempts: d.attempts,
            lease_token: d.lease_token.unwrap_or_default(),
            lease_until: opt_timestamp(d.lease_until),
            channel_params: d.channel_params.unwrap_or_default(),
            status: d.status.as_str().to_string(),
            hold_code: d.hold_code.unwrap_or_default(),
            failure: d.failure.unwrap_or_default(),
            provider_message_id: d.provider_message_id.unwrap_or_default(),
            created_at: Some(timestamp(d.created_at)),
            list_unsubscribe: d.list_unsubscribe.unwrap_or_default(),
            list_unsubscribe_post: d.list_unsubscribe_post.unwrap_or_default(),
            variant: d.variant.unwrap_or_default(),
        }
    }
}

impl From<dispatches::Acked> for pb::AckDispatchResponse {
    fn from(acked: dispatches::Acked) -> pb::AckDispatchResponse {
        pb::AckDispatchResponse {
            status: acked.status.as_str().to_string(),
            due_at: Some(timestamp(acked.due_at)),
            attempts: acked.attempts,
        }
    }
}

/// The answer to an item of a `BatchAckDispatch` that was refused.
fn refused(e: ServiceError) -> pb::BatchAckDispatchResult {
    let (error_code, error_message, problems) = super::error::item_error(e);
    pb::BatchAckDispatchResult {
        error_code,
        error_message,
        problems,
        ..Default::default()
    }
}

/// The retry time a request names, if it names one.
fn retry_at(when: Option<RetryWhen>) -> Result<Option<RetryAt>, ServiceError> {
    Ok(match when {
        None => None,
        Some(RetryWhen::RetryAfterMs(ms)) => Some(RetryAt::After(ms)),
        Some(RetryWhen::RetryAt(t)) => Some(RetryAt::At(
            DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32).ok_or_else(|| {
                ServiceError::Invalid(vec![Violation::new(
                    "retry_at",
                    crate::code::Code::BadSchema,
                    "not a representable instant; send a timestamp within years 1 to 9999",
                )])
            })?,
        )),
    })
}

#[tonic::async_trait]
impl DispatchService for DispatchApi {
    async fn claim_dispatches(
        &self,
        request: Request<pb::ClaimDispatchesRequest>,
    ) -> Result<Response<pb::ClaimDispatchesResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let mut rows = dispatches::claim(
            &self.state.core,
            &who.account_id,
            r.lease_ms,
            r.max_count,
            &r.channels,
        )
        .await?;
        unsubscribe::attach(
            &self.state.core,
            &who.account_id,
            &self.state.link_base,
            &mut rows,
        )
        .await?;
        approvals::attach_url(&self.state.link_base, &mut rows);
        Ok(Response::new(pb::ClaimDispatchesResponse {
            dispatches: rows.into_iter().map(pb::Dispatch::from).collect(),
        }))
    }

    async fn ack_dispatch(
        &self,
        request: Request<pb::AckDispatchRequest>,
    ) -> Result<Response<pb::AckDispatchResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let outcome = Outcome::parse(
            &r.provider_message_id,
            &r.failure,
            r.retry,
            retry_at(r.retry_when)?,
        )?;
        let acked = dispatches::ack(
            &self.state.core,
            &who.account_id,
            &DispatchId::from(r.id),
            &r.lease_token,
            &outcome,
        )
        .await?;
        Ok(Response::new(acked.into()))
    }

    async fn batch_ack_dispatch(
        &self,
        request: Request<pb::BatchAckDispatchRequest>,
    ) -> Result<Response<pb::BatchAckDispatchResponse>, Status> {
        let who = principal(&request)?;
        let items = request.into_inner().items;
        // An item whose outcome does not parse is answered alone; the others go in one batch.
        let mut results: Vec<Option<pb::BatchAckDispatchResult>> = Vec::with_capacity(items.len());
        let mut batch = Vec::with_capacity(items.len());
        let mut positions = Vec::with_capacity(items.len());
        for (i, r) in items.into_iter().enumerate() {
            let outcome = retry_at(r.retry_when)
                .and_then(|at| Outcome::parse(&r.provider_message_id, &r.failure, r.retry, at));
            match outcome {
                Ok(outcome) => {
                    positions.push(i);
                    results.push(None);
                    batch.push(dispatches::AckItem {
                        id: DispatchId::from(r.id),
                        lease_token: r.lease_token,
                        outcome,
                    });
                }
                Err(e) => results.push(Some(refused(e))),
            }
        }
        if !batch.is_empty() {
            let answers = dispatches::ack_batch(&self.state.core, &who.account_id, &batch).await?;
            for (&i, answer) in positions.iter().zip(answers) {
                results[i] = Some(match answer {
                    Ok(acked) => pb::BatchAckDispatchResult {
                        ack: Some(acked.into()),
                        ..Default::default()
                    },
                    Err(e) => refused(e),
                });
            }
        } else if results.is_empty() {
            // No items at all: the service's own answer names the field.
            dispatches::ack_batch(&self.state.core, &who.account_id, &[]).await?;
        }
        Ok(Response::new(pb::BatchAckDispatchResponse {
            results: results
                .into_iter()
                .map(|r| r.expect("every item answered"))
                .collect(),
        }))
    }

    async fn get_dispatch(
        &self,
        request: Request<pb::GetDispatchRequest>,
    ) -> Result<Response<pb::GetDispatchResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let mut d =
            dispatches::get(&self.state.core, &who.account_id, &DispatchId::from(r.id)).await?;
        unsubscribe::attach(
            &self.state.core,
            &who.account_id,
            &self.state.link_base,
            std::slice::from_mut(&mut d),
        )
        .await?;
        approvals::attach_url(&self.state.link_base, std::slice::from_mut(&mut d));
        Ok(Response::new(pb::GetDispatchResponse {
            dispatch: Some(d.into()),
        }))
    }

    async fn list_dispatches(
        &self,
        request: Request<pb::ListDispatchesRequest>,
    ) -> Result<Response<pb::ListDispatchesResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let page = r.page.unwrap_or_default();
        let (mut list, next_page_token) = dispatches::list(
            &self.state.core,
            &who.account_id,
            &r.enrollment_id,
            &r.status,
            page.page_size,
            &page.page_token,
        )
        .await?;
        unsubscribe::attach(
            &self.state.core,
            &who.account_id,
            &self.state.link_base,
            &mut list,
        )
        .await?;
        approvals::attach_url(&self.state.link_base, &mut list);
        Ok(Response::new(pb::ListDispatchesResponse {
            dispatches: list.into_iter().map(pb::Dispatch::from).collect(),
            next_page_token,
        }))
    }
}
