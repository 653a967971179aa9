//! `nudge validate FLOW.json [--json] [--max-wait 7d]`: the flow validator (docs/flows.md) on a file,
//! no database needed.
//!
//! Output: one line per problem (`path: CODE: message`) then `FLOW.json: valid` or a summary on
//! stderr; with `--json`, exactly docs/service.md's `{"valid", "problems"}` as one line on stdout. Exit
//! status 0 when valid (warnings allowed), 1 when not. A file that is not JSON is one
//! `BAD_SCHEMA` problem at the root (so `--json` still answers in its shape); a file that cannot
//! be read is an error on stderr, exit 1.

use crate::flow::{report, Severity, ValidateOptions};
use crate::service::flows::judge;
use crate::timing::Duration;
use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The flow document (JSON).
    pub flow: PathBuf,
    /// Print `{"valid": bool, "problems": [...]}` on stdout instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// The account's plan limit on the longest wait (docs/flows.md, "Plan limits"), e.g. `7d`: a longer static wait
    /// or timeout is `WAIT_EXCEEDS_LIMIT`.
    #[arg(long, value_parser = Duration::parse, value_name = "DURATION")]
    pub max_wait: Option<Duration>,
}

pub async fn run(args: ValidateArgs) -> anyhow::Result<()> {
    let name = args.flow.display().to_string();
    let text = std::fs::read_to_string(&args.flow).with_context(|| format!("reading {name}"))?;
    let opts = ValidateOptions {
        max_wait: args.max_wait,
        allowed_hosts: None,
    };
    let validation = judge(&text, &opts);
    let errors = validation
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    let warnings = validation.problems.len() - errors;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", report::render_json(&validation.problems))?;
    } else {
        write!(out, "{}", report::render_text(&validation.problems))?;
        if errors == 0 {
            writeln!(out, "{name}: valid{}", plural(", ", warnings, "warning"))?;
        }
    }
    out.flush()?;
    if errors > 0 {
        bail!(
            "{name}: not valid: {}{}",
            plural("", errors, "error"),
            plural(", ", warnings, "warning")
        );
    }
    Ok(())
}

/// `", 2 warnings"`, `", 1 warning"`, or nothing for zero.
fn plural(sep: &str, n: usize, what: &str) -> String {
    match n {
        0 => String::new(),
        1 => format!("{sep}1 {what}"),
        n => format!("{sep}{n} {what}s"),
    }
}
