# nudge: one static-ish binary (SQLite bundled, PostgreSQL spoken in pure Rust; no libpq).

FROM rust:1-slim-bookworm AS builder
WORKDIR /src
# gcc comes with the image; the bundled SQLite is compiled from source by cargo. The whole
# tree is copied (see .dockerignore) so targets and data files added later are always there.
COPY . .
RUN cargo build --release --locked --bin nudge

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
