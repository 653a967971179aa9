//! A second opinion learned from the labelled replies: a multinomial logistic regression over
//! hashed word and character n-grams of a reply's new text, trained on the corpus's tuning
//! parts (`fixtures/intent/tune*.jsonl`, compiled into the binary).
//!
//! The phrase tables decide; the model is asked in two places only, where the tables are known
//! to fail on text they have not seen (each new writer brings phrasings no table has): where
//! they found too little to judge (`other`), and where they read a no that may be a yes
//! ("no call needed, but send the prices"). It answers only when it is sure
//! ([`SURE`]); an `unsubscribe` only where the tables found too little, and surer still
//! ([`UNSUBSCRIBE_SURE`]); it never overrules an unsubscribe the tables found, and never
//! turns their no into one.
//! Its evidence is the words that weighed most for its answer, as they stand in the text.
//!
//! Training is deterministic (the samples in the corpus's order, a fixed stride through them,
//! a fixed number of passes, no random draw), so the same corpus always gives the same weights;
//! it runs once, on first use (about a tenth of a second in a release build).

use super::{fold, new_text, Intent};
use std::sync::OnceLock;

/// The tuning parts of the labelled corpus, by file name: what the model learns from. The
/// held-out parts are never here.
pub const TRAINING_PARTS: [(&str, &str); 17] = [
    (
        "tune.jsonl",
        include_str!("../../../fixtures/intent/tune.jsonl"),
    ),
    (
        "tune2.jsonl",
        include_str!("../../../fixtures/intent/tune2.jsonl"),
    ),
    (
        "tune3.jsonl",
        include_str!("../../../fixtures/intent/tune3.jsonl"),
    ),
    (
        "tune4.jsonl",
        include_str!("../../../fixtures/intent/tune4.jsonl"),
    ),
    (
        "tune5.jsonl",
        include_str!("../../../fixtures/intent/tune5.jsonl"),
    ),
    (
        "tune6.jsonl",
        include_str!("../../../fixtures/intent/tune6.jsonl"),
    ),
    (
        "tune7.jsonl",
        include_str!("../../../fixtures/intent/tune7.jsonl"),
    ),
    (
        "tune8.jsonl",
        include_str!("../../../fixtures/intent/tune8.jsonl"),
    ),
    (
        "tune9.jsonl",
        include_str!("../../../fixtures/intent/tune9.jsonl"),
    ),
    (
        "tune10.jsonl",
        include_str!("../../../fixtures/intent/tune10.jsonl"),
    ),
    (
        "tune11.jsonl",
        include_str!("../../../fixtures/intent/tune11.jsonl"),
    ),
    (
        "tune12.jsonl",
        include_str!("../../../fixtures/intent/tune12.jsonl"),
    ),
    (
        "tune13.jsonl",
        include_str!("../../../fixtures/intent/tune13.jsonl"),
    ),
    (
        "tune14.jsonl",
        include_str!("../../../fixtures/intent/tune14.jsonl"),
    ),
    (
        "tune15.jsonl",
        include_str!("../../../fixtures/intent/tune15.jsonl"),
    ),
    (
        "tune16.jsonl",
        include_str!("../../../fixtures/intent/tune16.jsonl"),
    ),
    (
        "tune17.jsonl",
        include_str!("../../../fixtures/intent/tune17.jsonl"),
    ),
];

/// The least probability the model's answer needs to count. Chosen by leaving one writer out
/// (each tuning part is one writer's; `tests/it/intent_learned.rs` asserts the figures): the
/// lowest level at which it names at most 1.7 % of the replies wrong (seventeen writers: 86.8 %
/// right, 1.6 % wrong; it moves 4.7 % of those labelled `other` to an intent, and calls 0.7 %
/// of the no's a yes).
pub const SURE: f32 = 0.9;

/// The least probability an unsubscribe needs, where the tables found too little to judge.
/// Chosen by leaving one writer out: the lowest level at which 99 % of the model's
/// unsubscribes are right (seventeen writers: 649 of 778 named, 3 wrong; at 0.95, 676 and 7,
/// just under 99 %). It is not asked over words a table row says mean no intent (a thank-you,
/// "where did you get my address"), which were most of its wrong ones.
pub const UNSUBSCRIBE_SURE: f32 = 0.97;

