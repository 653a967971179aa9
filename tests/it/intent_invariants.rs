//! What lies below a reply's own words never changes what it says: every reply of the tuning
//! parts (`fixtures/intent/tune*.jsonl`), with the sequence's own message quoted below it in its
//! language's mail-client form (holding our "reply STOP to opt out", a question that invites a
//! yes, and the quote header's own date), with an Outlook header block, or with a legal footer
//! that offers to unsubscribe, classifies to the same intent, `resume_on` and referral as the
//! reply alone. The held-out parts are left out: a failure prints the reply, and their text must
//! not be read while the tables are tuned.

use crate::intent_corpus::{load, read, tuning_parts, Sample};
use nudge::inbound::intent::ReplyIntent;

/// The sequence's first email, quoted as each language's mail client quotes it: a header with
/// its own date, then `>` lines with an opt-out line and a question that invites a yes.
fn quoted(language: &str) -> &'static str {
    match language {
        "de" => {
            "Am Mo., 6. Apr. 2026 um 08:14 Uhr schrieb Lena Fischer <lena@vendor.example>:\n\
             > Hallo, hätten Sie nächste Woche 15 Minuten für ein kurzes Gespräch?\n\
             > Gerne schicke ich Ihnen auch unsere Preise.\n\
             > Antworten Sie mit STOP, um keine weiteren Nachrichten zu erhalten."
        }
        "fr" => {
            "Le lun. 6 avr. 2026 à 08:14, Lena Fischer <lena@vendor.example> a écrit :\n\
             > Bonjour, auriez-vous 15 minutes la semaine prochaine pour un échange ?\n\
             > Je peux aussi vous envoyer nos tarifs.\n\
             > Répondez STOP pour ne plus recevoir nos messages."
        }
        "es" => {
            "El lun, 6 abr 2026 a las 8:14, Lena Fischer (<lena@vendor.example>) escribió:\n\
             > Hola, ¿tendría 15 minutos la semana que viene para una llamada?\n\
             > También puedo enviarle nuestros precios.\n\
             > Responda BAJA para no recibir más mensajes."
        }
        "pt" => {
            "Em seg., 6 de abr. de 2026 às 08:14, Lena Fischer <lena@vendor.example> escreveu:\n\
             > Olá, teria 15 minutos na próxima semana para uma conversa?\n\
             > Posso também enviar os nossos preços.\n\
             > Responda SAIR para não receber mais mensagens."
        }
        "nl" => {
            "Op ma 6 apr 2026 om 08:14 schreef Lena Fischer <lena@vendor.example>:\n\
             > Hallo, heeft u volgende week 15 minuten voor een kort gesprek?\n\
             > Ik stuur u ook graag onze prijzen.\n\
             > Antwoord STOP om geen berichten meer te ontvangen."
        }
        "it" => {
            "Il giorno lun 6 apr 2026 alle ore 08:14 Lena Fischer <lena@vendor.example> ha scritto:\n\
             > Buongiorno, avrebbe 15 minuti la prossima settimana per una chiamata?\n\
             > Posso anche inviarle i nostri prezzi.\n\
             > Risponda STOP per non ricevere altri messaggi."
        }
        _ => {
            "On Mon, Apr 6, 2026 at 8:14 AM Lena Fischer <lena@vendor.example> wrote:\n\
             > Hi, would you have 15 minutes next week for a quick call?\n\
             > Happy to send pricing over too.\n\
             > Reply STOP to opt out of further emails."
        }
    }
}

