#!/usr/bin/env bash
# Instructions the engine spends per due step, counted by callgrind, so the
# figure is the same on a loaded or an idle machine. No arguments: it builds `nudge-bench`
# (release), makes its own PostgreSQL database on 127.0.0.1:5432 (NUDGE_CG_PG overrides the
# server URL, without a database name), runs the bench's drain (wait → email → wait → end) under
# callgrind with collection on only inside `Planner::drain`, and prints
#
#   N instructions per step
#
# then the ten functions with the most instructions of their own (callgrind_annotate). Steps:
# NUDGE_CG_STEPS (20000); NUDGE_CG_FEATURES (cargo features, e.g. `mimalloc`; the default build
# has jemalloc, NUDGE_CG_FEATURES=glibc builds without it, on the system's malloc); NUDGE_CG_OUT (a
# path to keep the callgrind output at, for `callgrind_annotate --inclusive=yes` or --tree).
# Needs valgrind and PostgreSQL; drops its database at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nudge-target}"
steps="${NUDGE_CG_STEPS:-20000}"
server="${NUDGE_CG_PG:-postgres://postgres@127.0.0.1:5432}"
db="nudge_cg_$$"
command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }

work="$(mktemp -d)"
cleanup() {
    psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# NUDGE_CG_FEATURES=mimalloc measures the build with that allocator; `glibc`, with none.
if [ "${NUDGE_CG_FEATURES:-}" = glibc ]; then
    cargo build --release --locked --bin nudge-bench --no-default-features >&2
else
    cargo build --release --locked --bin nudge-bench ${NUDGE_CG_FEATURES:+--features "$NUDGE_CG_FEATURES"} >&2
fi
bench="$CARGO_TARGET_DIR/release/nudge-bench"
psql "$server/postgres" -qc "CREATE DATABASE $db" >/dev/null

out="$work/callgrind.out"
valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*Planner*drain*' \
    "$bench" --database-url "$server/$db" --n "$steps" --enroll-batch 1000 >"$work/bench.log" 2>&1 \
    || { cat "$work/bench.log" >&2; exit 1; }

# (awk reads to the end: an early exit would cut callgrind_annotate's pipe under pipefail)
total="$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }')"
[ -n "$total" ] || { echo "error: no totals in the callgrind output" >&2; exit 1; }
[ -z "${NUDGE_CG_OUT:-}" ] || cp "$out" "$NUDGE_CG_OUT"
echo "$(( total / steps )) instructions per step"
echo "($total instructions in Planner::drain for $steps steps; top ten by self cost:)"
callgrind_annotate --inclusive=no "$out" 2>/dev/null \
    | awk '/file:function/ { on = 1; next } on && NF > 0 && !/^-+$/ && n < 10 { print; n++ }'
