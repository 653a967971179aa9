//! Reply intent: what a person's reply says, from its text — `interested`, `not_now` (with the
//! date it names), `not_interested`, `wrong_person` (with the referral it names),
//! `unsubscribe` (in words), or `other` — with a confidence and the evidence that decided.
//!
//! Pure and deterministic, with everything it needs in the binary:
//!
//! 1. [`new_text`] cuts the quoted history and the signature: only what the person wrote now
//!    is judged.
//! 2. The language is detected (`whatlang`, among the seven the tables cover; a reliable
//!    detection of another language is reported as it is).
//! 3. [`tables`] holds each language's phrases for each intent, as token patterns with
//!    prefixes and short gaps; every phrase carries an example that must classify as its
//!    intent (the tables test themselves). A phrase that a negation word comes right before
//!    counts for the intent its negation means ("not interested"), or not at all. Phrases of
//!    every table are tried, so a short or mixed reply is judged by what it says; the detected
//!    language's phrases weigh more.
//! 4. The intent with the highest score wins; a tie goes to the more consequential intent
//!    (`unsubscribe`, then `wrong_person`, `not_now`, `not_interested`, `interested`). No
//!    phrase: `other`.
//! 5. Where the tables found too little (`other`), or weighed a yes against a no and chose the
//!    no, the [`learned`] second opinion may answer instead when it is sure: an unsubscribe
//!    only where the tables found too little and it is surer still, never over a no or an
//!    unsubscribe the tables decided.
//! 6. [`resume`] reads the date of a `not_now` reply; [`referral`] the address it points to.
//!
//! Phrase tables first: a table's decision is its evidence (the words that decided, as they
//! stand in the text), and a wrong `unsubscribe` — the costliest error — is a phrase to fix,
//! not a weight to retrain; the learned model catches what a new writer says that no table has
//! seen. Measured on held-out parts of the corpus in `docs/signals.md` ("Reply intent").

pub mod learned;
pub mod new_text;
pub mod referral;
pub mod resume;
pub mod tables;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

pub use new_text::new_text;

/// The six intents: a closed set, named as the events `intent:<name>` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Yes: a call, a demo, a meeting, more information, a price.
    Interested,
    /// Maybe later: bad timing, with or without a date.
    NotNow,
    /// No: no need, has a solution, no budget. Ends this sequence, not others.
    NotInterested,
    /// Not the right person, or left the company.
    WrongPerson,
    /// Stop contacting me, in words: an opt-out of the channel.
    Unsubscribe,
    /// Anything else.
    Other,
}

impl Intent {
    /// Every intent, in the order a tie is decided (the most consequential first).
    pub const ALL: [Intent; 6] = [
        Intent::Unsubscribe,
        Intent::WrongPerson,
        Intent::NotNow,
        Intent::NotInterested,
        Intent::Interested,
        Intent::Other,
    ];

    /// The name, as `intent:<name>` events and the API spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Interested => "interested",
            Intent::NotNow => "not_now",
            Intent::NotInterested => "not_interested",
            Intent::WrongPerson => "wrong_person",
            Intent::Unsubscribe => "unsubscribe",
            Intent::Other => "other",
        }
    }

    /// The event a reply with this intent raises: `intent:<name>`.
    pub fn event(self) -> &'static str {
        match self {
            Intent::Interested => "intent:interested",
            Intent::NotNow => "intent:not_now",
            Intent::NotInterested => "intent:not_interested",
            Intent::WrongPerson => "intent:wrong_person",
            Intent::Unsubscribe => "intent:unsubscribe",
            Intent::Other => "intent:other",
        }
    }

    /// The intent named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Intent> {
        Intent::ALL.into_iter().find(|i| i.as_str() == name)
    }

    /// Its place in [`Intent::ALL`]: a lower rank wins a tie.
    pub fn rank(self) -> usize {
        Intent::ALL.iter().position(|i| *i == self).expect("in ALL")
    }
}

