//! `nudge token create`: make an API token and print it alone on stdout (so scripts can capture
//! it: `TOKEN=$(nudge token create)`): for the default account, for another (`--account ID`),
//! or an installation admin token that creates and lists accounts (`--admin`).

use super::DatabaseArgs;
use crate::auth::{self, Scope};
use crate::clock::{to_millis, Clock, SystemClock};
use crate::store::accounts;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token and print it (shown once; only its hash is kept).
    Create(CreateArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// `full` (the whole account) or `enrollment:ID` (one enrollment only).
    #[arg(long, default_value = "full", value_parser = Scope::parse)]
    pub scope: Scope,
    /// The account the token belongs to (`nudge account list` shows them).
    #[arg(long, default_value = accounts::DEFAULT_ACCOUNT_ID, conflicts_with = "admin")]
    pub account: String,
    /// An installation admin token instead: it creates and lists accounts
    /// (`AccountService.CreateAccount`, `ListAccounts`) and can read nothing inside one.
    #[arg(long, conflicts_with = "scope")]
    pub admin: bool,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

pub async fn run(command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create(args) => {
            let db = args.database.open_existing().await?;
            let now_ms = to_millis(SystemClock.now());
            if args.admin {
                // Kept under the installation's first account; it reads nothing of it.
                let token =
                    auth::create_token(&db, accounts::DEFAULT_ACCOUNT_ID, &Scope::Admin, now_ms)
                        .await?;
                println!("{token}");
                return Ok(());
            }
            if args.scope == Scope::Admin {
                anyhow::bail!("make an admin token with `--admin`, not `--scope admin`");
            }
            let account = args.account.as_str();
            if accounts::find(&db, account).await?.is_none() {
                anyhow::bail!(
                    "there is no account `{account}` in this database; `nudge account list` shows \
                     them, `nudge account create {account}` makes it"
                );
            }
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
