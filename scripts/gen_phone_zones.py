#!/usr/bin/env python3
"""Generate src/timing/phone_zones.tsv: libphonenumber's phone-prefix -> time-zone table.

Source: the Python `phonenumbers` package, version pinned below (a port of Google's
libphonenumber; its data is Copyright (C) 2011-2026 The Libphonenumber Authors, licensed under the
Apache License, Version 2.0). The table is `phonenumbers.tzdata.TIMEZONE_DATA` plus the package's
country-level answers and its list of countries with geographically assigned mobile numbers, so
that nudge answers exactly what `phonenumbers.timezone.time_zones_for_number` answers.

Pinned: phonenumbers==9.0.43 (the newest 9.0.x; the pin also lives in scripts/requirements.txt
and in the table's header, and `timing::phone` has a test that fails when they disagree). The Rust
`phonenumber` crate (0.3.10+9.0.33) still parses and validates with its own, older metadata; the
zones and the area codes come from this newer release (+1 709 is Halifax and St Johns here, not
Puerto Rico and St Johns as in 9.0.33).

It also writes src/timing/us_area_codes.tsv: each US area code (NPA) with the state
libphonenumber's English geocoding data names for it (`1305` "Florida", `1212` "New York, NY"),
which picks the `us_states` quiet-hours row (docs/timing.md, "Holiday calendars and quiet hours").

Usage:  scripts/refresh-phone-data.sh   (installs the pins in a venv, runs this and
        gen_phone_cases.py)

Output format (one record a line, tab-separated, `#` lines are comments):
  S <id> <zone> [<zone> ...]   a set of candidate zones (ids 0, 1, 2, ... in order)
  P <digits> <set id>          geographical lookup: longest E.164 digit prefix wins
  C <calling code> <set id>    country-level lookup, for valid numbers of a non-geographical type
  G <code>,<code>,...          calling codes whose MOBILE numbers are geographical
Zone names are mapped through tzdata's links to the zone they name (`Asia/Calcutta` ->
`Asia/Kolkata`; `Europe/Jersey` -> `Europe/London`) and de-duplicated, so a set holds distinct
zones (scripts/tzlinks.py, tzdata pinned there). `Etc/Unknown` (no zone) is never written: an
absent prefix means no candidate.
"""

import os
import sys

import phonenumbers
from phonenumbers import PhoneNumber
from phonenumbers import phonenumberutil as pnu
from phonenumbers import timezone as pntz
from phonenumbers.tzdata import TIMEZONE_DATA, TIMEZONE_LONGEST_PREFIX
from tzlinks import canonical_zones, load_links

PINNED = "9.0.43"
UNKNOWN = "Etc/Unknown"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "timing", "phone_zones.tsv")
AREA_OUT = os.path.join(os.path.dirname(OUT), "us_area_codes.tsv")

# USPS codes of the states, DC and the territories that share +1 with US region codes.
STATES = {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA",
    "Colorado": "CO", "Connecticut": "CT", "Delaware": "DE", "Florida": "FL", "Georgia": "GA",
    "Hawaii": "HI", "Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA",
    "Kansas": "KS", "Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD",
    "Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN", "Mississippi": "MS",
    "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV", "New Hampshire": "NH",
    "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN",
    "Texas": "TX", "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA",
    "Washington D.C.": "DC", "Washington, D.C.": "DC", "District of Columbia": "DC",
    "West Virginia": "WV", "Wisconsin": "WI", "Wyoming": "WY",
}


def main() -> int:
    if phonenumbers.__version__ != PINNED:
        print(f"need phonenumbers=={PINNED}, found {phonenumbers.__version__}", file=sys.stderr)
        return 1

    sets: dict[tuple[str, ...], int] = {}
    links = load_links()

    def set_id(zones) -> int | None:
        zones = tuple(canonical_zones((z for z in zones if z != UNKNOWN), links))
        if not zones:
            return None
        if zones not in sets:
            sets[zones] = len(sets)
        return sets[zones]

    prefixes = []
    for prefix in sorted(TIMEZONE_DATA, key=lambda p: (len(p), p)):
        sid = set_id(TIMEZONE_DATA[prefix])
        if sid is not None:
            prefixes.append((prefix, sid))

    # Country-level answers, asked of the package itself (it is what time_zones_for_number uses
    # for toll-free, premium-rate, non-geographical mobile numbers, ...).
    countries = []
    for cc in sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE):
        sid = set_id(pntz._country_level_time_zones_for_number(PhoneNumber(country_code=cc, national_number=0)))
        if sid is not None:
            countries.append((cc, sid))

    geo_mobile = sorted(pnu._GEO_MOBILE_COUNTRIES)
    assert TIMEZONE_LONGEST_PREFIX <= 15

    lines = [
        "# libphonenumber prefix -> time zones, generated by scripts/gen_phone_zones.py; do not edit.",
        f"# Source: Python phonenumbers=={PINNED} (libphonenumber data, Copyright (C) 2011-2026 The",
        "# Libphonenumber Authors, Apache License 2.0). See src/timing/PHONE_ZONES_SOURCE.md.",
        "# S <id> <zone>...  |  P <prefix> <set>  |  C <calling code> <set>  |  G <codes>",
    ]
    for zones, sid in sorted(sets.items(), key=lambda kv: kv[1]):
        lines.append("\t".join(["S", str(sid), *zones]))
    lines += [f"P\t{p}\t{sid}" for p, sid in prefixes]
    lines += [f"C\t{cc}\t{sid}" for cc, sid in countries]
    lines.append("G\t" + ",".join(str(c) for c in geo_mobile))
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{OUT}: {len(sets)} zone sets, {len(prefixes)} prefixes, {len(countries)} calling codes", file=sys.stderr)
    write_area_codes()
    return 0


def write_area_codes() -> None:
    """US area code -> state, from the English geocoding data's 4-digit `1NPA` entries."""
    from phonenumbers.geodata import GEOCODE_DATA

    codes = set(STATES.values())
    rows = []
    for prefix in sorted(p for p in GEOCODE_DATA if len(p) == 4 and p.startswith("1")):
        name = GEOCODE_DATA[prefix].get("en")
        if not name:
            continue
        state = STATES.get(name)
        if state is None and ", " in name and name.rsplit(", ", 1)[1] in codes:
            state = name.rsplit(", ", 1)[1]
        if state is not None:
            rows.append((prefix[1:], state, name))
    lines = [
        "# US area code -> state, generated by scripts/gen_phone_zones.py; do not edit.",
        f"# Source: Python phonenumbers=={PINNED} geocoding data (English), Apache License 2.0.",
        "# A <area code> <state> <libphonenumber's description>",
    ] + [f"A\t{npa}\t{state}\t{name}" for npa, state, name in rows]
    with open(AREA_OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{AREA_OUT}: {len(rows)} area codes", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