impl std::fmt::Display for Intent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a reply that asks in words to stop ("please remove me from your list", the reply
/// intent `unsubscribe`) does for an account. A closed set rather than text, so no value but
/// these two can be stored, and every place that acts on it has to handle both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyUnsubscribe {
    /// The reply opts the contact out of the channel it came on and every enrollment of the
    /// contact exits, as an SMS `STOP` or the unsubscribe link would. The default: a person who
    /// asked to stop is not contacted again because a flow forgot to handle it.
    #[default]
    OptOut,
    /// The reply only raises the event `intent:unsubscribe` and the flow decides (a rep may
    /// read it first, since a misread reply is the costliest error of the classifier).
    Event,
}

impl ReplyUnsubscribe {
    /// Both values, the default first.
    pub const ALL: [ReplyUnsubscribe; 2] = [ReplyUnsubscribe::OptOut, ReplyUnsubscribe::Event];

    /// The name the API and the `accounts.reply_unsubscribe` column use.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyUnsubscribe::OptOut => "opt_out",
            ReplyUnsubscribe::Event => "event",
        }
    }

    /// The value named exactly `text` (`opt_out`, `event`); anything else is `None`.
    pub fn parse(text: &str) -> Option<ReplyUnsubscribe> {
        ReplyUnsubscribe::ALL
            .into_iter()
            .find(|r| r.as_str() == text)
    }
}

/// The key a classified reply's [`ReplyIntent`] is stored under in its signal's payload: the
/// stored signal is the truth its journey entries, Watch and `signal.*` read.
pub const PAYLOAD_KEY: &str = "intent";

/// The calendar a contact's dates are read in: its own zone, else the one its number is in
/// (when the number names exactly one); `None` when neither says (or the zone is a fixed
/// offset, which has no calendar of its own).
pub fn calendar_zone(tz: Option<&str>, phone: Option<&str>) -> Option<Tz> {
    use crate::timing::Zone;
    let of = |zone: Zone| match zone {
        Zone::Iana(tz) => Some(tz),
        Zone::Utc => Some(chrono_tz::UTC),
        Zone::Fixed(_) => None,
    };
    if let Some(zone) = tz.and_then(|t| Zone::parse(t).ok()) {
        return of(zone);
    }
    let zones = crate::timing::phone_zones(phone?).ok()?;
    match zones.zones.as_slice() {
        [one] => of(*one),
        _ => None,
    }
}

/// The languages the tables cover, by ISO 639-1 code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// English.
    En,
    /// German.
    De,
    /// French.
    Fr,
    /// Spanish.
    Es,
    /// Portuguese.
    Pt,
    /// Dutch.
    Nl,
    /// Italian.
    It,
}

impl Language {
    /// Every language the tables cover.
    pub const ALL: [Language; 7] = [
        Language::En,
        Language::De,
        Language::Fr,
        Language::Es,
        Language::Pt,
        Language::Nl,
        Language::It,
    ];

    /// The ISO 639-1 code.
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::De => "de",
            Language::Fr => "fr",
            Language::Es => "es",
            Language::Pt => "pt",
            Language::Nl => "nl",
            Language::It => "it",
        }
    }

    fn of(lang: whatlang::Lang) -> Option<Language> {
        use whatlang::Lang;
        Some(match lang {
            Lang::Eng => Language::En,
            Lang::Deu => Language::De,
            Lang::Fra => Language::Fr,
            Lang::Spa => Language::Es,
            Lang::Por => Language::Pt,
            Lang::Nld => Language::Nl,
            Lang::Ita => Language::It,
            _ => return None,
        })
    }

    fn whatlang(self) -> whatlang::Lang {
        use whatlang::Lang;
        match self {
            Language::En => Lang::Eng,
            Language::De => Lang::Deu,
            Language::Fr => Lang::Fra,
            Language::Es => Lang::Spa,
            Language::Pt => Lang::Por,
            Language::Nl => Lang::Nld,
            Language::It => Lang::Ita,
        }
    }
}

/// What is classified: a reply's text and what dates and addresses are read against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply<'a> {
    /// The whole text as received (quoted history and signature are cut here).
    pub text: &'a str,
    /// The subject, when there is one (an email's): read for phrases too ("Remove me").
    pub subject: Option<&'a str>,
    /// When it arrived: `resume_on` is read relative to this.
    pub received_at: Option<DateTime<Utc>>,
    /// The contact's zone (else the sender's): the calendar `resume_on` is a date of.
    pub tz: Option<Tz>,
    /// The replier's own address: never a referral.
    pub from: Option<&'a str>,
    /// The address the sequence wrote to: never a referral.
    pub contact_email: Option<&'a str>,
}

