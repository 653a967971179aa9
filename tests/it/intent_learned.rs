//! The learned second opinion (`nudge::inbound::intent::learned`), validated by leaving one
//! writer out: each tuning part is one writer's replies, so a model trained on the other
//! parts and measured on it is measured on phrasings it has not seen, without spending a
//! held-out part. These figures chose its threshold (`SURE`); the test
//! asserts them as measured, so a change to the features or the training can only keep or
//! raise them. Run with `--nocapture` for the table.

use nudge::inbound::intent::learned::{corpus, Model, SURE, TRAINING_PARTS, UNSUBSCRIBE_SURE};
use nudge::inbound::intent::Intent;

/// For each labelled intent (rows, in `Intent::ALL`'s order), how often the model's most
/// probable intent was each (columns) with at least `sure`; and its plain accuracy.
struct Validation {
    accuracy: f64,
    sure: Vec<(f32, [[usize; 6]; 6])>,
    labelled: [usize; 6],
}

fn leave_one_writer_out(levels: &[f32]) -> Validation {
    let parts: Vec<Vec<(String, Intent)>> = TRAINING_PARTS
        .iter()
        .map(|(_, text)| corpus(&[text]))
        .collect();
    let mut right = 0;
    let mut total = 0;
    let mut labelled = [0usize; 6];
    let mut sure: Vec<(f32, [[usize; 6]; 6])> = levels.iter().map(|l| (*l, [[0; 6]; 6])).collect();
    for held in 0..parts.len() {
        let train: Vec<(String, Intent)> = parts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != held)
            .flat_map(|(_, p)| p.iter().cloned())
            .collect();
        let model = Model::train(&train);
        for (text, label) in &parts[held] {
            let (said, pb) = model.most_probable(text);
            total += 1;
            labelled[label.rank()] += 1;
            if said == *label {
                right += 1;
            }
            for (level, m) in &mut sure {
                if pb >= *level {
                    m[label.rank()][said.rank()] += 1;
                }
            }
        }
    }
    Validation {
        accuracy: right as f64 / total as f64,
        sure,
        labelled,
    }
}

/// The figures a threshold is chosen by, at one level of probability.
struct AtLevel {
    /// Replies labelled with an intent (not `other`) the model names right, and wrong.
    named_right: f64,
    named_wrong: f64,
    /// Replies labelled `other` it moves to an intent.
    other_moved: f64,
    /// No's (`not_interested`, `unsubscribe`) it calls a yes.
    no_as_yes: f64,
    /// Replies labelled `other` it would call an unsubscribe (never answered: an unsubscribe
    /// is the tables' alone, but measured).
    other_as_unsub: f64,
}

fn at_level(v: &Validation, m: &[[usize; 6]; 6]) -> AtLevel {
    let (u, o, ni, i) = (
        Intent::Unsubscribe.rank(),
        Intent::Other.rank(),
        Intent::NotInterested.rank(),
        Intent::Interested.rank(),
    );
    let not_other = (v.labelled.iter().sum::<usize>() - v.labelled[o]) as f64;
    let named_right: usize = (0..6).filter(|r| *r != o).map(|r| m[r][r]).sum();
    let named_wrong: usize = (0..6)
        .filter(|r| *r != o)
        .map(|r| {
            (0..6)
                .filter(|c| *c != r && *c != o)
                .map(|c| m[r][c])
                .sum::<usize>()
        })
        .sum();
    let other_moved: usize = (0..6).filter(|c| *c != o).map(|c| m[o][c]).sum();
    let others = v.labelled[o] as f64;
    AtLevel {
        named_right: named_right as f64 / not_other,
        named_wrong: named_wrong as f64 / not_other,
        other_moved: other_moved as f64 / others,
        no_as_yes: (m[ni][i] + m[u][i]) as f64 / (v.labelled[ni] + v.labelled[u]) as f64,
        other_as_unsub: m[o][u] as f64 / others,
    }
}

#[test]
fn the_second_opinion_left_one_writer_out() {
    let levels = [0.8, 0.85, SURE, 0.93, 0.95, UNSUBSCRIBE_SURE];
    let v = leave_one_writer_out(&levels);
    println!(
        "Leaving one writer out ({} replies, {} writers): accuracy {:.3}\n\
         | probability ≥ | named right | named wrong | `other` moved | a no called a yes | `other` called unsubscribe |\n\
         |---|---|---|---|---|---|",
        v.labelled.iter().sum::<usize>(),
        TRAINING_PARTS.len(),
        v.accuracy,
    );
    for (level, m) in &v.sure {
        let f = at_level(&v, m);
        println!(
            "| {level} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} |",
            f.named_right, f.named_wrong, f.other_moved, f.no_as_yes, f.other_as_unsub
        );
    }
    let u = Intent::Unsubscribe.rank();
    for (level, m) in &v.sure {
        let by_label: Vec<String> = Intent::ALL
            .iter()
            .map(|i| format!("{i} {}", m[i.rank()][u]))
            .collect();
        println!(
            "unsubscribe at ≥ {level}: {} of {} labelled so; called so: {}",
            m[u][u],
            v.labelled[u],
            by_label.join(", ")
        );
    }
    let at = |level: f32| {
        v.sure
            .iter()
            .find(|(l, _)| *l == level)
            .expect("measured")
            .1
    };
    let f = at_level(&v, &at(SURE));
    // The unsubscribes it may answer where the tables found too little: as measured at
    // 0.97 (seventeen writers), 649 of 778 named (0.834) and 3 wrong (0.995 right; 2 of the 3
    // are `other` replies).
    let m = at(UNSUBSCRIBE_SURE);
    let called: usize = (0..6).map(|r| m[r][u]).sum();
    let precision = m[u][u] as f64 / called as f64;
    let recall = m[u][u] as f64 / v.labelled[u] as f64;
    assert!(precision >= 0.995, "unsubscribe precision {precision:.3}");
    assert!(recall >= 0.834, "unsubscribe recall {recall:.3}");
    // As measured (4,480 replies, seventeen writers): accuracy 0.921; at 0.9 named right 0.868,
    // wrong 0.016, `other` moved 0.047, a no called a yes 0.0073. The level is the lowest that
    // keeps the share named wrong at most where nine writers put it at 0.9 (0.017).
    assert!(v.accuracy >= 0.920, "accuracy {:.3}", v.accuracy);
    assert!(f.named_right >= 0.867, "named right {:.3}", f.named_right);
    assert!(f.named_wrong <= 0.017, "named wrong {:.4}", f.named_wrong);
    assert!(f.other_moved <= 0.048, "other moved {:.3}", f.other_moved);
    assert!(
        f.no_as_yes <= 0.0074,
        "a no called a yes {:.4}",
        f.no_as_yes
    );
}

/// The same corpus gives the same weights: training twice answers the same probabilities.
#[test]
fn training_is_deterministic() {
    let samples = corpus(&TRAINING_PARTS.map(|(_, text)| text));
    let a = Model::train(&samples);
    let b = nudge::inbound::intent::learned::model();
    for (text, _) in samples.iter().step_by(37) {
        assert_eq!(a.probabilities(text), b.probabilities(text), "{text}");
    }
}
