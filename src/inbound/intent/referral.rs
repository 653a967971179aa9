//! The person a reply points to: another person's email address in the new text (not the
//! replier's own, not the contact's), with the name written right with it — before it (`Jane
//! Smith (jane@acme.com)`, `Jane Smith <jane@acme.com>`, `Jane Smith, jane@acme.com`, `Jane
//! Smith at jane@acme.com`) or in parentheses after it (`jane@acme.com (Jane Smith)`). Titles
//! (`Mr`, `Frau`, `Mme`, `Sra.`, …) are not part of the name. A name without an address is no
//! referral.

use super::Referral;
use std::sync::OnceLock;

/// Words that stand between a name and its address.
const JOINERS: &[&str] = &[
    "at", "unter", "a", "à", "em", "op", "via", "on", "an", "en", "au", "al", "per", "su", "is",
    "ist", "est", "es", "e", "è", "mail", "email", "e-mail", "correo", "courriel",
];
/// Capitalised words that start a sentence or address a person, never part of a name.
const NOT_NAMES: &[&str] = &[
    "please",
    "contact",
    "try",
    "email",
    "e-mail",
    "mail",
    "ask",
    "write",
    "reach",
    "talk",
    "speak",
    "bitte",
    "kontaktieren",
    "schreiben",
    "wenden",
    "fragen",
    "sie",
    "ihr",
    "contactez",
    "écrivez",
    "ecrivez",
    "voyez",
    "merci",
    "contacta",
    "contacte",
    "escribe",
    "escríbale",
    "hable",
    "habla",
    "por",
    "favor",
    "fale",
    "falar",
    "contate",
    "procure",
    "neem",
    "mail",
    "vraag",
    "graag",
    "contatti",
    "scriva",
    "scrivi",
    "chieda",
    "the",
    "der",
    "die",
    "das",
    "le",
    "la",
    "el",
    "o",
    "a",
    "de",
    "het",
    "il",
    "lo",
    "our",
    "my",
    "unser",
    "unsere",
    "notre",
    "nuestro",
    "nuestra",
    "nosso",
    "nossa",
    "onze",
    "nostro",
    "nostra",
    "cc",
    "hi",
    "hello",
    "hallo",
    "bonjour",
    "hola",
    "olá",
    "ola",
    "ciao",
    "dear",
    "thanks",
    "danke",
    "merci",
    "gracias",
    "obrigado",
    "obrigada",
    "bedankt",
    "grazie",
    "i",
    "ich",
    "je",
    "yo",
    "eu",
    "ik",
    "io",
    "she",
    "he",
    "sie",
    "er",
    "elle",
    "il",
    "ella",
    "él",
    "ele",
    "ela",
    "hij",
    "zij",
    "lei",
    "lui",
    "new",
    "neue",
    "neuer",
    "nouvelle",
    "nouveau",
    "nueva",
    "nuevo",
    "nova",
    "novo",
    "nieuwe",
    "nuova",
    "nuovo",
    "head",
    "ceo",
    "cto",
    "cfo",
    "coo",
    "it",
    "hr",
    "vp",
    "director",
    "manager",
];
/// Titles before a name.
const TITLES: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "frau", "herr", "mme", "m", "mlle", "monsieur", "madame",
    "sr", "sra", "srta", "don", "dona", "doña", "sig", "sigra", "dott", "dottssa", "dhr", "mevr",
    "mevrouw", "meneer", "ing", "mag",
];

fn email_re() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
            .expect("the email pattern compiles")
    })
}

/// The first address in `text` that is none of `own` (case-insensitive), with its name.
pub fn referral(text: &str, own: &[Option<&str>]) -> Option<Referral> {
    for m in email_re().find_iter(text) {
        let email = m.as_str().trim_end_matches('.');
        if own
            .iter()
            .flatten()
            .any(|o| bare_address(o).eq_ignore_ascii_case(email))
        {
            continue;
        }
        let name = name_before(&text[..m.start()]).or_else(|| name_after(&text[m.end()..]));
        return Some(Referral {
            email: email.to_string(),
            name,
        });
    }
    None
}

/// The address of `Ann Lee <ann@acme.com>` (a `From` header), or the text itself.
fn bare_address(text: &str) -> &str {
    let text = text.trim();
    match (text.rfind('<'), text.rfind('>')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].trim(),
        _ => text,
    }
}

