//! Quoting what a caller sent inside a message a person reads, bounded (docs/service.md, "Errors").
//!
//! A message that echoes its input unbounded (a 20 KB id, a 10,000-step cycle) makes a gRPC
//! status larger than a client accepts in its trailers, and the client then sees
//! `RESOURCE_EXHAUSTED` instead of the real code. Every message that quotes input quotes it
//! through here. Pure: the timing core and the flow validator use it too.

/// The most characters of an input a message quotes.
pub const MAX_QUOTED_CHARS: usize = 200;

/// `text` in backticks, at most [`MAX_QUOTED_CHARS`] characters of it (then `…` and its
/// length), control characters escaped so the quote shows what was sent: `` `crm-4711` ``,
/// `` `a\u{0}b` ``.
pub fn quote(text: &str) -> String {
    format!("`{}`", clip(text))
}

/// `text` as a Rust-style string literal (`"2H"`), bounded like [`quote`]: the timing core's
/// quoting, which shows where a position points.
pub fn quote_debug(text: &str) -> String {
    let (head, rest) = split(text);
    match rest {
        0 => format!("{head:?}"),
        n => format!("{head:?}… ({} characters)", head.chars().count() + n),
    }
}

/// At most [`MAX_QUOTED_CHARS`] characters of `text` with control characters escaped; a
/// longer text ends in `…` and says how long it was.
pub fn clip(text: &str) -> String {
    let (head, rest) = split(text);
    let shown: String = head.chars().flat_map(escape).collect();
    match rest {
        0 => shown,
        n => format!("{shown}… ({} characters)", head.chars().count() + n),
    }
}

/// At most `max` characters of `message` (not an input: a whole message), ending in `…` when
/// cut.
pub fn truncate(message: &str, max: usize) -> String {
    match message.char_indices().nth(max) {
        None => message.to_string(),
        Some((end, _)) => format!("{}…", &message[..end]),
    }
}

/// Lists at most `shown` items joined by `, `, then "and N more": a long list of names (a
/// cycle's steps) in one message.
pub fn list<T: AsRef<str>>(items: &[T], shown: usize) -> String {
    let mut out = items
        .iter()
        .take(shown)
        .map(|i| i.as_ref())
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > shown {
        out.push_str(&format!(" and {} more", items.len() - shown));
    }
    out
}

/// The first [`MAX_QUOTED_CHARS`] characters and how many follow.
fn split(text: &str) -> (&str, usize) {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => (text, 0),
        Some((end, _)) => (&text[..end], text[end..].chars().count()),
    }
}

fn escape(ch: char) -> Box<dyn Iterator<Item = char>> {
    if ch.is_control() {
        Box::new(ch.escape_unicode())
    } else {
        Box::new(std::iter::once(ch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_bounded_and_show_control_characters() {
        assert_eq!(quote("crm-4711"), "`crm-4711`");
        assert_eq!(quote("a\0b"), "`a\\u{0}b`");
        let long = "x".repeat(20_000);
        let quoted = quote(&long);
        assert_eq!(
            quoted,
            format!("`{}… (20000 characters)`", "x".repeat(MAX_QUOTED_CHARS))
        );
        assert_eq!(quote_debug("2H"), "\"2H\"");
        assert!(quote_debug(&long).ends_with("… (20000 characters)"));
        assert!(quote_debug(&long).len() < MAX_QUOTED_CHARS + 30);
        // Characters, not bytes: a multi-byte text is cut on a character boundary.
        let wide = "ž".repeat(300);
        assert!(quote(&wide).contains("… (300 characters)"));
    }

    #[test]
    fn lists_and_messages_are_summarized() {
        assert_eq!(list(&["a", "b"], 3), "a, b");
        assert_eq!(list(&["a", "b", "c", "d"], 2), "a, b and 2 more");
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello", 3), "hel…");
    }
}
