//! Reply intent's classifications per second: every reply of `fixtures/intent/` (both parts,
//! 420 replies in seven languages) classified per iteration — quoted history and signature
//! cut, the language detected, the phrase tables matched, `resume_on` and the referral read.
//!
//! `cargo bench --bench intent` (Criterion reports elements per second: classifications); the
//! second function reads the same replies by the phrase tables alone, without the learned
//! second opinion, so one run shows what it costs.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nudge::inbound::intent::{classify, classify_by_tables, Reply, ReplyIntent};
use std::hint::black_box;

fn corpus() -> Vec<(String, chrono::DateTime<chrono::Utc>)> {
    let mut out = Vec::new();
    for file in ["tune.jsonl", "holdout.jsonl"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/intent")
            .join(file);
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let at = chrono::DateTime::parse_from_rfc3339(v["received_at"].as_str().unwrap())
                .unwrap()
                .with_timezone(&chrono::Utc);
            out.push((v["text"].as_str().unwrap().to_string(), at));
        }
    }
    out
}

/// A way to read a reply.
type Classifier = fn(&Reply) -> ReplyIntent;

fn bench(c: &mut Criterion) {
    let replies = corpus();
    let mut group = c.benchmark_group("intent");
    group.throughput(Throughput::Elements(replies.len() as u64));
    // With the learned second opinion, then by the phrase tables alone: what the model costs.
    let classifiers: [(&str, Classifier); 2] = [
        ("corpus_per_iteration", classify),
        ("tables_alone_per_iteration", classify_by_tables),
    ];
    for (name, classifier) in classifiers {
        group.bench_function(name, |b| {
            b.iter(|| {
                for (text, at) in &replies {
                    black_box(classifier(&Reply {
                        text: black_box(text),
                        received_at: Some(*at),
                        ..Default::default()
                    }));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
