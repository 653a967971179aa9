# nudge: one static-ish binary (SQLite bundled, PostgreSQL spoken in pure Rust; no libpq).

FROM rust:1-slim-bookworm AS builder
WORKDIR /src
# gcc comes with the image; the bundled SQLite and jemalloc (the default allocator) are compiled
# from source by cargo, and jemalloc's build runs `make`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in a layer of their own: it is built again only when what it copies
# changes (the manifest, the lock file, and what build.rs reads: proto/ and migrations/), not on
# every edit of the source. The crate itself is a stand-in here: an empty library and an empty
# `main`. The manifest names two benches without a path, which cargo must find to read it at
# all; the binaries in src/bin are found by looking, so leaving them out is fine.
COPY Cargo.toml Cargo.lock build.rs ./
# The build's environment (jemalloc's compiled-in settings).
COPY .cargo .cargo
COPY proto proto
COPY migrations migrations
RUN mkdir -p src benches \
    && touch src/lib.rs \
    && echo 'fn main() {}' > src/main.rs \
    && echo 'fn main() {}' > benches/timing.rs \
    && echo 'fn main() {}' > benches/signals.rs \
    && cargo build --release --locked --bin nudge \
    && rm -r src benches

# Then the real crate. The whole tree is copied (see .dockerignore) so targets and data files
# added later are always there. COPY keeps the files' own modification times, which can be
# older than the stand-in build: touch the crate roots, or cargo would find the stand-in fresh
# and ship an empty `main`. build.rs, proto/ and migrations/ are the files the first layer
# built with, so the build script does not run again.
COPY . .
RUN touch src/lib.rs src/main.rs \
    && cargo build --release --locked --bin nudge

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/nudge --create-home nudge
COPY --from=builder /src/target/release/nudge /usr/local/bin/nudge
USER nudge
# The default SQLite database (`sqlite://nudge.db`) is created in the working directory; mount
# a volume here to keep it, or pass --database-url postgres://… / NUDGE_DATABASE_URL.
WORKDIR /var/lib/nudge
VOLUME ["/var/lib/nudge"]
EXPOSE 7600
# Slim images have no curl: the binary checks its own /healthz (on 127.0.0.1, at the port of
# NUDGE_LISTEN when set, else 7600; keep the two in step if you change the port).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["nudge", "healthcheck"]
ENTRYPOINT ["nudge"]
CMD ["serve", "--listen", "0.0.0.0:7600"]
