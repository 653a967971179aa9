//! `nudge simulate FLOW.json [SCENARIO.json] [--json]`: one enrollment run through virtual time
//! in memory (docs/service.md), no database needed.
//!
//! The flow is validated first (errors are printed on stderr, exit 1). The scenario file holds
//! docs/service.md's scenario; `--start`, `--horizon`, `--contact-tz`, `--contact-phone`,
//! `--contact-email` and `--sender-tz` override its fields. Without a scenario file, `--start`
//! is required, the horizon defaults to one year after it, and there is no script. Output: a
//! readable table, or with `--json` exactly docs/service.md's answer as one line.

use crate::engine::campaign::render_campaign;
use crate::engine::instant;
use crate::engine::simulate::{render_table, simulate_any, Answer, Scenario, ScenarioContact};
use crate::flow::{report, Severity, ValidateOptions};
use crate::service::flows::judge;
use crate::service::simulate::parse_scenario;
use anyhow::{anyhow, bail, Context};
use chrono::{DateTime, Utc};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// How far a simulation without a scenario file runs.
const DEFAULT_HORIZON_DAYS: i64 = 365;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The flow document (JSON).
    pub flow: PathBuf,
    /// The scenario (JSON, docs/service.md): start, horizon, contact, sender_tz, input, seed, script.
    pub scenario: Option<PathBuf>,
    /// Print the timeline as docs/service.md's JSON answer instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The enrollment instant (RFC 3339), instead of the scenario's `start`.
    #[arg(long, value_parser = instant::parse, value_name = "RFC3339")]
    pub start: Option<DateTime<Utc>>,
    /// Where virtual time stops (RFC 3339), instead of the scenario's `horizon`.
    #[arg(long, value_parser = instant::parse, value_name = "RFC3339")]
    pub horizon: Option<DateTime<Utc>>,
    /// The contact's zone, e.g. `America/New_York`.
    #[arg(long, value_name = "TZ")]
    pub contact_tz: Option<String>,
    /// The contact's phone number in E.164 form.
    #[arg(long, value_name = "E164")]
    pub contact_phone: Option<String>,
    /// The contact's email address.
    #[arg(long, value_name = "EMAIL")]
    pub contact_email: Option<String>,
    /// The sender's zone (for `send_window.tz: "sender"`).
    #[arg(long, value_name = "TZ")]
    pub sender_tz: Option<String>,
    /// The enrollment input as a JSON object, checked against the flow's `input` schema as
    /// `Enroll` checks it, e.g. `--input '{"demo_at": "2026-12-10T15:00:00Z"}'`.
    #[arg(long, value_name = "JSON", value_parser = parse_input)]
    pub input: Option<serde_json::Value>,
}

fn parse_input(text: &str) -> Result<serde_json::Value, String> {
    match serde_json::from_str(text) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(_) => Err("the input is a JSON object of field → value, e.g. '{\"demo_at\": \"2026-12-10T15:00:00Z\"}'".into()),
        Err(e) => Err(format!("the input is not JSON: {e}")),
    }
}

pub async fn run(args: SimulateArgs) -> anyhow::Result<()> {
    let flow_name = args.flow.display().to_string();
    let text =
        std::fs::read_to_string(&args.flow).with_context(|| format!("reading {flow_name}"))?;
    let validation = judge(&text, &ValidateOptions::default());
    let problems = report::render_text(&validation.problems);
    let Some(flow) = validation.flow else {
        eprint!("{problems}");
        let errors = validation
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        bail!("{flow_name}: not valid ({errors} error(s)); `nudge validate` explains each");
    };
    // Warnings do not stop the run, but the reader should see them.
    eprint!("{problems}");

    let scenario = scenario(&args)?;
    // The same checks as `TimingService.Simulate` (and `Enroll`): one line per problem.
    if let Err(problems) = crate::service::simulate::check_scenario(&flow, &scenario) {
        for p in &problems {
            eprintln!("{}: {}: {}", p.field, p.code, p.message);
        }
        bail!(
            "the scenario is not valid ({} problem(s)); an enrollment would be refused the same way",
            problems.len()
        );
    }
    let answer = tokio::task::spawn_blocking(move || simulate_any(&flow, &scenario))
        .await
        .context("the simulation stopped")?
        .map_err(|e| anyhow!("{}: {e}", e.code()))?;
    let mut out = std::io::stdout().lock();
    match (&answer, args.json) {
        (_, true) => writeln!(out, "{}", serde_json::to_string(&answer)?)?,
        (Answer::Single(timeline), false) => write!(out, "{}", render_table(timeline))?,
        (Answer::Campaign(campaign), false) => write!(out, "{}", render_campaign(campaign))?,
    }
    out.flush()?;
    Ok(())
}

/// The scenario file (or an empty scenario) with the flags applied.
fn scenario(args: &SimulateArgs) -> anyhow::Result<Scenario> {
    let mut scenario = match &args.scenario {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {name}"))?;
            parse_scenario(&text).map_err(|e| anyhow!("{name}: {e}"))?
        }
        None => {
            let start = args.start.ok_or_else(|| {
                anyhow!("give a SCENARIO.json, or at least `--start 2026-12-04T20:00:00Z`")
            })?;
            Scenario {
                start,
                horizon: start + chrono::Duration::days(DEFAULT_HORIZON_DAYS),
                contact: ScenarioContact::default(),
                sender_tz: "UTC".to_string(),
                input: serde_json::json!({}),
                seed: 0,
                script: Vec::new(),
                max_wait: None,
                quiet_hours: None,
                enrollment_id: None,
                sender: None,
                contacts: None,
                fetch: Default::default(),
            }
        }
    };
    if let Some(start) = args.start {
        scenario.start = start;
    }
    if let Some(horizon) = args.horizon {
        scenario.horizon = horizon;
    }
    if let Some(tz) = &args.contact_tz {
        scenario.contact.tz = Some(tz.clone());
    }
    if let Some(phone) = &args.contact_phone {
        scenario.contact.phone = Some(phone.clone());
    }
    if let Some(email) = &args.contact_email {
        scenario.contact.email = Some(email.clone());
    }
    if let Some(input) = &args.input {
        scenario.input = input.clone();
    }
    if let Some(tz) = &args.sender_tz {
        scenario.sender_tz = tz.clone();
    }
    Ok(scenario)
}
