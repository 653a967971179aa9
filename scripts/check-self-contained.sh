#!/usr/bin/env bash
# The repository speaks for itself: no line in the sources, protos, tests, docs, scripts,
# examples, the README, the benches, the fixtures (their READMEs and authored data), the
# migrations, the manifest (Cargo.toml), build.rs, the Dockerfile, the fuzz targets or the CI
# script (.ci) may cite the product contract document (by its name and a section sign, or its
# file name), the unpublished provider notes (by their file name, or a path into the folder
# shared beside the repository) or the issue tracker (the word issue and a number), which a reader who clones nudge does not have;
# the pattern below is the one place that spells them. Cite a page under docs/ (or the
# provider's own page or SDK file) instead, or write the rule out. "issue" in other senses
# ("issues a token") is fine.
# Exit 1, listing file:line, when such a line exists.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each name is written with one letter in brackets, so this line does not cite them itself.
pattern='S[P]EC §|S[P]EC\.md|[I]ssue [0-9]+|[i]ssue [0-9]+|W[E]BHOOKS\.md|\.\./s[h]ared/'

# Only the paths that exist (a checkout without fuzz/ or .ci/ is still checked); build output
# and installed packages (target/, node_modules/) are not the repository's text.
paths=()
for p in src proto tests docs scripts examples README.md benches migrations Cargo.toml \
    build.rs Dockerfile fuzz .ci; do
    [ -e "$p" ] && paths+=("$p")
done

hits="$(grep -rnE "$pattern" --exclude-dir=target --exclude-dir=node_modules "${paths[@]}" \
    | grep -v '^scripts/check-self-contained\.sh:' || true)"

# fixtures/ without its message corpora (*.eml, *.jsonl): those hold the text of emails and
# replies as people write them, where the word issue followed by a number is a customer's
# words, not a citation. Their READMEs, flows, scenarios and expected answers are checked.
if [ -d fixtures ]; then
    fixture_hits="$(grep -rnE "$pattern" --exclude='*.eml' --exclude='*.jsonl' fixtures || true)"
    if [ -n "$fixture_hits" ]; then
        hits="${hits:+$hits$'\n'}$fixture_hits"
    fi
fi

if [ -n "$hits" ]; then
    echo "error: lines that cite the contract document, the provider notes or an issue number (cite docs/ or state the rule):" >&2
    printf '%s\n' "$hits" >&2
    exit 1
fi
echo "check-self-contained: no citation of the contract document, the provider notes or the issue tracker"
