//! `nudge.v1.SenderService`: thin adapter over [`crate::service::senders`].

use super::auth::principal;
use super::convert;
use crate::api::AppState;
use crate::proto::v1::sender_service_server::SenderService;
use crate::proto::v1::*;
use crate::service::senders;
use tonic::{Request, Response, Status};

pub struct SenderApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl SenderService for SenderApi {
    async fn upsert_sender(
        &self,
        request: Request<UpsertSenderRequest>,
    ) -> Result<Response<UpsertSenderResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let input = convert::sender_input(req.sender)?;
        let now = self.state.core.clock.now();
        let (sender, created) = senders::upsert(
            &self.state.core,
            &who.account_id,
            input,
            req.make_default,
            now,
        )
        .await?;
        Ok(Response::new(UpsertSenderResponse {
            sender: Some(sender.into()),
            created,
        }))
    }

    async fn get_sender(
        &self,
        request: Request<GetSenderRequest>,
    ) -> Result<Response<GetSenderResponse>, Status> {
        let who = principal(&request)?;
        let sender = senders::get(&self.state.core, &who.account_id, &request.get_ref().id).await?;
        Ok(Response::new(GetSenderResponse {
            sender: Some(sender.into()),
        }))
    }
}
