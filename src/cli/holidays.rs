//! `nudge holidays CAL YEAR`: one shipped holiday calendar's days of one year (docs/timing.md, "Holiday calendars and quiet hours"), one
//! `YYYY-MM-DD name` line each, observed days included.

use crate::timing::holiday_calendars::{self, FIRST_YEAR, LAST_YEAR};
use anyhow::bail;
use clap::Args;
use std::io::Write;

#[derive(Debug, Args)]
pub struct HolidaysArgs {
    /// A country (`US`), a subdivision (`DE-BY`, `GB-ENG`), as the Python `holidays` package
    /// names them.
    pub calendar: String,
    /// A year the data covers (2020 to 2040).
    pub year: i32,
}

pub async fn run(args: HolidaysArgs) -> anyhow::Result<()> {
    let lines = lines(&args.calendar, args.year)?;
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The lines `nudge holidays` prints, or why not.
pub fn lines(code: &str, year: i32) -> anyhow::Result<Vec<String>> {
    let Some(cal) = holiday_calendars::calendar(code) else {
        let near = holiday_calendars::suggest(code)
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        bail!("`{code}` is not a holiday calendar{near}: give a country such as `US` or a subdivision such as `DE-BY`");
    };
    if !(FIRST_YEAR..=LAST_YEAR).contains(&year) {
        bail!("the shipped calendars cover {FIRST_YEAR} to {LAST_YEAR}, not {year}");
    }
    Ok(cal
        .year(year)
        .map(|(d, name)| format!("{} {name}", d.format("%Y-%m-%d")))
        .collect())
}
