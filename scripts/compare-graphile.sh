#!/usr/bin/env bash
# nudge and graphile-worker side by side on the local PostgreSQL (docs/benchmarks.md, "Side by side with graphile-worker").
#
# Installs graphile-worker (the version pinned in benches/compare/package.json and its lock
# file) from the npm registry into a temp dir, builds nudge-bench (release), then alternates
# graphile, nudge, graphile, nudge, … for ROUNDS rounds. Each round runs each side twice, with
# 1 and with 4 concurrent callers, each run on a database dropped and created for it:
#   graphile: addJobs of N no-op jobs (batches of 1,000) → jobs/s; then a worker in its
#             documented best configuration (24 concurrent, local queue 500, batched
#             completion) completes the N due jobs → jobs/s; then the same with a jobKey on
#             every job (the uniqueness nudge keeps per enrollment key: the fair peer of
#             BatchEnroll);
#   nudge:    `nudge-bench --n N --callers C --enroll-batch 1000` → BatchEnroll/s; then the
#             planner's drain of the N due enrollments (wait → email → wait) → steps/s.
# Then wake latency under load, once per round: `nudge-bench --mode
# wake-latency --rate RATE --secs 10` and graphile-worker's worker with the same load (RATE/100
# jobs due 2 s later added every 10 ms) at each poll interval in POLLS (ms); the summary gives
# graphile's best.
# Prints every run's lines, then a table: due jobs/s vs due steps/s, addJobs/s (plain and with
# job keys) vs BatchEnroll/s (1 and 4 callers), the ratios, and the wake latencies. Exits
# non-zero if any run fails.
#
#   scripts/compare-graphile.sh                 # N=100000 ROUNDS=3 RATE=10000 POLLS="10 50 200"
#   N=20000 ROUNDS=1 scripts/compare-graphile.sh
#   WAKE=0 scripts/compare-graphile.sh          # throughput only
#
# Needs node ≥ 18 with npm, psql, cargo. PG_URL (default postgres://postgres@127.0.0.1:5432)
# must reach a server where that user may create databases; the script makes and drops
# databases named nudge_compare_*. CARGO_TARGET_DIR is honoured.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
n="${N:-100000}"
rounds="${ROUNDS:-3}"
rate="${RATE:-10000}"
polls="${POLLS:-10 50 200}"
wake="${WAKE:-1}"
pg="${PG_URL:-postgres://postgres@127.0.0.1:5432}"
target="${CARGO_TARGET_DIR:-$repo/target}"

