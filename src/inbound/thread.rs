//! Matching an inbound email to the thread nudge started (docs/signals.md, "Kinds of signal and the events they raise"; docs/service.md, "Delivery"): the `Message-ID`s in
//! its `In-Reply-To` and `References` headers are the candidates; the storage layer looks them
//! up among the `Message-ID`s nudge assigned to its email dispatches.

/// The message ids in one header value, in the order written. Ids are angle-bracketed
/// (`<a@b>`, RFC 5322), separated by whitespace (folded lines included), commas, or nothing.
/// A value with no brackets at all (some clients drop them) is read as whitespace/comma
/// separated ids, each given its brackets, so it can still match.
pub fn message_ids(value: &str) -> Vec<String> {
    if !value.contains('<') {
        return value
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| t.contains('@'))
            .map(|t| format!("<{t}>"))
            .collect();
    }
    let mut ids = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find('<') {
        let after = &rest[start..];
        let Some(end) = after.find('>') else { break };
        let id: String = after[..=end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if id.len() > 2 {
            ids.push(id);
        }
        rest = &after[end + 1..];
    }
    ids
}

/// The candidate ids of a reply, most telling first and without repeats: `In-Reply-To` (the
/// message answered), then `References` from the newest (last) to the oldest.
pub fn candidates(in_reply_to: Option<&str>, references: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let refs = references.map(message_ids).unwrap_or_default();
    let all = in_reply_to
        .map(message_ids)
        .unwrap_or_default()
        .into_iter()
        .chain(refs.into_iter().rev());
    for id in all {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        let cases: &[(&str, &[&str])] = &[
            ("<en_1.3@nudge>", &["<en_1.3@nudge>"]),
            ("  <a@x>\r\n\t<b@y>", &["<a@x>", "<b@y>"]),
            ("<a@x>,<b@y>", &["<a@x>", "<b@y>"]),
            ("<a@x><b@y>", &["<a@x>", "<b@y>"]),
            ("<a@x>, <b@y>", &["<a@x>", "<b@y>"]),
            ("a@x b@y", &["<a@x>", "<b@y>"]),
            ("a@x, b@y", &["<a@x>", "<b@y>"]),
            ("", &[]),
            ("<>", &[]),
            ("<unterminated@x", &[]),
            ("Re: something", &[]),
        ];
        for (value, want) in cases {
            assert_eq!(message_ids(value), *want, "{value:?}");
        }
    }

    #[test]
    fn in_reply_to_first_then_references_newest_first() {
        let got = candidates(Some("<c@x>"), Some("<a@x> <b@x>\r\n <c@x>"));
        assert_eq!(got, ["<c@x>", "<b@x>", "<a@x>"]);
        assert_eq!(candidates(None, Some("<a@x> <b@x>")), ["<b@x>", "<a@x>"]);
        assert_eq!(candidates(Some("<a@x>"), None), ["<a@x>"]);
        assert!(candidates(None, None).is_empty());
    }

    #[test]
    fn nudge_ids_survive_the_round_trip() {
        let id = crate::engine::message_id("en_7f", 4);
        let got = candidates(Some(&format!(" {id}")), None);
        assert_eq!(
            crate::engine::parse_message_id(&got[0]),
            Some(("en_7f".to_string(), 4))
        );
    }
}
