//! The `nudge` binary: parse the command line, set up logging, run the subcommand, and print the
//! whole error chain on failure.

use clap::Parser;
use nudge::cli::Cli;
use nudge::config::LogFormat;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = cli.log_format;
    nudge::telemetry::init(format);
    match cli.run().await {
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