/// Another person the reply points to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Referral {
    /// Their address, as written.
    pub email: String,
    /// Their name, when written right with the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A reply's classification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplyIntent {
    /// What the reply says.
    pub intent: Intent,
    /// 0..1: how clearly the phrases decided (a lone weak phrase, or two intents close
    /// together, is low).
    pub confidence: f64,
    /// ISO 639-1 (`und` when the text is too short to tell and no phrase decided).
    pub language: String,
    /// The phrases that decided, as they stand in the text.
    pub evidence: Vec<String>,
    /// With `not_now`: the date named, a calendar date in the contact's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_on: Option<NaiveDate>,
    /// Another person's address the reply names (any intent, usually `wrong_person`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referral: Option<Referral>,
}

/// The confidence is always a finite number (rounded to two decimals), so equality is total.
impl Eq for ReplyIntent {}

/// The least score an intent needs to be the answer.
pub(crate) const MIN_SCORE: f64 = 1.2;

/// A table phrase's weight that decides on its own (1 weak, 2 clear, 3 decisive).
const DECISIVE: f64 = 3.0;

/// How much another person's address in the reply weighs for `wrong_person`.
const REFERRAL_WEIGHT: f64 = 1.0;

/// How much more a phrase of the detected language weighs.
const DETECTED_LANGUAGE_BONUS: f64 = 0.5;

/// Classifies `reply`: the phrase tables, with the learned second opinion where they found
/// too little or a no ([`learned`]).
pub fn classify(reply: &Reply) -> ReplyIntent {
    classify_with(reply, true)
}

/// Classifies `reply` by the phrase tables alone: what the corpus tests measure the second
/// opinion against.
pub fn classify_by_tables(reply: &Reply) -> ReplyIntent {
    classify_with(reply, false)
}

