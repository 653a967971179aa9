//! The date a `not_now` reply names, as the day to resume: read relative to the day the reply
//! arrived (in the contact's zone), in seven languages. The first date the text names counts:
//!
//! - an absolute date: `2027-03-03`, `03.03.` / `3.3.2027` (day first), `3/3` (month first in
//!   English, day first otherwise), `17-08` (day first, outside English), `March 3` / `3 March`
//!   / `3. März` / `3 de marzo` / `the 2nd of February` / `il primo marzo` / `15 ago`, `12 gen`,
//!   `3 mrt` (a short month with its day, outside English); without a year, the
//!   next such day after arrival;
//! - a month after a cue (`in March`, `im März`, `en mars`, `a partir de marzo`, `a marzo`,
//!   `early March`, `before April`, `come September`, `dès janvier`): the 1st of the next such
//!   month after the arrival's month;
//! - a quarter (`Q3`, `third quarter`, `3. Quartal`, `troisième trimestre`): its first day, the
//!   next such quarter that starts after arrival;
//! - next week / month / quarter / year, in each language: the Monday, the 1st, the quarter's or
//!   the year's first day;
//! - in N days / weeks / months (`in 3 weeks`, `in drei Monaten`, `dans 10 jours`, `d'ici 15
//!   jours`, `dentro de 2 meses`, `daqui a 3 semanas`, `over 2 weken`, `tra 2 mesi`, `within`,
//!   `innerhalb von`, `binnen`, `entro`; `in about 6 weeks`): that many after arrival;
//! - the new year after a cue (`after New Year`, `in the new year`, `nach Neujahr`, `après le
//!   nouvel an`, `después de año nuevo`, `dopo capodanno`): the next 1 January;
//! - a German calendar week (`KW 3`, `KW12`, `Kalenderwoche 3`): its Monday, the next such week.
//!
//! A "then" in a sentence with no date of its own ("write me then", "Mi scriva allora") points to
//! the last date before it. Anything vaguer ("after the holidays", "later this year", "in a few
//! weeks") names no date.

use super::tables::{tokenize, Token};
use chrono::{Datelike, Duration, Months, NaiveDate, Weekday};

/// Words that, right before a month name, make it a date ("in March", "ab Mai").
const MONTH_CUES: &[&str] = &[
    // "try me feb": a contact verb's object, then the month.
    "me",
    "in",
    "im",
    "en",
    "em",
    "a",
    "ad",
    "ab",
    "from",
    "vanaf",
    "de",
    "after",
    "nach",
    "apres",
    "despues",
    "depois",
    "dopo",
    "na",
    "early",
    "mid",
    "late",
    "end",
    "beginning",
    "anfang",
    "mitte",
    "ende",
    "debut",
    "fin",
    "mi",
    "principios",
    "finales",
    "inicio",
    "final",
    "meta",
    "eind",
    "begin",
    "half",
    "until",
    "bis",
    "jusqu",
    "hasta",
    "ate",
    "fino",
    "tot",
    "around",
    "um",
    "vers",
    "hacia",
    "rond",
    "verso",
    "of",
    "von",
    "du",
    "partir",
    "da",
    "dal",
    "del",
    "desde",
    "start",
    "starting",
    "courant",
    "entro",
    "para",
    "por",
    "per",
    "the",
    "le",
    "el",
    "al",
    "het",
    "den",
    "dem",
    "der",
    "before",
    "vor",
    "avant",
    "antes",
    "come",
    "des",
    "inizio",
    "prima",
    "voor",
    "di",
    "fim",
];

/// Ordinal words of the four quarters (folded), for "third quarter", "troisième trimestre".
const QUARTER_ORDINALS: &[(&str, u32)] = &[
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("ersten", 1),
    ("erste", 1),
    ("zweiten", 2),
    ("zweite", 2),
    ("dritten", 3),
    ("dritte", 3),
    ("vierten", 4),
    ("vierte", 4),
    ("premier", 1),
    ("deuxieme", 2),
    ("second", 2),
    ("troisieme", 3),
    ("quatrieme", 4),
    ("primer", 1),
    ("segundo", 2),
    ("tercer", 3),
    ("cuarto", 4),
    ("primeiro", 1),
    ("terceiro", 3),
    ("quarto", 4),
    ("eerste", 1),
    ("tweede", 2),
    ("derde", 3),
    ("vierde", 4),
    ("primo", 1),
    ("secondo", 2),
    ("terzo", 3),
];
const QUARTER_WORDS: &[&str] = &["quarter", "quartal", "trimestre", "kwartaal"];

/// Words of "next": before or after the unit ("next week", "semaine prochaine").
const NEXT_WORDS: &[&str] = &[
    "next",
    "nachste",
    "nachsten",
    "nachstes",
    "nachster",
    "kommende",
    "kommenden",
    "kommendes",
    "prochain",
    "prochaine",
    "proximo",
    "proxima",
    "volgende",
    "volgend",
    "komende",
    "komend",
    "prossimo",
    "prossima",
    "siguiente",
    "seguinte",
    "suivant",
    "suivante",
    "successivo",
    "successiva",
    "nxt",
    // "el mes entrante"
    "entrante",
    "prox",
    "pro",
    "prochaine",
    "vlg",
    "vlgnde",
    "volg",
];
/// Units: (word, unit).
const UNITS: &[(&str, Unit)] = &[
    ("week", Unit::Week),
    ("woche", Unit::Week),
    ("semaine", Unit::Week),
    ("semana", Unit::Week),
    ("settimana", Unit::Week),
    ("month", Unit::Month),
    ("monat", Unit::Month),
    ("mois", Unit::Month),
    ("mes", Unit::Month),
    ("maand", Unit::Month),
    ("mese", Unit::Month),
    ("quarter", Unit::Quarter),
    ("quartal", Unit::Quarter),
    ("trimestre", Unit::Quarter),
    ("kwartaal", Unit::Quarter),
    ("wk", Unit::Week),
    ("sett", Unit::Week),
    ("wo", Unit::Week),
    ("sem", Unit::Week),
    ("qtr", Unit::Quarter),
    ("year", Unit::Year),
    ("jahr", Unit::Year),
    ("annee", Unit::Year),
    ("an", Unit::Year),
    ("ano", Unit::Year),
    ("jaar", Unit::Year),
    ("anno", Unit::Year),
];
/// "in N …" words: the word before the number.
const IN_WORDS: &[&str] = &[
    "in",
    // "give me 3 wks", "gimme two weeks"
    "me",
    "gimme",
    "dans",
    "ici",
    "en",
    "em",
    "dentro",
    "daqui",
    "over",
    "binnen",
    "tra",
    "fra",
    "entro",
    "within",
    "innerhalb",
];
/// Words of approximation between "in" and a count ("in about 6 weeks"): the count stands.
const APPROXIMATELY: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "approx",
    "circa",
    "ca",
    "etwa",
    "ungefahr",
    "rund",
    "environ",
    "unos",
    "unas",
    "aproximadamente",
    "cerca",
    "uns",
    "umas",
    "ongeveer",
    "zo'n",
    "zon",
];

