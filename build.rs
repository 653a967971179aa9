//! Compiles every `proto/nudge/v1/*.proto` with `protox` (pure Rust: no `protoc` needed) and
//! generates the tonic services, plus a file descriptor set for gRPC server reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from("proto/nudge/v1");
    // Every service lives in its own file; new files are picked up without editing this script.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "proto"))
        .collect();
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    // `embed_migrations!` reads migrations/ at compile time but cannot tell cargo so: without
    // this line a new migration is missing from an incremental build.
    println!("cargo:rerun-if-changed=migrations");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }

    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_source_info(true).include_imports(true);
    compiler.open_files(&files)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // Reflection serves this set, so grpcurl can list and call services without .proto files.
    std::fs::write(
        out_dir.join("nudge_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;
    tonic_prost_build::configure().compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