fn classify_with(reply: &Reply, second_opinion: bool) -> ReplyIntent {
    let body = new_text(reply.text);
    // The subject counts when it is the person's own ("Remove me"), not a reply's "Re: …".
    let subject = reply
        .subject
        .map(str::trim)
        .filter(|s| !s.is_empty() && !is_reply_subject(s));
    let detected = detect(body);
    let mut found = tables::find(body, detected);
    if let Some(subject) = subject {
        found.extend(tables::find(subject, detected));
    }
    // Another person's address in the reply points away from the contact.
    let referral = referral::referral(body, &[reply.from, reply.contact_email]);
    if let Some(r) = &referral {
        found.push(tables::Found {
            language: detected.unwrap_or(Language::En),
            intent: Intent::WrongPerson,
            weight: REFERRAL_WEIGHT,
            text: r.email.clone(),
            pattern: "",
            tokens: (usize::MAX, usize::MAX),
            negator: None,
        });
    }
    // A phrase row counts once however often the reply repeats it ("the price … the price").
    let mut counted: Vec<&'static str> = Vec::new();
    let mut scores = [0.0f64; 6];
    for m in &found {
        // A phrase that only covers words (`other`, weight 0) counts for nothing.
        if m.intent == Intent::Other || (!m.pattern.is_empty() && counted.contains(&m.pattern)) {
            continue;
        }
        counted.push(m.pattern);
        let bonus = if Some(m.language) == detected {
            DETECTED_LANGUAGE_BONUS
        } else {
            0.0
        };
        scores[m.intent.rank()] += m.weight + bonus;
    }
    // The winner: highest score, ties to the lower rank (ALL's order).
    let mut best = Intent::Other;
    // Below this, what was found is too little to judge (a lone "colleague"): `other`.
    let mut best_score = MIN_SCORE;
    for intent in Intent::ALL {
        let s = scores[intent.rank()];
        if s > best_score {
            best = intent;
            best_score = s;
        }
    }
    // A no that also asks to stop writing is a request to stop: "Not interested, and don't
    // email me again" ends every sequence, not this one only. A decisive stop phrase decides
    // however many ways the no is said.
    if best == Intent::NotInterested
        && found
            .iter()
            .any(|m| m.intent == Intent::Unsubscribe && m.weight >= DECISIVE)
    {
        best = Intent::Unsubscribe;
        best_score = scores[Intent::Unsubscribe.rank()];
    }
    // An out-of-office notice read as text is the mail system's, not the person's answer.
    let notice = out_of_office_notice(body);
    if notice.is_some() {
        best = Intent::Other;
    }
    // Where the tables found too little, or a no, the learned model may be sure of better.
    let learned = if second_opinion && notice.is_none() {
        let saw_yes = scores[Intent::Interested.rank()] > 0.0;
        // Words a table row says mean no intent (weight 0): a thank-you, where the address
        // came from.
        let saw_other = found
            .iter()
            .any(|m| m.intent == Intent::Other && m.weight == 0.0);
        learned::second_opinion(body, best, saw_yes, saw_other)
    } else {
        None
    };
    if let Some(o) = &learned {
        best = o.intent;
    }
    let runner_up = Intent::ALL
        .iter()
        .filter(|i| **i != best)
        .map(|i| scores[i.rank()])
        .fold(0.0, f64::max);
    let confidence = if let Some(o) = &learned {
        o.confidence
    } else if notice.is_some() {
        0.9
    } else if best == Intent::Other {
        if found.is_empty() {
            0.5
        } else {
            0.4
        }
    } else {
        confidence(best_score, runner_up)
    };
    let evidence: Vec<String> = if let Some(o) = learned {
        o.evidence
    } else if let Some(words) = notice {
        words
    } else {
        let mut e: Vec<String> = Vec::new();
        for m in found.iter().filter(|m| m.intent == best) {
            if !e.contains(&m.text) {
                e.push(m.text.clone());
            }
        }
        e
    };
    let language = detected
        .map(|l| l.code().to_string())
        .or_else(|| {
            // No reliable detection: the language of the deciding phrases.
            found
                .iter()
                .find(|m| m.intent == best)
                .map(|m| m.language.code().to_string())
        })
        .or_else(|| other_language(body))
        .unwrap_or_else(|| "und".to_string());
    let resume_on = match (best, reply.received_at) {
        (Intent::NotNow, Some(at)) => {
            let tz = reply.tz.unwrap_or(chrono_tz::UTC);
            let english = language == "en";
            resume::resume_on(body, at.with_timezone(&tz).date_naive(), english)
        }
        _ => None,
    };
    ReplyIntent {
        intent: best,
        confidence,
        language,
        evidence,
        resume_on,
        referral,
    }
}

/// What an out-of-office notice says besides being away: where to turn meanwhile, or that mail
/// is not read (matched without regard to ASCII case; accented forms listed as written).
const NOTICE_WORDS: &[&str] = &[
    "urgent",
    "urgenc",
    "urgenz",
    "dringend",
    "limited access",
    "no access to",
    "without access to",
    "eingeschränkt",
    "eingeschrankt",
    "keinen zugriff",
    "sans accès",
    "sans acces",
    "accès limité",
    "acces limite",
    "sin acceso",
    "acceso limitado",
    "sem acesso",
    "acesso limitado",
    "geen toegang",
    "beperkt toegang",
    "senza accesso",
    "accesso limitato",
];

