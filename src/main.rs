//! The `nudge` binary: parse the command line, set up logging, run the subcommand, and print the
//! whole error chain on failure.

use clap::Parser;
use nudge::cli::Cli;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    nudge::telemetry::init(cli.log_format);
    match cli.run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = format!("{error:#}"), "nudge failed");
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