/// Plural (and singular) counting units.
const COUNT_UNITS: &[(&str, Unit)] = &[
    ("fortnight", Unit::Fortnight),
    ("fortnights", Unit::Fortnight),
    ("day", Unit::Day),
    ("days", Unit::Day),
    ("tag", Unit::Day),
    ("tagen", Unit::Day),
    ("tage", Unit::Day),
    ("jour", Unit::Day),
    ("jours", Unit::Day),
    ("dia", Unit::Day),
    ("dias", Unit::Day),
    ("dag", Unit::Day),
    ("dagen", Unit::Day),
    ("giorno", Unit::Day),
    ("giorni", Unit::Day),
    // Short forms a text message uses: "tra 10 gg", "in 3 wks" (not "sett", also September).
    ("gg", Unit::Day),
    ("week", Unit::Week),
    ("weeks", Unit::Week),
    ("woche", Unit::Week),
    ("wochen", Unit::Week),
    ("semaine", Unit::Week),
    ("semaines", Unit::Week),
    ("semana", Unit::Week),
    ("semanas", Unit::Week),
    ("weken", Unit::Week),
    ("settimana", Unit::Week),
    ("settimane", Unit::Week),
    ("wk", Unit::Week),
    ("wks", Unit::Week),
    ("month", Unit::Month),
    ("months", Unit::Month),
    ("monat", Unit::Month),
    ("monaten", Unit::Month),
    ("monate", Unit::Month),
    ("mois", Unit::Month),
    ("mes", Unit::Month),
    ("meses", Unit::Month),
    ("maand", Unit::Month),
    ("maanden", Unit::Month),
    ("mese", Unit::Month),
    ("mesi", Unit::Month),
    ("mths", Unit::Month),
    ("mos", Unit::Month),
];
/// Number words (folded) up to twelve, and "a"/"one" forms.
const NUMBERS: &[(&str, u32)] = &[
    ("a", 1),
    ("an", 1),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("einem", 1),
    ("einer", 1),
    ("ein", 1),
    ("zwei", 2),
    ("drei", 3),
    ("vier", 4),
    ("funf", 5),
    ("fuenf", 5),
    ("sechs", 6),
    ("sieben", 7),
    ("acht", 8),
    ("neun", 9),
    ("zehn", 10),
    ("zwolf", 12),
    ("un", 1),
    ("une", 1),
    ("deux", 2),
    ("trois", 3),
    ("quatre", 4),
    ("cinq", 5),
    ("six", 6),
    ("sept", 7),
    ("huit", 8),
    ("neuf", 9),
    ("dix", 10),
    ("douze", 12),
    ("uno", 1),
    ("una", 1),
    ("dos", 2),
    ("tres", 3),
    ("cuatro", 4),
    ("cinco", 5),
    ("seis", 6),
    ("siete", 7),
    ("ocho", 8),
    ("nueve", 9),
    ("diez", 10),
    ("doce", 12),
    ("um", 1),
    ("dois", 2),
    ("uma", 1),
    ("duas", 2),
    ("quatro", 4),
    ("sete", 7),
    ("oito", 8),
    ("nove", 9),
    ("dez", 10),
    ("een", 1),
    ("twee", 2),
    ("drie", 3),
    ("vijf", 5),
    ("zes", 6),
    ("zeven", 7),
    ("negen", 9),
    ("tien", 10),
    ("twaalf", 12),
    ("due", 2),
    ("tre", 3),
    ("quattro", 4),
    ("cinque", 5),
    ("sei", 6),
    ("sette", 7),
    ("otto", 8),
    ("dieci", 10),
    ("dodici", 12),
    ("quindici", 15),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Fortnight,
    Month,
    Quarter,
    Year,
}

/// The resume date `text` names, read on `arrival` (a date in the contact's zone).
pub fn resume_on(text: &str, arrival: NaiveDate, english: bool) -> Option<NaiveDate> {
    let tokens = tokenize(text);
    // Each date with where it starts (a byte offset) and whether it names a day.
    let mut found: Vec<(usize, bool, NaiveDate)> = numeric_dates(text, arrival, english)
        .into_iter()
        .map(|(at, d)| (at, true, d))
        .collect();
    for i in 0..tokens.len() {
        if let Some((d, day)) = at(&tokens, i, arrival, english) {
            found.push((tokens[i].start, day, d));
        }
    }
    // A "then" that points back ("off until the 5th, but budgets are set in Q2 — write me
    // then") names the last date before it; else one that is not the end of an absence
    // ("until the end of February … from March"), then the date the person asks to be
    // contacted on ("off on the 18th; mail me on the 19th"), then one that starts their time
    // ("closed in August … from September on"), then a named day over a month or a quarter,
    // then the first written.
    let then = then_at(&tokens, &found);
    let pointed = then.and_then(|t| {
        found
            .iter()
            .filter(|(at, _, _)| *at < t)
            .max_by_key(|(at, _, _)| *at)
            .map(|(at, _, _)| *at)
    });
    found
        .into_iter()
        .min_by_key(|(at, day, _)| {
            let i = tokens.iter().position(|t| t.end > *at).unwrap_or(0);
            (
                pointed != Some(*at),
                until_cue(&tokens, i),
                !contact_cue(&tokens, i),
                !from_cue(&tokens, i),
                !day,
                *at,
            )
        })
        .map(|(_, _, d)| d)
}

