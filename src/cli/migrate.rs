//! `nudge migrate`: apply pending migrations and exit (`serve` also does this on start).

use super::DatabaseArgs;
use crate::store::Db;
use clap::Args;

#[derive(Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,
}

pub async fn run(args: MigrateArgs) -> anyhow::Result<()> {
    let url = args.database.database_url;
    let applied = Db::migrate(&url).await?;
    println!("applied {applied} migration(s) to {url}");
    Ok(())
}
