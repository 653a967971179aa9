//! `nudge.v1.ContactService`: thin adapter over [`crate::service::contacts`].

use super::auth::principal;
use super::convert;
use crate::api::AppState;
use crate::proto::v1::contact_service_server::ContactService;
use crate::proto::v1::*;
use crate::service::contacts;
use tonic::{Request, Response, Status};

pub struct ContactApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl ContactService for ContactApi {
    async fn upsert_contact(
        &self,
        request: Request<UpsertContactRequest>,
    ) -> Result<Response<UpsertContactResponse>, Status> {
        let who = principal(&request)?;
        let input = convert::contact_input(request.into_inner().contact)?;
        let now = self.state.core.clock.now();
        let (contact, created) =
            contacts::upsert(&self.state.core, &who.account_id, input, now).await?;
        Ok(Response::new(UpsertContactResponse {
            contact: Some(contact.into()),
            created,
        }))
    }

    async fn get_contact(
        &self,
        request: Request<GetContactRequest>,
    ) -> Result<Response<GetContactResponse>, Status> {
        let who = principal(&request)?;
        let contact =
            contacts::get(&self.state.core, &who.account_id, &request.get_ref().id).await?;
        Ok(Response::new(GetContactResponse {
            contact: Some(contact.into()),
        }))
    }

    async fn opt_out(
        &self,
        request: Request<OptOutRequest>,
    ) -> Result<Response<OptOutResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let contact = self
            .opt_outs(&who.account_id, &req.contact_id, &req.channels, true)
            .await?;
        Ok(Response::new(OptOutResponse { contact }))
    }

    async fn lift_opt_out(
        &self,
        request: Request<LiftOptOutRequest>,
    ) -> Result<Response<LiftOptOutResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let contact = self
            .opt_outs(&who.account_id, &req.contact_id, &req.channels, false)
            .await?;
        Ok(Response::new(LiftOptOutResponse { contact }))
    }
}

impl ContactApi {
    /// `OptOut` (`add`) and `LiftOptOut`: the contact after its opt-outs changed.
    async fn opt_outs(
        &self,
        account_id: &str,
        contact_id: &str,
        channels: &[String],
        add: bool,
    ) -> Result<Option<Contact>, Status> {
        let (core, now) = (&self.state.core, self.state.core.clock.now());
        let contact = if add {
            contacts::opt_out(core, account_id, contact_id, channels, now).await?
        } else {
            contacts::lift_opt_out(core, account_id, contact_id, channels, now).await?
        };
        Ok(Some(contact.into()))
    }
}
