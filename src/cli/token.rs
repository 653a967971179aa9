//! `nudge token create`: make an API token and print it alone on stdout (so scripts can capture
//! it: `TOKEN=$(nudge token create)`).

use super::DatabaseArgs;
use crate::auth::{self, Scope};
use crate::clock::{to_millis, Clock, SystemClock};
use crate::store::{accounts, Db};
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
            let url = args.database.database_url;
            Db::migrate(&url).await?;
            let db = Db::connect(&url).await?;
            let now_ms = to_millis(SystemClock.now());
            let (account, _) = accounts::ensure_default(&db, now_ms).await?;
            let token = auth::create_token(&db, &account.id, &args.scope, now_ms).await?;
            println!("{token}");
            Ok(())
        }
    }
}
