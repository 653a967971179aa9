//! The `nudge` binary: parse the command line, set up logging (and span export), run the
//! subcommand, flush the spans, and print the whole error chain on failure.

use clap::Parser;

/// `--features mimalloc`: the allocator measured against glibc's (docs/benchmarks.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
/// jemalloc, the default (feature `jemalloc`): fewer instructions a step than the system's
/// malloc, within the memory bound (docs/benchmarks.md); `--no-default-features` leaves it out.
#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
use nudge::cli::Cli;
use nudge::config::LogFormat;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = cli.log_format;
    let telemetry = match nudge::telemetry::init(format, cli.otlp_endpoint()) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("error: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    let result = cli.run().await;
    // After the server's graceful stop: the spans of its last requests are sent before exit.
    let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Once: a structured line for log collectors, a plain one for people.
            match format {
                LogFormat::Json => tracing::error!(error = format!("{error:#}"), "nudge failed"),
                LogFormat::Human => eprintln!("error: {error:#}"),
            }
            ExitCode::FAILURE
        }
    }
}
