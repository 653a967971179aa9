//! `nudge classify`: reply intent as JSON Lines, stdin to stdout, one answer line per request in
//! order. A line that is not a request answers `{"error": {"code": "BAD_REQUEST", "message"}}`
//! and the next line is still answered; the exit status is 0 (blank lines are skipped).

use crate::inbound::intent::answer_line;
use anyhow::Context;
use clap::Args;
use std::io::{BufRead, BufWriter, Write};

/// What `nudge classify --help` prints after the usage.
const FORMAT: &str = r#"Reads JSON Lines on stdin and writes one JSON line per request, in order (blank lines are
skipped). A request: {"text": "...", "subject"?, "received_at"? (RFC 3339), "tz"? (IANA zone),
"from"? (the replier's address), "contact_email"? (the address the sequence wrote to)}.

The answer: {"intent": interested | not_now | not_interested | wrong_person | unsubscribe | other,
"confidence": 0..1, "language": ISO 639-1, "evidence": [the phrases that decided, as written],
"resume_on"?: "YYYY-MM-DD" (with not_now, when a date is named; read against received_at in tz),
"referral"?: {"email", "name"?}}. Quoted history and the signature are not judged.

Example:
  $ echo '{"text": "Not now, try me again in Q3", "received_at": "2026-12-04T09:00:00Z"}' | nudge classify
  {"confidence":0.98,"evidence":["Not now","try me again","Q3"],"intent":"not_now","language":"en","resume_on":"2027-07-01"}"#;

#[derive(Debug, Args)]
#[command(after_help = FORMAT)]
pub struct ClassifyArgs {}

pub async fn run(_args: ClassifyArgs) -> anyhow::Result<()> {
    // Reading stdin blocks: keep it off the async workers.
    tokio::task::spawn_blocking(|| {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        answer_lines(stdin.lock(), BufWriter::new(stdout.lock()))
    })
    .await
    .context("the classify task stopped")?
}

/// Answers every non-blank line of `input` on `output`, in order; flushes at the end.
pub fn answer_lines(mut input: impl BufRead, mut output: impl Write) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf).context("reading stdin")? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        if line.trim().is_empty() {
            continue;
        }
        serde_json::to_writer(&mut output, &answer_line(&line)).context("writing stdout")?;
        output.write_all(b"\n").context("writing stdout")?;
    }
    output.flush().context("writing stdout")
}
