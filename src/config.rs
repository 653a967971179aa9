//! Runtime configuration of `nudge serve`, resolved from flags and `NUDGE_*` environment
//! variables by the CLI (see `cli::serve`), then handed to [`crate::app::App::build`].

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// The default listen address: loopback only, so a first run exposes nothing.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7600";
/// The default database: an SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://nudge.db";
/// The largest gRPC request accepted (4 MiB). A larger one is refused before any handler runs.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// How often gRPC health asks the database `SELECT 1` (docs/service.md, "Errors").
pub const DEFAULT_HEALTH_PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The default cap on open connections (`--max-connections`). Each takes a file descriptor:
/// the process's open-file limit must be above it.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 4096;

/// How long a connection may take to send what it owes, and how many may be open (docs/service.md, "Errors").
/// A peer that holds a connection without using it is cut off, so idle or slow connections
/// cannot pile up and starve the ones that work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// A new connection's first bytes, and each HTTP/1 request's headers, within this (10 s).
    /// HTTP/1 keep-alive waits for the next request's headers, so an idle HTTP/1 connection
    /// is closed after this too.
    pub header_timeout: Duration,
    /// A request's whole body within this of its headers (30 s); later: 408 and closed.
    pub body_timeout: Duration,
    /// A connection with no request in flight for this long is closed (60 s); HTTP/2 (gRPC)
    /// gets a GOAWAY.
    pub idle_timeout: Duration,
    /// Open connections at most; at the cap a new one takes the place of the oldest idle one
    /// (or is closed at once when every connection has a request in flight).
    pub max_connections: usize,
    /// HTTP/2 PING this often on a connection (30 s), …
    pub keepalive_interval: Duration,
    /// … which must be answered within this (10 s), else the connection is closed.
    pub keepalive_timeout: Duration,
    /// Concurrent HTTP/2 streams (gRPC calls) on one connection (256).
    pub max_concurrent_streams: u32,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: DEFAULT_MAX_CONNECTIONS as usize,
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(10),
            max_concurrent_streams: 256,
        }
    }
}

/// Which clock the server stamps times with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockKind {
    /// The host's clock.
    System,
    /// A clock that only moves when told to (tests, demos).
    Manual,
}

/// How log lines are written (always to stderr: stdout belongs to command output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

/// Everything `App::build` needs.
#[derive(Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub database_url: DatabaseUrl,
    pub clock: ClockKind,
    pub max_message_bytes: usize,
    /// Print a first API token on stderr when the database was empty. Off in tests, which
    /// create their own tokens.
    pub announce_first_token: bool,
    /// The public base URL providers call (`https://nudge.example.com`): Twilio signs the full
    /// URL it called, which a proxy in front of nudge hides. `None`: rebuilt from the request.
    pub public_url: Option<String>,
    /// Timeouts and the connection cap (tests make them short).
    pub limits: ConnLimits,
    /// How long connecting to the database at start may take (docs/service.md, "Errors": 10 s).
    pub database_connect_timeout: std::time::Duration,
    /// How the pool opens connections: PostgreSQL's timeouts and keepalives
    /// (`--database-statement-timeout`, docs/operations.md), SQLite's size cap (tests).
    pub database: crate::store::DbOptions,
    /// How often gRPC health probes the database, answering `NOT_SERVING` while it fails.
    pub health_probe_every: std::time::Duration,
    /// The quiet-hours policy for SMS and calls (`--quiet-hours`; docs/timing.md, "Holiday calendars and quiet hours").
    pub quiet_hours: crate::timing::QuietHours,
    /// When set, `GET /metrics` requires `Authorization: Bearer <token>` (docs/operations.md).
    pub metrics_token: Option<String>,
    /// How often the count-based gauges are refreshed (never per scrape).
    pub metrics_refresh: std::time::Duration,
    /// What webhook signatures' timestamps are checked against; `None`: the system clock.
    /// Tests set a fixed one, to replay providers' signed vectors.
    pub signature_clock: Option<crate::clock::SharedClock>,
    /// Amazon SNS as the SES webhook reaches it; `None`: the real one over HTTPS. Tests pin
    /// their own certificates.
    pub sns: Option<crate::runtime::sns::SharedSns>,
}