/// The words that make `body` an out-of-office notice, as they stand in it: an absence
/// ([`crate::inbound::classify::OOO_PHRASES`], "out of the office", "fuori ufficio") together
/// with where to turn meanwhile or that mail goes unread ("for urgent matters", "sans accès à
/// mes e-mails"). A notice pasted or sent without the headers that mark an auto-reply is still
/// not the person's answer: `other`, with no date to resume on. A person who writes that they
/// are away and when to write again, without the notice's second half, is a `not_now`.
fn out_of_office_notice(body: &str) -> Option<Vec<String>> {
    use aho_corasick::AhoCorasick;
    // The inbox's phrases that say only when someone is back ("back on", "zurück am") come up
    // in what people write ("not urgent, back on this in Q2"): an absence must be named.
    const ONLY_A_RETURN: &[&str] = &[
        "back on",
        "returning on",
        "zurück am",
        "de retour le",
        "de vuelta el",
        "rientro il",
        "terug op",
        "de volta em",
        "wracam",
    ];
    static PHRASES: std::sync::OnceLock<(usize, AhoCorasick)> = std::sync::OnceLock::new();
    let (away, phrases) = PHRASES.get_or_init(|| {
        let away: Vec<&str> = crate::inbound::classify::OOO_PHRASES
            .iter()
            .copied()
            .filter(|p| !ONLY_A_RETURN.contains(p))
            .collect();
        let phrases = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(away.iter().chain(NOTICE_WORDS))
            .expect("fixed phrases build");
        (away.len(), phrases)
    });
    // One pass: the first absence phrase and the first notice word, each to its word's end.
    let (mut absence, mut meanwhile) = (None, None);
    for m in phrases.find_iter(body) {
        let slot = if m.pattern().as_usize() < *away {
            &mut absence
        } else {
            &mut meanwhile
        };
        if slot.is_none() {
            let rest = &body[m.end()..];
            let end = m.end()
                + rest
                    .find(|c: char| !c.is_alphanumeric())
                    .unwrap_or(rest.len());
            *slot = Some(body[m.start()..end].to_string());
        }
        if absence.is_some() && meanwhile.is_some() {
            break;
        }
    }
    Some(vec![absence?, meanwhile?])
}

/// 0.5 for a lone weak phrase, towards 1 as the winner's score grows and outweighs the rest.
fn confidence(best: f64, runner_up: f64) -> f64 {
    let strength = 1.0 - (-best / 2.0).exp();
    // A rule may choose an intent that scored less than another (a stop request over a no).
    let margin = ((best - runner_up) / best).max(0.0);
    let c = 0.35 + 0.65 * strength * margin;
    (c * 100.0).round() / 100.0
}

fn is_reply_subject(subject: &str) -> bool {
    let s = fold(subject);
    [
        "re:", "aw:", "ant:", "r:", "rv:", "res:", "sv:", "wg:", "fw:", "fwd:", "tr:",
    ]
    .iter()
    .any(|p| s.starts_with(p))
}

/// The language of `text` among the seven, when the detector is sure enough.
fn detect(text: &str) -> Option<Language> {
    // A few words say too little to tell Spanish from Portuguese or Italian.
    if text.split_whitespace().count() < 4 {
        return None;
    }
    let detector =
        whatlang::Detector::with_allowlist(Language::ALL.iter().map(|l| l.whatlang()).collect());
    let info = detector.detect(text)?;
    (info.confidence() >= 0.25)
        .then(|| Language::of(info.lang()))
        .flatten()
}

/// A reliable detection of a language the tables do not cover, by its ISO 639-3 code.
fn other_language(text: &str) -> Option<String> {
    let info = whatlang::detect(text)?;
    (info.is_reliable() && Language::of(info.lang()).is_none())
        .then(|| info.lang().code().to_string())
}

/// Lowercase, without diacritics, with typographic apostrophes and dashes made plain: what
/// the tables are written in and matched against. One character in, one or two out (`ß`).
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            'ß' => out.push_str("ss"),
            '’' | '‘' | '`' | '´' => out.push('\''),
            '–' | '—' => out.push('-'),
            c => {
                for l in c.to_lowercase() {
                    out.push(strip_diacritic(l));
                }
            }
        }
    }
    out
}

fn strip_diacritic(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        'œ' => 'o',
        c => c,
    }
}

/// One `nudge classify` request: the fields of [`Reply`] as JSON.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    text: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    received_at: Option<String>,
    #[serde(default)]
    tz: Option<String>,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    contact_email: Option<String>,
}

