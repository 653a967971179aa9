//! The command line: one binary, one file per subcommand.

pub mod account;
pub mod classify;
pub mod healthcheck;
pub mod holidays;
pub mod link_secret;
pub mod migrate;
pub mod migrate_enrollments;
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
    /// Move a flow's running enrollments to another version (a dry run unless --yes).
    MigrateEnrollments(migrate_enrollments::MigrateEnrollmentsArgs),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Manage the installation's accounts (one per customer of a CRM).
    #[command(subcommand)]
    Account(account::AccountCommand),
    /// Show the webhook signing secret (`X-Nudge-Signature`).
    #[command(subcommand)]
    WebhookSecret(webhooks::WebhookSecretCommand),
    /// Set what a provider's webhooks are checked with (docs/providers.md).
    #[command(subcommand)]
    ProviderSecret(webhooks::ProviderSecretCommand),
    /// Set the Twilio auth token inbound SMS webhooks are checked with.
    #[command(subcommand)]
    TwilioToken(webhooks::TwilioTokenCommand),
    /// Rotate the secret that signs approval and unsubscribe links.
    #[command(subcommand)]
    LinkSecret(link_secret::LinkSecretCommand),
    /// Exit 0 when a local server answers `GET /healthz` (for container health checks).
    Healthcheck(healthcheck::HealthcheckArgs),
    /// Validate a flow document (exit 1 when it has an error).
    Validate(validate::ValidateArgs),
    /// Answer timing questions, JSON Lines from stdin to stdout.
    Timing(timing::TimingArgs),
    /// Classify replies' intent, JSON Lines on stdin to stdout (offline).
    Classify(classify::ClassifyArgs),
    /// Run a flow through a scenario in virtual time, in memory.
    Simulate(simulate::SimulateArgs),
    /// Print a shipped holiday calendar's days of a year: `nudge holidays US 2027`.
    Holidays(holidays::HolidaysArgs),
}

/// `--database-url`, shared by every subcommand that opens the database.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// `sqlite://PATH` (the default is a file in the working directory) or `postgres://…`.
    #[arg(long, env = "NUDGE_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, value_parser = DatabaseUrl::parse)]
    pub database_url: DatabaseUrl,
}

impl DatabaseArgs {
    /// Opens the database of a server that has started before, for the commands that manage
    /// it (`token create`, `webhook-secret show`, `twilio-token set`). A SQLite file that does
    /// not exist is refused rather than created: a token minted into a new empty file in the
    /// wrong directory would be rejected by the real server without a word.
    pub async fn open_existing(&self) -> anyhow::Result<crate::store::Db> {
        use crate::clock::{to_millis, Clock, SystemClock};
        use crate::store::{accounts, Db};
        let url = &self.database_url;
        if let DatabaseUrl::Sqlite(path) = url {
            let file = std::path::Path::new(path);
            if !file.exists() {
                let shown = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
                anyhow::bail!(
                    "there is no database at {}: run this in the directory where `nudge serve` \
                     runs (it creates nudge.db there), or pass the server's --database-url \
                     (NUDGE_DATABASE_URL)",
                    shown.display()
                );
            }
        }
        Db::migrate(url).await?;
        let db = Db::connect(url).await?;
        let now_ms = to_millis(SystemClock.now());
        accounts::ensure_default(&db, now_ms).await?;
        crate::store::link_secret::ensure(&db, now_ms).await?;
        Ok(db)
    }
}

impl Cli {
    /// Where request spans are exported (`serve --otlp-endpoint`), for the logging setup that
    /// runs before the command.
    pub fn otlp_endpoint(&self) -> Option<&crate::config::OtlpEndpoint> {
        match &self.command {
            Command::Serve(args) => args.otlp_endpoint.as_ref(),
            _ => None,
        }
    }

    /// Runs the chosen subcommand.
    pub async fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Serve(args) => serve::run(args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::MigrateEnrollments(args) => migrate_enrollments::run(args).await,
            Command::Token(cmd) => token::run(cmd).await,
            Command::Account(cmd) => account::run(cmd).await,
            Command::Healthcheck(args) => healthcheck::run(args).await,
            Command::Validate(args) => validate::run(args).await,
            Command::Timing(args) => timing::run(args).await,
            Command::Classify(args) => classify::run(args).await,
            Command::Simulate(args) => simulate::run(args).await,
            Command::Holidays(args) => holidays::run(args).await,
            Command::WebhookSecret(cmd) => webhooks::secret(cmd).await,
            Command::ProviderSecret(cmd) => webhooks::provider(cmd).await,
            Command::TwilioToken(cmd) => webhooks::twilio(cmd).await,
            Command::LinkSecret(cmd) => link_secret::run(cmd).await,
        }
    }
}
