//! `nudge.v1.AccountService`: thin adapter over [`crate::service::accounts`]. Full-account
//! tokens only (the token layer refuses an enrollment-scoped token before this runs).

use super::auth::principal;
use super::convert;
use crate::api::AppState;
use crate::proto::v1::account_service_server::AccountService;
use crate::proto::v1::*;
use crate::service::accounts::{self, AllowInput, UpdateInput};
use crate::service::ServiceError;
use tonic::{Request, Response, Status};

pub struct AccountApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl AccountService for AccountApi {
    async fn get_account(
        &self,
        request: Request<GetAccountRequest>,
    ) -> Result<Response<GetAccountResponse>, Status> {
        let who = principal(&request)?;
        let account = accounts::get(&self.state.core, &who.account_id).await?;
        Ok(Response::new(GetAccountResponse {
            account: Some(to_proto(account)),
        }))
    }

    async fn update_account(
        &self,
        request: Request<UpdateAccountRequest>,
    ) -> Result<Response<UpdateAccountResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let account = req.account.unwrap_or_default();
        let quiet_hours = match account.quiet_hours {
            Some(s) => Some(serde_json::Value::Object(
                convert::struct_to_json("account.quiet_hours", s)
                    .map_err(|v| Status::from(ServiceError::Invalid(vec![v])))?,
            )),
            None => None,
        };
        let input = UpdateInput {
            max_wait: account.max_wait,
            fetch_allow: account
                .fetch_allow
                .into_iter()
                .map(|a| AllowInput {
                    host: a.host,
                    port: a.port,
                    allow_private: a.allow_private,
                })
                .collect(),
            quiet_hours,
            default_sender_id: account.default_sender_id,
            call_connected_threshold: account.call_connected_threshold,
            reply_unsubscribe: account.reply_unsubscribe,
            mask: req.update_mask.map(|m| m.paths).unwrap_or_default(),
        };
        let account = accounts::update(&self.state.core, &who.account_id, input).await?;
        Ok(Response::new(UpdateAccountResponse {
            account: Some(to_proto(account)),
        }))
    }

    async fn create_account(
        &self,
        request: Request<CreateAccountRequest>,
    ) -> Result<Response<CreateAccountResponse>, Status> {
        let req = request.into_inner();
        let now = self.state.core.clock.now();
        let account = accounts::create(&self.state.core, &req.id, &req.name, now).await?;
        Ok(Response::new(CreateAccountResponse {
            account: Some(to_proto(account)),
        }))
    }

    async fn list_accounts(
        &self,
        request: Request<ListAccountsRequest>,
    ) -> Result<Response<ListAccountsResponse>, Status> {
        let page = request.into_inner().page.unwrap_or_default();
        let (list, next_page_token) =
            accounts::list(&self.state.core, page.page_size, &page.page_token).await?;
        Ok(Response::new(ListAccountsResponse {
            accounts: list.into_iter().map(to_proto).collect(),
            next_page_token,
        }))
    }

    async fn set_provider_secret(
        &self,
        request: Request<SetProviderSecretRequest>,
    ) -> Result<Response<SetProviderSecretResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let account = accounts::set_provider_secret(
            &self.state.core,
            &who.account_id,
            &req.provider,
            &req.secret,
        )
        .await?;
        // This process's webhooks read the new secret at once (another replica's within
        // the cache's second).
        self.state.webhook_keys.forget(&who.account_id);
        Ok(Response::new(SetProviderSecretResponse {
            account: Some(to_proto(account)),
        }))
    }
}

fn to_proto(a: accounts::Account) -> Account {
    Account {
        id: a.id,
        name: a.name,
        max_wait: a.max_wait.unwrap_or_default(),
        fetch_allow: a
            .fetch_allow
            .into_iter()
            .map(|e| FetchAllow {
                host: e.host,
                port: e.port.map(u32::from).unwrap_or_default(),
                allow_private: e.allow_private,
            })
            .collect(),
        quiet_hours: match a.quiet_hours {
            Some(serde_json::Value::Object(m)) => Some(convert::json_to_struct(m)),
            _ => None,
        },
        default_sender_id: a.default_sender_id.unwrap_or_default(),
        call_connected_threshold: a.call_connected_threshold.unwrap_or_default(),
        reply_unsubscribe: a.reply_unsubscribe.as_str().to_string(),
        provider_secrets: a
            .provider_secrets
            .into_iter()
            .map(|(p, at)| ProviderSecretSet {
                provider: p.as_str().to_string(),
                updated_at: at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            })
            .collect(),
    }
}