/// The answer to one JSON line of `nudge classify`: the classification, or
/// `{"error": {"code": "BAD_REQUEST", "message"}}` naming what is wrong and how to fix it.
pub fn answer_line(line: &str) -> serde_json::Value {
    let bad =
        |message: String| serde_json::json!({"error": {"code": "BAD_REQUEST", "message": message}});
    let request: Request = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            return bad(format!(
                "{e}: send one JSON object a line, with `text` (a string) and optionally \
                 `subject`, `received_at` (RFC 3339), `tz` (an IANA zone), `from`, \
                 `contact_email`"
            ))
        }
    };
    let received_at = match request.received_at.as_deref() {
        None => None,
        Some(t) => match DateTime::parse_from_rfc3339(t) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(e) => {
                return bad(format!(
                    "`received_at` {} is not an RFC 3339 instant ({e}), e.g. \
                     \"2026-12-04T09:30:00Z\"",
                    crate::quote::quote(t)
                ))
            }
        },
    };
    let tz = match request.tz.as_deref() {
        None => None,
        Some(z) => match z.parse::<Tz>() {
            Ok(tz) => Some(tz),
            Err(_) => {
                return bad(format!(
                    "`tz` {} is not an IANA time zone, e.g. \"Europe/Berlin\"",
                    crate::quote::quote(z)
                ))
            }
        },
    };
    let result = classify(&Reply {
        text: &request.text,
        subject: request.subject.as_deref(),
        received_at,
        tz,
        from: request.from.as_deref(),
        contact_email: request.contact_email.as_deref(),
    });
    serde_json::to_value(result).expect("a classification is JSON")
}

#[cfg(test)]
mod tests {
    use super::{classify, Intent, Reply};

    /// An out-of-office notice read as text (no headers said it was automatic) is `other`, with
    /// its two halves as the evidence; a person who writes that they are away and when to write
    /// again is deferring.
    #[test]
    fn an_out_of_office_notice_is_no_ones_answer() {
        let notices: &[(&str, [&str; 2])] = &[
            (
                "Thank you for your email. I am out of the office until 14 September with limited access to email. For urgent matters please call the main office.",
                ["out of the office", "limited access"],
            ),
            (
                "Bonjour,\n\nJe suis absente du bureau jusqu'au 24 août inclus, sans accès à mes e-mails. Pour toute demande urgente, merci d'appeler le standard.",
                ["absente du bureau", "sans accès"],
            ),
            (
                "Gracias por su mensaje. Estaré fuera de la oficina hasta el 3 de agosto sin acceso al correo. Para asuntos urgentes, llame al 91 555 12 34.",
                ["fuera de la oficina", "sin acceso"],
            ),
            (
                "Ich bin bis zum 3. August nicht im Büro. In dringenden Fällen wenden Sie sich an meine Kollegin.",
                ["nicht im Büro", "dringenden"],
            ),
            (
                "Bedankt voor je bericht. Ik ben afwezig tot en met 21 augustus. Voor dringende zaken kun je bellen met 020 555 0172.",
                ["afwezig", "dringende"],
            ),
            (
                "Grazie per il messaggio. Sarò fuori ufficio fino al 24 agosto compreso. Per urgenze può contattare il centralino.",
                ["fuori ufficio", "urgenze"],
            ),
            (
                "Olá, estarei ausente até dia 31 de agosto, com acesso limitado ao e-mail. Para assuntos urgentes, contacte a receção.",
                ["ausente", "acesso limitado"],
            ),
        ];
        for (text, evidence) in notices {
            let got = classify(&Reply {
                text,
                ..Default::default()
            });
            assert_eq!(got.intent, Intent::Other, "{text}: {got:?}");
            assert_eq!(got.evidence, evidence.to_vec(), "{text}");
            assert_eq!(got.resume_on, None, "{text}");
        }
        let person =
            "I'm out of the office until 14 September. Write me after that and we can talk.";
        let got = classify(&Reply {
            text: person,
            received_at: Some("2026-09-01T09:00:00Z".parse().unwrap()),
            ..Default::default()
        });
        assert_eq!(got.intent, Intent::NotNow, "{got:?}");
        // "back on" says when, not that someone is away: no notice.
        let got = classify(&Reply {
            text: "Not urgent, so let's get back on this in Q2.",
            received_at: Some("2026-09-01T09:00:00Z".parse().unwrap()),
            ..Default::default()
        });
        assert_eq!(got.intent, Intent::NotNow, "{got:?}");
    }
}
