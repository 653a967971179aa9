//! `nudge migrate-enrollments FLOW --to-version N`: an operator moves a flow's running
//! enrollments to another version from the host (the same as `FlowService.MigrateEnrollments`).
//! It always prints the dry run first, as a table, and moves nothing unless `--yes` is given; it
//! asks no question, so it runs the same in a terminal and a script.

use super::DatabaseArgs;
use crate::clock::SystemClock;
use crate::runtime::Core;
use crate::service::enrollments::migrate::{self, MigrateRequest, Migration};
use crate::store::accounts;
use clap::Args;
use std::collections::BTreeMap;

#[derive(Debug, Args)]
pub struct MigrateEnrollmentsArgs {
    /// The flow's id or name.
    pub flow: String,
    /// The version to move the enrollments to.
    #[arg(long)]
    pub to_version: i32,
    /// A version whose enrollments move (repeat for several); every older version when none.
    #[arg(long = "from-version")]
    pub from_versions: Vec<i32>,
    /// `OLD=NEW`: a current step that is called NEW in the new version (repeat for several).
    #[arg(long = "map", value_parser = parse_mapping)]
    pub step_map: Vec<(String, String)>,
    /// Move them (without it, only the dry run is printed).
    #[arg(long)]
    pub yes: bool,
    /// The move's idempotency key: the same command with the same key resumes or answers the
    /// same move.
    #[arg(long, default_value = "")]
    pub client_key: String,
    /// The account whose flow it is.
    #[arg(long, default_value = accounts::DEFAULT_ACCOUNT_ID)]
    pub account: String,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

fn parse_mapping(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() => {
            Ok((old.to_string(), new.to_string()))
        }
        _ => Err(format!(
            "`{text}` is not OLD=NEW: write the current step's id, `=`, and the new version's step id"
        )),
    }
}

/// The groups as an aligned table.
pub fn table(m: &Migration) -> String {
    let mut rows = vec![[
        "version".to_string(),
        "step".to_string(),
        "to step".to_string(),
        "count".to_string(),
        "problem".to_string(),
    ]];
    for g in &m.groups {
        rows.push([
            g.from_version.to_string(),
            if g.from_step.is_empty() {
                "(none)".into()
            } else {
                g.from_step.clone()
            },
            if g.to_step.is_empty() {
                "-".into()
            } else {
                g.to_step.clone()
            },
            g.count.to_string(),
            g.problem
                .map(|c| c.as_str().to_string())
                .unwrap_or_default(),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

pub async fn run(args: MigrateEnrollmentsArgs) -> anyhow::Result<()> {
    let db = args.database.open_existing().await?;
    let core = Core::new(db, std::sync::Arc::new(SystemClock));
    let step_map: BTreeMap<String, String> = args.step_map.iter().cloned().collect();
    let request = |dry_run: bool| MigrateRequest {
        flow_id: args.flow.clone(),
        from_versions: args.from_versions.clone(),
        to_version: args.to_version,
        step_map: step_map.clone(),
        dry_run,
        client_key: args.client_key.clone(),
    };
    let fail = |e: crate::service::ServiceError| anyhow::anyhow!("{e}");
    let plan = migrate::migrate(&core, &args.account, request(true), "command line")
        .await
        .map_err(fail)?;
    print!("{}", table(&plan));
    let total: i64 = plan.groups.iter().map(|g| g.count).sum();
    let blocked: i64 = plan
        .groups
        .iter()
        .filter(|g| g.problem.is_some())
        .map(|g| g.count)
        .sum();
    if blocked > 0 {
        anyhow::bail!(
            "{blocked} of {total} enrollment(s) have no place in version {}: map their steps with \
             --map OLD=NEW (a step of the same type); nothing moved",
            args.to_version
        );
    }
    if !args.yes {
        println!(
            "dry run: {total} enrollment(s) would move to version {}; nothing moved (add --yes to move them)",
            args.to_version
        );
        return Ok(());
    }
    let moved = migrate::migrate(&core, &args.account, request(false), "command line")
        .await
        .map_err(fail)?;
    println!(
        "moved {} enrollment(s) of flow {} to version {} (key {})",
        moved.moved, moved.flow_id, moved.to_version, moved.client_key
    );
    Ok(())
}
