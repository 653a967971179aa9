//! Which listed event a signal picks (docs/signals.md, "Routing" rule 3).
//!
//! A signal raises several events at once (an SMS reply raises `reply` and `reply:sms`; a
//! connected call raises `call_connected` and `reply`; a classified reply raises `intent:<x>`,
//! `reply` and `reply:<channel>`). When a `wait_for` lists more than one of them, the more
//! specific event wins — otherwise listing both would be pointless: `intent:<x>` before an exact
//! `reply:<channel>` before `reply`, `call_connected` before `reply`. Between two events of the
//! same rank (which no built-in signal produces) the one listed first in the step wins, so the
//! answer never depends on the order a signal happens to list its events in.

/// The generic event that every more specific one beats.
pub const REPLY: &str = "reply";

/// The listed event that a signal raising `raises` wakes, or `None` when it raises none of them.
pub fn pick<'a>(listed: &'a [String], raises: &[String]) -> Option<&'a str> {
    listed
        .iter()
        .enumerate()
        .filter(|(_, event)| raises.iter().any(|r| r == *event))
        .min_by_key(|(position, event)| (rank(event), *position))
        .map(|(_, event)| event.as_str())
}

/// The generic automatic event that `out_of_office` beats.
pub const AUTO_REPLY: &str = "auto_reply";

/// 0 for what the words said (`intent:<x>`), 1 for a specific event (`reply:<channel>`,
/// `call_connected`, `out_of_office`, any other), 2 for the generic `reply` and `auto_reply`.
fn rank(event: &str) -> u8 {
    if event.starts_with(crate::flow::events::INTENT_PREFIX) {
        0
    } else if event == REPLY || event == AUTO_REPLY {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn table() {
        // (listed in the step, raised by the signal, expected pick)
        let cases: &[(&[&str], &[&str], Option<&str>)] = &[
            // a connected call when both call_connected and reply are listed, in either order
            (
                &["reply", "call_connected"],
                &["call_connected", "reply"],
                Some("call_connected"),
            ),
            (
                &["call_connected", "reply"],
                &["call_connected", "reply"],
                Some("call_connected"),
            ),
            // an SMS reply when reply and reply:sms are listed
            (
                &["reply", "reply:sms"],
                &["reply", "reply:sms"],
                Some("reply:sms"),
            ),
            (
                &["reply:sms", "reply"],
                &["reply", "reply:sms"],
                Some("reply:sms"),
            ),
            // an email reply where only reply:sms and reply are listed: the generic one
            (
                &["reply:sms", "reply"],
                &["reply", "reply:email"],
                Some("reply"),
            ),
            // an email reply where only reply:sms is listed: nothing
            (&["reply:sms"], &["reply", "reply:email"], None),
            // a connected call where only reply is listed
            (
                &["reply", "meeting_booked"],
                &["call_connected", "reply"],
                Some("reply"),
            ),
            (
                &["meeting_booked"],
                &["meeting_booked"],
                Some("meeting_booked"),
            ),
            (&["payment.42"], &["payment.43"], None),
            // an out-of-office when both auto_reply and out_of_office are listed
            (
                &["auto_reply", "out_of_office"],
                &["out_of_office", "auto_reply"],
                Some("out_of_office"),
            ),
            (
                &["auto_reply", "reply"],
                &["out_of_office", "auto_reply"],
                Some("auto_reply"),
            ),
            (&[], &["reply"], None),
            // a classified reply: its intent before reply:<channel> before reply, in any order
            (
                &["reply", "reply:email", "intent:interested"],
                &["intent:interested", "reply", "reply:email"],
                Some("intent:interested"),
            ),
            (
                &["intent:not_now", "reply:email", "reply"],
                &["intent:interested", "reply", "reply:email"],
                Some("reply:email"),
            ),
            (
                &["intent:not_now", "reply"],
                &["intent:interested", "reply", "reply:sms"],
                Some("reply"),
            ),
            (
                &["intent:interested", "intent:not_now"],
                &["intent:not_now", "reply", "reply:sms"],
                Some("intent:not_now"),
            ),
            // an unclassified reply (no text) never takes an intent branch
            (&["intent:other"], &["reply", "reply:sms"], None),
        ];
        for (listed, raises, want) in cases {
            let listed = v(listed);
            assert_eq!(pick(&listed, &v(raises)), *want, "{listed:?} / {raises:?}");
        }
    }
}
