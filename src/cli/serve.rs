//! `nudge serve`: run the server until SIGINT/SIGTERM.

use super::DatabaseArgs;
use crate::app::{shutdown_signal, App};
use crate::config::{ClockKind, Config, DEFAULT_LISTEN};
use clap::Args;
use std::net::SocketAddr;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address for gRPC and HTTP (one port). Use `0.0.0.0:7600` to accept remote clients.
    #[arg(long, env = "NUDGE_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// `system`, or `manual` for a clock that only moves when told to (tests, demos).
    #[arg(long, env = "NUDGE_CLOCK", value_enum, default_value_t = ClockKind::System)]
    pub clock: ClockKind,
    /// The public base URL webhook providers call (e.g. `https://nudge.example.com`), when a
    /// proxy stands in front: Twilio signs the full URL it called.
    #[arg(long, env = "NUDGE_PUBLIC_URL")]
    pub public_url: Option<String>,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = Config::new(args.listen, args.database.database_url, args.clock);
    config.public_url = args.public_url;
    tracing::info!(?config, "starting");
    let app = App::build(config).await?;
    app.run(shutdown_signal()).await?;
    Ok(())
}
