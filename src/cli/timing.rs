//! `nudge timing`: the timing questions of docs/timing.md as JSON Lines, stdin to stdout, one answer line
//! per request in order, so thousands of questions run in one process.
//!
//! Blank (whitespace-only) lines are skipped: they are not requests, and a stray trailing line
//! should not fail a batch. A refused request answers `{"error": {"code", "message"}}`; the
//! process goes on and exits 1 at the end when any request was refused. Bytes that are not
//! UTF-8 read as U+FFFD, so the field holding them is refused.

use crate::timing::question::answer_line;
use anyhow::{bail, Context};
use clap::Args;
use std::io::{BufRead, BufWriter, Write};

/// What `nudge timing --help` prints after the usage: the request and answer format (docs/service.md).
const FORMAT: &str = r#"Reads JSON Lines on stdin and writes one JSON line per request, in order (blank lines are
skipped). Each request has `now` (RFC 3339) and exactly one question:

  "duration": "2bd" (or "2h30m", "1mo15d", a number of milliseconds), with `tz`, `holidays`
      -> {"at": "...Z"}
  "until": "mon 09:00" (or "2026-09-01 08:00", "+1bd 09:30", "2026-09-01T08:00:00Z",
      a calendar pattern such as "mon..fri 08:30"), with `tz`, `holidays`
      -> {"at": "...Z"}
  "window": {"days": ["mon", "tue"], "from": "09:00", "to": "17:00", "tz": "contact"} (or null:
      no send window), with `channel` (email, sms, call, linkedin), `contact`
      ({"tz": ..., "phone": ...}), `sender_tz`, `holidays`
      -> {"at": "...Z", "zones": [...]}: the earliest instant at or after `now` when the step
         may go (without jitter), and the zones whose windows applied
  "phone": "+13035551234"
      -> {"e164": "+13035551234", "zones": ["America/Denver"]}

`tz` defaults to UTC; `holidays` are YYYY-MM-DD dates that business days skip and windows treat
as closed. Instants in answers are RFC 3339 in UTC with a `Z` (milliseconds only when not zero).

A refused request answers {"error": {"code": "BAD_TZ", "message": "..."}} (the codes of
`nudge validate`); the next line is still answered, and the exit status is 1 at the end if any
request was refused. docs/timing.md has the whole grammar.

Example:
  $ echo '{"now": "2026-12-23T10:00:00Z", "duration": "2bd", "holidays": ["2026-12-24", "2026-12-25"]}' | nudge timing
  {"at":"2026-12-29T10:00:00Z"}"#;

#[derive(Debug, Args)]
#[command(after_help = FORMAT)]
pub struct TimingArgs {}

/// How many requests were answered, and how many of them were refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub answered: usize,
    pub refused: usize,
}

pub async fn run(_args: TimingArgs) -> anyhow::Result<()> {
    // Reading stdin blocks: keep it off the async workers.
    let tally = tokio::task::spawn_blocking(|| {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        answer_lines(stdin.lock(), BufWriter::new(stdout.lock()))
    })
    .await
    .context("the timing task stopped")??;
    if tally.refused > 0 {
        bail!(
            "{} of {} requests were refused (see their `error` answers)",
            tally.refused,
            tally.answered
        );
    }
    Ok(())
}

/// Answers every non-blank line of `input` on `output`, in order; flushes at the end.
pub fn answer_lines(mut input: impl BufRead, mut output: impl Write) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf).context("reading stdin")? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (answer, ok) = answer_line(line);
        tally.answered += 1;
        if !ok {
            tally.refused += 1;
        }
        output
            .write_all(answer.as_bytes())
            .context("writing stdout")?;
        output.write_all(b"\n").context("writing stdout")?;
    }
    output.flush().context("writing stdout")?;
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_order_skips_blank_lines_and_counts_refusals() {
        let input = "{\"now\":\"2026-03-01T10:00:00Z\",\"duration\":\"1h\"}\n\n   \n\
                     {\"now\":\"2026-03-01T10:00:00Z\",\"duration\":\"2H\"}\n\
                     {\"now\":\"2026-03-01T10:00:00Z\",\"duration\":\"1d\"}";
        let mut out = Vec::new();
        let tally = answer_lines(input.as_bytes(), &mut out).unwrap();
        assert_eq!(
            tally,
            Tally {
                answered: 3,
                refused: 1
            }
        );
        let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], r#"{"at":"2026-03-01T11:00:00Z"}"#);
        assert!(lines[1].contains("BAD_DURATION"), "{}", lines[1]);
        assert_eq!(lines[2], r#"{"at":"2026-03-02T10:00:00Z"}"#);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused_and_the_rest_answered() {
        let mut input = b"{\"now\":\"2026-03-01T10:00:00Z\",\"duration\":\"\xff\"}\n".to_vec();
        input.extend_from_slice(b"{\"now\":\"2026-03-01T10:00:00Z\",\"duration\":0}\n");
        let mut out = Vec::new();
        let tally = answer_lines(&input[..], &mut out).unwrap();
        assert_eq!(tally.refused, 1);
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().nth(1).unwrap().contains("10:00:00Z"), "{text}");
    }
}
