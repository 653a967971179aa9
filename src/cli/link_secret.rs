//! `nudge link-secret rotate`: replaces the server's link secret (docs/flows.md, "approval"), so every signed
//! link sent before (approval pages, unsubscribe links) stops working at once — what to do when
//! links may have leaked.

use super::DatabaseArgs;
use crate::clock::{to_millis, Clock, SystemClock};
use crate::store::link_secret;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum LinkSecretCommand {
    /// Make a new link secret; every approval and unsubscribe link signed before is refused.
    Rotate(DatabaseArgs),
}

pub async fn run(command: LinkSecretCommand) -> anyhow::Result<()> {
    match command {
        LinkSecretCommand::Rotate(args) => {
            let db = args.open_existing().await?;
            link_secret::rotate(&db, to_millis(SystemClock.now())).await?;
            eprintln!("nudge: rotated the link secret; links signed before are no longer valid");
            Ok(())
        }
    }
}
