//! The inbox classifier's time per message: every sample of `fixtures/inbox/`
//! parsed from raw MIME with `mail-parser` and classified (auto-reply, out-of-office and its
//! return date, bounce, reply), one at a time and the whole corpus per iteration.
//!
//! `cargo bench --bench classify`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nudge::inbound::classify::classify;
use nudge::inbound::mail::parse_raw;
use std::hint::black_box;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/inbox");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .filter(|p| !p.ends_with("not_mime.eml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn bench(c: &mut Criterion) {
    let samples = corpus();
    let day = chrono::NaiveDate::from_ymd_opt(2026, 12, 22).unwrap();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(samples.len() as u64));
    group.bench_function("corpus_per_iteration", |b| {
        b.iter(|| {
            for (_, bytes) in &samples {
                let mail = parse_raw(black_box(bytes)).unwrap();
                black_box(classify(&mail, day));
            }
        })
    });
    group.finish();
    let mut one = c.benchmark_group("classify_one");
    for name in [
        "outlook_ooo_de.eml",
        "postfix_hard.eml",
        "human_quotes_ooo.eml",
    ] {
        let bytes = &samples.iter().find(|(n, _)| n == name).unwrap().1;
        one.bench_function(name, |b| {
            b.iter(|| classify(&parse_raw(black_box(bytes)).unwrap(), day))
        });
    }
    one.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
