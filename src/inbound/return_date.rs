//! The return date of an out-of-office notice (docs/signals.md, "Inbox signals"), read from its text.
//!
//! Languages: English, German, French, Spanish, Italian, Dutch, Portuguese, Polish, Czech.
//! Forms: ISO dates (`2026-12-28`), numeric day-first dates (`05.01.`, `5.1.2027`,
//! `05/01/2027`; English text reads `/` month-first, `12/28/2026`, as Outlook in en-US writes
//! it), a day and a month name (`5 janvier`, `12. Januar`, `12 de enero`, `5 stycznia`), a month
//! name and a day (`January 12th`, `Jan 12, 2027`), a weekday alone (`back on Monday`), and a
//! weekday before a date (`Monday, January 12`: the date wins).
//!
//! Which date: the first one a **return cue** comes right before ("back on", "returning",
//! "zurück am", "de retour le", "de vuelta el", "rientro il", "terug op", "de volta em",
//! "wracam", "zpět") is the return date; otherwise the last one an **until cue** comes right
//! before ("until", "bis", "jusqu'au", "hasta el", "fino al", "tot en met", "até", "do") or that
//! ends a range ("vom 22.12. bis 02.01.", "Dec 22 - Jan 2") names the last day away, so the
//! return is the day after. A date with neither cue is not guessed at.
//!
//! A date without a year is the next such date on or after the message's date. A date that
//! does not exist (`31.02.`) or a cued date before the message's date is [`ReturnDate::Unusable`]
//! with the reason, never a wrong date: the caller falls back to `default_pause`.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// What the text says about the return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReturnDate {
    /// The first day back.
    On(NaiveDate),
    /// A cued date that cannot be used, and why (for the journey).
    Unusable(String),
    /// No cued date in the text.
    NotStated,
}

