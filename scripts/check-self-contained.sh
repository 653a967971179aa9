#!/usr/bin/env bash
# The repository speaks for itself: no line in the sources, protos, tests, docs, scripts or the
# README may cite the product contract document (by its name and a section sign, or its file
# name), the unpublished provider notes (WEBHOOKS.md, or any path under ../shared/) or the issue
# tracker (the word issue and a number), which a reader who clones nudge does not have; the
# pattern below is the one place that spells them. Cite a page under docs/ (or the provider's
# own page or SDK file) instead, or write the rule out. "issue" in other senses ("issues a
# token") is fine.
# Exit 1, listing file:line, when such a line exists.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each name is written with one letter in brackets, so this line does not cite them itself.
hits="$(grep -rnE 'S[P]EC §|S[P]EC\.md|[I]ssue [0-9]+|[i]ssue [0-9]+|W[E]BHOOKS\.md|\.\./s[h]ared/' \
    src proto tests docs scripts examples README.md \
    | grep -v '^scripts/check-self-contained\.sh:' || true)"
if [ -n "$hits" ]; then
    echo "error: lines that cite the contract document, the provider notes or an issue number (cite docs/ or state the rule):" >&2
    printf '%s\n' "$hits" >&2
    exit 1
fi
echo "check-self-contained: no citation of the contract document, the provider notes or the issue tracker"
