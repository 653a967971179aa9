//! Logging setup, in one place. Lines go to stderr (stdout is for command output such as a new
//! token); the level comes from `RUST_LOG` (default `info`).

use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Calling it twice is harmless (the second call is ignored),
/// which lets tests switch logs on with `RUST_LOG` without coordinating.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
