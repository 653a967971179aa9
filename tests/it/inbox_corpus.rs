//! The inbox corpus (`fixtures/inbox/`, provenance in its README): every sample parsed as raw
//! MIME with `mail-parser` and classified, its class and return date checked against the
//! expectation written next to it in `cases.json` (read from each sample's text by hand, by the
//! rules of docs/signals.md, "Inbox signals").

use nudge::inbound::classify::{classify, MailClass};
use nudge::inbound::mail::parse_raw;
use nudge::inbound::return_date::ReturnDate;
use serde_json::Value;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/inbox")
}

#[test]
fn every_sample_gets_its_class_and_return_date() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    let received = chrono::DateTime::parse_from_rfc3339(manifest["received"].as_str().unwrap())
        .unwrap()
        .date_naive();
    let cases = manifest["cases"].as_array().unwrap();
    assert!(cases.len() >= 25, "the corpus has {} samples", cases.len());
    let mut wrong = Vec::new();
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let mail = parse_raw(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let class = classify(&mail, received);
        let want_class = case["class"].as_str().unwrap();
        let got_date = match &class {
            MailClass::OutOfOffice(ReturnDate::On(d)) => Some(d.to_string()),
            MailClass::OutOfOffice(ReturnDate::Unusable(_)) => Some("unusable".to_string()),
            _ => None,
        };
        let want_date = case["return_date"].as_str().map(str::to_string);
        if class.name() != want_class || got_date != want_date {
            wrong.push(format!(
                "{file}: got {} {got_date:?}, want {want_class} {want_date:?}",
                class.name()
            ));
        }
        // Every DSN names the message it returns: the thread it bounces from.
        if want_class.starts_with("bounce") {
            assert!(
                mail.thread_candidates()
                    .contains(&"<en_test.2@nudge>".to_string()),
                "{file}: {:?}",
                mail.thread_candidates()
            );
        }
    }
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

#[test]
fn a_message_that_is_not_mime_is_refused_not_a_crash() {
    let bytes = std::fs::read(dir().join("not_mime.eml")).unwrap();
    let e = parse_raw(&bytes).unwrap_err();
    assert!(e.to_string().contains("does not parse"), "{e}");
}