/// The month names (and common abbreviations) of every language, 1-based month.
const MONTHS: &[(&str, u32)] = &[
    // English
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("mar", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sep", 9),
    ("sept", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("nov", 11),
    ("december", 12),
    ("dec", 12),
    // German
    ("januar", 1),
    ("jänner", 1),
    ("janner", 1),
    ("februar", 2),
    ("märz", 3),
    ("maerz", 3),
    ("marz", 3),
    ("mai", 5),
    ("juni", 6),
    ("juli", 7),
    ("oktober", 10),
    ("okt", 10),
    ("dezember", 12),
    ("dez", 12),
    // French
    ("janvier", 1),
    ("janv", 1),
    ("février", 2),
    ("fevrier", 2),
    ("févr", 2),
    ("mars", 3),
    ("avril", 4),
    ("avr", 4),
    ("juin", 6),
    ("juillet", 7),
    ("juil", 7),
    ("août", 8),
    ("aout", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
    ("decembre", 12),
    ("déc", 12),
    // Spanish
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    // Italian
    ("gennaio", 1),
    ("febbraio", 2),
    ("aprile", 4),
    ("maggio", 5),
    ("giugno", 6),
    ("luglio", 7),
    ("settembre", 9),
    ("ottobre", 10),
    ("dicembre", 12),
    // Dutch
    ("januari", 1),
    ("februari", 2),
    ("maart", 3),
    ("mei", 5),
    ("augustus", 8),
    // Portuguese
    ("janeiro", 1),
    ("fevereiro", 2),
    ("março", 3),
    ("marco", 3),
    ("maio", 5),
    ("junho", 6),
    ("julho", 7),
    ("setembro", 9),
    ("outubro", 10),
    ("novembro", 11),
    ("dezembro", 12),
    // Polish (genitive, as dates are written)
    ("stycznia", 1),
    ("lutego", 2),
    ("marca", 3),
    ("kwietnia", 4),
    ("maja", 5),
    ("czerwca", 6),
    ("lipca", 7),
    ("sierpnia", 8),
    ("września", 9),
    ("wrzesnia", 9),
    ("października", 10),
    ("pazdziernika", 10),
    ("listopada", 11),
    ("grudnia", 12),
    // Czech (genitive)
    ("ledna", 1),
    ("února", 2),
    ("unora", 2),
    ("března", 3),
    ("brezna", 3),
    ("dubna", 4),
    ("května", 5),
    ("kvetna", 5),
    ("června", 6),
    ("cervna", 6),
    ("července", 7),
    ("cervence", 7),
    ("srpna", 8),
    ("září", 9),
    ("zari", 9),
    ("října", 10),
    ("rijna", 10),
    ("listopadu", 11),
    ("prosince", 12),
];

/// Weekday names in every language (the forms used after "on"/"am"/"le"/"w"/"v").
const WEEKDAYS: &[(&str, Weekday)] = &[
    ("monday", Weekday::Mon),
    ("tuesday", Weekday::Tue),
    ("wednesday", Weekday::Wed),
    ("thursday", Weekday::Thu),
    ("friday", Weekday::Fri),
    ("saturday", Weekday::Sat),
    ("sunday", Weekday::Sun),
    ("montag", Weekday::Mon),
    ("dienstag", Weekday::Tue),
    ("mittwoch", Weekday::Wed),
    ("donnerstag", Weekday::Thu),
    ("freitag", Weekday::Fri),
    ("samstag", Weekday::Sat),
    ("sonntag", Weekday::Sun),
    ("lundi", Weekday::Mon),
    ("mardi", Weekday::Tue),
    ("mercredi", Weekday::Wed),
    ("jeudi", Weekday::Thu),
    ("vendredi", Weekday::Fri),
    ("samedi", Weekday::Sat),
    ("dimanche", Weekday::Sun),
    ("lunes", Weekday::Mon),
    ("martes", Weekday::Tue),
    ("miércoles", Weekday::Wed),
    ("miercoles", Weekday::Wed),
    ("jueves", Weekday::Thu),
    ("viernes", Weekday::Fri),
    ("sábado", Weekday::Sat),
    ("domingo", Weekday::Sun),
    ("lunedì", Weekday::Mon),
    ("lunedi", Weekday::Mon),
    ("martedì", Weekday::Tue),
    ("martedi", Weekday::Tue),
    ("mercoledì", Weekday::Wed),
    ("mercoledi", Weekday::Wed),
    ("giovedì", Weekday::Thu),
    ("giovedi", Weekday::Thu),
    ("venerdì", Weekday::Fri),
    ("venerdi", Weekday::Fri),
    ("maandag", Weekday::Mon),
    ("dinsdag", Weekday::Tue),
    ("woensdag", Weekday::Wed),
    ("donderdag", Weekday::Thu),
    ("vrijdag", Weekday::Fri),
    ("zaterdag", Weekday::Sat),
    ("zondag", Weekday::Sun),
    ("segunda-feira", Weekday::Mon),
    ("segunda", Weekday::Mon),
    ("terça-feira", Weekday::Tue),
    ("terça", Weekday::Tue),
    ("quarta-feira", Weekday::Wed),
    ("quarta", Weekday::Wed),
    ("quinta-feira", Weekday::Thu),
    ("quinta", Weekday::Thu),
    ("sexta-feira", Weekday::Fri),
    ("sexta", Weekday::Fri),
    ("poniedziałek", Weekday::Mon),
    ("poniedzialek", Weekday::Mon),
    ("wtorek", Weekday::Tue),
    ("środę", Weekday::Wed),
    ("sroda", Weekday::Wed),
    ("czwartek", Weekday::Thu),
    ("piątek", Weekday::Fri),
    ("piatek", Weekday::Fri),
    ("pondělí", Weekday::Mon),
    ("pondeli", Weekday::Mon),
    ("úterý", Weekday::Tue),
    ("utery", Weekday::Tue),
    ("středu", Weekday::Wed),
    ("stredu", Weekday::Wed),
    ("čtvrtek", Weekday::Thu),
    ("ctvrtek", Weekday::Thu),
    ("pátek", Weekday::Fri),
    ("patek", Weekday::Fri),
];

/// Word sequences that, right before a date, name the first day back.
const RETURN_CUES: &[&str] = &[
    // English
    "back on",
    "back in the office on",
    "back in office on",
    "back",
    "return on",
    "returning on",
    "returning",
    "return",
    "i return",
    "i will return on",
    "i will be back on",
    "i'll be back on",
    "in the office on",
    "available again on",
    "available from",
    "back from",
    // "will not return until X": X is the first day back (Lotus Notes' standard text).
    "not return until",
    "not be back until",
    "not be returning until",
    // German
    "zurück am",
    "zurück ab",
    "ab dem",
    "ab",
    "wieder am",
    "wieder ab",
    "wieder im büro am",
    "wieder im büro ab",
    "wieder erreichbar am",
    "wieder erreichbar ab",
    "zurueck am",
    // French
    "de retour le",
    "de retour à partir du",
    "retour le",
    "à partir du",
    "a partir du",
    "de retour",
    "je serai de retour le",
    // Spanish
    "de vuelta el",
    "regreso el",
    "regresaré el",
    "volveré el",
    "a partir del",
    "estaré de vuelta el",
    "de regreso el",
    // Italian
    "rientro il",
    "rientrerò il",
    "di ritorno il",
    "di nuovo in ufficio il",
    "dal",
    "a partire dal",
    "sarò di ritorno il",
    // Dutch
    "terug op",
    "vanaf",
    "weer aanwezig op",
    "weer op kantoor op",
    "ben terug op",
    // Portuguese
    "de volta em",
    "de volta a",
    "de volta no dia",
    "regresso a",
    "retorno em",
    "retorno no dia",
    "a partir de",
    // Polish
    "wracam",
    "wracam w",
    "z powrotem",
    "powrót",
    "od",
    "będę dostępny od",
    "będę dostępna od",
    // Czech
    "zpět",
    "zpět v",
    "vrátím se",
    "vrátím se v",
    "opět v kanceláři",
    "od",
];

/// Word sequences that, right before a date, name the last day away.
const UNTIL_CUES: &[&str] = &[
    "until",
    "till",
    "through",
    "thru",
    "to",
    "-",
    "–",
    "bis",
    "bis zum",
    "bis einschließlich",
    "bis einschliesslich",
    "jusqu'au",
    "jusqu’au",
    "au",
    "hasta el",
    "hasta",
    "al",
    "fino al",
    "fino a",
    "tot en met",
    "t/m",
    "tot",
    "até",
    "ate",
    "ao",
    "do",
    "a",
];

/// What a date found in the text was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Date(NaiveDate),
    /// A date that does not exist, as written.
    Bad(String),
}

struct Mention {
    found: Found,
    /// Token index where the mention starts.
    start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Num(String),
    Punct(char),
}

fn tokenize(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            let mut n = String::new();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_digit() {
                    n.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(Tok::Num(n));
        } else if c.is_alphabetic() || c == '\'' || c == '’' {
            let mut w = String::new();
            while let Some(&d) = chars.peek() {
                // Hyphens join Portuguese weekdays (`segunda-feira`).
                if d.is_alphabetic() || d == '\'' || d == '’' || (d == '-' && !w.is_empty()) {
                    w.extend(d.to_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            let w = w.trim_end_matches('-').to_string();
            out.push(Tok::Word(w));
        } else if c.is_whitespace() {
            chars.next();
        } else {
            out.push(Tok::Punct(c));
            chars.next();
        }
    }
    out
}

/// The month a lowercase month name (or abbreviation) of the nine languages names, with or
/// without its diacritics (`märz`, `marz`).
pub(crate) fn month_of(word: &str) -> Option<u32> {
    MONTHS.iter().find(|(n, _)| *n == word).map(|(_, m)| *m)
}

/// Every month name and abbreviation [`month_of`] knows.
pub(crate) fn month_names() -> impl Iterator<Item = &'static str> {
    MONTHS.iter().map(|(n, _)| *n)
}

fn weekday_of(word: &str) -> Option<Weekday> {
    WEEKDAYS.iter().find(|(n, _)| *n == word).map(|(_, d)| *d)
}

/// The return date in `text` (subject and body), for a message written on `sent`.
/// `english` reads `a/b` as month/day.
pub fn return_date(text: &str, sent: NaiveDate) -> ReturnDate {
    let toks = tokenize(text);
    let english = is_english(&toks);
    let mentions = mentions(&toks, sent, english);
    // A return cue wins, first one in the text.
    for m in &mentions {
        if cue_before(&toks, m.start, RETURN_CUES) {
            return judge(&m.found, sent, 0);
        }
    }
    // Otherwise the last until-cued date: the day after is the return.
    if let Some(m) = mentions
        .iter()
        .rev()
        .find(|m| cue_before(&toks, m.start, UNTIL_CUES))
    {
        return judge(&m.found, sent, 1);
    }
    ReturnDate::NotStated
}

fn judge(found: &Found, sent: NaiveDate, plus_days: i64) -> ReturnDate {
    match found {
        Found::Bad(text) => ReturnDate::Unusable(format!(
            "the return date `{text}` is not a date of the calendar"
        )),
        Found::Date(d) => {
            let back = *d + Duration::days(plus_days);
            if back < sent {
                ReturnDate::Unusable(format!(
                    "the return date {back} is before the message's date {sent}"
                ))
            } else {
                ReturnDate::On(back)
            }
        }
    }
}

/// English when the common English words outnumber the others' (decides `a/b` order only).
fn is_english(toks: &[Tok]) -> bool {
    let words = [
        "the", "i", "am", "will", "be", "office", "until", "back", "and", "out",
    ];
    let count = toks
        .iter()
        .filter(|t| matches!(t, Tok::Word(w) if words.contains(&w.as_str())))
        .count();
    count >= 2
}

/// True when the words right before token `at` end with one of `cues`.
fn cue_before(toks: &[Tok], at: usize, cues: &[&str]) -> bool {
    // The (up to) six tokens before, as text; punctuation like `-` counts as a word.
    let from = at.saturating_sub(6);
    let words: Vec<String> = toks[from..at]
        .iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w.clone()),
            Tok::Punct(c) if matches!(c, '-' | '–') => Some(c.to_string()),
            Tok::Punct('/') => Some("/".into()),
            Tok::Num(_) => Some("#".into()),
            // Commas and colons between a cue and its date are fine ("back on: Monday").
            _ => None,
        })
        .collect();
    // "t/m" is tokenized as t, /, m.
    let joined = words.join(" ").replace("t / m", "t/m");
    cues.iter()
        .any(|cue| joined == *cue || joined.ends_with(&format!(" {cue}")))
}

