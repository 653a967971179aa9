#!/usr/bin/env bash
# Binary size and resident memory of one or more `nudge` binaries, side by side
# (what the shipped holiday, zone and area-code data cost).
#
#   scripts/size-and-rss.sh BEFORE/nudge AFTER/nudge
#
# For each binary: its size in bytes; the RSS (VmRSS) and peak (VmHWM) of `nudge serve` on a new
# SQLite database once it serves (the phone table is warmed at start, so the zone data is in);
# and, when the binary has `nudge holidays`, the peak RSS of one process that prints every
# shipped calendar for one year (every country's data decoded), next to one that prints none.
set -euo pipefail
data="$(cd "$(dirname "$0")/.." && pwd)/src/timing/holidays.tsv"
[ $# -ge 1 ] || { echo "usage: $0 NUDGE_BINARY..." >&2; exit 2; }

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# kB of a field of /proc/PID/status.
field() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# Peak RSS in kB of a command, as GNU time reports it.
peak() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }

for bin in "$@"; do
    echo "== $bin"
    echo "size: $(stat -c %s "$bin") bytes"
    db="$work/$(basename "$(dirname "$bin")")-$RANDOM.db"
    log="$work/serve-$RANDOM.log"
    "$bin" serve --database-url "sqlite://$db" --listen 127.0.0.1:0 >"$log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 600); do
        grep -q 'serving gRPC and HTTP' "$log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    grep -q 'serving gRPC and HTTP' "$log" || { echo "nudge serve did not start" >&2; exit 1; }
    echo "serve, idle after start: VmRSS $(field "$pid" VmRSS) kB, VmHWM $(field "$pid" VmHWM) kB"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    if "$bin" holidays US 2030 >/dev/null 2>&1; then
        # Every calendar the data ships (countries and subdivisions), in one `nudge timing`
        # question: one process decodes them all.
        codes="$(awk -F'\t' '$1 == "C" || $1 == "S" { print $2 }' "$data")"
        list="$(printf '"%s",' $codes | sed 's/,$//')"
        none='{"now": "2030-06-03T10:00:00Z", "duration": "5bd"}'
        all="{\"now\": \"2030-06-03T10:00:00Z\", \"duration\": \"5bd\", \"holidays\": [$list]}"
        echo "timing, no calendar: peak RSS $(peak sh -c "echo '$none' | '$bin' timing") kB"
        one='{"now": "2030-06-03T10:00:00Z", "duration": "5bd", "holidays": ["US"]}'
        echo "timing, the US calendar: peak RSS $(peak sh -c "echo '$one' | '$bin' timing") kB"
        echo "timing, all $(wc -w <<<"$codes") calendars: peak RSS $(peak sh -c "echo '$all' | '$bin' timing") kB"
        echo "  its answer: $(echo "$all" | "$bin" timing | cut -c1-160)"
    fi
done