/// Where a word that points back to a date stands ("then", "dann", "alors", "entonces",
/// "então", "allora", "à ce moment-là", "nessa época") in a sentence that names no date of its
/// own ("dann gerne im März", "we'll have next year's budget by then"), after one that does: a
/// byte offset.
fn then_at(tokens: &[Token], found: &[(usize, bool, NaiveDate)]) -> Option<usize> {
    const THEN: &[&str] = &[
        "then", "dann", "alors", "entonces", "entao", "allora", "dan",
    ];
    const THEN_PAIRS: &[(&str, &str)] = &[
        ("moment", "la"),
        ("nessa", "epoca"),
        ("nesse", "momento"),
        ("ese", "momento"),
        ("dat", "moment"),
        ("quel", "momento"),
        ("diesem", "zeitpunkt"),
        ("that", "point"),
    ];
    (0..tokens.len()).find_map(|k| {
        let w = tokens[k].word.as_str();
        let next = tokens.get(k + 1).map_or("", |t| t.word.as_str());
        let then = THEN.contains(&w) || THEN_PAIRS.contains(&(w, next));
        if !then {
            return None;
        }
        let at = tokens[k].start;
        let start = (0..=k)
            .rev()
            .find(|&j| j == 0 || tokens[j].boundary >= super::tables::SENTENCE)
            .map_or(0, |j| tokens[j].start);
        let end = (k + 1..tokens.len())
            .find(|&j| tokens[j].boundary >= super::tables::SENTENCE)
            .map_or(usize::MAX, |j| tokens[j].start);
        let dated_here = found.iter().any(|(d, _, _)| *d >= start && *d < end);
        let dated_before = found.iter().any(|(d, _, _)| *d < start);
        (dated_before && !dated_here).then_some(at)
    })
}

/// Verbs of getting in touch again, in the seven languages (folded).
const CONTACT_CUES: &[&str] = &[
    "write",
    "drop",
    "hit",
    "text",
    "message",
    "nudge",
    "bump",
    "mail",
    "email",
    "call",
    "contact",
    "reach",
    "ping",
    "try",
    "ask",
    "shout",
    "follow",
    "circle",
    "check",
    "touch",
    "revisit",
    "reconnect",
    "talk",
    "speak",
    "hear",
    "schreiben",
    "versuchen",
    "probieren",
    "schreiben",
    "melden",
    "kontaktieren",
    "anrufen",
    "kommen",
    "sprechen",
    "mailen",
    "ecrivez",
    "ecris",
    "rappelez",
    "rappelle",
    "recontactez",
    "recontacter",
    "reprenez",
    "reprenons",
    "reprendre",
    "stuur",
    "revenez",
    "relancez",
    "relancer",
    "reprendre",
    "escribeme",
    "escribame",
    "escribenos",
    "contactame",
    "contacteme",
    "llamame",
    "llameme",
    "vuelve",
    "vuelva",
    "retomamos",
    "retomemos",
    "buscame",
    "volte",
    "contactar",
    "contacte",
    "ligue",
    "liga",
    "escreva",
    "escreve",
    "procure",
    "chama",
    "retomar",
    "bel",
    "contacteer",
    "benader",
    "scrivetemi",
    "scrivimi",
    "scriva",
    "chiami",
    "chiamami",
    "ricontattatemi",
    "ricontattami",
    "risentiamoci",
    "sentiamoci",
    "richiamatemi",
    "riparliamone",
    "aggiorniamoci",
];

/// Beginnings of the verbs of getting in touch (any person or tense).
const CONTACT_STEMS: &[&str] = &[
    "writ",
    "mail",
    "email",
    "call",
    "contact",
    "reach",
    "ping",
    "text",
    "txt",
    "schreib",
    "meld",
    "kontakt",
    "ruf",
    "ecri",
    "reecri",
    "rappel",
    "recontact",
    "relanc",
    "escrib",
    "llam",
    "volv",
    "retom",
    "busc",
    "volt",
    "escrev",
    "procur",
    "lig",
    "chama",
    "contat",
    "benader",
    "scriv",
    "chiam",
    "ricontatt",
    "risent",
    "richiam",
    "ripar",
    "aggiorn",
    "habl",
    "fala",
    "spre",
    "bell",
];

/// A verb of getting in touch within the eight words before `i` or the four after it, in the
/// same sentence.
fn contact_cue(tokens: &[Token], i: usize) -> bool {
    let is_cue = |k: usize| {
        let word = tokens[k].word.as_str();
        CONTACT_CUES.contains(&word)
            || CONTACT_STEMS.iter().any(|s| word.starts_with(s))
            // "Reviens-moi", "reviens vers moi", not "je reviens le 6" (I am back on the 6th).
            || (word == "reviens"
                && tokens
                    .get(k + 1)
                    .is_some_and(|t| matches!(t.word.as_str(), "moi" | "vers")))
    };
    let mut j = i;
    for _ in 0..8 {
        if j == 0 || tokens[j].boundary >= super::tables::SENTENCE {
            break;
        }
        j -= 1;
        if is_cue(j) {
            return true;
        }
    }
    for k in (i + 1..tokens.len()).take(4) {
        if tokens[k].boundary >= super::tables::SENTENCE {
            break;
        }
        if is_cue(k) {
            return true;
        }
    }
    false
}