fn year_of(text: &str) -> Option<i32> {
    let n: i32 = text.parse().ok()?;
    match text.len() {
        2 => Some(2000 + n),
        4 => Some(n),
        _ => None,
    }
}

/// A date from its parts, the year inferred when absent: the next such date on or after `sent`.
fn make(day: u32, month: u32, year: Option<i32>, sent: NaiveDate, written: String) -> Found {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Found::Bad(written);
    }
    match year {
        Some(y) => NaiveDate::from_ymd_opt(y, month, day)
            .map(Found::Date)
            .unwrap_or(Found::Bad(written)),
        None => {
            // The next year (within 8, for 29 February) where the date exists on or after `sent`.
            for y in sent.year()..sent.year() + 8 {
                if let Some(d) = NaiveDate::from_ymd_opt(y, month, day) {
                    if d >= sent {
                        return Found::Date(d);
                    }
                }
            }
            Found::Bad(written)
        }
    }
}

fn num(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Num(n)) => Some(n),
        _ => None,
    }
}

fn word(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Word(w)) => Some(w),
        _ => None,
    }
}

fn punct(t: Option<&Tok>, c: char) -> bool {
    matches!(t, Some(Tok::Punct(p)) if *p == c)
}

/// Every date in the text, in order.
fn mentions(toks: &[Tok], sent: NaiveDate, english: bool) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if let Some((found, len)) = date_at(toks, i, sent, english) {
            out.push(Mention { found, start: i });
            i += len;
            continue;
        }
        // A weekday: followed by a date, the date wins (it starts here for the cue); alone, the
        // next such day after the message's date.
        if let Some(wd) = word(toks.get(i)).and_then(weekday_of) {
            let mut j = i + 1;
            if punct(toks.get(j), ',') {
                j += 1;
            }
            // "Monday the 12th", "lundi 5 janvier", "Montag, den 5. Januar"
            if matches!(
                word(toks.get(j)),
                Some("the" | "den" | "le" | "el" | "il" | "dia")
            ) {
                j += 1;
            }
            if let Some((found, len)) = date_at(toks, j, sent, english) {
                out.push(Mention { found, start: i });
                i = j + len;
                continue;
            }
            let mut d = sent + Duration::days(1);
            while d.weekday() != wd {
                d += Duration::days(1);
            }
            out.push(Mention {
                found: Found::Date(d),
                start: i,
            });
        }
        i += 1;
    }
    out
}

