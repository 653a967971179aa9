//! `nudge.v1.TestClockService`: only registered (and listed by reflection) with the manual
//! clock. `Advance` moves virtual time and wakes everything due on the way, each at its own due
//! time, before it returns; the new time is saved, so a restart on the same database goes on
//! from it.

use super::convert::timestamp;
use crate::api::AppState;
use crate::clock::to_millis;
use crate::planner::Planner;
use crate::proto::v1 as pb;
use crate::proto::v1::test_clock_service_server::TestClockService;
use crate::runtime::Core;
use crate::service::ServiceError;
use chrono::{DateTime, Duration, Utc};
use tonic::{Request, Response, Status};

pub struct TestClockApi {
    pub state: AppState,
    /// One Advance at a time: two interleaved walks through due times would move the clock
    /// backwards under each other.
    pub lock: tokio::sync::Mutex<()>,
}

#[tonic::async_trait]
impl TestClockService for TestClockApi {
    async fn advance(
        &self,
        request: Request<pb::AdvanceRequest>,
    ) -> Result<Response<pb::AdvanceResponse>, Status> {
        let _guard = self.lock.lock().await;
        let clock =
            self.state.core.clock.as_manual().ok_or_else(|| {
                Status::failed_precondition("the server runs with the system clock")
            })?;
        let now = clock_now(&self.state.core);
        let target: DateTime<Utc> = match request.into_inner().target {
            Some(pb::advance_request::Target::ByMs(ms)) if ms >= 0 => {
                now + Duration::milliseconds(ms)
            }
            Some(pb::advance_request::Target::To(t)) => {
                DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32).ok_or_else(|| {
                    Status::invalid_argument("`to` is not a representable instant")
                })?
            }
            _ => {
                return Err(Status::invalid_argument(
                    "give `by_ms` (a non-negative number of milliseconds) or `to` (an instant)",
                ))
            }
        };
        if target < now {
            return Err(Status::invalid_argument(format!(
                "`to` is before the clock's now ({}); the test clock only moves forward",
                crate::engine::instant::format(now)
            )));
        }
        let woken = Planner::new(self.state.core.clone())
            .advance_to(clock, target)
            .await
            .map_err(|e| Status::from(ServiceError::from(e)))?;
        // Saved after the walk: a crash during it restarts at the last saved instant, and the
        // enrollments it had not woken yet are still due then.
        crate::store::clock::save(&self.state.core.db, to_millis(clock_now(&self.state.core)))
            .await
            .map_err(|e| Status::from(ServiceError::from(e)))?;
        Ok(Response::new(pb::AdvanceResponse {
            now: Some(timestamp(clock_now(&self.state.core))),
            woken: woken as i64,
        }))
    }

    async fn now(
        &self,
        _request: Request<pb::NowRequest>,
    ) -> Result<Response<pb::NowResponse>, Status> {
        Ok(Response::new(pb::NowResponse {
            now: Some(timestamp(clock_now(&self.state.core))),
        }))
    }
}

fn clock_now(core: &Core) -> DateTime<Utc> {
    core.clock.now()
}
