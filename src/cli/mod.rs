//! The command line: one binary, one file per subcommand.

pub mod healthcheck;
pub mod migrate;
pub mod serve;
pub mod simulate;
pub mod timing;
pub mod token;
pub mod validate;
pub mod webhooks;

use crate::config::{DatabaseUrl, LogFormat, DEFAULT_DATABASE_URL};
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "nudge",
    version,
    about = "Outreach sequence scheduler: a gRPC service that decides when each step of a sequence happens."
)]
pub struct Cli {
    /// Log format (logs go to stderr).
    #[arg(long, global = true, env = "NUDGE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve gRPC and HTTP on one port.
    Serve(serve::ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate(migrate::MigrateArgs),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Show the webhook signing secret (`X-Nudge-Signature`).
    #[command(subcommand)]
    WebhookSecret(webhooks::WebhookSecretCommand),
    /// Set the Twilio auth token inbound SMS webhooks are checked with.
    #[command(subcommand)]
    TwilioToken(webhooks::TwilioTokenCommand),
    /// Exit 0 when a local server answers `GET /healthz` (for container health checks).
    Healthcheck(healthcheck::HealthcheckArgs),
    /// Validate a flow document (exit 1 when it has an error).
    Validate(validate::ValidateArgs),
    /// Answer timing questions, JSON Lines from stdin to stdout.
    Timing(timing::TimingArgs),
    /// Run a flow through a scenario in virtual time, in memory.
    Simulate(simulate::SimulateArgs),
}

/// `--database-url`, shared by every subcommand that opens the database.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// `sqlite://PATH` (the default is a file in the working directory) or `postgres://…`.
    #[arg(long, env = "NUDGE_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, value_parser = DatabaseUrl::parse)]
    pub database_url: DatabaseUrl,
}

impl Cli {
    /// Runs the chosen subcommand.
    pub async fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Serve(args) => serve::run(args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::Token(cmd) => token::run(cmd).await,
            Command::Healthcheck(args) => healthcheck::run(args).await,
            Command::Validate(args) => validate::run(args).await,
            Command::Timing(args) => timing::run(args).await,
            Command::Simulate(args) => simulate::run(args).await,
            Command::WebhookSecret(cmd) => webhooks::secret(cmd).await,
            Command::TwilioToken(cmd) => webhooks::twilio(cmd).await,
        }
    }
}
