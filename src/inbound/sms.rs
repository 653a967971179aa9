//! Inbound SMS: the opt-out keywords (docs/signals.md, "Kinds of signal and the events they raise").

/// The bodies that opt a contact out of SMS: carriers and the CTIA guidelines honour these
/// standard keywords, and Twilio stops a number on them too.
pub const OPT_OUT_KEYWORDS: [&str; 6] = ["STOP", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "STOPALL"];

/// Whether `body` is an opt-out: the whole body, trimmed, is one of [`OPT_OUT_KEYWORDS`] in any
/// case. "Stop calling me at work" is a reply, not an opt-out.
pub fn is_opt_out(body: &str) -> bool {
    let body = body.trim();
    OPT_OUT_KEYWORDS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(body))
}

/// The bodies that end an SMS opt-out (docs/signals.md, "Inbox signals"; the CTIA/Twilio opt-in keywords).
pub const OPT_IN_KEYWORDS: [&str; 3] = ["START", "UNSTOP", "YES"];
/// The bodies that ask for help: journal-only (the carrier or Twilio answers them).
pub const HELP_KEYWORDS: [&str; 2] = ["HELP", "INFO"];

/// What an inbound SMS body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    /// `STOP` and the others: an opt-out.
    OptOut,
    /// `START`, `UNSTOP`, `YES`: the opt-out ends.
    OptIn,
    /// `HELP`, `INFO`: journal-only.
    Help,
}

/// The keyword `body` is (the whole body, trimmed, any case), if any; anything else is a reply.
pub fn keyword(body: &str) -> Option<Keyword> {
    let body = body.trim();
    let is = |list: &[&str]| list.iter().any(|k| k.eq_ignore_ascii_case(body));
    if is(&OPT_OUT_KEYWORDS) {
        Some(Keyword::OptOut)
    } else if is(&OPT_IN_KEYWORDS) {
        Some(Keyword::OptIn)
    } else if is(&HELP_KEYWORDS) {
        Some(Keyword::Help)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_in_and_help() {
        for (body, want) in [
            ("START", Some(Keyword::OptIn)),
            (" unstop ", Some(Keyword::OptIn)),
            ("Yes", Some(Keyword::OptIn)),
            ("HELP", Some(Keyword::Help)),
            ("info\n", Some(Keyword::Help)),
            ("stop", Some(Keyword::OptOut)),
            ("yes please", None),
            ("help me with the invoice", None),
            ("", None),
        ] {
            assert_eq!(keyword(body), want, "{body:?}");
        }
    }

    #[test]
    fn keywords() {
        for body in [
            "STOP",
            "stop",
            " Stop\n",
            "UNSUBSCRIBE",
            "unsubscribe",
            "Cancel",
            "end",
            "QUIT",
            "stopall",
            "\tSTOPALL ",
        ] {
            assert!(is_opt_out(body), "{body:?}");
        }
        for body in [
            "",
            "STOP!",
            "please stop",
            "Stop calling me",
            "STOP ALL",
            "ending",
            "quite",
            "yes",
            "S T O P",
        ] {
            assert!(!is_opt_out(body), "{body:?}");
        }
    }
}