/// A date starting at token `i`, and how many tokens it spans.
fn date_at(toks: &[Tok], i: usize, sent: NaiveDate, english: bool) -> Option<(Found, usize)> {
    let a = num(toks.get(i));
    // ISO: 2026-12-28
    if let Some(y) = a.filter(|a| a.len() == 4) {
        if punct(toks.get(i + 1), '-') && punct(toks.get(i + 3), '-') {
            if let (Some(m), Some(d)) = (num(toks.get(i + 2)), num(toks.get(i + 4))) {
                let written = format!("{y}-{m}-{d}");
                let found = make(d.parse().ok()?, m.parse().ok()?, year_of(y), sent, written);
                return Some((found, 5));
            }
        }
        return None;
    }
    if let Some(a) = a.filter(|a| a.len() <= 2) {
        // Numeric: d.m.[y] or d/m/[y] (m/d in English)
        for sep in ['.', '/'] {
            if punct(toks.get(i + 1), sep) {
                if let Some(b) = num(toks.get(i + 2)).filter(|b| b.len() <= 2) {
                    let mut len = 3;
                    let mut year = None;
                    let mut written = format!("{a}{sep}{b}");
                    if punct(toks.get(i + 3), sep) {
                        len = 4;
                        written.push(sep);
                        if let Some(y) = num(toks.get(i + 4)).and_then(year_of) {
                            year = Some(y);
                            written.push_str(num(toks.get(i + 4)).unwrap_or(""));
                            len = 5;
                        }
                    }
                    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                    let (day, month) = if sep == '/' && english {
                        (b, a)
                    } else {
                        (a, b)
                    };
                    return Some((make(day, month, year, sent, written), len));
                }
            }
        }
        // Day then month name: "5 janvier", "5. Januar", "12 de enero", "12th of January"
        let mut j = i + 1;
        if punct(toks.get(j), '.') {
            j += 1;
        }
        if matches!(word(toks.get(j)), Some("st" | "nd" | "rd" | "th" | "er")) {
            j += 1;
        }
        if matches!(word(toks.get(j)), Some("de" | "of")) {
            j += 1;
        }
        if let Some(m) = word(toks.get(j)).and_then(month_of) {
            let mut len = j + 1 - i;
            if punct(toks.get(i + len), '.') {
                len += 1;
            }
            let (year, extra) = year_after(toks, i + len);
            let written = format!("{a} {}", word(toks.get(j)).unwrap_or(""));
            return Some((make(a.parse().ok()?, m, year, sent, written), len + extra));
        }
        return None;
    }
    // Month name then day: "January 12", "Jan. 12th, 2027"
    if let Some(m) = word(toks.get(i)).and_then(month_of) {
        let mut j = i + 1;
        if punct(toks.get(j), '.') {
            j += 1;
        }
        let d = num(toks.get(j)).filter(|d| d.len() <= 2)?;
        j += 1;
        if matches!(word(toks.get(j)), Some("st" | "nd" | "rd" | "th")) {
            j += 1;
        }
        let (year, extra) = year_after(toks, j);
        let written = format!("{} {d}", word(toks.get(i)).unwrap_or(""));
        return Some((make(d.parse().ok()?, m, year, sent, written), j - i + extra));
    }
    None
}

