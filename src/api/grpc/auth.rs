//! The auth layer in front of every nudge RPC: `authorization: Bearer <token>` metadata is
//! required (health checking and reflection stay open so probes and grpcurl work). The caller's
//! [`Principal`] is put in the request's extensions for handlers.

use crate::api::AppState;
use crate::auth::{self, AuthError, Principal, Scope};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tonic::Status;

/// Paths served without a token.
const PUBLIC_PREFIXES: [&str; 3] = [
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1.ServerReflection/",
    "/grpc.reflection.v1alpha.ServerReflection/",
];

/// RPCs an enrollment-scoped token may call; each handler also checks that the enrollment is
/// the token's own (`service::enrollments::check_scope`). Everything else is refused.
const ENROLLMENT_SCOPED_METHODS: [&str; 7] = [
    "/nudge.v1.EnrollmentService/GetEnrollment",
    "/nudge.v1.EnrollmentService/GetJourney",
    // Filtered to the token's own enrollment (`contact_journey_page`).
    "/nudge.v1.EnrollmentService/ListJourney",
    "/nudge.v1.EnrollmentService/Pause",
    "/nudge.v1.EnrollmentService/Resume",
    "/nudge.v1.EnrollmentService/Exit",
    "/nudge.v1.EnrollmentService/MoveTo",
];

/// RPCs about the installation's accounts: an admin token may call these and nothing else, and
/// no account's token may call them.
const ADMIN_METHODS: [&str; 2] = [
    "/nudge.v1.AccountService/CreateAccount",
    "/nudge.v1.AccountService/ListAccounts",
];

/// axum middleware: authenticate, authorize by method, attach the [`Principal`].
pub async fn require_token(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    if PUBLIC_PREFIXES.iter().any(|p| path.starts_with(p)) {
        return next.run(request).await;
    }
    let header = match request.headers().get(axum::http::header::AUTHORIZATION) {
        None => None,
        Some(value) => match value.to_str() {
            Ok(text) => Some(text.to_string()),
            Err(_) => return Status::from(AuthError::Malformed).into_http(),
        },
    };
    let principal = match auth::authenticate(&state.core.db, &state.tokens, header.as_deref()).await
    {
        Ok(principal) => principal,
        Err(error) => return Status::from(error).into_http(),
    };
    let admin_method = ADMIN_METHODS.contains(&path.as_str());
    let refused = match &principal.scope {
        Scope::Admin if !admin_method => Some(AuthError::Forbidden {
            scope: Scope::Admin,
        }),
        Scope::Admin => None,
        _ if admin_method => Some(AuthError::NeedsAdmin),
        Scope::Enrollment(_) if !ENROLLMENT_SCOPED_METHODS.contains(&path.as_str()) => {
            Some(AuthError::Forbidden {
                scope: principal.scope.clone(),
            })
        }
        _ => None,
    };
    if let Some(refused) = refused {
        return Status::from(refused).into_http();
    }
    request.extensions_mut().insert(principal);
    next.run(request).await
}

/// The caller of a request that passed [`require_token`].
pub fn principal<T>(request: &tonic::Request<T>) -> Result<Principal, Status> {
    request
        .extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::from(AuthError::Missing))
}

#[cfg(test)]
mod tests {
    use super::ENROLLMENT_SCOPED_METHODS;

    /// docs/service.md lists what an enrollment-scoped token may call: exactly this list.
    #[test]
    fn the_docs_list_the_enrollment_scoped_methods() {
        let docs = include_str!("../../../docs/service.md");
        let start = docs
            .find("An enrollment-scoped token may\n  call exactly these")
            .expect("the scopes paragraph");
        let end = start + docs[start..].find("(the list is").expect("its end");
        let listed: Vec<String> = docs[start..end]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim_start_matches("EnrollmentService.").to_string())
            .collect();
        let code: Vec<String> = ENROLLMENT_SCOPED_METHODS
            .iter()
            .map(|m| m.rsplit('/').next().unwrap().to_string())
            .collect();
        assert_eq!(listed, code);
    }
}
