//! `nudge-bench --via grpc` runs end to end with a tiny N: it starts the real server, drives
//! it with the tonic client, runs the in-process reference, and prints every figure. What the
//! figures are is not checked (tests never time anything), only that the run completes and
//! counts what it did. Its arguments are checked before anything runs.

use crate::common::{fresh_database, Backend};
use std::process::Command;

backend_tests!(grpc_bench_runs_and_prints_its_figures);

async fn grpc_bench_runs_and_prints_its_figures(backend: Backend) {
    let (grpc_db, _dir, _pg) = fresh_database(backend).await;
    let (local_db, _local_dir, _local_pg) = fresh_database(backend).await;
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_nudge-bench"))
            .args([
                "--via",
                "grpc",
                "--n",
                "50",
                "--callers",
                "2",
                "--enroll-batch",
                "20",
            ])
            .args(["--signals", "10", "--signal-concurrency", "4"])
            .args(["--database-url", &grpc_db.to_string()])
            .args(["--compare-database-url", &local_db.to_string()])
            .env_remove("NUDGE_DATABASE_URL")
            .output()
            .expect("run nudge-bench")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        // The in-process reference, then the same lines through gRPC.
        ": BatchEnroll 50 enrollments in ",
        ": planner woke 50 due enrollments",
        ": delivery workers claimed and acked 50 dispatches",
        ": ReportSignal 10 replies",
        " via gRPC: BatchEnroll 50 enrollments in ",
        " via gRPC: planner woke 50 due enrollments",
        " via gRPC: delivery workers claimed and acked 50 dispatches",
        " via gRPC: ReportSignal 10 replies",
        "gRPC / in process: BatchEnroll ",
    ] {
        assert!(stdout.contains(want), "no `{want}` in:\n{stdout}");
    }
}

/// A flag the bench does not know, or one without its value, is refused before anything runs:
/// before, `--help` or a typo ran the default bench on `bench.db` in the current folder.
#[test]
fn an_unknown_or_unfinished_flag_is_refused_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_nudge-bench"))
            .args(args)
            .current_dir(dir.path())
            .env_remove("NUDGE_DATABASE_URL")
            .output()
            .expect("run nudge-bench")
    };
    for (args, want) in [
        (
            &["--nn", "5"][..],
            "unknown argument `--nn`: the flags are ",
        ),
        (&["--n", "5", "quick"][..], "unknown argument `quick`"),
        (&["--n"][..], "`--n` needs a value: `--n VALUE`"),
    ] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {stderr}");
        assert!(stderr.contains(want), "{args:?}: no `{want}` in {stderr}");
    }
    let help = run(&["--help"]);
    assert!(help.status.success());
    let usage = String::from_utf8_lossy(&help.stdout);
    assert!(usage.starts_with("usage: nudge-bench"), "{usage}");
    assert!(usage.contains("--mode wake-latency"), "{usage}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "the refused runs wrote {left:?}");
}