impl Config {
    pub fn new(listen: SocketAddr, database_url: DatabaseUrl, clock: ClockKind) -> Self {
        Config {
            listen,
            database_url,
            clock,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            announce_first_token: true,
            public_url: None,
            limits: ConnLimits::default(),
            database_connect_timeout: crate::store::DEFAULT_CONNECT_TIMEOUT,
            database: Default::default(),
            health_probe_every: DEFAULT_HEALTH_PROBE_EVERY,
            quiet_hours: Default::default(),
            metrics_token: None,
            metrics_refresh: crate::runtime::metrics::DEFAULT_REFRESH,
            signature_clock: None,
            sns: None,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("database_url", &self.database_url)
            .field("clock", &self.clock)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("public_url", &self.public_url)
            .field("limits", &self.limits)
            .field("database_connect_timeout", &self.database_connect_timeout)
            .field("database", &self.database)
            .field("health_probe_every", &self.health_probe_every)
            .field(
                "metrics_token",
                &self.metrics_token.as_ref().map(|_| "<set>"),
            )
            .field("metrics_refresh", &self.metrics_refresh)
            .finish()
    }
}

/// Where `--otlp-endpoint` sends request spans: an OpenTelemetry Collector's (or Jaeger's)
/// OTLP/HTTP base URL, `http://localhost:4318`. Spans go to its `/v1/traces`, as with
/// `OTEL_EXPORTER_OTLP_ENDPOINT`; a URL that already ends in `/v1/traces` is used as it is.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpEndpoint(url::Url);

impl OtlpEndpoint {
    pub fn parse(text: &str) -> Result<OtlpEndpoint, String> {
        const FIX: &str = "give the collector's OTLP/HTTP address, e.g. `http://localhost:4318`";
        let text = text.trim();
        if text.is_empty() {
            return Err(format!(
                "the URL is empty: {FIX}, or leave the flag and `NUDGE_OTLP_ENDPOINT` unset to \
                 export nothing"
            ));
        }
        let url = url::Url::parse(text)
            .map_err(|e| format!("`{}` is not a URL ({e}): {FIX}", redact(text)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "`{}` is not an http:// or https:// URL (OTLP/HTTP is the transport nudge \
                 speaks; a gRPC-only port such as 4317 will not do): {FIX}",
                redact(text)
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(format!("`{}` names no host: {FIX}", redact(text)));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "`{}` has a query or fragment, which OTLP/HTTP does not use: {FIX}",
                redact(text)
            ));
        }
        Ok(OtlpEndpoint(url))
    }

    /// The URL spans are posted to: the base URL's path followed by `/v1/traces`.
    pub fn traces_url(&self) -> String {
        let mut url = self.0.clone();
        let path = url.path().trim_end_matches('/').to_string();
        if !path.ends_with("/v1/traces") {
            url.set_path(&format!("{path}/v1/traces"));
        }
        url.to_string()
    }
}

impl fmt::Display for OtlpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(self.0.as_str()))
    }
}

impl fmt::Debug for OtlpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A database URL: `postgres://…` / `postgresql://…`, or an SQLite file given as
/// `sqlite://PATH`, `sqlite:PATH` or a bare path. Its `Debug`/`Display` hide any password.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Postgres(String),
    Sqlite(String),
}

impl DatabaseUrl {
    pub fn parse(text: &str) -> Result<DatabaseUrl, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(
                "the database URL is empty: use `sqlite://nudge.db` or `postgres://user@host/db`"
                    .into(),
            );
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(text.to_string()));
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        if path == ":memory:" {
            return Err("an in-memory SQLite database would vanish between connections and lose everything on exit; give a file, e.g. `sqlite://nudge.db`".into());
        }
        if path.is_empty() || path.contains("://") {
            return Err(format!(
                "`{}` is not a database URL nudge knows: use `sqlite://PATH` or `postgres://user@host/db`",
                redact(text)
            ));
        }
        Ok(DatabaseUrl::Sqlite(path.to_string()))
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseUrl::Postgres(url) => f.write_str(&redact(url)),
            DatabaseUrl::Sqlite(path) => write!(f, "sqlite://{path}"),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Replaces the password of `scheme://user:password@host` with `***`, so URLs can be logged.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_backends_and_hides_passwords() {
        assert_eq!(
            DatabaseUrl::parse("nudge.db").unwrap(),
            DatabaseUrl::Sqlite("nudge.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:///tmp/x.db").unwrap(),
            DatabaseUrl::Sqlite("/tmp/x.db".into())
        );
        let pg = DatabaseUrl::parse("postgres://me:s3cret@db/nudge").unwrap();
        assert_eq!(pg.to_string(), "postgres://me:***@db/nudge");
        assert!(DatabaseUrl::parse("mysql://x").is_err());
        assert!(DatabaseUrl::parse("").is_err());
        assert!(DatabaseUrl::parse("sqlite::memory:").is_err());
    }

    #[test]
    fn otlp_endpoints_post_to_v1_traces_and_bad_ones_say_why() {
        let traces = |s: &str| OtlpEndpoint::parse(s).unwrap().traces_url();
        assert_eq!(
            traces("http://localhost:4318"),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(traces("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(traces("https://c/otlp"), "https://c/otlp/v1/traces");
        assert_eq!(traces("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
        for (bad, says) in [
            ("localhost:4318", "not an http:// or https:// URL"),
            ("4318", "not a URL"),
            ("grpc://c:4317", "not an http:// or https:// URL"),
            ("http://c:4318/?x=1", "query or fragment"),
            ("", "unset to export nothing"),
        ] {
            let e = OtlpEndpoint::parse(bad).unwrap_err();
            assert!(
                e.contains(says) && e.contains("http://localhost:4318"),
                "{bad}: {e}"
            );
        }
        let secret = OtlpEndpoint::parse("https://me:s3cret@c").unwrap();
        assert_eq!(secret.to_string(), "https://me:***@c/");
    }
}
