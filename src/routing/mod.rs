//! Signal routing for ONE enrollment (docs/signals.md, "Routing"). Pure: no I/O, `now` is a parameter.
//!
//! The question "where does a reply pick its branch?" is answered here, apart from the
//! interpreter that applies the answer:
//!
//! - [`mod@decide`] — the four rules of docs/signals.md, "Routing", in order: paused, exit, wake, buffer (an opt-out
//!   exits even a paused enrollment).
//! - [`precedence`] — which listed event a signal picks when it raises several.
//! - [`inbox`] — what an inbox signal is (auto-reply, out-of-office, bounce, …) and what a
//!   flow asks an out-of-office to do.
//! - [`buffer`] — signals nobody waited for: oldest first, consumed once, capped, expiring.
//!
//! Which enrollments a signal reaches (every active enrollment of the contact) is the storage
//! layer's query; everything after that is decided here.

#![warn(missing_docs)]

pub mod buffer;
pub mod decide;
pub mod inbox;
pub mod precedence;

pub use buffer::{BufferedSignal, Dropped, SignalBuffer, BUFFER_CAP, BUFFER_TTL_DAYS};
pub use decide::{decide, route, ExitCause, Route, Waiting};
pub use inbox::{Inbox, OooAction};
pub use precedence::pick;