/// The capitalised words that end `before`, past the joining punctuation and words.
fn name_before(before: &str) -> Option<String> {
    let words: Vec<&str> = before
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = words.len();
    // Skip what joins the name to the address: "(", "<", ",", ":", "-", "at", "unter".
    while i > 0 {
        let w = words[i - 1].trim_matches(|c: char| "(<[,:;–—-".contains(c));
        if w.is_empty() || JOINERS.contains(&w.to_lowercase().as_str()) {
            i -= 1;
        } else {
            break;
        }
    }
    let mut name: Vec<&str> = Vec::new();
    while i > 0 && name.len() < 3 {
        let raw = words[i - 1];
        // A word ending a clause ends the name too ("Thanks. Jane" keeps "Jane").
        let w = raw.trim_end_matches(|c: char| "(<[,:;–—-".contains(c));
        if w.len() != raw.len() && !name.is_empty() {
            break;
        }
        let w = w.trim_end_matches(['.', ',']);
        if !is_name_word(w) {
            break;
        }
        name.push(w);
        i -= 1;
        if raw.ends_with('.') && name.len() > 1 {
            break;
        }
    }
    name.reverse();
    // Leading words that are not names (a sentence's first word, a title) go.
    while let Some(first) = name.first() {
        let lower = first.to_lowercase();
        let lower = lower.trim_end_matches('.');
        if NOT_NAMES.contains(&lower) || TITLES.contains(&lower) {
            name.remove(0);
        } else {
            break;
        }
    }
    (!name.is_empty()).then(|| name.join(" "))
}

/// A name in parentheses right after the address: `jane@acme.com (Jane Smith)`.
fn name_after(after: &str) -> Option<String> {
    let rest = after.trim_start().strip_prefix('(')?;
    let inside = &rest[..rest.find(')')?];
    let words: Vec<&str> = inside
        .split_whitespace()
        .filter(|w| !TITLES.contains(&w.to_lowercase().trim_end_matches('.')))
        .collect();
    (!words.is_empty() && words.len() <= 3 && words.iter().all(|w| is_name_word(w)))
        .then(|| words.join(" "))
}

fn is_name_word(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(char::is_uppercase)
        && w.chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'' || c == '.')
        && !NOT_NAMES.contains(&w.to_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::{bare_address, referral};

    #[test]
    fn the_repliers_own_address_is_never_a_referral_however_written() {
        let text = "write to ann@acme.com or bob@acme.com";
        let own = [Some("Ann Lee <Ann@Acme.com>"), None];
        assert_eq!(referral(text, &own).unwrap().email, "bob@acme.com");
        assert_eq!(bare_address(" <x@y.z> "), "x@y.z");
        assert_eq!(bare_address("x@y.z"), "x@y.z");
    }

    #[test]
    fn addresses_and_their_names() {
        let own = [Some("ann@acme.com"), Some("ann@acme.com")];
        type Want<'a> = Option<(&'a str, Option<&'a str>)>;
        let cases: &[(&str, Want)] = &[
            (
                "I'm not the right person — try Jane Smith, jane@acme.com",
                Some(("jane@acme.com", Some("Jane Smith"))),
            ),
            (
                "Please contact Jane Smith (jane.smith@acme.com).",
                Some(("jane.smith@acme.com", Some("Jane Smith"))),
            ),
            (
                "Talk to our CTO <cto@acme.com>",
                Some(("cto@acme.com", None)),
            ),
            (
                "Wenden Sie sich an Frau Petra Maier: p.maier@beispiel.de",
                Some(("p.maier@beispiel.de", Some("Petra Maier"))),
            ),
            (
                "mail bob@acme.com (Bob Jones)",
                Some(("bob@acme.com", Some("Bob Jones"))),
            ),
            ("Ask Jane, she handles this.", None),
            ("Reach me at ann@acme.com", None),
            (
                "Contactez plutôt Marie Dupont à marie.dupont@exemple.fr.",
                Some(("marie.dupont@exemple.fr", Some("Marie Dupont"))),
            ),
        ];
        for (text, want) in cases {
            let got = referral(text, &own).map(|r| (r.email, r.name));
            let want = want.map(|(e, n)| (e.to_string(), n.map(str::to_string)));
            assert_eq!(got, want, "{text}");
        }
    }
}
