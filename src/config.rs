//! Runtime configuration of `nudge serve`, resolved from flags and `NUDGE_*` environment
//! variables by the CLI (see `cli::serve`), then handed to [`crate::app::App::build`].

use std::fmt;
use std::net::SocketAddr;

/// The default listen address: loopback only, so a first run exposes nothing.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7600";
/// The default database: an SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://nudge.db";
/// The largest gRPC request accepted (4 MiB). A larger one is refused before any handler runs.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// How often gRPC health asks the database `SELECT 1` (SPEC §13).
pub const DEFAULT_HEALTH_PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

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
    /// How long connecting to the database at start may take (SPEC §13: 10 s).
    pub database_connect_timeout: std::time::Duration,
    /// How often gRPC health probes the database, answering `NOT_SERVING` while it fails.
    pub health_probe_every: std::time::Duration,
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
            database_connect_timeout: crate::store::DEFAULT_CONNECT_TIMEOUT,
            health_probe_every: DEFAULT_HEALTH_PROBE_EVERY,
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
            .field("database_connect_timeout", &self.database_connect_timeout)
            .field("health_probe_every", &self.health_probe_every)
            .finish()
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
}
