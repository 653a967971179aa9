#!/usr/bin/env bash
# CI entry of the TypeScript example: install the pinned packages (`npm ci`), generate the client
# from ../../proto into gen/ (`buf generate`), type-check it, start nudge the way the README's
# session does (`nudge serve` in an empty directory, so it makes its own SQLite `nudge.db`, then
# `nudge token create` in that directory) on a free port, run the example against it, and stop
# the server. Exit non-zero when any of it fails.
#
#   bash examples/typescript/run.sh path/to/nudge      (or NUDGE_BIN=path/to/nudge)
#
# Needs node 20+, npm and curl.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nudge="${1:-${NUDGE_BIN:-}}"
[ -n "$nudge" ] || { echo "run.sh: pass the nudge binary as \$1 or NUDGE_BIN" >&2; exit 2; }
case "$nudge" in /*) ;; *) nudge="$PWD/$nudge" ;; esac # the script runs from its own directory
[ -x "$nudge" ] || { echo "run.sh: $nudge is not an executable" >&2; exit 2; }
for tool in node npm curl; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

cd "$here"
echo "== npm ci"
npm ci --no-audit --no-fund
echo "== buf generate (../../proto -> gen/)"
npx buf generate
echo "== tsc --noEmit"
npx tsc --noEmit

# A free port: the kernel picks one for a socket that is closed at once, and the server binds it.
port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
address="127.0.0.1:$port"

# As in the README: the server runs in its own directory, where it creates nudge.db (SQLite);
# `--listen` (NUDGE_LISTEN) is the one flag added, for the port.
echo "== nudge serve --listen $address (in $work)"
(cd "$work" && NO_COLOR=1 exec "$nudge" serve --listen "$address") >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    if curl -fsS "http://$address/healthz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then
        echo "run.sh: the server exited:" >&2; tail -40 "$work/serve.log" >&2; exit 1
    fi
    sleep 0.2
done
curl -fsS "http://$address/healthz" >/dev/null || {
    echo "run.sh: the server does not answer /healthz:" >&2; tail -40 "$work/serve.log" >&2; exit 1
}
# The README's way to a token: `nudge token create`, run where the server runs.
token="$(cd "$work" && "$nudge" token create)"

echo "== npm start (NUDGE_ADDRESS=$address)"
status=0
NUDGE_ADDRESS="$address" NUDGE_TOKEN="$token" npm start --silent || status=$?
if [ "$status" -ne 0 ]; then
    echo "run.sh: the example failed (exit $status); the server's log since it started serving:" >&2
    sed -n '/serving gRPC and HTTP/,$p' "$work/serve.log" | tail -20 >&2
    exit "$status"
fi
echo "run.sh: ok"
