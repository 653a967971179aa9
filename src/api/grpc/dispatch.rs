//! `nudge.v1.DispatchService`: thin adapter over [`crate::service::dispatches`].

use super::auth::principal;
use super::convert::{opt_timestamp, timestamp};
use crate::api::AppState;
use crate::proto::v1 as pb;
use crate::proto::v1::dispatch_service_server::DispatchService;
use crate::service::dispatches;
use crate::service::ids::DispatchId;
use tonic::{Request, Response, Status};

pub struct DispatchApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl DispatchService for DispatchApi {
    async fn claim_dispatches(
        &self,
        request: Request<pb::ClaimDispatchesRequest>,
    ) -> Result<Response<pb::ClaimDispatchesResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let rows =
            dispatches::claim(&self.state.core, &who.account_id, r.lease_ms, r.max_count).await?;
        Ok(Response::new(pb::ClaimDispatchesResponse {
            dispatches: rows
                .into_iter()
                .map(|d| pb::Dispatch {
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
                })
                .collect(),
        }))
    }

    async fn ack_dispatch(
        &self,
        request: Request<pb::AckDispatchRequest>,
    ) -> Result<Response<pb::AckDispatchResponse>, Status> {
        let who = principal(&request)?;
        let r = request.into_inner();
        let status = dispatches::ack(
            &self.state.core,
            &who.account_id,
            &DispatchId::from(r.id),
            &r.lease_token,
            &r.provider_message_id,
            &r.failure,
        )
        .await?;
        Ok(Response::new(pb::AckDispatchResponse {
            status: status.as_str().to_string(),
        }))
    }
}
