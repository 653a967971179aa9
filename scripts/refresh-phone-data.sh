#!/bin/sh
# Refreshes every table that comes from libphonenumber and `holidays` in one go (docs/timing.md, "Send windows" and "Holiday calendars and quiet hours"):
#   src/timing/phone_zones.tsv      prefix -> zones      (scripts/gen_phone_zones.py)
#   src/timing/us_area_codes.tsv    US area code -> state (scripts/gen_phone_zones.py)
#   fixtures/timing/phone_cases.jsonl golden phone cases  (scripts/gen_phone_cases.py)
#   src/timing/holidays.tsv         holiday calendars    (scripts/gen_holidays.py)
#   fixtures/timing/holiday_cases.jsonl, fixtures/timing/busdays.tsv (scripts/gen_holiday_cases.py)
# To move to a newer release, change its pin in scripts/requirements.txt and the PINNED line of
# the generator, run this, then `cargo test --locked --lib timing:: && cargo test --locked --test it -- timing_`.
# Usage: scripts/refresh-phone-data.sh   (needs python3 with venv; PyPI reachable)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${NUDGE_DATA_VENV:-"$here/../target/data-venv"}
python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/requirements.txt"
cd "$here"
"$venv/bin/python" gen_phone_zones.py
"$venv/bin/python" gen_phone_cases.py
"$venv/bin/python" gen_holidays.py
"$venv/bin/python" gen_holiday_cases.py
