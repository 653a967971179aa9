//! `nudge timing`: SPEC §7's timing questions as JSON Lines, stdin to stdout, one answer line
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

#[derive(Debug, Args)]
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
