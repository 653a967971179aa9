//! `nudge.v1.FlowService`: thin adapter over [`crate::service::flows`].

use super::auth::principal;
use crate::api::AppState;
use crate::engine::funnel::Metric;
use crate::flow::{Problem as FlowProblem, Severity};
use crate::inbound::intent::Intent;
use crate::proto::v1::flow_service_server::FlowService;
use crate::proto::v1::*;
use crate::service::enrollments::migrate;
use crate::service::{flow_stats, flows, ServiceError, Violation};
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

    async fn get_flow_stats(
        &self,
        request: Request<GetFlowStatsRequest>,
    ) -> Result<Response<GetFlowStatsResponse>, Status> {
        let who = principal(&request)?;
        let req = request.get_ref();
        let since = since(req.since.as_ref())?;
        let stats = flow_stats::get(
            &self.state.core,
            &who.account_id,
            &req.flow_id,
            req.version,
            since,
        )
        .await?;
        Ok(Response::new(stats.into()))
    }

    async fn set_variant_state(
        &self,
        request: Request<SetVariantStateRequest>,
    ) -> Result<Response<SetVariantStateResponse>, Status> {
        let who = principal(&request)?;
        let req = request.get_ref();
        let stop = match VariantState::try_from(req.state) {
            Ok(VariantState::Stopped) => true,
            Ok(VariantState::Running) => false,
            _ => {
                return Err(ServiceError::Invalid(vec![Violation::new(
                    "state",
                    crate::code::Code::BadSchema,
                    "set VARIANT_STATE_STOPPED to stop the variant or VARIANT_STATE_RUNNING to \
                     restart it (a winner is declared by the test, not set)",
                )])
                .into());
            }
        };
        let by = if req.by.trim().is_empty() {
            "a person (SetVariantState)"
        } else {
            req.by.trim()
        };
        let stats = flow_stats::set_variant_state(
            &self.state.core,
            &who.account_id,
            &req.flow_id,
            &flow_stats::VariantChange {
                step: &req.step,
                variant: &req.variant,
                stop,
                reason: req.reason.trim(),
                by,
            },
        )
        .await?;
        let experiment = stats
            .steps
            .into_iter()
            .find(|s| s.step == req.step)
            .and_then(|s| s.experiment)
            .map(Into::into);
        Ok(Response::new(SetVariantStateResponse { experiment }))
    }

    async fn migrate_enrollments(
        &self,
        request: Request<MigrateEnrollmentsRequest>,
    ) -> Result<Response<MigrateEnrollmentsResponse>, Status> {
        let who = principal(&request)?;
        let req = request.into_inner();
        let moved = migrate::migrate(
            &self.state.core,
            &who.account_id,
            migrate::MigrateRequest {
                flow_id: req.flow_id,
                from_versions: req.from_versions,
                to_version: req.to_version,
                step_map: req.step_map.into_iter().collect(),
                dry_run: req.dry_run,
                client_key: req.client_key,
            },
            &format!("token {}", who.token_id),
        )
        .await?;
        Ok(Response::new(MigrateEnrollmentsResponse {
            flow_id: moved.flow_id,
            to_version: moved.to_version,
            moved: moved.moved,
            groups: moved
                .groups
                .into_iter()
                .map(|g| MigrationGroup {
                    from_version: g.from_version,
                    from_step: g.from_step,
                    to_step: g.to_step,
                    count: g.count,
                    problem: g
                        .problem
                        .map(|c| c.as_str().to_string())
                        .unwrap_or_default(),
                })
                .collect(),
            client_key: moved.client_key,
            dry_run: moved.dry_run,
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

/// `GetFlowStatsRequest.since`, checked.
fn since(
    t: Option<&prost_types::Timestamp>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, ServiceError> {
    t.map(|t| {
        chrono::DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32).ok_or_else(|| {
            ServiceError::Invalid(vec![Violation::new(
                "since",
                crate::code::Code::BadSchema,
                "not a representable instant; send a timestamp within years 1 to 9999",
            )])
        })
    })
    .transpose()
}

impl From<flow_stats::FlowStats> for GetFlowStatsResponse {
    fn from(s: flow_stats::FlowStats) -> Self {
        GetFlowStatsResponse {
            flow_id: s.flow_id,
            name: s.name,
            version: s.version,
            steps: s.steps.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<flow_stats::StepStats> for StepStats {
    fn from(s: flow_stats::StepStats) -> Self {
        StepStats {
            entered: s.count(Metric::Entered),
            dispatched: s.count(Metric::Dispatched),
            sent: s.count(Metric::Sent),
            failed: s.count(Metric::Failed),
            bounced: s.count(Metric::Bounced),
            replies: s.count(Metric::Replies),
            intents: Intent::ALL
                .into_iter()
                .map(|i| (i.as_str().to_string(), s.count(Metric::Intent(i))))
                .collect(),
            meetings_booked: s.count(Metric::MeetingsBooked),
            opted_out: s.count(Metric::OptedOut),
            exited: s.count(Metric::Exited),
            experiment: s.experiment.map(Into::into),
            step: s.step,
            r#type: s.step_type,
        }
    }
}

impl From<flow_stats::ExperimentStats> for ExperimentStats {
    fn from(e: flow_stats::ExperimentStats) -> Self {
        ExperimentStats {
            name: e.key,
            goal: e.settings.goal.as_str().to_string(),
            alpha: e.settings.alpha,
            auto_stop: e.settings.auto_stop,
            sample_ratio_p: e.sample_ratio_p,
            sample_ratio_warning: e.sample_ratio_warning,
            variants: e.variants.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<flow_stats::VariantStats> for VariantStats {
    fn from(v: flow_stats::VariantStats) -> Self {
        let state = match v.state {
            flow_stats::VariantState::Running => VariantState::Running,
            flow_stats::VariantState::Stopped => VariantState::Stopped,
            flow_stats::VariantState::Winner => VariantState::Winner,
        };
        VariantStats {
            name: v.name,
            weight: v.weight,
            exposed: v.exposed,
            converted: v.converted,
            rate: v.rate,
            difference: v.comparison.map(|c| c.difference),
            ci_low: v.comparison.map(|c| c.ci_low),
            ci_high: v.comparison.map(|c| c.ci_high),
            p_value: v.comparison.map(|c| c.p_value),
            state: state as i32,
            stopped_reason: v.stopped_reason.unwrap_or_default(),
            note: v
                .not_yet
                .map(|n| n.as_str().to_string())
                .unwrap_or_default(),
        }
    }
}

/// A validator problem on the wire (docs/service.md's shape: severity, code, JSON Pointer, message).
fn problem(p: FlowProblem) -> Problem {
    Problem {
        code: p.code.as_str().to_string(),
        path: p.path,
        message: p.message,
        severity: p.severity.as_str().to_string(),
    }
}