/// "from", "ab", "vanaf", "à partir de", "desde", "da … in poi" right before `i` (two words
/// back at most): the date starts the person's time ("Ad agosto siamo chiusi … Da settembre in
/// poi sono tutto suo").
fn from_cue(tokens: &[Token], i: usize) -> bool {
    const FROM: &[&str] = &[
        "from", "starting", "ab", "vanaf", "partir", "des", "desde", "da", "dal", "dalla",
    ];
    tokens[i.saturating_sub(2)..i]
        .iter()
        .any(|t| FROM.contains(&t.word.as_str()))
}

/// "until", "bis", "tot en met", "jusqu'au", "hasta", "até", "fino al" within the four words
/// before `i` ("until the end of August"): the date ends an absence.
fn until_cue(tokens: &[Token], i: usize) -> bool {
    const UNTIL: &[&str] = &[
        "until", "till", "bis", "tot", "jusqu", "hasta", "ate", "fino",
    ];
    let before = &tokens[i.saturating_sub(4)..i];
    before.iter().any(|t| UNTIL.contains(&t.word.as_str()))
        // Dutch "t/m" (tot en met).
        || before.windows(2).any(|w| w[0].word == "t" && w[1].word == "m")
}

/// A date that starts at token `i`, and whether it names a day (not a month, a quarter, …).
fn at(tokens: &[Token], i: usize, arrival: NaiveDate, english: bool) -> Option<(NaiveDate, bool)> {
    let found = date_at(tokens, i, arrival, english)?;
    // A month with a day next to it is a day; a month alone, a quarter, a unit are not.
    let word = |k: usize| tokens.get(k).map_or("", |t| t.word.as_str());
    let precise = (month_of(word(i)).is_some() || short_month(word(i)).is_some())
        && (day_number(word(i + 1)).is_some() || day_before(tokens, i).is_some());
    Some((found, precise))
}

/// [`at`]'s date.
fn date_at(tokens: &[Token], i: usize, arrival: NaiveDate, english: bool) -> Option<NaiveDate> {
    let word = tokens[i].word.as_str();
    let next = |k: usize| tokens.get(i + k).map(|t| t.word.as_str());
    let prev = (i > 0).then(|| tokens[i - 1].word.as_str());
    // Q3, Q3 2027, and the French T3
    if let Some(q) = word
        .strip_prefix('q')
        .or_else(|| word.strip_prefix('t'))
        .and_then(|d| d.parse::<u32>().ok())
    {
        if (1..=4).contains(&q) {
            return Some(quarter(q, year_after(tokens, i + 1), arrival));
        }
    }
    // third quarter / 3. Quartal / troisième trimestre / tercer trimestre
    if let Some(q) = QUARTER_ORDINALS
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, q)| *q)
        .or_else(|| day_number(word).filter(|q| (1..=4).contains(q)))
    {
        let unit = next(1)
            .filter(|w| QUARTER_WORDS.contains(w))
            .map(|_| 2)
            .or_else(|| {
                // "3e trimestre", "3° trimestre": a suffix token between.
                next(2).filter(|w| QUARTER_WORDS.contains(w)).map(|_| 3)
            });
        if let Some(skip) = unit {
            return Some(quarter(q, year_after(tokens, i + skip), arrival));
        }
    }
    // trimestre terzo / derde kwartaal handled above; "quarter three" is rare.
    // "para o ano" (pt-PT): next year
    if word == "para" && next(1) == Some("o") && next(2) == Some("ano") {
        return Some(next_unit(Unit::Year, arrival));
    }
    // next week / semaine prochaine / el año que viene
    if NEXT_WORDS.contains(&word) {
        if let Some(unit) = next(1).and_then(unit_of) {
            return Some(next_unit(unit, arrival));
        }
    }
    if let Some(unit) = unit_of(word) {
        if next(1).is_some_and(|w| NEXT_WORDS.contains(&w)) {
            return Some(next_unit(unit, arrival));
        }
        // ano que vem / mês que vem / semana que vem; el año que viene; l'an prochain handled.
        if matches!(next(1), Some("que" | "q")) && matches!(next(2), Some("vem" | "viene")) {
            return Some(next_unit(unit, arrival));
        }
    }
    // The new year after a cue ("after New Year", "in the new year", "nach Neujahr", "après le
    // nouvel an", "después de año nuevo", "depois do ano novo", "na nieuwjaar", "dopo
    // capodanno"): its first day; not a greeting ("Happy New Year").
    if let Some(date) = new_year(tokens, i, arrival) {
        return Some(date);
    }
    // A German calendar week ("in KW 3", "KW3", "Kalenderwoche 12"): its Monday, the next such
    // week that starts after arrival.
    if let Some(week) = calendar_week(word, next(1)) {
        let year = year_after(tokens, i + 1);
        let monday = |y: i32| NaiveDate::from_isoywd_opt(y, week, Weekday::Mon);
        return match year {
            Some(y) => monday(y),
            None => monday(arrival.year())
                .filter(|d| *d > arrival)
                .or_else(|| monday(arrival.year() + 1)),
        };
    }
    // in N days/weeks/months; dentro de N; daqui a N
    if IN_WORDS.contains(&word) {
        // "in a fortnight", "daqui a 3 semanas", "dentro de 2 meses"
        // "in about 6 weeks", "in etwa drei Wochen", "dans environ 10 jours": the same count.
        for k in [1, 2] {
            let between = next(1).unwrap_or("");
            if k == 2
                && !(matches!(between, "de" | "a" | "von") || APPROXIMATELY.contains(&between))
            {
                break;
            }
            if let (Some(n), Some(unit)) =
                (next(k).and_then(number), next(k + 1).and_then(count_unit))
            {
                return Some(add(arrival, n, unit));
            }
        }
    }
    // A day and a month: "3 March", "3. März", "3 de marzo"; a month and a day: "March 3rd".
    if let Some(month) = month_of(word) {
        let day_after = next(1).and_then(day_number).filter(|_| !is_year(next(1)));
        if let Some(day) = day_before(tokens, i).or(day_after) {
            return date_in(month, day, year_after(tokens, i + 1), arrival);
        }
        // A month that is a sentence of its own ("Oktober.") is a date too.
        let alone = (i == 0 || tokens[i].boundary >= super::tables::SENTENCE)
            && tokens
                .get(i + 1)
                .is_none_or(|t| t.boundary >= super::tables::SENTENCE);
        let cued = alone || prev.is_some_and(|p| MONTH_CUES.contains(&p));
        // "May", "mar", "march" alone are words; a cue makes them months.
        if cued {
            let year = year_after(tokens, i + 1);
            return Some(first_of_month(month, year, arrival));
        }
    }
    // A short month of the other languages ("15 ago", "il 12 gen", "3 mrt", "a 10 out") only with
    // its day, and not in English: alone, or there, they are words ("ago", "out", "set").
    if let Some(month) = short_month(word).filter(|_| !english) {
        let day_after = next(1).and_then(day_number).filter(|_| !is_year(next(1)));
        if let Some(day) = day_before(tokens, i).or(day_after) {
            return date_in(month, day, year_after(tokens, i + 1), arrival);
        }
    }
    None
}