/// An optional year after a date: `, 2027` or ` 2027` (also `de 2027`); its length in tokens.
fn year_after(toks: &[Tok], at: usize) -> (Option<i32>, usize) {
    let mut j = at;
    if punct(toks.get(j), ',') {
        j += 1;
    }
    if matches!(word(toks.get(j)), Some("de")) {
        j += 1;
    }
    match num(toks.get(j)).filter(|y| y.len() == 4).and_then(year_of) {
        Some(y) => (Some(y), j + 1 - at),
        None => (None, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn forms_in_every_language() {
        // Sent Tuesday 2026-12-22.
        let sent = d(2026, 12, 22);
        let cases: &[(&str, ReturnDate)] = &[
            (
                "I will be back on Monday, January 11.",
                ReturnDate::On(d(2027, 1, 11)),
            ),
            ("I'm returning 2026-12-28.", ReturnDate::On(d(2026, 12, 28))),
            (
                "I am out of the office until January 4th, 2027.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Out 12/23 - 1/3, back on Monday",
                ReturnDate::On(d(2026, 12, 28)),
            ),
            ("I'll be back on Monday.", ReturnDate::On(d(2026, 12, 28))),
            (
                "Ich bin ab dem 05.01. wieder im Büro.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Ich bin bis zum 04.01.2027 nicht erreichbar.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Ich bin zurück am 5. Januar.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Je serai de retour le 5 janvier.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Absent jusqu'au 4 janvier 2027 inclus.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Estaré fuera de la oficina hasta el 4 de enero.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Sarò fuori ufficio fino al 6 gennaio.",
                ReturnDate::On(d(2027, 1, 7)),
            ),
            (
                "Ik ben afwezig tot en met 3 januari.",
                ReturnDate::On(d(2027, 1, 4)),
            ),
            (
                "Estarei de volta em 4 de janeiro.",
                ReturnDate::On(d(2027, 1, 4)),
            ),
            (
                "Jestem na urlopie do 4 stycznia.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            (
                "Jsem na dovolené do 4. ledna.",
                ReturnDate::On(d(2027, 1, 5)),
            ),
            ("Wracam 7 stycznia.", ReturnDate::On(d(2027, 1, 7))),
            ("Vrátím se v pondělí.", ReturnDate::On(d(2026, 12, 28))),
            (
                "Ich bin vom 22.12. bis 03.01. im Urlaub.",
                ReturnDate::On(d(2027, 1, 4)),
            ),
            ("Thanks for your message.", ReturnDate::NotStated),
            ("Meeting on 12/30 at 3pm", ReturnDate::NotStated),
        ];
        for (text, want) in cases {
            assert_eq!(return_date(text, sent), *want, "{text}");
        }
    }

    #[test]
    fn bad_dates_are_unusable_not_guessed() {
        let sent = d(2026, 12, 22);
        assert!(matches!(
            return_date("Ich bin ab dem 31.02. wieder da.", sent),
            ReturnDate::Unusable(m) if m.contains("31.02")
        ));
        assert!(matches!(
            return_date("I am back on 2025-01-05.", sent),
            ReturnDate::Unusable(m) if m.contains("before")
        ));
        // A year-less date never lands before the message: 29 February goes to a leap year.
        assert_eq!(
            return_date("back on 29.02.", sent),
            ReturnDate::On(d(2028, 2, 29))
        );
    }
}
