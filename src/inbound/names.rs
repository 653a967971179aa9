//! Stored names of signal kinds that code outside this module tests for.

use super::SignalKind;

impl SignalKind {
    /// [`SignalKind::name`] of a reply, as stored in `signals.kind`: the kind whose words are
    /// read into an intent.
    pub const REPLY: &'static str = "reply";
    /// [`SignalKind::name`] of an opt-out, as stored in `signals.kind`.
    pub const OPT_OUT: &'static str = "opt_out";
    /// The names of the kinds that carry an [`crate::routing::Inbox`] class (docs/signals.md, "Inbox signals").
    pub const INBOX: [&'static str; 6] = [
        "auto_reply",
        "out_of_office",
        "bounce",
        "complaint",
        "opt_in",
        "help",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_out_name_is_the_stored_one() {
        assert_eq!(
            SignalKind::opt_out("sms").unwrap().name(),
            SignalKind::OPT_OUT
        );
        assert_eq!(SignalKind::reply("sms").unwrap().name(), SignalKind::REPLY);
    }
}
