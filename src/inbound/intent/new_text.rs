//! The new text of a reply: what the person wrote this time, without the history it quotes and
//! without the signature under it.
//!
//! The cut is at the first line that starts the quoted history — a `>` line, a reply header
//! ("On … wrote:", "Am … schrieb …:", "Le … a écrit :", "El … escribió:", "Em … escreveu:",
//! "Op … schreef …:", "Il giorno … ha scritto:", also when the mail client wrapped it over two
//! lines), an "Original Message" rule in any of the seven languages, Outlook's underscore rule, or
//! an Outlook header block (`From:` / `Von:` / `De :` / `Van:` / `Da:` followed within four lines
//! by its `Sent:` / `Date:` / `Gesendet:` / `Envoyé :` / `Enviado:` / `Verzonden:` / `Inviato:`
//! line) — or at the signature: a `-- ` line, or a sign-off line ("Best regards", "Mit
//! freundlichen Grüßen", "Cordialement", "Saludos", "Atenciosamente", "Met vriendelijke groet",
//! "Cordiali saluti", …) that stands alone after some text.

/// Reply headers: how the folded line starts, a word it contains; it ends with `:`.
const REPLY_HEADERS: &[(&str, &str)] = &[
    ("on ", "wrote"),
    ("am ", "schrieb"),
    ("am ", "geschrieben"),
    ("le ", "a ecrit"),
    ("el ", "escribio"),
    ("em ", "escreveu"),
    ("op ", "schreef"),
    ("op ", "geschreven"),
    ("il giorno ", "ha scritto"),
    ("il ", "ha scritto"),
];

/// The rules mail clients put above the original.
const ORIGINAL_RULES: &[&str] = &[
    "-----original message",
    "-----ursprungliche nachricht",
    "-----urspruengliche nachricht",
    "-----message d'origine",
    "-----mensaje original",
    "-----mensagem original",
    "-----oorspronkelijk bericht",
    "-----messaggio originale",
    "________________________________",
    "begin forwarded message",
    "---------- forwarded message",
];

/// The first line of an Outlook header block, and the lines that confirm it.
const HEADER_FROM: &[&str] = &["from:", "von:", "de :", "de:", "van:", "da:"];
const HEADER_SENT: &[&str] = &[
    "sent:",
    "date:",
    "gesendet:",
    "datum:",
    "envoye :",
    "envoye:",
    "date :",
    "enviado:",
    "enviado el:",
    "enviada:",
    "enviado em:",
    "enviada em:",
    "fecha:",
    "data:",
    "verzonden:",
    "inviato:",
];

/// Sign-offs that start a signature when they stand alone on their line.
const SIGN_OFFS: &[&str] = &[
    "best",
    "best regards",
    "kind regards",
    "warm regards",
    "regards",
    "best wishes",
    "cheers",
    "thanks",
    "thank you",
    "many thanks",
    "sincerely",
    "yours sincerely",
    "yours truly",
    "mit freundlichen grussen",
    "mit freundlichen gruessen",
    "freundliche grusse",
    "viele grusse",
    "beste grusse",
    "liebe grusse",
    "lg",
    "vg",
    "mfg",
    "gruss",
    "grusse",
    "danke",
    "cordialement",
    "bien cordialement",
    "bien a vous",
    "salutations",
    "meilleures salutations",
    "merci",
    "bonne journee",
    "saludos",
    "un saludo",
    "saludos cordiales",
    "atentamente",
    "gracias",
    "un abrazo",
    "atenciosamente",
    "abracos",
    "cumprimentos",
    "melhores cumprimentos",
    "obrigado",
    "obrigada",
    "met vriendelijke groet",
    "met vriendelijke groeten",
    "vriendelijke groet",
    "groeten",
    "groet",
    "mvg",
    "cordiali saluti",
    "distinti saluti",
    "saluti",
    "un saluto",
    "grazie",
    "buona giornata",
];

/// The new text of `text` (a prefix of it, trimmed).
pub fn new_text(text: &str) -> &str {
    let lines: Vec<(usize, &str)> = line_starts(text);
    let mut written = false;
    for (i, &(start, line)) in lines.iter().enumerate() {
        let folded = super::fold(line.trim());
        let next = lines.get(i + 1).map(|(_, l)| super::fold(l.trim()));
        if starts_history(&folded, next.as_deref(), &lines[i + 1..]) {
            return text[..start].trim();
        }
        if written && is_signature(line, &folded) {
            return text[..start].trim();
        }
        if !folded.is_empty() {
            written = true;
        }
    }
    text.trim()
}

/// Each line with its byte offset.
fn line_starts(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        out.push((start, line.trim_end_matches(['\n', '\r'])));
        start += line.len();
    }
    out
}