/// The model trained on [`TRAINING_PARTS`], trained on first use.
pub fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let samples = corpus(&TRAINING_PARTS.map(|(_, text)| text));
        Model::train(&samples)
    })
}

/// `(new text, intent)` of every labelled line of `parts` (JSON Lines with `text` and `intent`).
pub fn corpus(parts: &[&str]) -> Vec<(String, Intent)> {
    #[derive(serde::Deserialize)]
    struct Line {
        text: String,
        intent: Intent,
    }
    parts
        .iter()
        .flat_map(|part| part.lines().filter(|l| !l.trim().is_empty()))
        .map(|line| {
            let l: Line = serde_json::from_str(line).expect("the corpus is valid JSON Lines");
            (reads(new_text(&l.text)), l.intent)
        })
        .collect()
}

/// What the model reads of a reply's new text: its lines but a footer's (a link, a legal
/// notice), whose words are the sender's boilerplate, not the person's.
pub fn reads(new_text: &str) -> String {
    super::tables::without_footers(new_text)
}

/// The model's answer where it overrules the tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Opinion {
    /// What it says the reply is.
    pub intent: Intent,
    /// 0.5 at the least probability it needs, 0.6 at certainty: never above what a lone table
    /// phrase earns, since no phrase decided it.
    pub confidence: f64,
    /// The words that weighed most for it, as they stand in the text.
    pub evidence: Vec<String>,
}

/// What the model says of a reply's new text, where the tables said `tables` (and found a
/// yes among the phrases when `saw_yes`, and words that say no intent when `saw_other`: a
/// thank-you, a question where the address came from): the answer to give instead, or `None`
/// to keep the tables'. It is asked where the tables found too little to judge (`other`), and
/// where they weighed a yes against a no and chose the no ("no call needed, but send the
/// prices"); a no with no yes in sight ("Ça ne m'intéresse pas") stays a no, and it never
/// overrules an unsubscribe, a referral or a date.
pub fn second_opinion(
    body: &str,
    tables: Intent,
    saw_yes: bool,
    saw_other: bool,
) -> Option<Opinion> {
    let asked = tables == Intent::Other || (tables == Intent::NotInterested && saw_yes);
    if !asked {
        return None;
    }
    let read = reads(body);
    if read.trim().is_empty() {
        return None;
    }
    let model = model();
    let (said, sure) = model.most_probable(&read);
    let allowed = match tables {
        // Too little for the tables: any intent the model is sure of, an unsubscribe only
        // surer still and never over words the tables know say none (opting out a person
        // who said thanks, or asked where their address came from, is the costliest error).
        Intent::Other => match said {
            Intent::Other => false,
            Intent::Unsubscribe => sure >= UNSUBSCRIBE_SURE && !saw_other,
            _ => true,
        },
        // A no the model is sure is a yes; never a no it calls an unsubscribe ("no thanks"
        // ends this sequence, "stop writing" every one: only the tables' words tell them apart).
        _ => said == Intent::Interested,
    };
    if !allowed || sure < SURE {
        return None;
    }
    let above = f64::from((sure - SURE) / (1.0 - SURE));
    Some(Opinion {
        intent: said,
        confidence: ((0.5 + 0.1 * above.clamp(0.0, 1.0)) * 100.0).round() / 100.0,
        evidence: model.evidence(&read, said),
    })
}

/// Hashed feature space: 2^16 buckets, each with a weight per intent.
const BUCKETS: usize = 1 << 16;