/// The short month names of Spanish, Portuguese, Italian, Dutch and French that the
/// out-of-office reader's table does not know (folded).
fn short_month(word: &str) -> Option<u32> {
    const SHORT: &[(&str, u32)] = &[
        ("ene", 1),
        ("gen", 1),
        ("fev", 2),
        ("fevr", 2),
        ("febbr", 2),
        ("mrt", 3),
        ("abr", 4),
        ("mag", 5),
        ("giu", 6),
        ("lug", 7),
        ("ago", 8),
        ("set", 9),
        ("sett", 9),
        ("out", 10),
        ("ott", 10),
        ("dic", 12),
    ];
    SHORT.iter().find(|(w, _)| *w == word).map(|(_, m)| *m)
}

/// The first day of the new year named at `i` after a cue, in the seven languages: the next
/// 1 January (the arrival itself when it is one).
fn new_year(tokens: &[Token], i: usize, arrival: NaiveDate) -> Option<NaiveDate> {
    let word = |k: usize| tokens.get(k).map_or("", |t| t.word.as_str());
    // The words of the name, and the cues one of which must come right before it.
    const NAMES: &[(&[&str], &[&str])] = &[
        (&["new", "year"], &["after", "the", "until", "till", "past"]),
        (&["neujahr"], &["nach", "ab", "bis", "uber"]),
        (&["jahreswechsel"], &["dem", "nach"]),
        (&["nouvel", "an"], &["l", "le", "apres", "des", "du"]),
        (&["nouvelle", "annee"], &["la", "apres", "des"]),
        (&["ano", "nuevo"], &["el", "despues", "del", "de", "tras"]),
        (&["ano", "novo"], &["o", "depois", "do", "apos"]),
        (&["nieuwjaar"], &["na", "tot", "met", "vanaf"]),
        (&["jaarwisseling"], &["de"]),
        (&["nieuwe", "jaar"], &["het"]),
        (&["anno", "nuovo"], &["l", "dopo", "dall", "nell", "col"]),
        (&["capodanno"], &["dopo", "da", "a"]),
    ];
    let named = NAMES.iter().any(|(name, cues)| {
        name.iter().enumerate().all(|(k, w)| word(i + k) == *w)
            && i > 0
            && cues.contains(&word(i - 1))
            && !(i > 1
                && matches!(
                    word(i - 2),
                    "happy" | "frohes" | "gutes" | "bonne" | "feliz" | "gelukkig" | "buon"
                ))
            && word(i + name.len() + 1) != "eve"
    });
    if !named {
        return None;
    }
    if arrival.ordinal() == 1 {
        Some(arrival)
    } else {
        NaiveDate::from_ymd_opt(arrival.year() + 1, 1, 1)
    }
}

/// The week number of a German calendar week: "KW 3", "KW3", "KW03", "Kalenderwoche 12".
fn calendar_week(word: &str, next: Option<&str>) -> Option<u32> {
    let number = match word {
        "kw" | "kalenderwoche" => next?,
        w => w.strip_prefix("kw").filter(|d| !d.is_empty())?,
    };
    if number.len() > 2 || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse().ok().filter(|n| (1..=53).contains(n))
}

/// The day written before the month at `i`: "3 March", "3. März", "3 de marzo", "the 2nd of
/// February", "il primo marzo", "de eerste van oktober".
fn day_before(tokens: &[Token], i: usize) -> Option<u32> {
    let word = |k: usize| tokens[k].word.as_str();
    let day = |w: &str| {
        day_number(w).or(matches!(
            w,
            "first" | "premier" | "primer" | "primero" | "primeiro" | "primo" | "eerste"
        )
        .then_some(1))
    };
    if i >= 1 {
        if let Some(d) = day(word(i - 1)) {
            return Some(d);
        }
    }
    if i >= 2 && matches!(word(i - 1), "de" | "of" | "van" | "di" | "del") {
        return day(word(i - 2));
    }
    None
}

fn unit_of(word: &str) -> Option<Unit> {
    UNITS.iter().find(|(w, _)| *w == word).map(|(_, u)| *u)
}

fn count_unit(word: &str) -> Option<Unit> {
    COUNT_UNITS
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, u)| *u)
}

fn number(word: &str) -> Option<u32> {
    word.parse::<u32>()
        .ok()
        .filter(|n| (1..=400).contains(n))
        .or_else(|| NUMBERS.iter().find(|(w, _)| *w == word).map(|(_, n)| *n))
}

/// The month a folded word names: the out-of-office reader's table (nine languages).
fn month_of(word: &str) -> Option<u32> {
    crate::inbound::return_date::month_of(word)
}

