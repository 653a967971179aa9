#!/usr/bin/env bash
# What step experiments cost the write path: the same nudge-bench run with and without a step
# experiment on the flow's email, alternated (without, with, without, with, …) for ROUNDS
# rounds, each run on a database dropped and created for it. A run enrolls N, drains the N due
# steps (email + wait) while 2 delivery workers ack every dispatch (with variants: each ack of
# the email writes an exposure), then reports SIGNALS replies (with variants: each converts).
# Prints every run's lines, then the due steps/s, delivered/s and signals/s of each side and
# the ratio with/without of each (the target: at most 5 % lower).
#
#   scripts/compare-variants.sh                   # N=100000 SIGNALS=20000 ROUNDS=2
#   N=20000 SIGNALS=5000 ROUNDS=1 scripts/compare-variants.sh
#
# PG_URL (default postgres://postgres@127.0.0.1:5432) must reach a server where that user may
# create databases; the script makes and drops databases named nudge_variants_*.
# CARGO_TARGET_DIR is honoured.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
n="${N:-100000}"
signals="${SIGNALS:-20000}"
rounds="${ROUNDS:-2}"
pg="${PG_URL:-postgres://postgres@127.0.0.1:5432}"
target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --release --quiet --bin nudge-bench)
bench="$target/release/nudge-bench"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
    for variants in 0 1; do
        db="nudge_variants_${round}_${variants}"
        psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
        echo "== round $round, variants $variants (load $(cut -d' ' -f1 /proc/loadavg))"
        "$bench" --database-url "$pg/$db" --n "$n" --consumers 2 --signals "$signals" \
            --variants "$variants" | sed "s/^/[v$variants] /" | tee -a "$out"
        psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import re, sys, statistics
runs = {"0": {"steps": [], "delivered": [], "signals": []}, "1": {"steps": [], "delivered": [], "signals": []}}
for line in open(sys.argv[1]):
    side = line[2]
    m = re.search(r"= (\d+) steps/s", line)
    if m and "planner woke" in line:
        runs[side]["steps"].append(float(m.group(1)))
    m = re.search(r"= (\d+) steps/s end to end", line)
    if m:
        runs[side]["delivered"].append(float(m.group(1)))
    m = re.search(r"= (\d+) signals/s", line)
    if m:
        runs[side]["signals"].append(float(m.group(1)))
print("figure      without (each)        with (each)           with/without (medians)")
for k in ("steps", "delivered", "signals"):
    a, b = runs["0"][k], runs["1"][k]
    if a and b:
        print(f"{k:<11} {str([int(x) for x in a]):<21} {str([int(x) for x in b]):<21} {statistics.median(b)/statistics.median(a):.3f}")
PY
