//! Inbound SMS: the opt-out keywords (SPEC §5.2).

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

#[cfg(test)]
mod tests {
    use super::*;

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