fn starts_history(line: &str, next: Option<&str>, rest: &[(usize, &str)]) -> bool {
    if line.starts_with('>') || ORIGINAL_RULES.iter().any(|r| line.starts_with(r)) {
        return true;
    }
    // A reply header, on one line or wrapped over two.
    let two = next.map(|n| format!("{line} {n}"));
    for (head, tail) in REPLY_HEADERS {
        let header = |l: &str| l.contains(tail) && l.trim_end().ends_with(':');
        if line.starts_with(head)
            && (header(line) || two.as_deref().is_some_and(header))
            && line.len() < 300
        {
            return true;
        }
    }
    // An Outlook header block: a From line, and a Sent/Date line within four lines.
    if HEADER_FROM.iter().any(|h| line.starts_with(h)) {
        return rest.iter().take(4).any(|(_, l)| {
            let l = super::fold(l.trim());
            HEADER_SENT.iter().any(|h| l.starts_with(h))
        });
    }
    false
}

fn is_signature(raw: &str, folded: &str) -> bool {
    if raw == "-- " || raw == "--" || raw.trim() == "—" {
        return true;
    }
    let bare = folded.trim_end_matches([',', '.', '!', ' ']).trim();
    !bare.is_empty() && SIGN_OFFS.contains(&bare)
}

#[cfg(test)]
mod tests {
    use super::new_text;

    #[test]
    fn quoted_history_and_signatures_are_cut() {
        let cases: &[(&str, &str)] = &[
            ("Sounds good.\n\nOn Tue, Dec 1, 2026 at 10:00 AM Bob <bob@x.com> wrote:\n> Please remove me", "Sounds good."),
            ("Yes!\nOn Tue, Dec 1, 2026 at 10:00 AM Bob Miller <\nbob@x.com> wrote:\n> hi", "Yes!"),
            ("Gerne.\n\nAm 01.12.2026 um 10:00 schrieb Bob <bob@x.com>:\n> Abmelden", "Gerne."),
            ("Oui.\n\nLe mar. 1 déc. 2026 à 10:00, Bob <bob@x.com> a écrit :\n> texte", "Oui."),
            ("Sí.\n\nEl mar, 1 dic 2026 a las 10:00, Bob (<bob@x.com>) escribió:\n> texto", "Sí."),
            ("Sim.\n\nEm ter., 1 de dez. de 2026 às 10:00, Bob <bob@x.com> escreveu:\n> texto", "Sim."),
            ("Ja.\n\nOp di 1 dec. 2026 om 10:00 schreef Bob <bob@x.com>:\n> tekst", "Ja."),
            ("Sì.\n\nIl giorno mar 1 dic 2026 alle ore 10:00 Bob <bob@x.com> ha scritto:\n> testo", "Sì."),
            ("Call me.\n\nFrom: Bob <bob@x.com>\nSent: Tuesday, December 1, 2026 10:00 AM\nTo: Ann\nSubject: Hi", "Call me."),
            ("Ruf an.\n\nVon: Bob\nGesendet: Dienstag, 1. Dezember 2026 10:00\nAn: Ann\nBetreff: Hallo", "Ruf an."),
            ("Appelez-moi.\n\nDe : Bob\nEnvoyé : mardi 1 décembre 2026 10:00\nÀ : Ann\nObjet : Bonjour", "Appelez-moi."),
            ("Llámame.\n-----Mensaje original-----\nDe: Bob", "Llámame."),
            ("Bel me.\n\nVan: Bob\nVerzonden: dinsdag 1 december 2026 10:00\nAan: Ann\nOnderwerp: Hoi", "Bel me."),
            ("Pode me ligar.\n\nDe: Bob\nEnviada em: terça-feira, 7 de julho de 2026 10:02\nPara: Ann\nAssunto: Oi", "Pode me ligar."),
            ("Chiamami.\n\nDa: Bob\nInviato: martedì 1 dicembre 2026 10:00\nA: Ann\nOggetto: Ciao", "Chiamami."),
            ("Not now.\n\nBest regards,\nJane\nTo unsubscribe from our newsletter click here", "Not now."),
            ("Kein Interesse.\n\nMit freundlichen Grüßen\nMax Muster", "Kein Interesse."),
            ("No thanks\n-- \nJane Doe | Acme", "No thanks"),
            // A sign-off that is the whole message is the message.
            ("Thanks!", "Thanks!"),
            // "De:" inside the text, with no Sent line after it, is not a header block.
            ("De: ahora no, gracias, escríbeme en marzo.", "De: ahora no, gracias, escríbeme en marzo."),
        ];
        for (text, want) in cases {
            assert_eq!(new_text(text), *want, "{text:?}");
        }
    }
}