/// A day of the month, written as digits with or without an ordinal suffix (`3`, `3rd`, `1er`).
fn day_number(word: &str) -> Option<u32> {
    let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
    let rest = &word[digits.len()..];
    if digits.is_empty()
        || !matches!(
            rest,
            "" | "st" | "nd" | "rd" | "th" | "er" | "o" | "e" | "º" | "ª" | "eme"
        )
    {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn is_year(word: Option<&str>) -> bool {
    word.and_then(|w| w.parse::<i32>().ok())
        .is_some_and(|y| (2000..=2100).contains(&y))
}

/// A year written right after position `i` (skipping one word such as `de`).
fn year_after(tokens: &[Token], i: usize) -> Option<i32> {
    for (k, token) in tokens.iter().enumerate().skip(i).take(2) {
        if token.boundary > 0 && k > i {
            break;
        }
        if let Ok(y) = token.word.parse::<i32>() {
            if (2000..=2100).contains(&y) {
                return Some(y);
            }
        }
    }
    None
}

/// The first day of quarter `q`: of `year` when given, else the next such quarter that starts
/// after arrival.
fn quarter(q: u32, year: Option<i32>, arrival: NaiveDate) -> NaiveDate {
    let month = (q - 1) * 3 + 1;
    let start = |y: i32| NaiveDate::from_ymd_opt(y, month, 1).expect("a quarter's first day");
    match year {
        Some(y) => start(y),
        None if start(arrival.year()) > arrival => start(arrival.year()),
        None => start(arrival.year() + 1),
    }
}

/// The 1st of `month`: of `year` when given, else the next such month after arrival's.
fn first_of_month(month: u32, year: Option<i32>, arrival: NaiveDate) -> NaiveDate {
    let first = |y: i32| NaiveDate::from_ymd_opt(y, month, 1).expect("a month's first day");
    match year {
        Some(y) => first(y),
        None if month > arrival.month() => first(arrival.year()),
        None => first(arrival.year() + 1),
    }
}

/// `day` of `month`: of `year` when given, else the next such day after arrival. `None` for a
/// day the month does not have.
fn date_in(month: u32, day: u32, year: Option<i32>, arrival: NaiveDate) -> Option<NaiveDate> {
    match year {
        Some(y) => NaiveDate::from_ymd_opt(y, month, day),
        None => {
            let this = NaiveDate::from_ymd_opt(arrival.year(), month, day);
            match this {
                Some(d) if d > arrival => Some(d),
                _ => NaiveDate::from_ymd_opt(arrival.year() + 1, month, day),
            }
        }
    }
}

fn next_unit(unit: Unit, arrival: NaiveDate) -> NaiveDate {
    match unit {
        Unit::Day => arrival + Duration::days(1),
        Unit::Fortnight => arrival + Duration::weeks(2),
        Unit::Week => {
            let monday = arrival - Duration::days(arrival.weekday().num_days_from_monday() as i64);
            debug_assert_eq!(monday.weekday(), Weekday::Mon);
            monday + Duration::weeks(1)
        }
        Unit::Month => {
            let first = arrival.with_day(1).expect("the 1st");
            first + Months::new(1)
        }
        Unit::Quarter => {
            let q = (arrival.month() - 1) / 3 + 1;
            if q == 4 {
                NaiveDate::from_ymd_opt(arrival.year() + 1, 1, 1).expect("Jan 1")
            } else {
                NaiveDate::from_ymd_opt(arrival.year(), q * 3 + 1, 1).expect("a quarter")
            }
        }
        Unit::Year => NaiveDate::from_ymd_opt(arrival.year() + 1, 1, 1).expect("Jan 1"),
    }
}

fn add(arrival: NaiveDate, n: u32, unit: Unit) -> NaiveDate {
    match unit {
        Unit::Day => arrival + Duration::days(n as i64),
        Unit::Week => arrival + Duration::weeks(n as i64),
        Unit::Fortnight => arrival + Duration::weeks(2 * n as i64),
        Unit::Month => arrival + Months::new(n),
        Unit::Quarter => arrival + Months::new(3 * n),
        Unit::Year => arrival + Months::new(12 * n),
    }
}

/// Dates written in digits, with where they start: ISO, day-first with dots, and with slashes
/// (month first in English).
fn numeric_dates(text: &str, arrival: NaiveDate, english: bool) -> Vec<(usize, NaiveDate)> {
    use std::sync::OnceLock;
    static ISO: OnceLock<regex::Regex> = OnceLock::new();
    static DOTS: OnceLock<regex::Regex> = OnceLock::new();
    static SLASH: OnceLock<regex::Regex> = OnceLock::new();
    static DASH: OnceLock<regex::Regex> = OnceLock::new();
    let iso = ISO.get_or_init(|| regex::Regex::new(r"\b(20\d\d)-(\d\d)-(\d\d)\b").unwrap());
    let dots = DOTS.get_or_init(|| {
        regex::Regex::new(r"(?:^|[^\d.])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})?(?:[^\d]|$)").unwrap()
    });
    let slash = SLASH.get_or_init(|| {
        regex::Regex::new(r"(?:^|[^\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?:[^\d/]|$)")
            .unwrap()
    });
    let mut out = Vec::new();
    for c in iso.captures_iter(text) {
        let n = |k: usize| c[k].parse::<u32>().unwrap_or(0);
        if let Some(d) = NaiveDate::from_ymd_opt(n(1) as i32, n(2), n(3)) {
            out.push((c.get(0).unwrap().start(), d));
        }
    }
    let year = |m: Option<regex::Match>| {
        m.and_then(|m| m.as_str().parse::<i32>().ok())
            .map(|y| if y < 100 { 2000 + y } else { y })
    };
    for c in dots.captures_iter(text) {
        let (day, month) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
        if (1..=12).contains(&month) {
            if let Some(d) = date_in(month, day, year(c.get(3)), arrival) {
                out.push((c.get(1).unwrap().start(), d));
            }
        }
    }
    // Day first with dashes ("17-08", Dutch), outside English; not an hour's range ("9-12 uur").
    if !english {
        let dash = DASH.get_or_init(|| {
            regex::Regex::new(r"(?:^|[^\d-])(\d{1,2})-(\d{1,2})(?:-(\d{4}|\d{2}))?(?:[^\d-]|$)")
                .unwrap()
        });
        for c in dash.captures_iter(text) {
            let rest = super::fold(text[c.get(2).unwrap().end()..].trim_start());
            if ["uur", "uhr", "h ", "h.", "u ", "u.", "ore", "horas"]
                .iter()
                .any(|w| rest.starts_with(w))
                || rest == "h"
                || rest == "u"
            {
                continue;
            }
            let (day, month) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            if (1..=12).contains(&month) {
                if let Some(d) = date_in(month, day, year(c.get(3)), arrival) {
                    out.push((c.get(1).unwrap().start(), d));
                }
            }
        }
    }
    for c in slash.captures_iter(text) {
        let (a, b): (u32, u32) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
        let (month, day) = if english { (a, b) } else { (b, a) };
        if (1..=12).contains(&month) {
            if let Some(d) = date_in(month, day, year(c.get(3)), arrival) {
                out.push((c.get(1).unwrap().start(), d));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::resume_on;
    use chrono::NaiveDate;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// Arrival 2026-12-04 (a Friday) unless the case says otherwise.
    #[test]
    fn dates_in_seven_languages() {
        let cases: &[(&str, &str, bool, Option<&str>)] = &[
            (
                "Reach out again in Q3",
                "2026-12-04",
                true,
                Some("2027-07-01"),
            ),
            ("Try me in Q1 2027", "2026-12-04", true, Some("2027-01-01")),
            (
                "Let's talk in March",
                "2026-12-04",
                true,
                Some("2027-03-01"),
            ),
            ("in December please", "2026-12-04", true, Some("2027-12-01")),
            ("next week", "2026-12-04", true, Some("2026-12-07")),
            ("next month", "2026-12-04", true, Some("2027-01-01")),
            ("next quarter", "2026-12-04", true, Some("2027-01-01")),
            ("next year", "2026-05-04", true, Some("2027-01-01")),
            ("in 3 weeks", "2026-12-04", true, Some("2026-12-25")),
            ("in two months", "2026-12-31", true, Some("2027-02-28")),
            ("after March 3rd", "2026-12-04", true, Some("2027-03-03")),
            ("on 2027-03-03", "2026-12-04", true, Some("2027-03-03")),
            ("3/15 works", "2026-12-04", true, Some("2027-03-15")),
            ("after the holidays", "2026-12-04", true, None),
            ("I may have time", "2026-12-04", true, None),
            // The end of an absence far before its month, then the day to write.
            (
                "We're full until the end of August. Get back to me in September.",
                "2026-06-10",
                true,
                Some("2026-09-01"),
            ),
            (
                "Back on 2 September. Drop me a line on the 7th of September.",
                "2026-07-20",
                true,
                Some("2026-09-07"),
            ),
            ("not rn, try me feb", "2026-11-20", true, Some("2027-02-01")),
            (
                "Ad agosto siamo chiusi e a luglio c'è il caos. Da settembre in poi sono tutto suo.",
                "2026-05-04",
                false,
                Some("2026-09-01"),
            ),
            // The end of an absence gives way to another date, even one with no verb of
            // getting in touch ("Mails" is a noun here).
            (
                "Ich lese nur selten Mails, weil ich bis Ende Februar in Elternzeit bin. Ab März gern.",
                "2026-01-08",
                false,
                Some("2026-03-01"),
            ),
            // "je reviens le 6" is being back, "réécrivez-moi le 11" the day to write on.
            (
                "Je pars en congé le 18 décembre et je reviens le 6 janvier. Réécrivez-moi plutôt le 11 janvier.",
                "2026-12-01",
                false,
                Some("2027-01-11"),
            ),
            (
                "Le bureau est fermé du 24 décembre au 4 janvier. Reviens-moi à partir du 8 janvier.",
                "2026-12-01",
                false,
                Some("2027-01-08"),
            ),
            (
                "Our contract runs to 31 December 2026. Happy to hear from you in 6 months.",
                "2026-01-20",
                true,
                Some("2026-07-20"),
            ),
            (
                "Q1 ist bei uns tabu, und Q2 ist schon voll. Versuchen Sie es im 3. Quartal.",
                "2026-11-02",
                false,
                Some("2027-07-01"),
            ),
            (
                "Diciembre y enero son una locura y en febrero me tomo vacaciones. Hablemos en marzo.",
                "2026-11-10",
                false,
                Some("2027-03-01"),
            ),
            // "t/m" ends an absence; "daarna" (after that) points to no date of its own.
            (
                "We gaan de bouwvak in (t/m 14 augustus) en daarna moeten we opstarten. Bel me op 14-09.",
                "2026-07-09",
                false,
                Some("2026-09-14"),
            ),
            (
                "Kun je me na de jaarwisseling nog eens mailen?",
                "2026-11-02",
                false,
                Some("2027-01-01"),
            ),
            (
                "Melden Sie sich im März",
                "2026-12-04",
                false,
                Some("2027-03-01"),
            ),
            ("im 3. Quartal", "2026-12-04", false, Some("2027-07-01")),
            ("nächstes Jahr", "2026-12-04", false, Some("2027-01-01")),
            ("in drei Monaten", "2026-12-04", false, Some("2027-03-04")),
            ("ab dem 15.01.", "2026-12-04", false, Some("2027-01-15")),
            (
                "Revenez vers moi en mars",
                "2026-12-04",
                false,
                Some("2027-03-01"),
            ),
            (
                "au troisième trimestre",
                "2026-12-04",
                false,
                Some("2027-07-01"),
            ),
            ("le mois prochain", "2026-12-04", false, Some("2027-01-01")),
            ("dans 10 jours", "2026-12-04", false, Some("2026-12-14")),
            ("d'ici 15 jours", "2026-07-06", false, Some("2026-07-21")),
            (
                "check back after New Year",
                "2026-12-04",
                true,
                Some("2027-01-01"),
            ),
            (
                "let's talk in the new year",
                "2026-11-20",
                true,
                Some("2027-01-01"),
            ),
            ("Happy New Year! Not now.", "2026-12-30", true, None),
            (
                "nach Neujahr gerne wieder",
                "2026-12-04",
                false,
                Some("2027-01-01"),
            ),
            (
                "después de año nuevo",
                "2026-12-04",
                false,
                Some("2027-01-01"),
            ),
            ("dopo capodanno", "2026-12-04", false, Some("2027-01-01")),
            (
                "melden Sie sich in KW 3 nochmal",
                "2026-12-04",
                false,
                Some("2027-01-18"),
            ),
            (
                "bitte erst ab KW12",
                "2026-12-04",
                false,
                Some("2027-03-22"),
            ),
            (
                "mi scriva a inizio febbraio",
                "2026-12-04",
                false,
                Some("2027-02-01"),
            ),
            (
                "niet voor februari",
                "2026-12-04",
                false,
                Some("2027-02-01"),
            ),
            ("within 2 weeks", "2026-12-04", true, Some("2026-12-18")),
            (
                "innerhalb von 3 Wochen",
                "2026-12-04",
                false,
                Some("2026-12-25"),
            ),
            ("binnen 2 weken", "2026-12-04", false, Some("2026-12-18")),
            ("entro 10 giorni", "2026-12-04", false, Some("2026-12-14")),
            ("a partir de marzo", "2026-12-04", false, Some("2027-03-01")),
            (
                "el próximo trimestre",
                "2026-12-04",
                false,
                Some("2027-01-01"),
            ),
            ("dentro de 2 meses", "2026-12-04", false, Some("2027-02-04")),
            ("el 15 de enero", "2026-12-04", false, Some("2027-01-15")),
            ("ano que vem", "2026-12-04", false, Some("2027-01-01")),
            ("daqui a 3 semanas", "2026-12-04", false, Some("2026-12-25")),
            ("em março", "2026-12-04", false, Some("2027-03-01")),
            ("over 2 weken", "2026-12-04", false, Some("2026-12-18")),
            ("volgend kwartaal", "2026-12-04", false, Some("2027-01-01")),
            ("in maart", "2026-12-04", false, Some("2027-03-01")),
            ("tra 2 mesi", "2026-12-04", false, Some("2027-02-04")),
            ("a marzo", "2026-12-04", false, Some("2027-03-01")),
            ("il prossimo anno", "2026-12-04", false, Some("2027-01-01")),
            ("in March", "2026-03-10", true, Some("2027-03-01")),
            ("Q3", "2026-07-10", true, Some("2027-07-01")),
            ("in a fortnight", "2026-12-04", true, Some("2026-12-18")),
            (
                "nothing before April",
                "2026-12-04",
                true,
                Some("2027-04-01"),
            ),
            (
                "Come September we can talk",
                "2026-05-13",
                true,
                Some("2026-09-01"),
            ),
            (
                "email me on the 2nd of February",
                "2026-12-04",
                true,
                Some("2027-02-02"),
            ),
            (
                "Reprenez contact dès janvier",
                "2026-12-04",
                false,
                Some("2027-01-01"),
            ),
            (
                "Mi scriva il primo marzo",
                "2026-12-04",
                false,
                Some("2027-03-01"),
            ),
            (
                "Stuur mij de eerste van oktober een bericht",
                "2026-08-11",
                false,
                Some("2026-10-01"),
            ),
            (
                "vlg maand weer proberen",
                "2026-12-04",
                false,
                Some("2027-01-01"),
            ),
            (
                "Mail me op 11-01 nog eens",
                "2026-12-04",
                false,
                Some("2027-01-11"),
            ),
            ("bellen tussen 9-12 uur", "2026-12-04", false, None),
            (
                "back in about 6 weeks, drop me a line then",
                "2026-07-08",
                true,
                Some("2026-08-19"),
            ),
            ("dans environ 10 jours", "2026-12-04", false, Some("2026-12-14")),
            ("mi scriva il 12 gen", "2026-12-04", false, Some("2027-01-12")),
            ("escríbeme el 15 ago", "2026-05-04", false, Some("2026-08-15")),
            ("volte a falar comigo a 10 out", "2026-05-04", false, Some("2026-10-10")),
            ("mail me op 3 mrt", "2026-12-04", false, Some("2027-03-03")),
            ("I'm out 3 weeks, try me later", "2026-12-04", true, None),
            // "then" points back to the last date before it, not to the end of an absence.
            (
                "Estoy de vacaciones hasta el 20 de julio, pero el presupuesto no se aprueba hasta enero. Contacta conmigo entonces.",
                "2026-07-06",
                false,
                Some("2027-01-01"),
            ),
            (
                "sono in ferie fino al 25 agosto, ma il budget per il prossimo anno lo decidiamo a ottobre. Mi scriva allora.",
                "2026-08-03",
                false,
                Some("2026-10-01"),
            ),
            (
                "Ich bin bis zum 12.06. weg, dann gerne im Juli.",
                "2026-06-02",
                false,
                Some("2026-07-01"),
            ),
            // "je reprends le 24 août" is the day of return, not the day to write.
            (
                "Je reprends le 24 août. Écrivez-moi à partir du 1er septembre",
                "2026-05-19",
                false,
                Some("2026-09-01"),
            ),
        ];
        for (text, arrival, english, want) in cases {
            let got = resume_on(text, d(arrival), *english);
            assert_eq!(got, want.map(d), "{text} on {arrival}");
        }
    }
}