/// The features of a text: hashed word unigrams and bigrams, and character 4-grams of each
/// word with its boundaries (so "desinscrever" and "desinscreva" share most of theirs).
pub fn features(text: &str) -> Vec<u32> {
    let folded = fold(text);
    let words: Vec<&str> = words_of(&folded).into_iter().map(|(_, w)| w).collect();
    let mut out = Vec::with_capacity(words.len() * 8 + 1);
    out.push(bucket(&[b"\x00bias"]));
    let mut padded: Vec<char> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        out.push(bucket(&[b"w", w.as_bytes()]));
        if let Some(next) = words.get(i + 1) {
            out.push(bucket(&[b"b", w.as_bytes(), b" ", next.as_bytes()]));
        }
        // The word's character 4-grams, bounded by `<` and `>`, hashed without a string each.
        padded.clear();
        padded.push('<');
        padded.extend(w.chars());
        padded.push('>');
        for g in padded.windows(4) {
            let mut utf8 = [0u8; 16];
            let mut len = 0;
            for c in g {
                len += c.encode_utf8(&mut utf8[len..]).len();
            }
            out.push(bucket(&[b"c", &utf8[..len]]));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// FNV-1a over the parts, folded into [`BUCKETS`].
fn bucket(parts: &[&[u8]]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    (h % BUCKETS as u64) as u32
}

/// The trained weights.
pub struct Model {
    weights: Vec<[f32; 6]>,
}

/// Passes over the samples.
const EPOCHS: usize = 30;
/// Step size of the first pass (it decays as 1/(1 + pass)).
const RATE: f32 = 0.2;
/// L2 penalty per step.
const L2: f32 = 1e-5;

impl Model {
    /// Trains on `(new text, intent)` pairs, in order.
    pub fn train<S: AsRef<str>>(samples: &[(S, Intent)]) -> Model {
        let encoded: Vec<(Vec<u32>, usize)> = samples
            .iter()
            .map(|(t, i)| (features(t.as_ref()), i.rank()))
            .collect();
        let mut weights = vec![[0f32; 6]; BUCKETS];
        // A fixed interleaving of the samples per pass (a stride through them), so a pass does
        // not read one writer's replies in a row; deterministic.
        let n = encoded.len();
        let stride = coprime_stride(n);
        for epoch in 0..EPOCHS {
            let rate = RATE / (1.0 + epoch as f32);
            let mut k = epoch % n.max(1);
            for _ in 0..n {
                let (feats, label) = &encoded[k];
                let p = softmax(&weights, feats);
                for f in feats {
                    let w = &mut weights[*f as usize];
                    for c in 0..6 {
                        let target = if c == *label { 1.0 } else { 0.0 };
                        let grad = p[c] - target;
                        w[c] -= rate * (grad + L2 * w[c]);
                    }
                }
                k = (k + stride) % n;
            }
        }
        Model { weights }
    }

    /// The probability of each intent (in [`Intent::ALL`]'s order) for a new text.
    pub fn probabilities(&self, text: &str) -> [f32; 6] {
        softmax(&self.weights, &features(text))
    }

    /// The most probable intent for a new text, with its probability.
    pub fn most_probable(&self, text: &str) -> (Intent, f32) {
        let p = self.probabilities(text);
        let (best, sure) = p
            .iter()
            .enumerate()
            .fold((0, 0f32), |a, (i, v)| if *v > a.1 { (i, *v) } else { a });
        (Intent::ALL[best], sure)
    }

    /// The words of `text` that weigh most for `intent` (up to three of three letters or more,
    /// in the text's order, as they stand in it): each word's own features' weight for it, less
    /// their mean weight.
    pub fn evidence(&self, text: &str, intent: Intent) -> Vec<String> {
        let c = intent.rank();
        let mut scored: Vec<(usize, f32, &str)> = Vec::new();
        for (start, word) in words_of(text) {
            if word.chars().count() < 3 {
                continue;
            }
            let mut score = 0.0;
            for f in features(word) {
                let w = &self.weights[f as usize];
                score += w[c] - w.iter().sum::<f32>() / 6.0;
            }
            if score > 0.0 && !scored.iter().any(|(_, _, w)| fold(w) == fold(word)) {
                scored.push((start, score, word));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(3);
        scored.sort_by_key(|(start, _, _)| *start);
        scored.into_iter().map(|(_, _, w)| w.to_string()).collect()
    }
}

/// The words of `text` with their byte offsets.
fn words_of(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let part = ch.is_alphanumeric() || ch == '\'' || ch == '’';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let w = text[s..i].trim_matches(|c| c == '\'' || c == '’');
                if !w.is_empty() {
                    out.push((s, w));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn softmax(weights: &[[f32; 6]], feats: &[u32]) -> [f32; 6] {
    let mut z = [0f32; 6];
    for f in feats {
        let w = &weights[*f as usize];
        for c in 0..6 {
            z[c] += w[c];
        }
    }
    let max = z.iter().cloned().fold(f32::MIN, f32::max);
    let mut sum = 0.0;
    for v in &mut z {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in &mut z {
        *v /= sum;
    }
    z
}

/// A stride near n/φ that shares no factor with n, so stepping by it visits every sample once.
fn coprime_stride(n: usize) -> usize {
    if n <= 2 {
        return 1;
    }
    let mut s = ((n as f64) * 0.618_034) as usize;
    while gcd(s, n) != 1 {
        s += 1;
    }
    s
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the second opinion is asked, and what it may answer: an unsubscribe only over
    /// `other` and at [`UNSUBSCRIBE_SURE`], never over an intent the tables decided other than
    /// a no weighed against a yes.
    #[test]
    fn it_is_asked_only_where_the_tables_are_weak_and_an_unsubscribe_needs_more() {
        // Where the tables found nothing, a plain request to stop is the model's to answer.
        let plain = "Please remove me from your list and never write again";
        assert_eq!(
            second_opinion(plain, Intent::Other, false, false).map(|o| o.intent),
            Some(Intent::Unsubscribe)
        );
        // Never over words the tables know say no intent (a thank-you, where the address
        // came from).
        assert_eq!(second_opinion(plain, Intent::Other, false, true), None);
        let texts = [
            "Please remove me from your list and never write again",
            "Bitte keine E-Mails mehr, löschen Sie meine Adresse",
            "Sounds great, can we talk Thursday at 3?",
            "Not the right person, I left the company last year",
            "Ça ne m'intéresse pas",
            "Reach out again in the third quarter",
            "Thanks",
        ];
        for text in texts {
            for tables in Intent::ALL {
                for saw_yes in [false, true] {
                    let got = second_opinion(text, tables, saw_yes, false);
                    let asked =
                        tables == Intent::Other || (tables == Intent::NotInterested && saw_yes);
                    if !asked {
                        assert_eq!(got, None, "{text:?} over {tables} ({saw_yes})");
                    }
                    if let Some(o) = got {
                        if o.intent == Intent::Unsubscribe {
                            assert_eq!(tables, Intent::Other, "{text:?}");
                            assert!(model().most_probable(text).1 >= UNSUBSCRIBE_SURE);
                        }
                        assert_ne!(o.intent, Intent::Other, "{text:?}");
                        assert!((0.5..=0.6).contains(&o.confidence), "{text:?}: {o:?}");
                        assert_eq!(model().most_probable(text).0, o.intent, "{text:?}");
                        assert!(model().most_probable(text).1 >= SURE, "{text:?}");
                        if tables == Intent::NotInterested {
                            assert_eq!(o.intent, Intent::Interested, "{text:?}");
                        }
                    }
                }
            }
        }
    }

    /// A footer line below the words never moves what the model reads, and its evidence is
    /// words of the text as they stand in it.
    #[test]
    fn footers_are_not_read_and_evidence_is_the_texts_own_words() {
        let text = "Klingt spannend, schicken Sie mir bitte die Preise.";
        let with_footer =
            format!("{text}\nUnsubscribe from our newsletter: https://client.example/unsubscribe");
        assert_eq!(reads(&with_footer).trim(), text);
        let p = model().probabilities(&reads(&with_footer));
        assert_eq!(p, model().probabilities(&reads(text)));
        for word in model().evidence(text, Intent::Interested) {
            assert!(text.contains(&word), "{word}");
            assert!(word.chars().count() >= 3, "{word}");
        }
    }
}
