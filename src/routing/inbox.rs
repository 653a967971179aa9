//! Inbox signals as routing sees them (docs/signals.md, "Inbox signals"): what kind of automatic mail a signal was, and
//! what a flow asks an out-of-office notice to do.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// What an inbox signal is, beyond the events it raises. A signal without one is an ordinary
/// signal (a reply, a call, a custom event, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum Inbox {
    /// An automatic answer that is not an out-of-office: raises `auto_reply`, never `reply`.
    AutoReply,
    /// An out-of-office notice: raises `out_of_office` and `auto_reply`.
    OutOfOffice {
        /// The first day back, when the text says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        return_date: Option<NaiveDate>,
        /// Why no date is used (a date that does not exist, none stated), for the journey.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A soft bounce (4.x.x): raises `bounced`.
    SoftBounce,
    /// A hard bounce (5.x.x, or the third soft one in 7 days): raises `bounced`, exits with
    /// `BOUNCED` and blocks email to the address.
    HardBounce,
    /// A spam complaint about nudge's email: exits with `COMPLAINED` and blocks email to the
    /// address, like a hard bounce.
    Complaint,
    /// SMS `START`/`UNSTOP`/`YES`: the opt-out of `channel` ends; journal-only otherwise.
    OptIn {
        /// The channel opted back into.
        channel: String,
    },
    /// Journal-only (SMS `HELP`/`INFO`, a delayed delivery): routes nowhere.
    Noted {
        /// What it was, for the journey.
        what: String,
    },
}

impl Inbox {
    /// Sent by a machine, not the contact: it never ends an out-of-office pause.
    pub fn is_automatic(&self) -> bool {
        matches!(
            self,
            Inbox::AutoReply | Inbox::OutOfOffice { .. } | Inbox::SoftBounce | Inbox::Noted { .. }
        )
    }
}

/// `settings.out_of_office.action` (docs/signals.md, "Inbox signals").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OooAction {
    /// Pause until the return date (plus `extra`), or `default_pause`; resume by itself.
    #[default]
    PauseUntilReturn,
    /// Route it like any other signal (buffered unless a wait lists it).
    Ignore,
    /// Exit with reason `OUT_OF_OFFICE`.
    Exit,
}

impl OooAction {
    /// The flow's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OooAction::PauseUntilReturn => "pause_until_return",
            OooAction::Ignore => "ignore",
            OooAction::Exit => "exit",
        }
    }

    /// The action spelled `text`, if it is one.
    pub fn parse(text: &str) -> Option<OooAction> {
        [
            OooAction::PauseUntilReturn,
            OooAction::Ignore,
            OooAction::Exit,
        ]
        .into_iter()
        .find(|a| a.as_str() == text)
    }
}