for tool in node npm psql cargo; do
    command -v "$tool" >/dev/null || { echo "compare-graphile: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d)"
cleanup() {
    for db in nudge_compare_graphile nudge_compare_nudge; do
        psql -q "$pg/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

echo "== graphile-worker from npm into $work"
cp "$repo"/benches/compare/{package.json,package-lock.json,graphile.mjs} "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
version="$(node -p "require('$work/node_modules/graphile-worker/package.json').version")"
echo "graphile-worker $version, node $(node --version)"

echo "== nudge-bench (release)"
(cd "$repo" && cargo build --release --locked --bin nudge-bench --quiet)
bench="$target/release/nudge-bench"

# A database dropped and created for one run.
fresh_db() {
    psql -q "$pg/postgres" -v ON_ERROR_STOP=1 \
        -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
    echo "$pg/$1"
}

# The number before " <unit>" in a line of $2 that contains $1, e.g. `= 12345 jobs/s`.
figure() {
    { grep -F "$1" <<<"$2" || true; } | sed -nE "s#.* = ([0-9]+) $3.*#\1#p" | head -1
}

declare -A results # results[side,callers,figure] = "r1 r2 r3"
record() { results[$1]="${results[$1]:-}${results[$1]:+ }$2"; }

# One graphile.mjs run on a fresh database: prints its lines, then sets `line` to its RESULT line
# that starts with $1 (the rest of the arguments go to graphile.mjs).
graphile_run() {
    local tag="$1" url out
    shift
    url="$(fresh_db nudge_compare_graphile)"
    out="$(cd "$work" && NO_LOG_SUCCESS=1 node graphile.mjs --database-url "$url" "$@")"
    echo "$out"
    line="$(grep "^RESULT $tag " <<<"$out")" || { echo "compare-graphile: graphile printed no $tag result" >&2; exit 1; }
}
# The number after ` $1=` in `line`.
field() { sed -E "s/.* $1=([0-9]+).*/\1/" <<<"$line"; }

for round in $(seq 1 "$rounds"); do
    for callers in 1 4; do
        for keys in "" --job-keys; do
            side="graphile${keys:+-keys}"
            echo "== round $round: graphile-worker${keys:+ with job keys}, $callers callers ($(uptime | sed 's/.*load/load/'))"
            graphile_run graphile --n "$n" --callers "$callers" --batch 1000 $keys
            record "$side,$callers,enqueue" "$(field enqueue)"
            record "$side,$callers,due" "$(field due)"
        done
    done
    for callers in 1 4; do
        echo "== round $round: nudge, $callers callers ($(uptime | sed 's/.*load/load/'))"
        url="$(fresh_db nudge_compare_nudge)"
        out="$("$bench" --database-url "$url" --n "$n" --callers "$callers" --enroll-batch 1000)"
        echo "$out"
        enrolled="$(figure BatchEnroll "$out" enrollments/s)"
        stepped="$(figure 'planner woke' "$out" steps/s)"
        [ -n "$enrolled" ] && [ -n "$stepped" ] || { echo "compare-graphile: nudge-bench printed no figures" >&2; exit 1; }
        record "nudge,$callers,enqueue" "$enrolled"
        record "nudge,$callers,due" "$stepped"
    done
    [ "$wake" = 1 ] || continue
    echo "== round $round: nudge wake latency at $rate/s ($(uptime | sed 's/.*load/load/'))"
    url="$(fresh_db nudge_compare_nudge)"
    out="$("$bench" --database-url "$url" --mode wake-latency --rate "$rate" --secs 10)"
    echo "$out"
    p99="$(sed -nE 's/.* p99 ([0-9]+) ms.*/\1/p' <<<"$out")"; max="$(sed -nE 's/.* max ([0-9]+) ms.*/\1/p' <<<"$out")"
    [ -n "$p99" ] && [ -n "$max" ] || { echo "compare-graphile: nudge-bench printed no wake latency" >&2; exit 1; }
    record "nudge,wake,p99" "$p99"; record "nudge,wake,max" "$max"
    for poll in $polls; do
        echo "== round $round: graphile-worker wake latency at $rate/s, poll interval $poll ms ($(uptime | sed 's/.*load/load/'))"
        graphile_run graphile-wake --mode wake-latency --rate "$rate" --secs 10 --poll-interval "$poll"
        record "graphile-$poll,wake,p99" "$(field p99)"
        record "graphile-$poll,wake,max" "$(field max)"
    done
done

# min–max of a list, and the ratio of the medians.
range() { tr ' ' '\n' <<<"$1" | sort -n | sed -n '1p;$p' | paste -sd- | sed 's/-/–/'; }
median() { tr ' ' '\n' <<<"$1" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" 'BEGIN { printf "%.2f×", a / b }'; }

echo
echo "== summary: N=$n, $rounds rounds, graphile-worker $version; figures per second, min–max (each run's), ratio of the medians"
printf '| %-44s | %-15s | %-15s | %-16s |\n' "figure" "graphile-worker" "nudge" "nudge / graphile"
echo "|----------------------------------------------|-----------------|-----------------|------------------|"
for callers in 1 4; do
    g="${results[graphile,$callers,due]}"; u="${results[nudge,$callers,due]}"
    printf '| %-44s | %-15s | %-15s | %-16s |\n' "due jobs vs due steps (after $callers-caller enqueue)" "$(range "$g")" "$(range "$u")" "$(ratio "$u" "$g")"
done
for callers in 1 4; do
    u="${results[nudge,$callers,due]}"; g="${results[graphile-keys,$callers,due]}"
    printf '| %-44s | %-15s | %-15s | %-16s |\n' "due jobs (job keys) vs due steps, $callers callers" "$(range "$g")" "$(range "$u")" "$(ratio "$u" "$g")"
done
for callers in 1 4; do
    g="${results[graphile,$callers,enqueue]}"; u="${results[nudge,$callers,enqueue]}"
    printf '| %-44s | %-15s | %-15s | %-16s |\n' "addJobs vs BatchEnroll, $callers callers" "$(range "$g")" "$(range "$u")" "$(ratio "$u" "$g")"
    g="${results[graphile-keys,$callers,enqueue]}"
    printf '| %-44s | %-15s | %-15s | %-16s |\n' "addJobs with job keys vs BatchEnroll, $callers" "$(range "$g")" "$(range "$u")" "$(ratio "$u" "$g")"
done
if [ "$wake" = 1 ]; then
    echo
    echo "== wake latency at $rate timers/s for 10 s, ms, min–max of $rounds rounds (lower is better)"
    printf '| %-36s | %-15s | %-15s |\n' "side" "p99" "max"
    echo "|--------------------------------------|-----------------|-----------------|"
    printf '| %-36s | %-15s | %-15s |\n' "nudge" "$(range "${results[nudge,wake,p99]}")" "$(range "${results[nudge,wake,max]}")"
    best=""; best_p99=""
    for poll in $polls; do
        m="$(median "${results[graphile-$poll,wake,p99]}")"
        printf '| %-36s | %-15s | %-15s |\n' "graphile-worker, poll interval $poll ms" "$(range "${results[graphile-$poll,wake,p99]}")" "$(range "${results[graphile-$poll,wake,max]}")"
        if [ -z "$best_p99" ] || awk -v a="$m" -v b="$best_p99" 'BEGIN { exit !(a < b) }'; then best="$poll"; best_p99="$m"; fi
    done
    echo "graphile-worker's best poll interval (median p99): $best ms"
fi
echo "load average at the end: $(uptime | sed 's/.*load average: //')"
