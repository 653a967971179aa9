//! `nudge.v1.SignalService`: thin adapter over [`crate::service::tasks`] (signals and events
//! join this service later).

use super::auth::principal;
use super::convert::{opt_timestamp, timestamp};
use crate::api::AppState;
use crate::clock::from_millis;
use crate::proto::v1 as pb;
use crate::proto::v1::signal_service_server::SignalService;
use crate::service::tasks;
use crate::store::enrollments::TaskRow;
use tonic::{Request, Response, Status};

pub struct SignalApi {
    pub state: AppState,
}

impl From<TaskRow> for pb::Task {
    fn from(t: TaskRow) -> pb::Task {
        pb::Task {
            id: t.id,
            enrollment_id: t.enrollment_id,
            run: t.run,
            kind: t.kind,
            step: t.step,
            status: t.status,
            outcome: t.outcome.unwrap_or_default(),
            params: t.params,
            due_by: opt_timestamp(t.due_by.map(from_millis)),
            created_at: Some(timestamp(from_millis(t.created_at))),
            completed_at: opt_timestamp(t.completed_at.map(from_millis)),
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
            &self.state,
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
        let (task, signalled) = tasks::complete(&self.state, &who, &r.task_id, &r.outcome).await?;
        Ok(Response::new(pb::CompleteTaskResponse {
            task: Some(task.into()),
            signalled: signalled as i32,
        }))
    }
}
