//! `nudge.v1.FlowService`: thin adapter over [`crate::service::flows`].

use super::auth::principal;
use crate::api::AppState;
use crate::flow::{Problem as FlowProblem, Severity};
use crate::proto::v1::flow_service_server::FlowService;
use crate::proto::v1::*;
use crate::service::flows;
use tonic::{Request, Response, Status};

pub struct FlowApi {
    pub state: AppState,
}

#[tonic::async_trait]
impl FlowService for FlowApi {
    async fn create_flow(
        &self,
        request: Request<CreateFlowRequest>,
    ) -> Result<Response<CreateFlowResponse>, Status> {
        let who = principal(&request)?;
        let now = self.state.core.clock.now();
        let (flow, warnings) = flows::create(
            &self.state.core,
            &who.account_id,
            &request.get_ref().definition,
            now,
        )
        .await?;
        Ok(Response::new(CreateFlowResponse {
            flow: Some(flow.into()),
            problems: warnings.into_iter().map(Into::into).collect(),
        }))
    }

    async fn validate_flow(
        &self,
        request: Request<ValidateFlowRequest>,
    ) -> Result<Response<ValidateFlowResponse>, Status> {
        let who = principal(&request)?;
        let problems = flows::validate(
            &self.state.core,
            &who.account_id,
            &request.get_ref().definition,
        )
        .await?;
        Ok(Response::new(ValidateFlowResponse {
            valid: !problems.iter().any(|p| p.severity == Severity::Error),
            problems: problems.into_iter().map(problem).collect(),
        }))
    }

    async fn get_flow(
        &self,
        request: Request<GetFlowRequest>,
    ) -> Result<Response<GetFlowResponse>, Status> {
        let who = principal(&request)?;
        let req = request.get_ref();
        let flow = flows::get(&self.state.core, &who.account_id, &req.id, req.version).await?;
        Ok(Response::new(GetFlowResponse {
            flow: Some(flow.into()),
        }))
    }

    async fn list_flows(
        &self,
        request: Request<ListFlowsRequest>,
    ) -> Result<Response<ListFlowsResponse>, Status> {
        let who = principal(&request)?;
        let page = request.into_inner().page.unwrap_or_default();
        let (flows, next_page_token) = flows::list(
            &self.state.core,
            &who.account_id,
            page.page_size,
            &page.page_token,
        )
        .await?;
        Ok(Response::new(ListFlowsResponse {
            flows: flows.into_iter().map(Into::into).collect(),
            next_page_token,
        }))
    }
}

/// A validator problem on the wire (SPEC §7's shape: severity, code, JSON Pointer, message).
fn problem(p: FlowProblem) -> Problem {
    Problem {
        code: p.code.as_str().to_string(),
        path: p.path,
        message: p.message,
        severity: p.severity.as_str().to_string(),
    }
}
