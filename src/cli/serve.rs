//! `nudge serve`: run the server until SIGINT/SIGTERM.

use super::DatabaseArgs;
use crate::app::{shutdown_signal, App};
use crate::config::{ClockKind, Config, OtlpEndpoint, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS};
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

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
    /// Open connections at most (gRPC and HTTP together). At the cap a new connection takes
    /// the place of the oldest idle one; keep the open-file limit (`ulimit -n`) above it.
    #[arg(long, env = "NUDGE_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds connecting to the database at start may take before the start fails.
    #[arg(long, env = "NUDGE_DATABASE_CONNECT_TIMEOUT", default_value_t = 10)]
    pub database_connect_timeout: u64,
    /// Seconds a PostgreSQL statement may run (`statement_timeout`); a request with no answer
    /// from PostgreSQL for 5 s more gives its connection up (a stalled link).
    #[arg(long, env = "NUDGE_DATABASE_STATEMENT_TIMEOUT", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub database_statement_timeout: u64,
    /// Seconds between gRPC health's database probes (`SELECT 1`; NOT_SERVING while it fails).
    #[arg(long, env = "NUDGE_HEALTH_PROBE_EVERY", default_value_t = 5)]
    pub health_probe_every: u64,
    /// Quiet hours for SMS and calls: `federal` (08:00–21:00 in every zone of the number) or
    /// `us_states` (also the stricter US state rules, by area code; docs/timing.md).
    #[arg(long, env = "NUDGE_QUIET_HOURS", default_value = "federal",
          value_parser = |s: &str| s.parse::<crate::timing::QuietHoursPolicy>().map_err(|e| e.message()))]
    pub quiet_hours: crate::timing::QuietHoursPolicy,
    /// A token `GET /metrics` then requires (`Authorization: Bearer <token>`); without one the
    /// metrics are open to whoever reaches the port.
    #[arg(long, env = "NUDGE_METRICS_TOKEN")]
    pub metrics_token: Option<String>,
    /// Seconds between refreshes of the count-based gauges (enrollments, waiting runs, pending
    /// dispatches); they are never counted per scrape.
    #[arg(long, env = "NUDGE_METRICS_REFRESH", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub metrics_refresh: u64,
    /// Export request spans over OTLP/HTTP (protobuf) to this collector, e.g.
    /// `http://localhost:4318` (spans go to its `/v1/traces`). Off when unset.
    #[arg(long, env = "NUDGE_OTLP_ENDPOINT", value_name = "URL", value_parser = OtlpEndpoint::parse)]
    pub otlp_endpoint: Option<OtlpEndpoint>,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = Config::new(args.listen, args.database.database_url, args.clock);
    config.public_url = args.public_url;
    config.limits.max_connections = args.max_connections as usize;
    config.database_connect_timeout = Duration::from_secs(args.database_connect_timeout);
    config.database.postgres.statement = Duration::from_secs(args.database_statement_timeout);
    config.database.postgres.answer = Duration::from_secs(args.database_statement_timeout + 5);
    config.health_probe_every = Duration::from_secs(args.health_probe_every.max(1));
    config.quiet_hours = crate::timing::QuietHours::policy(args.quiet_hours);
    config.metrics_token = args.metrics_token.filter(|t| !t.is_empty());
    config.metrics_refresh = Duration::from_secs(args.metrics_refresh);
    tracing::info!(?config, "starting");
    let app = App::build(config).await?;
    app.run(shutdown_signal()).await?;
    Ok(())
}
