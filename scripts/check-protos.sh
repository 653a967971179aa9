#!/usr/bin/env bash
# The protos are a public API: `buf lint` with the rules in proto/buf.yaml, and `buf breaking`
# against the previous commit (proto/buf.yaml's FILE rules: what a generated client compiles
# against stays). A change that must break a client belongs in a new package (`nudge.v2`).
# buf comes from the `@bufbuild/buf` npm package, pinned here and installed once into a cache
# outside the clone. Exit 1 on a lint problem or a breaking change.
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=1.75.0
tools="${NUDGE_TOOLS_DIR:-$HOME/.cache/nudge-tools}/buf-$BUF_VERSION"
buf="$tools/node_modules/.bin/buf"
if [ ! -x "$buf" ]; then
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-save --no-audit --no-fund --silent "@bufbuild/buf@$BUF_VERSION"
fi

echo "buf lint proto (buf $("$buf" --version))"
"$buf" lint proto

# The previous commit's protos, read from git; a first commit (or one before proto/ existed)
# has nothing to break.
if git rev-parse --verify --quiet HEAD~1 >/dev/null && git cat-file -e HEAD~1:proto 2>/dev/null; then
    echo "buf breaking proto --against HEAD~1"
    "$buf" breaking proto --against ".git#ref=HEAD~1,subdir=proto"
else
    echo "buf breaking: no previous commit with proto/ to compare against"
fi
echo "check-protos: lint clean, nothing breaks the previous commit's API"
