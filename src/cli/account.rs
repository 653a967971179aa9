//! `nudge account create ID` and `nudge account list`: the installation's accounts, one per
//! customer of a CRM, managed from the host (the same as `AccountService.CreateAccount` and
//! `ListAccounts` with an admin token).

use super::DatabaseArgs;
use crate::clock::{Clock, SystemClock};
use crate::runtime::Core;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Create an account (a default sender in UTC, its own webhook secret) and print its id.
    Create(CreateArgs),
    /// Print every account: id and name, tab-separated, by id.
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The account's id, as webhooks name it (`?account=ID`): a-z, 0-9, `-`, `_`, at most 64.
    pub id: String,
    /// A name for people; the id when not given.
    #[arg(long, default_value = "")]
    pub name: String,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
}

pub async fn run(command: AccountCommand) -> anyhow::Result<()> {
    match command {
        AccountCommand::Create(args) => {
            let db = args.database.open_existing().await?;
            let core = Core::new(db, std::sync::Arc::new(SystemClock));
            let account =
                crate::service::accounts::create(&core, &args.id, &args.name, SystemClock.now())
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("{}", account.id);
            eprintln!(
                "created account `{}`; make its API token with `nudge token create --account {}`, \
                 and point its providers' webhooks at `…?account={}`",
                account.id, account.id, account.id
            );
            Ok(())
        }
        AccountCommand::List(args) => {
            let db = args.database.open_existing().await?;
            let core = Core::new(db, std::sync::Arc::new(SystemClock));
            let mut token = String::new();
            loop {
                let (page, next) = crate::service::accounts::list(&core, 500, &token)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                for a in page {
                    println!("{}\t{}", a.id, a.name);
                }
                if next.is_empty() {
                    return Ok(());
                }
                token = next;
            }
        }
    }
}