/// The same message under an Outlook header block in the reply's language.
fn outlook(language: &str) -> &'static str {
    match language {
        "de" => {
            "Von: Lena Fischer <lena@vendor.example>\nGesendet: Montag, 6. April 2026 08:14\n\
             An: kontakt@kunde.example\nBetreff: Kurzes Gespräch?\n\n\
             Hätten Sie Interesse an einer Demo? Zum Abmelden antworten Sie mit STOP."
        }
        "fr" => {
            "De : Lena Fischer <lena@vendor.example>\nEnvoyé : lundi 6 avril 2026 08:14\n\
             À : contact@client.example\nObjet : Un échange ?\n\n\
             Seriez-vous intéressé par une démo ? Pour vous désinscrire, répondez STOP."
        }
        "es" => {
            "De: Lena Fischer <lena@vendor.example>\nEnviado el: lunes, 6 de abril de 2026 8:14\n\
             Para: contacto@cliente.example\nAsunto: ¿Una llamada?\n\n\
             ¿Le interesaría una demo? Para darse de baja, responda BAJA."
        }
        "pt" => {
            "De: Lena Fischer <lena@vendor.example>\nEnviada em: segunda-feira, 6 de abril de 2026 08:14\n\
             Para: contato@cliente.example\nAssunto: Uma conversa?\n\n\
             Teria interesse numa demonstração? Para cancelar a inscrição, responda SAIR."
        }
        "nl" => {
            "Van: Lena Fischer <lena@vendor.example>\nVerzonden: maandag 6 april 2026 08:14\n\
             Aan: contact@klant.example\nOnderwerp: Kort gesprek?\n\n\
             Heeft u interesse in een demo? Afmelden? Antwoord STOP."
        }
        "it" => {
            "Da: Lena Fischer <lena@vendor.example>\nInviato: lunedì 6 aprile 2026 08:14\n\
             A: contatto@cliente.example\nOggetto: Una chiamata?\n\n\
             Le interesserebbe una demo? Per annullare l'iscrizione risponda STOP."
        }
        _ => {
            "From: Lena Fischer <lena@vendor.example>\nSent: Monday, April 6, 2026 8:14 AM\n\
             To: contact@client.example\nSubject: Quick call?\n\n\
             Would you be interested in a demo? To unsubscribe, reply STOP."
        }
    }
}

/// A company's legal footer with its own unsubscribe link, under the person's words.
fn footer(language: &str) -> &'static str {
    match language {
        "de" => {
            "Diese E-Mail kann vertrauliche Informationen enthalten. \
             Newsletter abbestellen: https://kunde.example/abmelden"
        }
        "fr" => {
            "Ce message peut contenir des informations confidentielles. \
             Se désabonner de la newsletter : https://client.example/desinscription"
        }
        "es" => {
            "Este mensaje puede contener información confidencial. \
             Darse de baja del boletín: https://cliente.example/baja"
        }
        "pt" => {
            "Esta mensagem pode conter informação confidencial. \
             Cancelar a subscrição da newsletter: https://cliente.example/sair"
        }
        "nl" => {
            "Dit bericht kan vertrouwelijke informatie bevatten. \
             Afmelden voor de nieuwsbrief: https://klant.example/afmelden"
        }
        "it" => {
            "Questo messaggio può contenere informazioni riservate. \
             Annulla l'iscrizione alla newsletter: https://cliente.example/disiscriviti"
        }
        _ => {
            "This email may contain confidential information. \
             Unsubscribe from our newsletter: https://client.example/unsubscribe"
        }
    }
}

/// The parts of a reading that must not move.
fn key(r: &ReplyIntent) -> String {
    format!(
        "{} resume_on={:?} referral={:?}",
        r.intent,
        r.resume_on,
        r.referral.as_ref().map(|x| x.email.to_lowercase())
    )
}

#[test]
fn what_lies_below_a_reply_never_changes_what_it_says() {
    let samples: Vec<Sample> = tuning_parts().into_iter().flat_map(load).collect();
    let mut moved = Vec::new();
    let mut checked = 0;
    for s in &samples {
        let alone = key(&read(s, &s.text));
        let lang = s.language.as_str();
        let wrapped = [
            ("quoted", format!("{}\n\n{}", s.text, quoted(lang))),
            ("outlook", format!("{}\n\n{}", s.text, outlook(lang))),
            ("footer", format!("{}\n\n{}", s.text, footer(lang))),
        ];
        for (how, text) in &wrapped {
            checked += 1;
            let got = key(&read(s, text));
            if got != alone {
                moved.push(format!("{} ({how}): alone {alone}; with it {got}", s.id));
            }
        }
    }
    assert!(checked >= 3 * 1_900, "checked {checked}");
    assert!(
        moved.is_empty(),
        "{} of {checked} readings moved:\n{}",
        moved.len(),
        moved.join("\n")
    );
}
