//! `nudge token create`: make an API token and print it alone on stdout (so scripts can capture
//! it: `TOKEN=$(nudge token create)`).

use super::DatabaseArgs;
use crate::auth::{self, Scope};
use crate::clock::{to_millis, Clock, SystemClock};
use crate::store::accounts;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token for the default account and print it (shown once; only its hash is kept).
    Create(CreateArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// `full` (the whole account) or `enrollment:ID` (one enrollment only).
    #[arg(long, default_value = "full", value_parser = Scope::parse)]
    pub scope: Scope,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

pub async fn run(command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create(args) => {
            let db = args.database.open_existing().await?;
            let now_ms = to_millis(SystemClock.now());
            let account = accounts::DEFAULT_ACCOUNT_ID;
            // A token for an enrollment that does not exist would be refused on every call.
            if let Scope::Enrollment(id) = &args.scope {
                if crate::store::enrollments::get(&db, account, id)
                    .await?
                    .is_none()
                {
                    anyhow::bail!(
                        "there is no enrollment `{id}` in this database; give the id an Enroll \
                         answered (EnrollmentService.ListEnrollments lists them)"
                    );
                }
            }
            let token = auth::create_token(&db, account, &args.scope, now_ms).await?;
            println!("{token}");
            Ok(())
        }
    }
}
